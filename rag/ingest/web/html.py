"""Saved web pages (HTML) -> canonical text + heading-anchor locators (design stage 1; issue 17), with lxml.

Hidden text first: elements the page's CSS hides (``display:none``, ``font-size:0``, white on white,
off-screen, ...; :mod:`rag.ingest.web.css_hidden`, issue 26) are removed and counted in a warning.

Main content only. The page is parsed by lxml; scripts, styles, forms,
navigation, banners, sidebars, footers, cookie notices, hidden elements and
the like are removed (by tag, ARIA role and class/id words), and the main
content is the page's ``<main>`` (or ``role="main"``), else its one
``<article>``, else the container whose id/class says content with the most
text, else the body. Measured against trafilatura in ``docs/formats.md``. A page that gives no text that way
and has ``<noscript>`` (its whole text in its version without JavaScript) is read again with ``<noscript>`` kept,
its main content the block whose own paragraphs hold the most text, and a warning (issue 37).

Layout: headings ``<h1>``..``<h6>`` become Markdown headings (sections);
paragraphs, ``<pre>`` blocks (indentation kept), definition terms one block
each; lists one line per item (``- `` / ``1. ``, nested items indented);
tables Markdown rows with their header. Whitespace is collapsed as a browser
does, ``<br>`` is a line break.

Locators: every heading starts a :class:`rag.types.Part` of kind
``section`` that runs to the next heading; ``anchor`` is the heading's own
``id`` (or an ``<a id|name>`` inside it, or its ``<section id>``), else a
slug of its title (``install-on-linux``) so every section has one; text
before the first heading is a part with an empty anchor (the top of the page).

:func:`write_html` (element -> blocks) is shared with the EPUB reader.
"""

from __future__ import annotations

import codecs
import dataclasses
import re
import unicodedata

from rag.errors import ExtractionError
from rag.ingest import textfile
from rag.ingest.canonical import CanonicalBuilder, Unit, clean_inline, file_stem, markdown_table, table_cell
from rag.ingest.web.css_hidden import remove_hidden
from rag.ingest.web.html_main import (
    DROP_TAGS,
    HEADINGS,
    WS,
    main_content,
    outside,
    paragraph_block,
    strip_boilerplate,
)
from rag.ingest.web.html_prepare import BLOCKS, prepare
from rag.ingest.web.html_tables import cells_of, lays_out, nested_cell_text, table_grid
from rag.types import Document, LocatorKind, MediaType

#: Bytes searched for a ``<meta charset>``: a page may open with a long script before its ``<head>`` (a new user's
#: walk, 2026-12-07: the declaration sat past the first 4 KiB, and the Windows-1251 page was read as 1252).
CHARSET_SCAN = 65536
_META_CHARSET = re.compile(rb"""<meta[^<>]{1,512}charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
_SLUG_DROP = re.compile(r"[^\w\- ]+")
#: Ids that site templates give every page's title heading (MediaWiki, common CMS themes).
_PAGE_TITLE_IDS = {"firstheading", "page-title", "pagetitle", "main-title", "entry-title", "title", "top"}


# --------------------------------------------------------------------------- decoding and sniffing


def looks_like_html(text: str) -> bool:
    """Whether decoded text starts as an HTML document (doctype or ``<html>``/``<head>``/``<body>``,
    after an optional XML declaration and comments). A Markdown file with inline tags is not."""
    head = _XML_DECL.sub("", text[:4096].lstrip("\ufeff \t\r\n"))
    head = re.sub(r"^(\s*<!--.*?-->)+", "", head, flags=re.DOTALL).lstrip().lower()
    return head.startswith(("<!doctype html", "<!doctypehtml", "<html", "<head", "<body"))


#: The tags that open an HTML document by the WHATWG MIME Sniffing Standard (section 7.1, "identifying a resource
#: with an unknown MIME type"), each followed by a space or ">": a page that starts with its script ("<script
#: language=...>") was read as plain text, its markup and JavaScript indexed as evidence (a new user's walk, 2026-12-07).
WHATWG_HTML_TAGS = ("<!doctype html", "<html", "<head", "<script", "<iframe", "<h1", "<div", "<font", "<table",
                    "<a", "<style", "<title", "<b", "<body", "<br", "<p", "<!--")


def sniffs_as_html(text: str) -> bool:
    """Whether decoded text starts with one of :data:`WHATWG_HTML_TAGS` (case-insensitive, after white space and
    an XML declaration), followed by a space, a tab, a line break or ">": how a browser decides a file is HTML."""
    head = _XML_DECL.sub("", text[:4096].lstrip("\ufeff \t\r\n"), count=1).lstrip().lower()
    return any(head.startswith(tag) and head[len(tag):len(tag) + 1] in (" ", "\t", "\n", "\r", ">")
               for tag in WHATWG_HTML_TAGS)


def whatwg_codec(label: str) -> str | None:
    """The Python codec of a declared charset ``label`` as browsers read it (the WHATWG Encoding Standard's labels,
    ``webencodings``): ``x-sjis`` is Shift_JIS, and ``iso-8859-1``, ``latin1`` and ``us-ascii`` are windows-1252, so
    a page's "‘" and "–" are not lost (a walk over chardet's and trafilatura's test pages, 2026-12-07); a label it
    does not know, Python's own codec of that name; ``None`` when neither knows it."""
    import webencodings

    found = webencodings.lookup(label)
    name = found.codec_info.name if found is not None else label
    try:  # "x-user-defined" and "replacement" are WHATWG's own, no Python codec (a review, 2026-12-07: a crash)
        codec = codecs.lookup(name)
        b"".decode(codec.name)
        return codec.name
    except (LookupError, UnicodeDecodeError):
        return None


def decode_html(data: bytes, name: str) -> tuple[str, tuple[str, ...]]:
    """HTML bytes -> text and warnings: a BOM, else the ``<meta charset>``, else UTF-8, else Windows-1252
    (with a warning). Raises ``ExtractionError`` when the declared charset is unknown and UTF-8 fails."""
    for bom, enc in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(enc, errors="replace"), ()
    m = _META_CHARSET.search(data[:CHARSET_SCAN])
    codec = whatwg_codec(m.group(1).decode("ascii")) if m else None
    if codec is not None:
        return data.decode(codec, errors="replace"), ()
    try:
        return data.decode("utf-8"), ()
    except UnicodeDecodeError:
        pass
    try:  # no charset declared: guessed as for a text file (a Windows-1251 page read as 1252 was mojibake)
        got = textfile.decode(data)
        return got.text, ((got.warning,) if got.warning else ())
    except ValueError:
        return data.decode("cp1252", errors="replace"), ("not UTF-8 and no charset declared: read as Windows-1252",)


# --------------------------------------------------------------------------- main content


# --------------------------------------------------------------------------- element -> blocks


def slug(title: str) -> str:
    """A GitHub-style anchor for a heading without an id: lower case, punctuation dropped, spaces -> ``-``."""
    s = _SLUG_DROP.sub("", unicodedata.normalize("NFKC", title).lower()).strip()
    return re.sub(r"\s+", "-", s) or "section"


def heading_anchor(el) -> str:
    """The heading's own ``id``, an element with an ``id`` (or an ``<a name>``) inside it, or its parent
    ``<section id>`` ("" if none)."""
    if el.get("id"):
        return el.get("id")
    for a in el.iter():  # an <a id|name> inside it, or Wikipedia's <span class="mw-headline" id>
        if isinstance(a.tag, str) and a is not el and (a.get("id") or (a.tag == "a" and a.get("name"))):
            return a.get("id") or a.get("name")
    prev = el.getprevious()
    if prev is not None and prev.tag == "a" and (prev.get("id") or prev.get("name")) and not (prev.text or "").strip():
        return prev.get("id") or prev.get("name")
    parent = el.getparent()
    if parent is not None and parent.tag in ("section", "div", "article") and parent.get("id"):
        first = next((c for c in parent if isinstance(c.tag, str)), None)
        if first is el:
            return parent.get("id")
    return ""


def inline_text(el, *, skip_lists: bool = False) -> str:
    """The text of ``el`` as a browser lays it out inline: whitespace collapsed, ``<br>`` as a newline."""
    parts: list[str] = []

    def walk(node) -> None:
        tag = node.tag.lower() if isinstance(node.tag, str) else ""
        if tag == "br":
            parts.append("\n")
        elif tag in DROP_TAGS or (skip_lists and tag in ("ul", "ol")) or not tag:
            pass
        else:
            if node.text:
                parts.append(WS.sub(" ", node.text))
            for child in node:
                walk(child)
                if child.tail:
                    parts.append(WS.sub(" ", child.tail))
            if tag in BLOCKS or tag in ("li", "tr", "p") or tag in HEADINGS:
                parts.append(" ")

    walk(el)
    return "\n".join(" ".join(line.split()) for line in "".join(parts).split("\n")).strip()


class HtmlWriter:
    """Writes an element tree into a :class:`CanonicalBuilder`: headings, paragraphs, lists, tables, code.

    ``unit_for_block`` (optional) gives the :class:`Unit` of each paragraph-like
    block (EPUB numbers paragraphs); ``heading_offset`` shifts heading levels
    (EPUB chapters sit below their level-1 chapter heading).
    """

    def __init__(self, b: CanonicalBuilder, *, unit_for_block=None, heading_offset: int = 0) -> None:
        self.b = b
        self.unit_for_block = unit_for_block
        self.heading_offset = heading_offset
        self.buffer: list[str] = []
        self.anchors: list[tuple[int, str]] = []  # (heading start, anchor)

    def _unit(self):
        return self.unit_for_block() if self.unit_for_block else None

    def flush(self) -> None:
        text = "".join(self.buffer)
        self.buffer = []
        text = "\n".join(" ".join(line.split()) for line in text.split("\n")).strip()
        if text:
            self.b.block(text, self._unit())

    def write(self, el) -> None:
        """Write ``el`` and its descendants (its tail is the caller's)."""
        tag = el.tag.lower() if isinstance(el.tag, str) else ""
        if not tag or tag in DROP_TAGS:
            return
        if tag in HEADINGS:
            self.flush()
            h = self.b.heading(HEADINGS[tag] + self.heading_offset, inline_text(el))
            if h is not None:
                self.anchors.append((h.start, heading_anchor(el) or slug(h.title)))
        elif tag in ("ul", "ol"):
            self.flush()
            self._list(el)
        elif tag == "table" and lays_out(el):  # a layout table: its cells are regions of the page
            for cell in cells_of(el):
                self.flush()
                self._children(cell)
            self.flush()
        elif tag == "table":
            self.flush()
            self._table(el)
        elif tag == "pre":
            self.flush()
            self._pre(el)
        elif tag == "br":
            self.buffer.append("\n")
        elif tag == "img":
            pass
        elif tag in BLOCKS or tag == "li":
            self.flush()
            self._children(el)
            self.flush()
        else:
            self._children(el)

    def _children(self, el) -> None:
        if el.text:
            self.buffer.append(WS.sub(" ", el.text))
        for child in el:
            self.write(child)
            if child.tail:
                self.buffer.append(WS.sub(" ", child.tail))

    def _list_lines(self, el, depth: int) -> list[str]:
        lines, n = [], 0
        ordered = el.tag.lower() == "ol"
        for li in el:
            if not isinstance(li.tag, str) or li.tag.lower() != "li":
                continue
            n += 1
            text = inline_text(li, skip_lists=True).replace("\n", " ")
            if text:
                lines.append("  " * depth + (f"{n}. " if ordered else "- ") + text)
            for sub in li.iter("ul", "ol"):
                if sub.getparent() is li or sub.getparent().getparent() is li:
                    lines.extend(self._list_lines(sub, depth + 1))
        return lines

    def _list(self, el) -> None:
        lines = self._list_lines(el, 0)
        if lines:
            unit = self._unit()
            span = self.b.lines([(line, None) for line in lines])
            if span and unit is not None:
                self.b.add_part(unit, *span)

    def _table(self, el) -> None:
        caption = next((c for c in el if isinstance(c.tag, str) and c.tag.lower() == "caption"), None)
        if caption is not None:  # issue 37: "Table 2: Results by site" is what a reader reads first
            text = inline_text(caption).replace("\n", " ")
            span = self.b.block(text) if text else None
            unit = self._unit() if span else None
            if span and unit is not None:
                self.b.add_part(unit, *span)
        rows = table_grid(el, lambda cell: table_cell(nested_cell_text(cell, inline_text)))
        if not rows:
            return
        lines = markdown_table(rows)
        unit = self._unit()
        span = self.b.lines([(line, None) for line in lines])
        if span and unit is not None:
            self.b.add_part(unit, *span)

    def _pre(self, el) -> None:
        # a <br> inside <pre> is a line break ("// Method call<br>boolean ..." had put the statement in the comment:
        # a walk over postlight/parser's pages, 2026-12-07); text_content() alone reads none
        text = _pre_text(el)
        text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
        lines = [line.rstrip() for line in text.split("\n")]
        text = "\n".join(line for line in lines if line.strip()).strip("\n")
        if text.strip():
            unit = self._unit()
            span = self.b.block(text, None, clean=False)
            if span and unit is not None:
                self.b.add_part(unit, *span)


def _words(text: str) -> set[str]:
    """Words of ``text`` of four letters or more, case folded ("the" and "of" tie no heading to a title)."""
    return {w for w in ("".join(c for c in w if c.isalnum()) for w in text.casefold().split()) if len(w) >= 4}


def page_heading(h1s: list[str], page_title: str) -> str:
    """The page's title: the first ``<h1>`` that shares a word with the ``<title>``; else the ``<title>`` when it has
    more words than the first ``<h1>`` (a section label, "Business Monday", "News & general", or a translation
    widget's "Original text" stood first: a walk over postlight/parser's pages, 2026-12-07); else the first
    ``<h1>``, or the ``<title>``, or ``""``."""
    words = _words(page_title)
    for h in h1s:
        if _words(h) & words:
            return h
    if h1s and len(words) <= len(_words(h1s[0])):
        return h1s[0]
    return page_title or (h1s[0] if h1s else "")


def _pre_text(el) -> str:
    """The text of a ``<pre>`` element with each ``<br>`` in it as a line break (``text_content`` reads none);
    ``el`` is left as it was (a copy is read)."""
    import copy

    twin = copy.deepcopy(el)
    twin.tail = None
    for br in twin.iter("br", "BR"):
        br.tail = "\n" + (br.tail or "")
    return twin.text_content()


def write_html(b: CanonicalBuilder, root, **kwargs) -> HtmlWriter:
    """Write element ``root`` (its children, not its tail) into ``b``; returns the writer (``anchors``)."""
    w = HtmlWriter(b, **kwargs)
    w.write(root)
    w.flush()
    return w


def _section_parts(b: CanonicalBuilder, anchors: list[tuple[int, str]]) -> None:
    """One ``section`` part per heading (to the next heading), plus the text before the first one."""
    starts = {s: a for s, a in anchors}
    heads = [h for h in b.headings if h.start in starts]
    bounds = [0] + [h.start for h in heads] + [b.length]
    titles = [""] + [h.title for h in heads]
    anchor_of = [""] + [starts[h.start] for h in heads]
    seen: dict[str, int] = {}
    for i, (s, e) in enumerate(zip(bounds, bounds[1:])):
        if e <= s:
            continue
        anchor = anchor_of[i]
        if anchor:
            seen[anchor] = seen.get(anchor, 0) + 1
            anchor = anchor if seen[anchor] == 1 else f"{anchor}-{seen[anchor] - 1}"
        b.add_part(Unit(LocatorKind.SECTION, i, scope=titles[i], anchor=anchor), s, e)


def parse_html(text: str):
    """Parse decoded HTML (an XML declaration is dropped first: lxml refuses one in a str)."""
    import lxml.html

    return lxml.html.document_fromstring(_XML_DECL.sub("", text, count=1) or "<html></html>")


def _read(text: str, *, noscript: bool):
    """Parse ``text`` and write its main content: ``(builder, writer, hidden, page title)``. With ``noscript`` the
    ``<noscript>`` elements are read as part of the page (their tags dropped) and the main content is the
    paragraph block (:func:`rag.ingest.web.html_main.paragraph_block`), the size rule of :func:`rag.ingest.web.html_main.main_content` having found nothing."""
    doc = parse_html(text)
    if noscript:
        for el in list(doc.iter("noscript")):
            if el.getparent() is not None:
                el.drop_tag()
    title_el = doc.find(".//title")
    page_title = clean_inline(title_el.text_content(), keep_newlines=False) if title_el is not None else ""
    hidden = remove_hidden(doc)  # issue 26: text the page never shows, by its CSS, before anything is read
    prepare(doc)  # issue 37: heading decorations out, formulas as text, note markers apart
    root = paragraph_block(doc) if noscript else None
    furniture: list[str] = []
    if root is not None:
        body = doc.find(".//body")
        furniture.extend(outside(body if body is not None else doc, root))
        strip_boilerplate(root, left_out=furniture)
    else:
        root = main_content(doc, furniture)
    for text in furniture:
        hidden.keep(text)  # not counted: page furniture is no warning (issue 37, for the audit)
    b = CanonicalBuilder()
    writer = write_html(b, root)
    return b, writer, hidden, page_title


def extract_html(data: bytes, name: str) -> Document:
    """HTML bytes -> :class:`rag.types.Document`: main content, headings as sections, ``section`` parts.

    Raises ``ExtractionError(name, reason)`` when the page cannot be parsed
    (``damaged HTML (...)``) or holds no main text.
    """
    text, warnings = decode_html(data, name)
    try:
        b, writer, hidden, page_title = _read(text, noscript=False)
        if not b.length and "<noscript" in text.lower():
            # issue 37: a page whose whole text sits in <noscript> (its version without JavaScript, which a saved
            # copy shows) was refused as "no main text"
            b, writer, hidden, page_title = _read(text, noscript=True)
            if b.length:
                warnings = warnings + ("the page's text is its version without JavaScript (inside <noscript>): "
                                       "read that",)
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - lxml parse errors
        raise ExtractionError(name, f"damaged HTML ({type(e).__name__}: {str(e)[:120]})") from e
    if writer.anchors and writer.anchors[0][0] == 0 and writer.anchors[0][1].lower() in _PAGE_TITLE_IDS:
        # the page's own title at the very top under a site-wide id (MediaWiki's "firstHeading"): the anchor
        # names the site's template, not the section, and adds nothing to a locator (issue 37)
        writer.anchors[0] = (0, "")
    _section_parts(b, writer.anchors)
    h1 = [h.title for h in b.headings if h.level == 1]
    title = page_heading(h1, page_title) or (b.headings[0].title if b.headings else file_stem(name))
    warnings = warnings + ((hidden.warning(),) if hidden.total else ())
    doc = b.document(data, name, MediaType.HTML.value, title=title, extractor="html", warnings=warnings,
                     empty_reason="no main text in this HTML page")
    return dataclasses.replace(doc, left_out=tuple(hidden.texts))  # for the coverage audit (issue 37)
