"""Text a PDF draws but no reader sees (issue 14, item 5: document text is data, hidden text never reaches
the prompt).

A span of a page's ``get_text("dict")`` is hidden when

* it is drawn fully transparent (``alpha`` 0), or
* its font is under :data:`MIN_VISIBLE_PT` points (1-pt text a reader cannot make out), or
* it is white (every channel >= :data:`WHITE`) and the page under it is white too: the page is rendered
  once at :data:`RENDER_DPI` (only when a white span exists) and the span's box must be at least
  :data:`BLANK_SHARE` near-white pixels; white text on a dark slide background stays.

Text drawn in render mode 3 (invisible: the text layer an OCR program lays over a scan) is not hidden here:
it is the only text such a page has. Hidden spans are removed from the page dictionary before any line is
built, and their text is handed to the coverage audit as removed on purpose
(:mod:`rag.ingest.audit`), so the audit does not count them as lost.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Spans under this font size (points) are hidden.
MIN_VISIBLE_PT = 2.0
#: A colour channel at or above this (0..255) counts as white.
WHITE = 242
#: Resolution of the render that tells white-on-white from white-on-dark, dots per inch.
RENDER_DPI = 36
#: Share of the span box's pixels that must be near-white for white text to count as hidden.
BLANK_SHARE = 0.9


@dataclass(frozen=True)
class HiddenSpan:
    """One removed span: its ``text``, ``bbox`` (points, page space) and ``why`` (``transparent``, ``tiny``
    or ``white on white``)."""

    text: str
    bbox: tuple[float, float, float, float]
    why: str


def _is_white(color: int) -> bool:
    return all(((color >> s) & 0xFF) >= WHITE for s in (16, 8, 0))


def _blank_under(pix, bbox, scale: float) -> bool:
    """True when the rendered page is near-white over ``bbox`` (points) in at least :data:`BLANK_SHARE`."""
    x0, y0, x1, y1 = (int(v * scale) for v in bbox)
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(max(x1, x0 + 1), pix.width), min(max(y1, y0 + 1), pix.height)
    if x0 >= pix.width or y0 >= pix.height:
        return True  # off the page: nobody sees it
    img = np.frombuffer(pix.samples, dtype=np.uint8).reshape(pix.height, pix.width, pix.n)[y0:y1, x0:x1, :3]
    return bool((img.min(axis=2) >= WHITE).mean() >= BLANK_SHARE)


def remove_hidden(page, page_dict: dict) -> list[HiddenSpan]:
    """Remove hidden spans (rules in the module doc) from ``page_dict`` (PyMuPDF's ``get_text("dict")`` of
    ``page``) in place; return what was removed, in page order. Lines left without a span are removed too.
    Never raises for a page MuPDF can parse (a page that cannot be rendered keeps its white text)."""
    found: list[tuple[dict, dict, str]] = []
    white = []
    for block in page_dict.get("blocks", ()):
        for line in block.get("lines", ()):
            for span in line.get("spans", ()):
                if not span.get("text", "").strip():
                    continue
                if span.get("alpha", 255) == 0:
                    found.append((line, span, "transparent"))
                elif span.get("size", 10.0) < MIN_VISIBLE_PT:
                    found.append((line, span, "tiny"))
                elif _is_white(int(span.get("color", 0))):
                    white.append((line, span))
    if white:
        try:
            import pymupdf

            scale = RENDER_DPI / 72.0
            pix = page.get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
            found += [(line, span, "white on white") for line, span in white if _blank_under(pix, span["bbox"], scale)]
        except Exception:  # noqa: BLE001 - a page MuPDF cannot render keeps its white text
            pass
    if not found:
        return []
    gone = {id(span) for _, span, _ in found}
    for block in page_dict.get("blocks", ()):
        if "lines" not in block:
            continue
        for line in block["lines"]:
            line["spans"] = [s for s in line["spans"] if id(s) not in gone]
        block["lines"] = [ln for ln in block["lines"] if ln["spans"]]
    return [HiddenSpan(span["text"], tuple(span["bbox"]), why) for _, span, why in found]
