"""Lists in a source and in an answer's sentence (issues 24, 39): the line that is a list item, the lines that
introduce an item, and the parts of a sentence that enumerates. Pure functions on strings: the claim check reads a
list item with the lines introducing it (:func:`rag.answer.check.claims.statements`) and a sentence joining items
part by part (:mod:`rag.answer.check.list_parts`).
"""

from __future__ import annotations

import re

#: A list item's line: Markdown's marks, the bullet glyphs PDFs and Office files draw, or ``1.``/``1)``.
LIST_LINE = re.compile(r"^[ \t]*(?:[-*+•▪◦‣]|\d{1,3}[.)])\s+")


def line_at(text: str, pos: int) -> tuple[int, int]:
    """``(start, end)`` of the line of ``text`` holding offset ``pos`` (``end`` at its newline, exclusive)."""
    a = text.rfind("\n", 0, pos) + 1
    b = text.find("\n", pos)
    return a, len(text) if b == -1 else b


def list_lead(text: str, start: int) -> str:
    """The lines that introduce the list item at ``start`` (``""`` if none): the line ending in a colon right above
    its list, a blank line between them allowed (a Markdown list after its lead-in paragraph: docx4j's "We recommend
    you adopt the 11.4 series if possible:"), and, for a nested item, each parent item that ends in a colon ("- It
    supports the recent Java long term releases:" above "  - Java 11 (released Sept 2018)")."""
    a, b = line_at(text, start)
    indent = len(text[a:b]) - len(text[a:b].lstrip())
    leads: list[str] = []
    blanks = 0
    while a > 0:
        pa, _pb = line_at(text, a - 1)
        line = text[pa:a - 1]
        if not line.strip():
            blanks += 1
            if blanks > 1:
                break
        elif LIST_LINE.match(line):
            blanks = 0
            depth = len(line) - len(line.lstrip())
            if depth < indent:
                indent = depth
                if line.rstrip().endswith(":"):
                    leads.append(line)
        else:
            if line.rstrip().endswith(":"):
                leads.append(line)
            break
        a = pa
    return "\n".join(reversed(leads))


#: Words that join the parts of an enumeration ("A and B", "A or B"), as whole words between spaces.
JOINERS = (" and ", " or ")
#: At most this many parts are read (a longer enumeration is left to the sentence-level check).
MAX_PARTS = 12


def parts(sentence: str) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the parts of ``sentence``: the stretches between semicolons and the words
    of :data:`JOINERS` that stand outside round or square brackets (one part when there is none). Not commas: a
    clause set off by commas ("Java 11, released in Sept 2021, and ...") belongs to the part before it, and cut off
    it paired with any item (a review, 2026-12-07). A single linear scan."""
    cuts: list[tuple[int, int]] = []  # (start, end) of each separator
    depth = 0
    i, n = 0, len(sentence)
    while i < n:
        ch = sentence[i]
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            if ch == ";":
                cuts.append((i, i + 1))
            else:
                for j in JOINERS:
                    if ch == " " and sentence.startswith(j, i):
                        cuts.append((i, i + len(j) - 1))
                        break
        i += 1
    out, start = [], 0
    for a, b in cuts:
        if sentence[start:a].strip():
            out.append((start, a))
        start = b
    if sentence[start:].strip():
        out.append((start, n))
    return out
