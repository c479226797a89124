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

Errors: an image Pillow cannot decode -> ``damaged image (...)``; an image
over :data:`MAX_PIXELS` -> ``image too large``; nothing read -> ``no text
found by OCR``; the engine missing -> the pip command.
"""

from __future__ import annotations

import io
import statistics

from rag.errors import ExtractionError
from rag.ingest import ocr as ocr_engine
from rag.ingest.canonical import CanonicalBuilder, Unit, clean_inline, file_stem
from rag.types import Document, LocatorKind, MediaType

#: A vertical gap between two OCR lines larger than this many median line heights starts a new paragraph.
PARAGRAPH_GAP = 0.9

#: Largest image read (pixels per frame): 50 megapixels, a 8k x 6k photo. Bigger ones are refused.
MAX_PIXELS = 50_000_000

#: Frames read from a multi-page TIFF.
MAX_FRAMES = 200


def open_frames(data: bytes, name: str) -> list:
    """Decode ``data`` into RGB Pillow images, one per frame, EXIF orientation applied.

    Raises ``ExtractionError`` naming the file when Pillow cannot decode it or a frame is over :data:`MAX_PIXELS`.
    """
    from PIL import Image, ImageOps, UnidentifiedImageError  # Pillow: imported here so `--help` stays fast

    try:
        img = Image.open(io.BytesIO(data))
        frames = []
        for i in range(min(getattr(img, "n_frames", 1), MAX_FRAMES)):
            img.seek(i)
            if img.width * img.height > MAX_PIXELS:
                raise ExtractionError(name, f"image too large ({img.width} x {img.height} pixels; at most "
                                            f"{MAX_PIXELS // 1_000_000} megapixels are read)")
            frames.append(ImageOps.exif_transpose(img.convert("RGB") if img.mode != "RGB" else img.copy()))
    except ExtractionError:
        raise
    except UnidentifiedImageError as e:
        raise ExtractionError(name, "damaged image (the picture data cannot be decoded)") from e
    except Image.DecompressionBombError as e:
        raise ExtractionError(name, f"image too large ({e})") from e
    except Exception as e:  # noqa: BLE001 - Pillow raises many types for truncated or corrupt files
        raise ExtractionError(name, f"damaged image ({str(e)[:120] or type(e).__name__})") from e
    return frames


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


def extract_image(data: bytes, name: str, media_type: str) -> Document:
    """PNG/JPEG/TIFF bytes -> :class:`rag.types.Document` read by OCR (see the module docstring).

    ``media_type`` the sniffed type (``image/png`` ...). Raises ``ExtractionError(name, reason)``.
    """
    frames = open_frames(data, name)
    b = CanonicalBuilder()
    read = 0
    ms = 0.0
    for number, frame in enumerate(frames, start=1):
        result = _read(frame, name)
        ms += result.ms
        if len(frames) > 1:
            b.heading(1, f"Page {number}")
        read += write_lines(b, result.lines, number)
    if not read:
        raise ExtractionError(name, "no text found by OCR (a photo without writing?)")
    pages = f" in {len(frames)} pages" if len(frames) > 1 else ""
    warnings = (f"read by OCR ({result.engine}): {read} lines{pages}, {ms / 1000:.1f} s",)
    return b.document(data, name, media_type, title=file_stem(name), extractor=f"image+{result.engine}",
                      warnings=warnings)


#: The image media types this reader takes.
IMAGE_TYPES = (MediaType.PNG.value, MediaType.JPEG.value, MediaType.TIFF.value)
