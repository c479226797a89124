"""Page furniture of paged documents (stage 1; issues 13 and 28): running headers and footers.

A running line is a line in the top or bottom :data:`HEADER_ZONE` of the page whose text, digits ignored,
repeats on at least half of the pages (3 pages or more), counted over all pages and again over odd and
over even pages (books whose headers alternate). Such lines are taken out of the canonical text (so out of
chunks, key passages and claims) and recorded as dropped on purpose, so the coverage audit does not count
them as lost; the viewer still shows them, on the page itself.
"""

from __future__ import annotations

import re
from collections import Counter

from rag.ingest.layout import Line
from rag.ingest.pdf_page import PageRead

#: Share (0..1) of the page height, at the top and at the bottom, where running headers and footers sit.
HEADER_ZONE = 0.12


def _key(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text)).strip().lower()


def _is_margin(ln: Line) -> bool:
    return ln.y1 <= HEADER_ZONE * ln.page_h or ln.y0 >= (1 - HEADER_ZONE) * ln.page_h


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
