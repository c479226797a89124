"""PDF branch of stage 1: PDF bytes -> canonical text + page map + headings, through PyMuPDF.

Reading a page (:func:`page_lines`, :func:`order_lines`, :func:`paragraphs_of`):

* text comes from ``page.get_text("dict")`` with MuPDF's ligature expansion on
  (and U+FB00..U+FB06 expanded again by hand, in case a font maps them raw);
  soft hyphens (U+00AD) are removed everywhere;
* the reading frame follows the page's dominant writing direction, so a page
  whose text runs sideways (rotated scans, landscape tables) is read in line
  order; lines in a minority direction (a rotated axis label) come after;
* two columns are detected per page (enough lines wholly left and wholly
  right of the middle, each filling most of its column): left column, then
  right column, with full-width lines (title, wide figures) cutting the page
  into bands read top to bottom;
* lines are joined into paragraphs (one MuPDF block, no vertical gap, same
  font size); paragraphs are separated by a blank line in the canonical text,
  pages too;
* a line-end hyphen is removed only between two lower-case word parts and
  only when the first part is a plain word of 2+ letters and the hyphenated
  compound does not occur elsewhere in the file: ``cli-/mate`` -> ``climate``
  but ``state-of-the-/art``, ``10-/20`` and ``n-/tridecanal`` keep their
  hyphen (MuPDF's own dehyphenate flag removes every one of them);
* running headers and footers (lines in the top or bottom 12 % of the page
  whose text, digits ignored, repeats on at least half of the pages, 3 pages
  or more) are dropped.

Sections (:func:`find_headings`): the font-size rule, with the outline (TOC)
preferred when it has 2+ entries that can be found in the text. Why: of the
6 corpus PDFs none has a useful outline (01 has none, 02 only its title), so
an outline-only rule would give no sections; ``pymupdf4llm`` finds headings
by font size too but costs far more per page (it runs its own layout pass
and Tesseract: 3240 ms per page on the 13-page DPR paper against 36 ms for
this module, same machine, load ~10, ``python -m rag bench extract
--pymupdf4llm``) for the same signal. On that paper the rule finds all 26
numbered sections and appendices and the title. The font-size rule:
a short paragraph (1-2 lines, <= 120 chars, no final period) in a font at
least 1 pt larger than the body font, or bold and numbered (``3.1 Method``),
is a heading; its level is the rank of its size among heading sizes.

Failures raise :class:`rag.errors.ExtractionError` naming the file: cannot be
opened (damaged), password-protected (user password), zero pages, no text
layer (scanned?), nothing extractable from a repaired file. A file MuPDF had
to repair is ingested with a warning; pages without a text layer are listed
in ``Document.image_only_pages`` and in a warning. Pages are 1-based
physical page numbers everywhere in this module's output.
"""

from __future__ import annotations

import hashlib
import re
import statistics
import unicodedata
from collections import Counter
from dataclasses import dataclass

from rag.errors import ExtractionError
from rag.ingest import EXTRACTOR_VERSION
from rag.types import MEDIA_PDF, Document, Heading, PageSpan

_LIGATURES = str.maketrans({
    "\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
    "\ufb05": "st", "\ufb06": "st", "\x00": None,
})
_HYPHENS = ("-", "\u2010")
_HEADER_ZONE = 0.12
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVX]+\.)\s+\S")
_HYPHEN_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+")


@dataclass
class Line:
    """One visual line in the page's reading frame (points; y grows downwards)."""

    text: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    bold: bool
    block: int
    page_h: float
    sideways: bool = False

    @property
    def height(self) -> float:
        return max(self.y1 - self.y0, 1.0)


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


def _frame(direction: tuple[float, float]):
    dx, dy = direction

    def tf(x0, y0, x1, y1):
        xs = [x * dx + y * dy for x in (x0, x1) for y in (y0, y1)]
        ys = [-x * dy + y * dx for x in (x0, x1) for y in (y0, y1)]
        return min(xs), min(ys), max(xs), max(ys)

    return tf


def page_lines(page) -> tuple[list[Line], list[Line]]:
    """Lines of ``page`` as ``(main, other)``: those in the dominant direction, mapped into its
    reading frame, and those in any other direction (each in its own frame)."""
    import pymupdf

    flags = pymupdf.TEXT_MEDIABOX_CLIP | pymupdf.TEXT_PRESERVE_WHITESPACE
    raw = []
    for b_no, block in enumerate(page.get_text("dict", flags=flags)["blocks"]):
        for line in block.get("lines", ()):
            spans = line["spans"]
            text = "".join(s["text"] for s in spans).translate(_LIGATURES)
            if not text.strip():
                continue
            main_span = max(spans, key=lambda s: len(s["text"]))
            size = round(main_span["size"] * 2) / 2
            bold = bool(main_span["flags"] & 16) or "Bold" in main_span["font"]
            d = (round(line["dir"][0]), round(line["dir"][1]))
            raw.append((d, text, line["bbox"], size, bold, b_no))
    if not raw:
        return [], []
    main_dir = Counter(r[0] for r in raw).most_common(1)[0][0]
    tf_main = _frame(main_dir)
    r = page.rect
    fx0, fy0, fx1, fy1 = tf_main(r.x0, r.y0, r.x1, r.y1)
    main, other = [], []
    for d, text, bbox, size, bold, b_no in raw:
        tf = tf_main if d == main_dir else _frame(d)
        x0, y0, x1, y1 = tf(*bbox)
        if d == main_dir:
            main.append(Line(text.strip(), x0 - fx0, y0 - fy0, x1 - fx0, y1 - fy0, size, bold, b_no, fy1 - fy0))
        else:
            other.append(Line(text.strip(), x0, y0, x1, y1, size, bold, b_no, fy1 - fy0, True))
    main_w = fx1 - fx0
    return order_lines(merge_fragments(main), main_w), sorted(other, key=lambda ln: (ln.block, ln.y0, ln.x0))


def merge_fragments(lines: list[Line]) -> list[Line]:
    """Join pieces MuPDF split off one visual line (same baseline, small horizontal gap)."""
    lines = sorted(lines, key=lambda ln: (round(ln.y1), ln.x0))
    out: list[Line] = []
    for ln in lines:
        prev = out[-1] if out else None
        if (prev is not None and abs(prev.y1 - ln.y1) < 0.4 * min(prev.height, ln.height)
                and 0 <= ln.x0 - prev.x1 < 1.5 * max(prev.size, ln.size) and prev.block == ln.block):
            sep = "" if ln.x0 - prev.x1 < 0.15 * ln.size else " "
            out[-1] = Line(prev.text + sep + ln.text, prev.x0, min(prev.y0, ln.y0), ln.x1, max(prev.y1, ln.y1),
                           prev.size, prev.bold and ln.bold, prev.block, prev.page_h)
        else:
            out.append(ln)
    return out


def _two_columns(lines: list[Line], width: float) -> bool:
    mid = width / 2
    left = [ln for ln in lines if ln.x1 <= mid + 2]
    right = [ln for ln in lines if ln.x0 >= mid - 2]
    if len(left) < 3 or len(right) < 3:
        return False
    left_w = mid - min(ln.x0 for ln in left)
    right_w = max(ln.x1 for ln in right) - mid
    return (statistics.median(ln.x1 - ln.x0 for ln in left) >= 0.55 * left_w
            and statistics.median(ln.x1 - ln.x0 for ln in right) >= 0.55 * right_w)


def order_lines(lines: list[Line], width: float) -> list[Line]:
    """Reading order: top to bottom; on a two-column page, left column then right column within
    each band between full-width lines."""
    lines = sorted(lines, key=lambda ln: (ln.y0, ln.x0))
    if not _two_columns(lines, width):
        return lines
    mid = width / 2
    out: list[Line] = []
    left: list[Line] = []
    right: list[Line] = []
    for ln in lines:
        if ln.x1 <= mid + 2:
            left.append(ln)
        elif ln.x0 >= mid - 2:
            right.append(ln)
        else:
            out += left + right + [ln]
            left, right = [], []
    return out + left + right


def paragraphs_of(lines: list[Line]) -> list[list[Line]]:
    """Group ordered lines into paragraphs: a new one at a block change, a vertical gap, a jump
    back up (next column), or a font-size change."""
    paras: list[list[Line]] = []
    for ln in lines:
        prev = paras[-1][-1] if paras else None
        if (prev is None or ln.block != prev.block or ln.y0 - prev.y1 > 0.6 * prev.height
                or ln.y0 < prev.y0 - 1 or abs(ln.size - prev.size) > 0.6):
            paras.append([ln])
        else:
            paras[-1].append(ln)
    return paras


# --------------------------------------------------------------------------- text


def join_lines(texts: list[str], compounds: set[str]) -> str:
    """Join a paragraph's lines with spaces, undoing end-of-line hyphenation (rule in the module doc)."""
    out = texts[0] if texts else ""
    for nxt in texts[1:]:
        if out.endswith("\u00ad"):
            out = out[:-1] + nxt
        elif out.endswith(_HYPHENS) and nxt[:1].isalpha():
            frag = re.split(r"\s", out)[-1][:-1]
            word = re.match(r"[A-Za-z]+", nxt)
            keep = (len(frag) < 2 or not frag.isalpha() or not nxt[:1].islower()
                    or (word is not None and f"{frag}-{word.group(0)}".lower() in compounds))
            out = (out if keep else out[:-1]) + nxt
        elif out.endswith(_HYPHENS) and nxt[:1].isdigit():
            out = out + nxt
        else:
            out = out + " " + nxt
    return out


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text)).strip().lower()


def running_lines(pages: list[list[Line]]) -> set[str]:
    """Keys (digits -> ``#``) of header/footer lines repeating on >= half the pages (3+ pages)."""
    if len(pages) < 3:
        return set()
    counts: Counter = Counter()
    for lines in pages:
        keys = {_key(ln.text) for ln in lines
                if ln.y1 <= _HEADER_ZONE * ln.page_h or ln.y0 >= (1 - _HEADER_ZONE) * ln.page_h}
        counts.update(keys)
    need = max(3, (len(pages) + 1) // 2)
    return {k for k, n in counts.items() if n >= need}


def _is_margin(ln: Line) -> bool:
    return ln.y1 <= _HEADER_ZONE * ln.page_h or ln.y0 >= (1 - _HEADER_ZONE) * ln.page_h


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
    if len(para) > 2 or len(text) > 120 or len(text) < 2 or text.endswith((".", ",", ";", ":")):
        return None
    if not text[0].isalnum() or any(ln.sideways for ln in para) or "@" in text or "://" in text:
        return None
    size = para[0].size
    if size >= body + 1 and sum(ch.isalpha() for ch in text) >= 3:
        return size
    if all(ln.bold for ln in para) and _NUMBERED.match(text) and size >= body - 0.5:
        return size
    return None


# --------------------------------------------------------------------------- document


def extract_pdf(data: bytes, name: str) -> Document:
    """PDF bytes -> :class:`rag.ingest.extract.Document` (design stage 1, PDF branch; rules in the module doc).

    Raises ``ExtractionError(name, reason)``.
    """
    doc, warnings = open_pdf(data, name)
    try:
        return _extract(doc, data, name, warnings)
    except ExtractionError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged file must fail with a reason, never a traceback
        raise ExtractionError(name, f"damaged PDF: {e or type(e).__name__}") from e
    finally:
        doc.close()


def _read_pages(doc, warnings: list[str]) -> list[list[Line]]:
    pages = []
    for i in range(doc.page_count):
        try:
            main, other = page_lines(doc.load_page(i))
        except Exception as e:  # noqa: BLE001 - one unreadable page must not lose the others
            warnings.append(f"page {i + 1}: unreadable ({e or type(e).__name__})")
            main, other = [], []
        pages.append(main + other)
    return pages


def _page_labels(doc) -> list[str | None]:
    try:
        if not doc.get_page_labels():
            return [None] * doc.page_count
        return [doc.load_page(i).get_label() or None for i in range(doc.page_count)]
    except Exception:  # noqa: BLE001 - labels are optional metadata
        return [None] * doc.page_count


def page_paragraphs(lines: list[Line], compounds: set[str], body: float) -> list[tuple[str, float | None]]:
    """A page's paragraphs as ``(text, heading font size or None)``, NFC; a paragraph cut by a column
    break (no final punctuation, next one starts lower-case) is joined back."""
    out: list[tuple[str, float | None]] = []
    for para in paragraphs_of(lines):
        text = join_lines([ln.text for ln in para], compounds).replace("\u00ad", "")
        text = unicodedata.normalize("NFC", text).strip()
        if not text:
            continue
        size = heading_size(para, text, body)
        if (out and size is None and out[-1][1] is None and text[:1].islower()
                and not out[-1][0].endswith((".", "!", "?", ":", ";"))):
            out[-1] = (join_lines([out[-1][0], text], compounds), None)
        else:
            out.append((text, size))
    return out


def _extract(doc, data: bytes, name: str, warnings: list[str]) -> Document:
    pages = _read_pages(doc, warnings)
    repeated = running_lines(pages)
    pages = [[ln for ln in lines if not (_is_margin(ln) and _key(ln.text) in repeated)] for lines in pages]
    compounds = {m.group(0).lower() for lines in pages for ln in lines for m in _HYPHEN_WORD.finditer(ln.text)}
    body = body_size(pages)
    labels = _page_labels(doc)

    parts: list[str] = []
    spans: list[PageSpan] = []
    cand: list[tuple[float, str, int, int]] = []  # (size, title, start, end) of heading-looking paragraphs
    empty: list[int] = []
    pos = 0  # length of the canonical text built so far
    for i, lines in enumerate(pages):
        page_start = pos + 2 if parts else 0
        off = page_start
        texts = []
        for text, size in page_paragraphs(lines, compounds, body):
            if texts:
                off += 2
            if size is not None:
                cand.append((size, text, off, off + len(text)))
            texts.append(text)
            off += len(text)
        if not texts:
            empty.append(i + 1)
            spans.append(PageSpan(i + 1, labels[i], pos, pos))
            continue
        parts.append("\n\n".join(texts))
        pos = page_start + len(parts[-1])
        spans.append(PageSpan(i + 1, labels[i], page_start, pos))
    canonical = "\n\n".join(parts)
    if not canonical.strip():
        if doc.is_repaired:
            raise ExtractionError(name, "damaged PDF: nothing extractable after repair")
        raise ExtractionError(name, "no text layer (scanned?)")
    if empty:
        warnings.append(f"no text layer on page(s) {', '.join(map(str, empty))} (scanned?); not searchable")
    headings = find_headings(doc, canonical, spans, cand)
    title = _title(doc, headings, name, next((sp.end for sp in spans if sp.end > sp.start), 0))
    return Document(
        id=hashlib.sha256(data).hexdigest(), name=name, media_type=MEDIA_PDF, canonical=canonical,
        title=title, size_bytes=len(data), extractor=f"pymupdf {_version()}",
        extractor_version=EXTRACTOR_VERSION, pages=tuple(spans), headings=headings,
        warnings=tuple(warnings), image_only_pages=tuple(empty),
    )


def _version() -> str:
    import pymupdf

    return str(pymupdf.VersionBind)


def _toc_headings(doc, canonical: str, spans: list[PageSpan]) -> list[Heading]:
    try:
        toc = doc.get_toc(simple=True)
    except Exception:  # noqa: BLE001
        return []
    found = []
    for level, title, page in toc:
        title = " ".join(unicodedata.normalize("NFC", title.translate(_LIGATURES)).split())
        if not title or not 1 <= page <= len(spans):
            continue
        sp = spans[page - 1]
        i = canonical.find(title, sp.start, sp.end)
        if i >= 0:
            line_end = canonical.find("\n", i)
            line_end = len(canonical) if line_end == -1 else line_end
            line_start = canonical.rfind("\n", 0, i) + 1
            found.append(Heading(level, title, line_start, line_end))
    return found


def find_headings(doc, canonical: str, spans: list[PageSpan], cand) -> tuple[Heading, ...]:
    """Section headings of the PDF: from the outline when 2+ of its entries are found in the text,
    else from font sizes (``cand``: (size, text, start, end) of heading-looking paragraphs)."""
    toc = _toc_headings(doc, canonical, spans)
    if len(toc) >= 2:
        uniq = {(h.start): h for h in toc}
        return tuple(sorted(uniq.values(), key=lambda h: h.start))
    sizes = sorted({c[0] for c in cand}, reverse=True)
    rank = {s: i + 1 for i, s in enumerate(sizes)}
    return tuple(Heading(min(rank[s], 6), t, a, b) for s, t, a, b in cand)


def _title(doc, headings: tuple[Heading, ...], name: str, first_page_end: int) -> str:
    meta = (doc.metadata or {}).get("title") or ""
    meta = " ".join(meta.split())
    if len(meta) >= 4 and not re.search(r"\.(docx?|pdf|tex|dvi)$|^untitled", meta, re.I):
        return meta
    try:
        toc = doc.get_toc(simple=True)
    except Exception:  # noqa: BLE001
        toc = []
    if len(toc) == 1 and len(toc[0][1].strip()) >= 4:
        return " ".join(toc[0][1].translate(_LIGATURES).split())
    first = [h for h in headings if h.level == 1 and h.start < first_page_end]
    if first:
        return first[0].title
    base = re.split(r"[\\/]", name)[-1]
    return base.rsplit(".", 1)[0] or base
