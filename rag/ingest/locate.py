"""Where a range of a document's canonical text is, and what it is to a reader (stage 2: each chunk's locator and
role, issues 17 and 28).

Pure functions of a :class:`rag.types.Document` and a range ``[start, end)`` of 0-based code points into its
canonical text (``end`` exclusive). Until issue 23 they were methods of the record itself (``rag/types.py``).
"""

from __future__ import annotations

import bisect

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
    formats (first and last number, scope of the first, union of boxes), else ``chars``."""
    if doc.pages:
        return Locator(LocatorKind.PAGE, doc.page_at(start), doc.page_at(max(start, end - 1)))
    touched = parts_in(doc, start, end)
    if not touched:
        return Locator(LocatorKind.CHARS)
    head = touched[0]
    same = [p for p in touched if p.kind == head.kind and p.scope == head.scope
            and p.scope_number == head.scope_number]
    if head.kind == LocatorKind.SECTION:
        return Locator(head.kind, scope=head.scope, anchor=head.anchor)
    return Locator(head.kind, head.number, same[-1].number, scope=head.scope, scope_number=head.scope_number,
                   anchor=head.anchor, box=union_box(p.box for p in same))


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
