"""OpenDocument presentations (ODP) -> slides in the canonical text, for :mod:`rag.ingest.office.odf` (issues 28 and 37).

* Each slide (``draw:page``) is a level-1 section titled by its title frame (``presentation:class="title"``); a
  slide without one is ``Slide N`` (its first line is never promoted to a title: a tick mark, an ellipsis or a
  one-line box is not the slide's name). Its frames are read in reading order (top to bottom, then left to
  right), bullets one per line; speaker notes under ``Speaker notes``; the slide one ``slide`` part.
* **Build steps folded** (issue 37): a run of consecutive slides with the same title, each holding only lines
  (and notes) of the next one in the same order, is how a talk reveals a list or a code block step by step (a
  slide repeated unchanged is one too). Only the fullest
  slide, the run's last, is written, once; its heading line is a part of the run's first slide and its body a
  part of the last, so a citation reads "slides 15-18".
* **Hidden slides** (``presentation:visibility="hidden"`` on the page's style: skipped in the show) are left out
  and named in a warning; slides keep their numbers.
* Footer, date and slide-number frames are page furniture: the footer text a deck declares
  (``presentation:footer-decl``, ``presentation:header-decl``) is written once at the end with the
  ``furniture`` role, not once per slide.
* :func:`deck_title`: the title slide's title is the document's title; the metadata title is used only when
  the title slide shows none and its words are in the deck.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.ingest.canonical import CanonicalBuilder, Unit, clean_inline
from rag.ingest.office.odf_numbers import attr as _attr
from rag.types import LocatorKind, RoleSpan, TextRole

NOTES_HEADING = "Speaker notes"
_FURNITURE_CLASSES = {"footer", "date-time", "page-number", "header"}
_CM = re.compile(r"^([\d.]+)(cm|mm|in|pt|px)?$")


def _position(frame) -> tuple[float, float]:
    def pt(value: str) -> float:
        m = _CM.match(value.strip()) if value else None
        if not m:
            return 0.0
        x = float(m.group(1))
        return x * {"cm": 28.35, "mm": 2.835, "in": 72.0, "px": 0.75}.get(m.group(2) or "pt", 1.0)

    return pt(_attr(frame, "svg:y")), pt(_attr(frame, "svg:x"))


@dataclass
class Slide:
    """One slide as read: 1-based ``number``, ``title`` (``""`` when it has no title frame), ``blocks`` (one list
    of lines per frame, reading order), ``notes`` lines, ``hidden`` (skipped in the show)."""

    number: int
    title: str
    blocks: list[list[str]]
    notes: list[str]
    hidden: bool = False
    subtitle: str = ""

    def lines(self) -> list[str]:
        """Every line of the slide's body, in order."""
        return [ln for block in self.blocks for ln in block]

    @property
    def has_text(self) -> bool:
        return bool(self.title or self.blocks or self.notes)


def read_slide(page, number: int, frame_lines, hidden: bool = False) -> Slide:
    """The :class:`Slide` of ``draw:page`` ``page``; ``frame_lines(frame)`` gives a frame's lines."""
    frames = [f for f in page.children if f.tag in ("draw:frame", "draw:custom-shape", "draw:g")]
    title, subtitle, blocks = "", "", []
    for frame in sorted(frames, key=_position):
        kind = _attr(frame, "presentation:class")
        if kind in _FURNITURE_CLASSES:
            continue
        lines = frame_lines(frame)
        if kind == "title" and lines and not title:
            title = " ".join(lines)[:200]
            continue
        if kind == "subtitle" and lines and not subtitle:
            subtitle = lines[0]
        if lines:
            blocks.append(lines)
    notes = [ln for n in page.get_elements("descendant::presentation:notes") for ln in frame_lines(n)]
    return Slide(number, title, blocks, notes, hidden, subtitle)


def _within(small: list[str], big: list[str]) -> bool:
    """Whether every line of ``small`` is in ``big``, in the same order (a build step shows a prefix or a subset)."""
    it = iter(big)
    return all(any(line == other for other in it) for line in small)


def fold_builds(slides: list[Slide]) -> list[tuple[Slide, int]]:
    """``(slide to write, number of the first slide it stands for)``: each run of build steps (module doc) folded
    into its last slide; every other slide stands for itself."""
    out: list[tuple[Slide, int]] = []
    for s in slides:
        if out:
            prev, first = out[-1]
            if (prev.title == s.title and prev.number == s.number - 1 and prev.lines()
                    and _within(prev.lines(), s.lines()) and _within(prev.notes, s.notes)):
                out[-1] = (s, first)
                continue
        out.append((s, s.number))
    return out


def write_slides(b: CanonicalBuilder, slides: list[Slide]) -> None:
    """Write the visible slides into ``b`` (build steps folded, hidden slides skipped; module doc)."""
    for s, first in fold_builds([s for s in slides if not s.hidden and s.has_text]):
        title = s.title or f"Slide {s.number}"
        head = b.heading(1, title)
        if first != s.number:
            b.add_part(Unit(LocatorKind.SLIDE, first, scope=title), head.start, head.end)
            body_start = None
        else:
            body_start = head.start
        for lines in s.blocks:
            span = b.lines([(line, None) for line in lines])
            if body_start is None and span:
                body_start = span[0]
        if s.notes:
            h = b.heading(2, NOTES_HEADING)
            body_start = h.start if body_start is None else body_start
            b.block("\n".join(s.notes))
        if body_start is not None:
            b.add_part(Unit(LocatorKind.SLIDE, s.number, scope=title), body_start, b.length)


def write_furniture(b: CanonicalBuilder, texts: list[str]) -> RoleSpan | None:
    """The deck's declared footer and header texts, once, at the end, as one ``furniture`` block."""
    seen: list[str] = []
    for t in texts:
        t = clean_inline(t, keep_newlines=False)
        if t and t not in seen:
            seen.append(t)
    span = b.block("\n".join(seen)) if seen else None
    return RoleSpan(TextRole.FURNITURE, *span) if span else None


def deck_title(slides: list[Slide]) -> str:
    """The title slide's (slide 1's, when shown) title frame, else its subtitle, else its first line when that
    is two words or more (a lone "Manual" above a diagram is not a title); ``""`` when none."""
    if not slides or slides[0].hidden:
        return ""
    s = slides[0]
    first = s.lines()[0].lstrip("- ").strip() if s.lines() else ""
    return s.title or s.subtitle or (first if len(first.split()) >= 2 else "")
