"""Slide decks (PPTX) -> canonical text + slide locators (design stage 1; issues 17, 28, 37), with python-pptx.

* One section per slide: a level-1 heading with the slide's title (its title placeholder; a slide without
  one is ``Slide N``: no title is invented from its first text, issue 37), then the slide's text in
  reading order (shapes top to bottom, then left to right; groups opened): each text frame one block,
  one line per paragraph, indented bullets as ``- ``, a line break (``a:br``) a new line; tables as
  Markdown rows with their header; a chart's title, series and categories (issue 28); SmartArt text
  (``ppt/diagrams/data*.xml``) in its own reading order, where the graphic sits (issue 37). Footer, date and
  slide-number placeholders are page furniture, left out.
* Speaker notes are kept, under a level-2 ``Speaker notes`` heading inside the
  slide's section, so a chunk from the notes says so in its path.
* Animation builds made of slides (issue 37): consecutive slides with the same title, each one's lines
  all on the next, are one build; it is written once, as its fullest (last) slide, under
  ``Slides k-m``' locator (a ``slide`` part for the first over the heading, one for the last over the rest).
* Locator: the whole slide (heading, text, notes) is one
  :class:`rag.types.Part` of kind ``slide``, ``number`` = the 1-based slide
  number as PowerPoint shows it, ``scope`` = the slide title.
* Title: the first slide's title; else the core-properties title when the opening slides show its words
  (stale metadata never wins: issue 37); else the first slide's text in the largest font; else the file name.
* Hidden text is left out and listed in the warnings (issue 26,
  :mod:`rag.ingest.office.office_hidden`): hidden slides (skipped in the show),
  shapes wholly off the slide, white runs on an unfilled shape over a white
  background (a shape filled through its style or the theme is filled: issue 37), runs under 2 pt.
  Speaker notes stay (the presenter's script is the deck's content; ``docs/security.md`` says where the
  line is drawn).

A file python-pptx cannot open raises ``ExtractionError(name, "damaged PPTX (...)")``.
"""

from __future__ import annotations

import io
from collections import Counter
from dataclasses import dataclass, field

from rag.errors import ExtractionError
from rag.ingest.canonical import CanonicalBuilder, Unit, clean_inline, file_stem, markdown_table, table_cell
from rag.ingest.limits import Limits, check_zip
from rag.ingest.office.office_hidden import (
    Hidden,
    ThemeColors,
    painted_boxes,
    painted_under,
    run_hidden,
    shape_filled,
    shape_off_slide,
    slide_background_white,
    slide_hidden,
)
from rag.ingest.office.ooxml import (
    C,
    agrees,
    chart_lines,
    chart_value_lines,
    date_category,
    diagram_data_rid,
    safe_xml,
    smartart_lines,
    transitional,
)
from rag.ingest.office.wordml import MAX_REPEATED_CELL, letter_numeral, roman_numeral
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


_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def _visible_text(para, white_ground: bool, hidden: Hidden | None, colors: ThemeColors | None = None) -> str:
    """The paragraph's text without its hidden runs (:func:`rag.ingest.office.office_hidden.run_hidden`, issue 26); a
    line break (``a:br``) is a new line (issue 37: "Thank youOWASP Top-10 2013"), fields (``a:fld``) kept."""
    kept = []
    for el in para._p:
        if el.tag == f"{_A}br":
            kept.append("\n")
            continue
        if el.tag not in (f"{_A}r", f"{_A}fld"):
            continue
        text = "".join(t.text or "" for t in el.findall(f"{_A}t"))
        why = run_hidden(el, white_ground, colors) if text.strip() else None
        if why:
            if hidden is not None:
                hidden.add(why)
        else:
            kept.append(text)
    return "".join(kept)


def _frame_lines(frame, white_ground: bool = False, hidden: Hidden | None = None,
                 colors: ThemeColors | None = None) -> list[str]:
    """One line per non-empty paragraph of a text frame (a line break inside one starts a new line); a
    paragraph of level > 0 as an indented ``- `` item.

    Hidden runs are left out (counted in ``hidden``); ``white_ground``: nothing but white lies under the frame."""
    lines = []
    counters: dict[int, tuple[str, int]] = {}  # level -> (scheme, number) of its last auto-numbered paragraph
    for para in frame.paragraphs:
        text = clean_inline(_visible_text(para, white_ground, hidden, colors))
        if not text:
            continue
        label = _auto_number(para, counters)
        indent = "  " * (para.level - 1) if para.level > 0 else ""
        mark = f"{label} " if label else "- " if para.level > 0 else ""
        for i, line in enumerate(text.split("\n")):
            lines.append(indent + (mark if i == 0 else " " * len(mark)) + line)
    return lines


#: A scheme's prefix of ``a:buAutoNum``'s ``type`` and how it writes number ``n``.
_SCHEMES = (("arabic", str), ("alphaLc", letter_numeral), ("alphaUc", lambda n: letter_numeral(n).upper()),
            ("romanLc", roman_numeral), ("romanUc", lambda n: roman_numeral(n).upper()))


def _auto_number(para, counters: dict[int, tuple[str, int]]) -> str:
    """The number PowerPoint draws before an auto-numbered paragraph (``a:pPr/a:buAutoNum``: ``type`` such as
    ``arabicPeriod`` or ``alphaLcParenR``, ``startAt``), counting on from the paragraph before it at the same level
    and in the same scheme;
    ``""`` for another paragraph, which ends that level's count (and the deeper ones'). Numbering a slide inherits
    from its layout is not read. Before, the items of a numbered list read as bare lines, their numbers lost
    (kreuzberg's powerpoint_sample.pptx, a walk, 2026-12-07)."""
    level = para.level
    for deeper in [k for k in counters if k > level]:
        del counters[deeper]
    ppr = para._p.pPr
    auto = ppr.find(f"{_A}buAutoNum") if ppr is not None else None
    if auto is None:
        counters.pop(level, None)
        return ""
    kind = auto.get("type", "arabicPeriod")
    try:
        start = max(1, min(int(auto.get("startAt", "1")), 32767))
    except ValueError:
        start = 1
    last = counters.get(level)
    n = last[1] + 1 if last is not None and last[0] == kind else start  # another scheme starts its own count
    counters[level] = (kind, n)
    number = next((write for prefix, write in _SCHEMES if kind.startswith(prefix)), str)(n)
    if kind.endswith("ParenBoth"):
        return f"({number})"
    if kind.endswith("ParenR"):
        return f"{number})"
    return f"{number}." if kind.endswith("Period") else number


def _smartart(shape, slide) -> list[str]:
    """The text of a SmartArt graphic frame, one line per node in reading order, deeper nodes as ``- `` items."""
    rid = diagram_data_rid(shape._element)
    if rid is None:
        return []
    try:
        root = safe_xml(slide.part.related_part(rid).blob)
    except Exception:  # noqa: BLE001 - a missing or unreadable data part: nothing to add, nothing else lost
        return []
    return [("  " * (d - 1) + "- " if d > 0 else "") + clean_inline(t, keep_newlines=False)
            for d, t in smartart_lines(root)]


#: Placeholders that hold page furniture (footer, date, slide number: ``PP_PLACEHOLDER`` 15, 16, 13), left out.
FURNITURE_PLACEHOLDERS = {13, 15, 16}


def _is_furniture(shape) -> bool:
    try:
        return bool(shape.is_placeholder) and int(shape.placeholder_format.type) in FURNITURE_PLACEHOLDERS
    except (AttributeError, ValueError, TypeError):
        return False


def _chart_lines(chart) -> list[str]:
    """A chart's title, series names and category labels (issue 28: charts' titles and labels, where cheap), and
    the values its data labels show (:func:`rag.ingest.office.ooxml.chart_value_lines`)."""
    out = []
    try:
        if chart.has_title and chart.chart_title.has_text_frame:
            title = clean_inline(chart.chart_title.text_frame.text, keep_newlines=False)
            if title:
                out.append(f"Chart: {title}")
        plot = chart.plots[0] if len(chart.plots) else None
        if plot is not None:
            series = [clean_inline(str(s.name or ""), keep_newlines=False) for s in plot.series][:50]
            categories = plot.categories
            if categories.depth > 1:  # "US / CA": the upper level was lost ("CA, NY, GB", a new user's walk)
                cats = [clean_inline(" / ".join(str(x) for x in t if str(x).strip()), keep_newlines=False)
                        for t in categories.flattened_labels[:100]]
            else:  # dates cached as serial numbers read as dates ("41275.0" -> 2013-01-01)
                code = chart._chartSpace.find(f".//{C}cat//{C}formatCode")
                code = (code.text or "") if code is not None else ""
                cats = [clean_inline(date_category(str(c), code), keep_newlines=False) for c in categories][:100]
            if any(series):
                out.append("Series: " + "; ".join(x for x in series if x))
            if any(cats):
                out.append("Categories: " + "; ".join(x for x in cats if x))
        out += [clean_inline(line, keep_newlines=False) for line in chart_value_lines(chart._chartSpace)]
    except Exception:  # noqa: BLE001 - a plot python-pptx cannot read ("unsupported plot type bar3DChart": a walk
        # over ShapeCrawler's decks, 2026-12-07, read "Chart: BAR Chart" alone) is read from the chart's XML
        try:
            return [clean_inline(line, keep_newlines=False) for line in chart_lines(chart._chartSpace)]
        except Exception:  # noqa: BLE001 - a chart no reader can read adds nothing, and loses nothing else
            return out
    return out


def _table_lines(table, hidden: Hidden | None = None) -> list[str]:
    """A slide's table as Markdown rows; a label merged down several rows (``rowSpan``) is repeated in each row it
    spans when short (:data:`rag.ingest.office.wordml.MAX_REPEATED_CELL` characters), as the DOCX, ODT and HTML readers
    do: kreuzberg's powerpoint_sample.pptx read its rows "|  |  | True |" with the row's label above them (a walk,
    2026-12-07)."""
    rows = [[table_cell(" ".join(_frame_lines(c.text_frame, False, hidden))) for c in row.cells] for row in table.rows]
    try:
        for r, row in enumerate(table.rows):
            for c, cell in enumerate(row.cells):
                down = cell.span_height if cell.is_merge_origin else 1
                text = rows[r][c]
                if down > 1 and text and len(text) <= MAX_REPEATED_CELL:
                    for k in range(r + 1, min(r + down, len(rows))):
                        if c < len(rows[k]) and not rows[k][c]:
                            rows[k][c] = text
    except (AttributeError, IndexError, ValueError):  # a malformed merge: the rows as read
        pass
    return markdown_table([r for r in rows if any(r)])


def _slide_title(slide, ground=lambda shape: False, hidden: Hidden | None = None,
                 colors: ThemeColors | None = None) -> tuple[str, object]:
    """The slide's title text and its shape (``("", None)`` when the slide has no title placeholder or it is
    empty); ``ground(shape)``: nothing but white lies under the shape."""
    try:
        shape = slide.shapes.title
    except (KeyError, AttributeError):
        shape = None
    if shape is not None and shape.has_text_frame:
        title = clean_inline(" ".join(_frame_lines(shape.text_frame, ground(shape), hidden, colors)),
                             keep_newlines=False)
        if title:
            return title, shape
    return "", None


#: A slide whose pictures cover at least this share of its area ...
PICTURE_SHARE = 0.4
#: ... while its own text has fewer words than this: its content is probably drawn in the picture (a Gantt table,
#: a diagram: a new user's walk, 2026-12-07, found one answer only there, unread and unreported).
FEW_WORDS = 25


def pictured(pictures: list, size: tuple[int, int]) -> bool:
    """Whether ``pictures`` (python-pptx picture shapes) cover :data:`PICTURE_SHARE` of a ``size`` slide (EMU)."""
    area = sum(max(0, int(p.width or 0)) * max(0, int(p.height or 0)) for p in pictures)
    return bool(pictures) and area >= PICTURE_SHARE * size[0] * size[1]


@dataclass
class SlideText:
    """What one slide shows: ``title`` its title placeholder's text (``""``: none), ``blocks`` the lines of each
    other shape in reading order, ``notes`` the speaker notes; ``number`` 1-based, ``first`` the first slide
    of the build it ends (itself when none)."""

    number: int
    title: str
    blocks: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    first: int = 0
    prominent: list[tuple[int, int, str]] = field(default_factory=list)

    def lines(self) -> set[str]:
        return {line for block in self.blocks for line in block}


def read_slide(slide, number: int, size: tuple[int, int] | None = None, hidden: Hidden | None = None,
               colors: ThemeColors | None = None) -> SlideText:
    """Read one slide (module doc); shapes off the ``size`` slide and hidden runs are left out and counted in
    ``hidden`` (issue 26), scheme colours judged through ``colors``."""
    white = slide_background_white(slide, colors)
    top = list(slide.shapes)
    painted = painted_boxes(top, colors) if white else []
    z_of = {}
    for z, shape in enumerate(top):
        z_of[shape.shape_id] = z
        for member in (shape.shapes if int(shape.shape_type or 0) == 6 else ()):
            z_of[member.shape_id] = z

    def ground(shape) -> bool:
        return white and not shape_filled(shape, colors) and not painted_under(shape, z_of.get(shape.shape_id, 0),
                                                                                painted)

    title, title_shape = _slide_title(slide, ground, hidden, colors)
    blocks: list[list[str]] = []
    biggest: list[tuple[int, int, str]] = []
    for shape in _shapes_in_order(slide.shapes, size, hidden):
        if title_shape is not None and shape.shape_id == title_shape.shape_id or _is_furniture(shape):
            continue
        if getattr(shape, "has_chart", False) and shape.has_chart:
            blocks.append(_chart_lines(shape.chart))
        elif getattr(shape, "has_table", False) and shape.has_table:
            blocks.append(_table_lines(shape.table, hidden))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            blocks.append(_frame_lines(shape.text_frame, ground(shape), hidden, colors))
            size = _largest_font(shape)
            words = len([w for w in " ".join(blocks[-1]).split() if any(c.isalpha() for c in w)])
            if not title and size and 2 <= words <= 20:
                biggest.append((size, z_of.get(shape.shape_id, 0), " ".join(blocks[-1])))
        elif shape._element.tag.endswith("}graphicFrame"):
            blocks.append(_smartart(shape, slide))
    notes = _notes_text(slide)
    return SlideText(number, title, [bl for bl in blocks if bl], [notes] if notes else [], number, biggest)


def _prominent(read: list[SlideText]) -> str:
    """The first slide's most prominent text, or ``""``: one not repeated on half the slides or more (an event's
    tagline on every slide is not the talk's title), then the largest font, then the one drawn last (on top)."""
    if not read or not read[0].prominent:
        return ""
    seen = Counter(text for s in read for text in {" ".join(block) for block in s.blocks})
    return min(read[0].prominent, key=lambda c: (seen[c[2]] >= max(3, len(read) / 2), -c[0], -c[1]))[2]


def _largest_font(shape) -> int:
    """The largest explicit run size (hundredths of a point) of a text shape, 0 when none is given."""
    sizes = [r.get("sz") for r in shape._element.iter(f"{_A}rPr", f"{_A}endParaRPr")]
    return max((int(v) for v in sizes if v and v.isdigit()), default=0)


def fold_builds(slides: list[SlideText]) -> list[SlideText]:
    """Slides with builds folded (module doc): a slide whose title equals the next one's and whose lines all
    appear on it is dropped, the next one keeps ``first`` and both slides' distinct notes."""
    out: list[SlideText] = []
    for s in slides:
        prev = out[-1] if out else None
        if (prev is not None and prev.number + 1 == s.number and prev.title == s.title
                and (prev.title or prev.blocks) and prev.lines() <= s.lines()):
            s.first = prev.first
            s.notes = prev.notes + [n for n in s.notes if n not in prev.notes]
            out[-1] = s
        else:
            out.append(s)
    return out


def write_slide(b: CanonicalBuilder, s: SlideText) -> str:
    """Write one (folded) slide's section and its ``slide`` part(s); returns its heading title."""
    title = s.title or (f"Slide {s.number}" if s.first == s.number else f"Slides {s.first}-{s.number}")
    h = b.heading(1, title)
    for lines in s.blocks:
        b.lines([(line, None) for line in lines])
    notes = clean_inline("\n\n".join(s.notes))
    if notes:
        b.heading(2, NOTES_HEADING)
        b.block(notes)
    if s.first != s.number:
        b.add_part(Unit(LocatorKind.SLIDE, s.first, scope=title), h.start, h.end)
        b.add_part(Unit(LocatorKind.SLIDE, s.number, scope=title), h.end, b.length)
    else:
        b.add_part(Unit(LocatorKind.SLIDE, s.number, scope=title), h.start, b.length)
    return title


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
        read, hidden, runs = [], [], Hidden("pieces of text")
        shapes = pictures = count = 0
        unread: list[int] = []  # slides whose picture may hold the text a reader sees
        themes: dict[int, ThemeColors] = {}
        for number, slide in enumerate(deck.slides, start=1):
            count += 1
            if slide_hidden(slide):  # issue 26: PowerPoint skips it in the show; so do we (numbers stay PowerPoint's)
                hidden.append(number)
                continue
            master = slide.slide_layout.slide_master
            colors = themes.setdefault(id(master.part), ThemeColors(master))
            read.append(read_slide(slide, number, size, runs, colors))
            members = _shapes_in_order(slide.shapes)
            shapes += len(members)
            drawn = [m for m in members if getattr(m, "shape_type", None) is not None and int(m.shape_type) == 13]
            pictures += len(drawn)
            if size and pictured(drawn, size) and sum(len(line.split()) for line in read[-1].lines()) < FEW_WORDS:
                unread.append(number)
        core = (deck.core_properties.title or "").strip()
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - zip, XML and python-pptx errors all mean the same to the user
        raise ExtractionError(name, f"damaged PPTX ({type(e).__name__}: {str(e)[:120]})") from e
    if not count:
        raise ExtractionError(name, "no slides in this PPTX")
    if not read:  # every slide hidden (29 of ShapeCrawler's decks: "they hold 0 shape(s)" misled, a walk, 2026-12-07)
        raise ExtractionError(name, f"every slide of this PPTX is hidden ({count} slide(s)): PowerPoint skips them in "
                                    "the show and they are not read; unhide the slides to be searched and add it again")
    if not any(s.title or s.blocks or s.notes for s in read):
        raise ExtractionError(name, f"no text on any of the {count} slide(s): they hold {shapes} shape(s), "
                                    f"{pictures} of them pictures, and none holds text")
    folded = fold_builds(read)
    for s in folded:
        write_slide(b, s)
    if hidden:
        warnings.append("hidden slides left out: " + ", ".join(map(str, hidden)) + "; never indexed or read by the model")
    if runs.total:
        warnings.append(runs.warning())
    if unread:
        warnings.append(f"slide(s) {', '.join(map(str, unread[:20]))}{' ...' if len(unread) > 20 else ''}: a "
                        "picture covers most of the slide and any text drawn in it is not read (save the slide's "
                        "table or chart as text, or add the picture as an image file to read it by OCR)")
    visible = read[0].title if read else ""
    usable = core if core and core.lower() not in ("none", "powerpoint presentation") else ""
    title = (visible or (usable if usable and agrees(usable, b.text()) else "")
             or _prominent(read) or file_stem(name))
    return b.document(data, name, MediaType.PPTX.value, title=title, extractor="pptx", warnings=tuple(warnings),
                      empty_reason="no text on any slide")
