"""PDF branch of stage 1: PDF bytes -> canonical text + page map + headings, through PyMuPDF.

The document (:func:`extract_pdf`) is read page by page (:mod:`rag.ingest.pdf.pdf_page`: hidden text removed,
forms, annotations, tables, OCR of pages without a usable text layer, reading order), then

* running headers and footers are dropped and the audit knows it (:mod:`rag.ingest.pdf.furniture`);
* lines become paragraphs and pages one canonical text (:mod:`rag.ingest.pdf.pdf_text`);
* sections come from the outline or from font sizes, and the title from the metadata, the outline or
  page 1 (:mod:`rag.ingest.pdf.pdf_title`);
* the audit (:mod:`rag.ingest.pdf.audit`): the share of PyMuPDF's own words of each page kept in the
  canonical text; pages under 99 % are named in a warning.

Failures raise :class:`rag.errors.ExtractionError` naming the file: cannot be opened (damaged),
password-protected (user password), zero pages, no text at all (a scan without OCR, or OCR found
nothing), nothing extractable from a repaired file. Pages are 1-based physical page numbers everywhere.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable

from rag.errors import ExtractionError, LimitExceeded
from rag.ingest import EXTRACTOR_VERSION
from rag.ingest import ocr as ocr_engine
from rag.ingest.limits import Limits, OcrBudget, resolve
from rag.ingest.pdf import audit as audit_mod
from rag.ingest.pdf.furniture import drop_overlay_steps, drop_running, is_slide_deck, title_slide
from rag.ingest.pdf.hyphen import Lexicon
from rag.ingest.pdf.pdf_page import PageRead, read_page
from rag.ingest.pdf.pdf_text import assemble, body_size, bold_is_rare, join_across_pages, page_paragraphs
from rag.ingest.pdf.pdf_title import document_title, find_headings
from rag.ingest.pdf.quality import classify_page
from rag.types import Document, MediaType

#: ``progress(stage, done, total)``: ``("extract", pages read, pages)`` after every page (so a long document
#: moves the bar page by page, issue 28), and ``("ocr", pages done, pages to read)`` for pages read by OCR.
Progress = Callable[[str, int, int], None]


# --------------------------------------------------------------------------- opening


#: The paged formats PyMuPDF opens besides PDF (issue 28, item 4), by media type: ``(filetype, label)``.
#: Each is read page by page like a PDF (its pages laid out by MuPDF for FB2 and MOBI), with page locators.
PAGED = {
    MediaType.XPS.value: ("xps", "XPS"),
    MediaType.FB2.value: ("fb2", "FB2 e-book"),
    MediaType.MOBI.value: ("mobi", "MOBI e-book"),
    MediaType.CBZ.value: ("cbz", "CBZ comic book"),
}


def open_pdf(data: bytes, name: str, filetype: str = "pdf", label: str = "PDF"):
    """Open ``data`` with PyMuPDF; returns ``(document, warnings)``.

    Raises ``ExtractionError`` for a file MuPDF cannot open, a user password,
    or zero pages. An owner-only password (empty user password) opens.
    """
    import pymupdf

    try:
        doc = pymupdf.open(stream=data, filetype=filetype)
    except Exception as e:  # noqa: BLE001 - MuPDF raises several types for damaged files
        raise ExtractionError(name, f"damaged {label}: cannot be opened ({e or type(e).__name__})") from e
    if doc.needs_pass and not doc.authenticate(""):
        raise ExtractionError(name, "password-protected (a user password is set)")
    warnings = []
    if doc.is_repaired:
        warnings.append(f"damaged {label}: MuPDF repaired it; some text may be missing")
    try:  # MuPDF parses some formats (FB2, XPS) only when asked for pages: b"<FictionBook" raised here
        pages = doc.page_count
    except RuntimeError as e:
        raise ExtractionError(name, f"damaged {label}: cannot be read ({e or type(e).__name__})") from e
    if pages == 0:
        raise ExtractionError(name, f"{label} has zero pages")
    return doc, warnings





def extract_pdf(data: bytes, name: str, *, progress: Progress | None = None, use_ocr: bool = True,
                limits: Limits | None = None, media_type: str = MediaType.PDF) -> Document:
    """PDF bytes -> :class:`rag.types.Document` (design stage 1, PDF branch; rules in the module doc).

    ``progress(stage, done, total)``: ``("extract", page, pages)`` after every page, ``("ocr", done, to do)``
    around each page read by OCR (pages, 1-based counts). ``use_ocr=False`` leaves scanned pages unread
    (reported). ``limits`` (issue 26): pages (``max_pages``) checked on opening, pages to read by OCR
    (``max_ocr_pages``) counted before OCR starts, OCR time (``max_ocr_seconds``) after each page, and a page
    is rendered for OCR at most at ``max_image_megapixels``. Raises ``ExtractionError(name, reason)``;
    :class:`rag.errors.LimitExceeded` over a limit. ``media_type`` one of :data:`PAGED` reads that format
    through the same rules (XPS, FB2, MOBI, CBZ: issue 28).
    """
    limits = resolve(limits)
    filetype, label = PAGED.get(media_type, ("pdf", "PDF"))
    doc, warnings = open_pdf(data, name, filetype, label)
    try:
        if doc.page_count > limits.max_pages:
            raise LimitExceeded(name, "max_pages", f"the {label} has", doc.page_count, limits.max_pages, "pages")
        return _extract(doc, data, name, warnings, progress, use_ocr, limits, media_type)
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged file must fail with a reason, never a traceback
        raise ExtractionError(name, f"damaged {label}: {e or type(e).__name__}") from e
    finally:
        doc.close()


def _needs_ocr(page) -> bool:
    """Whether ``page`` will be read by OCR (for the progress total): only pages with images are
    looked at, so counting costs nothing on born-digital text pages."""
    import pymupdf

    if not page.get_images():
        return False
    text = page.get_text(flags=pymupdf.TEXT_MEDIABOX_CLIP)
    return classify_page(page, text) in ("scanned", "sparse-image", "unreadable")


def _safe_needs_ocr(doc, i: int) -> bool:
    """:func:`_needs_ocr` of page ``i`` (0-based); ``False`` for a page that cannot be loaded: the reading loop names
    it, and the other pages are read (pdfium's named_dests_old_style.pdf, whose second page is missing, was refused
    whole: "damaged PDF: page not in document", a walk, 2026-12-07)."""
    try:
        return _needs_ocr(doc.load_page(i))
    except Exception:  # noqa: BLE001 - the reading loop reports the page
        return False


def _read_pages(doc, name: str, warnings: list[str], progress: Progress | None, use_ocr: bool,
                limits: Limits) -> list[PageRead]:
    ocr_on = use_ocr and ocr_engine.available() and limits.max_ocr_pages > 0
    listed = doc.page_count
    todo = [i for i in range(listed) if _safe_needs_ocr(doc, i)] if ocr_on else []
    budget = OcrBudget(name, limits)
    budget.plan(len(todo))  # issue 26: refused before the first page is read by OCR
    done = 0
    if todo and progress:
        progress("ocr", 0, len(todo))
    reads = []

    def starting_ocr() -> None:
        # a page's OCR gets an OCR page's time (budget.OCR_PAGE_S), not the PAGE_S the last page's report renewed:
        # a new user's walk (2026-12-07) had 4 of 29 PDFs refused, "stopped after 31 s on page 3", under load
        if progress:
            progress("ocr", done, max(len(todo), done + 1))

    for i in range(doc.page_count):
        try:
            r = read_page(doc.load_page(i), use_ocr=ocr_on, max_pixels=limits.max_image_pixels, on_ocr=starting_ocr)
        except Exception as e:  # noqa: BLE001 - one unreadable page must not lose the others
            warnings.append(f"page {i + 1}: unreadable ({e or type(e).__name__})")
            r = PageRead([], "", "blank")
        if r.too_large:
            warnings.append(f"page {i + 1}: {r.too_large}")
        if r.ocr_ms:
            budget.spend(r.ocr_ms)
        if r.ocr_ms and progress and todo:
            done = min(done + 1, len(todo))
            progress("ocr", done, len(todo))
        if progress:
            progress("extract", i + 1, doc.page_count)
        reads.append(r)
    if doc.page_count < listed:  # MuPDF repairs the page tree when a listed page cannot be loaded
        warnings.append(f"damaged PDF: {listed - doc.page_count} of its {listed} listed page(s) could not be loaded "
                        "(not in the document); the others were read")
    return reads


def _page_labels(doc) -> list[str | None]:
    try:
        if not doc.get_page_labels():
            return [None] * doc.page_count
        return [doc.load_page(i).get_label() or None for i in range(doc.page_count)]
    except Exception:  # noqa: BLE001 - labels are optional metadata
        return [None] * doc.page_count


def _pages_list(nums: list[int]) -> str:
    return ", ".join(map(str, nums))


_OCR_WARNING = re.compile(r"^page\(s\) ([\d, ]+) read by OCR")


def pages_read_by_ocr(warnings) -> tuple[int, ...]:
    """The 1-based pages a stored document's warnings say were read by OCR (the store keeps the
    warnings, so the Documents page and ``status`` can show them without a column of their own)."""
    for w in warnings:
        m = _OCR_WARNING.match(w)
        if m:
            return tuple(int(x) for x in m.group(1).split(",") if x.strip())
    return ()


def _warn(reads: list[PageRead], cov, warnings: list[str]) -> None:

    scanned = [i + 1 for i, r in enumerate(reads) if r.kind == "scanned" and not r.ocr]
    ocr = [i + 1 for i, r in enumerate(reads) if r.ocr]
    bad = [i + 1 for i, r in enumerate(reads) if r.kind == "unreadable"]
    if ocr:
        warnings.append(f"page(s) {_pages_list(ocr)} read by OCR ({ocr_engine.ENGINE}); check quotes against the page")
    if scanned:
        warnings.append(f"no text layer on page(s) {_pages_list(scanned)} (scanned, not read: OCR is not "
                        "installed or found no text); not searchable")
    if bad:
        warnings.append(f"unreadable text layer on page(s) {_pages_list(bad)} (glyphs map to wrong letters)"
                        + ("; read by OCR instead" if all(reads[p - 1].ocr for p in bad) else ""))
    kept = [i + 1 for i, r in enumerate(reads) if r.kept_layer]
    if kept:
        warnings.append(f"page(s) {_pages_list(kept)}: OCR read the text layer's script worse than the layer, "
                        "so the layer is kept as it is; check quotes there against the page")
    garbled = [i + 1 for i, r in enumerate(reads) if r.garbled and not r.ocr]
    if garbled:
        warnings.append(f"unmapped glyphs on page(s) {_pages_list(garbled)} ({sum(reads[p - 1].garbled for p in garbled)} "
                        "characters with no Unicode mapping, shown as \ufffd): words there may be incomplete")
    layer = [i + 1 for i, r in enumerate(reads) if r.ocr_layer]
    if layer:
        warnings.append(f"searchable scan: the invisible OCR text laid over the page image is kept on page(s) "
                        f"{_pages_list(layer)} (the scanner's reading; check quotes against the page)")
    shown = " ".join(" ".join(ln.text for ln in r.lines) for r in reads)
    hidden = {i + 1: n for i, r in enumerate(reads) if (n := _unseen(r.hidden_texts, shown))}
    if hidden:
        warnings.append(f"hidden text left out on page(s) {_pages_list(list(hidden))} ({sum(hidden.values())} "
                        "characters invisible, painted over, white on white or under 2 pt): never indexed or read "
                        "by the model")
    notes = {i + 1: r.notes for i, r in enumerate(reads) if r.notes}
    if notes:
        warnings.append(f"not read: {sum(notes.values())} comment(s) (sticky notes, attachments) on page(s) "
                        f"{_pages_list(list(notes))}; comments are notes about the text, not its text")
    low = [c for c in audit_mod.low_pages(cov) if reads[c.page - 1].kind not in ("unreadable",)]
    if low:
        listed = ", ".join(f"{c.page} ({100 * c.share:.1f} %)" for c in low[:10])
        more = f" and {len(low) - 10} more" if len(low) > 10 else ""
        warnings.append(f"text coverage under {100 * audit_mod.MIN_PAGE_COVERAGE:.0f} % of PyMuPDF's words on "
                        f"page(s) {listed}{more}")


def _unseen(texts: list[str], shown: str) -> int:
    """Characters of the hidden ``texts`` of a page that no page shows: a slide's overlay items not yet
    uncovered (drawn transparent, shown on a later page) are hidden on their page but no secret."""
    flat = " ".join(shown.split())
    return sum(len(t.strip()) for t in texts if " ".join(t.split()) not in flat)


def _refuse_empty(reads: list[PageRead], name: str, limits: Limits) -> None:
    """Raise the true reason a document gave no text (issue 28, item 5)."""
    if any(r.kind == "scanned" and r.ocr_ms for r in reads):
        raise ExtractionError(name, "no text layer (scanned?) and OCR read nothing")
    large = [f"page {i + 1} {r.too_large}" for i, r in enumerate(reads) if r.too_large]
    if large:
        raise LimitExceeded(name, "max_image_megapixels", "; ".join(large[:3]) + ", over", limits.max_image_megapixels,
                            limits.max_image_megapixels, "megapixels", over=False)
    hidden = sum(r.hidden for r in reads)
    if hidden:
        raise ExtractionError(name, f"no visible text: its only text ({hidden} characters) is hidden from a reader "
                                    "(invisible with no page image under it, painted over, white on white or "
                                    "under 2 pt), and hidden text is never indexed")
    if any(r.kind == "scanned" for r in reads) and not ocr_engine.available():
        raise ExtractionError(name, "no text layer (scanned?) and OCR is not installed")
    raise ExtractionError(name, "no text layer (scanned?)" if any(r.kind == "scanned" for r in reads)
                          else "no text on any page")


def _extract(doc, data: bytes, name: str, warnings: list[str], progress: Progress | None,
             use_ocr: bool, limits: Limits, media_type: str = MediaType.PDF) -> Document:
    reads = _read_pages(doc, name, warnings, progress, use_ocr, limits)
    deck = is_slide_deck(reads)
    drop_running(reads, deck)
    if deck and (steps := drop_overlay_steps(reads)):
        warnings.append(f"slide deck: overlay step(s) on page(s) {_pages_list(steps)} read on the completed slide "
                        "that follows each")
    lexicon = Lexicon.of(ln.text for r in reads for ln in r.lines if ln.kind != "table")
    body = body_size([[ln for ln in r.lines if ln.kind == "text"] for r in reads])
    bold_titles = bold_is_rare([r.lines for r in reads])
    pages = [page_paragraphs(r.lines, lexicon, body, bold_titles) for r in reads]
    join_across_pages(pages, lexicon)
    built = assemble(pages, _page_labels(doc))
    canonical = built.canonical
    if not canonical.strip():
        if doc.is_repaired:
            raise ExtractionError(name, "damaged PDF: nothing extractable after repair")
        _refuse_empty(reads, name, limits)
    texts = [canonical[s.start:s.end] for s in built.spans]
    cov = audit_mod.page_coverage([r.reference for r in reads], texts, [r.dropped for r in reads])
    _warn(reads, cov, warnings)
    headings = find_headings(doc, built.spans, built.paras)
    if deck and built.spans:  # a title slide's author and institute are no sections: its first heading alone
        first = built.spans[0]
        on_title = [h for h in headings if first.start <= h.start < first.end]
        headings = tuple(h for h in headings if h not in on_title[1:])
    roles = tuple(title_slide(canonical, built.spans)) if deck else ()
    title = document_title(doc, reads, headings, name, built.spans, body)
    return Document(
        id=hashlib.sha256(data).hexdigest(), name=name, media_type=media_type, canonical=canonical,
        title=title, size_bytes=len(data), extractor=f"pymupdf {_version()}",
        extractor_version=EXTRACTOR_VERSION, pages=tuple(built.spans), headings=headings,
        warnings=tuple(warnings),
        image_only_pages=tuple(i + 1 for i, r in enumerate(reads) if r.kind == "scanned"),
        page_coverage=tuple(round(c.share, 4) for c in cov),
        ocr_pages=tuple(i + 1 for i, r in enumerate(reads) if r.ocr),
        flagged_pages=tuple(i + 1 for i, r in enumerate(reads) if r.kind == "unreadable"),
        blank_pages=tuple(i + 1 for i, r in enumerate(reads) if r.kind == "blank"),
        tables=sum(r.tables for r in reads), roles=roles,
        hyphen_joins=tuple(f"{a} -> {b}" for a, b in lexicon.joins),
        stats=(("ocr_ms", round(sum(r.ocr_ms for r in reads), 1)),
               *Counter(r.order for r in reads if r.lines).items()),
    )


def _version() -> str:
    import pymupdf

    return str(pymupdf.VersionBind)

