"""PDF branch of stage 1: PDF bytes -> canonical text + page map + headings, through PyMuPDF.

One page (:func:`read_page`): lines from ``get_text("dict")`` (MuPDF's ligature expansion on, U+FB00..
U+FB06 expanded again by hand, soft hyphens removed; text no reader sees, white on white, under 2 pt or
transparent, removed first: :mod:`rag.ingest.hidden`), form widgets as ``label: value`` and FreeText
annotations (:mod:`rag.ingest.forms`), ruled tables as Markdown rows (:mod:`rag.ingest.tables`), the
text layer judged (:mod:`rag.ingest.quality`: blank, scanned, unreadable) and read by OCR where it has
no usable text (:mod:`rag.ingest.ocr`), lines put in reading order (:mod:`rag.ingest.layout`: PyMuPDF's
``sort=True`` order unless the column order measurably reads more continuous text).

The document (:func:`extract_pdf`):

* running headers and footers (lines in the top or bottom 12 % of the page whose text, digits ignored,
  repeats on at least half of the pages, 3 pages or more; counted over all pages and again over odd and
  over even pages, for books whose headers alternate) are dropped, and the audit knows it;
* lines are joined into paragraphs (one MuPDF block, no vertical gap, same font size), paragraphs and
  pages separated by a blank line; line-end hyphens follow :mod:`rag.ingest.hyphen` (joined only when
  the document attests the word), also across a column or page end;
* sections: the outline (TOC) when 2+ of its titles match a short heading-sized paragraph (never a
  line inside body text: a title matching a body line would have swallowed that paragraph), else the
  font-size rule (a 1-2 line paragraph, <= 120 chars, no final period, at least 1 pt above the body
  size or bold and numbered); form and annotation text is never a heading;
* the title: the metadata title when its words are on page 1, it is not a placeholder ("untitled",
  "none", a file name) and, when page 1 has a title line (largest font, 1 pt above the body), it
  shares most of the shorter one's words with that line (a series or file name does not), else a one-entry outline's title, else the largest-font line(s) of page 1 (at
  least 1 pt above the body size), else the first level-1 heading of the first two pages with text,
  else the file name;
* the audit (:mod:`rag.ingest.audit`): the share of PyMuPDF's own words of each page kept in the
  canonical text; pages under 99 % are named in a warning.

Failures raise :class:`rag.errors.ExtractionError` naming the file: cannot be opened (damaged),
password-protected (user password), zero pages, no text at all (a scan without OCR, or OCR found
nothing), nothing extractable from a repaired file. Pages are 1-based physical page numbers everywhere.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from rag.errors import ExtractionError, LimitExceeded
from rag.ingest import EXTRACTOR_VERSION
from rag.ingest import audit as audit_mod
from rag.ingest import ocr as ocr_engine
from rag.ingest.forms import annotation_lines, form_lines
from rag.ingest.hidden import remove_hidden
from rag.ingest.hyphen import Lexicon, join_lines
from rag.ingest.layout import _LIGATURES, Line, merge_fragments, order_blocks, page_lines, paragraphs_of
from rag.ingest.limits import Limits, OcrBudget, resolve
from rag.ingest.quality import classify_page
from rag.ingest.tables import table_lines
from rag.types import MEDIA_PDF, Document, Heading, PageSpan

_HEADER_ZONE = 0.12
_NUMBERED_PREFIX = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+")
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+\S")
_JUNK_TITLE = re.compile(r"^(untitled|none|null|unknown|title|document\d*|microsoft word\b.*|slide \d+)$|"
                         r"\.(docx?|pdf|tex|dvi|pptx?|odt|indd|qxd)$", re.I)

#: ``progress(stage, done, total)``: the OCR stage reports ``("ocr", pages done, pages to read)``.
Progress = Callable[[str, int, int], None]


# --------------------------------------------------------------------------- opening


def open_pdf(data: bytes, name: str):
    """Open ``data`` with PyMuPDF; returns ``(document, warnings)``.

    Raises ``ExtractionError`` for a file MuPDF cannot open, a user password,
    or zero pages. An owner-only password (empty user password) opens.
    """
    import pymupdf

    try:
        doc = pymupdf.open(stream=data, filetype="pdf")
    except Exception as e:  # noqa: BLE001 - MuPDF raises several types for damaged files
        raise ExtractionError(name, f"damaged PDF: cannot be opened ({e or type(e).__name__})") from e
    if doc.needs_pass and not doc.authenticate(""):
        raise ExtractionError(name, "password-protected (a user password is set)")
    warnings = []
    if doc.is_repaired:
        warnings.append("damaged PDF: MuPDF repaired it; some text may be missing")
    if doc.page_count == 0:
        raise ExtractionError(name, "PDF has zero pages")
    return doc, warnings


# --------------------------------------------------------------------------- one page


@dataclass
class PageRead:
    """One page as read: ``lines`` in reading order (all kinds); ``reference`` PyMuPDF's plain text
    (the audit's reference); ``kind`` the text-layer class (:func:`rag.ingest.quality.classify_page`);
    ``order`` the reading order that won; ``ocr_ms`` OCR time (0 when not read by OCR); ``tables``
    tables found; ``dropped`` texts removed on purpose (hidden text, :mod:`rag.ingest.hidden`; running
    headers, filled in later); ``hidden`` characters of hidden text removed."""

    lines: list[Line]
    reference: str
    kind: str
    order: str = "sort"
    ocr_ms: float = 0.0
    ocr: bool = False
    tables: int = 0
    dropped: list[str] = field(default_factory=list)
    hidden: int = 0
    too_large: str = ""


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


def read_page(page, *, use_ocr: bool = True, find_tables: bool = True, max_pixels: int | None = None) -> PageRead:
    """Read one PyMuPDF page (rules in the module doc). Never raises for a page MuPDF can parse.

    ``max_pixels`` bounds the render for OCR (:func:`ocr_dpi`); a page too large even at
    :data:`MIN_OCR_DPI` is not read by OCR and says why in ``too_large``."""
    import pymupdf

    flags = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE
    tp = page.get_textpage(flags=flags)
    page_dict = tp.extractDICT()
    reference = tp.extractText()
    hidden = remove_hidden(page, page_dict)
    main, other, _width = page_lines(page, page_dict)
    page_h = page.rect.height
    upright = page.rotation == 0 and all(not ln.sideways for ln in main)
    n_blocks = len(page_dict["blocks"])
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
    kind = classify_page(page, reference)
    read = PageRead([], reference, kind, tables=tables, dropped=dropped + [h.text for h in hidden],
                    hidden=sum(len(h.text.strip()) for h in hidden))
    dpi = ocr_dpi(page, max_pixels) if kind in ("scanned", "sparse-image", "unreadable") and use_ocr else None
    if dpi is None and kind in ("scanned", "sparse-image", "unreadable") and use_ocr:
        read.too_large = _too_large(page)
    if dpi is not None:

        if ocr_engine.available():
            ocr_ls, read.ocr_ms = _ocr_lines(page, page_h, n_blocks + 2000, dpi)
            if kind == "sparse-image":
                ocr_ls = [ln for ln in ocr_ls if not _overlaps(ln, main)]
                read.lines = order_blocks(merge_fragments(main + added))[0] + ocr_ls + other
                read.ocr = bool(ocr_ls)
                return read
            read.lines, read.ocr = ocr_ls + added, bool(ocr_ls)
            return read
    if main or added:
        read.lines, read.order = order_blocks(merge_fragments(main + added))
    read.lines += other
    return read


# --------------------------------------------------------------------------- running headers


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text)).strip().lower()


def _is_margin(ln: Line) -> bool:
    return ln.y1 <= _HEADER_ZONE * ln.page_h or ln.y0 >= (1 - _HEADER_ZONE) * ln.page_h


def _repeated(pages: list[list[Line]], min_pages: int) -> set[str]:
    if len(pages) < min_pages:
        return set()
    counts: Counter = Counter()
    for lines in pages:
        counts.update({_key(ln.text) for ln in lines if _is_margin(ln) and ln.kind == "text"})
    need = max(min_pages, (len(pages) + 1) // 2)
    return {k for k, n in counts.items() if n >= need}


def running_lines(pages: list[list[Line]]) -> tuple[set[str], set[str], set[str]]:
    """Keys (digits -> ``#``) of header/footer lines repeating on >= half the pages (3+ pages): over all
    pages, over odd pages and over even pages (1-based), as ``(all, odd, even)``."""
    odd, even = pages[0::2], pages[1::2]
    return _repeated(pages, 3), _repeated(odd, 3), _repeated(even, 3)


def drop_running(reads: list[PageRead]) -> None:
    """Remove running header/footer lines from ``reads`` in place, recording them in ``dropped``."""
    every, odd, even = running_lines([r.lines for r in reads])
    for i, r in enumerate(reads):
        keys = every | (odd if i % 2 == 0 else even)
        keep = []
        for ln in r.lines:
            if ln.kind == "text" and _is_margin(ln) and _key(ln.text) in keys:
                r.dropped.append(ln.text)
            else:
                keep.append(ln)
        r.lines = keep


# --------------------------------------------------------------------------- headings


def body_size(pages: list[list[Line]]) -> float:
    """The body font size: the size carrying the most characters."""
    c: Counter = Counter()
    for lines in pages:
        for ln in lines:
            c[ln.size] += len(ln.text)
    return c.most_common(1)[0][0] if c else 10.0


def heading_size(para: list[Line], text: str, body: float) -> float | None:
    """The font size if paragraph ``para`` (joined ``text``) looks like a heading, else None."""
    if len(para) > 2 or len(text) > 120 or len(text) < 2 or text.endswith((".", ",", ";", ":", "-", "\u2010")):
        return None
    if re.search(r"[.!?] \S", _NUMBERED_PREFIX.sub("", text)):
        return None  # a sentence ends inside: body text in a large font (a call-out), not a heading
    if any(ln.kind != "text" or ln.sideways for ln in para):
        return None
    if not text[0].isalnum() or "@" in text or "://" in text:
        return None
    size = para[0].size
    if size >= body + 1 and sum(ch.isalpha() for ch in text) >= 3:
        return size
    if all(ln.bold for ln in para) and _NUMBERED.match(text) and size >= body - 0.5:
        return size
    return None


# --------------------------------------------------------------------------- paragraphs


@dataclass
class Para:
    """One paragraph of the canonical text: ``text``; ``size`` heading font size or ``None``; ``lines``
    how many visual lines; ``kind`` of its first line; ``start``/``end`` canonical offsets once placed."""

    text: str
    size: float | None
    lines: int
    kind: str
    start: int = 0
    end: int = 0


def _hyphen_end(text: str) -> bool:
    return text.endswith(("-", "\u2010")) and text[-2:-1].isalpha()


def page_paragraphs(lines: list[Line], lexicon: Lexicon, body: float) -> list[Para]:
    """A page's paragraphs, NFC; a paragraph cut by a column break (no final punctuation, next one starts
    lower-case, or ends in a hyphen the lexicon joins) is joined back; a short paragraph (a margin note)
    that falls between the two halves of a hyphenated word is moved before the joined paragraph."""
    out: list[Para] = []
    for para in paragraphs_of(lines):
        kind = para[0].kind
        if kind == "table":
            text = para[0].text
        else:
            text = join_lines([ln.text for ln in para], lexicon).replace("\u00ad", "")
        text = unicodedata.normalize("NFC", text).strip()
        if not text:
            continue
        size = heading_size(para, text, body)
        prev = out[-1] if out else None
        aside = out[-2] if len(out) > 1 else None
        if (aside is not None and aside.kind == kind == prev.kind == "text" and _hyphen_end(aside.text)
                and prev.lines <= 2 and len(prev.text) <= 60 and text[:1].islower()
                and lexicon.join(aside.text, text)):
            # ``For for-`` | margin note ``splncs04.bst`` | ``matting``: the word goes on past the note
            aside.text = aside.text[:-1] + text
            aside.lines += len(para)
            out[-2], out[-1] = out[-1], aside
            continue
        if (prev is not None and kind == prev.kind == "text" and text[:1].islower()
                and (size == prev.size or prev.text.endswith(("-", "\u2010")))
                and not prev.text.endswith((".", "!", "?", ":", ";"))
                and not (_hyphen_end(prev.text) and re.match(r"\S*\d", text))):
            # a paragraph cut by a column break, or a call-out / heading set one line per block
            prev.text = join_lines([prev.text, text], lexicon)
            prev.lines += len(para)
            if prev.size != size or (prev.size is not None and (prev.lines > 2 or len(prev.text) > 120)):
                prev.size = None  # too long for a heading: body text, so it stays in the chunks
        else:
            out.append(Para(text, size, len(para), kind))
    return out


def join_across_pages(pages: list[list[Para]], lexicon: Lexicon) -> None:
    """A word hyphenated over a page end (``Mög-`` | ``lichkeit``) is completed on the earlier page when
    the lexicon joins it; the rest of the paragraph stays on its page. In place."""
    prev_last: Para | None = None
    for paras in pages:
        if not paras:
            continue
        first = paras[0]
        if (prev_last is not None and prev_last.kind == first.kind == "text" and prev_last.size is None
                and prev_last.text.endswith(("-", "\u2010")) and first.text[:1].islower()
                and lexicon.join(prev_last.text, first.text)):
            word, _, rest = first.text.partition(" ")
            prev_last.text = prev_last.text[:-1] + word
            first.text = rest.strip()
            if not first.text:
                paras.pop(0)
        prev_last = paras[-1] if paras else prev_last


# --------------------------------------------------------------------------- document


@dataclass
class _Built:
    canonical: str
    spans: list[PageSpan]
    paras: list[Para]


def _assemble(pages: list[list[Para]], labels: list[str | None]) -> _Built:
    parts: list[str] = []
    spans: list[PageSpan] = []
    all_paras: list[Para] = []
    pos = 0
    for i, paras in enumerate(pages):
        if not paras:
            spans.append(PageSpan(i + 1, labels[i], pos, pos))
            continue
        page_start = pos + 2 if parts else 0
        off = page_start
        for j, p in enumerate(paras):
            if j:
                off += 2
            p.start, p.end = off, off + len(p.text)
            off = p.end
            all_paras.append(p)
        parts.append("\n\n".join(p.text for p in paras))
        pos = page_start + len(parts[-1])
        spans.append(PageSpan(i + 1, labels[i], page_start, pos))
    return _Built("\n\n".join(parts), spans, all_paras)


def extract_pdf(data: bytes, name: str, *, progress: Progress | None = None, use_ocr: bool = True,
                limits: Limits | None = None) -> Document:
    """PDF bytes -> :class:`rag.types.Document` (design stage 1, PDF branch; rules in the module doc).

    ``progress(stage, done, total)`` is called with stage ``"ocr"`` before and after each page read by
    OCR (pages, 1-based counts). ``use_ocr=False`` leaves scanned pages unread (reported). ``limits``
    (issue 26): pages (``max_pages``) checked on opening, pages to read by OCR (``max_ocr_pages``) counted
    before OCR starts, OCR time (``max_ocr_seconds``) after each page, and a page is rendered for OCR at
    most at ``max_image_megapixels``. Raises ``ExtractionError(name, reason)``;
    :class:`rag.errors.LimitExceeded` over a limit.
    """
    limits = resolve(limits)
    doc, warnings = open_pdf(data, name)
    try:
        if doc.page_count > limits.max_pages:
            raise LimitExceeded(name, "max_pages", "the PDF has", doc.page_count, limits.max_pages, "pages")
        return _extract(doc, data, name, warnings, progress, use_ocr, limits)
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged file must fail with a reason, never a traceback
        raise ExtractionError(name, f"damaged PDF: {e or type(e).__name__}") from e
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


def _read_pages(doc, name: str, warnings: list[str], progress: Progress | None, use_ocr: bool,
                limits: Limits) -> list[PageRead]:
    ocr_on = use_ocr and ocr_engine.available() and limits.max_ocr_pages > 0
    todo = [i for i in range(doc.page_count) if _needs_ocr(doc.load_page(i))] if ocr_on else []
    budget = OcrBudget(name, limits)
    budget.plan(len(todo))  # issue 26: refused before the first page is read by OCR
    done = 0
    if todo and progress:
        progress("ocr", 0, len(todo))
    reads = []
    for i in range(doc.page_count):
        try:
            r = read_page(doc.load_page(i), use_ocr=ocr_on, max_pixels=limits.max_image_pixels)
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
        reads.append(r)
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
    hidden = [i + 1 for i, r in enumerate(reads) if r.hidden]
    if hidden:
        warnings.append(f"hidden text left out on page(s) {_pages_list(hidden)} ({sum(r.hidden for r in reads)} "
                        "characters drawn white on white, under 2 pt or transparent): never indexed or read by the model")
    low = [c for c in audit_mod.low_pages(cov) if reads[c.page - 1].kind not in ("unreadable",)]
    if low:
        listed = ", ".join(f"{c.page} ({100 * c.share:.1f} %)" for c in low[:10])
        more = f" and {len(low) - 10} more" if len(low) > 10 else ""
        warnings.append(f"text coverage under {100 * audit_mod.MIN_PAGE_COVERAGE:.0f} % of PyMuPDF's words on "
                        f"page(s) {listed}{more}")


def _extract(doc, data: bytes, name: str, warnings: list[str], progress: Progress | None,
             use_ocr: bool, limits: Limits) -> Document:
    reads = _read_pages(doc, name, warnings, progress, use_ocr, limits)
    drop_running(reads)
    lexicon = Lexicon.of(ln.text for r in reads for ln in r.lines if ln.kind != "table")
    body = body_size([[ln for ln in r.lines if ln.kind == "text"] for r in reads])
    pages = [page_paragraphs(r.lines, lexicon, body) for r in reads]
    join_across_pages(pages, lexicon)
    built = _assemble(pages, _page_labels(doc))
    canonical = built.canonical
    if not canonical.strip():
        if doc.is_repaired:
            raise ExtractionError(name, "damaged PDF: nothing extractable after repair")
        if any(r.kind == "scanned" and r.ocr_ms for r in reads):
            raise ExtractionError(name, "no text layer (scanned?) and OCR read nothing")
        large = [f"page {i + 1} {r.too_large}" for i, r in enumerate(reads) if r.too_large]
        if large:
            raise LimitExceeded(name, "max_image_megapixels", "; ".join(large[:3]) + ", over", limits.max_image_megapixels,
                                limits.max_image_megapixels, "megapixels", over=False)
        raise ExtractionError(name, "no text layer (scanned?)")
    texts = [canonical[s.start:s.end] for s in built.spans]
    cov = audit_mod.page_coverage([r.reference for r in reads], texts, [r.dropped for r in reads])
    _warn(reads, cov, warnings)
    headings = find_headings(doc, built.spans, built.paras)
    title = _title(doc, reads, headings, name, built.spans, body)
    return Document(
        id=hashlib.sha256(data).hexdigest(), name=name, media_type=MEDIA_PDF, canonical=canonical,
        title=title, size_bytes=len(data), extractor=f"pymupdf {_version()}",
        extractor_version=EXTRACTOR_VERSION, pages=tuple(built.spans), headings=headings,
        warnings=tuple(warnings),
        image_only_pages=tuple(i + 1 for i, r in enumerate(reads) if r.kind == "scanned"),
        page_coverage=tuple(round(c.share, 4) for c in cov),
        ocr_pages=tuple(i + 1 for i, r in enumerate(reads) if r.ocr),
        flagged_pages=tuple(i + 1 for i, r in enumerate(reads) if r.kind == "unreadable"),
        blank_pages=tuple(i + 1 for i, r in enumerate(reads) if r.kind == "blank"),
        tables=sum(r.tables for r in reads),
        hyphen_joins=tuple(f"{a} -> {b}" for a, b in lexicon.joins),
        stats=(("ocr_ms", round(sum(r.ocr_ms for r in reads), 1)),
               *Counter(r.order for r in reads if r.lines).items()),
    )


def _version() -> str:
    import pymupdf

    return str(pymupdf.VersionBind)


def _norm_title(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", text.translate(_LIGATURES)).split())


def _toc_match(title: str, paras: list[Para]) -> Para | None:
    """The paragraph an outline title names: a short (1-3 line) paragraph equal to the title, or the title
    with a section number or a few characters around it. Never a line inside body text."""
    low = title.lower()
    for p in paras:
        t = p.text.lower()
        if p.kind != "text" or p.lines > 3 or len(t) > len(low) + 12:
            continue
        if t == low or (low in t and len(t) <= len(low) + 12):
            return p
    return None


def _toc_headings(doc, spans: list[PageSpan], paras: list[Para]) -> list[Heading]:
    try:
        toc = doc.get_toc(simple=True)
    except Exception:  # noqa: BLE001
        return []
    found = []
    for level, raw, page in toc:
        title = _norm_title(raw)
        if not title or not 1 <= page <= len(spans):
            continue
        sp = spans[page - 1]
        p = _toc_match(title, [q for q in paras if sp.start <= q.start < max(sp.end, sp.start + 1)])
        if p is not None:
            found.append(Heading(level, title, p.start, p.end))
    return found


def find_headings(doc, spans: list[PageSpan], paras: list[Para]) -> tuple[Heading, ...]:
    """Section headings of the PDF: from the outline when 2+ of its entries match heading paragraphs
    (:func:`_toc_match`), else from font sizes (paragraphs with a heading ``size``)."""
    toc = _toc_headings(doc, spans, paras)
    if len(toc) >= 2:
        uniq = {h.start: h for h in toc}
        return tuple(sorted(uniq.values(), key=lambda h: h.start))
    cand = [p for p in paras if p.size is not None and "\n" not in p.text]
    sizes = sorted({p.size for p in cand}, reverse=True)
    rank = {s: i + 1 for i, s in enumerate(sizes)}
    return tuple(Heading(min(rank[p.size], 6), p.text, p.start, p.end) for p in cand)


def _largest_lines(lines: list[Line], body: float) -> str:
    """The largest-font text of a page: consecutive lines in the largest size (up to 3), joined; empty
    when that size is not at least 1 pt above the body size."""
    cand = [ln for ln in lines if ln.kind == "text" and not ln.sideways and sum(c.isalpha() for c in ln.text) >= 3]
    if not cand:
        return ""
    top = max(ln.size for ln in cand)
    if top < body + 1:
        return ""
    out: list[str] = []
    started = False
    for ln in lines:
        if ln in cand and ln.size == top and len(out) < 3:
            out.append(ln.text)
            started = True
        elif started:
            break
    return " ".join(" ".join(out).split())


def _shares_most(a: list[str], b: set[str]) -> bool:
    """Whether word lists ``a`` and ``b`` share more than half of the shorter one's words."""
    common = sum(w in b for w in set(a))
    return common > 0.5 * min(len(set(a)), len(b))


def _title(doc, reads: list[PageRead], headings: tuple[Heading, ...], name: str, spans: list[PageSpan],
           body: float) -> str:
    first_text = " ".join(ln.text for ln in reads[0].lines) if reads else ""
    first_words = set(audit_mod.words(first_text))
    meta = _norm_title((doc.metadata or {}).get("title") or "")
    meta_words = audit_mod.words(meta)
    big = _largest_lines(reads[0].lines, body) if reads else ""
    big_words = set(audit_mod.words(big))
    if (len(meta) >= 4 and not _JUNK_TITLE.search(meta) and meta_words
            and sum(w in first_words for w in meta_words) >= 0.75 * len(meta_words)
            and (len(big) < 4 or _shares_most(meta_words, big_words))):
        return meta  # on page 1, and (when page 1 has a title line) saying what that line says
    try:
        toc = doc.get_toc(simple=True)
    except Exception:  # noqa: BLE001
        toc = []
    if len(toc) == 1 and len(_norm_title(toc[0][1])) >= 4:  # a one-entry outline names the document
        return _norm_title(toc[0][1])
    if len(big) >= 4:
        return big[:200]
    text_pages = [sp for sp in spans if sp.end > sp.start][:2]
    first_end = text_pages[-1].end if text_pages else 0
    first = [h for h in headings if h.level == 1 and h.start < first_end]
    if first:
        return first[0].title
    base = re.split(r"[\\/]", name)[-1]
    return base.rsplit(".", 1)[0] or base
