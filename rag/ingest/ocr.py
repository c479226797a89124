"""Optical character recognition for pages and images with no usable text layer (issue 13, item 7).

One small public surface, shared by the PDF reader and the image readers (issue 17):

* :func:`ocr_image` - image bytes (PNG/JPEG/...), a PyMuPDF ``Pixmap`` or an ``HxWxC`` uint8 array
  -> :class:`OcrResult` (lines and words with boxes, plus the text in reading order);
* :func:`ocr_page` - a PyMuPDF page rendered at ``dpi`` and read, boxes in PDF points;
* :func:`available` / :data:`ENGINE` - whether the engine is installed, and its name.

Engine: RapidOCR (``rapidocr-onnxruntime``, PP-OCRv4 detection + recognition on ONNX Runtime). Its models
ship inside the wheel, so ``pip install -r requirements.txt`` is the whole setup (no system package, no
download at run time). Measured against Debian's ``tesseract-ocr`` (5, ``eng``) on the five scanned
inputs (``docs/extraction.md``): the same word recall on the English pages (1.00, 1.00, 1.00, and 0.95
against 0.94 on a key-figure table), 0.96-1.00 against 0.19 on a Chinese page, but 2-5 times slower on
2 busy cores; it wins because it installs from PyPI alone (tesseract is a system package, which
``make run`` must not need) and reads more than one script. The engine is loaded once per process, on
first use (about 0.6 s).

Boxes: ``(x0, y0, x1, y1)`` in the coordinates of the input scaled by ``scale`` (pixels when ``scale`` is
1; :func:`ocr_page` passes ``72 / dpi`` so boxes are PDF points, y growing downwards). RapidOCR gives one
box per text line; word boxes are cut from the line box in proportion to character positions (good enough
to highlight a quote, which is what they are for).

Errors: :class:`rag.errors.ExtractionError` is not raised here; a missing engine raises ``ImportError``
with the pip command, an unreadable image ``ValueError``. Callers decide what a failure means.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

#: The engine's name as reported in warnings, ``bench extract`` and the Documents page.
ENGINE = "rapidocr-onnxruntime"

#: Rendering resolution for PDF pages (dots per inch): 150 dpi read the scanned inputs as well as 200 dpi
#: (same word recall on all five, docs/extraction.md) in about 60 % of the time.
DEFAULT_DPI = 150

#: Recognised lines below this confidence (0..1) are dropped as noise.
MIN_CONFIDENCE = 0.5

_LOCK = threading.Lock()
_ENGINE = None

@dataclass(frozen=True)
class OcrWord:
    """One recognised word: ``text`` and its box ``(x0, y0, x1, y1)`` (see the module doc for units);
    ``line`` the 0-based index of its line in :attr:`OcrResult.lines`; ``confidence`` 0..1 (the line's)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    line: int
    confidence: float


@dataclass(frozen=True)
class OcrLine:
    """One recognised text line: ``text``, box ``(x0, y0, x1, y1)``, ``confidence`` 0..1."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    confidence: float


@dataclass(frozen=True)
class OcrResult:
    """What OCR read from one image: ``lines`` in reading order (top to bottom, left to right within a row),
    ``words`` with boxes, ``text`` the lines joined by ``\\n``, ``engine`` its name, ``ms`` wall time."""

    lines: tuple[OcrLine, ...]
    words: tuple[OcrWord, ...]
    engine: str
    ms: float

    @property
    def text(self) -> str:
        return "\n".join(ln.text for ln in self.lines)


def available() -> bool:
    """True when the OCR engine can be imported (``pip install rapidocr-onnxruntime``)."""
    try:
        import rapidocr_onnxruntime  # noqa: F401
    except Exception:  # noqa: BLE001 - a broken install (e.g. no libGL for OpenCV) counts as missing
        return False
    return True


def _engine():
    global _ENGINE
    with _LOCK:
        if _ENGINE is None:
            try:
                from rapidocr_onnxruntime import RapidOCR
            except ImportError as e:
                raise ImportError("OCR needs the RapidOCR engine: pip install rapidocr-onnxruntime==1.4.4") from e
            _ENGINE = RapidOCR()
        return _ENGINE


def _as_array(image):
    """``HxWx3`` uint8 RGB array from image bytes, a PyMuPDF ``Pixmap`` or an array."""
    import numpy as np

    if isinstance(image, (bytes, bytearray, memoryview)):
        import pymupdf

        try:
            image = pymupdf.Pixmap(bytes(image))
        except Exception as e:  # noqa: BLE001 - MuPDF raises several types for bad images
            raise ValueError(f"not a readable image ({e or type(e).__name__})") from e
    if hasattr(image, "samples") and hasattr(image, "n"):
        import pymupdf

        pix = image
        if pix.alpha or pix.n != 3:
            pix = pymupdf.Pixmap(pymupdf.csRGB, pix) if pix.n - pix.alpha != 3 else pix
            if pix.alpha:
                pix = pymupdf.Pixmap(pix, 0)
        arr = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.h, pix.w, pix.n)
        return np.ascontiguousarray(arr[:, :, :3])
    arr = np.asarray(image)
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    if arr.ndim != 3 or arr.dtype != np.uint8:
        raise ValueError(f"expected an HxWx3 uint8 image, got shape {arr.shape} dtype {arr.dtype}")
    return np.ascontiguousarray(arr[:, :, :3])


def _words_of(line: OcrLine, index: int) -> list[OcrWord]:
    """Word boxes cut from the line box in proportion to character positions."""
    text = line.text
    n = max(len(text), 1)
    width = line.x1 - line.x0
    out, pos = [], 0
    for word in text.split():
        at = text.find(word, pos)
        pos = at + len(word)
        out.append(OcrWord(word, line.x0 + width * at / n, line.y0, line.x0 + width * pos / n, line.y1,
                           index, line.confidence))
    return out


def reading_order(lines: list[OcrLine], depth: int = 0) -> list[OcrLine]:
    """Top to bottom; lines whose vertical centres lie within half a line height form one row, read left
    to right (the engine's own order is by box corner and can put a row's right half first). Text set in columns
    (:func:`gutter`) is read column by column, band by band between the lines that span the columns (a title over
    them): before, a scanned two-column page was read straight across, its columns' lines alternating (OCRmyPDF's
    linn.pdf and cardinal.pdf, a new user's walk, 2026-12-07)."""
    cut = gutter(lines) if depth < MAX_COLUMN_DEPTH else None
    if cut is not None:
        out: list[OcrLine] = []
        band: list[OcrLine] = []
        for ln in sorted(lines, key=lambda ln: ln.y0):
            if ln.x0 < cut[1] and ln.x1 > cut[0]:  # spans the gutter: ends the band above it
                out += _band(band, cut, depth) + [ln]
                band = []
            else:
                band.append(ln)
        return out + _band(band, cut, depth)
    lines = sorted(lines, key=lambda ln: (ln.y0 + ln.y1) / 2)
    rows: list[list[OcrLine]] = []
    for ln in lines:
        mid = (ln.y0 + ln.y1) / 2
        if rows:
            last = rows[-1][-1]
            if abs(mid - (last.y0 + last.y1) / 2) < 0.5 * min(ln.y1 - ln.y0, last.y1 - last.y0):
                rows[-1].append(ln)
                continue
        rows.append([ln])
    return [ln for row in rows for ln in sorted(row, key=lambda r: r.x0)]


def _band(band: list[OcrLine], cut: tuple[float, float], depth: int) -> list[OcrLine]:
    left = [ln for ln in band if ln.x1 <= cut[0]]
    right = [ln for ln in band if ln.x0 >= cut[1]]
    return reading_order(left, depth + 1) + reading_order(right, depth + 1)


#: Columns: a gutter is the vertical strip, at least :data:`GUTTER_MIN` of the text's width wide, in the middle
#: :data:`GUTTER_ZONE` of it, that the fewest lines cross (at most :data:`CROSSING` of them: a single-column passage
#: above the columns, a title), with at least :data:`COLUMN_LINES` lines on each side whose median width is
#: :data:`COLUMN_FILL` of the text's width or more (prose filling its column; a table's or a form's short values
#: beside their labels are no column). The lines crossing it separate the bands read column by column.
GUTTER_MIN = 0.015
GUTTER_ZONE = (0.2, 0.8)
CROSSING = 0.35
COLUMN_LINES = 5
COLUMN_FILL = 0.3
#: The text's width is looked at in this many strips.
GUTTER_BINS = 200
#: Columns inside columns are sought this deep (three columns are two cuts).
MAX_COLUMN_DEPTH = 3


def gutter(lines: list[OcrLine]) -> tuple[float, float] | None:
    """The ``(x0, x1)`` of the gutter between two columns of text in ``lines`` (rules above), else ``None``.
    Lines x :data:`GUTTER_BINS` steps."""
    if len(lines) < 2 * COLUMN_LINES:
        return None
    lo, hi = min(ln.x0 for ln in lines), max(ln.x1 for ln in lines)
    width = hi - lo
    if width <= 0:
        return None
    step = width / GUTTER_BINS
    count = [0] * GUTTER_BINS
    for ln in lines:
        for b in range(max(0, int((ln.x0 - lo) / step)), min(GUTTER_BINS, int((ln.x1 - lo) / step) + 1)):
            count[b] += 1
    zone = range(int(GUTTER_ZONE[0] * GUTTER_BINS), int(GUTTER_ZONE[1] * GUTTER_BINS))
    fewest = min(count[b] for b in zone)
    if fewest > CROSSING * len(lines):
        return None
    best, run = None, None
    for b in zone:
        if count[b] == fewest:
            run = (run[0], b) if run is not None else (b, b)
            if best is None or run[1] - run[0] > best[1] - best[0]:
                best = run
        else:
            run = None
    if best is None or (best[1] - best[0] + 1) < GUTTER_MIN * GUTTER_BINS:
        return None
    cut = (lo + best[0] * step, lo + (best[1] + 1) * step)
    left = sorted(ln.x1 - ln.x0 for ln in lines if ln.x1 <= cut[0])
    right = sorted(ln.x1 - ln.x0 for ln in lines if ln.x0 >= cut[1])
    if min(len(left), len(right)) < COLUMN_LINES:
        return None
    if min(left[len(left) // 2], right[len(right) // 2]) < COLUMN_FILL * width:
        return None
    if _rows_aligned([ln for ln in lines if ln.x1 <= cut[0]], [ln for ln in lines if ln.x0 >= cut[1]]):
        return None
    return cut


#: A table without rules: both sides break (a gap of over a line height) at the same heights, for this share of the
#: side with fewer breaks, and at least :data:`ROW_BREAKS` times. Columns of prose break at their own paragraphs.
ROWS_ALIGNED = 0.7
ROW_BREAKS = 3


def _breaks(side: list[OcrLine]) -> list[tuple[float, float]]:
    """``(top, height)`` of the lines of one side that start a row or paragraph: after a gap of over a line's height."""
    side = sorted(side, key=lambda ln: ln.y0)
    out = []
    for prev, ln in zip([None, *side], side):
        h = max(ln.y1 - ln.y0, 1.0)
        if prev is None or ln.y0 - prev.y1 > h:
            out.append((ln.y0, h))
    return out


def _rows_aligned(left: list[OcrLine], right: list[OcrLine]) -> bool:
    """Whether two sides are the cells of a table's rows, not two columns (a question-and-answer table read as all
    questions, then all answers: a review, 2026-12-07)."""
    a, b = _breaks(left), _breaks(right)
    few, many = sorted((a, b), key=len)
    if len(few) < ROW_BREAKS:
        return False
    matched = sum(any(abs(y - z) <= 0.5 * h for z, _ in many) for y, h in few)
    return matched >= ROWS_ALIGNED * len(few)


def ocr_image(image, *, scale: float = 1.0, min_confidence: float = MIN_CONFIDENCE) -> OcrResult:
    """Read ``image`` (encoded bytes, a PyMuPDF ``Pixmap`` or an ``HxWx3`` uint8 array).

    Boxes are multiplied by ``scale``. Lines under ``min_confidence`` (0..1) are dropped. Returns an
    empty result for an image with no text. Raises ``ImportError`` when the engine is not installed and
    ``ValueError`` for an unreadable image.
    """
    arr = _as_array(image)
    engine = _engine()
    t0 = time.perf_counter()
    raw, _ = engine(arr)
    ms = (time.perf_counter() - t0) * 1000.0
    lines = []
    for box, text, conf in raw or ():
        text = " ".join(str(text).split())
        if not text or float(conf) < min_confidence:
            continue
        xs = [float(p[0]) * scale for p in box]
        ys = [float(p[1]) * scale for p in box]
        lines.append(OcrLine(text, min(xs), min(ys), max(xs), max(ys), float(conf)))
    lines = reading_order(lines)
    words = [w for i, ln in enumerate(lines) for w in _words_of(ln, i)]
    return OcrResult(tuple(lines), tuple(words), ENGINE, ms)


def ocr_page(page, *, dpi: int = DEFAULT_DPI) -> OcrResult:
    """Render PyMuPDF ``page`` at ``dpi`` and read it; boxes in PDF points (page coordinates, y down).

    The page's rotation is honoured by the rendering, and the boxes are mapped back through the page's
    derotation matrix, so they match ``page.get_text("words")`` coordinates.
    """
    import pymupdf

    pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csRGB, alpha=False)
    res = ocr_image(pix, scale=72.0 / dpi)
    if not page.rotation:
        return res
    m = page.derotation_matrix

    def mapped(x0, y0, x1, y1):
        r = pymupdf.Rect(x0, y0, x1, y1) * m
        return r.x0, r.y0, r.x1, r.y1

    lines = tuple(OcrLine(ln.text, *mapped(ln.x0, ln.y0, ln.x1, ln.y1), ln.confidence) for ln in res.lines)
    words = tuple(OcrWord(w.text, *mapped(w.x0, w.y0, w.x1, w.y1), w.line, w.confidence) for w in res.words)
    return OcrResult(lines, words, res.engine, res.ms)
