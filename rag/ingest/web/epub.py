"""E-books (EPUB 2 and 3) -> canonical text + chapter/paragraph locators (design stage 1; issue 17), with ebooklib.

* Chapters in reading order (the spine; its non-linear documents, notes or answers a link opens, after it; the
  EPUB 3 navigation document left out; a document with no contents entry and no heading goes on with the chapter
  before it; a fixed-layout page's SVG text read as paragraphs). Each chapter is a level-1
  section titled from the book's table of contents, else its first heading,
  else ``Chapter N``; a spine document the table of contents points into at two or more fragments is cut
  there, each anchored element one chapter and the runs around them chapters of their own; the chapter's own headings sit one level below it (its
  first heading is not repeated when it is the chapter title).
* The chapter's XHTML is written by the HTML reader's
  :func:`rag.ingest.web.html.write_html` (no boilerplate removal: a chapter is all content).
* Locators: every paragraph-like block (paragraph, list, table, code) is a
  :class:`rag.types.Part` of kind ``paragraph``, numbered 1, 2, ... within its
  chapter; ``scope`` is the chapter title, ``scope_number`` the 1-based
  chapter, ``anchor`` the chapter's file inside the EPUB. So a citation reads
  chapter + paragraph.
* A book whose content documents are encrypted (DRM) is refused with that reason.
* Hidden text (the same CSS rules as HTML, with the chapter's linked style sheets:
  :mod:`rag.ingest.web.css_hidden`) is removed and counted in a warning (issue 26).
* The reader limits apply to what is read (issue 37): a picture, font or other media member over the
  compression-ratio limit does not fail the book; it is handed to ebooklib empty, never inflated, and named in a
  warning (:func:`without_media`).

A file ebooklib cannot open raises ``ExtractionError(name, "damaged EPUB (...)")``.
"""

from __future__ import annotations

import dataclasses
import io
import posixpath
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

from rag.errors import ExtractionError
from rag.ingest.canonical import CanonicalBuilder, Unit, clean_inline, file_stem
from rag.ingest.limits import Limits, check_zip, is_epub_unread
from rag.ingest.office.office_hidden import Hidden
from rag.ingest.web.css_hidden import remove_hidden
from rag.ingest.web.html import inline_text, parse_html, write_html
from rag.ingest.web.html_main import strip_boilerplate
from rag.ingest.web.html_prepare import prepare
from rag.types import Document, LocatorKind, MediaType

if TYPE_CHECKING:
    from ebooklib import epub


def _toc_entries(toc, out: list[tuple[str, str, str]] | None = None) -> list[tuple[str, str, str]]:
    """``(file href, fragment, title)`` of every entry of ebooklib's nested table of contents, in order."""
    from ebooklib import epub

    out = [] if out is None else out
    for entry in toc:
        if isinstance(entry, tuple) and len(entry) == 2:
            head, children = entry
            _toc_entries([head], out)
            _toc_entries(children, out)
        elif isinstance(entry, (epub.Link, epub.EpubHtml)) or hasattr(entry, "href"):
            href, _, fragment = (getattr(entry, "href", None) or getattr(entry, "file_name", "") or "").partition("#")
            title = clean_inline(getattr(entry, "title", "") or "", keep_newlines=False)
            if href and title:
                out.append((posixpath.normpath(href), fragment, title))
    return out


def _toc_titles(toc) -> dict[str, str]:
    """``{file href: title}`` from ebooklib's nested table of contents (the first title of each file wins)."""
    out: dict[str, str] = {}
    for href, _, title in _toc_entries(toc):
        out.setdefault(href, title)
    return out


def _toc_anchors(toc) -> dict[str, dict[str, str]]:
    """``{file href: {fragment: title}}`` for the files two or more table-of-contents entries point into by
    fragment: one spine document holding several chapters (pandoc's ``wasteland.epub``: "I. THE BURIAL OF THE
    DEAD" at ``#ch1``, "II. A GAME OF CHESS" at ``#ch2``)."""
    out: dict[str, dict[str, str]] = {}
    for href, fragment, title in _toc_entries(toc):
        if fragment:
            out.setdefault(href, {}).setdefault(fragment, title)
    return {href: anchors for href, anchors in out.items() if len(anchors) >= 2}


#: Inline elements: a contents entry pointing at one (``<a id="ch3"/>`` in a paragraph) cuts at its block.
_INLINE = {"a", "span", "em", "strong", "b", "i", "u", "s", "sup", "sub", "code", "small", "big", "abbr", "cite", "q",
           "mark", "font", "br", "img"}
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


def _marks(body, fragments: set[str]) -> dict:
    """``{element: (fragment, opens)}``: the element of ``body`` each fragment of the contents names by ``id``;
    an inline one stands for the block holding it, and ``opens`` says the mark starts a chapter that runs on to
    the next mark (an inline anchor's block, a heading, an empty element) rather than being one (a section)."""
    marks: dict = {}
    for el in body.iter():
        if not isinstance(el.tag, str) or el.get("id") not in fragments:
            continue
        block = el
        while block.tag in _INLINE and block.getparent() is not None and block.getparent() is not body:
            block = block.getparent()
        opens = block is not el or el.tag in _HEADINGS or el.tag in _INLINE or not " ".join(el.text_content().split())
        marks.setdefault(block, (el.get("id"), opens))
    return marks


def _pieces(el, marks: dict, out: list | None = None) -> list[tuple[str, list]]:
    """``el``'s children cut where the table of contents points (``marks``, :func:`_marks`): ``(fragment,
    [elements])`` in document order. A marked section is a piece of its own (its subtree), and the run after it
    another (fragment ``""``, titled by its heading); a marked heading, inline anchor or empty element starts a
    piece that runs on to the next mark; a marked element holding marks deeper starts a piece with its own opening
    blocks and is opened, so nested sections each are one (IDPF's ``childrens-literature``: 15 stories in one
    ``<section>`` read as one chapter; ``accessible_epub_3``: the contents point at ``<h2 id>``, and each heading
    became a chapter without its text, the text another, "chapter 11: Chapter 11"; a new user's walk,
    2026-12-07)."""
    out = [] if out is None else out  # [fragment, elements, open: later runs join it]
    for child in el:
        if not isinstance(child.tag, str):
            continue
        deeper = any(d in marks for d in child.iterdescendants() if isinstance(d.tag, str))
        if child in marks:
            fragment, opens = marks[child]
            if deeper:
                out.append([fragment, [], True])
                _pieces(child, marks, out)
            else:
                out.append([fragment, [child], opens])
        elif deeper:
            _pieces(child, marks, out)
        elif out and out[-1][2]:
            out[-1][1].append(child)
        else:
            out.append(["", [child], True])
    return [(fragment, elements) for fragment, elements, _ in out]


def without_media(data: bytes) -> bytes:
    """The EPUB ``data`` with every member the reader never reads (:func:`rag.ingest.limits.is_epub_unread`:
    pictures, fonts, sound, video) written empty and never inflated; every other member copied (its size was
    checked by :func:`rag.ingest.limits.check_zip`). ``mimetype`` stays first and stored."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = b"" if is_epub_unread(info.filename) else src.read(info)
            dst.writestr(info.filename, body, zipfile.ZIP_STORED if info.filename == "mimetype" else zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _drm_protected(data: bytes) -> bool:
    """Whether ``META-INF/encryption.xml`` encrypts content documents (font obfuscation alone is harmless)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            if "META-INF/encryption.xml" not in zf.namelist():
                return False
            xml = zf.read("META-INF/encryption.xml").decode("utf-8", "replace").lower()
    except (zipfile.BadZipFile, KeyError, OSError):
        return False
    return any(ext in xml for ext in (".xhtml", ".html", ".htm"))


def _entity_declarations(data: bytes) -> str:
    """The first XML member of the EPUB that declares entities (``<!ENTITY``), or ``""`` (issue 28, item 5: a
    billion-laughs EPUB was refused as "damaged EPUB (TypeError ...)"). Reads each member's first 64 KiB, where
    a DTD's internal subset sits; the archive's sizes were checked before (:func:`rag.ingest.limits.check_zip`)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                if info.filename.lower().endswith((".opf", ".ncx", ".xhtml", ".html", ".htm", ".xml")):
                    with zf.open(info) as f:
                        if b"<!ENTITY" in f.read(1 << 16):
                            return info.filename
    except (zipfile.BadZipFile, OSError, RuntimeError, KeyError):
        return ""
    return ""


class _Chapter:
    """Paragraph numbering inside one chapter (the ``unit_for_block`` of :class:`rag.ingest.web.html.HtmlWriter`)."""

    def __init__(self, number: int, title: str, href: str) -> None:
        self.number, self.title, self.href, self.count = number, title, href, 0

    def __call__(self) -> Unit:
        self.count += 1
        return Unit(LocatorKind.PARAGRAPH, self.count, scope=self.title, scope_number=self.number, anchor=self.href)


def _chapter_css(book, item) -> list[str]:
    """The style sheets of chapter ``item``: its linked ones (``<link rel="stylesheet" href>``, read from the book)
    and its own ``<style>`` elements, from the file as stored (ebooklib's ``get_content`` drops the ``<head>``)."""
    raw = getattr(item, "content", b"") or b""
    try:
        head = parse_html(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw))
    except Exception:  # noqa: BLE001 - a chapter whose head cannot be parsed has no style sheets
        return []
    out = []
    base = posixpath.dirname(item.get_name())
    for link in head.iter("link"):
        if "stylesheet" not in (link.get("rel") or "").lower() or not link.get("href"):
            continue
        href = link.get("href").split("#")[0]
        css = book.get_item_with_href(posixpath.normpath(posixpath.join(base, href))) or book.get_item_with_href(href)
        if css is not None:
            out.append(css.get_content().decode("utf-8", "replace"))
    return out + [st.text_content() for st in head.iter("style")]


def _write_chapter(b: CanonicalBuilder, item, number: int, toc: dict[str, str], book=None,
                   hidden: Hidden | None = None, anchors: dict[str, str] | None = None, state: dict | None = None) -> int:
    """Write one spine document as a chapter, or as several where ``anchors`` (:func:`_toc_anchors`: the table of
    contents points into it by fragment) cut it; returns how many chapters held text.

    Text the chapter's CSS hides (its linked style sheets and its own, :mod:`rag.ingest.web.css_hidden`) is
    removed first and counted in ``hidden`` (issue 26)."""
    text = item.get_content().decode("utf-8", "replace")
    doc = parse_html(text)
    gone = remove_hidden(doc, _chapter_css(book, item) if book is not None else [])
    prepare(doc)  # issue 37: heading decorations out, formulas as text, note markers apart
    svg_text_as_paragraphs(doc)  # a fixed-layout page's text
    if hidden is not None:
        hidden.merge(gone)
    body = doc.find(".//body")
    body = body if body is not None else doc
    strip_boilerplate(body, keep_semantic=True)
    href = posixpath.normpath(item.get_name())
    if anchors:  # several chapters in one file: each anchored element's subtree is one, the runs between others
        from lxml import html as lhtml

        written = 0
        for fragment, elements in _pieces(body, _marks(body, set(anchors))):
            piece = lhtml.Element("div")
            piece.extend(elements)
            written += _write_one(b, piece, number + written, anchors.get(fragment, ""), href, state)
        return written
    return _write_one(b, body, number, toc.get(href, ""), href, state)


def _write_one(b: CanonicalBuilder, body, number: int, toc_title: str, href: str, state: dict | None = None) -> int:
    """Write ``body`` as chapter ``number`` titled ``toc_title``, else by its first heading, else "Chapter N";
    1 when it held text, else 0. A document with neither a contents entry nor a heading after a chapter
    (``state["last"]``, the last chapter written) goes on with that chapter: a book split into files at arbitrary
    places (calibre does) had "# Chapter 17" put in the middle of a sentence, and its paragraphs cited under a
    chapter the book does not have (kreuzberg's winter_sports.epub, a walk, 2026-12-07)."""
    if not " ".join(body.text_content().split()):
        return 0
    heads = [el for el in body.iter("h1", "h2", "h3", "h4", "h5", "h6")]
    first = clean_inline(inline_text(heads[0]), keep_newlines=False) if heads else ""
    last = (state or {}).get("last")
    if not toc_title and not first and last is not None:
        write_html(b, body, unit_for_block=last, heading_offset=1)
        return 0
    title = toc_title or first or f"Chapter {number}"
    if heads and first.casefold() == title.casefold():  # "2.4: Auto conversion" under the entry "2.4: Auto Conversion"
        heads[0].drop_tree()
    b.heading(1, title)
    chapter = _Chapter(number, title, href)
    if state is not None:
        state["last"] = chapter
    write_html(b, body, unit_for_block=chapter, heading_offset=1)
    return 1


#: SVG containers whose content is never drawn where it stands (definitions, clip paths, masks ...).
_SVG_UNDRAWN = frozenset({"defs", "clippath", "mask", "symbol", "pattern", "marker", "lineargradient",
                          "radialgradient", "filter", "title", "desc", "metadata"})


def _svg_shown(el, top) -> bool:
    """Whether SVG text ``el`` is drawn: no element from it up to ``top`` is an undrawn container or says by its
    presentation attributes (or ``style``) that it is hidden: ``visibility`` hidden, ``display`` none, ``opacity``
    0, ``fill`` none, transparent or white, ``font-size`` 0 (a review, 2026-12-07)."""
    node = el
    while node is not None:
        if not isinstance(node.tag, str) or node.tag.rsplit("}", 1)[-1].lower() in _SVG_UNDRAWN:
            return False
        style = {k.strip().lower(): v.strip().lower() for k, _, v in
                 (d.partition(":") for d in (node.get("style") or "").split(";")) if v}
        said = {name: (style.get(name) or node.get(name) or "").strip().lower()
                for name in ("visibility", "display", "fill", "font-size", "opacity")}
        if said["visibility"] in ("hidden", "collapse") or said["display"] == "none":
            return False
        if said["fill"] in ("none", "transparent", "white", "#fff", "#ffffff") or said["font-size"] in ("0", "0px"):
            return False
        try:
            if said["opacity"] and float(said["opacity"]) <= 0.05:
                return False
        except ValueError:
            pass
        if node is top:
            return True
        node = node.getparent()
    return True


def svg_text_as_paragraphs(body) -> int:
    """Replace each ``<svg>`` of a chapter that holds ``<text>`` by one paragraph per ``<text>`` element (its
    ``<tspan>`` pieces joined): a fixed-layout book draws its pages as SVG text, which the reader dropped with every
    ``<svg>`` (IDPF's sous-le-vent sample: 6,047 selectable characters, refused as "no text"). Returns how many."""
    from lxml import html as lhtml

    n = 0
    for svg in [e for e in body.iter() if isinstance(e.tag, str) and e.tag.rsplit("}", 1)[-1].lower() == "svg"]:
        lines = [" ".join("".join(t.itertext()).split()) for t in svg.iter()
                 if isinstance(t.tag, str) and t.tag.rsplit("}", 1)[-1].lower() == "text" and _svg_shown(t, svg)]
        lines = [ln for ln in lines if any(ch.isalnum() for ch in ln)]
        parent = svg.getparent()
        if not lines or parent is None:
            continue
        div = lhtml.Element("div")
        for ln in lines:
            p = lhtml.Element("p")
            p.text = ln
            div.append(p)
        div.tail = svg.tail
        parent.replace(svg, div)
        n += 1
    return n


#: Metadata or heading titles that name no book (issue 37: a template's "MAIN TITLE", a contents page).
_NO_TITLE = {"", "main title", "title", "untitled", "table of contents", "contents", "toc", "title page",
             "cover", "introduction", "preface", "sommario", "目录", "inhoud", "inhaltsverzeichnis", "содержание"}


def _generic(title: str) -> bool:
    t = title.strip().lower()
    return t in _NO_TITLE or (t.startswith("chapter ") and t[8:].isdigit())


def _title(meta: str, b: CanonicalBuilder, name: str) -> str:
    """The title a reader sees (issue 37): the metadata title unless it is a template's or a contents page's
    ("MAIN TITLE", "Table of Contents"); then the first of the opening two level-1 headings that is not a
    contents page, "Chapter N" or "Introduction"; else the file name. A metadata title the text never shows is
    kept: many e-books have no title page, and no stale EPUB title was seen in corpus/real."""
    if not _generic(meta):
        return meta
    opening = [h.title for h in b.headings if h.level == 1][:2]  # a later chapter's heading names no book
    named = [t for t in opening if not _generic(t)]
    return named[0] if named else file_stem(name)


def _open_book(data: bytes, name: str, limits: Limits | None) -> tuple[epub.EpubBook, list[str]]:
    """``(book, unread)``: the EPUB read by ebooklib once its container passed the checks (members and ratios
    before anything is inflated, issue 26; no DRM; no XML entities), and the media left unread for being over
    the ratio limit (issue 37: given to ebooklib empty). Raises ``ExtractionError(name, reason)``."""
    from ebooklib import epub  # imported here so `python -m rag --help` stays fast

    unread = check_zip(data, name, limits)
    if _drm_protected(data):
        raise ExtractionError(name, "DRM-protected EPUB (its chapters are encrypted)")
    declared = _entity_declarations(data)
    if declared:
        raise ExtractionError(name, f"EPUB refused: {declared} declares XML entities (<!ENTITY ...>), the shape of an "
                                    "entity-expansion ('billion laughs') attack; no EPUB needs them")
    try:
        return epub.read_epub(io.BytesIO(without_media(data) if unread else data), options={"ignore_ncx": False}), unread
    except Exception as e:  # noqa: BLE001 - zip, XML and ebooklib errors all mean the same to the user
        raise ExtractionError(name, f"damaged EPUB ({type(e).__name__}: {str(e)[:120]})") from e


def _chapters(book: epub.EpubBook) -> Iterator[tuple[epub.EpubHtml, bool]]:
    """``(document, linear)`` for the book's chapters: the spine's linear documents in reading order, then its
    non-linear ones (``linear="no"``: notes, answers, pages a link opens; W3C's spine test lost one without a word),
    the navigation document left out."""
    from ebooklib import ITEM_DOCUMENT, epub

    spine = [(book.get_item_with_id(idref), str(linear).lower() != "no") for idref, linear in book.spine]
    for want in (True, False):
        for item, linear in spine:
            if item is None or item.get_type() != ITEM_DOCUMENT or linear is not want:
                continue
            if isinstance(item, epub.EpubNav) or "nav" in (getattr(item, "properties", None) or []):
                continue
            yield item, linear


def _write_book(b: CanonicalBuilder, book: epub.EpubBook, hidden: Hidden) -> list:
    """Write each chapter with text into ``b`` as a numbered level-1 section (what the CSS hides into
    ``hidden``); returns the book's ``DC`` title metadata."""
    toc, anchors = _toc_titles(book.toc), _toc_anchors(book.toc)
    number, state = 0, {"last": None}
    for item, linear in _chapters(book):
        if not linear:
            state["last"] = None  # a note or answer page is a chapter of its own, never the last one's end
        number += _write_chapter(b, item, number + 1, toc, book, hidden,
                                 anchors.get(posixpath.normpath(item.get_name())), state)
    return book.get_metadata("DC", "title")


def extract_epub(data: bytes, name: str, *, limits: Limits | None = None) -> Document:
    """EPUB bytes -> :class:`rag.types.Document`, one level-1 section per chapter (see the module docstring).

    Raises ``ExtractionError(name, reason)`` for a damaged file, a DRM-protected
    book, or a book without text.
    """
    book, unread = _open_book(data, name, limits)
    b = CanonicalBuilder()
    hidden = Hidden("elements")
    try:
        titles = _write_book(b, book, hidden)
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001
        raise ExtractionError(name, f"damaged EPUB ({type(e).__name__}: {str(e)[:120]})") from e
    meta = clean_inline(titles[0][0], keep_newlines=False) if titles and titles[0][0] else ""
    title = _title(meta, b, name)
    warnings = [hidden.warning()] if hidden.total else []
    if unread:
        warnings.append(f"not read: {len(unread)} picture(s) or other media over the compression-ratio limit "
                        f"({'; '.join(unread[:3])}); the text does not need them")
    doc = b.document(data, name, MediaType.EPUB.value, title=title, extractor="epub", warnings=tuple(warnings),
                     empty_reason="no text in this EPUB (pictures only?)")
    return dataclasses.replace(doc, left_out=tuple(hidden.texts))  # for the coverage audit (issue 37)
