"""The search backend interface (issues 18, 23): where vectors and terms are searched, behind one small protocol.

SQLite stays the source of truth for documents, chunks, locators and vectors;
a backend only holds what searching needs (vectors and terms) and can always
be rebuilt from SQLite with :meth:`SearchBackend.rebuild`. Two implement it:

* :class:`LocalBackend`: FAISS (:class:`rag.index.dense.DenseIndex`, flat or
  IVF by size) and bm25s (:class:`rag.index.bm25.BM25Index`) in this process,
  kept as files per store generation when it has a folder;
* :class:`rag.store.milvus.MilvusBackend`: a Milvus collection (milvus-lite
  file or server), dense vectors plus Milvus's built-in BM25 function.

The store's index cache (:class:`rag.store.cache.IndexCache`) drives either one
through this protocol: which generation it holds (:meth:`SearchBackend.holds`,
:meth:`~SearchBackend.load`, :meth:`~SearchBackend.save`), one delta per write
(:meth:`~SearchBackend.update`) and the one rebuild from SQLite. Both expose
their two legs with the same methods, so :func:`search` fuses them with the one
:func:`rag.index.fusion.retrieve` (RRF, ranks 1-based) and the hits, their leg
ranks, BM25 scores and cosine distances mean the same whatever the backend.
Writes come in batches: a folder or a multi-file upload updates the indexes
once, not per document.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex, choose_kind
from rag.index.fusion import retrieve
from rag.types import Hit


@dataclass(frozen=True)
class ChunkTable:
    """Every chunk row, ordered by id: ``ids`` ``(n,)`` int64, ``texts`` the embedded texts,
    ``vectors`` ``(n, dim)`` float32 (``None`` when not read), ``contents`` the quoted texts (``None`` when not
    read), ``doc_ids`` each chunk's document and ``languages`` its document's stored ISO 639-1 code (BM25 stems a
    document's chunks in its language, issue 19; stored per document since issue 23, ``None`` where unknown)."""

    ids: np.ndarray
    texts: list[str]
    vectors: np.ndarray | None
    contents: list[str] | None = None
    doc_ids: list[str] | None = None
    languages: list[str | None] | None = None

    def bm25(self, k1: float, b: float) -> BM25Index:
        """The BM25 index over :attr:`texts`, stemmed per document in its stored language (detected only where
        none is stored) (:meth:`rag.index.bm25.BM25Index.build`)."""
        return BM25Index.build(self.texts, self.ids, k1=k1, b=b, groups=self.doc_ids, languages=self.languages)


#: ``() -> ChunkTable`` (vectors not read): every chunk the store holds, read from SQLite when a backend needs it.
AllRows = Callable[[], ChunkTable]


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
    of stored vectors; ``ids()`` every id held; ``len()`` vectors held."""

    def search(self, q_vec: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def distances(self, q_vec: np.ndarray, ids: Sequence[int] | np.ndarray) -> np.ndarray: ...

    def ids(self) -> np.ndarray: ...

    def __len__(self) -> int: ...


class LexicalLeg(Protocol):
    """``search(query, k) -> (ids int64, BM25 scores float32)`` best first, only chunks sharing a term; ``ids()``;
    ``len()``."""

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def ids(self) -> np.ndarray: ...

    def __len__(self) -> int: ...


class SearchBackend(Protocol):
    """What the store's index cache needs from a backend. ``kind`` ``local`` | ``milvus``.

    A backend holds one store generation at a time: :meth:`holds` says whether generation ``gen`` is kept
    (files on disk, or the collection's recorded generation), :meth:`load` makes the legs that generation's,
    :meth:`save` records that the legs now are generation ``gen``.
    """

    kind: str

    @property
    def dense(self) -> DenseLeg: ...

    @property
    def bm25(self) -> LexicalLeg: ...

    def __len__(self) -> int: ...

    def holds(self, gen: int) -> bool:
        """Whether generation ``gen`` is kept (and :meth:`load` can bring it back)."""

    def load(self, gen: int) -> bool:
        """Make the legs generation ``gen``'s; False when it is not kept (the caller rebuilds from SQLite)."""

    def save(self, gen: int) -> None:
        """Record the legs as generation ``gen`` (and forget every other)."""

    def update(self, added: Batch | None = None, removed: Sequence[int] = (), *,
               all_rows: AllRows | None = None) -> None:
        """Apply one batch of writes: add ``added``, remove ``removed`` ids; ``all_rows`` is read only by a
        backend whose BM25 cannot be updated in place (the local one rebuilds it once per batch)."""

    def rebuild(self, ids: np.ndarray, vectors: np.ndarray, texts: Sequence[str], *,
                table: ChunkTable | None = None) -> None:
        """Replace everything with these chunks (from SQLite, the source of truth; ``table`` when the caller has
        the rows with their documents and languages, so BM25 stems each in its own language)."""

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
    ``dense_kind``: ``auto`` (by size), ``flat`` or ``ivf``. With a ``folder``, a
    generation is kept as ``dense.g<N>.faiss`` and ``bm25.g<N>/`` there, written
    through a temporary name and an atomic rename, older generations removed.
    """

    kind = "local"

    def __init__(self, dim: int = 384, *, k1: float = 1.2, b: float = 0.75, dense_kind: str = "auto",
                 folder: Path | None = None):
        self.dim, self.k1, self.b, self.dense_kind = dim, k1, b, dense_kind
        self.folder = Path(folder) if folder is not None else None
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)
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

    # ------------------------------------------------------------------ generations (files under folder)

    def paths(self, gen: int) -> tuple[Path, Path]:
        """``(folder/dense.g<gen>.faiss, folder/bm25.g<gen>)``. Raises ``ValueError`` without a folder."""
        if self.folder is None:
            raise ValueError("this local backend keeps no files (no folder)")
        return self.folder / f"dense.g{gen}.faiss", self.folder / f"bm25.g{gen}"

    def holds(self, gen: int) -> bool:
        """Whether both index files of generation ``gen`` are on disk."""
        if self.folder is None:
            return False
        dpath, bpath = self.paths(gen)
        return dpath.is_file() and (bpath / "params.json").is_file()

    def load(self, gen: int) -> bool:
        """Read generation ``gen``'s files into new legs; False when missing or unreadable (rebuild from SQLite)."""
        if self.folder is None:
            return False
        dpath, bpath = self.paths(gen)
        try:
            dense, bm25 = DenseIndex.load(dpath), BM25Index.load(bpath)
        except Exception:  # noqa: BLE001 - missing or half-removed cache: the caller rebuilds from SQLite
            return False
        self._dense, self._bm25 = dense, bm25
        return True

    def save(self, gen: int) -> None:
        """Write the legs as generation ``gen``'s files (temp name + atomic rename) and drop every other file of
        the folder. Called under the store's write lock, so no other writer interleaves."""
        if self.folder is None:
            return
        dpath, bpath = self.paths(gen)
        tag = f".tmp{os.getpid()}.{threading.get_ident()}"
        tmp_d, tmp_b = dpath.with_name(dpath.name + tag), bpath.with_name(bpath.name + tag)
        self._dense.save(tmp_d)
        os.replace(tmp_d, dpath)
        shutil.rmtree(tmp_b, ignore_errors=True)
        self._bm25.save(tmp_b)
        shutil.rmtree(bpath, ignore_errors=True)
        os.replace(tmp_b, bpath)
        keep = {dpath.name, bpath.name}
        for p in self.folder.iterdir():
            if p.name not in keep:
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)

    # ------------------------------------------------------------------ writes

    def update(self, added: Batch | None = None, removed: Sequence[int] = (), *,
               all_rows: AllRows | None = None) -> None:
        """See :meth:`SearchBackend.update`. Raises ``ValueError`` when BM25 must change and ``all_rows`` is None.

        The dense index is updated in place (new objects only when it is rebuilt: flat/IVF crossing or stale),
        BM25 rebuilt once from ``all_rows()`` (a new object): a reader holding the previous legs keeps them.
        """
        if (added is not None or removed) and all_rows is None:
            raise ValueError("the local BM25 index is rebuilt per batch: pass all_rows")
        if removed:
            self._dense.remove(removed)
        if added is not None and len(added.ids):
            self._dense.add(added.ids, added.vectors)
        want = choose_kind(len(self._dense), self.dense_kind)
        if want != self._dense.kind or self._dense.stale:
            ids = self._dense.ids()
            self._dense = DenseIndex.build(ids, self._dense.vectors(ids), dim=self.dim, kind=want)
        if added is not None or removed:
            self._bm25 = all_rows().bm25(self.k1, self.b)

    def rebuild(self, ids: np.ndarray, vectors: np.ndarray, texts: Sequence[str], *,
                table: ChunkTable | None = None) -> None:
        """Replace both legs by new ones over these chunks (``table``: their documents and languages for BM25)."""
        self._dense = DenseIndex.build(ids, vectors, dim=self.dim, kind=self.dense_kind)
        table = table or ChunkTable(np.asarray(ids, np.int64), list(texts), None)
        self._bm25 = table.bm25(self.k1, self.b)

    def close(self) -> None:
        return None
