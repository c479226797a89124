"""Showing a citation at its place (design stage 9, locators; issue 17's viewer): pure helpers, no Streamlit.

* PDF: :func:`pdf_view` cuts the pages around the cited 1-based physical page
  out of the stored PDF and gives the quote's line boxes as annotations for
  the PDF.js component (``streamlit-pdf-viewer``, in :mod:`ui.viewer`);
  :func:`render_pdf_page` draws one page to PNG bytes with the quote
  highlighted; :func:`publish_original` links the stored original under
  ``./static/<doc_id>.pdf`` so that Streamlit's static serving opens it at
  ``/app/static/<doc_id>.pdf#page=N`` (PDF Open Parameters, the secondary action).
* Text and Markdown: :func:`highlight_html` builds an HTML-escaped view of the
  canonical text with ``canonical[start:end]`` (0-based code points, end
  exclusive) wrapped in ``<mark id="cited">``; :func:`scrolling_document`
  wraps it in a small page that scrolls the mark into view.
* Issue 17's formats: :func:`render_blocks` renders the canonical text's
  blocks (headings, paragraphs, Markdown tables) with the cited range marked
  (DOCX, EPUB, HTML, OCR text); :func:`slide_html` one slide as a card with
  its speaker notes; :func:`sheet_html` the cited rows of a sheet with their
  header and A1 row numbers; :func:`image_region_png` the picture with the
  cited region boxed. In every view the first marked element has
  ``id="cited"`` and every marked element the class ``cited``.

Why not only ``page.search_for(quote)``: a quote is the chunk's ``content``,
taken from the canonical text, where ligatures are expanded (U+FB01 -> "fi"),
line-end hyphens joined and lines re-flowed. ``search_for`` looks for the
literal string in the PDF's own glyphs and misses most such quotes (on the
DPR paper's abstract it finds nothing). So it is tried first, and when it
finds nothing the quote is aligned to the page's words on a normalised
character stream (NFKC, case-folded, letters and digits only), piece by piece,
which survives hyphenation, ligatures, and column order.
"""

from __future__ import annotations

import html
import io
import os
import re
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from rag.ingest import ocr as ocr_engine
from rag.settings import ROOT
from rag.types import Box, LocatorKind, Part

#: Where Streamlit's static serving looks (``<folder of app.py>/static``), served at ``/app/static/``.
STATIC_DIR = ROOT / "static"

#: URL prefix of Streamlit's static file serving (``server.enableStaticServing = true``).
STATIC_URL = "/app/static"

#: Words per piece when aligning a quote to the page's words.
_PIECE_WORDS = 5

#: Pieces shorter than this (normalised characters) are merged with the next one: too ambiguous alone.
_MIN_PIECE_CHARS = 12

_DOC_ID = re.compile(r"^[0-9a-f]{16,128}$")


@dataclass(frozen=True)
class PagePreview:
    """A rendered PDF page.

    ``png`` the image bytes; ``page`` the 1-based physical page drawn;
    ``highlights`` how many line rectangles were highlighted; ``coverage`` the
    share (0..1) of the quote's normalised characters located on this page
    (a quote that runs onto the next page covers less than 1 here).
    """

    png: bytes
    page: int
    highlights: int
    coverage: float


def _norm(text: str) -> str:
    """NFKC, case-folded, letters and digits only (hyphens, spaces and punctuation dropped)."""
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


def _word_stream(words: list[tuple]) -> tuple[str, list[int]]:
    """Concatenate normalised page words; ``owner[i]`` is the word index of stream character ``i``."""
    parts: list[str] = []
    owner: list[int] = []
    for i, w in enumerate(words):
        n = _norm(w[4])
        parts.append(n)
        owner.extend([i] * len(n))
    return "".join(parts), owner


def _quote_pieces(quote: str) -> list[str]:
    """The quote cut into normalised pieces of about ``_PIECE_WORDS`` words (short pieces merged)."""
    tokens = quote.split()
    pieces: list[str] = []
    pending = ""
    for i in range(0, len(tokens), _PIECE_WORDS):
        pending += _norm(" ".join(tokens[i : i + _PIECE_WORDS]))
        if len(pending) >= _MIN_PIECE_CHARS:
            pieces.append(pending)
            pending = ""
    if pending:
        if pieces and len(pending) < _MIN_PIECE_CHARS:
            pieces[-1] += pending
        else:
            pieces.append(pending)
    return pieces


def locate_quote(page: pymupdf.Page, quote: str) -> tuple[list[pymupdf.Rect], float]:
    """Rectangles (page coordinates, points) covering ``quote`` on ``page``, and the coverage share.

    First ``page.search_for(quote)``; when that finds nothing, the quote's
    pieces are aligned to the page's words on a normalised character stream
    (see the module docstring); on a page with no text layer, to the words OCR reads there. Returns one rectangle per text line touched,
    and the share (0..1) of the quote's normalised characters found.
    """
    literal = page.search_for(quote) if len(quote) < 2000 else []
    if literal:
        return list(literal), 1.0
    rects, share = _align(page.get_text("words"), quote)
    if share == 0.0 and page.get_images():
        rects, share = _align(ocr_words(page), quote)  # a scanned page: the words OCR read (issue 13)
    return rects, share


def ocr_words(page: pymupdf.Page) -> list[tuple]:
    """The page's words as read by OCR (:mod:`rag.ingest.ocr`), in ``get_text("words")``'s tuple shape
    ``(x0, y0, x1, y1, text, block, line, word_no)``; ``[]`` when the engine is not installed."""

    if not ocr_engine.available():
        return []
    res = ocr_engine.ocr_page(page)
    return [(w.x0, w.y0, w.x1, w.y1, w.text, 0, w.line, i) for i, w in enumerate(res.words)]


def _align(words: list[tuple], quote: str) -> tuple[list[pymupdf.Rect], float]:
    """Align ``quote``'s normalised pieces to ``words`` (module doc): line rectangles and coverage share."""
    stream, owner = _word_stream(words)
    pieces = _quote_pieces(quote)
    total = sum(len(p) for p in pieces)
    if not stream or not total:
        return [], 0.0
    hit_words: set[int] = set()
    found = 0
    cursor = 0
    for piece in pieces:
        at = stream.find(piece, cursor)
        if at < 0:
            at = stream.find(piece)
        if at < 0:
            continue
        found += len(piece)
        cursor = at + len(piece)
        hit_words.update(owner[at : at + len(piece)])
    return _line_rects([words[i] for i in sorted(hit_words)]), found / total


def _line_rects(words: list[tuple]) -> list[pymupdf.Rect]:
    """Union of word boxes per (block, line): one highlight rectangle per line."""
    lines: dict[tuple[int, int], pymupdf.Rect] = {}
    for x0, y0, x1, y1, _text, block, line, _wno in words:
        key = (block, line)
        r = pymupdf.Rect(x0, y0, x1, y1)
        lines[key] = lines[key] | r if key in lines else r
    return list(lines.values())


def _open(pdf: Path | bytes) -> pymupdf.Document:
    return pymupdf.open(stream=pdf, filetype="pdf") if isinstance(pdf, bytes) else pymupdf.open(pdf)


def best_page(pdf: Path | bytes, quote: str, first: int, last: int) -> tuple[int, float]:
    """The 1-based page in ``first..last`` holding the largest share of ``quote``, and that share (0..1).

    A chunk may run over a page break (``Chunk.page`` .. ``Chunk.page_end``);
    its citation should open where most of its words are, not where its first
    character is (often a footnote or a last line). Ties go to the earlier page.
    """
    with _open(pdf) as doc:
        last = min(last, doc.page_count)
        scores = [(locate_quote(doc[p - 1], quote)[1], -p) for p in range(first, last + 1)]
    if not scores:
        return first, 0.0
    share, neg_page = max(scores)
    return -neg_page, share


def render_pdf_page(pdf: Path | bytes, page: int, quote: str = "", *, dpi: int = 100,
                    focus_margin: float | None = None) -> PagePreview:
    """Render 1-based physical ``page`` of ``pdf`` (a path or the file's bytes) to PNG, quote highlighted.

    The highlight is a PDF highlight annotation added to an in-memory copy
    (the stored file is never modified). With ``focus_margin`` (points) the
    image is cropped to the page's full width and the highlighted lines plus
    that margin above and below, so the quote is in view at once. Raises
    ``ValueError`` naming the page when it is outside ``1..page_count``.
    """
    with _open(pdf) as doc:
        if not 1 <= page <= doc.page_count:
            raise ValueError(f"page {page} is outside 1..{doc.page_count}")
        p = doc[page - 1]
        rects, coverage = locate_quote(p, quote) if quote.strip() else ([], 0.0)
        clip = None
        if rects:
            annot = p.add_highlight_annot(rects)
            annot.set_colors(stroke=(1.0, 0.85, 0.0))
            annot.update()
            if focus_margin is not None:
                y0 = min(r.y0 for r in rects) - focus_margin
                y1 = max(r.y1 for r in rects) + focus_margin
                clip = pymupdf.Rect(p.rect.x0, max(p.rect.y0, y0), p.rect.x1, min(p.rect.y1, y1))
        png = p.get_pixmap(dpi=dpi, annots=True, clip=clip).tobytes("png")
        return PagePreview(png=png, page=page, highlights=len(rects), coverage=coverage)


def highlight_html(canonical: str, start: int, end: int, *, context_chars: int | None = None) -> str:
    """HTML-escaped view of ``canonical`` with ``canonical[start:end]`` in ``<mark id="cited">``.

    Offsets are 0-based code points (end exclusive). With ``context_chars`` only
    that many characters either side are shown, elided with an ellipsis. Every
    character of the document goes through :func:`html.escape`: the result is
    safe to render as HTML whatever the file holds. Raises ``ValueError`` when
    the range is not inside the text.
    """
    if not 0 <= start <= end <= len(canonical):
        raise ValueError(f"cited range {start}:{end} is outside the text (0:{len(canonical)})")
    lo, hi = 0, len(canonical)
    if context_chars is not None:
        lo, hi = max(0, start - context_chars), min(len(canonical), end + context_chars)
    before = ("…" if lo > 0 else "") + canonical[lo:start]
    after = canonical[end:hi] + ("…" if hi < len(canonical) else "")
    style = ' style="background: #ffe066; padding: 0 1px;"' if end > start else ""
    return (
        '<div class="rag-source" style="white-space: pre-wrap; font-family: ui-monospace, monospace; '
        'font-size: 0.85rem; line-height: 1.45;">'
        f"{html.escape(before)}"
        f'<mark id="cited"{style}>'
        f"{html.escape(canonical[start:end])}</mark>"
        f"{html.escape(after)}</div>"
    )


def scrolling_document(body_html: str, *, title: str = "") -> str:
    """A complete HTML page around :func:`highlight_html` output that scrolls ``#cited`` into view on load.

    ``title`` is escaped. Meant for ``streamlit.components.v1.html`` (an iframe).
    """
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{margin:0.5rem;font-family:sans-serif;color:#222;}</style></head><body>"
        f"{body_html}"
        "<script>window.addEventListener('load',function(){var m=document.getElementById('cited');"
        "if(m){m.scrollIntoView({block:'center'});}});</script></body></html>"
    )


def _check_id(doc_id: str) -> str:
    if not _DOC_ID.match(doc_id):
        raise ValueError(f"not a document id (hex content hash): {doc_id!r}")
    return doc_id


def static_url(doc_id: str, page: int | None = None) -> str:
    """``/app/static/<doc_id>.pdf`` plus ``#page=N`` (1-based physical page) when given."""
    url = f"{STATIC_URL}/{_check_id(doc_id)}.pdf"
    return f"{url}#page={page}" if page else url


def publish_original(src: Path, doc_id: str, static_dir: Path = STATIC_DIR) -> Path:
    """Make the stored original PDF ``src`` reachable as ``static_dir/<doc_id>.pdf``; returns that path.

    A hard link when ``src`` is on the same file system, else a copy (a
    symbolic link would not do: Streamlit resolves links and refuses targets
    outside the static folder). Idempotent; written through a temporary name
    and an atomic rename. ``doc_id`` must be a hex content hash (``ValueError``
    otherwise), so the name can never leave ``static_dir``.
    """
    dest = static_dir / f"{_check_id(doc_id)}.pdf"
    if dest.exists() and dest.stat().st_size == src.stat().st_size:
        return dest
    static_dir.mkdir(parents=True, exist_ok=True)
    tmp = static_dir / f".{doc_id}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)
    return dest


def unpublish(doc_id: str, static_dir: Path = STATIC_DIR) -> None:
    """Remove ``static_dir/<doc_id>.pdf`` if present (after the document is deleted)."""
    (static_dir / f"{_check_id(doc_id)}.pdf").unlink(missing_ok=True)


# --------------------------------------------------------------------------- PDF.js view (issue 17)

#: Pages either side of the cited one that the in-app PDF viewer gets.
PDF_WINDOW = 3

#: Outline colour of the quote's boxes in the PDF viewer.
ANNOTATION_COLOR = "#f08c00"


@dataclass(frozen=True)
class PdfView:
    """What the in-app PDF viewer shows for one citation.

    ``pdf`` the bytes of a PDF holding only pages ``first_page`` ..
    ``first_page + page_count - 1`` of the original (1-based physical pages);
    ``page`` the cited page's 1-based position inside ``pdf``;
    ``annotations`` one dict per highlighted line (``page`` 1-based inside
    ``pdf``, ``x``/``y``/``width``/``height`` in PDF points from the top-left
    corner, ``color``, ``border``), the format ``streamlit-pdf-viewer`` draws;
    ``coverage`` the share (0..1) of the quote located on the cited page.
    """

    pdf: bytes
    first_page: int
    page_count: int
    page: int
    annotations: list[dict]
    coverage: float


def pdf_view(pdf: Path | bytes, page: int, quote: str, *, radius: int = PDF_WINDOW) -> PdfView:
    """The pages around 1-based ``page`` (``radius`` either side) as a small PDF, with the quote's annotations.

    A slice keeps the viewer quick on a long PDF (the component ships the
    whole file to the browser); the original stays one click away
    (:func:`static_url`). Raises ``ValueError`` naming the page when it is outside the document.
    """
    with _open(pdf) as doc:
        if not 1 <= page <= doc.page_count:
            raise ValueError(f"page {page} is outside 1..{doc.page_count}")
        first, last = max(1, page - radius), min(doc.page_count, page + radius)
        rects, coverage = locate_quote(doc[page - 1], quote) if quote.strip() else ([], 0.0)
        doc.select(list(range(first - 1, last)))
        data = doc.tobytes(garbage=1, deflate=True)
    inside = page - first + 1
    notes = [{"page": inside, "x": r.x0 - 1, "y": r.y0 - 1, "width": r.width + 2, "height": r.height + 2,
              "color": ANNOTATION_COLOR, "border": "solid", "id": f"cited-{i}"} for i, r in enumerate(rects)]
    return PdfView(data, first, last - first + 1, inside, notes, coverage)


# --------------------------------------------------------------------------- rendered text (issue 17)

_HEADING_LINE = re.compile(r"^(#{1,6}) (.+)$")
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_VIEW_STYLE = (
    "<style>.rag-view{font-family:system-ui,sans-serif;font-size:0.95rem;line-height:1.5;color:#222}"
    ".rag-view p{white-space:pre-wrap;margin:0 0 0.7em}.rag-view h1,.rag-view h2,.rag-view h3,.rag-view h4,"
    ".rag-view h5,.rag-view h6{margin:0.9em 0 0.4em;line-height:1.25}"
    ".rag-view table{border-collapse:collapse;margin:0 0 0.8em;font-size:0.9rem}"
    ".rag-view td,.rag-view th{border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:pre-wrap}"
    ".rag-view th{background:#f1f3f5}.rag-view td.rownum,.rag-view th.rownum{color:#868e96;background:#f8f9fa;"
    "text-align:right}.rag-view mark.cited{background:#ffe066;padding:0 1px}"
    ".rag-view tr.cited td{background:#ffe066}.rag-view .elided{color:#868e96}"
    ".rag-slide{border:1px solid #ced4da;border-radius:6px;box-shadow:0 2px 6px #0002;padding:1.2em 1.6em;"
    "aspect-ratio:16/9;overflow:auto;background:#fff}.rag-notes{margin-top:1em;padding:0.6em 1em;"
    "background:#f8f9fa;border-left:3px solid #adb5bd;color:#495057}</style>"
)


class _Marker:
    """Wraps the part of each piece that lies in ``[start, end)`` in ``<mark class="cited">``; the first mark
    gets ``id="cited"`` (what the view scrolls to)."""

    def __init__(self, canonical: str, start: int, end: int) -> None:
        self.text, self.start, self.end, self.first = canonical, start, end, True

    def _id(self) -> str:
        if self.first:
            self.first = False
            return ' id="cited"'
        return ""

    def span(self, a: int, b: int) -> str:
        """HTML of ``canonical[a:b]``, escaped, its overlap with the cited range marked."""
        lo, hi = max(a, self.start), min(b, self.end)
        if lo >= hi:
            return html.escape(self.text[a:b])
        return (html.escape(self.text[a:lo]) + f'<mark class="cited"{self._id()}>' + html.escape(self.text[lo:hi])
                + "</mark>" + html.escape(self.text[hi:b]))

    def row_attrs(self, a: int, b: int) -> str:
        """Attributes of a table row at ``[a, b)``: ``class="cited"`` (and the id) when it overlaps the range."""
        if max(a, self.start) < min(b, self.end) or (self.start == self.end and a <= self.start < b):
            return f' class="cited"{self._id()}'
        return ""


def _block_spans(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Blocks of ``text[lo:hi]`` separated by blank lines, as ``(start, end)`` offsets."""
    out, pos = [], lo
    for m in re.finditer(r"\n[ \t]*\n", text[lo:hi]):
        out.append((pos, lo + m.start()))
        pos = lo + m.end()
    out.append((pos, hi))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _lines(text: str, a: int, b: int) -> list[tuple[int, int]]:
    out, pos = [], a
    for line in text[a:b].split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out


def _cells(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """Cell spans of one Markdown table row ``text[a:b]`` (outer pipes and padding excluded)."""
    line = text[a:b]
    cuts = [m.start() for m in _CELL_SPLIT.finditer(line)]
    inner = line.strip()
    bounds = ([-1] if not inner.startswith("|") else []) + cuts + ([len(line)] if not inner.endswith("|") else [])
    out = []
    for x, y in zip(bounds, bounds[1:]):
        s, e = x + 1, y
        while s < e and line[s] == " ":
            s += 1
        while e > s and line[e - 1] == " ":
            e -= 1
        out.append((a + s, a + e))
    return out


def _table_html(text: str, lines: list[tuple[int, int]], mark: _Marker, row_numbers: dict[int, int] | None) -> str:
    head, body = lines[0], lines[2:]
    num = row_numbers is not None

    def cells(a: int, b: int, tag: str) -> str:
        return "".join(f"<{tag}>{mark.span(s, e).replace(chr(92) + '|', '|')}</{tag}>" for s, e in _cells(text, a, b))

    first = f'<th class="rownum">{row_numbers.get(head[0], "")}</th>' if num else ""
    out = [f"<table><thead><tr{mark.row_attrs(*head)}>{first}{cells(*head, 'th')}</tr></thead><tbody>"]
    for a, b in body:
        n = f'<td class="rownum">{row_numbers.get(a, "")}</td>' if num else ""
        out.append(f"<tr{mark.row_attrs(a, b)}>{n}{cells(a, b, 'td')}</tr>")
    return "".join(out) + "</tbody></table>"


def _is_table(text: str, lines: list[tuple[int, int]]) -> bool:
    return (len(lines) >= 2 and text[lines[0][0]:lines[0][1]].lstrip().startswith("|")
            and bool(_SEPARATOR.match(text[lines[1][0]:lines[1][1]])))


def render_blocks(canonical: str, start: int, end: int, *, lo: int = 0, hi: int | None = None,
                  row_numbers: dict[int, int] | None = None, mark: _Marker | None = None) -> str:
    """HTML of the blocks of ``canonical[lo:hi]`` with ``[start, end)`` marked (see the module docstring).

    Heading lines (``## Title``) become ``<h2>``; Markdown tables become
    ``<table>`` (a row touching the range gets ``class="cited"``); other
    blocks are paragraphs with their line breaks. Every character is
    escaped. ``row_numbers`` maps a table line's start offset to the sheet
    row number shown in a first column. Raises ``ValueError`` when the range
    is not inside the text.
    """
    hi = len(canonical) if hi is None else hi
    if not 0 <= start <= end <= len(canonical):
        raise ValueError(f"cited range {start}:{end} is outside the text (0:{len(canonical)})")
    mark = mark or _Marker(canonical, start, end)
    out = []
    for a, b in _block_spans(canonical, lo, hi):
        lines = _lines(canonical, a, b)
        head = _HEADING_LINE.match(canonical[a:b]) if len(lines) == 1 else None
        if head:
            level = len(head.group(1))
            out.append(f"<h{level}>{mark.span(a + level + 1, b)}</h{level}>")
        elif _is_table(canonical, lines):
            out.append(_table_html(canonical, lines, mark, row_numbers))
        else:
            out.append(f"<p>{mark.span(a, b)}</p>")
    return "".join(out)


def _around(canonical: str, start: int, end: int, context_chars: int) -> tuple[int, int]:
    """A window of whole blocks around ``[start, end)``, about ``context_chars`` either side."""
    lo = max(0, start - context_chars)
    hi = min(len(canonical), end + context_chars)
    if lo > 0:
        cut = canonical.find("\n\n", lo)
        lo = cut + 2 if 0 <= cut < start else lo
    if hi < len(canonical):
        cut = canonical.rfind("\n\n", end, hi)
        hi = cut if cut > end else hi
    return lo, hi


def document_html(canonical: str, start: int, end: int, *, context_chars: int = 30000) -> str:
    """The rendered view of a document around its cited range (:func:`render_blocks` in a window of whole
    blocks about ``context_chars`` either side, elisions shown)."""
    lo, hi = _around(canonical, start, end, context_chars)
    before = '<p class="elided">\u2026</p>' if lo > 0 else ""
    after = '<p class="elided">\u2026</p>' if hi < len(canonical) else ""
    return f'<div class="rag-view">{before}{render_blocks(canonical, start, end, lo=lo, hi=hi)}{after}</div>'


def slide_html(canonical: str, slide: Part, start: int, end: int, total: int) -> str:
    """One slide (a ``slide`` :class:`rag.types.Part`) as a 16:9 card, its speaker notes below, the cited
    range marked; ``total`` the deck's slide count (shown as ``Slide N of M``)."""
    mark = _Marker(canonical, start, end)
    notes_at = canonical.find("\n## Speaker notes", slide.start, slide.end)
    body_end = notes_at if notes_at >= 0 else slide.end
    body = render_blocks(canonical, start, end, lo=slide.start, hi=body_end, mark=mark)
    notes = ""
    if notes_at >= 0:
        notes = f'<div class="rag-notes">{render_blocks(canonical, start, end, lo=notes_at + 1, hi=slide.end, mark=mark)}</div>'
    return (f'<div class="rag-view"><p class="elided">Slide {slide.number} of {total}</p>'
            f'<div class="rag-slide">{body}</div>{notes}</div>')


def sheet_html(canonical: str, rows: list[Part], start: int, end: int, *, context_rows: int = 15) -> str:
    """The cited rows of one sheet with its header row, ``context_rows`` rows either side, A1 row numbers.

    ``rows`` are the ``rows`` :class:`rag.types.Part` s of the sheet holding
    ``start`` (header first). The column letters of the sheet's used range
    head the table, as in a spreadsheet.
    """
    if not rows:
        return document_html(canonical, start, end)
    hit = [i for i, r in enumerate(rows) if r.end > start and r.start < max(end, start + 1)] or [0]
    keep = [0] + list(range(max(1, hit[0] - context_rows), min(len(rows), hit[-1] + context_rows + 1)))
    mark = _Marker(canonical, start, end)
    first_col, _, last_col = (rows[0].anchor or "A:A").partition(":")
    letters = _column_letters(first_col, last_col or first_col)
    out = ['<div class="rag-view"><table><thead><tr><th class="rownum"></th>'
           + "".join(f'<th class="rownum" style="text-align:center">{c}</th>' for c in letters) + "</tr></thead><tbody>"]
    shown = 0
    for i in keep:
        r = rows[i]
        if i > 0 and i - 1 not in keep and shown:
            out.append(f'<tr><td class="rownum">\u22ee</td><td colspan="{len(letters)}"></td></tr>')
        tag = "th" if i == 0 else "td"
        cells = "".join(f"<{tag}>{mark.span(s, e).replace(chr(92) + '|', '|')}</{tag}>"
                        for s, e in _cells(canonical, r.start, r.end))
        attrs = mark.row_attrs(r.start, r.end) if i > 0 or start < rows[0].end else ""
        out.append(f'<tr{attrs}><td class="rownum">{r.number}</td>{cells}</tr>')
        shown += 1
    return "".join(out) + "</tbody></table></div>"


def _column_letters(first: str, last: str) -> list[str]:
    def num(col: str) -> int:
        n = 0
        for ch in col:
            n = n * 26 + ord(ch) - 64
        return n

    out = []
    for n in range(num(first), num(last) + 1):
        s, k = "", n
        while k:
            k, r = divmod(k - 1, 26)
            s = chr(65 + r) + s
        out.append(s)
    return out


def view_page(body_html: str, *, title: str = "") -> str:
    """A complete HTML page around a view (the styles of :func:`render_blocks`) that scrolls ``#cited`` into
    view on load; ``title`` is escaped. Meant for ``streamlit.components.v1.html`` (an iframe)."""
    return scrolling_document(_VIEW_STYLE + body_html, title=title)


def image_region_png(frame, box: Box | None, *, max_width: int = 1400) -> bytes:
    """PNG bytes of a Pillow image with ``box`` (pixels, ``(x0, y0, x1, y1)``) outlined and lightly filled,
    scaled down to ``max_width`` pixels wide at most."""
    from PIL import Image, ImageDraw

    img = frame.convert("RGBA")
    if box is not None:
        overlay = Image.new("RGBA", img.size, (0, 0, 0, 0))
        draw = ImageDraw.Draw(overlay)
        pad = max(2, img.width // 300)
        rect = (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)
        draw.rectangle(rect, fill=(255, 224, 102, 90), outline=(240, 140, 0, 255), width=max(3, img.width // 250))
        img = Image.alpha_composite(img, overlay)
    if img.width > max_width:
        img = img.resize((max_width, round(img.height * max_width / img.width)))
    buf = io.BytesIO()
    img.convert("RGB").save(buf, "PNG")
    return buf.getvalue()


def parts_of_kind(parts: tuple[Part, ...], kind: LocatorKind, start: int) -> list[Part]:
    """The parts of ``kind`` in the same scope (sheet) as the part holding (or following) offset ``start``."""
    same = [p for p in parts if p.kind == kind]
    here = next((p for p in same if p.end > start), same[-1] if same else None)
    if here is None:
        return []
    return [p for p in same if p.scope == here.scope and p.scope_number == here.scope_number]
