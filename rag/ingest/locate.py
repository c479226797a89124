"""Where a range of a document's canonical text is, and what it is to a reader (stage 2: each chunk's locator and
role, issues 17 and 28).

Pure functions of a :class:`rag.types.Document` and a range ``[start, end)`` of 0-based code points into its
canonical text (``end`` exclusive). Until issue 23 they were methods of the record itself (``rag/types.py``).
"""

from __future__ import annotations

import bisect
from dataclasses import replace

from rag.types import Box, Document, Locator, LocatorKind, Part, TextRole


def union_box(boxes) -> Box | None:
    """The smallest :data:`rag.types.Box` holding every box of ``boxes`` (``None`` ones skipped); ``None`` when none."""
    got = [b for b in boxes if b is not None]
    if not got:
        return None
    return (min(b[0] for b in got), min(b[1] for b in got), max(b[2] for b in got), max(b[3] for b in got))


def parts_in(doc: Document, start: int, end: int) -> list[Part]:
    """The :class:`rag.types.Part` s of ``doc`` overlapping ``[start, end)``, in order."""
    if not doc.parts:
        return []
    starts = [p.start for p in doc.parts]
    out = []
    for p in doc.parts[max(0, bisect.bisect_right(starts, start) - 1):]:
        if p.start >= end:
            break
        if p.end > start:
            out.append(p)
    return out


def locator_at(doc: Document, start: int, end: int) -> Locator:
    """The :class:`rag.types.Locator` of ``[start, end)``: pages for a PDF, the parts it touches for issue 17's
    formats (first and last number, scope of the first, union of boxes), else ``chars`` with the paragraphs it
    touches (:func:`text_locator`)."""
    if doc.pages:
        return Locator(LocatorKind.PAGE, doc.page_at(start), doc.page_at(max(start, end - 1)))
    loc = _locator(doc, start, end)
    if loc.kind in (LocatorKind.PARAGRAPH, LocatorKind.SECTION, LocatorKind.CHARS):
        rows = table_rows(doc.canonical, start, end)
        if rows is not None:
            return replace(loc, rows=rows)
    return loc


def _locator(doc: Document, start: int, end: int) -> Locator:
    touched = parts_in(doc, start, end)
    if not touched:
        return text_locator(doc, start, end)
    head = touched[0]
    same = [p for p in touched if p.kind == head.kind and p.scope == head.scope
            and p.scope_number == head.scope_number]
    if head.kind == LocatorKind.SECTION:
        first = paragraph_number(doc.canonical, head.start, start, heading=bool(head.scope or head.anchor))
        last = paragraph_number(doc.canonical, head.start, max(start, end - 1), heading=bool(head.scope or head.anchor))
        return Locator(head.kind, first, last, scope=head.scope, anchor=head.anchor)
    return Locator(head.kind, head.number, same[-1].number, scope=head.scope, scope_number=head.scope_number,
                   anchor=head.anchor, box=union_box(p.box for p in same))


def text_locator(doc: Document, start: int, end: int) -> Locator:
    """A ``chars`` :class:`rag.types.Locator` of ``[start, end)`` of a text or Markdown document, with ``first`` /
    ``last`` the 1-based paragraphs it touches, counted within its section's body (after the heading line of the
    last heading at or before ``start``; from the document's start before any heading). A citation shows them as
    "guide.md > Install > Linux, \u00b6 2\u20133": before, every source of one section read the same label (151 of
    381 saved answers of the dev corpora cited two passages under one label, 2026-12-06). Paragraphs are what
    :func:`paragraph_number` counts (a blank line ends one), as for an HTML page's sections."""
    heads = doc.headings
    got = _STARTS[0] if _STARTS else None  # one read, as in _breaks
    if got is None or got[0] is not heads:
        got = (heads, [h.start for h in heads])
        _STARTS[:] = [got]
    i = bisect.bisect_right(got[1], start) - 1
    body = min(heads[i].end + 1, start) if i >= 0 else 0
    first = paragraph_number(doc.canonical, body, start, heading=False)
    last = paragraph_number(doc.canonical, body, max(start, end - 1), heading=False)
    return Locator(LocatorKind.CHARS, first, last)


_STARTS: list[tuple[object, list[int]]] = []  # the last document's heading offsets (one entry)
_BREAKS: list[tuple[str, list[int]]] = []  # the last document's paragraph breaks (one entry: chunks come in order)


def _breaks(text: str) -> list[int]:
    """The offsets of ``text``'s paragraph breaks (a blank line: two or more newlines), found once per text."""
    got = _BREAKS[0] if _BREAKS else None  # one read: another thread may put its own document there meanwhile
    if got is not None and got[0] is text:
        return got[1]
    out, i = [], text.find("\n\n")
    while i != -1:
        out.append(i)
        j = i + 2
        while j < len(text) and text[j] == "\n":
            j += 1
        i = text.find("\n\n", j)
    _BREAKS[:] = [(text, out)]
    return out


def paragraph_number(text: str, section_start: int, pos: int, heading: bool = True) -> int:
    """The 1-based number of the paragraph holding offset ``pos`` of canonical ``text`` within the section that
    starts at ``section_start``, its heading not counted when it has one (``heading``): what a web page's
    citation shows as "¶ 3" (a new user's four sources from one Wikipedia page all read just the file's name,
    2026-12-06). Linear in ``text`` once per document, then a binary search."""
    br = _breaks(text)
    n = bisect.bisect_left(br, pos) - bisect.bisect_left(br, section_start)
    return max(1, n if heading else n + 1)


def table_rows(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The 1-based first and last rows of the Markdown table ``[start, end)`` of canonical ``text`` lies in, as a
    reader counts them (the header row is row 1, the ``| --- |`` rule line under it is not a row); ``None`` unless
    the range begins on a table line and stays inside that one table (a block of ``|`` lines, a blank line around
    it). Every chunk of a 400-row DOCX table read "¶ 34", four sources of one answer alike (a new user's walk,
    2026-12-07). Linear in the table's length up to ``end`` (``str.count``, ``str.rfind``), no pattern."""
    while end > start and text[end - 1] == "\n":
        end -= 1
    if not 0 <= start < end <= len(text):
        return None
    line = text.rfind("\n", 0, start) + 1
    if text[line:line + 1] != "|" or text.find("\n\n", start, end) != -1:
        return None
    top = text.rfind("\n\n", 0, start)
    top = 0 if top == -1 else top + 2
    while top < line and text[top] == "\n":
        top += 1
    # every line from the block's top to the range's end starts with "|": the range is inside one table
    if text[top:top + 1] != "|" or text.count("\n", top, end) != text.count("\n|", top, end):
        return None
    second, rule = text.find("\n", top), False
    if second != -1:
        nxt = text.find("\n", second + 1)
        cells = text[second + 1:nxt if nxt != -1 else len(text)]
        rule = bool(cells.strip()) and not cells.strip(" |-:")

    def row(pos: int) -> int:
        i = text.count("\n", top, pos)
        return i + 1 - (1 if rule and i >= 1 else 0)

    return row(start), row(max(start, end - 1))


def role_at(doc: Document, start: int, end: int) -> TextRole:
    """The :class:`rag.types.TextRole` of ``[start, end)``: the role of the span of ``doc.roles`` holding most
    of it (more than half), ``body`` when none does."""
    best, cover = TextRole.BODY, 0
    for span in doc.roles:
        if span.start >= end:
            break
        got = min(end, span.end) - max(start, span.start)
        if got > cover and got * 2 > end - start:
            best, cover = span.role, got
    return best
