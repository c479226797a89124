"""Stage 4 of the design, dense leg: exact inner-product search (FAISS ``IndexFlatIP``) over unit vectors.

Ids are ``int64`` chunk ids; cosine distance is ``1 - <q, v>`` on unit vectors,
in ``[0, 2]``. A search never returns FAISS's ``-1`` padding: an index smaller
than ``k`` returns fewer hits, an empty one none.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from rag.index.embed import check_unit_norm


class DenseIndex:
    """Exact inner-product search (FAISS ``IndexIDMap2(IndexFlatIP)``) over unit vectors.

    Vectors are ``(n, dim)`` float32, L2-normalised (checked on ``add``); ids
    are unique int64. Inner product = cosine similarity, reported as cosine
    distance ``1 - ip``.
    """

    def __init__(self, dim: int = 384):
        import faiss

        self.dim = dim
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    @classmethod
    def build(cls, ids: Sequence[int] | np.ndarray, vectors: np.ndarray, dim: int | None = None) -> "DenseIndex":
        """A new index holding ``vectors`` ((n, dim) float32 unit rows) under ``ids`` (n int64)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        d = dim or (vectors.shape[1] if vectors.ndim == 2 and vectors.shape[1] else 384)
        idx = cls(d)
        idx.add(ids, vectors)
        return idx

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def add(self, ids: Sequence[int] | np.ndarray, vectors: np.ndarray) -> None:
        """Add ``vectors`` ((n, dim) float32, unit norm) under ``ids``. Raises ``ValueError`` on bad shapes/norms."""

        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
        if len(ids) == 0:
            return
        check_unit_norm(vectors)
        self.index.add_with_ids(vectors, ids)

    def remove(self, ids: Iterable[int]) -> int:
        """Remove the given ids (unknown ids are ignored); returns how many were removed."""
        arr = np.asarray(list(ids), dtype=np.int64)
        if arr.size == 0:
            return 0
        return int(self.index.remove_ids(arr))

    def ids(self) -> np.ndarray:
        """All ids held, int64, in insertion order."""
        import faiss

        return faiss.vector_to_array(self.index.id_map).astype(np.int64) if len(self) else np.zeros(0, np.int64)

    def vectors(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The stored unit vectors of ``ids``: ``(len(ids), dim)`` float32. Raises ``KeyError``-like RuntimeError for unknown ids."""
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        for i, cid in enumerate(ids):
            out[i] = self.index.reconstruct(int(cid))
        return out

    def distances(self, q_vec: np.ndarray, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Cosine distances ``1 - <q, v_id>`` of the stored vectors of ``ids`` to ``q_vec`` ((dim,) unit float32)."""
        if len(ids) == 0:
            return np.zeros(0, dtype=np.float32)
        d = 1.0 - self.vectors(ids) @ np.asarray(q_vec, dtype=np.float32).reshape(-1)
        return np.clip(d, 0.0, 2.0).astype(np.float32)

    def search(self, q_vec: np.ndarray, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` by inner product: ``(ids int64 (m,), cosine_distances float32 (m,))``, best first, ``m <= k``.

        ``allowed`` (int64 ids) restricts the search to those ids (a FAISS ``IDSelectorBatch``: the scope
        of issue 16); ``None`` searches everything. Never returns FAISS's ``-1`` padding (an index smaller
        than ``k`` gives fewer hits; an empty index none).
        """
        import faiss

        n = len(self) if allowed is None else min(len(self), len(allowed))
        k = min(int(k), n)
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        q = np.ascontiguousarray(q_vec, dtype=np.float32).reshape(1, self.dim)
        if allowed is None:
            sims, ids = self.index.search(q, k)
        else:
            sel = faiss.IDSelectorBatch(np.ascontiguousarray(allowed, dtype=np.int64))
            sims, ids = self.index.search(q, k, params=faiss.SearchParameters(sel=sel))
        keep = ids[0] >= 0
        return ids[0][keep].astype(np.int64), np.clip(1.0 - sims[0][keep], 0.0, 2.0).astype(np.float32)

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (FAISS format). Not atomic by itself: write to a temp name, then rename."""
        import faiss

        faiss.write_index(self.index, str(path))

    @classmethod
    def load(cls, path: Path) -> "DenseIndex":
        """Read an index written by :meth:`save`."""
        import faiss

        idx = cls.__new__(cls)
        idx.index = faiss.read_index(str(path))
        idx.dim = int(idx.index.d)
        return idx
