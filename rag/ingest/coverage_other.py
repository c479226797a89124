"""The coverage auditors of ODT, ODS, ODP, HTML, EPUB, Markdown, CSV and plain text (issue 37): what a person
sees, read with the standard library (``zipfile``, ``xml.etree``, ``html.parser``; Markdown rendered by
markdown-it-py's HTML renderer), sharing no code with the readers (:mod:`rag.ingest.coverage`).

* ODF: every paragraph and heading (``text:p``, ``text:h``) of the body, placed ``table`` inside a table,
  ``text box`` inside a drawing shape, ``footnote`` inside a note, ``speaker notes`` inside presentation notes;
  an ODT's master pages' headers and footers (``header or footer``, page numbers left out; a spreadsheet's are
  printed only). Left out: hidden text and
  paragraphs, annotations, tracked deletions, hidden sheets and slides, and a slide's footer, date and number
  frames (the reader leaves those out on purpose).
* HTML: the text of the page's ``<main>`` (else its one ``<article>``, else its ``<body>``), outside scripts,
  styles, forms, navigation, asides, headers and footers, and elements marked ``hidden``, ``aria-hidden`` or
  ``style="display:none"`` (the simplest hiding rules: a page's style sheets are not read here).
* EPUB: the body text of every XHTML document of the spine (``content.opf``), by the same HTML rules without
  the main-content choice (a chapter is all content); its navigation document left out.
* Markdown: the HTML that CommonMark renders, by the HTML rules of an EPUB chapter; CSV and plain text: their
  lines.
"""

from __future__ import annotations

import io
import posixpath
import xml.etree.ElementTree as ET  # noqa: N817 - the standard name
import zipfile
from html.parser import HTMLParser

from rag.ingest.limits import Limits, MiB
from rag.ingest.seen import MAX_PARTS, MAX_SEEN_CHARS, Seen
from rag.ingest.textfile import iso2022, split_front_matter, utf16_without_bom
from rag.types import MediaType

_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _read(zf: zipfile.ZipFile, name: str, limits: Limits) -> bytes | None:
    try:
        info = zf.getinfo(name)
    except KeyError:
        return None
    if info.file_size > limits.max_zip_member_mb * MiB:
        return None
    return zf.read(info)


# --------------------------------------------------------------------------- ODF

_ODF_SKIP = {"annotation", "annotation-end", "tracked-changes", "hidden-text", "hidden-paragraph", "page-number",
             "page-count", "note-citation", "sequence-decls", "forms", "page-thumbnail", "number"}
_ODF_PLACES = {"table-cell": "table", "note": "footnote", "text-box": "text box", "custom-shape": "text box",
               "notes": "speaker notes", "header": "header or footer", "footer": "header or footer",
               "header-left": "header or footer", "footer-left": "header or footer",
               "header-first": "header or footer", "footer-first": "header or footer"}


_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"


def _false(value: str | None) -> bool:
    return (value or "").strip().lower() == "false"


def _odf_pieces(root, place: str, out: list[Seen], hidden_pages: set[str]) -> None:
    """Walk ``root``: every ``text:p``/``text:h`` is one piece, its nested paragraphs and notes pieces of their own."""
    stack = [(root, place)]
    while stack and len(out) < MAX_PARTS * 50:
        el, where = stack.pop()
        name = _local(el.tag)
        if name in _ODF_SKIP:
            continue
        if name == "table" and (_false(el.get(_TABLE + "display")) or el.get(_TABLE + "style-name") in hidden_pages):
            continue  # a hidden sheet: by its own attribute, or by its style (table:display="false")
        if name == "table-row" and el.get(_TABLE + "visibility") in ("collapse", "filter"):
            continue
        if name == "page" and el.get("{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}style-name") in hidden_pages:
            continue
        cls = el.get("{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}class") or ""
        if cls in ("footer", "date-time", "page-number", "header"):
            continue
        where = _ODF_PLACES.get(name, where)
        if name in ("p", "h") and el.tag.startswith("{" + _TEXT):
            out.append(Seen(where, _odf_inline(el)))
            for child in el.iter():
                if child is not el and _local(child.tag) in ("note-body", "text-box", "custom-shape", "frame"):
                    stack.append((child, _ODF_PLACES.get(_local(child.tag), "footnote" if _local(child.tag) ==
                                                         "note-body" else "text box")))
            continue
        stack.extend((child, where) for child in reversed(list(el)))


def _odf_inline(p) -> str:
    """A paragraph's own words: spans joined as written (a word split over two spans stays one), spaces, tabs and
    line breaks as spaces; nested notes, shapes and hidden text left out (read as pieces of their own)."""
    parts = [p.text or ""]
    for child in p:
        name = _local(child.tag)
        if name in ("s", "tab", "line-break"):
            parts.append(" ")
        elif name not in _ODF_SKIP and name not in ("note", "frame", "custom-shape", "text-box", "rect", "ellipse",
                                                     "g", "polygon", "path"):
            parts.append(_odf_inline(child))
        parts.append(child.tail or "")
    return "".join(parts)


def odf_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees in an ODT, ODS or ODP (module doc)."""
    out: list[Seen] = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        content = _read(zf, "content.xml", limits)
        text_document = (_read(zf, "mimetype", limits) or b"").strip() == MediaType.ODT.value.encode()
        styles = _read(zf, "styles.xml", limits) if text_document else None  # a sheet's or deck's are print-only
    if content is None:
        raise ValueError("no content.xml")
    root = ET.fromstring(content)
    hidden_pages = {st.get("{urn:oasis:names:tc:opendocument:xmlns:style:1.0}name") for st in root.iter()
                    if _local(st.tag) == "style" and any(
                        c.get("{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}visibility") == "hidden"
                        or _false(c.get(_TABLE + "display")) for c in st)}  # hidden slides' and sheets' styles
    body = next((el for el in root if _local(el.tag) == "body"), None)
    if body is not None:
        _odf_pieces(body, "body", out, hidden_pages)
    if styles is not None:
        for el in ET.fromstring(styles).iter():
            if _local(el.tag) in ("header", "footer", "header-left", "footer-left", "header-first", "footer-first") \
                    and not _false(el.get("{urn:oasis:names:tc:opendocument:xmlns:style:1.0}display")):
                _odf_pieces(el, "header or footer", out, set())
    return _bounded(out)


def _bounded(out: list[Seen]) -> list[Seen]:
    kept, total = [], 0
    for s in out:
        total += len(s.text)
        if total > MAX_SEEN_CHARS:
            break
        kept.append(s)
    return kept


# --------------------------------------------------------------------------- HTML and EPUB

_HTML_SKIP = {"script", "style", "noscript", "template", "head", "title", "svg", "canvas", "iframe", "object",
              "form", "button", "select", "textarea", "nav", "aside", "footer", "header", "rt", "rp"}  # a ruby's
# reading is an annotation over the words, not words of the line (the reader leaves it out too)
_VOID = {"br", "img", "hr", "meta", "link", "input", "area", "base", "col", "embed", "source", "track", "wbr"}
_BLOCKISH = {"p", "div", "li", "td", "th", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "dt", "dd", "br",
             "blockquote", "section", "article", "main", "table", "caption", "figcaption"}


#: Characters that show nothing inside a word: soft hyphen, zero-width space and joiners.
_UNSEEN = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060"), None)


class _Visible(HTMLParser):
    """Text outside skipped and hidden elements, one piece per block; ``scope`` limits it to inside ``<main>`` or
    ``<article>`` when the page has one."""

    def __init__(self, scope: str | None, skip: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.scope, self.skip = scope, skip
        self.stack: list[tuple[str, bool]] = []  # (tag, hides)
        self.hidden = 0
        self.inside = 0 if scope else 1
        self.pieces: list[str] = []
        self.buf: list[str] = []

    def _flush(self) -> None:
        text = " ".join("".join(self.buf).split())
        if text:
            self.pieces.append(text)
        self.buf = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag in _BLOCKISH:
            self._flush()
        if tag in _VOID:
            return
        a = dict(attrs)
        style = (a.get("style") or "").replace(" ", "").lower()
        hides = (tag in self.skip or "hidden" in a or a.get("aria-hidden") == "true" or "display:none" in style)
        self.stack.append((tag, hides))
        self.hidden += hides
        if tag == self.scope:
            self.inside += 1

    def handle_endtag(self, tag) -> None:
        if tag in _BLOCKISH:
            self._flush()
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                for t, hides in self.stack[i:]:
                    self.hidden -= hides
                    if t == self.scope:
                        self.inside -= 1
                del self.stack[i:]
                break

    def handle_data(self, data) -> None:
        if not self.hidden and self.inside > 0:
            self.buf.append(data.translate(_UNSEEN))  # a soft hyphen shows no break inside a word


def visible_pieces(text: str, *, main_only: bool = True) -> list[str]:
    """The visible text of an HTML page as pieces (module doc); ``main_only=False`` for an EPUB chapter."""
    low = text[:2_000_000].lower()
    scope = None
    if main_only:
        scope = "main" if "<main" in low else "article" if low.count("<article") == 1 else None
    skip = _HTML_SKIP if main_only else _HTML_SKIP - {"header", "footer", "nav", "aside"}
    p = _Visible(scope, skip)
    p.feed(text[:MAX_SEEN_CHARS])
    p.close()
    p._flush()
    return p.pieces


def _decode(data: bytes) -> str:
    """A page's text, decoded as the reader decodes it (:func:`rag.ingest.web.html.decode_html`: a BOM, the declared
    charset as browsers read it, UTF-8, a guess): the audit judges the text the reader read. It tried UTF-8 before the
    declared charset, and a UTF-8 page declaring ISO-8859-15, read as a browser shows it, was "91 % coverage" (goose3's
    El Mundo page, a walk, 2026-12-07); before that its own cp1252 reading of a Windows-1251 page gave "4 %"."""
    from rag.ingest.web.html import decode_html  # the reader's own rule; imported here, as the reader is heavier

    return decode_html(data, "")[0]


def html_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees on an HTML page (module doc)."""
    return [Seen("body", t) for t in visible_pieces(_decode(data))]


def epub_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees in an EPUB: its spine's XHTML documents (module doc)."""
    out: list[Seen] = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        container = ET.fromstring(_read(zf, "META-INF/container.xml", limits) or b"<x/>")
        opf_path = next((el.get("full-path") for el in container.iter() if _local(el.tag) == "rootfile"), None)
        if not opf_path:
            raise ValueError("no package document")
        opf = ET.fromstring(_read(zf, opf_path, limits) or b"<x/>")
        base = posixpath.dirname(opf_path)
        items = {el.get("id"): el for el in opf.iter() if _local(el.tag) == "item"}
        for ref in [el for el in opf.iter() if _local(el.tag) == "itemref"][:MAX_PARTS]:
            item = items.get(ref.get("idref"))
            if item is None or (ref.get("linear") or "").lower() == "no" or "nav" in (item.get("properties") or ""):
                continue
            raw = _read(zf, posixpath.normpath(posixpath.join(base, item.get("href") or "")), limits)
            if raw is not None:
                out += [Seen("body", t) for t in visible_pieces(_decode(raw), main_only=False)]
    return _bounded(out)


# --------------------------------------------------------------------------- Markdown, CSV, plain text


def _text(data: bytes) -> str:
    """Text bytes decoded: a UTF-8 or UTF-16 BOM, else UTF-8; anything else is not judged here (``ValueError``:
    the reader's charset guess stands, unaudited)."""
    for bom, enc in ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            return data[len(bom):].decode(enc, "replace")
    if utf16_without_bom(data) or iso2022(data):  # valid UTF-8 bytes of another encoding: the reader's probe decided
        raise ValueError("UTF-16 without a byte-order mark or ISO-2022: not judged")
    return data.decode("utf-8")  # UnicodeDecodeError is a ValueError


def markdown_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees of a Markdown file: the CommonMark renderer's HTML (markdown-it-py's own HTML renderer,
    which the product's reader does not use: it rewrites the source), read as visible text by the HTML rules
    above (front matter left out: it is metadata)."""
    from rag.ingest.web.markdown_hidden import commonmark

    text = split_front_matter(_text(data)[:MAX_SEEN_CHARS].replace("\r\n", "\n"))[1]  # the reader's rule
    html = commonmark().render(text)
    # a code span's edge is a word's edge: the reader keeps its backticks ("`bash`를" is "bash" and "를")
    html = html.replace("<code>", " <code>").replace("</code>", "</code> ")
    return [Seen("body", t) for t in visible_pieces(html, main_only=False)]


def csv_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees of a CSV file: every line's text (the words, whatever the delimiter), as UTF-8 (another
    encoding is the reader's guess, not judged here: ``ValueError``)."""
    text = _text(data)
    return _bounded([Seen("cell", line) for line in text.splitlines() if line.strip()])


def text_seen(data: bytes, limits: Limits) -> list[Seen]:
    """What a person sees of a plain text file: its lines."""
    return _bounded([Seen("body", line) for line in _text(data).splitlines() if line.strip()])


#: The auditors in :data:`rag.ingest.coverage.AUDITORS` table. The HTML and EPUB auditors do not read style sheets
#: (a page's ``<style>`` or a book's CSS): text the CSS hides is seen here, and the reader (which reads the CSS)
#: leaves it out with a reason in a warning. That text, the reader's own report (:attr:`rag.types.Document.
#: hidden_text`), is not counted as missed (:func:`rag.ingest.coverage.judge`): a loss the reader did not report is
#: still a loss (docs/extraction.md, issue 37, 2026-12-03).
AUDITORS = {MediaType.ODT.value: odf_seen, MediaType.ODS.value: odf_seen, MediaType.ODP.value: odf_seen,
            MediaType.HTML.value: html_seen, MediaType.EPUB.value: epub_seen,
            MediaType.MARKDOWN.value: markdown_seen, MediaType.CSV.value: csv_seen, MediaType.TEXT.value: text_seen}
