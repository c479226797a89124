"""Word documents (DOCX) -> canonical text + paragraph locators (design stage 1; issues 17, 28, 37).

python-docx opens the package (parts, styles, relationships); the text is read from the XML by
:mod:`rag.ingest.office.wordml`, which python-docx would miss in places (issue 37).

* Body order is kept: paragraphs and tables as they come, through block-level content controls (``w:sdt``:
  a Cover Page and a whole guide inside one was 92 % of the text lost) and inline ones.
* Headings by style: ``Heading N`` (or a style based on one, or a paragraph outline level) becomes a
  level-N section; ``Title`` a level-1 section. Outline numbers are part of the heading: "2.2.1 Package".
* Paragraphs: one block each, numbered 1, 2, ... within the innermost heading's section
  (:class:`rag.types.Part` of kind ``paragraph``, ``scope`` the heading's title): the locator is heading
  path + paragraph number. A soft line break (``w:br``, ``w:cr``) is a new line inside the block. A heading
  paragraph ends at an empty line (two breaks in a row): what follows, a byline, is the section's first
  paragraph (issue 37).
* List items (a list style or Word numbering): one line each in one block, with the label Word shows
  (``1.``, ``B)``, ``iv.``, ``2.1``: :class:`rag.ingest.office.wordml.Numbering`), a bullet as ``- ``; each item is
  its own paragraph number.
* Tables: Markdown rows, the first row as the header, on the table's grid: a horizontally merged cell written once
  with its other columns empty, a vertically merged one repeated in the rows it covers when short
  (:func:`rag.ingest.office.wordml.table_grid`); a table counts as one paragraph. A table nested in a cell is read
  inside that cell (issue 28), unless it has two rows and two columns or more: the outer table then lays out the
  page, and its cells are read as blocks in order, the inner table a table of its own (2026-12-07).
* Text boxes (``w:txbxContent``) are read after the paragraph they are anchored in (issue 28), and so are
  charts (title, axes, series, categories) and SmartArt graphics (issue 37).
* Footnotes and endnotes: the reference is ``[^n]`` in the text, the notes follow the body under
  ``Footnotes`` / ``Endnotes``, each ``[^n]: text`` (issue 37).
* Page headers and footers: each distinct text once, in a last section ``Page headers and footers`` with
  the ``furniture`` role (not once per page; issue 37). A table-of-contents field or control (``TOC``)
  is tagged with the ``toc`` role. Comments are left out (not part of the text).
* Title: the ``Title``-styled paragraph; else the core-properties title when the opening of the text shows
  it (stale metadata never wins: issue 37); else the first level-1 heading; else the file name.
* Hidden text is left out and counted in a warning (issue 26,
  :func:`rag.ingest.office.office_hidden.strip_hidden_runs`): ``w:vanish`` runs, white
  runs on an unshaded white page, runs under 2 pt; in notes, headers and footers too.

A file python-docx cannot open raises ``ExtractionError(name, "damaged DOCX (...)")``.
"""

from __future__ import annotations

import dataclasses
import io
import re

from rag.errors import ExtractionError
from rag.ingest.canonical import CanonicalBuilder, Unit, clean_inline, file_stem, markdown_table, table_cell
from rag.ingest.limits import Limits, check_zip
from rag.ingest.office.office_hidden import strip_hidden_runs
from rag.ingest.office.ooxml import agrees, chart_lines, diagram_data_rid, smartart_lines, transitional
from rag.ingest.office.wordml import (
    Fields,
    Numbering,
    block_items,
    comments_warning,
    format_number,
    lays_out,
    num_pr,
    paragraph_text,
    table_grid,
    table_rows,
)
from rag.types import Document, LocatorKind, MediaType, RoleSpan, TextRole

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
#: Placeholder titles Word and generators leave in the core properties.
_NO_TITLE = {"", "none", "untitled", "document", "title", "microsoft word"}
NOTES_TITLES = {"footnote": "Footnotes", "endnote": "Endnotes"}
FURNITURE_TITLE = "Page headers and footers"
#: A list item is indented two spaces per level below the first (Word's ``w:ilvl``, 0-8), at most this many levels.
MAX_LIST_DEPTH = 8
_NS = {"w": _W[1:-1], "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006"}


def _style_level(p, style) -> int | None:
    """Heading level of a paragraph from its style chain (``Heading N``, ``Title`` = 1) or outline level."""
    seen = 0
    while style is not None and seen < 10:
        name = (style.name or "").strip()
        m = _HEADING_STYLE.match(name)
        if m:
            return int(m.group(1))
        if name.lower() == "title":
            return 1
        style, seen = style.base_style, seen + 1
    lvl = p.find(f"{_W}pPr/{_W}outlineLvl")
    if lvl is not None:
        try:
            value = int(lvl.get(f"{_W}val"))
        except (TypeError, ValueError):
            return None
        return value + 1 if 0 <= value <= 8 else None
    return None


def heading_and_rest(raw: str) -> tuple[str, str]:
    """A heading paragraph's text split where it holds an empty line (two line breaks in a row: Word's "title
    ``<w:br/><w:br/>`` author" in one Heading 1 paragraph): ``(heading, rest)``, both cleaned; ``rest`` is
    ``""`` without an empty line. A single break stays inside the heading (a title set on two lines, which is
    how Word's navigation pane and TOC show it too)."""
    lines = [clean_inline(line) for line in raw.split("\n")]
    filled = [i for i, line in enumerate(lines) if line]
    gap = next((i for i in range(filled[0] + 1, filled[-1]) if not lines[i]), None) if filled else None
    if gap is None:
        return clean_inline(raw), ""
    return clean_inline("\n".join(lines[:gap])), clean_inline("\n".join(lines[gap + 1:]))


def _is_title(style) -> bool:
    return (style.name or "").strip().lower() == "title" if style is not None else False


def _style_numbering(style) -> tuple[str | None, int | None]:
    """``(numId, ilvl)`` a paragraph style attaches to its paragraphs, each from the nearest style of its chain
    that gives it (``Heading 2`` based on ``Heading 1`` often names only the level)."""
    num_id, ilvl, seen = None, None, 0
    while style is not None and seen < 10 and (num_id is None or ilvl is None):
        found = num_pr(style.element.find(f"{_W}pPr"))
        if found is not None:
            num_id = found[0] if num_id is None else num_id
            ilvl = found[1] if ilvl is None else ilvl
        style, seen = style.base_style, seen + 1
    return num_id, ilvl


def _text_boxes(p) -> list:
    """The paragraphs of the text boxes (``w:txbxContent``) anchored in paragraph ``p``; a box Word also writes
    as a VML fallback (``mc:Fallback``) is read once."""
    from lxml import etree

    return etree._Element.xpath(p, ".//w:txbxContent[not(ancestor::mc:Fallback)]//w:p", namespaces=_NS)


def empty_reason(doc) -> str:
    """Why a DOCX gave no text, as truly as its body says (issue 28, item 5)."""
    body = doc.element.body
    tables = len(body.findall(f"{_W}tbl"))
    pictures = len(body.xpath(".//w:drawing | .//w:pict"))
    if tables:
        return f"no text in this DOCX: its body holds {tables} table(s) whose cells are all empty"
    if pictures:
        return f"no text in this DOCX: its body holds {pictures} picture(s) and no text (a scan? OCR it first)"
    return "no text in this DOCX (empty document?)"


def _related_root(part, rid: str | None):
    """The XML root of the part ``rid`` points to from ``part`` (``None`` when missing or not XML)."""
    try:
        target = part.related_parts[rid]
    except (KeyError, AttributeError):
        return None
    el = getattr(target, "element", None)
    if el is not None:
        return el
    from lxml import etree

    try:
        return etree.fromstring(target.blob, etree.XMLParser(resolve_entities=False, no_network=True))
    except (etree.XMLSyntaxError, ValueError, AttributeError):
        return None


def _parts_of(doc, kind: str) -> list:
    """The XML roots of the document part's relationships of type ``.../kind`` (footnotes, endnotes)."""
    out = []
    for rid, rel in doc.part.rels.items():
        if rel.reltype.rsplit("/", 1)[-1] == kind and not rel.is_external:
            root = _related_root(doc.part, rid)
            if root is not None:
                out.append(root)
    return out


def _furniture_roots(doc) -> list:
    """The header and footer parts of every section (``w:sectPr``), in order, each once."""
    roots, rids = [], set()
    for sect in doc.element.body.iter(f"{_W}sectPr"):
        for ref in [*sect.findall(f"{_W}headerReference"), *sect.findall(f"{_W}footerReference")]:
            rid = ref.get(_R_ID)
            root = _related_root(doc.part, rid) if rid not in rids else None
            rids.add(rid)
            if root is not None:
                roots.append(root)
    return roots


def _notes(doc, kind: str) -> dict[str, object]:
    """``{id: w:footnote element}`` of the real notes (separators left out) of ``kind`` ``footnote``/``endnote``."""
    out = {}
    for root in _parts_of(doc, kind + "s"):
        for note in root.findall(f"{_W}{kind}"):
            if (note.get(f"{_W}type") or "normal") == "normal":
                out[note.get(f"{_W}id") or ""] = note
    return out


def _note_format(doc, kind: str) -> str:
    sect = doc.element.body.find(f"{_W}sectPr")
    el = sect.find(f"{_W}{kind}Pr/{_W}numFmt") if sect is not None else None
    return (el.get(f"{_W}val") if el is not None else None) or ("decimal" if kind == "footnote" else "lowerRoman")


class _Writer:
    """Walks a story (body, note, header) and writes it into a :class:`CanonicalBuilder`, numbering paragraphs
    per section, list labels by :class:`rag.ingest.office.wordml.Numbering`."""

    def __init__(self, doc) -> None:
        from docx.enum.style import WD_STYLE_TYPE

        self.b = CanonicalBuilder()
        self.part = doc.part
        try:
            root = doc.part.numbering_part.element
        except (KeyError, AttributeError, NotImplementedError):
            root = None
        self.numbering = Numbering(root)
        self.scope = ""
        self.number = 0
        self.pending_list: list[tuple[str, Unit]] = []
        self.list_counter = 0
        self.list_id: object = None
        self.title_style: str | None = None
        self.styles = {s.style_id: s for s in doc.styles if s.type == WD_STYLE_TYPE.PARAGRAPH}
        self.default_style = doc.styles.default(WD_STYLE_TYPE.PARAGRAPH)
        self.fields = Fields()
        self.toc: list[tuple[int, int]] = []
        self.note_ids: dict[tuple[str, str], str] = {}
        self.note_formats = {k: _note_format(doc, k) for k in NOTES_TITLES}
        self.list_toc = False

    def note_mark(self, kind: str, note_id: str) -> str:
        key = (kind, note_id)
        if key not in self.note_ids:
            n = sum(k == kind for k, _ in self.note_ids) + 1
            self.note_ids[key] = format_number(n, self.note_formats[kind])
        return f"[^{self.note_ids[key]}]"

    def style(self, p):
        sid = p.find(f"{_W}pPr/{_W}pStyle")
        sid = sid.get(f"{_W}val") if sid is not None else None
        return self.styles.get(sid, self.default_style)

    def unit(self) -> Unit:
        self.number += 1
        return Unit(LocatorKind.PARAGRAPH, self.number, scope=self.scope)

    def flush_list(self) -> None:
        if self.pending_list:
            span = self.b.lines(self.pending_list)
            if span and self.list_toc:
                self.toc.append(span)
        self.pending_list, self.list_counter, self.list_id, self.list_toc = [], 0, None, False

    def story(self, root, toc: bool = False) -> None:
        """Write the blocks of ``root`` (a body, note, header or footer element) in order."""
        for el, in_toc in block_items(root, toc):
            if el.tag == f"{_W}tbl":
                self.table(el, in_toc)
            else:
                self.paragraph(el, in_toc)
        self.flush_list()

    def paragraph(self, p, toc: bool = False) -> None:
        self._paragraph(p, toc)
        for box in _text_boxes(p):  # text frames anchored in the paragraph, read after it (issue 28)
            self._paragraph(box, toc)
        for lines in self.graphics(p):  # issue 37: charts and SmartArt anchored in the paragraph
            self.flush_list()
            span = self.b.lines([(line, None) for line in lines])
            if span:
                self.b.add_part(self.unit(), *span)

    def graphics(self, p) -> list[list[str]]:
        """The lines of the charts (title, axes, series, categories) and SmartArt graphics drawn in ``p``."""
        out = []
        for graphic in p.iter(f"{_A}graphicData"):
            chart = next(graphic.iter(f"{_C}chart"), None)
            rid = chart.get(_R_ID) if chart is not None else diagram_data_rid(graphic)
            root = _related_root(self.part, rid) if rid else None
            if root is None:
                continue
            if chart is not None:
                out.append(chart_lines(root))
            else:
                out.append([("  " * (d - 1) + "- " if d > 0 else "") + clean_inline(t, keep_newlines=False)
                            for d, t in smartart_lines(root)])
        return [lines for lines in out if lines]

    @staticmethod
    def list_number(p, style) -> tuple[str, int]:
        """``(numId, ilvl)`` of paragraph ``p``: its own ``w:numPr``, else its style's; ``("", 0)`` for neither."""
        own = num_pr(p.find(f"{_W}pPr")) or (None, None)
        by_style = _style_numbering(style)
        return (own[0] if own[0] is not None else by_style[0] or "",
                own[1] if own[1] is not None else by_style[1] or 0)

    def label(self, p, style) -> tuple[str | None, bool, object]:
        """``(label, is_bullet, list identity)`` of a numbered paragraph; ``(None, False, None)`` otherwise."""
        num_id, ilvl = self.list_number(p, style)
        if num_id and self.numbering.defined(num_id):
            label = self.numbering.label(num_id, ilvl)
            return label, self.numbering.is_bullet(num_id, ilvl), num_id
        name = (style.name or "").lower() if style is not None else ""
        if num_id in ("", "0") and name.startswith("list number"):
            return "#", False, name
        if num_id in ("", "0") and name.startswith(("list bullet", "list paragraph")):
            return "•", True, name
        return None, False, None

    def _paragraph(self, p, toc: bool) -> None:
        read = paragraph_text(p, self.fields, self.note_mark)
        toc = toc or read.toc or self._toc_style(p)
        style = self.style(p)
        label, bullet, identity = self.label(p, style)
        text = clean_inline(read.text)
        if not text:
            return
        level = _style_level(p, style)
        head, rest = heading_and_rest(read.text) if level is not None else (text, "")
        if level is not None and len(head) <= 300:
            self.flush_list()
            title = f"{label} {head}" if label and not bullet and label != "#" else head
            if self.b.heading(level, title):
                self.scope, self.number = clean_inline(title, keep_newlines=False), 0
                if self.title_style is None and _is_title(style):
                    self.title_style = head.split("\n", 1)[0]  # a byline after a break is not the title
            if rest:  # the byline under a heading, set off by an empty line: body text of the new section
                self.b.block(rest, self.unit())
            return
        if label is None:
            self.flush_list()
            span = self.b.block(text, self.unit())
            if span and toc:
                self.toc.append(span)
            return
        if identity != self.list_id:
            self.flush_list()
            self.list_id = identity
        self.list_counter += 1
        self.list_toc = self.list_toc or toc
        mark = "- " if bullet else f"{self.list_counter}. " if label == "#" else f"{label} "
        # a nested item indented under its parent, as Word shows it (before, docx4j's "Java 11" and "Java 17" under
        # "It supports the recent Java long term releases:" read as items of the outer list; a new user's walk)
        depth = max(0, min(self.list_number(p, style)[1], MAX_LIST_DEPTH))
        self.pending_list.append(("  " * depth + mark + text.replace("\n", " "), self.unit()))

    def _toc_style(self, p) -> bool:
        style = self.style(p)
        name = (style.name or "").strip().lower() if style is not None else ""
        return name.startswith("toc ") and name[4:].strip().isdigit()

    def cell_text(self, tc) -> str:
        """A table cell's text: its paragraphs (with their list labels) and nested tables' cells, in order."""
        parts = []
        for el, _ in block_items(tc):
            if el.tag == f"{_W}tbl":
                parts += [self.cell_text(c) for row in table_rows(el) for c in row]
                continue
            for q in [el, *_text_boxes(el)]:
                label, bullet, _ = self.label(q, self.style(q))
                text = paragraph_text(q, self.fields, self.note_mark).text
                if text.strip() and label and label != "#":
                    text = ("- " if bullet else label + " ") + text
                parts.append(text)
        return "\n".join(t for t in parts if t.strip())

    def table(self, tbl, toc: bool = False) -> None:
        self.flush_list()
        if lays_out(tbl):  # a table that holds tables lays out its page: its cells' blocks, in order
            for row in table_rows(tbl):
                for tc in row:
                    self.story(tc, toc)
            return
        rows = [[table_cell(t) for t in row] for row in table_grid(tbl, self.cell_text)]
        width = max((len(r) for r in rows), default=0)
        while width and all(len(r) < width or not r[width - 1] for r in rows):
            width -= 1
        rows = [r[:width] + [""] * (width - len(r[:width])) for r in rows if any(r[:width])]
        if not rows:
            return
        lines = markdown_table(rows)
        block = self.b.lines([(line, None) for line in lines])
        if block:
            self.b.add_part(self.unit(), *block)
            if toc:
                self.toc.append(block)

    def notes(self, kind: str, notes: dict[str, object]) -> None:
        """The notes section of ``kind``: referenced notes in the order of their marks, then any others."""
        order = [i for (k, i) in self.note_ids if k == kind and i in notes]
        order += [i for i in notes if (kind, i) not in self.note_ids]
        written = []
        for note_id in order:
            fields, parts = Fields(), []
            for el, _ in block_items(notes[note_id]):
                if el.tag == f"{_W}tbl":
                    parts += [self.cell_text(c) for row in table_rows(el) for c in row]
                else:
                    parts.append(paragraph_text(el, fields, self.note_mark).text)
            text = clean_inline("\n".join(t for t in parts if t.strip()))
            if text:
                written.append((self.note_ids.get((kind, note_id), note_id), text))
        if not written:
            return
        self.flush_list()
        self.b.heading(1, NOTES_TITLES[kind])
        self.scope, self.number = NOTES_TITLES[kind], 0
        for label, text in written:
            self.b.block(f"[^{label}]: {text}", self.unit())

    def furniture(self, roots: list) -> tuple[int, int] | None:
        """Each distinct page header and footer text of ``roots`` once, under :data:`FURNITURE_TITLE`; returns
        the section's span."""
        seen: list[str] = []
        for root in roots:
            fields, parts = Fields(), []
            for el, _ in block_items(root):
                if el.tag == f"{_W}tbl":
                    parts += [self.cell_text(c) for row in table_rows(el) for c in row]
                else:
                    parts += [paragraph_text(q, fields).text for q in [el, *_text_boxes(el)]]
            text = clean_inline("\n".join(t for t in parts if t.strip()))
            if text and text not in seen:
                seen.append(text)
        if not seen:
            return None
        self.flush_list()
        h = self.b.heading(1, FURNITURE_TITLE)
        self.scope, self.number = FURNITURE_TITLE, 0
        for text in seen:
            self.b.block(text, self.unit())
        return (h.start, self.b.length) if h is not None else None


def _title(doc, writer: _Writer, name: str, canonical: str) -> str:
    """The visible title first (module doc): metadata only when the opening of the text shows its words."""
    if writer.title_style:
        return writer.title_style
    core = (doc.core_properties.title or "").strip()
    if core.lower() not in _NO_TITLE and len(core) <= 200 and agrees(core, canonical):
        return core
    level1 = [h.title for h in writer.b.headings if h.level == 1 and h.title not in NOTES_TITLES.values()
              and h.title != FURNITURE_TITLE]
    return level1[0] if level1 else file_stem(name)


def extract_docx(data: bytes, name: str, *, limits: Limits | None = None) -> Document:
    """DOCX bytes -> :class:`rag.types.Document` (see the module docstring for the layout and locators).

    Raises ``ExtractionError(name, reason)`` when python-docx cannot read the
    file (``damaged DOCX (...)``) or it holds no text.
    """
    import docx  # python-docx: imported here so `python -m rag --help` stays fast

    check_zip(data, name, limits)  # issue 26: members and ratios before python-docx inflates anything
    roles: list[RoleSpan] = []
    try:
        doc = docx.Document(io.BytesIO(transitional(data)[0]))  # Strict OOXML too
        notes = {k: _notes(doc, k) for k in NOTES_TITLES}
        furniture_roots = _furniture_roots(doc)
        stories = [n for group in notes.values() for n in group.values()] + furniture_roots
        hidden = strip_hidden_runs(doc, stories)  # issue 26: text no reader sees never reaches the canonical text
        writer = _Writer(doc)
        writer.story(doc.element.body)
        body_written = writer.b.length
        for kind in NOTES_TITLES:
            writer.notes(kind, notes[kind])
        furniture = writer.furniture(furniture_roots) if body_written else None
        roles = [RoleSpan(TextRole.TOC, a, b) for a, b in _joined(writer.toc)]
        if furniture:
            roles.append(RoleSpan(TextRole.FURNITURE, *furniture))
        title = _title(doc, writer, name, writer.b.text())
        reason = empty_reason(doc) if not writer.b.length else ""
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - zip, XML and python-docx errors all mean the same to the user
        raise ExtractionError(name, f"damaged DOCX ({type(e).__name__}: {str(e)[:120]})") from e
    warnings = ((hidden.warning(),) if hidden.total else ()) + comments_warning(doc)
    out = writer.b.document(data, name, MediaType.DOCX.value, title=title, extractor="docx", warnings=warnings,
                            empty_reason="no visible text in this DOCX" if hidden.total
                            else reason or "no text in this DOCX (empty document?)")
    return dataclasses.replace(out, roles=tuple(roles)) if roles else out


def _joined(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans next to each other (one blank line apart) joined into one."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1] + 2:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out
