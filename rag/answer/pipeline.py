"""Design stages 7-8 put together: retrieve -> gate -> (refuse | generate) -> check citations.

:func:`search_and_gate` searches the store and applies the gate (the distance
gate, or the learned gate over it). The gate decides first. A refusal is a comparison of two numbers: it returns
the ``NO ANSWER`` result without loading or calling the model (the generator
is only looked up after the gate has passed something). Otherwise the model
streams an answer over the numbered sources, and the server

* removes ``[n]`` markers that refer to no source the model saw (counted) and
  the model's links and URLs, on the stream itself (:class:`rag.answer.check.attribute.CitationStreamFilter`),
  so an invalid marker is never shown;
* attaches the citations from the gate's sources (never from model text);
* checks every sentence against the sources (:func:`rag.answer.check.attribute.attribute`):
  lexical overlap of content words OR MiniLM cosine similarity, marks the
  unsupported ones, reports the ones cited to the wrong source, and attaches
  the best-supporting source, marked *inferred*, where the model cited nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from rag.answer.advice import CLOSEST, Closest, Searched
from rag.answer.asked_with import default_knobs
from rag.answer.check.attribute import (
    CitationStreamFilter,
    SentenceAttribution,
    attribute,
    clean_citations,
    lexical_support,
    split_sentences,
)
from rag.answer.check.confidence import needed_probes
from rag.answer.check.probes import TokenProbs, YesNo, answer_token_probs, probe_generator, yes_no
from rag.answer.cite import (
    Citation,
    citations,
    citations_from_rows,
    format_sources_for_prompt,
)
from rag.answer.excerpt import Excerpt, citation_views, prompt_excerpts, with_column_names
from rag.answer.gate import GateKnobs, GateResult, source_distance
from rag.answer.gate.calibrated_gate import store_calibration
from rag.answer.gate.gates import StoreContext, gate_for
from rag.answer.generate import FittedPrompt, Generator, TextGenerator, get_default_generator
from rag.answer.key_passage import KeyPassage, key_passage, page_spans, question_labels
from rag.answer.record import Answer, AnswerFrom  # noqa: F401  (AnswerFrom re-exported)
from rag.answer.roles import SUPPORTING
from rag.answer.tables import with_header
from rag.answer.translate import Translation, translate_question, translation_generator
from rag.settings import Settings
from rag.text import TermStats, strip_markers
from rag.types import DocStatus, QueryPlan

if TYPE_CHECKING:
    from rag.index.embed import Encoder
    from rag.store.store import Store

def source_headers(sources: Sequence[Citation]) -> list[str]:
    """The heading lines the model saw (``[n] heading``, :func:`rag.answer.cite.prompt_heading`), with and without
    the marker.

    A line of the answer that only repeats one of them is an echo of the prompt, not a claim.
    """
    out = []
    for c in sources:
        head = format_sources_for_prompt([c]).split("\n", 1)[0]
        out += [head, head.split("] ", 1)[-1]]
    return out


def cosine_support(embedder: Encoder, sentences: Sequence[str], quotes: Sequence[str]) -> np.ndarray:
    """``(n_sentences, n_sources)`` float32 cosine similarity of MiniLM embeddings (markers stripped)."""
    if not sentences or not quotes:
        return np.zeros((len(sentences), len(quotes)), dtype=np.float32)
    vecs = embedder.encode([strip_markers(s) for s in sentences] + list(quotes))
    return vecs[: len(sentences)] @ vecs[len(sentences) :].T


def check_answer(text: str, sources: Sequence[Citation], embedder: Encoder | None = None,
                 question: str | None = None) -> tuple[str, int, int, list[SentenceAttribution]]:
    """Server-side handling of a raw model answer over ``sources`` (the citations the model saw, whole quotes).

    Returns ``(clean_text, invalid_removed, links_removed, sentences)``;
    ``links_removed`` also counts lines that only echoed a source header. With
    ``embedder`` (:class:`rag.index.embed.Encoder`) the MiniLM leg joins the lexical one. With ``question``
    the claim check judges what each sentence adds to it (:func:`rag.answer.check.attribute.attribute`): an echo
    of the question is no claim, and its words never count as support. Hidden text and orders to the model
    inside a source (:func:`rag.answer.excerpt.hidden_spans`) never count as support either, nor do page
    furniture, reference-list entries, tables of contents and navigation lines (issue 24,
    :mod:`rag.answer.roles`); each number or name must sit in the same statement as the claim.
    """
    valid = [c.index for c in sources]
    clean = clean_citations(text, valid, source_headers(sources))
    sentences = split_sentences(clean.text)
    quotes = [with_header(view, c.columns, c.first_column)  # rows read with their column names (a walk, 2026-12-07)
              for c, (view, _) in zip(sources, citation_views(sources, keep=SUPPORTING))]  # what a claim may lean on
    lex = lexical_support(sentences, quotes, question)
    cos = cosine_support(embedder, sentences, quotes) if embedder is not None else None
    links = clean.links_removed + clean.labels_removed
    heads = [c.section[-1] if c.section else "" for c in sources]
    places = [" ".join((c.document_label or c.document_name, *c.section)) for c in sources]
    return clean.text, clean.invalid_removed, links, attribute(sentences, valid, lex, cos, question=question,
                                                               quotes=quotes, headings=heads, places=places)


def refused_answer(gate: GateResult, retrieval_ms: float | None = None, searched: Searched | None = None) -> Answer:
    """The gate's refusal as an :class:`Answer` (no model involved), with what was ``searched``."""
    return Answer(query=gate.query, gate=gate, retrieval_ms=retrieval_ms, searched=searched)


def default_settings_knobs(settings: Settings) -> dict[str, float | None]:
    """The knobs' defaults for the gate ``settings`` uses (:func:`rag.answer.asked_with.default_knobs` of the
    settings' field defaults, the gate's own cuts): what a refusal compares the knobs it was decided with to."""
    fields = type(settings).model_fields
    base = SimpleNamespace(gate=settings.gate, threshold=fields["threshold"].default,
                           max_sources=fields["max_sources"].default, min_score=None, mention_score=None)
    return default_knobs(base)  # type: ignore[arg-type]


def what_was_searched(store: Store, gate: GateResult, doc_ids: Sequence[str] | None = None,
                      settings: Settings | None = None) -> Searched:
    """What ``gate``'s question was searched in (issue 39, Deliver 3): the ready documents in scope (``doc_ids``,
    ``None``: all) by their citation label, how many the store holds, the :data:`rag.answer.advice.CLOSEST`
    passages nearest the question with their locators (by :func:`rag.answer.gate.source_distance` once not refused, else
    by whole-chunk distance), and the knobs' defaults (:func:`default_settings_knobs`)."""
    docs = [d for d in store.documents() if d.status == DocStatus.READY]
    wanted = None if doc_ids is None else set(doc_ids)
    in_scope = [d.label for d in docs if wanted is None or d.id in wanted]
    # once not refused, a passage is as near as the sources were kept by (its best unit's distance, issue 40), so
    # a unit-kept source is not missing from the list; a refusal was decided by whole-chunk distances: those
    distance = (lambda h: h.cosine_distance) if gate.refused else source_distance
    hits = sorted((h for h in gate.candidates if not math.isnan(h.cosine_distance)), key=distance)[:CLOSEST]
    rows = store.chunks([h.chunk_id for h in hits]) if hits else []
    # labels as the sources' are, two of one paragraph told apart by their opening words (cite.told_apart)
    closest = tuple(Closest(c.locator_label, float(distance(h)))
                    for h, c in zip(hits, citations_from_rows(hits, rows)))
    return Searched(documents=tuple(in_scope), total=len(docs), scoped=doc_ids is not None, closest=closest,
                    defaults=default_settings_knobs(settings or store.settings))


class AnswerStream:
    """Stream an answer: iterate for the cleaned text pieces; ``answer`` holds the :class:`Answer` at the end.

    ``gate`` is a ``rag.answer.gate.GateResult``; ``cites`` its numbered citations
    (``rag.answer.cite.citations``). If the gate refused, iteration yields nothing
    and ``answer`` is the refusal; ``get_generator`` is never called. Otherwise
    ``key_passage`` (:mod:`rag.answer.key_passage`) is ready as soon as the stream is made, before the model
    is looked up: show it first. The model answers once, in claims the server checks (re-asking, quote-then-answer
    and the model choosing the evidence were measured and not kept: docs/answers.md names the commits). Raises
    :class:`rag.errors.ModelError` (from ``get_generator``) when the model is missing or broken.
    """

    def __init__(
        self,
        gate: GateResult,
        cites: Sequence[Citation],
        settings: Settings,
        *,
        retrieval_ms: float | None = None,
        get_generator: Callable[[Settings], TextGenerator] | None = None,
        embedder: Encoder | None = None,
        term_stats: TermStats | None = None,
        searched: Searched | None = None,
        submitted: float | None = None,
    ):
        self.gate = gate
        #: ``time.perf_counter()`` when the question was submitted (issue 41, Deliver 5): ``first_words_ms`` runs
        #: from here; ``None``: from this stream's making (retrieval then not counted).
        self.submitted = time.perf_counter() if submitted is None else submitted
        self.searched = searched
        self.cites = list(cites)
        self.settings = settings
        self.retrieval_ms = retrieval_ms
        self._get_generator = get_generator
        self.embedder = embedder
        self.term_stats = term_stats
        self.excerpts: list[Excerpt] = []
        self.key_passage: KeyPassage | None = None
        if gate.refused:
            self.answer: Answer | None = refused_answer(gate, retrieval_ms, searched)
        else:
            self.answer = None
            self.key_passage = key_passage(gate.query, self.cites, term_stats)

    def _attempt(self, gen: TextGenerator) -> Iterator[str]:
        """One generation over the excerpts; yields cleaned pieces; sets ``self.answer`` to the checked result."""
        t0 = time.perf_counter()
        cap = self.settings.generation.max_answer_tokens
        prompt = gen.fit(self.gate.query, self.prompt_sources(gen.count_tokens), cap)
        prep_ms = (time.perf_counter() - t0) * 1000.0
        seen = [c for c in self.cites if c.index in {s.index for s in prompt.sources}]
        filt = CitationStreamFilter((c.index for c in seen), source_headers(seen))
        stream = gen.stream(prompt, cap)
        shown: float | None = None  # when the first cleaned words were handed on (to the screen, to stdout)
        for piece in stream:
            out = filt.feed(piece)
            if out:
                shown = shown or time.perf_counter()
                yield out
        tail = filt.finish()
        if tail:
            shown = shown or time.perf_counter()
            yield tail
        text, invalid, links, sentences = check_answer(stream.text, seen, self.embedder, self.gate.query)
        token_probs, yn = self._probes(gen, prompt)
        self.answer = Answer(
            query=self.gate.query, gate=self.gate, text=text, citations=tuple(seen), sentences=tuple(sentences),
            invalid_citations_removed=invalid, links_removed=links, model=gen.name, retrieval_ms=self.retrieval_ms,
            ttft_ms=None if stream.ttft_ms is None else stream.ttft_ms + prep_ms,
            first_words_ms=None if shown is None else (shown - self.submitted) * 1000.0,
            generation_ms=(stream.generation_ms or 0.0) + prep_ms, tokens=stream.tokens,
            dropped_sources=prompt.dropped, raw_text=stream.text,
            read_spans={c.index: e.spans for c, e in zip(self.cites, self.excerpts)
                        if not e.whole and c.index in {x.index for x in seen}},
            key_passage=self.key_passage, token_probs=token_probs, yes_no=yn, searched=self.searched,
        )

    def _probes(self, gen: TextGenerator, prompt: object) -> tuple[TokenProbs | None, YesNo | None]:
        """The model's own probes of the answer just written (:mod:`rag.answer.check.probes`, issue 39), those the shipped
        combiner reads (:func:`rag.answer.check.confidence.needed_probes`) and only with a real llama.cpp generator:
        the answer's token probabilities, and the yes/no probe over the key passage."""
        wanted = needed_probes()
        if not wanted or not isinstance(gen, Generator):
            return None, None
        n_prompt = len(prompt.tokens) if isinstance(prompt, FittedPrompt) else 0  # a Generator's fit gives one
        tp = answer_token_probs(gen, n_prompt) if "a" in wanted else None
        yn = None
        kp = self.key_passage
        if "b" in wanted and kp is not None and kp.sentences:
            yn = yes_no(probe_generator(self.settings), self.gate.query, kp.body or kp.text)
        return tp, yn

    def __iter__(self) -> Iterator[str]:
        if self.gate.refused:
            return
        yield from self._attempt((self._get_generator or get_default_generator)(self.settings))

    def prompt_sources(self, count: Callable[[str], int]) -> list[Citation]:
        """The citations as the model reads them: each ``quote`` replaced by its excerpt (:mod:`rag.answer.excerpt`):
        body text only, the key passage's units first (issue 24).

        ``settings.source_tokens`` (counted by ``count``, the generator's tokenizer) is shared by all
        sources; 0 keeps every chunk whole. The citations shown to the user keep the whole chunk.
        """
        budget = int(self.settings.generation.source_tokens)
        kp = self.key_passage
        must = [[(s.start, s.end) for s in kp.sentences if s.index == c.index] if kp else [] for c in self.cites]
        views = with_labels(self.cites, citation_views(self.cites), question_labels(self.gate.query, self.cites))
        ex = prompt_excerpts(self.gate.query, [c.quote for c in self.cites], budget, count, term_stats=self.term_stats,
                             views=views, must=must)
        ex = [with_column_names(c, e, skip) for c, e, (_, skip) in zip(self.cites, ex, views)]  # a walk, 2026-12-07
        self.excerpts = ex
        return [replace(c, quote=e.text) for c, e in zip(self.cites, ex)]

    def run(self) -> Answer:
        """Consume the stream; return the :class:`Answer`."""
        for _ in self:
            pass
        assert self.answer is not None
        return self.answer


def with_labels(cites: Sequence[Citation], views: list[tuple[str, list[tuple[int, int]]]],
                labels: Sequence[Sequence[tuple[int, int]]]) -> list[tuple[str, list[tuple[int, int]]]]:
    """``views`` (:func:`rag.answer.excerpt.citation_views`) with the record labels of each source
    (:func:`rag.answer.key_passage.question_labels`) read as body text: the model reads "Invoice 1044" before the
    total it labels (a walk, 2026-12-07: four invoices' totals read without their labels were told apart by guess)."""
    out = []
    for c, (view, skipped), labs in zip(cites, views, labels):
        if labs:
            keep = set(labs)
            view = "".join(c.quote[a:b] if (a, b) in keep else view[a:b]
                           for a, b in _pieces(len(view), [sp for sp in skipped if sp in keep]))
            skipped = [sp for sp in skipped if sp not in keep]
        out.append((view, skipped))
    return out


def _pieces(n: int, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``[0, n)`` cut at the edges of ``spans`` (sorted, disjoint): the spans and the stretches between them."""
    out, pos = [], 0
    for a, b in sorted(spans):
        if a > pos:
            out.append((pos, a))
        out.append((a, b))
        pos = b
    if pos < n:
        out.append((pos, n))
    return out


def no_generation_answer(gate: GateResult, cites: Sequence[Citation], retrieval_ms: float | None = None,
                         key_passage: KeyPassage | None = None, searched: Searched | None = None) -> Answer:
    """``--no-generate``: the gate's decision, its citations and ``key_passage``, ``text`` ``None``, no model
    loaded; ``searched`` what was searched."""
    if gate.refused:
        return refused_answer(gate, retrieval_ms, searched)
    return Answer(query=gate.query, gate=gate, citations=tuple(cites), retrieval_ms=retrieval_ms,
                  key_passage=key_passage, searched=searched)


def search_and_gate(store: Store, query: str, settings: Settings | None = None,
                    doc_ids: Sequence[str] | None = None) -> GateResult:
    """Search ``store`` (a :class:`rag.store.store.Store`) then gate (design stage 7, issues 8 and 15), with every
    knob from ``settings`` (default the store's; another value: ``settings.with_overrides(threshold=...)``).

    ``doc_ids`` (full ids) restricts the search, and so the gate, to those
    documents (issue 16's scope; ``None`` = all): a question about another
    document is refused, never answered from outside the scope.

    ``settings.gate`` a :class:`rag.types.GateKind`, looked up once in :data:`rag.answer.gate.gates.GATES`:
    ``calibrated`` (the default, issue 15) gives three verdicts from evidence read on this store's own scale;
    ``learned`` the distance gate AND issue 8's answerability score; ``distance`` the design's gate alone; its
    knobs are :meth:`rag.answer.gate.GateKnobs.from_settings` (threshold 0.675, max_sources 4, the shipped
    model's min_score / mention_score), over ``candidates_k`` hybrid hits. Raises ``ValueError`` for an
    unknown gate.
    """
    s = settings or store.settings
    strategy = gate_for(s.gate)
    scope = {} if doc_ids is None else {"doc_ids": list(doc_ids)}
    hits, plan = store.search_planned(query, k=s.retrieval.candidates_k, mode="hybrid", **scope)
    return replace(strategy.decide(query, hits, GateKnobs.from_settings(s), StoreContext(store)), plan=plan)


def searched_as(store: Store, query: str, settings: Settings,
                get_translator: Callable[[], TextGenerator] | None = None) -> Translation:
    """What ``query`` is searched as (issue 27, item 5): its translation into the documents' language when
    ``settings.translate_questions`` and its language is none of the documents' (:mod:`rag.answer.translate`;
    the model, ``get_translator()`` default :func:`rag.answer.translate.translation_generator`, is loaded only
    then), else ``query`` itself."""
    if not settings.retrieval.translate_questions or store.is_empty:
        return Translation(query)
    languages = store_calibration(store).languages
    return translate_question(query, languages, get_translator or (lambda: translation_generator(settings)))


def gated_sources(store: Store, query: str, settings: Settings | None = None,
                  doc_ids: Sequence[str] | None = None, *,
                  get_translator: Callable[[], TextGenerator] | None = None) -> tuple[GateResult, list[Citation], float]:
    """:func:`search_and_gate` with every knob from ``settings`` (default the store's), then the numbered
    citations of what it kept (:func:`rag.answer.cite.citations`); returns ``(gate, citations, ms)``, ``ms``
    covering the translation (:func:`searched_as`), embedding, both legs, fusion, the gate and the citation
    lookup. A translated question is searched, gated and answered as translated: ``gate.query`` is the
    translation, ``gate.plan`` keeps the question as asked with ``rewritten`` and ``translated_from``."""
    s = settings or store.settings
    t0 = time.perf_counter()
    tr = searched_as(store, query, s, get_translator)
    gate = search_and_gate(store, tr.query, s, doc_ids)
    if tr.translated:
        plan = gate.plan or QueryPlan(tr.query)
        gate = replace(gate, plan=replace(plan, query=query, rewritten=tr.query, translated_from=tr.source_language))
    cites = with_unit_cosines(store, gate.query, citations(gate, store), s)
    if spans := page_spans(gate.query, cites, store.term_stats()):
        # over a page break: open where the quoted sentences are (issue 42)
        cites = [replace(n, unit_cosines=o.unit_cosines) for n, o in zip(citations(gate, store, spans), cites)]
    return gate, cites, (time.perf_counter() - t0) * 1000.0


def with_unit_cosines(store: Store, query: str, cites: Sequence[Citation], settings: Settings) -> list[Citation]:
    """``cites`` each with the cosine similarity of ``query`` to its stored units
    (:attr:`rag.answer.cite.Citation.unit_cosines`, offsets into its quote), what the key passage's choice reads
    beside the words (:data:`rag.answer.key_passage.COSINE_WEIGHT`); unchanged without citations or with
    ``settings.unit_vectors`` off. The query's vector is the search's own (the encoder keeps the last one,
    :class:`rag.index.embed.LastQuery`); what it costs is one read of the sources' units."""
    if not cites or not settings.unit_vectors:
        return list(cites)
    got = store.index_cache.unit_cosines([c.chunk_id for c in cites], store.embedder.encode_query(query))
    return [replace(c, unit_cosines=tuple((a - c.start, b - c.start, cs) for a, b, cs in got.get(c.chunk_id, ())
                                          if c.start <= a and b <= c.end)) for c in cites]



def ask(
    store: Store,
    query: str,
    settings: Settings | None = None,
    *,
    get_generator: Callable[[Settings], TextGenerator] | None = None,
    doc_ids: Sequence[str] | None = None,
    submitted: float | None = None,
) -> AnswerStream:
    """Retrieve, gate and prepare the streamed answer for ``query`` over ``store`` (``rag.store.store.Store``).

    Every knob comes from the one ``settings`` (default the store's): the gate's (``gate``, ``threshold``,
    ``max_sources``, ``min_score``, ``mention_score``, ``candidates_k``) as well as the model's
    (``model_file``, ``source_tokens``, ``max_answer_tokens``, ...). ``doc_ids`` restricts retrieval and the gate to those
    documents (see :func:`search_and_gate`). A whole chat turn (follow-up, save) is
    :meth:`rag.answer.conversation.Conversation.ask`.

    Iterate the returned :class:`AnswerStream` for text (a refusal yields nothing and never touches the
    model), then read ``.answer``; its ``first_words_ms`` runs from this call (``submitted``, a
    ``time.perf_counter()`` taken earlier, when the question was submitted before).
    """
    t_submit = time.perf_counter() if submitted is None else submitted
    s = settings or store.settings
    gate, cites, ms = gated_sources(store, query, s, doc_ids)
    return AnswerStream(gate, cites, s, retrieval_ms=ms, get_generator=get_generator, embedder=store.embedder,
                        term_stats=None if gate.refused else store.term_stats(),
                        searched=what_was_searched(store, gate, doc_ids, s), submitted=t_submit)
