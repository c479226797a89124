"""The index cache: the search indexes (and term statistics) of one store generation (issue 12), held by a
search backend (:mod:`rag.store.backend`, issue 23).

SQLite is the source of truth (every chunk row holds its text and float32
vector). Every change to the chunks is one transaction that bumps
``meta.generation``; the backend's indexes are caches of generation ``N``. The
local backend keeps them as files:

    index/dense.g<N>.faiss   FAISS over the chunk vectors (ids = chunk row ids): exact IndexFlatIP below
                             20k chunks, IVF-Flat from there (rag.index.dense.choose_kind, issue 18)
    index/bm25.g<N>/         bm25s index over the chunk texts (:class:`rag.index.bm25.BM25Index`)

written through a temporary name and an atomic rename by the one writer that
holds the write lock (:mod:`rag.store.locks`), older generations removed; the
Milvus backend records the generation its collection holds. Either way the
cache drives it through the same calls (:class:`rag.store.backend.SearchBackend`).
Missing or unreadable indexes (a ``kill -9``, a copied store, a lost collection) are rebuilt from
SQLite by the ONE rebuild path, :meth:`IndexCache.rebuild`, and written back.
Another process's changes are seen by comparing generations
(:meth:`IndexCache.current`).

Updates are deltas (:class:`IndexDelta`: chunk ids added with their vectors,
chunk ids removed). A delta may cover any number of documents (deltas add up
with ``+``), so a batch of documents can be committed with one
:meth:`IndexCache.commit`: the dense index is updated in place and BM25
(``bm25s`` has no incremental add) is rebuilt once from the chunk texts.

The term statistics (:class:`rag.text.TermStats`, document frequencies over
the chunk texts, for the learned gate's and the excerpts' IDF) are computed on
first use and kept with the generation's indexes, so they are recomputed only
after the store changed. So is anything a layer above derives from the chunk
rows (:meth:`IndexCache.memo`), optionally kept on disk with the generation
(:meth:`IndexCache.artifact`: ``index/<name>.g<N>.json``, e.g. the calibrated
gate's ``calibration-v1``, issue 15).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import numpy as np

from rag.index.units import UnitIndex
from rag.store.backend import Batch, ChunkTable, DenseLeg, LexicalLeg, LocalBackend, SearchBackend
from rag.store.locks import StoreLocks
from rag.store.milvus import MilvusBackend, resolve_uri
from rag.store.schema import get_meta, set_meta
from rag.text import TermStats

T = TypeVar("T")


@dataclass(frozen=True)
class IndexDelta:
    """What one write changes in the indexes: chunk ids added (with their vectors) and chunk ids removed.

    ``added_ids`` ``(n,)`` int64 chunk row ids; ``added_vectors`` ``(n, dim)``
    float32 unit rows; ``removed_ids`` chunk row ids that no longer exist.
    ``a + b`` is one delta doing ``a`` then ``b`` (an id added by ``a`` and
    removed by ``b`` simply disappears), so a batch commits once.
    """

    added_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    added_vectors: np.ndarray | None = None
    removed_ids: tuple[int, ...] = ()

    @classmethod
    def add(cls, ids, vectors: np.ndarray) -> "IndexDelta":
        """A delta adding ``vectors`` ((n, dim) float32) under chunk ``ids`` (n)."""
        return cls(np.asarray(ids, np.int64).reshape(-1), np.ascontiguousarray(vectors, np.float32))

    @classmethod
    def remove(cls, ids) -> "IndexDelta":
        """A delta removing chunk ``ids``."""
        return cls(removed_ids=tuple(int(i) for i in ids))

    def __add__(self, other: "IndexDelta") -> "IndexDelta":
        gone, mine = set(other.removed_ids), set(self.added_ids.tolist())
        keep = np.array([i not in gone for i in self.added_ids.tolist()], dtype=bool)
        vecs = [v for v in (self.added_vectors[keep] if self.added_vectors is not None else None,
                            other.added_vectors) if v is not None and len(v)]
        removed = self.removed_ids + tuple(i for i in other.removed_ids if i not in mine)
        return IndexDelta(np.concatenate([self.added_ids[keep], other.added_ids]).astype(np.int64),
                          np.concatenate(vecs) if vecs else None, tuple(dict.fromkeys(removed)))


@dataclass
class Indexes:
    """The two legs of one generation (the backend's, :class:`rag.store.backend.DenseLeg` and ``LexicalLeg``).
    ``term_stats`` is filled on first use (:meth:`IndexCache.term_stats`)."""

    generation: int
    dense: DenseLeg
    bm25: LexicalLeg
    term_stats: TermStats | None = None
    derived: dict = field(default_factory=dict)


@dataclass
class _Batch:
    """The writes of one batch: generation before it (``base``), after its last write (``last``), their summed
    delta, and whether every generation step in between was one of its own (``own_only``)."""

    base: int | None = None
    last: int | None = None
    delta: IndexDelta = field(default_factory=IndexDelta)
    own_only: bool = True

    def add(self, old: int, gen: int, delta: IndexDelta) -> None:
        if self.base is None:
            self.base = old
        elif old != self.last:
            self.own_only = False
        self.last = gen
        self.delta = self.delta + delta


class IndexCache:
    """The search indexes, per generation, of the store whose SQLite connection is ``conn``, held by ``backend``.

    ``folder`` where the layers above keep what they derive per generation (:meth:`artifact`); ``locks`` the
    store's :class:`rag.store.locks.StoreLocks` (its thread lock guards ``conn``; its write lock guards the
    indexes); ``backend`` a :class:`rag.store.backend.SearchBackend` (the local FAISS + bm25s files, or Milvus).
    """

    def __init__(self, folder: Path, conn: sqlite3.Connection, locks: StoreLocks, backend: SearchBackend):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.conn, self.locks, self.backend = conn, locks, backend
        self._idx: Indexes | None = None
        self._batch: _Batch | None = None
        self._backend_gen: int | None = None  # the generation the backend's legs hold now

    # ------------------------------------------------------------------ reads

    def files_present(self, gen: int) -> bool:
        """Whether the backend keeps generation ``gen`` (its files on disk, or its collection at that generation)."""
        return self.backend.holds(gen)

    def _legs(self, gen: int) -> Indexes:
        return Indexes(gen, self.backend.dense, self.backend.bm25)

    def generation(self) -> int:
        """The store's committed generation (``meta.generation``; 0 for a new store)."""
        with self.locks.thread:
            return int(get_meta(self.conn, "generation") or 0)

    def rows(self, *, vectors: bool = True, contents: bool = False) -> ChunkTable:
        """Every chunk row (id, text, document and its language and, with ``vectors``, the stored vector; with
        ``contents``, the quoted content), read in the caller's transaction."""
        with self.locks.thread:
            cols = ("c.id, c.text, c.doc_id, d.language" + (", c.vector" if vectors else "")
                    + (", c.content" if contents else ""))
            rows = self.conn.execute(f"SELECT {cols} FROM chunks c LEFT JOIN documents d ON d.id = c.doc_id "
                                     "ORDER BY c.id").fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = (np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32).reshape(len(rows), self.backend.dim)
                if vectors else None)
        return ChunkTable(ids, [r[1] for r in rows], vecs, [r[-1] for r in rows] if contents else None,
                          [r[2] for r in rows], [r[3] for r in rows])

    def _snapshot(self, *, vectors: bool = True, contents: bool = False) -> tuple[int, ChunkTable]:
        """The generation and the chunk rows, consistent with each other.

        Inside the caller's transaction when one is open (a writer), else in a
        read transaction of its own.
        """
        with self.locks.thread:
            own = not self.conn.in_transaction
            if own:
                self.conn.execute("BEGIN")
            try:
                return int(get_meta(self.conn, "generation") or 0), self.rows(vectors=vectors, contents=contents)
            finally:
                if own:
                    self.conn.execute("COMMIT")

    def rebuild(self) -> Indexes:
        """The backend refilled from SQLite for its current generation (the one rebuild path); its legs."""
        gen, table = self._snapshot()
        self._backend_gen = None
        self.backend.rebuild(table.ids, table.vectors, table.texts, table=table)
        self._backend_gen = gen
        return self._legs(gen)

    def _load(self, gen: int) -> Indexes | None:
        if self._backend_gen != gen:
            self._backend_gen = None
            if not self.backend.load(gen):
                return None
            self._backend_gen = gen
        return self._legs(gen)

    def current(self) -> Indexes:
        """The indexes of the committed generation: kept in memory, else loaded, else rebuilt and written back.

        Another process's commits are seen here (the generation moved).
        """
        gen = self.generation()
        with self.locks.thread:
            if self._idx is not None and (self._idx.generation == gen or self._batch is not None):
                return self._idx  # during this process's batch: the indexes as they were before it
        idx = self._load(gen)
        if idx is None:
            idx = self.rebuild()
            self._write_back(idx)
        with self.locks.thread:
            if self._idx is None or idx.generation >= self._idx.generation:
                self._idx = idx
            return self._idx

    def term_stats(self) -> TermStats:
        """Document frequencies over every chunk text (:class:`rag.text.TermStats`) of the current generation.

        Computed on first use (about 0.3 s at 1k chunks) and kept with the
        generation's indexes.
        """
        idx = self.current()
        if idx.term_stats is None:
            gen, table = self._snapshot(vectors=False)
            stats = TermStats.from_texts(table.texts)
            if gen != idx.generation:
                return stats
            idx.term_stats = stats
        return idx.term_stats

    def units(self) -> UnitIndex | None:
        """The unit vectors of the current generation (issue 27, :class:`rag.index.units.UnitIndex`), read from
        ``chunk_units`` on first use and kept with the generation's indexes (1.5 KiB per unit, about 3.3 units
        per chunk); ``None`` while this process's batch is writing (the indexes it searches are the older ones)."""
        idx = self.current()
        if "_units" not in idx.derived:
            with self.locks.thread:
                own = not self.conn.in_transaction
                if own:
                    self.conn.execute("BEGIN")
                try:
                    gen = int(get_meta(self.conn, "generation") or 0)
                    rows = self.conn.execute("SELECT id, chunk_id, vector FROM chunk_units ORDER BY id").fetchall()
                finally:
                    if own:
                        self.conn.execute("COMMIT")
            if gen != idx.generation:
                return None
            dim = self.backend.dim
            vecs = (np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), dim)
                    if rows else np.zeros((0, dim), np.float32))
            idx.derived["_units"] = UnitIndex([r[0] for r in rows], [r[1] for r in rows], vecs, dim=dim)
        return idx.derived["_units"]

    def unit_cosines(self, chunk_ids: Sequence[int], q_vec: np.ndarray) -> dict[int, list[tuple[int, int, float]]]:
        """Per chunk id of ``chunk_ids``, ``(start, end, cosine)`` of each of its stored units (``chunk_units``:
        canonical offsets, code points) against ``q_vec`` ((dim,) unit float32); a chunk of one unit has none."""
        ids = [int(i) for i in chunk_ids]
        if not ids:
            return {}
        q = np.asarray(q_vec, np.float32).reshape(-1)
        with self.locks.thread:
            rows = self.conn.execute(f'SELECT chunk_id, start, "end", vector FROM chunk_units WHERE chunk_id IN '
                                     f'({",".join("?" * len(ids))}) ORDER BY id', ids).fetchall()
        out: dict[int, list[tuple[int, int, float]]] = {}
        for cid, a, b, v in rows:
            out.setdefault(int(cid), []).append((int(a), int(b), float(np.frombuffer(v, np.float32) @ q)))
        return out

    def memo(self, name: str, compute: Callable[[ChunkTable], T]) -> T:
        """A value derived from the current generation's chunk rows, computed once and kept with its indexes.

        ``compute`` gets every row with vectors and contents. The layers above
        keep what they derive here (the answer layer's gate statistics, issue
        15) without the index layer knowing what it is.
        """
        idx = self.current()
        if name not in idx.derived:
            gen, table = self._snapshot(contents=True)
            value = compute(table)
            if gen != idx.generation:
                return value
            idx.derived[name] = value
        return idx.derived[name]

    def artifact(self, name: str, compute: Callable[[ChunkTable], str], parse: Callable[[str], T]) -> T:
        """Like :meth:`memo`, and also kept on disk as ``index/<name>.g<N>.json`` next to the generation's indexes.

        ``compute`` returns the text to store, ``parse`` reads it back (a
        ``ValueError`` from it, e.g. an older format, means: compute again).
        The file goes with the generation's other files when the store changes
        (issue 15: the gate's calibration, re-run when the documents change).
        """
        def load_or_compute(table: ChunkTable) -> T:
            gen = self.generation()
            path = self.folder / f"{name}.g{gen}.json"
            try:
                return parse(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                pass
            text = compute(table)
            tmp = path.with_name(f"{path.name}.tmp{os.getpid()}.{threading.get_ident()}")
            try:
                tmp.write_text(text, encoding="utf-8")
                with self.locks.write():
                    if self.generation() == gen:
                        os.replace(tmp, path)
            except OSError:  # a read-only store still answers from memory
                pass
            finally:
                tmp.unlink(missing_ok=True)
            return parse(text)

        return self.memo(name, load_or_compute)

    # ------------------------------------------------------------------ writes

    def commit(self, delta: IndexDelta) -> int:
        """Move to the next generation after a write that changed the chunk rows by ``delta``; returns it.

        Call inside :meth:`rag.store.locks.StoreLocks.write` (with the
        connection), after the rows are written: bumps ``meta.generation`` in
        that transaction, updates the in-memory indexes (incremental when they
        were at the previous generation, else :meth:`rebuild`) and writes the
        new generation's files. On an exception the in-memory indexes are
        dropped (the caller's transaction rolls back).
        """
        old = int(get_meta(self.conn, "generation") or 0)
        gen = old + 1
        set_meta(self.conn, "generation", gen)
        if self._batch is not None:  # rows and generation move now; the indexes once, at end_batch()
            self._batch.add(old, gen, delta)
            return gen
        return self._apply(old, gen, delta)

    def _apply(self, old: int, gen: int, delta: IndexDelta) -> int:
        """Indexes of generation ``old`` (in memory or kept by the backend) plus ``delta`` become generation
        ``gen``, saved; a rebuild from SQLite when ``old``'s are gone."""
        try:
            if self._load(old) is not None:
                self._backend_gen = None
                self.backend.update(self._added(delta), removed=delta.removed_ids,
                                    all_rows=lambda: self.rows(vectors=False))
                self._backend_gen = gen
                idx = self._legs(gen)
            else:
                idx = self.rebuild()
            self._idx = idx
            self.backend.save(idx.generation)
        except BaseException:
            self._idx = self._backend_gen = None
            raise
        return gen

    def _added(self, delta: IndexDelta) -> Batch | None:
        """The chunks ``delta`` adds, with their texts read from SQLite (in the writer's transaction)."""
        if delta.added_vectors is None or not len(delta.added_ids):
            return None
        ids = [int(i) for i in delta.added_ids]
        texts: dict[int, str] = {}
        with self.locks.thread:
            for s in range(0, len(ids), 500):
                part = ids[s:s + 500]
                texts.update(self.conn.execute(
                    f"SELECT id, text FROM chunks WHERE id IN ({','.join('?' * len(part))})", part).fetchall())
        return Batch(np.asarray(ids, np.int64), delta.added_vectors, [texts[i] for i in ids])

    def begin_batch(self) -> None:
        """Start deferring index updates (issue 18): until :meth:`end_batch`, :meth:`commit` moves the generation
        with each write but leaves the indexes alone, and this process searches the indexes as they were."""
        with self.locks.thread:
            if self._batch is None:
                self._batch = _Batch()

    def end_batch(self) -> int | None:
        """Apply the batch's writes to the indexes at once: the dense index updated in place, BM25 rebuilt once.

        Call inside :meth:`rag.store.locks.StoreLocks.write` (with the connection). When another writer
        committed in between, or this process's indexes are not the batch's starting ones, rebuilds from
        SQLite instead. Returns the generation the indexes now hold (``None`` if the batch wrote nothing).
        """
        with self.locks.thread:
            batch, self._batch = self._batch, None
        if batch is None or batch.base is None:
            return None
        gen = int(get_meta(self.conn, "generation") or 0)
        if batch.own_only and gen == batch.last:
            return self._apply(batch.base, gen, batch.delta)
        self._idx = None
        idx = self.rebuild()
        self._idx = idx
        self.backend.save(idx.generation)
        return idx.generation

    def _write_back(self, idx: Indexes) -> None:
        """Persist a rebuilt generation if it is still the committed one and the backend does not keep it yet."""
        try:
            with self.locks.write():
                if self.generation() == idx.generation and not self.backend.holds(idx.generation):
                    self.backend.save(idx.generation)
        except OSError:  # a read-only store still answers from memory
            pass


def open_index_cache(path: Path, conn: sqlite3.Connection, locks: StoreLocks, settings, *, encoder: str,
                     dim: int) -> IndexCache:
    """The index cache of the store at ``path`` over the search backend settings ``backend`` names (issue 18):
    the local FAISS + BM25 files under ``index/``, or a Milvus collection (``milvus_uri``, default
    ``<store>/milvus.db``) stamped with ``encoder`` and ``dim``. The collection's name is kept in the store's
    meta (``milvus_collection``) so every process opening this store uses the same one, also on a shared server.
    """
    s = settings
    if s.backend != "milvus":
        backend = LocalBackend(dim, k1=s.bm25_k1, b=s.bm25_b, folder=Path(path) / "index")
    else:
        with locks.write(conn):
            name = get_meta(conn, "milvus_collection")
            if name is None:
                name = f"rag_{uuid.uuid4().hex[:16]}"
                set_meta(conn, "milvus_collection", name)
        backend = MilvusBackend(resolve_uri(s.milvus_uri, path), encoder=encoder, dim=dim, collection=name,
                                k1=s.bm25_k1, b=s.bm25_b)
    return IndexCache(Path(path) / "index", conn, locks, backend)
