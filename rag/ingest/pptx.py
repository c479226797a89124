"""Slide decks (PPTX) -> canonical text + slide locators (design stage 1; issue 17), with python-pptx.

* One section per slide: a level-1 heading with the slide's title (its title
  placeholder, else its first line of text, else ``Slide N``), then the
  slide's text in reading order (shapes top to bottom, then left to right;
  groups opened): each text frame one block, one line per paragraph, indented
  bullets as ``- ``; tables as Markdown rows with their header; a chart's title, series and
  categories (issue 28). Footer, date and slide-number placeholders are page furniture, left out.
* Speaker notes are kept, under a level-2 ``Speaker notes`` heading inside the
  slide's section, so a chunk from the notes says so in its path.
* Locator: the whole slide (heading, text, notes) is one
  :class:`rag.types.Part` of kind ``slide``, ``number`` = the 1-based slide
  number as PowerPoint shows it, ``scope`` = the slide title.
* Hidden text is left out and listed in the warnings (issue 26,
  :mod:`rag.ingest.office_hidden`): hidden slides (skipped in the show),
  shapes wholly off the slide, white runs on an unfilled shape over a white
  background, runs under 2 pt. Speaker notes stay (the presenter's script is
  the deck's content; ``docs/security.md`` says where the line is drawn).

A file python-pptx cannot open raises ``ExtractionError(name, "damaged PPTX (...)")``.
"""

from __future__ import annotations

import io

from rag.errors import ExtractionError
from rag.ingest.canonical import (
    CanonicalBuilder,
    Unit,
    clean_inline,
    file_stem,
    markdown_row,
    markdown_separator,
    table_cell,
)
from rag.ingest.limits import Limits, check_zip
from rag.ingest.office_hidden import (
    Hidden,
    run_hidden,
    shape_filled,
    shape_off_slide,
    slide_background_white,
    slide_hidden,
)
from rag.ingest.ooxml import transitional
from rag.types import Document, LocatorKind, MediaType

NOTES_HEADING = "Speaker notes"


def _shapes_in_order(shapes, size: tuple[int, int] | None = None, hidden: Hidden | None = None) -> list:
    """Shapes top to bottom, then left to right; group shapes replaced by their members (same order).

    With the slide ``size`` (EMU), top-level shapes wholly off the slide are left out and counted in ``hidden``."""
    out = []
    for shape in sorted(shapes, key=lambda s: ((s.top or 0), (s.left or 0))):
        if size is not None and shape_off_slide(shape, *size):
            if hidden is not None and getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
                hidden.add("off the slide")
            continue
        if shape.shape_type is not None and int(shape.shape_type) == 6:  # MSO_SHAPE_TYPE.GROUP
            out.extend(_shapes_in_order(shape.shapes))
        else:
            out.append(shape)
    return out


def _visible_runs(para, white_ground: bool, hidden: Hidden | None) -> str:
    """The paragraph's text without its hidden runs (:func:`rag.ingest.office_hidden.run_hidden`, issue 26)."""
    if not para.runs:
        return para.text
    kept = []
    for r in para.runs:
        why = run_hidden(r, white_ground) if r.text.strip() else None
        if why:
            if hidden is not None:
                hidden.add(why)
        else:
            kept.append(r.text)
    return "".join(kept)


def _frame_lines(frame, white_ground: bool = False, hidden: Hidden | None = None) -> list[str]:
    """One line per non-empty paragraph of a text frame; a paragraph of level > 0 as an indented ``- `` item.

    Hidden runs are left out (counted in ``hidden``); ``white_ground``: nothing but white lies under the frame."""
    lines = []
    for para in frame.paragraphs:
        text = clean_inline(_visible_runs(para, white_ground, hidden), keep_newlines=False)
        if text:
            lines.append(("  " * (para.level - 1) + "- " + text) if para.level > 0 else text)
    return lines


#: Placeholders that hold page furniture (footer, date, slide number: ``PP_PLACEHOLDER`` 15, 16, 13), left out.
FURNITURE_PLACEHOLDERS = {13, 15, 16}


def _is_furniture(shape) -> bool:
    try:
        return bool(shape.is_placeholder) and int(shape.placeholder_format.type) in FURNITURE_PLACEHOLDERS
    except (AttributeError, ValueError, TypeError):
        return False


def _chart_lines(chart) -> list[str]:
    """A chart's title, series names and category labels (issue 28: charts' titles and labels, where cheap)."""
    out = []
    try:
        if chart.has_title and chart.chart_title.has_text_frame:
            title = clean_inline(chart.chart_title.text_frame.text, keep_newlines=False)
            if title:
                out.append(f"Chart: {title}")
        plot = chart.plots[0] if len(chart.plots) else None
        if plot is not None:
            series = [clean_inline(str(s.name or ""), keep_newlines=False) for s in plot.series][:50]
            cats = [clean_inline(str(c), keep_newlines=False) for c in plot.categories][:100]
            if any(series):
                out.append("Series: " + "; ".join(x for x in series if x))
            if any(cats):
                out.append("Categories: " + "; ".join(x for x in cats if x))
    except Exception:  # noqa: BLE001 - a chart python-pptx cannot read adds nothing, and loses nothing else
        return out
    return out


def _table_lines(table, hidden: Hidden | None = None) -> list[str]:
    rows = [[table_cell("\n".join(_frame_lines(c.text_frame, False, hidden))) for c in row.cells] for row in table.rows]
    rows = [r for r in rows if any(r)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    return [markdown_row(rows[0]), markdown_separator(width)] + [markdown_row(r) for r in rows[1:]]


def _slide_title(slide, white: bool = False, hidden: Hidden | None = None) -> tuple[str, object]:
    """The slide's title text and its shape (``None`` when the title comes from elsewhere or is missing)."""
    try:
        shape = slide.shapes.title
    except (KeyError, AttributeError):
        shape = None
    if shape is not None and shape.has_text_frame:
        title = clean_inline(" ".join(_frame_lines(shape.text_frame, white and not shape_filled(shape), hidden)),
                             keep_newlines=False)
        if title:
            return title, shape
    return "", None


def _write_slide(b: CanonicalBuilder, slide, number: int, size: tuple[int, int] | None = None,
                 hidden: Hidden | None = None) -> tuple[str, bool]:
    """Write one slide's section; returns its title and whether the slide holds any text.

    Shapes off the ``size`` slide and hidden runs are left out and counted in ``hidden`` (issue 26)."""
    white = slide_background_white(slide)
    title, title_shape = _slide_title(slide, white, hidden)
    blocks: list[list[str]] = []
    for shape in _shapes_in_order(slide.shapes, size, hidden):
        if title_shape is not None and shape.shape_id == title_shape.shape_id or _is_furniture(shape):
            continue
        if getattr(shape, "has_chart", False) and shape.has_chart:
            blocks.append(_chart_lines(shape.chart))
        elif getattr(shape, "has_table", False) and shape.has_table:
            blocks.append(_table_lines(shape.table, hidden))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            blocks.append(_frame_lines(shape.text_frame, white and not shape_filled(shape), hidden))
    blocks = [bl for bl in blocks if bl]
    if not title and blocks:
        title = blocks[0][0].lstrip("- ").strip()[:120]
        if len(blocks[0]) == 1 and len(title) == len(blocks[0][0]):
            blocks = blocks[1:]
    has_text = bool(title or blocks)
    title = title or f"Slide {number}"
    start = b.heading(1, title).start
    for lines in blocks:
        b.lines([(line, None) for line in lines])
    notes = _notes_text(slide)
    if notes:
        b.heading(2, NOTES_HEADING)
        b.block(notes)
    b.add_part(Unit(LocatorKind.SLIDE, number, scope=title), start, b.length)
    return title, has_text or bool(notes)


def _notes_text(slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return clean_inline(frame.text) if frame is not None else ""


def extract_pptx(data: bytes, name: str, *, limits: Limits | None = None) -> Document:
    """PPTX bytes -> :class:`rag.types.Document`, one section and one ``slide`` part per slide.

    Raises ``ExtractionError(name, reason)`` when python-pptx cannot read the
    file (``damaged PPTX (...)``) or no slide holds text.
    """
    import pptx  # python-pptx: imported here so `python -m rag --help` stays fast

    check_zip(data, name, limits)  # issue 26: members and ratios before python-pptx inflates anything
    b = CanonicalBuilder()
    warnings: list[str] = []
    try:
        deck = pptx.Presentation(io.BytesIO(transitional(data)[0]))  # Strict OOXML too
        size = (deck.slide_width, deck.slide_height) if deck.slide_width and deck.slide_height else None
        titles, hidden, any_text, runs = [], [], False, Hidden("pieces of text")
        shapes = pictures = 0
        for number, slide in enumerate(deck.slides, start=1):
            if slide_hidden(slide):  # issue 26: PowerPoint skips it in the show; so do we (numbers stay PowerPoint's)
                hidden.append(number)
                titles.append(f"Slide {number}")
                continue
            title, has_text = _write_slide(b, slide, number, size, runs)
            titles.append(title)
            any_text = any_text or has_text
            members = _shapes_in_order(slide.shapes)
            shapes += len(members)
            pictures += sum(getattr(m, "shape_type", None) is not None and int(m.shape_type) == 13 for m in members)
        core = (deck.core_properties.title or "").strip()
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - zip, XML and python-pptx errors all mean the same to the user
        raise ExtractionError(name, f"damaged PPTX ({type(e).__name__}: {str(e)[:120]})") from e
    if not titles:
        raise ExtractionError(name, "no slides in this PPTX")
    if not any_text:
        raise ExtractionError(name, f"no text on any of the {len(titles)} slide(s): they hold {shapes} shape(s), "
                                    f"{pictures} of them pictures, and none holds text")
    if hidden:
        warnings.append("hidden slides left out: " + ", ".join(map(str, hidden)) + "; never indexed or read by the model")
    if runs.total:
        warnings.append(runs.warning())
    title = core if core and core.lower() not in ("none", "powerpoint presentation") else titles[0]
    if title == "Slide 1":
        title = file_stem(name)
    return b.document(data, name, MediaType.PPTX.value, title=title, extractor="pptx", warnings=tuple(warnings),
                      empty_reason="no text on any slide")
