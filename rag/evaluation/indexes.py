"""Throwaway in-memory indexes, one per chunking strategy (A-F of the design), for the evaluation.

The store is never touched: documents are re-chunked with each strategy,
embedded through :class:`rag.evaluation.cache.EmbeddingCache` and indexed with
the product's own dense (FAISS) and BM25 indexes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rag.evaluation.cache import EmbeddingCache
from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.ingest.chunk import chunk_document


@dataclass
class StrategyIndex:
    """Throwaway in-memory indexes over every document chunked with one strategy.

    Chunk ids are positions in ``chunks`` (int64 0..n-1); ``vectors`` is
    ``(n, 384)`` float32, L2-normalised, the embeddings of ``chunk.text``;
    BM25 indexes the same ``text``. ``text_tokens``/``content_tokens`` are the
    word-pieces (with [CLS]/[SEP]) of each chunk's ``text`` and ``content``.
    """

    strategy: str
    chunks: list
    vectors: np.ndarray
    dense: object
    bm25: object
    text_tokens: list[int]
    content_tokens: list[int]

    def content(self, chunk_id: int) -> str:
        return self.chunks[int(chunk_id)].content


def chunk_all(documents: Sequence, strategy: str, settings=None) -> list:
    """Every document cut with ``strategy`` (``rag.ingest.chunk.chunk_document``), in document order."""
    kw = {}
    if settings is not None:
        kw = dict(budget_chars=settings.chunk_budget_chars, overlap_chars=settings.overlap_chars,
                  window_tokens=settings.encoder_window_tokens)
    return [c for d in documents for c in chunk_document(d, strategy, **kw)]


def build_strategy_index(documents: Sequence, strategy: str, embedder, cache: EmbeddingCache, *, settings=None,
                         progress: Callable[[int, int], None] | None = None) -> StrategyIndex:
    """Chunk, embed (through ``cache``) and index ``documents`` with ``strategy`` (A-F of the design)."""
    chunks = chunk_all(documents, strategy, settings)
    texts = [c.text for c in chunks]
    vecs = cache.encode(texts, embedder, progress=progress)
    ids = np.arange(len(chunks), dtype=np.int64)
    k1, b = (settings.bm25_k1, settings.bm25_b) if settings is not None else (1.2, 0.75)
    return StrategyIndex(
        strategy=strategy, chunks=chunks, vectors=vecs,
        dense=DenseIndex.build(ids, vecs, dim=vecs.shape[1] if len(vecs) else 384),
        bm25=BM25Index.build(texts, ids, k1=k1, b=b, groups=[c.doc_id for c in chunks]),  # stemmed per document
        text_tokens=embedder.count_tokens_batch(texts),
        content_tokens=embedder.count_tokens_batch([c.content for c in chunks]),
    )
