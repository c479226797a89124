"""Text-coverage audit of stage 1 (issue 13, item 1): no rule of the extractor may drop body text silently.

For every PDF page the reference is what PyMuPDF itself extracts with plain ``page.get_text()``; the audit
counts how many of its words survive in the stored canonical text of that page.

Words: runs of letters and digits of the NFKC, case-folded text, and each single character of a script
written without spaces (Chinese, Japanese, Thai ...: the same characters broken into other lines or read
one per line in vertical text are the same words) (so ligatures, case and punctuation do not count; nor do the ``_`` placeholders plain ``get_text`` writes for glyphs with no Unicode mapping,
such as icons).
A reference word is *found* when the page's canonical words still hold one (a multiset: each canonical
word is used once), or when it and the next reference word joined are a canonical word (a line-end
hyphen removed: ``cli-`` + ``mate``), also across a page break into the neighbouring pages. Words the
extractor dropped on purpose and said so (running headers and footers) are passed as ``excluded`` and
leave the denominator.

:func:`page_coverage` returns a :class:`PageCoverage` per page; :data:`MIN_PAGE_COVERAGE` (99 %) is the
level under which a page is listed in the document's warnings.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

#: A page whose coverage is under this share (0..1) is listed in a warning (issue 13).
MIN_PAGE_COVERAGE = 0.99

#: Scripts written without spaces between words (Han, kana, Thai, Lao, Khmer, Myanmar): each character is a
#: word of the audit, so a line broken anywhere, or vertical text read one character per line, compares
#: like with like (issue 28: vertical Japanese read right was flagged at 25 % coverage).
_UNSPACED = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
_WORD = re.compile(f"[{_UNSPACED}]|[^\\W_{_UNSPACED}]+")
#: Spacing accents (a TeX font's accent glyphs), dropped with the combining marks before words are read.
_SPACING = frozenset("`\u00b4\u00a8\u02c6\u02dc\u02c7\u02d8\u02da")


def words(text: str) -> list[str]:
    """The audit's words of ``text``: runs of letters and digits of its NFKC, case-folded form without accents, in
    order (the text layer's "Mazi`eres" and the canonical "Mazi\u00e8res" are one word, "mazieres": the extractor
    composes a TeX font's spacing accents, :func:`rag.ingest.pdf.pdf_text.spacing_accents`); a character of a script
    written without spaces (:data:`_UNSPACED`) is a word by itself."""
    bare = "".join(ch for ch in unicodedata.normalize("NFKD", "".join(c for c in text if c not in _SPACING))
                   if not unicodedata.combining(ch))
    return _WORD.findall(unicodedata.normalize("NFKC", bare).casefold())


@dataclass(frozen=True)
class PageCoverage:
    """Coverage of one page: ``page`` 1-based physical; ``reference`` PyMuPDF's words on it (excluded
    ones left out); ``found`` how many of them the canonical text holds; ``missing`` a few of the
    missing words, for the report."""

    page: int
    reference: int
    found: int
    missing: tuple[str, ...] = ()

    @property
    def share(self) -> float:
        """``found / reference`` (1.0 for a page with no reference word)."""
        return self.found / self.reference if self.reference else 1.0


def _neighbours(j: int, n: int) -> list[tuple[int, ...]]:
    """The runs of reference words that word ``j`` (of ``n``) may be a piece of, nearest first: with a neighbour
    (a removed line-end hyphen), with the word two away (+-2: a margin note between the halves, ``cor-`` ``\\and``
    ``rect``), then three in a row (a ligature the text layer cut twice: ``speci`` ``f`` ``ies``)."""
    runs = [(j - 1, j), (j, j + 1), (j - 2, j), (j, j + 2), (j - 2, j - 1, j), (j - 1, j, j + 1), (j, j + 1, j + 2)]
    return [r for r in runs if r[0] >= 0 and r[-1] < n]


def _joinable(ref: list[str], run: tuple[int, ...]) -> bool:
    """Whether the reference words of ``run`` may be pieces of one word: two always; three only around a middle piece
    of one or two letters (a ligature cut twice: ``speci`` ``f`` ``ies``), so three whole words glued by the extractor
    ("Breakingnewstoday") still count as lost (a review, 2026-12-07)."""
    return len(run) < 3 or len(ref[run[1]]) <= 2


def _match(ref: list[str], have: Counter, spare: Sequence[Counter]) -> tuple[int, list[str]]:
    """Found reference words and the missing ones: exact matches first (as multisets), then each
    unmatched word joined with its neighbours (:func:`_neighbours`) among the canonical words left
    over, then a fragment carried onto a neighbouring page."""
    unmatched = Counter(ref) - have
    left = have - Counter(ref)
    found = len(ref) - sum(unmatched.values())
    for j, w in enumerate(ref):
        if unmatched[w] <= 0:
            continue
        for span in _neighbours(j, len(ref)):
            if not _joinable(ref, span):
                continue
            joined = "".join(ref[k] for k in span)
            pool = next((c for c in (left, *spare) if c[joined] > 0), None)
            if pool is not None:
                pool[joined] -= 1
                for k in span:
                    if unmatched[ref[k]] > 0:
                        unmatched[ref[k]] -= 1
                        found += 1
                break
        else:
            pool = next((c for c in spare if c[w] > 0), None)
            if pool is None and j in (0, len(ref) - 1) and len(w) > 1:  # a word split over the page break
                pool = next((c for c in spare for x in c if c[x] > 0 and x != w
                             and (x.endswith(w) if j == 0 else x.startswith(w))), None)
                if pool is not None:
                    pool = Counter({w: 1})
            if pool is not None and len(w) > 1:
                pool[w] -= 1
                unmatched[w] -= 1
                found += 1
    return found, [w for w in ref if unmatched[w] > 0 and not unmatched.subtract({w: 1})]


def page_coverage(reference: Sequence[str], canonical_pages: Sequence[str],
                  excluded: Sequence[Sequence[str]] | None = None) -> list[PageCoverage]:
    """Per-page coverage of ``reference`` (PyMuPDF's plain text of each page) by ``canonical_pages`` (the
    stored canonical text of each page, same length). ``excluded`` optionally gives, per page, texts
    dropped on purpose (running headers/footers): their words leave the reference. Returns one
    :class:`PageCoverage` per page, 1-based."""
    if len(reference) != len(canonical_pages):
        raise ValueError(f"{len(reference)} reference pages for {len(canonical_pages)} canonical pages")
    have = [Counter(words(t)) for t in canonical_pages]
    out = []
    for i, ref_text in enumerate(reference):
        ref = words(ref_text)
        drop = Counter(w for t in (excluded[i] if excluded else ()) for w in words(t))
        kept = []
        for w in ref:
            if drop[w] > 0:
                drop[w] -= 1
            else:
                kept.append(w)
        spare = [have[j] for j in (i - 1, i + 1) if 0 <= j < len(have)]
        found, missing = _match(kept, have[i], spare)
        out.append(PageCoverage(i + 1, len(kept), found, tuple(missing[:12])))
    return out


def low_pages(cov: Sequence[PageCoverage], floor: float = MIN_PAGE_COVERAGE) -> list[PageCoverage]:
    """The pages whose coverage is under ``floor`` (0..1)."""
    return [c for c in cov if c.share < floor]

