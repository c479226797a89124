"""One PDF page as read (stage 1, PDF branch): :func:`read_page` turns a PyMuPDF page into :class:`PageRead`.

Lines come from ``get_text("dict")`` (MuPDF's ligature expansion on, U+FB00..U+FB06 expanded again by hand,
soft hyphens removed, spaces the page shows no gap for removed, :mod:`rag.ingest.pdf.spaces`; text no reader sees
removed first: :mod:`rag.ingest.pdf.hidden`, and the second drawing of text drawn twice, a shadow or a printed
bold: :mod:`rag.ingest.pdf.overprint`), form widgets as
``label: value`` and FreeText annotations (:mod:`rag.ingest.pdf.forms`), ruled tables as Markdown rows
(:mod:`rag.ingest.pdf.tables`); the text layer is judged (:mod:`rag.ingest.pdf.quality`: blank, scanned, unreadable)
and read by OCR where it has no usable text (:mod:`rag.ingest.ocr`); lines are put in reading order
(:mod:`rag.ingest.pdf.layout`). Split out of :mod:`rag.ingest.pdf` (issue 28: no module over 500 lines).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rag.ingest import ocr as ocr_engine
from rag.ingest.pdf.forms import annotation_lines, form_lines, note_count
from rag.ingest.pdf.hidden import remove_hidden
from rag.ingest.pdf.layout import Line, joined_vertical_rows, merge_fragments, order_blocks, page_lines
from rag.ingest.pdf.overprint import remove_overprints
from rag.ingest.pdf.quality import classify_page, garbled_chars, ocr_reads_worse
from rag.ingest.pdf.spaces import drop_phantom_spaces
from rag.ingest.pdf.tables import table_lines


@dataclass
class PageRead:
    """One page as read: ``lines`` in reading order (all kinds); ``reference`` PyMuPDF's plain text
    (the audit's reference); ``kind`` the text-layer class (:func:`rag.ingest.pdf.quality.classify_page`);
    ``order`` the reading order that won; ``ocr_ms`` OCR time (0 when not read by OCR); ``tables``
    tables found; ``dropped`` texts removed on purpose (hidden text, :mod:`rag.ingest.pdf.hidden`; running
    headers, filled in later); ``hidden`` characters of hidden text removed; ``ocr_layer`` characters of
    a searchable scan's invisible OCR layer kept; ``too_large`` why a page that needed OCR is too large to
    render for it (:func:`ocr_dpi`; empty otherwise); ``kept_layer`` an unreadable-looking layer kept because OCR read its
    script worse (:func:`rag.ingest.pdf.quality.ocr_reads_worse`); ``garbled`` U+FFFD / private-use
    characters left in the page's text (unmapped glyphs)."""

    lines: list[Line]
    reference: str
    kind: str
    order: str = "sort"
    ocr_ms: float = 0.0
    ocr: bool = False
    tables: int = 0
    dropped: list[str] = field(default_factory=list)
    hidden: int = 0
    ocr_layer: int = 0
    too_large: str = ""
    kept_layer: bool = False
    garbled: int = 0
    hidden_texts: list[str] = field(default_factory=list)
    notes: int = 0  # sticky notes and attachments with text (:func:`rag.ingest.pdf.forms.note_count`)
    width: float = 0.0
    height: float = 0.0


#: Below this resolution (dots per inch) a page rendered for OCR is too coarse to read (12 pt text = 12 pixels).
MIN_OCR_DPI = 72


def ocr_dpi(page, max_pixels: int | None) -> int | None:
    """The resolution to render ``page`` at for OCR: :data:`rag.ingest.ocr.DEFAULT_DPI`, lowered so the render
    stays within ``max_pixels``; ``None`` when even :data:`MIN_OCR_DPI` would exceed it (issue 26)."""
    dpi = ocr_engine.DEFAULT_DPI
    if not max_pixels:
        return dpi
    area_in2 = max(page.rect.width * page.rect.height, 1.0) / 72.0 ** 2
    fit = int((max_pixels / area_in2) ** 0.5)
    return min(dpi, fit) if fit >= MIN_OCR_DPI else None


def _too_large(page) -> str:
    w, h = page.rect.width, page.rect.height
    mp = w * h / 72.0 ** 2 * MIN_OCR_DPI ** 2 / 1e6
    return (f"is {w:,.0f} x {h:,.0f} pt ({w / 72 * 2.54:,.0f} x {h / 72 * 2.54:,.0f} cm), {mp:,.0f} megapixels even at "
            f"{MIN_OCR_DPI} dpi: too large to read by OCR")


def _visible_text(page_dict: dict) -> str:
    """The text left in ``page_dict`` (after hidden spans were removed), one line per line."""
    return "\n".join("".join(s["text"] for s in ln["spans"])
                     for b in page_dict.get("blocks", ()) for ln in b.get("lines", ()))


def _ocr_lines(page, page_h: float, block_base: int, dpi: int = ocr_engine.DEFAULT_DPI) -> tuple[list[Line], float]:
    """OCR'd lines of ``page`` (kind ``ocr``), grouped into blocks by vertical gaps; and the OCR time (ms)."""

    res = ocr_engine.ocr_page(page, dpi=dpi)
    out: list[Line] = []
    block = block_base
    for ln in res.lines:
        h = max(ln.y1 - ln.y0, 1.0)
        if out:
            prev = out[-1]
            if not (0 <= ln.y0 - prev.y1 < 0.8 * h and min(ln.x1, prev.x1) > max(ln.x0, prev.x0)):
                block += 1
        out.append(Line(ln.text, ln.x0, ln.y0, ln.x1, ln.y1, round(h * 0.75 * 2) / 2, False, block, page_h, kind="ocr"))
    return out, res.ms


def _overlaps(a: Line, lines: list[Line]) -> bool:
    return any(min(a.x1, b.x1) > max(a.x0, b.x0) and min(a.y1, b.y1) > max(a.y0, b.y0) for b in lines)


def read_page(page, *, use_ocr: bool = True, find_tables: bool = True, max_pixels: int | None = None,
              on_ocr: Callable[[], None] | None = None) -> PageRead:
    """Read one PyMuPDF page (rules in the module doc). Never raises for a page MuPDF can parse.

    ``max_pixels`` bounds the render for OCR (:func:`ocr_dpi`); a page too large even at
    :data:`MIN_OCR_DPI` is not read by OCR and says why in ``too_large``. ``on_ocr`` is called just before OCR
    starts on the page (the reader's time budget then gives the page an OCR page's time)."""
    import pymupdf

    flags = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE
    tp = page.get_textpage(flags=flags)
    page_dict = tp.extractDICT()
    drop_phantom_spaces(tp, page_dict)
    reference = tp.extractText()
    hidden = remove_hidden(page, page_dict)
    twice = remove_overprints(page_dict, page.rect.y0, page.rect.y1)
    main, other, _width = page_lines(page, page_dict)
    page_h = page.rect.height
    n_blocks = len(page_dict["blocks"])
    main, added, dropped, tables = _forms_and_tables(page, main, page_h, n_blocks, find_tables)
    visible = _visible_text(page_dict) if hidden else reference
    kind = classify_page(page, visible)
    audited = "" if joined_vertical_rows(page_dict) else reference  # PyMuPDF's words there are single glyphs
    read = PageRead([], audited, kind, tables=tables, dropped=dropped + [h.text for h in hidden] + twice,
                    hidden=sum(len(h.text.strip()) for h in hidden), ocr_layer=hidden.ocr_layer,
                    garbled=garbled_chars(visible), hidden_texts=[h.text for h in hidden],
                    width=page.rect.width, height=page.rect.height, notes=note_count(page))
    dpi = ocr_dpi(page, max_pixels) if kind in ("scanned", "sparse-image", "unreadable") and use_ocr else None
    if dpi is None and kind in ("scanned", "sparse-image", "unreadable") and use_ocr:
        read.too_large = _too_large(page)
    if dpi is not None and ocr_engine.available() and _read_by_ocr(read, page, dpi, visible, main, added, other,
                                                                  n_blocks, on_ocr):
        return read
    if main or added:
        read.lines, read.order = order_blocks(merge_fragments(main + added))
    read.lines += other
    return read


def _forms_and_tables(page, main: list[Line], page_h: float, n_blocks: int,
                      find_tables: bool) -> tuple[list[Line], list[Line], list[str], int]:
    """On an upright page: form fields, annotations and tables read at their places. Returns the main lines
    left, the lines added, the texts of the lines a form field replaced, and how many table lines."""
    upright = page.rotation == 0 and all(not ln.sideways for ln in main)
    added: list[Line] = []
    dropped: list[str] = []
    if upright:
        before = main
        main, added = form_lines(page, main, page_h, n_blocks)
        if len(main) != len(before):
            kept = {id(ln) for ln in main}
            dropped = [ln.text for ln in before if id(ln) not in kept]
        added += annotation_lines(page, main + added, page_h, n_blocks + len(added) + 100)
    tables = 0
    if find_tables and upright and main:
        main, table_ls = table_lines(page, main, page_h, n_blocks + 1000)
        added += table_ls
        tables = len(table_ls)
    return main, added, dropped, tables


def _read_by_ocr(read: PageRead, page, dpi: int, visible: str, main: list[Line], added: list[Line],
                 other: list[Line], n_blocks: int, on_ocr: Callable[[], None] | None = None) -> bool:
    """Read the page by OCR at ``dpi`` into ``read``; ``False`` when the text layer stays (an unreadable
    page that OCR reads worse, or reads nothing)."""
    kind = read.kind
    if on_ocr is not None:
        on_ocr()
    ocr_ls, read.ocr_ms = _ocr_lines(page, page.rect.height, n_blocks + 2000, dpi)
    if kind == "unreadable" and ocr_reads_worse(visible, " ".join(ln.text for ln in ocr_ls)):
        read.kept_layer = True  # OCR read this script worse than the layer it would replace
        ocr_ls = []
    elif kind == "sparse-image":
        ocr_ls = [ln for ln in ocr_ls if not _overlaps(ln, main)]
        read.lines = order_blocks(merge_fragments(main + added))[0] + ocr_ls + other
        read.ocr = bool(ocr_ls)
        return True
    if ocr_ls or kind != "unreadable":
        read.lines, read.ocr = ocr_ls + added, bool(ocr_ls)
        return True
    return False
