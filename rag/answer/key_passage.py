"""The key passage (issue 14): the sentence(s) of the gated sources that best answer the question, verbatim.

Shown right after retrieval, before the model writes a word, so a user sees cited evidence at once; and
it stands as the answer (with a plain note) when the model's answer is empty, declines, or fails the
claim check. Pure and fast (about 1 ms): no model, only the excerpt scorer's IDF-weighted term overlap
(:func:`rag.answer.excerpt.lexical_overlap`) over short runs of the chunker's own units
(:func:`rag.text.units`: sentences; lines of tables, lists and code).

Every sentence is a span of its source's ``quote`` (the chunk ``content``): ``quote[start:end] == text``.
Text hidden in the source format (HTML comments) and sentences giving the model orders
(:func:`rag.answer.excerpt.hidden_spans`) are never chosen; nor is anything that is not body text (issue 24,
item 2: :mod:`rag.answer.roles`, with ingest's rules of :mod:`rag.ingest.unit_roles`): slide footers, running heads, one-word and title-only units, reference-list
entries, tables of contents, navigation lines. A stretch never runs across such a unit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answer.check.claims import holds, specifics
from rag.answer.check.lists import LIST_LINE
from rag.answer.check.records import label_before, record_labels
from rag.answer.cite import Citation
from rag.answer.excerpt import citation_views, lexical_overlap, readable, visible
from rag.answer.roles import repeated_lines, source_units
from rag.question import analyse, asked
from rag.text import TABLE_RULE_LINES, TermStats, units
from rag.types import LocatorKind, TextRole

#: At most this many characters of key passage (about two or three sentences of prose).
MAX_CHARS = 400
#: At most this many consecutive units (sentences, lines) in the key passage.
MAX_UNITS = 3
#: Weight of the source's rank (1 for the first source, falling as 1/rank) added to a stretch's score, so that
#: between equal overlaps the better-retrieved source wins.
RANK_WEIGHT = 0.1
#: Weight of the question's best cosine similarity to a stretch's units (the store's unit vectors, issue 27) in
#: the stretch's ranking, beside its lexical share: a user's words share few of the passage's, and the meaning
#: then chooses between stretches the words score alike. Chosen on the course chapters among 0 / 0.25 / 0.5 / 1
#: (saved answers re-scored, docs/answers.md "The key passage read by meaning too"); held out on pdf-dev and
#: real.
COSINE_WEIGHT = 0.25


@dataclass(frozen=True)
class KeySentence:
    """One verbatim piece of the key passage: ``index`` the source number ``n``; ``start``/``end`` character
    offsets into that source's ``quote`` (``quote[start:end] == text``); ``locator_label`` where it is."""

    index: int
    text: str
    start: int
    end: int
    locator_label: str
    score: float

    def to_json(self) -> dict:
        return {"index": self.index, "text": self.text, "start": self.start, "end": self.end,
                "locator_label": self.locator_label, "score": round(float(self.score), 4)}


@dataclass(frozen=True)
class KeyPassage:
    """The key passage of one question: its :class:`KeySentence` pieces (consecutive units of one source, in
    document order), ``body`` the source's text from the first to the last (verbatim, hidden parts removed),
    and the milliseconds it took to choose them (after retrieval)."""

    sentences: tuple[KeySentence, ...]
    ms: float = 0.0
    body: str = ""

    @property
    def text(self) -> str:
        """The passage ending in its source marker: ``"Sentence one. Sentence two. [2]"``."""
        if not self.sentences:
            return ""
        body = self.body or " ".join(s.text.strip() for s in self.sentences)
        return f"{body.strip()} [{self.sentences[0].index}]"

    @property
    def index(self) -> int | None:
        """The source number the passage comes from (``None`` when empty)."""
        return self.sentences[0].index if self.sentences else None

    def to_json(self) -> dict:
        """``{"text", "index", "body", "locator_label", "sentences": [...], "ms"}`` (``ask --json``'s ``key_passage``)."""
        return {"text": self.text, "index": self.index, "body": self.body,
                "locator_label": self.sentences[0].locator_label if self.sentences else None,
                "sentences": [s.to_json() for s in self.sentences], "ms": round(self.ms, 1)}

    @classmethod
    def from_json(cls, d: dict | None) -> KeyPassage | None:
        """The inverse of :meth:`to_json` (``None`` for ``None`` or ``{}``; derived keys such as ``text`` ignored)."""
        if not d:
            return None
        keys = KeySentence.__dataclass_fields__
        return cls(sentences=tuple(KeySentence(**{k: v for k, v in s.items() if k in keys}) for s in d.get("sentences") or []),
                   ms=float(d.get("ms") or 0.0), body=d.get("body") or "")


#: A Markdown table's separator row (``|---|:--:|``), the line after its header row.
_SEPARATOR = TABLE_RULE_LINES


def without_table_headers(text: str) -> str:
    """``text`` with every Markdown table's header and separator rows replaced by as many spaces (offsets kept).

    The key passage is scored on this: a header row holds the column names a question tends to repeat ("which
    type code ...?"), so on its own it outscored the row holding the answer (a spreadsheet's header alone, found
    trying the app). The rows, headers included, are still what the passage quotes.
    """
    out = list(text)
    for m in _SEPARATOR.finditer(text):
        head_end = m.start() - 1  # the newline ending the header row
        if head_end <= 0 or text[head_end] != "\n":
            continue
        head_start = text.rfind("\n", 0, head_end) + 1
        if not text[head_start:head_end].lstrip().startswith("|"):
            continue
        for i in range(head_start, m.end()):
            if out[i] != "\n":
                out[i] = " "
    return "".join(out)


def _runs(quote: str, view: str) -> list[list[tuple[int, int]]]:
    """The units of ``view`` (``quote`` with its skipped parts blanked) in runs of neighbours: a run breaks
    where ``quote`` holds anything but whitespace between two units (a skipped unit)."""
    us = [u for u in units(view) if view[u[0]:u[1]].strip()]
    runs: list[list[tuple[int, int]]] = []
    for u in us:
        if runs and not quote[runs[-1][-1][1]:u[0]].strip():
            runs[-1].append(u)
        else:
            runs.append([u])
    return runs


def stretches(quote: str, max_units: int = MAX_UNITS, max_chars: int = MAX_CHARS, view: str | None = None,
              ) -> list[list[tuple[int, int]]]:
    """Every run of 1..``max_units`` consecutive units (:func:`rag.text.units`) of ``view`` (default:
    the visible text of ``quote``, :func:`rag.answer.excerpt.visible`) within ``max_chars`` (a single unit
    always counts), as lists of ``(start, end)`` offsets; a stretch never runs across a skipped unit."""
    view = visible(quote) if view is None else view
    out = []
    for us in _runs(quote, view):
        for k in range(len(us)):
            for n in range(1, max_units + 1):
                if k + n > len(us) or (n > 1 and us[k + n - 1][1] - us[k][0] > max_chars):
                    break
                out.append(us[k:k + n])
    return out


#: In a follow-up read with the conversation ("And what should happen to the token after an explicit logout?
#: (standard claims verified)", :func:`rag.question.asked`), the bracketed words weigh this much against the user's
#: own in the key passage's score: at full weight the previous question's "standard claims verified" chose the
#: passage about verifying claims over the one about logout, and an answer from it was shown as supported (a new
#: user's walk, 2026-12-06).
CONTEXT_WEIGHT = 0.5


def key_passage(query: str, sources: Sequence[Citation], term_stats: TermStats | None = None,
                max_chars: int = MAX_CHARS, max_units: int = MAX_UNITS) -> KeyPassage:
    """The key passage of ``query`` over the gated ``sources`` (numbered citations, best first).

    Among every stretch of up to ``max_units`` consecutive units of one source (:func:`stretches`), the one
    whose words cover the largest IDF-weighted share of the question's BM25 terms
    (:func:`rag.answer.excerpt.lexical_overlap`, the excerpt scorer), plus :data:`RANK_WEIGHT` / source rank,
    plus, when the sources carry the question's cosine to their units (:attr:`rag.answer.cite.Citation.unit_cosines`,
    :func:`rag.answer.pipeline.gated_sources`), :data:`COSINE_WEIGHT` x the best of them in the stretch;
    on a tie the better source, then the earlier place, then the shorter stretch. A stretch ending in a
    colon brings the unit it introduces (a formula, a table row) when that fits ``max_chars``, and
    when that is a list item, its following items too, as many as fit (docx4j's "It supports the recent Java long
    term releases:" quoted with Java 11 and not Java 17, seen in the app).

    Measured on the dev questions of both shared corpora (issue 14, ``bench answers --no-generate``): the
    key passage held the answer keys for 19/24 + 8/24 (course, documents' / ticket wording) and 23/30 +
    13/30 (pdf-dev) with stretches of up to 3 units in 400 characters, against 18 + 6 and 20 + 7 for the
    single best sentence; adding MiniLM cosine to the score did not help and cost 270-650 ms.
    Empty when there are no sources or they hold no visible text.
    """
    t0 = time.perf_counter()
    views = citation_views(sources)
    ranked = scored_stretches(query, sources, term_stats, max_chars, max_units, views)
    if not ranked:
        return KeyPassage((), (time.perf_counter() - t0) * 1000.0)
    return passage_from(ranked[0], sources, views, max_chars, t0)


@dataclass(frozen=True)
class Stretch:
    """A candidate key passage: ``score`` (lexical share plus the rank bonus), ``source`` the position of its
    citation in the sources (0-based), ``spans`` its units' offsets into that citation's quote, in order;
    ``cosine`` the question's best cosine similarity to its units (:func:`stretch_cosine`, 0 without unit scores).
    Stretches are ranked by :attr:`rank_score`; ``score`` alone is what the key passage keeps (the verdict's key
    score reads it, so its cut stays on the lexical scale)."""

    score: float
    source: int
    spans: tuple[tuple[int, int], ...]
    cosine: float = 0.0

    @property
    def rank_score(self) -> float:
        return self.score + COSINE_WEIGHT * self.cosine

    def overlaps(self, other: Stretch) -> bool:
        """Whether both stretches share a character of the same source."""
        return self.source == other.source and self.spans[0][0] < other.spans[-1][1] and other.spans[0][0] < self.spans[-1][1]


def scored_stretches(query: str, sources: Sequence[Citation], term_stats: TermStats | None = None,
                     max_chars: int = MAX_CHARS, max_units: int = MAX_UNITS,
                     views: Sequence[tuple[str, Sequence[tuple[int, int]]]] | None = None) -> list[Stretch]:
    """Every stretch of every source (:func:`stretches` of its body text) with its score, best first (module
    doc of :func:`key_passage`: IDF-weighted share of the question's terms plus :data:`RANK_WEIGHT` / rank;
    ties: the better source, then the earlier place, then the shorter stretch)."""
    terms = set(analyse(query).terms)
    weights = term_stats.weights(terms) if term_stats is not None else {t: 1.0 for t in terms}
    own = set(analyse(asked(query)).terms)
    if own and own != terms:  # a follow-up: the user's own words lead, the conversation's words help
        weights = {t: w * (1.0 if t in own else CONTEXT_WEIGHT) for t, w in weights.items()}
    views = citation_views(sources) if views is None else views
    with_cosines = any(c.unit_cosines for c in sources)
    labels = question_labels(query, sources)
    out = []
    for j, c in enumerate(sources):
        scored = without_table_headers(views[j][0])
        for st in stretches(c.quote, max_units, max_chars, views[j][0]):
            text = scored[st[0][0]:st[-1][1]]
            if labels[j] and (lab := label_before(labels[j], st[0][0])):  # read with its record's label
                text = f"{c.quote[lab[0]:lab[1]]}\n{text}"
            score = lexical_overlap(terms, text, weights) + RANK_WEIGHT / (j + 1)
            out.append(Stretch(score, j, tuple(st), stretch_cosine(c, st[0][0], st[-1][1]) if with_cosines else 0.0))
    order = sorted(range(len(out)), key=lambda k: (-round(out[k].rank_score, 9), k))  # ties: the first seen
    return [out[k] for k in order]


def question_labels(query: str, sources: Sequence[Citation]) -> list[list[tuple[int, int]]]:
    """Per source, the offsets into its quote of the headings that label records of one kind when the question names
    one of them (:func:`rag.answer.check.records.record_labels`: "Invoice 1043" ... "Invoice 1046", asked "the total
    due on invoice 1044"); ``[]`` for the others. Headings are otherwise never read by the model nor scored for the
    key passage (issue 24, item 2)."""
    named = specifics(asked(query))
    if not named:
        return [[] for _ in sources]
    repeated = repeated_lines(c.quote for c in sources)
    out = []
    for c in sources:
        heads = [(u.start, u.end) for u in source_units(c.quote, role=c.role, repeated=repeated) if u.role == TextRole.HEADING]
        out.append(record_labels(c.quote, heads, named, specifics, holds) if len(heads) >= 2 else [])
    return out


def stretch_cosine(c: Citation, start: int, end: int) -> float:
    """The question's best cosine similarity to a unit of ``c`` overlapping ``c.quote[start:end]``
    (:attr:`rag.answer.cite.Citation.unit_cosines`); a source without unit vectors (a chunk of one unit) counts
    its own, ``1 - cosine_distance`` (0 when unknown)."""
    best = max((cs for a, b, cs in c.unit_cosines if a < end and start < b), default=None)
    if best is not None:
        return best
    return 0.0 if math.isnan(c.cosine_distance) else 1.0 - float(c.cosine_distance)


def best_spans(query: str, sources: Sequence[Citation], term_stats: TermStats | None = None) -> dict[int, tuple[int, int]]:
    """Per source number, the ``(start, end)`` offsets into its quote of its best stretch (:func:`scored_stretches`:
    the one the key passage quotes when that source holds it), for sources whose best stretch shares a term with
    the question. Where a PDF citation opens (issue 42: "p. 1 (pp. 1-2)" opened page 1, the quoted sentences were
    on page 2: the page was chosen by another sentence than the key passage's)."""
    out: dict[int, tuple[int, int]] = {}
    for st in scored_stretches(query, sources, term_stats):
        c = sources[st.source]
        if c.index not in out and (st.score - RANK_WEIGHT / (st.source + 1) > 0 or st.cosine > 0):
            out[c.index] = (st.spans[0][0], st.spans[-1][1])
    return out


def page_spans(query: str, sources: Sequence[Citation], term_stats: TermStats | None = None) -> dict[int, tuple[int, int]]:
    """Per chunk id, the ``(start, end)`` offsets into its content of the stretch a PDF locator places its page by
    (:func:`best_spans`), for the sources that run over a page break (issue 42); ``{}`` when none does: where the
    chat's citations open (:func:`rag.answer.pipeline.gated_sources`). Search hits, which quote no key passage,
    keep the single-sentence rule (:func:`rag.answer.cite.evidence_pages`): on pdf-dev's 58 needles found in the
    top 20 it put 56 on the needle's page, this rule 55 (2026-12-04)."""
    if not any(c.locator is not None and c.locator.kind == LocatorKind.PAGE and c.locator.first != c.locator.last
               for c in sources):
        return {}
    spans = best_spans(query, sources, term_stats)
    return {c.chunk_id: spans[c.index] for c in sources if c.index in spans}


def distinct(ranked: Sequence[Stretch], k: int) -> list[Stretch]:
    """The first ``k`` stretches of ``ranked`` that share no text with a better one (the candidates a selector
    chooses among: three versions of the same place waste its list)."""
    out: list[Stretch] = []
    for st in ranked:
        if len(out) >= k:
            break
        if not any(st.overlaps(o) for o in out):
            out.append(st)
    return out


def passage_from(best: Stretch, sources: Sequence[Citation], views: Sequence[tuple[str, Sequence[tuple[int, int]]]],
                 max_chars: int = MAX_CHARS, t0: float | None = None) -> KeyPassage:
    """The :class:`KeyPassage` of stretch ``best``; a stretch ending in a colon brings the unit it introduces
    when that fits ``max_chars`` (a list: its items, as many as fit). ``t0``: ``time.perf_counter()`` when the choice began (for ``ms``)."""
    score, j, spans = best.score, best.source, list(best.spans)
    c = sources[j]
    shown, skipped = views[j]
    if shown[spans[-1][0]:spans[-1][1]].rstrip().endswith(":"):
        after = [u for u in units(shown) if u[0] >= spans[-1][1] and shown[u[0]:u[1]].strip()]
        for k, u in enumerate(after):
            if (u[1] - spans[0][0] > max_chars or c.quote[spans[-1][1]:u[0]].strip()
                    or (k and not (LIST_LINE.match(shown[u[0]:u[1]]) and LIST_LINE.match(shown[after[0][0]:after[0][1]])))):
                break
            spans.append(u)
    out = tuple(KeySentence(c.index, c.quote[a:b], a, b, c.locator_label, score) for a, b in spans)
    body = readable(c.quote, spans[0][0], spans[-1][1], skipped)
    return KeyPassage(out, (time.perf_counter() - t0) * 1000.0 if t0 is not None else 0.0, body)
