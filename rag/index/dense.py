"""Stage 4 of the design, dense leg: inner-product search over unit vectors, exact or approximate (issue 18).

Two kinds, picked by :func:`choose_kind` from the index size (``kind="auto"``):

* ``flat``: FAISS ``IndexIDMap2(IndexFlatIP)``, exact, scan time and memory
  linear in the size;
* ``ivf``: FAISS ``IndexIVFFlat`` (inner product, ``nlist`` k-means lists of
  full float vectors, ``nprobe`` lists scanned per query), approximate: from
  :data:`APPROX_MIN_CHUNKS` chunks on, where it was measured faster at recall@20
  against exact search >= 0.98 (``docs/scale.md``). It keeps the full vectors, so
  distances to stored vectors are exact, and supports removal by id (a hash-table
  direct map), which the store needs for deletes. Trained on the vectors it is
  built with; :attr:`DenseIndex.stale` says when it has grown 4x past that and
  should be rebuilt.

Ids are ``int64`` chunk ids; cosine distance is ``1 - <q, v>`` on unit vectors,
in ``[0, 2]``. A search never returns FAISS's ``-1`` padding: an index smaller
than ``k`` returns fewer hits, an empty one none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from rag.index.embed import check_unit_norm

#: From this many chunks on, ``kind="auto"`` builds the approximate ``ivf`` index (measured: docs/scale.md).
APPROX_MIN_CHUNKS = 20_000
#: The dense index kinds.
KINDS = ("flat", "ivf")


def choose_kind(n: int, kind: str = "auto") -> str:
    """``flat`` or ``ivf`` for an index of ``n`` vectors: ``kind`` itself unless ``auto``, else ``ivf`` from
    :data:`APPROX_MIN_CHUNKS` on. Raises ``ValueError`` for an unknown kind."""
    if kind == "auto":
        return "ivf" if n >= APPROX_MIN_CHUNKS else "flat"
    if kind not in KINDS:
        raise ValueError(f"unknown dense index kind {kind!r}; allowed: auto, {', '.join(KINDS)}")
    return kind


def ivf_lists(n: int) -> int:
    """k-means lists for an ``ivf`` index of ``n`` vectors: ``2 * sqrt(n)``, 16 .. 4096 (2000 at 1M: training
    and assignment cost grow with the lists, and 2 cores pay them)."""
    return int(min(4096, max(16, round(2 * np.sqrt(max(n, 1))))))


def ivf_probes(nlist: int) -> int:
    """Lists scanned per query for ``nlist`` lists: ``nlist / 16``, at least 64 (all when fewer): measured recall@20
    against exact search >= 0.99 from 1k to 1M chunks (docs/scale.md)."""
    return int(min(nlist, max(64, nlist // 16)))


@contextlib.contextmanager
def _one_thread():
    """FAISS single-threaded for one query: on 2 shared cores, OpenMP's second thread made a flat search of
    10k vectors 100 ms instead of 0.4 ms at the median (docs/scale.md); batch builds keep every thread."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


class DenseIndex:
    """Inner-product search over unit vectors: exact (``kind`` ``flat``) or approximate (``ivf``), see the module.

    Vectors are ``(n, dim)`` float32, L2-normalised (checked on ``add``); ids
    are unique int64. Inner product = cosine similarity, reported as cosine
    distance ``1 - ip``. ``DenseIndex(dim)`` is an empty ``flat`` index; use
    :meth:`build` to pick the kind by size.
    """

    def __init__(self, dim: int = 384):
        import faiss

        self.dim = dim
        self.kind = "flat"
        self.trained_on = 0
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    @classmethod
    def build(cls, ids: Sequence[int] | np.ndarray, vectors: np.ndarray, dim: int | None = None, *,
              kind: str = "auto", nlist: int | None = None, nprobe: int | None = None) -> "DenseIndex":
        """A new index holding ``vectors`` ((n, dim) float32 unit rows) under ``ids`` (n int64).

        ``kind`` ``auto`` (:func:`choose_kind` by size), ``flat`` or ``ivf``; for ``ivf``, ``nlist`` /
        ``nprobe`` default to :func:`ivf_lists` / :func:`ivf_probes`. An ``ivf`` index is trained on
        (a sample of at most 32 per list of) ``vectors``. Raises ``ValueError`` for an unknown kind.
        """
        vectors = np.asarray(vectors, dtype=np.float32)
        d = dim or (vectors.shape[1] if vectors.ndim == 2 and vectors.shape[1] else 384)
        n = len(vectors) if vectors.ndim == 2 else 0
        if choose_kind(n, kind) == "ivf" and n > 0:
            idx = cls.empty_ivf(d, nlist or ivf_lists(n), nprobe)
            idx.train(vectors)
        else:
            idx = cls(d)
        idx.add(ids, vectors)
        return idx

    @classmethod
    def empty_ivf(cls, dim: int, nlist: int, nprobe: int | None = None) -> "DenseIndex":
        """An untrained ``ivf`` index (``nlist`` lists); call :meth:`train` before :meth:`add`."""
        import faiss

        idx = cls.__new__(cls)
        idx.dim, idx.kind, idx.trained_on = dim, "ivf", 0
        quantizer = faiss.IndexFlatIP(dim)
        ivf = faiss.IndexIVFFlat(quantizer, dim, int(nlist), faiss.METRIC_INNER_PRODUCT)
        ivf.own_fields = True
        quantizer.this.disown()
        ivf.nprobe = int(nprobe or ivf_probes(int(nlist)))
        idx.index = ivf
        return idx

    def train(self, vectors: np.ndarray, *, seed: int = 0) -> None:
        """Train the ``ivf`` lists by k-means (10 iterations) on ``vectors`` (at most 32 per list, sampled with ``seed``)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        nlist = int(self.index.nlist)
        if len(vectors) < nlist:
            raise ValueError(f"{len(vectors)} vectors cannot train {nlist} lists")
        m = min(len(vectors), 32 * nlist)
        sample = vectors if m == len(vectors) else vectors[np.sort(np.random.default_rng(seed).choice(len(vectors), m, replace=False))]
        self.index.cp.niter = 10
        self.index.cp.min_points_per_centroid = 1  # fewer than 39 per list is fine here: no warning on stderr
        self.index.train(np.ascontiguousarray(sample))
        self.index.set_direct_map_type(__import__("faiss").DirectMap.Hashtable)
        self.trained_on = len(vectors)

    @property
    def nprobe(self) -> int | None:
        """Lists scanned per query (``ivf``), else ``None``; settable."""
        return int(self.index.nprobe) if self.kind == "ivf" else None

    @nprobe.setter
    def nprobe(self, value: int) -> None:
        if self.kind == "ivf":
            self.index.nprobe = int(value)

    @property
    def stale(self) -> bool:
        """True when an ``ivf`` index holds 4x more vectors than it was trained on (lists too coarse: rebuild)."""
        return self.kind == "ivf" and len(self) > 4 * max(self.trained_on, int(self.index.nlist))

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
        """All ids held, int64 (insertion order for ``flat``, list order for ``ivf``)."""
        import faiss

        if not len(self):
            return np.zeros(0, np.int64)
        if self.kind == "ivf":
            inv = self.index.invlists
            return np.concatenate([faiss.rev_swig_ptr(inv.get_ids(i), inv.list_size(i)).copy()
                                   for i in range(self.index.nlist) if inv.list_size(i)]).astype(np.int64)
        return faiss.vector_to_array(self.index.id_map).astype(np.int64)

    def vectors(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The stored unit vectors of ``ids``: ``(len(ids), dim)`` float32. Raises ``KeyError``-like RuntimeError for unknown ids."""
        if len(ids) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self.index.reconstruct_batch(np.ascontiguousarray(ids, dtype=np.int64)).reshape(len(ids), self.dim)

    def distances(self, q_vec: np.ndarray, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Cosine distances ``1 - <q, v_id>`` of the stored vectors of ``ids`` to ``q_vec`` ((dim,) unit float32)."""
        if len(ids) == 0:
            return np.zeros(0, dtype=np.float32)
        d = 1.0 - self.vectors(ids) @ np.asarray(q_vec, dtype=np.float32).reshape(-1)
        return np.clip(d, 0.0, 2.0).astype(np.float32)

    def search(self, q_vec: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` by inner product: ``(ids int64 (m,), cosine_distances float32 (m,))``, best first (equal
        distances by id), ``m <= k``.

        Never returns FAISS's ``-1`` padding (an index smaller than ``k`` gives
        fewer hits; an empty index none).
        """
        n = len(self)
        k = min(int(k), n)
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        q = np.ascontiguousarray(q_vec, dtype=np.float32).reshape(1, self.dim)
        with _one_thread():
            sims, ids = self.index.search(q, k)
        keep = ids[0] >= 0
        out_ids, dist = ids[0][keep].astype(np.int64), np.clip(1.0 - sims[0][keep], 0.0, 2.0).astype(np.float32)
        order = np.lexsort((out_ids, dist))  # equal distances by id: the same order whatever the index or backend
        return out_ids[order], dist[order]

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
        idx.kind = "ivf" if isinstance(idx.index, faiss.IndexIVF) else "flat"
        if idx.kind == "ivf":
            idx.index.set_direct_map_type(faiss.DirectMap.Hashtable)
        idx.trained_on = len(idx)  # not stored: a reloaded ivf index counts its size as its training basis
        return idx
