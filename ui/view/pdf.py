"""Showing a PDF citation at its place (design stage 9, locators; issue 17's viewer): pure helpers, no Streamlit.

* PDF: :func:`pdf_view` cuts the pages around the cited 1-based physical page
  out of the stored PDF and gives the quote's line boxes as annotations for
  the PDF.js component (``streamlit-pdf-viewer``, in :mod:`ui.viewer`);
  :func:`render_pdf_page` draws one page to PNG bytes with the quote
  highlighted; :func:`static_url` is the link to the stored original's served copy
  (:mod:`rag.served`: ``/app/static/<key>/<token>.pdf#page=N``, PDF Open Parameters, the secondary action).
* Text-based formats (Markdown, DOCX, slides, sheets, images) are shown by :mod:`ui.view.text`.

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

import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from rag.ingest import ocr as ocr_engine
from rag.served import SERVED_PATH

#: URL prefix of Streamlit's static file serving (``server.enableStaticServing = true``).
STATIC_URL = "/app/static"

#: Words per piece when aligning a quote to the page's words.
_PIECE_WORDS = 5

#: Pieces shorter than this (normalised characters) are merged with the next one: too ambiguous alone.
_MIN_PIECE_CHARS = 12

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
    """NFKC, case-folded, letters and digits only, without accents (hyphens, spaces, punctuation and accents dropped:
    a quote's "Mazi\u00e8res" meets the text layer's "Mazi`eres", a TeX font's spacing accent)."""
    bare = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return "".join(c for c in unicodedata.normalize("NFKC", bare).casefold() if c.isalnum())


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


def static_url(served_path: str, page: int | None = None) -> str:
    """``/app/static/<key>/<token>.pdf`` (a served copy's path, :meth:`rag.served.ServedCopies.publish`) plus
    ``#page=N`` (1-based physical page) when given. Raises ``ValueError`` for any other path (so a link can never
    point elsewhere in the static folder)."""
    if not SERVED_PATH.match(served_path or ""):
        raise ValueError(f"not a served copy's path (<key>/<token>.pdf): {served_path!r}")
    url = f"{STATIC_URL}/{served_path}"
    return f"{url}#page={page}" if page else url


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


def _rewritten(pdf: Path | bytes, first: int, last: int) -> bytes | None:
    """Pages ``first`` .. ``last`` (1-based) of a damaged ``pdf`` as a freshly written PDF; ``None`` if that
    fails too or loses pages."""
    try:
        with _open(pdf) as doc:
            data = doc.convert_to_pdf(first - 1, last - 1)
        with pymupdf.open(stream=data, filetype="pdf") as out:
            return data if out.page_count == last - first + 1 else None
    except (pymupdf.mupdf.FzErrorBase, RuntimeError, ValueError):
        return None


#: Points of margin kept either side of a page's text when the viewer's pages are cropped to it.
CROP_MARGIN = 14.0


def crop_to_text(doc: pymupdf.Document) -> list[float]:
    """Crop each page of ``doc`` to the width of its text (plus :data:`CROP_MARGIN`), so that the viewer, which
    fits a page to its width, shows the text larger (issue 42: at phone width a page opened at 51 % and the
    outlined quote could not be read). Returns each page's left shift in points (0 when left as it was: no text,
    a rotated page, or less than a tenth to gain). The height is kept: pages stay pages."""
    shifts = []
    for pg in doc:
        blocks = [b for b in pg.get_text("blocks") if b[4].strip()]
        box = pg.rect
        if not blocks or pg.rotation:
            shifts.append(0.0)
            continue
        x0 = max(box.x0, min(b[0] for b in blocks) - CROP_MARGIN)
        x1 = min(box.x1, max(b[2] for b in blocks) + CROP_MARGIN)
        if x1 - x0 > 0.9 * box.width or x1 <= x0:
            shifts.append(0.0)
            continue
        crop = pymupdf.Rect(x0, box.y0, x1, box.y1) + (pg.cropbox.x0, pg.cropbox.y0, pg.cropbox.x0, pg.cropbox.y0)
        try:
            pg.set_cropbox(crop & pg.mediabox)
        except ValueError:
            shifts.append(0.0)
            continue
        shifts.append(x0)
    return shifts


def pdf_view(pdf: Path | bytes, page: int, quote: str, *, radius: int = PDF_WINDOW) -> PdfView:
    """The pages around 1-based ``page`` (``radius`` either side) as a small PDF, with the quote's annotations.

    A slice keeps the viewer quick on a long PDF (the component ships the
    whole file to the browser); the original stays one click away
    (:func:`static_url`). A damaged PDF that MuPDF repaired on opening may refuse to be sliced
    (``c09_truncated.pdf``: "not a dict"); its pages are then rewritten as a fresh PDF
    (``convert_to_pdf``: same geometry, text kept), else sent whole as stored. Raises ``ValueError``
    naming the page when it is outside the document.
    """
    with _open(pdf) as doc:
        if not 1 <= page <= doc.page_count:
            raise ValueError(f"page {page} is outside 1..{doc.page_count}")
        first, last = max(1, page - radius), min(doc.page_count, page + radius)
        rects, coverage = locate_quote(doc[page - 1], quote) if quote.strip() else ([], 0.0)
        shift = 0.0
        try:
            doc.select(list(range(first - 1, last)))
            shift = crop_to_text(doc)[page - first]
            data = doc.tobytes(garbage=1, deflate=True)
        except pymupdf.mupdf.FzErrorBase:
            data = _rewritten(pdf, first, last)
            if data is None:
                first, last = 1, doc.page_count
                data = pdf if isinstance(pdf, bytes) else Path(pdf).read_bytes()
    inside = page - first + 1
    notes = [{"page": inside, "x": r.x0 - 1 - shift, "y": r.y0 - 1, "width": r.width + 2, "height": r.height + 2,
              "color": ANNOTATION_COLOR, "border": "solid", "id": f"cited-{i}"} for i, r in enumerate(rects)]
    return PdfView(data, first, last - first + 1, inside, notes, coverage)


# --------------------------------------------------------------------------- rendered text (issue 17)
