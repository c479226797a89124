"""What each line and unit of a chunk is to a reader, from the chunk's text alone (issue 24 item 2, issue 36 item 3).

:mod:`rag.ingest.roles` tags whole paragraphs of a document (reference lists, contents, navigation) and the chunker
keeps those apart, so a chunk that is not ``body`` has no answering unit at all. Inside a ``body`` chunk a line or a
unit can still be something else: a footer glued to a slide's last bullet, a running head, a contents entry without
a dot leader, a slide's title. This module is the one rule for each of those roles, on the chunk's stored text
(``Chunk.content``, the quote a citation shows); the chunker's units are :func:`rag.text.units`:

* ``navigation``: a navigation line (:func:`rag.ingest.roles.is_navigation`, the one rule and word list);
* ``toc``: a contents entry (:func:`rag.ingest.roles.is_toc_line`: a dot leader; or, in a chunk that reads as a
  table of contents, :func:`toc_context`, a numbered entry ending in a page number ``2.1 Boiling the water 15``), or
  a "Contents" line (:data:`rag.ingest.roles.TOC_TITLE`);
* ``furniture``: a running head or footer line (:func:`furniture_line`: a page counter ``12 / 40``, ``Page 3 of 9``,
  a line holding a date and no sentence);
* ``heading``: a unit of one word (``NetBSD``) or a short title-only line (:func:`heading_like`: no sentence, mostly
  capitalised words, or a Markdown heading), and a title line opening a paragraph of several lines;
* ``body``: everything else (sentences, table rows, list items).

One thing needs more than the chunk: a line that is no sentence and repeats in another source of the same answer (a
slide deck's footer is on every slide). The answer layer finds those (:func:`rag.answer.roles.repeated_lines`) and
passes them here as ``repeated``; they are ``furniture`` too. Nothing else is judged at answer time.

The rules are deliberately narrow: they must never take an answering sentence for furniture. Measured on both dev
corpora in ``docs/answers.md`` (issue 24): the units each rule takes, and what the key passage and the answers gained.
Every pattern here is linear on adversarial strings (``tests/test_regex_safety.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag.ingest.roles import TOC_TITLE, is_navigation, is_sentence, is_toc_line
from rag.text import units
from rag.types import TextRole

Span = tuple[int, int]

WORD = re.compile(r"[^\W_]+(?:[.'’\-][^\W_]+)*")
#: A Markdown table row (the separator row included): read as a table, never as furniture or a title.
TABLE_ROW = re.compile(r"^\s*\|")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•▪◦‣]|\d{1,3}[.)])\s+")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")

#: A numbered contents entry ending in a page number: ``2.1 Boiling the water 15``, ``Chapter 3 Soups 41``.
_TOC_NUMBERED = re.compile(
    r"^\s*(?:(?:chapter|part|appendix|section)\s+)?(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVXLC]{1,5}\.|[A-Z]\.)\s+"
    r"[^\d.!?]{2,80}?\s+\d{1,4}\s*$", re.I)

_MONTH = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|januar|februar|märz|mai|juni|juli|oktober|dezember)")
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_DATE = re.compile(
    r"\b(?:" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+(?:19|20)\d{2}|\d{1,2}(?:st|nd|rd|th)?\.?\s+" + _MONTH
    + r"\.?,?\s+(?:19|20)\d{2}|" + _MONTH + r"\.?\s+(?:19|20)\d{2}|(?:19|20)\d{2}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./](?:19|20)?\d{2}|"
    + _WEEKDAY + r")\b", re.I)
#: A page or slide counter: ``12 / 40``, ``Page 3 of 9``, ``- 7 -``, ``Slide 4``, or a bare page number.
_COUNTER = re.compile(r"(?:^|\s)(?:\d{1,4}\s*/\s*\d{1,4}|(?:page|seite|slide|folie|p\.)\s*\d{1,4}(?:\s*(?:of|von|/)\s*\d{1,4})?"
                      r"|[-–]\s*\d{1,4}\s*[-–])\s*$", re.I)
_BARE_NUMBER = re.compile(r"^\s*\d{1,4}\s*$")

#: Short function words a title leaves in lower case ("Git and GitHub for Beginners").
_TITLE_SMALL = frozenset("""a an and as at by de del der des die das du en for from in la le of on or the to und
                         van von with""".split())


def words(text: str) -> list[str]:
    """The words of ``text`` (letters and digits, with inner ``.'’-``), in order."""
    return WORD.findall(text)


def norm_line(line: str) -> str:
    """``line`` case-folded with its whitespace collapsed: how a repeated line is compared."""
    return re.sub(r"\s+", " ", line).strip().casefold()


def _capitalised_share(found: Sequence[str]) -> float:
    """Share of ``found`` (title-case function words left out) that open with a capital or a digit."""
    found = [w for w in found if w.casefold() not in _TITLE_SMALL]
    if not found:
        return 0.0
    return sum(1 for w in found if w[0].isupper() or w[0].isdigit()) / len(found)


def navigation_like(text: str) -> bool:
    """Whether one unit is a navigation line: :func:`rag.ingest.roles.is_navigation` (the one rule) on its text, its
    line breaks read as spaces."""
    return is_navigation(" ".join(text.split()))


def furniture_line(line: str) -> bool:
    """A running head or footer line on its own evidence: a page counter alone or ending a short line that is
    no sentence, or a short line holding a date and no sentence, mostly capitalised words."""
    s = line.strip()
    if not s or TABLE_ROW.match(s):
        return False
    if _BARE_NUMBER.match(s):
        return True
    found = words(s)
    if is_sentence(s) and not _COUNTER.search(s):
        return False
    if _COUNTER.search(s) and (len(found) <= 3 or (len(found) <= 16 and _capitalised_share(found) >= 0.6)):
        return True  # "12 / 40", "Page 3 of 9", "Jane Roe  BSD Tales  12 / 30"; not "... listed on page 3"
    # a list item or a "label: value" line holding a date is body ("Next inspection due: September 2027")
    return bool(_DATE.search(s) and len(found) <= 16 and _capitalised_share(found) >= 0.75
                and not _LIST_ITEM.match(s) and ": " not in s)


def heading_like(text: str) -> bool:
    """Whether a unit is a title and no statement: a one-line Markdown heading, one word or none, or a short line
    (at most 8 words) of mostly capitalised words that is no sentence, no table row, no ``label: value`` line and no
    list item of two words or more."""
    s = text.strip()
    if _MD_HEADING.match(s) and "\n" not in s:
        return True
    if TABLE_ROW.match(s):
        return False  # table rows (the separator row included) are read as a table
    if len(words(s)) <= 1:
        return True  # one word ("NetBSD") or none: never an answer by itself
    if is_sentence(s) or ": " in s:
        return False  # a sentence or a "label: value" line is body
    if _LIST_ITEM.match(s) and len(words(_LIST_ITEM.sub("", s))) > 1:
        return False  # a list item of two words or more is body ("- 2-bit and 3-bit")
    lettered = [w for w in words(s) if any(ch.isalpha() for ch in w)]
    return len(lettered) <= 8 and _capitalised_share(lettered) >= 0.75


def toc_context(text: str) -> bool:
    """Whether a chunk reads as a table of contents: a "Contents" line, or 3 or more contents entries (a dot leader,
    or numbered and ending in a page number)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    numbered = sum(1 for ln in lines if _TOC_NUMBERED.match(ln) or is_toc_line(ln))
    return any(TOC_TITLE.match(ln) for ln in lines) or numbered >= 3


@dataclass(frozen=True)
class Unit:
    """One unit of a chunk's text with its role: ``start``/``end`` 0-based character offsets into that text."""

    start: int
    end: int
    role: TextRole


def unit_role(text: str, *, repeated: frozenset[str] = frozenset(), toc: bool = False) -> TextRole:
    """The :class:`rag.types.TextRole` of one unit's text (module doc). ``repeated``: normalised lines
    (:func:`norm_line`) that repeat across the answer's sources; ``toc``: the chunk reads as a table of contents
    (:func:`toc_context`), so numbered entries ending in a page number are ``toc``."""
    s = text.strip()
    if not s:
        return TextRole.FURNITURE
    if navigation_like(s):
        return TextRole.NAVIGATION
    if is_toc_line(s) or (toc and _TOC_NUMBERED.match(s)) or TOC_TITLE.match(s):
        return TextRole.TOC
    lines = [ln for ln in s.splitlines() if ln.strip()]
    if lines and all(furniture_line(ln) or norm_line(ln) in repeated for ln in lines):
        return TextRole.FURNITURE
    if heading_like(s):
        return TextRole.HEADING
    return TextRole.BODY


def _lines(text: str) -> list[Span]:
    out = []
    for m in re.finditer(r"[^\n]+", text):
        a, b = m.span()
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out


def _line_role(line: str, *, repeated: frozenset[str], toc: bool) -> TextRole | None:
    """The role of one line on its own evidence, or ``None`` (the line is read as part of its sentence)."""
    if navigation_like(line):
        return TextRole.NAVIGATION
    if is_toc_line(line) or (toc and _TOC_NUMBERED.match(line)) or TOC_TITLE.match(line):
        return TextRole.TOC
    if norm_line(line) in repeated or furniture_line(line):
        return TextRole.FURNITURE
    return None


def _opens_paragraph_as_title(text: str, spans: list[Span], k: int) -> bool:
    """Whether line ``k`` is a short title-only line opening a paragraph of several lines (a slide title, a PDF
    heading): first in its paragraph, the next line joined to it and opening with a capital or a digit."""
    a, b = spans[k]
    if k + 1 >= len(spans):
        return False
    line = text[a:b]
    opens = k == 0 or text[spans[k - 1][1]:a].count("\n") >= 2
    nxt = text[spans[k + 1][0]:spans[k + 1][1]]
    joined = text[b:spans[k + 1][0]].count("\n") < 2
    return (opens and joined and (nxt[:1].isupper() or nxt[:1].isdigit()) and not TABLE_ROW.match(line)
            and not _LIST_ITEM.match(line) and heading_like(line))


def line_roles(text: str, repeated: frozenset[str] = frozenset()) -> dict[Span, TextRole]:
    """Lines of ``text`` that are something other than body text on their own, found before the text is cut into
    sentences (a contents entry's dot leader or a footer glued to the last bullet of a slide would otherwise be cut
    into pieces or read as part of a sentence), and title lines opening a paragraph. Keys: ``(start, end)`` offsets
    into ``text``, whitespace trimmed."""
    spans = _lines(text)
    toc = toc_context(text)
    out: dict[Span, TextRole] = {}
    for k, (a, b) in enumerate(spans):
        role = _line_role(text[a:b], repeated=repeated, toc=toc)
        if role is None and _opens_paragraph_as_title(text, spans, k):
            role = TextRole.HEADING
        if role is not None:
            out[(a, b)] = role
    return out


def masked(text: str, spans: Iterable[Span]) -> str:
    """``text`` with every span replaced by as many spaces (offsets unchanged)."""
    chars = list(text)
    for a, b in spans:
        chars[a:b] = " " * (b - a)
    return "".join(chars)


def chunk_unit_roles(text: str, *, role: TextRole | str | None = None,
                     repeated: frozenset[str] = frozenset()) -> list[Unit]:
    """Every unit of a chunk's ``text`` with its role, in order: first the lines that are a non-body thing on their
    own (:func:`line_roles`), then the chunker's units (:func:`rag.text.units`) of the rest, each judged by
    :func:`unit_role`.

    ``role``: the chunk's stored role (:mod:`rag.ingest.roles`, issue 28): every unit of a chunk that is not ``body``
    takes it. ``repeated``: lines repeated across the answer's sources (module doc); empty, the roles are the
    chunk's own.
    """
    whole = TextRole(role) if role else None
    if whole is not None and whole != TextRole.BODY:
        return [Unit(a, b, whole) for a, b in units(text) if text[a:b].strip()]
    special = line_roles(text, repeated)
    rest = masked(text, special)
    toc = toc_context(text)
    out = [Unit(a, b, r) for (a, b), r in special.items()]
    out += [Unit(a, b, unit_role(rest[a:b], repeated=repeated, toc=toc))
            for a, b in units(rest) if rest[a:b].strip()]
    return sorted(out, key=lambda u: u.start)
