"""Images of text (PNG, JPEG, TIFF) -> canonical text + region locators by OCR (design stage 1; issue 17).

The image is decoded with Pillow (EXIF orientation applied, so boxes match
the picture as a person sees it; every frame of a multi-page TIFF), then read
by the project's OCR engine, :func:`rag.ingest.ocr.ocr_image` (issue 13:
RapidOCR, models inside the wheel; lines with pixel boxes in reading order).

Layout: OCR lines one per canonical line; a vertical gap over
:data:`PARAGRAPH_GAP` line heights starts a new paragraph (blank line), so the
chunker keeps paragraphs whole. A multi-page TIFF gets a ``Page N`` heading
per frame. Every line is a :class:`rag.types.Part` of kind ``region``:
``number`` the 1-based line in its frame, ``box`` its pixel box ``(x0, y0,
x1, y1)`` in the (orientation-corrected) frame, ``scope_number`` the 1-based
frame. A chunk's locator is then its lines and the union of their boxes,
the W3C media fragment ``#xywh=x,y,w,h``.

Errors: an image Pillow cannot decode -> ``damaged image (...)``; a frame
over ``max_image_megapixels``, pixels x frames over
``max_image_total_megapixels``, more frames than ``max_pages``, more frames
to read than ``max_ocr_pages`` or OCR past ``max_ocr_seconds`` ->
:class:`rag.errors.LimitExceeded` naming the setting (issue 26: checked from
the frame headers before anything is decoded, then one frame in memory at a
time); nothing read -> ``no text found by OCR``; the engine missing -> the
pip command.
"""

from __future__ import annotations

import io
import statistics
import warnings
from collections.abc import Iterator

from rag.errors import ExtractionError, LimitExceeded
from rag.ingest import ocr as ocr_engine
from rag.ingest.canonical import CanonicalBuilder, Unit, clean_inline, file_stem
from rag.ingest.limits import Limits, OcrBudget, check_pixels, resolve
from rag.types import Document, LocatorKind, MediaType

#: A vertical gap between two OCR lines larger than this many median line heights starts a new paragraph.
PARAGRAPH_GAP = 0.9

def _frame_sizes(img, name: str, limits: Limits) -> list[tuple[int, int]]:
    """``(width, height)`` of every frame from the frame headers alone (nothing decoded), at most
    ``max_pages`` + 1 frames walked. Raises :class:`LimitExceeded` for too many frames, a frame over
    ``max_image_megapixels`` or pixels x frames over ``max_image_total_megapixels``."""
    sizes = []
    for i in range(limits.max_pages + 1):
        try:
            img.seek(i)
        except EOFError:
            break
        if i == limits.max_pages:
            raise LimitExceeded(name, "max_pages", "the image has more frames than", limits.max_pages,
                                limits.max_pages, "frames", over=False)
        check_pixels(name, f"frame {i + 1}" if i else "the image", img.width, img.height, limits)
        sizes.append((img.width, img.height))
    total = sum(w * h for w, h in sizes)
    if total > limits.max_image_total_megapixels * 1_000_000:
        raise LimitExceeded(name, "max_image_total_megapixels", f"{len(sizes)} frames hold", round(total / 1e6),
                            limits.max_image_total_megapixels, "megapixels")
    img.seek(0)
    return sizes


def iter_frames(data: bytes, name: str, limits: Limits | None = None) -> Iterator:
    """Decode ``data`` frame by frame into RGB Pillow images, EXIF orientation applied; one frame in memory at a time.

    Every limit is checked from the headers before the first frame is decoded (:func:`_frame_sizes`), with
    Pillow's own bomb limit (``Image.MAX_IMAGE_PIXELS``) set to ``max_image_megapixels``. Raises
    ``ExtractionError`` naming the file when Pillow cannot decode it, :class:`LimitExceeded` over a limit.
    """
    from PIL import Image, ImageOps  # Pillow: imported here so `--help` stays fast

    limits = resolve(limits)
    Image.MAX_IMAGE_PIXELS = limits.max_image_pixels  # Pillow warns past it and refuses past twice it
    try:
        with warnings.catch_warnings():  # the sizes are checked below, against the same figure
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
        sizes = _frame_sizes(img, name, limits)
        for i in range(len(sizes)):
            img.seek(i)
            yield ImageOps.exif_transpose(img.convert("RGB") if img.mode != "RGB" else img.copy())
    except Exception as e:  # noqa: BLE001 - Pillow raises many types for truncated or corrupt files
        raise _refusal(e, name, limits) from e


def _refusal(e: Exception, name: str, limits: Limits) -> ExtractionError:
    """What a Pillow failure means to the user (an ``ExtractionError`` passes through)."""
    from PIL import Image, UnidentifiedImageError

    if isinstance(e, ExtractionError):
        return e
    if isinstance(e, UnidentifiedImageError):
        return ExtractionError(name, "damaged image (the picture data cannot be decoded)")
    if isinstance(e, Image.DecompressionBombError):
        return LimitExceeded(name, "max_image_megapixels", f"Pillow refused a frame as a decompression bomb ({e});",
                             limits.max_image_megapixels, limits.max_image_megapixels, "megapixels", over=False)
    return ExtractionError(name, f"damaged image ({str(e)[:120] or type(e).__name__})")


def open_frames(data: bytes, name: str, limits: Limits | None = None) -> list:
    """Every frame of ``data`` decoded (:func:`iter_frames`), for showing an image already indexed."""
    return list(iter_frames(data, name, limits))


def frame_count(data: bytes, name: str, limits: Limits | None = None) -> int:
    """How many frames ``data`` holds, from the headers (limits checked, nothing decoded)."""
    from PIL import Image

    limits = resolve(limits)
    Image.MAX_IMAGE_PIXELS = limits.max_image_pixels
    try:
        with warnings.catch_warnings():  # the sizes are checked here, against the same figure
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
        with img:
            return len(_frame_sizes(img, name, limits))
    except Exception as e:  # noqa: BLE001 - Pillow raises many types for truncated or corrupt files
        raise _refusal(e, name, limits) from e


def _read(frame, name: str):
    import numpy as np


    try:
        return ocr_engine.ocr_image(np.asarray(frame))
    except ImportError as e:
        raise ExtractionError(name, f"cannot read images without the OCR engine ({e})") from e
    except ValueError as e:
        raise ExtractionError(name, f"damaged image ({e})") from e


def write_lines(b: CanonicalBuilder, lines, frame: int) -> int:
    """Write OCR lines (``text``, ``x0``..``y1``) as paragraphs of lines; returns how many lines were written."""
    lines = [ln for ln in lines if clean_inline(ln.text, keep_newlines=False)]
    if not lines:
        return 0
    height = statistics.median(ln.y1 - ln.y0 for ln in lines) or 1.0
    paragraph: list[tuple[str, Unit]] = []
    prev = None
    for number, ln in enumerate(lines, start=1):
        if prev is not None and ln.y0 - prev.y1 > PARAGRAPH_GAP * height and paragraph:
            b.lines(paragraph)
            paragraph = []
        box = (int(ln.x0), int(ln.y0), int(round(ln.x1)), int(round(ln.y1)))
        paragraph.append((clean_inline(ln.text, keep_newlines=False),
                          Unit(LocatorKind.REGION, number, scope_number=frame, box=box)))
        prev = ln
    b.lines(paragraph)
    return len(lines)


def extract_image(data: bytes, name: str, media_type: str, *, limits: Limits | None = None) -> Document:
    """PNG/JPEG/TIFF bytes -> :class:`rag.types.Document` read by OCR (see the module docstring).

    ``media_type`` the sniffed type (``image/png`` ...). Frames are counted and sized from their headers,
    then decoded and read one at a time; OCR pages and seconds are bounded (issue 26, :mod:`rag.ingest.limits`).
    Raises ``ExtractionError(name, reason)``; :class:`rag.errors.LimitExceeded` over a limit.
    """
    limits = resolve(limits)
    budget = OcrBudget(name, limits)
    frames = frame_count(data, name, limits)
    budget.plan(frames, "frames")
    b = CanonicalBuilder()
    read = 0
    engine = ocr_engine.ENGINE
    for number, frame in enumerate(iter_frames(data, name, limits), start=1):
        result = _read(frame, name)
        del frame
        budget.spend(result.ms)
        engine = result.engine
        if frames > 1:
            b.heading(1, f"Page {number}")
        read += write_lines(b, result.lines, number)
    if not read:
        raise ExtractionError(name, "no text found by OCR (a photo without writing?)")
    pages = f" in {frames} pages" if frames > 1 else ""
    warnings = (f"read by OCR ({engine}): {read} lines{pages}, {budget.ms / 1000:.1f} s",)
    return b.document(data, name, media_type, title=file_stem(name), extractor=f"image+{engine}",
                      warnings=warnings)


#: The image media types this reader takes.
IMAGE_TYPES = (MediaType.PNG.value, MediaType.JPEG.value, MediaType.TIFF.value)
