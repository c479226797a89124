"""Stages 5-6 of the design: reciprocal rank fusion of the dense and BM25 legs, then the optional rerank.

:func:`rrf` fuses ranked id lists (k 60, ranks only); :func:`retrieve` runs the
legs, fuses them and returns :class:`rag.types.Hit` records, best first, each
with its cosine distance from the stored vector (BM25-only hits included).
Ranks are 1-based.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.index.rerank import Reranker, TextSource
from rag.types import Hit, RetrievalMode

#: The retrieval modes (design stages 4-5), as plain strings.
MODES = tuple(m.value for m in RetrievalMode)


def rrf(ranked: Sequence[Sequence[int]], k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal rank fusion (design stage 5): ``score(d) = sum_lists 1 / (k + rank)``, rank 1-based.

    Ranks only, no score scaling. Returns ``[(id, score)]`` best first; ties
    keep the order of first appearance (list 0 first), so it is deterministic.
    """
    scores: dict[int, float] = {}
    for lst in ranked:
        for r, cid in enumerate(lst, start=1):
            scores[int(cid)] = scores.get(int(cid), 0.0) + 1.0 / (k + r)
    order = {cid: i for i, cid in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def retrieve(query: str, q_vec: np.ndarray | None, dense: DenseIndex, bm25: BM25Index | None, *,
             k: int = 20, mode: RetrievalMode | str = RetrievalMode.HYBRID, depth: int | None = None, rrf_k: int = 60,
             reranker: "Reranker | None" = None, texts: "TextSource | None" = None,
             rerank_top: int = 25, allowed: np.ndarray | None = None) -> list[Hit]:
    """Retrieve the top ``k`` chunks for ``query`` (design stages 4-6).

    ``q_vec`` is the query embedding ((384,) float32, unit norm); ``mode`` a
    :class:`rag.types.RetrievalMode` or its value: ``hybrid`` (RRF of both legs), ``dense``, ``bm25`` (each leg still goes
    through :func:`rrf`, so scores are comparable). Each leg returns ``depth``
    candidates (default ``max(k, 100)``). Every hit carries its cosine distance
    from the stored vector, so the gate can judge BM25-only hits too. With a
    ``reranker`` (and ``texts``: a mapping chunk id -> embedded text, or a
    callable ``ids -> list[str]``) the fused top
    ``rerank_top`` are reordered by the cross-encoder. Returns fewer than ``k``
    hits (or none) when the index is small or empty or the query matches
    nothing; never padding. ``allowed`` (int64 chunk ids) restricts both
    legs to those chunks (issue 16's scope); ``None`` searches everything.
    Raises ``ValueError`` for an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; allowed: {', '.join(MODES)}")
    depth = max(k, depth or 100)
    legs: list[list[int]] = []
    d_rank: dict[int, int] = {}
    b_rank: dict[int, tuple[int, float]] = {}
    if mode in (RetrievalMode.HYBRID, RetrievalMode.DENSE) and len(dense):
        ids, _ = dense.search(q_vec, depth) if allowed is None else dense.search(q_vec, depth, allowed)
        legs.append(ids.tolist())
        d_rank = {int(c): r for r, c in enumerate(ids, start=1)}
    if mode in (RetrievalMode.HYBRID, RetrievalMode.BM25) and bm25 is not None and len(bm25):
        ids, scores = bm25.search(query, depth) if allowed is None else bm25.search(query, depth, allowed)
        legs.append(ids.tolist())
        b_rank = {int(c): (r, float(s)) for r, (c, s) in enumerate(zip(ids, scores), start=1)}
    fused = rrf(legs, k=rrf_k)[: max(k, rerank_top if reranker else k)]
    if not fused:
        return []
    ids = [cid for cid, _ in fused]
    dist = dense.distances(q_vec, ids) if q_vec is not None else np.full(len(ids), np.nan, np.float32)
    hits = [
        Hit(chunk_id=cid, rank=i, fused_rank=i, rrf_score=s, cosine_distance=float(dist[i - 1]),
            dense_rank=d_rank.get(cid), bm25_rank=b_rank.get(cid, (None, None))[0],
            bm25_score=b_rank.get(cid, (None, None))[1])
        for i, (cid, s) in enumerate(fused, start=1)
    ]
    if reranker is not None and texts is not None:
        hits = reranker.rerank(query, hits, texts, top=rerank_top)
    return hits[:k]
