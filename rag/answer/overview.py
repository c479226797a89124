"""What's in a document (issue 29): its sections, and a short summary made of its own sentences.

A new user's first question is "what is in my documents?". The overview answers it without a model, so it
inherits the product's honesty: every summary sentence is a verbatim sentence of the document's body text
(never a heading, reference entry, table of contents, navigation line or page furniture:
:func:`rag.answer.roles.source_units`), with its locator and its offsets into the stored canonical text
(``canonical[start:end] == text``), so it opens in the viewer like a citation.

The sentences are picked with SumBasic (Nenkova & Vanderwende 2005, "The impact of frequency on
summarization"): a sentence scores the mean probability of its content words in the document's body text;
after each pick the probabilities of the words it used are squared, so the next pick says something else.
A sentence that cannot stand alone is never picked (one that opens with a pronoun or connective, "This
...", "However, ..."; a question; a fragment under :data:`MIN_WORDS` or a run-on over :data:`MAX_WORDS`),
and sections are covered before one is used twice; a section's first statements are preferred (:data:`LEAD`).
The picks are shown in document order.

An overview depends on the document alone (its id is the sha256 of its bytes), so it is computed once, by
the indexing worker after its queue is drained (or on first view for older stores), and kept with the store (:mod:`rag.store.derived`, removed with the document);
:func:`document_overview` returns it, computed or read back. Measured with ``scripts/overview_time.py``.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from rag.answer.cite import locator_label
from rag.answer.roles import source_units
from rag.ingest.office.pptx import NOTES_HEADING
from rag.store import derived
from rag.store.records import ChunkRow
from rag.text import content_words
from rag.types import PageSpan, TextRole, page_at

#: Bumped when what an overview holds or how it is picked changes (older kept overviews are recomputed).
OVERVIEW_VERSION = 2  # 2: a slide's "Speaker notes" is no section

#: Summary length: a short document gets :data:`SUMMARY_SENTENCES`, one of :data:`LONG_CHUNKS` chunks or more
#: gets :data:`LONG_SUMMARY_SENTENCES` (a 13-page paper in 3 sentences misses most of it).
SUMMARY_SENTENCES = 3
LONG_SUMMARY_SENTENCES = 5
LONG_CHUNKS = 40

#: A summary sentence has at least this many words (a fragment tells nothing) ...
MIN_WORDS = 7
#: ... and at most this many (a run-on, often a mis-split paragraph or a list read as one sentence).
MAX_WORDS = 45

#: How much a section's first statements are preferred: the score is multiplied by ``1 + LEAD / (1 + k)`` for
#: the k-th statement of its section (a section usually opens with what it is about).
LEAD = 0.5

#: Sections listed (a long PDF's detected headings can run into the hundreds), deepest level shown.
MAX_SECTIONS = 24
MAX_DEPTH = 2

#: A sentence that opens with one of these leans on the one before it and cannot stand alone in a summary.
_LEANS_BACK = re.compile(
    r"^(?:this|these|that|those|it|its|they|their|them|he|she|his|her|here|there|such|however|therefore|thus|"
    r"hence|also|and|but|or|so|then|moreover|furthermore|additionally|in addition|as a result|for example|"
    r"for instance|e\.g\.|i\.e\.|similarly|likewise|otherwise|instead|finally|first|second|third|next|"
    r"above|below|in this|in that|on the other hand|as (?:shown|mentioned|discussed|described|expected|we saw|you can see)|"
    r"now|let's|let us|great|okay|ok|oh|again|yes|no|well|sure|note|remember|before|after that|here's|"
    r"complete example|in the \w+ (?:below|above)|(?:as )?(?:shown|seen) (?:below|above))\b", re.IGNORECASE)
#: Links, code and formulas read badly out of context ("Complete example can be found [here](./x.py)."), and so
#: does a sentence about a figure, table or note of the document ("Other parameters are as in Fig. 1.").
_MARKUP = re.compile(r"\]\(|`|\\\(|\$\$|https?://|<[a-z/]|"
                     r"\b(?:fig(?:ure)?|table|chart|eq(?:uation)?|appendix|note)\.?\s*\d", re.IGNORECASE)
#: A "sentence" cut at an initial or a lone symbol ("... by Axel T.", "a fidelity F .").
_BAD_END = re.compile(r"(?:^|\s)[^\W\d_]\s*\.$")
#: A heading or caption set as a sentence: most words capitalised ("Quantum Computation under Micromotion.").
_SMALL = frozenset("a an and as at by for from in of on or the to with via under over into per vs".split())
_WORDS = re.compile(r"[^\W_]+(?:[.'’\-][^\W_]+)*")
_STRUCTURED = re.compile(r"^\s*(?:\||[-*+•▪◦‣>#]|\d{1,3}[.)]\s|```|\$\$)")


@dataclass(frozen=True)
class SummarySentence:
    """One summary sentence: ``text`` verbatim from the document, in chunk ``chunk_id``; ``start``/``end`` 0-based
    code point offsets into the canonical text (end exclusive); ``page`` the 1-based physical page (PDF) or
    ``None``; ``label`` where it is, as a citation's locator label (``paper.pdf, p. 5``, ``guide.md > Install``)."""

    text: str
    chunk_id: int
    start: int
    end: int
    page: int | None
    label: str


@dataclass(frozen=True)
class Section:
    """One section of the document: its heading ``title``, ``depth`` (1 = top level), the first chunk under it
    (``chunk_id``, ``start`` offset into the canonical text), its 1-based ``page`` (PDF) or ``None``."""

    title: str
    depth: int
    chunk_id: int
    start: int
    page: int | None


@dataclass(frozen=True)
class Overview:
    """A document's overview: its ``sections`` in order, its ``summary`` (verbatim sentences in document order),
    ``ms`` the time it took to compute, ``version`` :data:`OVERVIEW_VERSION`."""

    document_id: str
    sections: tuple[Section, ...]
    summary: tuple[SummarySentence, ...]
    ms: float = 0.0
    version: int = OVERVIEW_VERSION

    def to_json(self) -> str:
        return json.dumps({"version": self.version, "document_id": self.document_id, "ms": round(self.ms, 1),
                           "sections": [asdict(s) for s in self.sections],
                           "summary": [asdict(s) for s in self.summary]}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Overview:
        """Read back :meth:`to_json`. Raises ``ValueError`` for another version or a malformed text."""
        try:
            d = json.loads(text)
            if d.get("version") != OVERVIEW_VERSION:
                raise ValueError(f"overview version {d.get('version')} is not {OVERVIEW_VERSION}")
            return cls(d["document_id"], tuple(Section(**s) for s in d["sections"]),
                       tuple(SummarySentence(**s) for s in d["summary"]), float(d.get("ms", 0.0)))
        except (KeyError, TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"not an overview: {e}") from e


# --------------------------------------------------------------------------- sections


#: A heading that is a question of a quiz or an FAQ, not a section's subject: long and ending in "?"
#: ("1. What does it typically mean when training loss decreases but validation loss starts increasing?").
_QUIZ_ITEM = re.compile(r"^(?:\d{1,3}[.)]\s+)?\S+(?:\s+\S+){7,}\?$")

#: A heading that is extraction noise: a unit of 1-3 characters repeated ("kikikikikik", "gtgtgtgtg").
_NOISE = re.compile(r"(\w{1,3})\1{3,}")


def _clean_title(title: str) -> str:
    t = " ".join(title.split()).strip(" #*_")
    return "" if _NOISE.search(t) else t


def sections_of(rows: Sequence[ChunkRow], max_sections: int = MAX_SECTIONS, max_depth: int = MAX_DEPTH) -> list[Section]:
    """The headings of a document's chunks (``rows`` in document order), each once, at most ``max_depth`` deep,
    without reference lists and tables of contents, nor a slide's "Speaker notes"; the top level only when all levels would exceed
    ``max_sections``, then cut to ``max_sections``."""
    seen: dict[tuple[str, ...], Section] = {}
    for r in rows:
        if r.role in (TextRole.REFERENCES, TextRole.TOC, TextRole.NAVIGATION, TextRole.FURNITURE):
            continue
        path = tuple(_clean_title(t) for t in r.section)
        for depth in range(1, min(len(path), max_depth) + 1):
            key = path[:depth]
            if key[-1] == NOTES_HEADING:  # a slide's notes, not a section a reader goes to (it was listed per slide)
                break
            if key not in seen and key[-1] and not _QUIZ_ITEM.match(key[-1]):
                seen[key] = Section(key[-1], depth, r.chunk_id, r.start, r.page)
    out = list(seen.values())
    if len(out) > max_sections:
        top = [s for s in out if s.depth == 1]
        out = top if len(top) >= 2 else out
    return out[:max_sections]


# --------------------------------------------------------------------------- summary


@dataclass(frozen=True)
class _Candidate:
    row: ChunkRow
    a: int  # offsets into row.content
    b: int
    words: frozenset[str]
    order: int
    lead: int  # how many candidates of the same section come before it (0: the section's first statement)


def stands_alone(sentence: str) -> bool:
    """Whether ``sentence`` can be read alone in a summary: a statement (ends in ``.``; an exclamation is chatter
    in a tutorial) of :data:`MIN_WORDS`-:data:`MAX_WORDS` words, mostly letters, not a list/table/code line, no
    link, code or formula, not opening in lower case or with a word that leans on the sentence before or talks
    to the reader (:data:`_LEANS_BACK`: "This ...", "However, ...", "Now let's ...")."""
    s = " ".join(sentence.split())
    words = _WORDS.findall(s)
    if not (MIN_WORDS <= len(words) <= MAX_WORDS) or not s.endswith("."):
        return False
    if _STRUCTURED.match(sentence) or not s[:1].isupper() or _LEANS_BACK.match(s) or _MARKUP.search(s):
        return False
    if _BAD_END.search(s):
        return False
    big = [w for w in words if w.casefold() not in _SMALL]
    if big and sum(w[:1].isupper() for w in big) > 0.6 * len(big):
        return False
    letters = sum(1 for w in words if w.isalpha())
    return letters >= 0.7 * len(words)


def candidates(rows: Sequence[ChunkRow]) -> list[_Candidate]:
    """Every body sentence of ``rows`` that :func:`stands_alone`, with its content words, in document order."""
    out: list[_Candidate] = []
    per_section: Counter[tuple[str, ...]] = Counter()
    for r in rows:
        for u in source_units(r.content, role=r.role):
            if u.role != TextRole.BODY:
                continue
            text = r.content[u.start:u.end]
            if stands_alone(text):
                words = frozenset(content_words(text))
                if len(words) >= 3:
                    out.append(_Candidate(r, u.start, u.end, words, len(out), per_section[r.section]))
                    per_section[r.section] += 1
    return out


def sumbasic(cands: Sequence[_Candidate], n: int) -> list[_Candidate]:
    """``n`` candidates picked by SumBasic (module doc), one per section until every section has one, returned in
    document order. Ties go to the earlier sentence."""
    counts = Counter(w for c in cands for w in c.words)
    total = sum(counts.values()) or 1
    prob = {w: k / total for w, k in counts.items()}
    picked: list[_Candidate] = []
    used_sections: set[tuple[str, ...]] = set()
    left = list(cands)
    while left and len(picked) < n:
        fresh = [c for c in left if c.row.section not in used_sections] or left
        best = max(fresh, key=lambda c: (sum(prob[w] for w in c.words) / len(c.words) * (1 + LEAD / (1 + c.lead)),
                                         -c.order))
        picked.append(best)
        used_sections.add(best.row.section)
        left.remove(best)
        for w in best.words:
            prob[w] = prob[w] ** 2
        left = [c for c in left if len(c.words - picked[-1].words) >= 2]  # no near-repeat of a picked sentence
    return sorted(picked, key=lambda c: c.order)


def summary_of(rows: Sequence[ChunkRow], pages: Sequence[PageSpan] = (), n: int | None = None) -> list[SummarySentence]:
    """The summary of a document whose chunks are ``rows`` (document order); ``pages`` its page map (PDF), so each
    sentence carries the page it is on; ``n`` sentences (default by length, :data:`SUMMARY_SENTENCES`)."""
    if n is None:
        n = LONG_SUMMARY_SENTENCES if len(rows) >= LONG_CHUNKS else SUMMARY_SENTENCES
    out = []
    for c in sumbasic(candidates(rows), n):
        r = c.row
        start, end = r.start + c.a, r.start + c.b
        page = (page_at(pages, (start + end) // 2) or r.page) if pages and r.page is not None else r.page
        out.append(SummarySentence(r.content[c.a:c.b], r.chunk_id, start, end, page, locator_label(r, page)))
    return out


def compute_overview(store, doc_id: str) -> Overview:
    """The overview of document ``doc_id`` of ``store`` (a :class:`rag.store.store.Store`), computed now."""
    t0 = time.perf_counter()
    rows = store.document_chunks(doc_id)
    pages = store.page_map(doc_id)
    ov = Overview(doc_id, tuple(sections_of(rows)), tuple(summary_of(rows, pages)))
    return Overview(ov.document_id, ov.sections, ov.summary, (time.perf_counter() - t0) * 1000.0)


#: The name overviews are kept under (:mod:`rag.store.derived`).
KEPT_AS = f"overview-v{OVERVIEW_VERSION}"


def document_overview(store, doc_id: str) -> Overview:
    """The overview of ``doc_id``: read back from the store when it was computed before, else computed now
    (milliseconds to about a second for a long PDF: ``docs/ui.md``) and kept. Documents no longer stored
    lose theirs on the way (:func:`rag.store.derived.sweep`). Raises :class:`rag.errors.StoreError` when the
    document's chunks cannot be read."""
    kept = derived.read(store.path, doc_id, KEPT_AS)
    if kept is not None:
        try:
            return Overview.from_json(kept)
        except ValueError:
            pass
    ov = compute_overview(store, doc_id)
    if ov.sections or ov.summary or store.get_document(doc_id) is not None:
        derived.write(store.path, doc_id, KEPT_AS, ov.to_json())
        derived.sweep(store.path, {d.id for d in store.documents()})
    return ov
