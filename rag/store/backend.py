"""The search backend interface (issue 18): where vectors and terms are searched, behind one small protocol.

SQLite stays the source of truth for documents, chunks, locators and vectors;
a backend only holds what searching needs (vectors and terms) and can always
be rebuilt from SQLite with :meth:`SearchBackend.rebuild`. Two implement it:

* :class:`LocalBackend`: FAISS (:class:`rag.index.dense.DenseIndex`, flat or
  IVF by size) and bm25s (:class:`rag.index.bm25.BM25Index`) in this process;
* :class:`rag.store.milvus.MilvusBackend`: a Milvus collection (milvus-lite
  file or server), dense vectors plus Milvus's built-in BM25 function.

Both expose their two legs with the same methods, so :func:`search` fuses
them with the one :func:`rag.index.fusion.retrieve` (RRF, ranks 1-based) and
the hits, their leg ranks, BM25 scores and cosine distances mean the same
whatever the backend. Writes come in batches (:meth:`SearchBackend.update`):
a folder or a multi-file upload updates the indexes once, not per document.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex, choose_kind
from rag.index.fusion import retrieve
from rag.types import Hit

#: ``() -> (ids int64 (n,), texts)``: every chunk the store holds, read from SQLite when a backend needs it.
AllRows = Callable[[], tuple[np.ndarray, Sequence[str]]]


@dataclass(frozen=True)
class Batch:
    """Chunks added in one write: ``ids`` int64 (n,), ``vectors`` (n, dim) float32 unit rows, ``texts`` (the
    embedded text of each chunk, what BM25 indexes)."""

    ids: np.ndarray
    vectors: np.ndarray
    texts: Sequence[str]

    def __post_init__(self) -> None:
        if not (len(self.ids) == len(self.vectors) == len(self.texts)):
            raise ValueError(f"batch of {len(self.ids)} ids, {len(self.vectors)} vectors, {len(self.texts)} texts")


class DenseLeg(Protocol):
    """``search(q_vec, k) -> (ids int64, cosine distances float32)`` best first; ``distances(q_vec, ids)``
    of stored vectors; ``len()`` vectors held."""

    def search(self, q_vec: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def distances(self, q_vec: np.ndarray, ids: Sequence[int] | np.ndarray) -> np.ndarray: ...

    def __len__(self) -> int: ...


class LexicalLeg(Protocol):
    """``search(query, k) -> (ids int64, BM25 scores float32)`` best first, only chunks sharing a term; ``len()``."""

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def __len__(self) -> int: ...


class SearchBackend(Protocol):
    """What the store needs from a backend (issue 18). ``kind`` ``local`` | ``milvus``."""

    kind: str

    @property
    def dense(self) -> DenseLeg: ...

    @property
    def bm25(self) -> LexicalLeg: ...

    def __len__(self) -> int: ...

    def update(self, added: Batch | None = None, removed: Sequence[int] = (), *,
               all_rows: AllRows | None = None) -> None:
        """Apply one batch of writes: add ``added``, remove ``removed`` ids; ``all_rows`` is read only by a
        backend whose BM25 cannot be updated in place (the local one rebuilds it once per batch)."""

    def rebuild(self, ids: np.ndarray, vectors: np.ndarray, texts: Sequence[str]) -> None:
        """Replace everything with these chunks (from SQLite, the source of truth)."""

    def close(self) -> None: ...


def search(backend: SearchBackend, query: str, q_vec: np.ndarray | None, **kw) -> list[Hit]:
    """:func:`rag.index.fusion.retrieve` over ``backend``'s two legs (same keywords: ``k``, ``mode``, ``depth``,
    ``rrf_k``, ``reranker``, ``texts``, ``rerank_top``)."""
    return retrieve(query, q_vec, backend.dense, backend.bm25, **kw)


class LocalBackend:
    """FAISS + bm25s in this process (the default backend).

    The dense index is rebuilt as ``ivf`` when it has grown past its training
    (:attr:`DenseIndex.stale`) or crossed the flat-to-IVF size; BM25 (bm25s has
    no incremental add) is rebuilt from ``all_rows`` once per :meth:`update`.
    ``dense_kind``: ``auto`` (by size), ``flat`` or ``ivf``.
    """

    kind = "local"

    def __init__(self, dim: int = 384, *, k1: float = 1.2, b: float = 0.75, dense_kind: str = "auto"):
        self.dim, self.k1, self.b, self.dense_kind = dim, k1, b, dense_kind
        self._dense = DenseIndex(dim)
        self._bm25 = BM25Index(k1, b)

    @classmethod
    def from_indexes(cls, dense: DenseIndex, bm25: BM25Index, *, dense_kind: str = "auto") -> "LocalBackend":
        """Wrap indexes already built or loaded (e.g. the store's cached generation files)."""
        be = cls(dense.dim, k1=bm25.k1, b=bm25.b, dense_kind=dense_kind)
        be._dense, be._bm25 = dense, bm25
        return be

    @property
    def dense(self) -> DenseIndex:
        return self._dense

    @property
    def bm25(self) -> BM25Index:
        return self._bm25

    def __len__(self) -> int:
        return len(self._dense)

    def update(self, added: Batch | None = None, removed: Sequence[int] = (), *,
               all_rows: AllRows | None = None) -> None:
        """See :meth:`SearchBackend.update`. Raises ``ValueError`` when BM25 must change and ``all_rows`` is None."""

        if removed:
            self._dense.remove(removed)
        if added is not None and len(added.ids):
            self._dense.add(added.ids, added.vectors)
        want = choose_kind(len(self._dense), self.dense_kind)
        if want != self._dense.kind or self._dense.stale:
            ids = self._dense.ids()
            self._dense = DenseIndex.build(ids, self._dense.vectors(ids), dim=self.dim, kind=want)
        if added is not None or removed:
            if all_rows is None:
                raise ValueError("the local BM25 index is rebuilt per batch: pass all_rows")
            ids, texts = all_rows()
            self._bm25 = BM25Index.build(list(texts), ids, k1=self.k1, b=self.b)

    def rebuild(self, ids: np.ndarray, vectors: np.ndarray, texts: Sequence[str]) -> None:
        self._dense = DenseIndex.build(ids, vectors, dim=self.dim, kind=self.dense_kind)
        self._bm25 = BM25Index.build(list(texts), ids, k1=self.k1, b=self.b)

    def close(self) -> None:
        return None
