"""OpenDocument (ODT, ODS, ODP: every LibreOffice user's files) -> canonical text + locators (issue 28, item 4).

Read with **odfdo** (``odfdo`` on PyPI): an actively maintained OpenDocument library (releases through 2026,
Python 3.10+, built on lxml, which the HTML reader uses already) that opens the package, its parts and its
element tree. ``odfpy``, the other candidate, has had no release since 2020. The walk over the elements is
ours, so that every limit holds while reading (odfdo's own ``Table.get_values`` expands repeated rows and
columns: a sheet that declares a million empty rows would be built cell by cell).

* **ODT** (text): headings (``text:h`` with its outline level) are sections; paragraphs are blocks, each a
  ``paragraph`` :class:`rag.types.Part` numbered within its section, like DOCX; lists one item per line
  (``- ``, indented per level); tables Markdown rows; text boxes and frames (``draw:text-box``) and
  sections are read where they stand; notes (footnotes) after the paragraph that cites them. Hidden
  paragraphs and hidden text (``text:hidden-paragraph``, ``text:hidden-text``) are left out.
* **ODS** (spreadsheet): each sheet a section, its rows a Markdown table with ``rows`` parts as for XLSX
  (sheet + A1 row numbers, the displayed cell text); repeated rows and columns advance the position
  without being expanded unless they hold text; rows and cells counted against the reader limits
  (:class:`rag.ingest.limits.RowBudget`). Hidden sheets (``table:display="false"``) are left out.
* **ODP** (presentation): each slide (``draw:page``) a section titled by its title frame
  (``presentation:class="title"``), else its first line, else ``Slide N``; its frames in reading order
  (top to bottom, then left to right), bullets one per line; speaker notes under ``Speaker notes``; the whole
  slide one ``slide`` part, like PPTX. Footer, date and slide-number frames are page furniture and left out.

A file odfdo cannot open raises ``ExtractionError(name, "damaged ODT|ODS|ODP (...)")``; an encrypted one
(``manifest:encryption-data`` in its manifest) is refused as password-protected.
"""

from __future__ import annotations

import io
import re
import zipfile

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
from rag.ingest.limits import Limits, RowBudget, check_zip, resolve
from rag.ingest.sheets import write_sheet
from rag.types import Document, LocatorKind, MediaType

NOTES_HEADING = "Speaker notes"
_LABEL = {MediaType.ODT.value: "ODT", MediaType.ODS.value: "ODS", MediaType.ODP.value: "ODP"}
_HIDDEN = {"text:hidden-paragraph", "text:hidden-text", "office:annotation", "text:note-citation",
           "text:tracked-changes", "text:bookmark-ref", "text:sequence-decls", "office:forms"}
_FURNITURE_CLASSES = {"footer", "date-time", "page-number", "header"}
#: A repeated row or cell is written out at most this many times (a styled band repeated to the sheet's end).
MAX_REPEAT = 200
_CM = re.compile(r"^([\d.]+)(cm|mm|in|pt|px)?$")


def _attr(el, name: str) -> str:
    try:
        return el.get_attribute(name) or ""
    except Exception:  # noqa: BLE001 - odfdo raises for unknown namespaces
        return ""


def inline_text(el) -> str:
    """The text of an ODF paragraph-like element as a reader sees it: spans and links opened, ``text:s`` as
    spaces, tabs and line breaks as white space, hidden text, notes' citations and annotations left out."""
    out: list[str] = [el.text or ""]
    for child in el.children:
        tag = child.tag
        if tag in _HIDDEN or tag == "text:note":
            pass
        elif tag == "text:s":
            out.append(" " * max(1, int(_attr(child, "text:c") or 1)))
        elif tag == "text:tab":
            out.append("\t")
        elif tag == "text:line-break":
            out.append("\n")
        elif tag in ("draw:frame", "draw:text-box", "draw:custom-shape"):
            pass  # frames are read as blocks of their own (_Writer.frames)
        else:
            out.append(inline_text(child))
        out.append(child.tail or "")
    return "".join(out)


def _notes(el) -> list[str]:
    """The bodies of the footnotes and endnotes cited inside ``el``."""
    return [clean_inline(inline_text(n)) for n in el.get_elements("descendant::text:note-body")]


class _TextWriter:
    """Walks an ODT body (or a text box inside it) into a :class:`CanonicalBuilder`."""

    def __init__(self, b: CanonicalBuilder) -> None:
        self.b = b
        self.scope, self.number = "", 0

    def unit(self) -> Unit:
        self.number += 1
        return Unit(LocatorKind.PARAGRAPH, self.number, scope=self.scope)

    def walk(self, parent) -> None:
        for el in parent.children:
            self.element(el)

    def element(self, el) -> None:
        tag = el.tag
        if tag in _HIDDEN:
            return
        if tag == "text:h":
            title = clean_inline(inline_text(el), keep_newlines=False)
            level = int(_attr(el, "text:outline-level") or 1) if _attr(el, "text:outline-level").isdigit() else 1
            if self.b.heading(level, title):
                self.scope, self.number = title, 0
        elif tag == "text:p":
            self.b.block(inline_text(el), self.unit())
            self.frames(el)
            for note in _notes(el):
                self.b.block(note, self.unit())
        elif tag == "text:list":
            lines = self.list_lines(el, 0)
            if lines:
                self.b.lines([(text, self.unit()) for text in lines])
        elif tag == "table:table":
            lines = table_lines(el)
            block = self.b.lines([(ln, None) for ln in lines])
            if block:
                self.b.add_part(self.unit(), *block)
        elif tag in ("text:section", "text:index-body", "draw:text-box", "table:table-cell", "office:text"):
            self.walk(el)
        elif tag == "draw:frame":
            self.frames_of(el)

    def frames(self, para) -> None:
        """Text boxes anchored in a paragraph (``draw:frame`` / ``draw:text-box``): read after it."""
        for box in para.get_elements("descendant::draw:text-box"):
            self.walk(box)

    def frames_of(self, frame) -> None:
        for box in frame.get_elements("descendant::draw:text-box"):
            self.walk(box)

    def list_lines(self, el, depth: int) -> list[str]:
        out = []
        for item in el.children:
            if item.tag not in ("text:list-item", "text:list-header"):
                continue
            for child in item.children:
                if child.tag in ("text:p", "text:h"):
                    text = clean_inline(inline_text(child), keep_newlines=False)
                    if text:
                        out.append("  " * depth + "- " + text)
                elif child.tag == "text:list":
                    out += self.list_lines(child, depth + 1)
        return out


def _repeat(el, name: str) -> int:
    value = _attr(el, name)
    return int(value) if value.isdigit() else 1


def sheet_rows(table, budget: RowBudget | None = None) -> list[tuple[int, list[str]]]:
    """``(1-based row number, cell texts)`` of an ODS ``table:table``: repeated rows and cells advance the
    position, and are written out (at most :data:`MAX_REPEAT` times) only when they hold text."""
    rows: list[tuple[int, list[str]]] = []
    number = 0
    for row in table.get_elements("descendant::table:table-row"):
        times = _repeat(row, "table:number-rows-repeated")
        cells: list[str] = []
        col = 0
        for cell in row.children:
            if cell.tag not in ("table:table-cell", "table:covered-table-cell"):
                continue
            span = _repeat(cell, "table:number-columns-repeated")
            text = "\n".join(inline_text(p) for p in cell.children if p.tag in ("text:p", "text:h"))
            if text.strip():
                cells += [""] * (col - len(cells)) + [text] * min(span, MAX_REPEAT)
            col += span
        if any(c.strip() for c in cells):
            for k in range(min(times, MAX_REPEAT)):
                if budget is not None:
                    budget.row(len(cells))
                rows.append((number + k + 1, list(cells)))
        number += times
    return rows


def table_lines(table) -> list[str]:
    """An ODT table as Markdown lines: the first row with text is the header."""
    rows = [[table_cell(c) for c in cells] for _, cells in sheet_rows(table)]
    if not rows:
        return []
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    return [markdown_row(rows[0]), markdown_separator(width)] + [markdown_row(r) for r in rows[1:]]


def _position(frame) -> tuple[float, float]:
    def pt(value: str) -> float:
        m = _CM.match(value.strip()) if value else None
        if not m:
            return 0.0
        x = float(m.group(1))
        return x * {"cm": 28.35, "mm": 2.835, "in": 72.0, "px": 0.75}.get(m.group(2) or "pt", 1.0)

    return pt(_attr(frame, "svg:y")), pt(_attr(frame, "svg:x"))


def _frame_lines(frame) -> list[str]:
    """One line per paragraph of a presentation frame; list items as ``- `` lines."""
    out: list[str] = []
    writer = _TextWriter(CanonicalBuilder())
    for box in frame.get_elements("descendant::draw:text-box"):
        for el in box.children:
            if el.tag == "text:list":
                out += writer.list_lines(el, 0)
            elif el.tag in ("text:p", "text:h"):
                text = clean_inline(inline_text(el), keep_newlines=False)
                if text:
                    out.append(text)
    return out


def _write_slide(b: CanonicalBuilder, page, number: int) -> tuple[str, bool]:
    frames = [f for f in page.children if f.tag in ("draw:frame", "draw:custom-shape", "draw:g")]
    title, blocks = "", []
    for frame in sorted(frames, key=_position):
        kind = _attr(frame, "presentation:class")
        if kind in _FURNITURE_CLASSES:
            continue
        lines = _frame_lines(frame)
        if kind == "title" and lines and not title:
            title = " ".join(lines)[:200]
        elif lines:
            blocks.append(lines)
    if not title and blocks:
        title = blocks[0][0].lstrip("- ").strip()[:120]
        if len(blocks[0]) == 1:
            blocks = blocks[1:]
    has_text = bool(title or blocks)
    title = title or f"Slide {number}"
    start = b.heading(1, title).start
    for lines in blocks:
        b.lines([(line, None) for line in lines])
    notes = [ln for n in page.get_elements("descendant::presentation:notes") for ln in _frame_lines(n)]
    if notes:
        b.heading(2, NOTES_HEADING)
        b.block("\n".join(notes))
    b.add_part(Unit(LocatorKind.SLIDE, number, scope=title), start, b.length)
    return title, has_text or bool(notes)


def _encrypted(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return b"encryption-data" in zf.read("META-INF/manifest.xml")[:1 << 20]
    except (KeyError, zipfile.BadZipFile, OSError, RuntimeError):
        return False


def _title(doc, fallback: str) -> str:
    try:
        return clean_inline(doc.get_part("meta").get_title() or "", keep_newlines=False) or fallback
    except Exception:  # noqa: BLE001 - metadata is optional
        return fallback


def extract_odf(data: bytes, name: str, media_type: str, *, limits: Limits | None = None) -> Document:
    """ODT / ODS / ODP bytes -> :class:`rag.types.Document` (rules in the module doc).

    Raises ``ExtractionError(name, reason)`` for a damaged or encrypted file or one without text;
    :class:`rag.errors.LimitExceeded` past a reader limit (ZIP members, rows, cells).
    """
    import odfdo  # imported here so `python -m rag --help` stays fast

    label = _LABEL[media_type]
    limits = resolve(limits)
    check_zip(data, name, limits)
    if _encrypted(data):
        raise ExtractionError(name, f"password-protected (an encrypted {label}); remove the password in the "
                                    "office application and add the file again")
    b = CanonicalBuilder()
    try:
        doc = odfdo.Document(io.BytesIO(data))
        body = doc.body
        if media_type == MediaType.ODS.value:
            budget = RowBudget(name, limits)
            for table in body.get_elements("table:table"):
                if _attr(table, "table:display") == "false":
                    continue
                write_sheet(b, _attr(table, "table:name"), sheet_rows(table, budget), heading=True, budget=budget)
        elif media_type == MediaType.ODP.value:
            for number, page in enumerate(body.get_elements("draw:page"), start=1):
                _write_slide(b, page, number)
        else:
            _TextWriter(b).walk(body)
        title = _title(doc, "")
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - zip, XML and odfdo errors all mean the same to the user
        raise ExtractionError(name, f"damaged {label} ({type(e).__name__}: {str(e)[:120]})") from e
    if not title:
        firsts = [h.title for h in b.headings if h.level == 1]
        title = firsts[0] if firsts and media_type != MediaType.ODS.value else file_stem(name)
    empty = {"ODS": "every sheet of this ODS is empty", "ODP": "no text on any slide of this ODP"}
    return b.document(data, name, media_type, title=title, extractor=f"odfdo {odfdo.__version__}",
                      empty_reason=empty.get(label, "no text in this ODT (empty document?)"))
