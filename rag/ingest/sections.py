"""A document's sections for the chunker (design stage 2): each heading's body span and heading path.

:func:`sections` - the bodies in order, the preamble first; a leaf heading with nothing under it joins the
next section's body (its words would otherwise be in no chunk); :func:`cut_at_roles` - sections cut where a text role
changes (issue 28). Moved out of :mod:`rag.ingest.chunk` when it passed 500 lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rag.types import LocatorKind, RoleSpan


@dataclass(frozen=True)
class Section:
    """A section body: the span after its heading line up to the next heading, and its heading path."""

    path: tuple[str, ...]
    start: int
    end: int


def sections(doc) -> list[Section]:
    """Section bodies of ``doc`` in order, the preamble (before the first heading) first, under ``()``.

    A level-1 heading whose title is the document title is left out of the
    path (it is already in the header).
    """
    text = doc.canonical
    heads = list(doc.headings)
    out = [Section((), 0, heads[0].start if heads else len(text))]
    stack: list = []
    pending = None  # where a run of headings with nothing under them starts
    slides = [p.start for p in getattr(doc, "parts", ()) if p.kind == LocatorKind.SLIDE]
    for i, h in enumerate(heads):
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        path = tuple(x.title for x in stack if not (x.level == 1 and x.title == doc.title))
        body_end = heads[i + 1].start if i + 1 < len(heads) else len(text)
        if (i + 1 == len(heads) or heads[i + 1].level <= h.level) and not text[h.end:body_end].strip():
            # a leaf heading with nothing under it (a form's fields, a divider slide) is in no chunk's path: its
            # words lead the next section's body, or they would be in no chunk at all (a new user's walk, 2026-12-07)
            pending = h.start if pending is None else pending
            continue
        body_start = min(h.end + 1, body_end)
        if pending is not None and any(pending < x <= h.start for x in slides):  # a divider slide: a chunk of its own
            out.append(Section(path[:-1], pending, h.start))
            pending = None
        out.append(Section(path, body_start if pending is None else pending, body_end))
        pending = None
    if pending is not None:  # at the end: the section before takes them
        out[-1] = Section(out[-1].path, out[-1].start, len(text))
    return [s for s in out if s.start < s.end]


def cut_at_roles(secs: list[Section], roles: Sequence[RoleSpan]) -> list[Section]:
    """``secs`` cut at every edge of a role span (issue 28), so no chunk holds text of two roles."""
    edges = sorted({x for r in roles for x in (r.start, r.end)})
    out = []
    for sec in secs:
        cuts = [sec.start] + [x for x in edges if sec.start < x < sec.end] + [sec.end]
        out += [Section(sec.path, a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
    return out
