"""OpenDocument (ODT, ODS, ODP: every LibreOffice user's files) -> canonical text + locators (issue 28, item 4).

Read with **odfdo** (``odfdo`` on PyPI): an actively maintained OpenDocument library (releases through 2026,
Python 3.10+, built on lxml, which the HTML reader uses already) that opens the package, its parts and its
element tree. ``odfpy``, the other candidate, has had no release since 2020. The walk over the elements is
ours, so that every limit holds while reading (odfdo's own ``Table.get_values`` expands repeated rows and
columns: a sheet that declares a million empty rows would be built cell by cell).

* **ODT** (text): headings (``text:h`` with its outline level) are sections, their outline number in front as
  a reader sees it ("2.2.1 OpenDocument Package"); paragraphs are blocks, each a ``paragraph``
  :class:`rag.types.Part` numbered within its section, like DOCX; lists one item per line, indented per level,
  after the label the list style draws ("B) ", "iv. ", "3.1 ", "- " for a bullet; :mod:`rag.ingest.office.odf_numbers`);
  tables Markdown rows; text boxes, frames and drawing shapes with text are read where they are anchored;
  footnotes and endnotes after the block that cites them, each with its number ("1 From a theoretical ...").
  Soft line breaks (``text:line-break``) are line breaks (a space in headings and list items). Generated
  indexes (table of contents, illustrations, alphabetical index) are read with the ``toc`` role, a
  bibliography with ``references``. The master pages' headers and footers are written once (headers first,
  footers last), page numbers left out, with the ``furniture`` role. Hidden paragraphs and hidden text
  (``text:hidden-paragraph``, ``text:hidden-text``, and what a style hides: :mod:`rag.ingest.office.odf_hidden`),
  annotations (named in a warning) and tracked deletions are left out. Tables: :mod:`rag.ingest.office.odf_tables`
  (a label merged down over rows repeated in each, a table inside a cell read in its cell). Charts, sheets and texts
  embedded as objects are read where their frame stands (:mod:`rag.ingest.office.odf_objects`), in ODP and ODS too. The title
  is the paragraph styled ``Title``, else the first level-1 heading; the metadata title only when there is none.
* **ODS** (spreadsheet): each sheet a section, its rows a Markdown table with ``rows`` parts as for XLSX
  (sheet + A1 row numbers, the displayed cell text); repeated rows and columns advance the position
  without being expanded unless they hold text; rows and cells counted against the reader limits
  (:class:`rag.ingest.limits.RowBudget`). Hidden sheets (``table:display="false"``) are left out.
* **ODP** (presentation): :mod:`rag.ingest.office.odf_slides` (one section per slide titled by its title frame, else
  ``Slide N``; build steps folded into their fullest slide; hidden slides left out with a warning; speaker
  notes; footers once as furniture; the title slide's title as the document's).

A file odfdo cannot open raises ``ExtractionError(name, "damaged ODT|ODS|ODP (...)")``; an encrypted one
(``manifest:encryption-data`` in its manifest) is refused as password-protected.
"""

from __future__ import annotations

import dataclasses
import io
import re
import zipfile

from rag.errors import ExtractionError
from rag.ingest.canonical import CanonicalBuilder, Unit, clean_inline, file_stem
from rag.ingest.limits import Limits, RowBudget, check_zip, resolve
from rag.ingest.office.odf_hidden import drop_hidden, hidden_tables
from rag.ingest.office.odf_inline import HIDDEN, PAGE_FIELDS, SHAPES, inline_text, note_blocks
from rag.ingest.office.odf_numbers import Numbering
from rag.ingest.office.odf_numbers import attr as _attr
from rag.ingest.office.odf_objects import Objects
from rag.ingest.office.odf_slides import deck_title, read_slide, write_furniture, write_slides
from rag.ingest.office.odf_tables import sheet_rows, table_lines
from rag.ingest.office.office_hidden import Hidden
from rag.ingest.office.sheets import hidden_sheets_warning, uncomputed_warning, write_sheet
from rag.types import Document, LocatorKind, MediaType, RoleSpan, TextRole

_LABEL = {MediaType.ODT.value: "ODT", MediaType.ODS.value: "ODS", MediaType.ODP.value: "ODP"}
#: Generated indexes, and the role their entries have (issue 37: a contents list is navigation, not body text).
_INDEXES = {"text:table-of-content": TextRole.TOC, "text:illustration-index": TextRole.TOC,
            "text:table-index": TextRole.TOC, "text:object-index": TextRole.TOC, "text:user-index": TextRole.TOC,
            "text:alphabetical-index": TextRole.TOC, "text:bibliography": TextRole.REFERENCES}
_MASTER_PARTS = ("style:header", "style:header-first", "style:header-left", "style:footer", "style:footer-first",
                 "style:footer-left")
def _shapes(el) -> list:
    """The text-holding shapes inside ``el`` that are not inside another shape, in document order."""
    out = []
    for child in el.children:
        if (child.tag in SHAPES and child.tag not in ("draw:frame", "draw:g")) or child.tag == "draw:object":
            out.append(child)
        elif child.tag not in ("text:note", "office:annotation"):
            out += _shapes(child)
    return out


class _TextWriter:
    """Walks an ODT body (or a text box inside it) into a :class:`CanonicalBuilder`, numbering headings and list
    items (:class:`rag.ingest.office.odf_numbers.Numbering`) and keeping the role of generated indexes."""

    def __init__(self, b: CanonicalBuilder, numbering: Numbering | None = None,
                 styles: ParagraphStyles | None = None, objects: Objects | None = None) -> None:
        self.b = b
        self.objects = objects  # the package's embedded objects (charts, sheets)
        self.numbering = numbering
        self.styles = styles
        self.scope, self.number = "", 0
        self.roles: list[RoleSpan] = []
        self.title = ""  # the first paragraph styled as the document's title
        self.first_heading, self.first_heading_at = "", 0  # the first level-1 heading and where it starts

    def unit(self) -> Unit:
        self.number += 1
        return Unit(LocatorKind.PARAGRAPH, self.number, scope=self.scope)

    def walk(self, parent) -> None:
        for el in parent.children:
            self.element(el)

    def notes(self, el) -> None:
        for note in note_blocks(el):
            self.b.block(note, self.unit())

    def element(self, el) -> None:
        tag = el.tag
        if tag in HIDDEN:
            return
        if tag == "text:h":
            level = int(_attr(el, "text:outline-level") or 1) if _attr(el, "text:outline-level").isdigit() else 1
            words = clean_inline(inline_text(el), keep_newlines=False)
            label = self.heading_label(el, level)
            before = self.b.length
            if self.b.heading(level, label + words if words else ""):
                self.scope, self.number = label + words, 0
                if level == 1 and not self.first_heading:
                    self.first_heading, self.first_heading_at = words, before
            self.shapes(el)
            self.notes(el)
        elif tag == "text:p" and self.styles is not None and self.styles.heading_level(_attr(el, "text:style-name")):
            words = clean_inline(inline_text(el), keep_newlines=False)
            level = self.styles.heading_level(_attr(el, "text:style-name"))
            if self.b.heading(level, words):
                self.scope, self.number = words, 0
            self.shapes(el)
            self.notes(el)
        elif tag == "text:p":
            if not self.title and self.styles is not None and self.styles.is_title(_attr(el, "text:style-name")):
                self.title = clean_inline(inline_text(el), keep_newlines=False)
            text = inline_text(el)
            if text.strip():  # an empty paragraph (or one holding only a picture) is no paragraph a reader counts
                self.b.block(text, self.unit())
            self.shapes(el)
            self.notes(el)
        elif tag == "text:list":
            style, counts = self.numbering.open_list(el) if self.numbering else ("", {})
            lines = self.list_lines(el, 0, style, counts)
            if lines:
                self.b.lines([(text, self.unit()) for text in lines])
            self.shapes(el)
            self.notes(el)
        elif tag == "table:table":
            lines = table_lines(el)
            block = self.b.lines([(ln, None) for ln in lines])
            if block:
                self.b.add_part(self.unit(), *block)
            self.shapes(el)
            self.notes(el)
        elif tag in _INDEXES:
            before = self.b.length
            for child in el.children:
                if child.tag in ("text:index-title", "text:index-body"):
                    self.walk(child)
            if self.b.length > before:
                self.roles.append(RoleSpan(_INDEXES[tag], before + (2 if before else 0), self.b.length))
        elif tag in ("draw:frame", "draw:g"):
            self.shapes(el)
        elif tag == "draw:object":  # a chart or a sheet placed in a frame (rag.ingest.office.odf_objects)
            block = self.b.lines([(ln, None) for ln in self.objects.lines(el)]) if self.objects is not None else None
            if block:
                self.b.add_part(self.unit(), *block)
        elif tag in SHAPES or tag in ("text:section", "text:index-body", "text:index-title", "table:table-cell",
                                       "office:text", "text:numbered-paragraph"):
            self.walk(el)

    def heading_label(self, h, level: int) -> str:
        """The outline number a reader sees before heading ``h`` (the heading's own ``text:number`` first)."""
        drawn = next((clean_inline(c.text_recursive, keep_newlines=False) for c in h.children
                      if c.tag == "text:number"), "")
        computed = self.numbering.heading_label(h, level) if self.numbering else ""
        return drawn + " " if drawn else computed

    def shapes(self, el) -> None:
        """Text boxes and shapes anchored inside ``el``: read after it, one block per paragraph."""
        for shape in _shapes(el):
            self.element(shape) if shape.tag == "draw:object" else self.walk(shape)

    def list_lines(self, el, depth: int, style: str = "", counts: dict | None = None) -> list[str]:
        """One line per list item, indented two spaces per level, after its label as a reader sees it."""
        counts = {} if counts is None else counts
        out = []
        for item in el.children:
            if item.tag not in ("text:list-item", "text:list-header"):
                continue
            first = True
            for child in item.children:
                if child.tag in ("text:p", "text:h"):
                    text = clean_inline(inline_text(child), keep_newlines=False)
                    if first:
                        label = (self.numbering.item_label(style, counts, depth + 1, item) if self.numbering
                                 else "- ")
                        first = False
                    else:
                        label = "  "  # a second paragraph of the same item: no label of its own
                    if text:
                        out.append("  " * depth + label + text)
                elif child.tag == "text:list":
                    out += self.list_lines(child, depth + 1, _attr(child, "text:style-name") or style, counts)
        return out


def _encrypted(data: bytes) -> bool:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return b"encryption-data" in zf.read("META-INF/manifest.xml")[:1 << 20]
    except (KeyError, zipfile.BadZipFile, OSError, RuntimeError):
        return False


_WORD = re.compile(r"\w+")


def agrees(title: str, text: str) -> bool:
    """Whether at least 80 % of the words of ``title`` (case-folded) are words of ``text``."""
    words = [w.casefold() for w in _WORD.findall(title)]
    seen = {w.casefold() for w in _WORD.findall(text)}
    return bool(words) and sum(w in seen for w in words) >= 0.8 * len(words)


def text_title(visible: str, meta: str, headers: list[str], first_heading: str, opening: str) -> str:
    """An ODT's title, as a reader sees it (issue 37: metadata is often a template's or an older edition's):
    ``visible`` (a ``Title`` paragraph, or a level-1 heading before any other text), else the running header
    (on every page), else the metadata title when its words are in the ``opening`` text, else the first level-1
    heading, else the metadata title (``""`` when there is nothing)."""
    if visible:
        return visible
    if headers:
        return headers[0]
    if meta and agrees(meta, opening):
        return meta
    return first_heading or meta


def _meta_title(doc) -> str:
    try:
        return clean_inline(doc.get_part("meta").get_title() or "", keep_newlines=False)
    except Exception:  # noqa: BLE001 - metadata is optional
        return ""


#: A style named as a heading ("Heading 2", "OWASP Heading 1", "Style Heading 1 + Verdana"), as stored (spaces "_20_").
_HEADING_STYLE = re.compile(r"(?:^|_20_)Heading_20_([1-9])(?:$|_20_)")


class ParagraphStyles:
    """What a paragraph's style makes it (a style inherits through ``style:parent-style-name``): the document's
    title (``Title``), or a heading of level N (``Heading N`` or a style with ``style:default-outline-level``:
    how converters from Word and custom house styles mark headings without ``text:h``)."""

    def __init__(self, doc) -> None:
        self.parent: dict[str, str] = {}
        self.level: dict[str, int] = {}
        for part in (doc.styles, doc.content):
            for st in part.get_elements("//style:style"):
                if _attr(st, "style:family") != "paragraph":
                    continue
                name = _attr(st, "style:name")
                self.parent[name] = _attr(st, "style:parent-style-name")
                outline = _attr(st, "style:default-outline-level")
                if outline.isdigit() and 1 <= int(outline) <= 9:
                    self.level[name] = int(outline)

    def _chain(self, name: str) -> list[str]:
        out = []
        while name and len(out) < 20 and name not in out:
            out.append(name)
            name = self.parent.get(name, "")
        return out

    def is_title(self, name: str) -> bool:
        """Whether paragraph style ``name`` is, or derives from, ``Title``."""
        return "Title" in self._chain(name)

    def heading_level(self, name: str) -> int:
        """The heading level paragraph style ``name`` gives (0: not a heading style)."""
        for st in self._chain(name):
            if st in self.level:
                return self.level[st]
            m = _HEADING_STYLE.search(st)
            if m:
                return int(m.group(1))
        return 0


#: Words around a page number in a header or footer ("Page 3 of 12", "Seite 3 von 12", "p. 3"): a line of only these
#: once its numbers are left out says nothing. "Header 3 Test" says "Header Test" (it was dropped, a new user's walk,
#: 2026-12-07).
_PAGE_WORDS = frozenset("page pages of p pg pp seite von página pagina de di sur blz van sida av strona z".split()) | {""}


def header_footer_lines(doc) -> tuple[list[str], list[str]]:
    """``(headers, footers)``: the distinct texts of every master page's headers and footers (first-page and
    left-page ones too), page numbers and counts left out, each once."""
    heads: list[str] = []
    foots: list[str] = []
    for page in doc.styles.get_elements("//style:master-page"):
        for child in page.children:
            if child.tag not in _MASTER_PARTS or _attr(child, "style:display") == "false":
                continue
            paras = child.get_elements("descendant::text:p") + child.get_elements("descendant::text:h")
            text = clean_inline(" ".join(inline_text(p, page_fields=False) for p in paras), keep_newlines=False)
            numbered = any(child.get_elements(f"descendant::{f}") for f in PAGE_FIELDS)
            if numbered and all(w.strip(".:,/-").casefold() in _PAGE_WORDS for w in text.split()):
                continue  # "Page 3 of 12" without its numbers is "Page of": nothing a reader reads
            target = heads if child.tag.startswith("style:header") else foots
            if text and text not in heads + foots:
                target.append(text)
    return heads, foots


def _furniture(b: CanonicalBuilder, lines: list[str]) -> list[RoleSpan]:
    span = b.lines([(ln, None) for ln in lines]) if lines else None
    return [RoleSpan(TextRole.FURNITURE, *span)] if span else []


def _hidden_page_styles(doc) -> set[str]:
    """Drawing-page styles that hide a slide in the show (``presentation:visibility="hidden"``)."""
    out = set()
    for st in doc.content.get_elements("//style:style"):
        if _attr(st, "style:family") == "drawing-page" and any(
                _attr(c, "presentation:visibility") == "hidden" for c in st.children):
            out.add(_attr(st, "style:name"))
    return out


def _frame_lines(frame, objects: Objects | None = None, numbering: Numbering | None = None) -> list[str]:
    """One line per paragraph of a presentation frame or shape; list items after the label their list style draws
    ("1. ", "- "; before, a numbered list read as bullets: odfpy's ol.odp, a new user's walk, 2026-12-07); an
    embedded chart or sheet's lines (:class:`rag.ingest.office.odf_objects.Objects`) when ``objects`` is given; a
    table of the slide as Markdown rows (before, Impress's tables were lost: PHPPresentation's Issue_00141.odp kept
    only its slide's title, a new user's walk, 2026-12-07)."""
    out: list[str] = []
    if objects is not None:
        for obj in frame.get_elements("descendant::draw:object"):
            out += objects.lines(obj)
    for table in frame.get_elements("descendant::table:table[not(ancestor::table:table)]"):  # Impress's own tables
        out += table_lines(table)  # (a table nested in a cell is read with its cell)
    writer = _TextWriter(CanonicalBuilder(), numbering)
    boxes = [frame] if frame.tag in ("draw:custom-shape", "presentation:notes") else []
    boxes += frame.get_elements("descendant::draw:text-box") + [s for s in _shapes(frame)
                                                                if s.tag != "draw:text-box"]
    for box in boxes:
        for el in box.children:
            if el.tag == "text:list":
                style, counts = numbering.open_list(el) if numbering is not None else ("", {})
                out += writer.list_lines(el, 0, style, counts)
            elif el.tag in ("text:p", "text:h"):
                text = clean_inline(inline_text(el), keep_newlines=False)
                if text:
                    out.append(text)
    return out


def _write_deck(b: CanonicalBuilder, doc, objects: Objects) -> tuple[str, list[RoleSpan], list[int], str]:
    """Every slide of an ODP (:mod:`rag.ingest.office.odf_slides`); returns (the title slide's title, role spans, the
    hidden slides' numbers, the words the shown slides hold)."""
    hidden_styles = _hidden_page_styles(doc)
    numbering = Numbering(doc)
    slides = [read_slide(page, n, lambda f: _frame_lines(f, objects, numbering), hidden=_attr(page, "draw:style-name") in hidden_styles)
              for n, page in enumerate(doc.body.get_elements("draw:page"), start=1)]
    write_slides(b, slides)
    decls = doc.body.get_elements("presentation:footer-decl") + doc.body.get_elements("presentation:header-decl")
    span = write_furniture(b, [d.text_recursive for d in decls])
    shown = " ".join(t for s in slides if not s.hidden for t in [s.title, *s.lines(), *s.notes])
    return deck_title(slides), [span] if span else [], [s.number for s in slides if s.hidden and s.has_text], shown


def _annotations_warning(body) -> list[str]:
    """A warning naming how many comments (``office:annotation``, OpenDocument 1.3 part 3, 14.1) were not read, as
    for DOCX (:func:`rag.ingest.office.wordml.comments_warning`): LibreOffice shows them in the margin or on the
    cell, and a reader who sees them should not think they were searched. They stay out of the text."""
    n = len(body.get_elements("descendant::office:annotation"))
    return [f"not read: {n} comment(s) shown in the margin; comments are notes about the text, not its text"] if n else []


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
    roles: list[RoleSpan] = []
    warnings: list[str] = []
    unseen = Hidden("paragraphs and spans")
    visible = ""
    try:
        doc = odfdo.Document(io.BytesIO(data))
        body = doc.body
        for root in (body, doc.styles.get_element("//office:master-styles") if doc.styles is not None else None):
            if root is not None:
                drop_hidden(doc, root, unseen)  # styled display:none or under 2 pt
        budget = RowBudget(name, limits)
        objects = Objects(doc, budget)
        if media_type == MediaType.ODS.value:
            uncomputed, cells, hidden_sheets = [0], Hidden("cells"), []
            hiding = hidden_tables(doc)
            for table in body.get_elements("table:table"):
                if _attr(table, "table:display") == "false" or _attr(table, "table:style-name") in hiding:
                    hidden_sheets.append(_attr(table, "table:name"))
                    for p in table.get_elements("descendant::text:p")[:200]:  # seen by no reader: the audit's too
                        unseen.keep(p.text_recursive or "")
                    continue
                wrote = write_sheet(b, _attr(table, "table:name"),
                                    sheet_rows(table, budget, uncomputed=uncomputed, hidden=cells),
                                    heading=True, budget=budget)
                charts = [ln for obj in table.get_elements("descendant::draw:object") for ln in objects.lines(obj)]
                if charts and not wrote:
                    b.heading(1, _attr(table, "table:name"))
                b.lines([(ln, None) for ln in charts])
            warnings += (uncomputed_warning(uncomputed[0]) + hidden_sheets_warning(hidden_sheets)
                         + ([cells.warning()] if cells.total else []))
            for t in cells.texts:
                unseen.keep(t)
        elif media_type == MediaType.ODP.value:
            visible, roles, hidden, shown = _write_deck(b, doc, objects)
            visible = visible or (_meta_title(doc) if agrees(_meta_title(doc), shown) else "") or file_stem(name)
            if hidden:
                warnings.append("hidden slides left out: " + ", ".join(map(str, hidden))
                                + "; never indexed or read by the model")
        else:
            heads, foots = header_footer_lines(doc)
            roles += _furniture(b, heads)
            writer = _TextWriter(b, Numbering(doc), ParagraphStyles(doc), objects)
            body_at = b.length
            writer.walk(body)
            roles += writer.roles + _furniture(b, foots)
        meta = _meta_title(doc)
        if media_type == MediaType.ODT.value:
            early = writer.first_heading if writer.first_heading_at == body_at else ""
            visible = text_title(writer.title or early, meta, heads, writer.first_heading, b.text()[:5000])
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - zip, XML and odfdo errors all mean the same to the user
        raise ExtractionError(name, f"damaged {label} ({type(e).__name__}: {str(e)[:120]})") from e
    title = visible or meta
    if not title:
        firsts = [h.title for h in b.headings if h.level == 1]
        title = firsts[0] if firsts and media_type != MediaType.ODS.value else file_stem(name)
    empty = {"ODS": "every sheet of this ODS is empty", "ODP": "no text on any slide of this ODP"}
    warnings += [unseen.warning()] if unseen.total else []
    warnings += _annotations_warning(body)
    out = b.document(data, name, media_type, title=title, extractor=f"odfdo {odfdo.__version__}",
                     warnings=tuple(warnings),
                     empty_reason=f"no visible text in this {label}: {unseen.warning()}" if unseen.total
                     else empty.get(label, "no text in this ODT (empty document?)"))
    out = dataclasses.replace(out, left_out=tuple(unseen.texts)) if unseen.texts else out  # the coverage audit
    return dataclasses.replace(out, roles=tuple(sorted(roles, key=lambda r: r.start))) if roles else out
