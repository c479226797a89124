"""Design stage 6 by the local model (issue 27, item 2): a single-pass listwise re-rank of the gate's candidates.

No cross-encoder can be installed offline, but the product has a reader: the GGUF model. After the search
and the gate, the first :data:`RERANK_CANDIDATES` candidates the gate would take as sources (under the
cosine-distance threshold, duplicates collapsed) are shown to the model in one prompt, each as its unit
(sentence, list item, table row) closest to the question, and the model's next-token distribution over
their numbers scores them (:func:`rag.answer.listwise.listwise_scores`, FIRST-style, debiased over
permuted orders: the one primitive, shared with issue 24's evidence selector). A candidate's final score
is its fused position's prior plus ``weight`` times the model's share (:func:`rag.answer.listwise.combine`),
and the gate's sources are the first ``max_sources`` of that order.

What it never changes: the gate's verdict, score and evidence are the gate's, read on the fused list
before the model runs, so a refusal is still a comparison of numbers and never loads the model; only
which of the gate's candidates are shown, and in what order, is the model's. ``ask --json`` says so
(``retrieval.reranked``).

It runs only where it may pay (:func:`should_rerank`): when BM25's best chunk covers little of the question
(the fusion's BM25 weight under :data:`RERANK_BELOW_BM25_WEIGHT`), i.e. a question in a user's words.
Measured on both dev corpora (``docs/evaluation.md``, issue 27): see there for whether it is on by default
(setting ``model_rerank``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from rag.answer.gate import GateResult
from rag.answer.listwise import MAX_ITEMS, ListwiseResult, combine, listwise_scores, selector_generator
from rag.errors import ModelError
from rag.ingest.chunk import UNIT_MIN_WORDS
from rag.text import units
from rag.types import Hit

if TYPE_CHECKING:
    from rag.store.store import Store

log = logging.getLogger(__name__)

#: Candidates shown to the model (at most :data:`rag.answer.listwise.MAX_ITEMS`): the gate's first eight,
#: so a passage fused 5th to 8th can become a source.
RERANK_CANDIDATES = 8

#: Permuted orders averaged (:func:`rag.answer.listwise.orders_for`): the list and its reverse.
RERANK_ORDERS = 2

#: Tokens of each candidate's unit the model reads (the prompt read is the cost).
RERANK_ITEM_TOKENS = 48

#: The model's share counts this much against the fused position's prior (fitted leave-one-corpus-out).
RERANK_WEIGHT = 1.0

#: Re-rank only when the fusion gave BM25 less than this weight (its best chunk covers little of the question).
RERANK_BELOW_BM25_WEIGHT = 1.0


def should_rerank(gate: GateResult, below: float = RERANK_BELOW_BM25_WEIGHT) -> bool:
    """True when ``gate`` passed something, has at least two candidates to order, and its search gave BM25 a
    weight under ``below`` (``gate.plan.bm25_weight``; a gate without a plan is never re-ranked)."""
    if gate.refused or gate.plan is None or gate.plan.bm25_weight >= below:
        return False
    return len(eligible(gate)) > 1


def eligible(gate: GateResult, n: int = RERANK_CANDIDATES) -> list[Hit]:
    """The first ``n`` of ``gate.candidates`` (fused order, duplicates already collapsed) under its threshold:
    what the gate could take as sources."""
    return [h for h in gate.candidates if h.cosine_distance < gate.threshold][:n]


def best_unit(content: str, head: str, q_vec: np.ndarray, encode: Callable[[list[str]], np.ndarray]) -> str:
    """The unit of ``content`` (:func:`rag.text.units`, ``UNIT_MIN_WORDS`` words or more) closest to the question
    vector ``q_vec`` ((dim,) float32, unit norm), each embedded as the store embeds units (``head`` + unit);
    ``content`` itself when it has fewer than two such units."""
    spans = [(a, b) for a, b in units(content) if len(content[a:b].split()) >= UNIT_MIN_WORDS]
    if len(spans) < 2:
        return content
    vecs = np.asarray(encode([head + content[a:b] for a, b in spans]), dtype=np.float32)
    a, b = spans[int(np.argmax(vecs @ np.asarray(q_vec, np.float32)))]
    return content[a:b]


def rerank_items(store: Store, question: str, hits: Sequence[Hit]) -> list[str]:
    """Each hit's best unit for ``question`` (:func:`best_unit`), with the store's embedder; one batched encode."""
    rows = store.chunks([h.chunk_id for h in hits])
    emb = store.embedder
    q_vec = emb.encode_query(question)
    out = []
    for r in rows:
        head = r.text[: len(r.text) - len(r.content)] if r.text.endswith(r.content) else ""
        out.append(best_unit(r.content, head, q_vec, emb.encode))
    return out


def reorder(hits: Sequence[Hit], model_scores: Sequence[float], weight: float = RERANK_WEIGHT) -> list[Hit]:
    """``hits`` (fused order) sorted by prior + ``weight`` x the model's share (:func:`rag.answer.listwise.combine`):
    the prior falls from 1 for the first hit to ``1/n`` for the last, so ``weight`` 0 keeps the fused order and a
    large one is the model's order. Ties keep the fused order. Each hit gets its new ``rank`` and, as
    ``rerank_score``, its combined score."""
    n = len(hits)
    prior = [1.0 - i / n for i in range(n)]
    score = combine(prior, model_scores, weight)
    order = sorted(range(n), key=lambda i: (-float(score[i]), i))
    return [replace(hits[i], rank=k, rerank_score=float(score[i])) for k, i in enumerate(order, start=1)]


def model_rerank(store: Store, gate: GateResult, *, get_selector: Callable[[], Any] | None = None,
                 weight: float = RERANK_WEIGHT, orders: int = RERANK_ORDERS,
                 candidates: int = RERANK_CANDIDATES) -> tuple[GateResult, ListwiseResult | None]:
    """``gate`` with its sources chosen from its first ``candidates`` eligible candidates in the model's order
    (module doc); its verdict, score and evidence unchanged, ``plan.reranked`` set. ``get_selector()`` default
    :func:`rag.answer.listwise.selector_generator`. Returns ``(gate, the listwise result)``; a gate with fewer
    than two eligible candidates is returned as it is (``None``), and so is one whose model fails
    (:class:`rag.errors.ModelError`, logged)."""
    pool = eligible(gate, min(candidates, MAX_ITEMS))
    if gate.refused or len(pool) < 2:
        return gate, None
    items = rerank_items(store, gate.query, pool)
    try:
        res = listwise_scores(gate.query, items, (get_selector or selector_generator)(), orders=orders,
                              max_item_tokens=RERANK_ITEM_TOKENS)
    except ModelError as e:
        log.warning("sources not re-ranked (%s)", e)
        return gate, None
    ranked = reorder(pool, res.scores, weight)
    moved = {h.chunk_id for h in pool}
    rest = [h for h in gate.candidates if h.chunk_id not in moved]
    sources = tuple(ranked[:gate.max_sources])
    plan = replace(gate.plan, reranked=True) if gate.plan is not None else None
    return replace(gate, sources=sources, candidates=(*ranked, *rest), plan=plan), res
