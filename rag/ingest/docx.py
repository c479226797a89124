"""Word documents (DOCX) -> canonical text + paragraph locators (design stage 1; issue 17), with python-docx.

* Body order is kept: paragraphs and tables as they come (``iter_inner_content``).
* Headings by style: ``Heading N`` (or a style based on one, or a paragraph
  outline level) becomes a level-N section; ``Title`` a level-1 section and
  the document title.
* Paragraphs: one block each, numbered 1, 2, ... within the innermost
  heading's section (:class:`rag.types.Part` of kind ``paragraph``, ``scope``
  the heading's title): the locator is heading path + paragraph number.
* List items (a list style or Word numbering): one line each in one block,
  ``- `` or ``1. `` as Word shows them; each item is its own paragraph number.
* Tables: Markdown rows, the first row as the header, horizontally merged
  cells written once; a table counts as one paragraph.
* Text boxes (``w:txbxContent``) are read after the paragraph they are anchored in, and a table nested
  in a cell is read inside that cell (issue 28: every text container).
* Page headers and footers and comments are left out (page furniture, or not part of the running text).
* Hidden text is left out and counted in a warning (issue 26,
  :func:`rag.ingest.office_hidden.strip_hidden_runs`): ``w:vanish`` runs, white
  runs on an unshaded white page, runs under 2 pt.

A file python-docx cannot open raises ``ExtractionError(name, "damaged DOCX (...)")``.
"""

from __future__ import annotations

import io
import re

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
from rag.ingest.office_hidden import strip_hidden_runs
from rag.ingest.ooxml import transitional
from rag.types import Document, LocatorKind, MediaType

_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
#: Placeholder titles Word and generators leave in the core properties.
_NO_TITLE = {"", "none", "untitled", "document", "title", "microsoft word"}


def _style_id(paragraph) -> str | None:
    ppr = paragraph._p.pPr
    return ppr.pStyle.val if ppr is not None and ppr.pStyle is not None else None


def _style_level(paragraph, style) -> int | None:
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
    ppr = paragraph._p.pPr
    lvl = ppr.find(f"{_W}outlineLvl") if ppr is not None else None
    if lvl is not None:
        try:
            value = int(lvl.get(f"{_W}val"))
        except (TypeError, ValueError):
            return None
        return value + 1 if 0 <= value <= 8 else None
    return None


def _is_title(style) -> bool:
    return (style.name or "").strip().lower() == "title" if style is not None else False


def _list_kind(paragraph, style, numbering) -> tuple[str, object] | None:
    """``("bullet" | "number", list identity)`` for a list item (list style or ``w:numPr``), else ``None``.

    Items of one list share the identity (Word's numbering id, or the style name), so a new list restarts at 1.
    """
    ppr = paragraph._p.pPr
    numpr = ppr.find(f"{_W}numPr") if ppr is not None else None
    style = (style.name or "").lower() if style is not None else ""
    if numpr is None:
        if style.startswith("list number"):
            return "number", style
        if style.startswith(("list bullet", "list paragraph")):
            return "bullet", style
        return None
    key = _num_key(numpr)
    return numbering.get(key, "bullet"), key[0]


def _num_key(numpr) -> tuple[str, str]:
    num_id = numpr.find(f"{_W}numId")
    ilvl = numpr.find(f"{_W}ilvl")
    return (num_id.get(f"{_W}val") if num_id is not None else "",
            ilvl.get(f"{_W}val") if ilvl is not None else "0")


def _numbering_formats(doc) -> dict[tuple[str, str], str]:
    """``{(numId, ilvl): "bullet" | "number"}`` from the numbering part (empty when there is none)."""
    try:
        root = doc.part.numbering_part.element
    except (KeyError, AttributeError, NotImplementedError):
        return {}
    abstract = {}
    for a in root.findall(f"{_W}abstractNum"):
        levels = {}
        for lvl in a.findall(f"{_W}lvl"):
            fmt = lvl.find(f"{_W}numFmt")
            value = fmt.get(f"{_W}val") if fmt is not None else "bullet"
            levels[lvl.get(f"{_W}ilvl")] = "bullet" if value in ("bullet", "none") else "number"
        abstract[a.get(f"{_W}abstractNumId")] = levels
    out = {}
    for num in root.findall(f"{_W}num"):
        ref = num.find(f"{_W}abstractNumId")
        levels = abstract.get(ref.get(f"{_W}val") if ref is not None else None, {})
        for ilvl, kind in levels.items():
            out[(num.get(f"{_W}numId"), ilvl)] = kind
    return out


_NS = {"w": _W[1:-1], "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006"}


def _text_boxes(p) -> list:
    """The paragraphs of the text boxes (``w:txbxContent``) anchored in paragraph ``p``, as python-docx
    paragraphs; a box Word also writes as a VML fallback (``mc:Fallback``) is read once."""
    from docx.text.paragraph import Paragraph
    from lxml import etree

    found = etree._Element.xpath(p._p, ".//w:txbxContent[not(ancestor::mc:Fallback)]//w:p", namespaces=_NS)
    return [Paragraph(el, p._parent) for el in found]


def _cell_text(cell) -> str:
    """A table cell's text: its paragraphs, and the cells of a table nested in it (issue 28), in order."""
    parts = []
    for item in cell.iter_inner_content():
        if hasattr(item, "rows"):
            parts += [_cell_text(c) for row in item.rows for c in row.cells]
        else:
            parts.append(item.text)
    return "\n".join(t for t in parts if t.strip())


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


def _table_rows(table) -> list[list[str]]:
    """Cell texts per row, a horizontally merged cell written once, trailing empty columns dropped."""
    rows = []
    for row in table.rows:
        cells, last = [], None
        for cell in row.cells:
            if cell._tc is last:
                continue
            last = cell._tc
            cells.append(table_cell(_cell_text(cell)))
        rows.append(cells)
    width = max((len(r) for r in rows), default=0)
    while width and all(len(r) < width or not r[width - 1] for r in rows):
        width -= 1
    return [r[:width] + [""] * (width - len(r[:width])) for r in rows if any(r[:width])]


class _Writer:
    """Walks the body and writes it into a :class:`CanonicalBuilder`, numbering paragraphs per section."""

    def __init__(self, numbering: dict) -> None:
        self.b = CanonicalBuilder()
        self.numbering = numbering
        self.scope = ""
        self.number = 0
        self.pending_list: list[tuple[str, Unit]] = []
        self.list_counter = 0
        self.list_id: object = None
        self.title_style: str | None = None
        self.styles: dict[str | None, object] = {}

    def style(self, p):
        """The paragraph's style, looked up once per style id (python-docx scans every style on each lookup)."""
        sid = _style_id(p)
        if sid not in self.styles:
            self.styles[sid] = p.style
        return self.styles[sid]

    def unit(self) -> Unit:
        self.number += 1
        return Unit(LocatorKind.PARAGRAPH, self.number, scope=self.scope)

    def flush_list(self) -> None:
        if self.pending_list:
            self.b.lines(self.pending_list)
        self.pending_list, self.list_counter, self.list_id = [], 0, None

    def paragraph(self, p) -> None:
        self._paragraph(p)
        for box in _text_boxes(p):  # text frames anchored in the paragraph, read after it (issue 28)
            self._paragraph(box)

    def _paragraph(self, p) -> None:
        text = clean_inline(p.text)
        if not text:
            return
        style = self.style(p)
        level = _style_level(p, style)
        if level is not None and len(text) <= 300:
            self.flush_list()
            if self.b.heading(level, text):
                self.scope, self.number = clean_inline(text, keep_newlines=False), 0
                if self.title_style is None and _is_title(style):
                    self.title_style = text
            return
        item = _list_kind(p, style, self.numbering)
        if item is None:
            self.flush_list()
            self.b.block(text, self.unit())
            return
        kind, identity = item
        if identity != self.list_id:
            self.flush_list()
            self.list_id = identity
        self.list_counter += 1
        mark = f"{self.list_counter}. " if kind == "number" else "- "
        self.pending_list.append((mark + text.replace("\n", " "), self.unit()))

    def table(self, t) -> None:
        self.flush_list()
        rows = _table_rows(t)
        if not rows:
            return
        lines = [markdown_row(rows[0]), markdown_separator(len(rows[0]))] + [markdown_row(r) for r in rows[1:]]
        block = self.b.lines([(line, None) for line in lines])
        if block:
            self.b.add_part(self.unit(), *block)


def _title(doc, writer: _Writer, name: str) -> str:
    core = (doc.core_properties.title or "").strip()
    if core.lower() not in _NO_TITLE and len(core) <= 200:
        return core
    if writer.title_style:
        return writer.title_style
    level1 = [h.title for h in writer.b.headings if h.level == 1]
    return level1[0] if level1 else file_stem(name)


def extract_docx(data: bytes, name: str, *, limits: Limits | None = None) -> Document:
    """DOCX bytes -> :class:`rag.types.Document` (see the module docstring for the layout and locators).

    Raises ``ExtractionError(name, reason)`` when python-docx cannot read the
    file (``damaged DOCX (...)``) or it holds no text.
    """
    import docx  # python-docx: imported here so `python -m rag --help` stays fast

    check_zip(data, name, limits)  # issue 26: members and ratios before python-docx inflates anything
    try:
        doc = docx.Document(io.BytesIO(transitional(data)[0]))  # Strict OOXML too
        hidden = strip_hidden_runs(doc)  # issue 26: text no reader sees never reaches the canonical text
        writer = _Writer(_numbering_formats(doc))
        for item in doc.iter_inner_content():
            if hasattr(item, "rows"):
                writer.table(item)
            else:
                writer.paragraph(item)
        writer.flush_list()
        title = _title(doc, writer, name)
        reason = empty_reason(doc) if not writer.b.length else ""
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - zip, XML and python-docx errors all mean the same to the user
        raise ExtractionError(name, f"damaged DOCX ({type(e).__name__}: {str(e)[:120]})") from e
    warnings = (hidden.warning(),) if hidden.total else ()
    return writer.b.document(data, name, MediaType.DOCX.value, title=title, extractor="docx", warnings=warnings,
                             empty_reason="no visible text in this DOCX" if hidden.total
                             else reason or "no text in this DOCX (empty document?)")
