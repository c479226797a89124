"""Sections and title of a PDF (stage 1, PDF branch).

* sections: the outline (TOC) when 2+ of its titles match a short heading-sized paragraph (never a
  line inside body text: a title matching a body line would have swallowed that paragraph), else the
  font-size rule of :func:`rag.ingest.pdf.pdf_text.heading_size`;
* the title: the metadata title when its words are on page 1, it is not a placeholder ("untitled",
  "none", a file name) and, when page 1 has a title line (largest font, 1 pt above the body), it
  shares most of the shorter one's words with that line (a series or file name does not), else a
  one-entry outline's title, else the largest-font line(s) of page 1 (at least 1 pt above the body
  size), else the first level-1 heading of the first two pages with text, else the file name.

Split out of :mod:`rag.ingest.pdf` (issue 28: no module over 500 lines).
"""

from __future__ import annotations

import re
import unicodedata

from rag.ingest.pdf import audit as audit_mod
from rag.ingest.pdf.layout import _LIGATURES, Line
from rag.ingest.pdf.pdf_page import PageRead
from rag.ingest.pdf.pdf_text import Para, spacing_accents
from rag.text import SPELLED_NUMBERS
from rag.types import Heading, PageSpan

_JUNK_TITLE = re.compile(r"^(untitled|none|null|unknown|title|document\d*|microsoft word\b.*|slide \d+)$|"
                         r"\.(docx?|pdf|tex|dvi|pptx?|odt|indd|qxd)$", re.I)


def _norm_title(text: str) -> str:
    return " ".join(unicodedata.normalize("NFC", spacing_accents(text.translate(_LIGATURES))).split())


_QUOTES = str.maketrans("", "", "\"'\u201c\u201d\u201e\u2018\u2019\u00ab\u00bb`")
_NUMBER_WORDS = {w: d for d, w in SPELLED_NUMBERS.items()}


def title_key(text: str) -> str:
    """An outline title or a heading as compared: case folded, quotation marks dropped, number words as digits,
    whitespace collapsed: freeculture.pdf's outline says '"PIRACY"' and 'Chapter 1: Creators' where its pages say
    "\u201cPIRACY\u201d" and "CHAPTER ONE: Creators", and 300 pages read "INTRODUCTION" (a new user's walk,
    2026-12-07)."""
    words = text.casefold().translate(_QUOTES).split()
    return " ".join(_NUMBER_WORDS.get(w.rstrip(":.,"), w.rstrip(":.,")) + w[len(w.rstrip(":.,")):] for w in words)


def _toc_match(title: str, paras: list[Para]) -> Para | None:
    """The paragraph an outline title names: a short (1-3 line) paragraph equal to the title, or the title
    with a section number or a few characters around it (compared by :func:`title_key`). Never a line inside
    body text."""
    low = title_key(title)
    best, gap = None, None
    for p in paras:
        t = title_key(p.text)
        if p.kind != "text" or p.lines > 3 or len(t) > len(low) + 12:
            continue
        # the title with a few characters around it, or the paragraph is the title less its part number
        # ("Part I" above "The MuPDF C API" for the outline's "I The MuPDF C API")
        if t == low or (low in t and len(t) <= len(low) + 12) or (len(t) >= 8 and t in low and len(low) <= len(t) + 8):
            d = abs(len(t) - len(low))
            if gap is None or d < gap:  # the closest: "Naming Conventions" for its own entry, not for "Naming"
                best, gap = p, d
    return best


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
        uniq: dict[int, Heading] = {}
        for h in toc:  # two entries naming one paragraph: the one closest to its length holds it
            old = uniq.get(h.start)
            if old is None or abs(len(h.title) - (h.end - h.start)) < abs(len(old.title) - (old.end - old.start)):
                uniq[h.start] = h
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


def document_title(doc, reads: list[PageRead], headings: tuple[Heading, ...], name: str, spans: list[PageSpan],
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
