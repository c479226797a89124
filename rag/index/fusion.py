"""Stages 5-6 of the design: reciprocal rank fusion of the dense and BM25 legs, then the optional rerank.

:func:`rrf` fuses ranked id lists (k 60, ranks only); :func:`retrieve` runs the
legs, fuses them and returns :class:`rag.types.Hit` records, best first, each
with its cosine distance from the stored vector (BM25-only hits included).
Ranks are 1-based.

Issue 19: the BM25 list counts in the fusion by how well its best chunk covers
the question (:func:`lexical_weight`). A question in the documents' own words
has its specific terms in one chunk (coverage near 1, full weight); a user's
question shares a few common words with many chunks, and that list is noise
that pushes the dense leg's hit down (weight towards 0).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

import numpy as np

from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.index.rerank import Reranker, TextSource
from rag.index.units import UnitIndex, dense_leg
from rag.types import Hit, QueryPlan, RetrievalMode

#: The retrieval modes (design stages 4-5), as plain strings.
MODES = tuple(m.value for m in RetrievalMode)


#: Coverage at or under which the BM25 list gets no weight, and from which it gets full weight (issue 19).
#: Measured on both dev corpora (docs/evaluation.md); 0.2-0.5 and 0.25-0.6 gain less, the sign is the same.
COVERAGE_BAND = (0.3, 0.7)

#: Languages the embedder (all-MiniLM-L6-v2) was trained on: for a question in any other language the
#: dense leg is weak and BM25 keeps its full weight.
DENSE_LANGUAGES = frozenset({"en"})


def rrf(ranked: Sequence[Sequence[int]], k: int = 60, weights: Sequence[float] | None = None) -> list[tuple[int, float]]:
    """Reciprocal rank fusion (design stage 5): ``score(d) = sum_lists w_list / (k + rank)``, rank 1-based.

    Ranks only, no score scaling; ``weights`` (default all 1.0, the design's
    RRF) scale each list's votes. Returns ``[(id, score)]`` best first; ties
    keep the order of first appearance (list 0 first), so it is deterministic.
    """
    scores: dict[int, float] = {}
    weights = [1.0] * len(ranked) if weights is None else list(weights)
    for lst, w in zip(ranked, weights):
        for r, cid in enumerate(lst, start=1):
            scores[int(cid)] = scores.get(int(cid), 0.0) + w / (k + r)
    order = {cid: i for i, cid in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def lexical_weight(coverage: float | None, band: tuple[float, float] = COVERAGE_BAND) -> float:
    """The BM25 list's RRF weight from its best chunk's coverage of the query (issue 19), in [0, 1].

    0 at or under ``band[0]``, 1 at or over ``band[1]``, linear between;
    ``None`` (no query term in the index) gives 1.0: the list is empty anyway.
    """
    if coverage is None:
        return 1.0
    lo, hi = band
    return float(min(1.0, max(0.0, (coverage - lo) / (hi - lo))))


def bm25_weight(query: str, bm25: BM25Index, top_id: int | None, band: tuple[float, float] | None = COVERAGE_BAND) -> float:
    """:func:`lexical_weight` of BM25's best chunk ``top_id`` for ``query``; 1.0 when ``band`` is ``None``
    (the design's plain RRF), when there is no BM25 hit, or when the query is in a language outside
    :data:`DENSE_LANGUAGES` (the lexical leg is all it has)."""
    if band is None or top_id is None:
        return 1.0
    if bm25.analyzer.query_language(query) not in DENSE_LANGUAGES:
        return 1.0
    return lexical_weight(bm25.coverage(query, top_id), band)


def retrieve(query: str, q_vec: np.ndarray | None, dense: DenseIndex, bm25: BM25Index | None, *,
             k: int = 20, mode: RetrievalMode | str = RetrievalMode.HYBRID, depth: int | None = None, rrf_k: int = 60,
             reranker: "Reranker | None" = None, texts: "TextSource | None" = None,
             rerank_top: int = 25, coverage_band: tuple[float, float] | None = COVERAGE_BAND,
             allowed: np.ndarray | None = None, units: UnitIndex | None = None) -> list[Hit]:
    """:func:`retrieve_planned` without the plan: the hits alone."""
    return retrieve_planned(query, q_vec, dense, bm25, k=k, mode=mode, depth=depth, rrf_k=rrf_k, reranker=reranker,
                            texts=texts, rerank_top=rerank_top, coverage_band=coverage_band, allowed=allowed,
                            units=units)[0]


def retrieve_planned(query: str, q_vec: np.ndarray | None, dense: DenseIndex, bm25: BM25Index | None, *,
                     k: int = 20, mode: str = "hybrid", depth: int | None = None, rrf_k: int = 60,
                     reranker: "Reranker | None" = None, texts: "TextSource | None" = None, rerank_top: int = 25,
                     coverage_band: tuple[float, float] | None = COVERAGE_BAND,
                     allowed: np.ndarray | None = None, units: UnitIndex | None = None) -> tuple[list[Hit], QueryPlan]:
    """Retrieve the top ``k`` chunks for ``query`` (design stages 4-6), and say how (:class:`rag.types.QueryPlan`).

    ``q_vec`` is the query embedding ((384,) float32, unit norm); ``mode`` a
    :class:`rag.types.RetrievalMode` or its value: ``hybrid`` (RRF of both legs), ``dense``, ``bm25`` (each leg still goes
    through :func:`rrf`, so scores are comparable). Each leg returns ``depth``
    candidates (default ``max(k, 100)``). Every hit carries its cosine distance
    from the stored vector, so the gate can judge BM25-only hits too. With a
    ``reranker`` (and ``texts``: a mapping chunk id -> embedded text, or a
    callable ``ids -> list[str]``) the fused top
    ``rerank_top`` are reordered by the cross-encoder. Returns fewer than ``k``
    hits (or none) when the index is small or empty or the query matches
    nothing; never padding. In ``hybrid`` mode the BM25 list is weighted by
    :func:`bm25_weight` (``coverage_band`` ``None``: the design's equal weights).
    ``allowed`` (int64 chunk ids) restricts both legs to those chunks (issue
    16's scope); ``None`` searches everything. With ``units`` (issue 27) the
    dense leg ranks each chunk by the best of its own and its units' cosine
    similarity (:func:`rag.index.units.dense_leg`); ``cosine_distance`` stays the
    chunk vector's own.
    Raises ``ValueError`` for an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; allowed: {', '.join(MODES)}")
    depth = max(k, depth or 100)
    legs: list[list[int]] = []
    d_rank: dict[int, int] = {}
    u_dist: dict[int, float] = {}
    b_rank: dict[int, tuple[int, float]] = {}
    if mode in (RetrievalMode.HYBRID, RetrievalMode.DENSE) and len(dense):
        ids, leg_dist = dense_leg(q_vec, dense, units, depth, allowed)
        legs.append(ids.tolist())
        d_rank = {int(c): r for r, c in enumerate(ids, start=1)}
        if units is not None and len(units):
            u_dist = {int(c): float(d) for c, d in zip(ids, leg_dist)}
    if mode in (RetrievalMode.HYBRID, RetrievalMode.BM25) and bm25 is not None and len(bm25):
        ids, scores = bm25.search(query, depth) if allowed is None else bm25.search(query, depth, allowed)
        legs.append(ids.tolist())
        b_rank = {int(c): (r, float(s)) for r, (c, s) in enumerate(zip(ids, scores), start=1)}
    weights = [1.0] * len(legs)
    if mode == RetrievalMode.HYBRID and len(legs) == 2 and legs[1]:
        weights[1] = bm25_weight(query, bm25, legs[1][0], coverage_band)
    lang = bm25.analyzer.query_language(query) if bm25 is not None else "en"
    plan = QueryPlan(query=query, language=lang, bm25_weight=weights[1] if mode == RetrievalMode.HYBRID and len(legs) == 2 else 1.0)
    fused = rrf(legs, k=rrf_k, weights=weights)[: max(k, rerank_top if reranker else k)]
    if not fused:
        return [], plan
    ids = [cid for cid, _ in fused]
    dist = dense.distances(q_vec, ids) if q_vec is not None else np.full(len(ids), np.nan, np.float32)
    hits = [
        Hit(chunk_id=cid, rank=i, fused_rank=i, rrf_score=s, cosine_distance=float(dist[i - 1]),
            dense_rank=d_rank.get(cid), bm25_rank=b_rank.get(cid, (None, None))[0],
            bm25_score=b_rank.get(cid, (None, None))[1], unit_distance=u_dist.get(cid))
        for i, (cid, s) in enumerate(fused, start=1)
    ]
    if reranker is not None and texts is not None:
        hits = reranker.rerank(query, hits, texts, top=rerank_top)
    return hits[:k], plan


def body_first(hits: Sequence[Hit], not_body: Collection[int]) -> list[Hit]:
    """``hits`` with those whose chunk id is in ``not_body`` (reference lists, contents, navigation, a deck's
    title slide: :class:`rag.types.TextRole` other than ``body``, issue 28) moved after the body hits, each
    group in its own order; ``rank`` renumbered 1..n (``fused_rank`` kept). Such text stays searchable and
    is still returned, but never outranks body text."""
    if not not_body or not any(h.chunk_id in not_body for h in hits):
        return list(hits)
    ordered = [h for h in hits if h.chunk_id not in not_body] + [h for h in hits if h.chunk_id in not_body]
    return [replace(h, rank=i) for i, h in enumerate(ordered, start=1)]
