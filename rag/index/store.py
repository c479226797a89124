"""The persistent store: documents, chunks, vectors, the FAISS and BM25 indexes (design "What the store must promise").

PUBLIC API (stable; the app, the CLI and generation build on it)::

    store = Store(path, settings=None, embedder=None)   # opens or creates; ModelMismatchError on another embedder
    r = store.ingest_bytes(data, name, progress=None)   # -> IngestResult(status "ready" | "duplicate" | "failed" | "busy")
    r = store.ingest_path(path, progress=None)
    store.documents() -> list[DocumentRow]; store.get_document(id) -> DocumentRow | None
    store.canonical_text(id) -> str; store.original_path(id) -> Path
    store.chunk(chunk_id) -> ChunkRow; store.chunks(ids) -> list[ChunkRow]  (same order as ids)
    store.delete(id) -> bool; store.retry(id) -> IngestResult; store.retry_failed() -> list[IngestResult]
    store.search(query, k=20, mode="hybrid") -> list[rag.types.Hit]
    store.gate(query, threshold=None, max_sources=None, gate=None, min_score=None) -> rag.answer.gate.GateResult
    store.is_empty -> bool; store.chunk_count -> int

``progress(stage, done, total)`` is called with stage ``"extract"``, ``"chunk"``,
``"embed"`` (done/total in chunks) and ``"index"``, so a UI can draw a bar.

Layout under the store directory::

    store.sqlite3            SQLite (WAL): meta, documents, chunks (with each chunk's float32 vector)
    files/<sha256>           the original bytes, named by content hash, never by the client's name
    index/dense.g<N>.faiss   FAISS IndexIDMap2(IndexFlatIP) for generation N
    index/bm25.g<N>/         bm25s index for generation N
    locks/write.lock         fcntl.flock around every write (several processes may share a store)
    locks/<sha256>.lock      held while that document is being indexed

SQLite is the source of truth and every change is one transaction that bumps
the ``generation`` counter; the index files are caches named by generation,
written through a temporary name and an atomic rename, and rebuilt from SQLite
when missing (e.g. after a ``kill -9``). A document whose indexing process died
(its lock is free while its status is still ``indexing``) is shown ``failed``
with a reason and can be retried. Another process's changes are picked up by
comparing generations before each search.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from rag.answer.gate import apply_gate
from rag.answer.learned_gate import TermStats, apply_learned_gate
from rag.errors import ExtractionError, ModelMismatchError, StoreError
from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.index.embed import EMBED_DIM, EMBED_MODEL_NAME, get_embedder
from rag.index.fusion import retrieve_planned
from rag.index.rerank import load_reranker
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.settings import PIPELINE_VERSION, get_settings
from rag.types import Hit, QueryPlan

Progress = Callable[[str, int, int], None]

STATUSES = ("queued", "indexing", "ready", "failed")
INTERRUPTED = "interrupted while indexing (the process stopped); retry"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, media_type TEXT, size_bytes INTEGER NOT NULL,
    status TEXT NOT NULL, reason TEXT, chunk_count INTEGER NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0,
    title TEXT, embed_model TEXT NOT NULL, embed_dim INTEGER NOT NULL, pipeline_version TEXT NOT NULL,
    extractor TEXT, extractor_version TEXT, warnings TEXT NOT NULL DEFAULT '[]', canonical TEXT,
    has_file INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, text TEXT NOT NULL, content TEXT NOT NULL, section TEXT NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, page INTEGER, page_end INTEGER,
    token_split INTEGER NOT NULL DEFAULT 0, vector BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
"""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def clean_name(name: str) -> str:
    """A display name from a client-supplied file name: the last path component
    (``/`` and ``\\`` both split), NFC, without control characters (NUL included).

    Display metadata only: the store never uses it as a path. An empty result
    becomes ``"unnamed"``.
    """
    base = unicodedata.normalize("NFC", str(name)).replace("\\", "/").split("/")[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp")).strip()
    return base if base not in ("", ".", "..") else "unnamed"


@dataclass(frozen=True)
class DocumentRow:
    """One document as stored.

    ``id`` hex sha256 of the bytes; ``name`` the user's file name (display
    only); ``label`` the name shown in citations (the name plus ``(<8 hex>)``
    when another stored document has the same name); ``status`` one of
    ``queued``/``indexing``/``ready``/``failed``; ``reason`` why it failed;
    ``chunk_count`` the chunk rows really stored (written by the server after
    indexing); ``pages`` physical pages (PDF) or 0; timestamps ISO 8601 UTC.
    """

    id: str
    name: str
    label: str
    media_type: str | None
    size_bytes: int
    status: str
    reason: str | None
    chunk_count: int
    pages: int
    title: str | None
    embed_model: str
    embed_dim: int
    pipeline_version: str
    extractor: str | None
    extractor_version: str | None
    warnings: tuple[str, ...]
    has_file: bool
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class ChunkRow:
    """One stored chunk joined with its document (what citations and the CLI need).

    ``text`` is what was embedded; ``content`` what gets quoted
    (``canonical[start:end] == content``, 0-based code points); ``page`` /
    ``page_end`` 1-based physical pages or ``None`` for text documents.
    """

    chunk_id: int
    document_id: str
    document_name: str
    document_label: str
    media_type: str
    index: int
    text: str
    content: str
    section: tuple[str, ...]
    start: int
    end: int
    page: int | None
    page_end: int | None
    token_split: bool = False


@dataclass(frozen=True)
class IngestResult:
    """What happened to one file.

    ``status``: ``ready`` (indexed now), ``duplicate`` (same bytes already
    indexed: nothing done), ``failed`` (``reason`` says why; the row stays,
    retryable) or ``busy`` (another process is indexing the same bytes right
    now). ``message`` is the one-line status the CLI prints; ``elapsed_ms``
    wall time.
    """

    document_id: str
    name: str
    status: str
    reason: str | None = None
    chunk_count: int = 0
    warnings: tuple[str, ...] = ()
    elapsed_ms: float = 0.0
    existing_name: str | None = None

    @property
    def message(self) -> str:
        short = self.document_id[:8]
        if self.status == "ready":
            return f"ready      {self.name} ({short}): {self.chunk_count} chunks"
        if self.status == "duplicate":
            same = f" as {self.existing_name}" if self.existing_name and self.existing_name != self.name else ""
            return f"duplicate  {self.name} ({short}): same bytes already indexed{same}; nothing done"
        if self.status == "busy":
            return f"busy       {self.name} ({short}): being indexed by another process"
        return f"failed     {self.name} ({short}): {self.reason}"


@dataclass
class _Indexes:
    generation: int
    dense: DenseIndex
    bm25: BM25Index


class Store:
    """A document store under one directory (see the module docstring for the layout and promises).

    ``settings`` default :func:`rag.settings.get_settings`; ``embedder`` any
    object with ``name``, ``dim``, ``encode(texts)`` and ``encode_query(q)``
    (default: the shared all-MiniLM-L6-v2, loaded on first use). Raises
    :class:`ModelMismatchError` when the store was indexed with another model
    name or dimension (``stale`` lists the documents to re-index), and
    :class:`StoreError` when the directory cannot be used.
    Thread-safe within a process; several processes may share one directory.
    """

    def __init__(self, path: str | Path, settings=None, embedder=None):

        self.settings = settings or get_settings()
        self.path = Path(path).resolve()
        self._embedder = embedder
        self.model_name = getattr(embedder, "name", None) or EMBED_MODEL_NAME
        self.model_dim = int(getattr(embedder, "dim", None) or EMBED_DIM)
        self._lock = threading.RLock()
        self._idx: _Indexes | None = None
        self._reranker = None
        self._reranker_checked = False
        self._term_stats_cache = None
        try:
            for sub in ("files", "index", "locks"):
                (self.path / sub).mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path / "store.sqlite3", timeout=60, isolation_level=None,
                                       check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA busy_timeout=60000")
            with self._write(tx=False):
                self._db.executescript(_SCHEMA)
            with self._write():
                self._stamp_model()
        except sqlite3.Error as e:
            raise StoreError(f"cannot open the store at {self.path}: {e}") from e
        self._reap_stale()

    # ------------------------------------------------------------------ plumbing

    @property
    def embedder(self):
        """The embedder (loaded on first use)."""
        if self._embedder is None:

            self._embedder = get_embedder(self.settings.embed_batch_size)
        return self._embedder

    @contextlib.contextmanager
    def _write(self, tx: bool = True) -> Iterator[None]:
        """Exclusive write section: thread lock + ``flock`` on ``locks/write.lock`` + one SQLite transaction."""
        with self._lock:
            with open(self.path / "locks" / "write.lock", "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    if not tx:
                        yield
                        return
                    self._db.execute("BEGIN IMMEDIATE")
                    try:
                        yield
                    except BaseException:
                        self._db.execute("ROLLBACK")
                        raise
                    self._db.execute("COMMIT")
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def _doc_lock(self, doc_id: str) -> Iterator[bool]:
        """Hold ``locks/<doc_id>.lock`` (non-blocking); yields False if another process holds it."""
        with open(self.path / "locks" / f"{doc_id}.lock", "a+") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _doc_lock_free(self, doc_id: str) -> bool:
        with self._doc_lock(doc_id) as got:
            return got

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, str(value)))

    def _generation(self) -> int:
        with self._lock:
            return int(self._meta("generation") or 0)

    def _bump_generation(self) -> int:
        gen = int(self._meta("generation") or 0) + 1
        self._set_meta("generation", gen)
        return gen

    def _stamp_model(self) -> None:
        name, dim = self._meta("embed_model"), self._meta("embed_dim")
        if name is None:
            self._set_meta("embed_model", self.model_name)
            self._set_meta("embed_dim", self.model_dim)
            self._set_meta("generation", 0)
            self._set_meta("created_at", _now())
            return
        stale = [r[0] for r in self._db.execute(
            "SELECT name FROM documents WHERE status='ready' AND (embed_model!=? OR embed_dim!=?) ORDER BY name",
            (self.model_name, self.model_dim))]
        if name != self.model_name or int(dim) != self.model_dim:
            stale = stale or [r[0] for r in self._db.execute("SELECT name FROM documents WHERE status='ready' ORDER BY name")]
            listed = ", ".join(stale) if stale else "(no documents)"
            raise ModelMismatchError(
                f"the store at {self.path} was indexed with {name} ({dim}-d), not {self.model_name} "
                f"({self.model_dim}-d); vectors are never mixed. Re-index into a new store: {listed}", stale)

    def _reap_stale(self) -> None:
        """Mark ``queued``/``indexing`` documents whose indexing process is gone as failed (retryable)."""
        with self._lock:
            rows = self._db.execute("SELECT id FROM documents WHERE status IN ('queued','indexing')").fetchall()
        dead = [r[0] for r in rows if self._doc_lock_free(r[0])]
        if not dead:
            return
        with self._write():
            for doc_id in dead:
                self._db.execute(
                    "UPDATE documents SET status='failed', reason=?, updated_at=? "
                    "WHERE id=? AND status IN ('queued','indexing')", (INTERRUPTED, _now(), doc_id))

    # ------------------------------------------------------------------ indexes

    def _index_paths(self, gen: int) -> tuple[Path, Path]:
        return self.path / "index" / f"dense.g{gen}.faiss", self.path / "index" / f"bm25.g{gen}"

    def _rebuild_from_db(self) -> _Indexes:
        """Build both indexes from SQLite in one read transaction (consistent with its generation)."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                gen = int(self._meta("generation") or 0)
                rows = self._db.execute("SELECT id, text, vector, doc_id FROM chunks ORDER BY id").fetchall()
            finally:
                self._db.execute("COMMIT")
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.model_dim)
        dense = DenseIndex.build(ids, vecs, dim=self.model_dim)
        bm25 = BM25Index.build([r[1] for r in rows], ids, k1=self.settings.bm25_k1, b=self.settings.bm25_b,
                               groups=[r[3] for r in rows])
        return _Indexes(gen, dense, bm25)

    def _load_indexes(self, gen: int) -> _Indexes | None:
        dpath, bpath = self._index_paths(gen)
        try:
            return _Indexes(gen, DenseIndex.load(dpath), BM25Index.load(bpath))
        except Exception:  # noqa: BLE001 - missing or half-removed cache: rebuild from SQLite
            return None

    def _save_indexes(self, idx: _Indexes) -> None:
        """Write the index files of ``idx.generation`` (temp name + atomic rename) and drop older ones.

        Called inside :meth:`_write`, so no other writer interleaves.
        """
        dpath, bpath = self._index_paths(idx.generation)
        tag = f".tmp{os.getpid()}.{threading.get_ident()}"
        tmp_d, tmp_b = dpath.with_name(dpath.name + tag), bpath.with_name(bpath.name + tag)
        idx.dense.save(tmp_d)
        os.replace(tmp_d, dpath)
        shutil.rmtree(tmp_b, ignore_errors=True)
        idx.bm25.save(tmp_b)
        shutil.rmtree(bpath, ignore_errors=True)
        os.replace(tmp_b, bpath)
        keep = {dpath.name, bpath.name}
        for p in (self.path / "index").iterdir():
            if p.name not in keep:
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)

    def _indexes(self) -> _Indexes:
        """The in-memory indexes for the current generation (reloaded when another process changed the store)."""
        gen = self._generation()
        with self._lock:
            if self._idx is not None and self._idx.generation == gen:
                return self._idx
        idx = self._load_indexes(gen) or self._rebuild_from_db()
        with self._lock:
            if self._idx is None or idx.generation >= self._idx.generation:
                self._idx = idx
            return self._idx

    def _commit_indexes(self, gen: int, added: tuple[np.ndarray, np.ndarray] | None = None,
                        removed: Sequence[int] = ()) -> None:
        """After a write that moved the store from ``gen - 1`` to ``gen``: update in memory and persist.

        Must be called inside :meth:`_write` (the new generation is already
        visible to this connection). Incremental when our cache was at ``gen - 1``,
        else a rebuild from SQLite.
        """
        cur = self._idx
        if cur is None or cur.generation != gen - 1:
            cur = self._load_indexes(gen - 1)
        if cur is not None and cur.generation == gen - 1:
            dense = cur.dense
            if removed:
                dense.remove(removed)
            if added is not None:
                dense.add(*added)
            rows = self._db.execute("SELECT id, text, doc_id FROM chunks ORDER BY id").fetchall()
            bm25 = BM25Index.build([r[1] for r in rows], [r[0] for r in rows],
                                   k1=self.settings.bm25_k1, b=self.settings.bm25_b, groups=[r[2] for r in rows])
            idx = _Indexes(gen, dense, bm25)
        else:
            idx = self._rebuild_in_tx(gen)
        self._idx = idx
        self._save_indexes(idx)

    def _rebuild_in_tx(self, gen: int) -> _Indexes:
        rows = self._db.execute("SELECT id, text, vector, doc_id FROM chunks ORDER BY id").fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vecs = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(len(rows), self.model_dim)
        return _Indexes(gen, DenseIndex.build(ids, vecs, dim=self.model_dim),
                        BM25Index.build([r[1] for r in rows], ids, k1=self.settings.bm25_k1, b=self.settings.bm25_b,
                                        groups=[r[3] for r in rows]))

    # ------------------------------------------------------------------ ingest

    def _save_original(self, doc_id: str, data: bytes) -> None:
        dest = self.path / "files" / doc_id
        if dest.is_file() and dest.stat().st_size == len(data):
            return
        tmp = dest.with_name(f"{doc_id}.tmp{os.getpid()}.{threading.get_ident()}")
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)

    def _set_failed(self, doc_id: str, reason: str) -> None:
        with self._write():
            self._db.execute("UPDATE documents SET status='failed', reason=?, chunk_count=0, updated_at=? WHERE id=?",
                             (reason, _now(), doc_id))

    def ingest_bytes(self, data: bytes, name: str, progress: Progress | None = None) -> IngestResult:
        """Extract, chunk (strategy E), embed and index one file's bytes (design stages 1-4).

        ``name`` is the client's file name: display metadata only (see
        :func:`clean_name`); the bytes are kept as ``files/<sha256>``. The same
        bytes twice: ``duplicate``, nothing done. A file that cannot be
        extracted: ``failed`` with the reason, kept visible and retryable;
        other documents are never affected. Never raises for bad input.
        """
        t0 = time.perf_counter()
        progress = progress or (lambda stage, done, total: None)
        name = clean_name(name)
        doc_id = hashlib.sha256(data).hexdigest()

        def result(status: str, **kw) -> IngestResult:
            return IngestResult(doc_id, name, status, elapsed_ms=(time.perf_counter() - t0) * 1000, **kw)

        existing = self.get_document(doc_id)
        if existing is not None and existing.status == "ready":
            return result("duplicate", chunk_count=existing.chunk_count, existing_name=existing.name)
        with self._doc_lock(doc_id) as got:
            if not got:
                return result("busy")
            existing = self.get_document(doc_id)  # re-check under the document lock
            if existing is not None and existing.status == "ready":
                return result("duplicate", chunk_count=existing.chunk_count, existing_name=existing.name)
            too_big = len(data) > self.settings.max_upload_mb * 1024 * 1024
            if not too_big:
                self._save_original(doc_id, data)
            self._begin_document(doc_id, name, len(data), has_file=not too_big)
            if too_big:
                reason = f"file too large ({len(data) / 2**20:.1f} MiB > {self.settings.max_upload_mb} MiB)"
                self._set_failed(doc_id, reason)
                return result("failed", reason=reason)
            try:
                doc, chunks, vecs = self._prepare(data, name, progress)
            except ExtractionError as e:
                self._set_failed(doc_id, e.reason)
                return result("failed", reason=e.reason)
            except Exception as e:  # noqa: BLE001 - one bad file must never take the others down
                reason = f"internal error while indexing: {type(e).__name__}: {e}"
                self._set_failed(doc_id, reason)
                return result("failed", reason=reason)
            if not chunks:
                reason = "no text to index (empty or blank document)"
                self._set_failed(doc_id, reason)
                return result("failed", reason=reason, warnings=tuple(doc.warnings))
            progress("index", 0, 1)
            n = self._finish_document(doc_id, doc, chunks, vecs)
            progress("index", 1, 1)
            return result("ready", chunk_count=n, warnings=tuple(doc.warnings))

    def _begin_document(self, doc_id: str, name: str, size: int, *, has_file: bool) -> None:

        now = _now()
        with self._write():
            self._db.execute(
                "INSERT INTO documents(id, name, size_bytes, status, embed_model, embed_dim, pipeline_version, "
                "has_file, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT(id) DO UPDATE SET name=excluded.name, status='indexing', reason=NULL, chunk_count=0, "
                "has_file=excluded.has_file, updated_at=excluded.updated_at",
                (doc_id, name, size, "indexing", self.model_name, self.model_dim, PIPELINE_VERSION,
                 int(has_file), now, now))

    def _prepare(self, data: bytes, name: str, progress: Progress):
        """Extract, chunk and embed (no lock held: the slow part)."""

        s = self.settings
        progress("extract", 0, 1)
        doc = extract_bytes(data, name)
        progress("extract", 1, 1)
        progress("chunk", 0, 1)
        chunks = chunk_document(doc, "E", budget_chars=s.chunk_budget_chars, overlap_chars=s.overlap_chars,
                                window_tokens=s.encoder_window_tokens,
                                count_tokens=getattr(self.embedder, "count_tokens", None))
        progress("chunk", 1, 1)
        bs = max(1, s.embed_batch_size)
        parts = []
        progress("embed", 0, len(chunks))
        for i in range(0, len(chunks), bs):
            parts.append(self.embedder.encode([c.text for c in chunks[i:i + bs]]))
            progress("embed", min(i + bs, len(chunks)), len(chunks))
        vecs = np.concatenate(parts) if parts else np.zeros((0, self.model_dim), np.float32)
        if vecs.shape != (len(chunks), self.model_dim):
            raise StoreError(f"{name}: embedder returned {vecs.shape}, expected ({len(chunks)}, {self.model_dim})")
        return doc, chunks, np.ascontiguousarray(vecs, dtype=np.float32)

    def _finish_document(self, doc_id: str, doc, chunks, vecs: np.ndarray) -> int:
        """One transaction: chunk rows + vectors, status ready, chunk count, generation + 1; then the index files."""
        with self._write():
            self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
            ids = []
            for c, v in zip(chunks, vecs):
                cur = self._db.execute(
                    'INSERT INTO chunks(doc_id, idx, text, content, section, start, "end", page, page_end, '
                    "token_split, vector) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (doc_id, c.index, c.text, c.content, json.dumps(list(c.section), ensure_ascii=False), c.start,
                     c.end, c.page, c.page_end, int(c.token_split), v.tobytes()))
                ids.append(cur.lastrowid)
            n = self._db.execute("SELECT COUNT(*) FROM chunks WHERE doc_id=?", (doc_id,)).fetchone()[0]
            self._db.execute(
                "UPDATE documents SET status='ready', reason=NULL, chunk_count=?, media_type=?, pages=?, title=?, "
                "extractor=?, extractor_version=?, warnings=?, canonical=?, embed_model=?, embed_dim=?, "
                "updated_at=? WHERE id=?",
                (n, doc.media_type, doc.page_count, doc.title, doc.extractor, doc.extractor_version,
                 json.dumps(list(doc.warnings), ensure_ascii=False), doc.canonical, self.model_name,
                 self.model_dim, _now(), doc_id))
            gen = self._bump_generation()
            self._commit_indexes(gen, added=(np.asarray(ids, np.int64), vecs))
        return n

    def ingest_path(self, path: str | Path, progress: Progress | None = None) -> IngestResult:
        """:meth:`ingest_bytes` on a file read from disk, named by its base name."""
        p = Path(path)
        try:
            data = p.read_bytes()
        except OSError as e:
            return IngestResult("", clean_name(p.name), "failed", reason=f"cannot read file: {e.strerror}")
        return self.ingest_bytes(data, p.name, progress)

    def retry(self, doc_id: str, progress: Progress | None = None) -> IngestResult:
        """Index a failed (or interrupted) document again from its stored original.

        Raises :class:`StoreError` if the id is unknown or the original was never kept.
        """
        doc = self.get_document(doc_id) or self._find_prefix(doc_id)
        if doc is None:
            raise StoreError(f"no document with id {doc_id}")
        if not doc.has_file or not self.original_path(doc.id).is_file():
            raise StoreError(f"{doc.name}: the original file was not kept ({doc.reason}); add it again")
        return self.ingest_bytes(self.original_path(doc.id).read_bytes(), doc.name, progress)

    def retry_failed(self, progress: Progress | None = None) -> list[IngestResult]:
        """:meth:`retry` every failed document that has its original; returns one result each."""
        return [self.retry(d.id, progress) for d in self.documents() if d.status == "failed" and d.has_file]

    def delete(self, doc_id: str) -> bool:
        """Remove a document: its row, chunks, vectors, BM25 entries and stored file. False if unknown.

        Raises :class:`StoreError` if it is being indexed right now.
        """
        doc = self.get_document(doc_id) or self._find_prefix(doc_id)
        if doc is None:
            return False
        with self._doc_lock(doc.id) as got:
            if not got:
                raise StoreError(f"{doc.name}: being indexed right now; delete it when it is done")
            with self._write():
                ids = [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE doc_id=?", (doc.id,))]
                self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc.id,))
                self._db.execute("DELETE FROM documents WHERE id=?", (doc.id,))
                gen = self._bump_generation()
                self._commit_indexes(gen, removed=ids)
                (self.path / "files" / doc.id).unlink(missing_ok=True)
        (self.path / "locks" / f"{doc.id}.lock").unlink(missing_ok=True)
        return True

    # ------------------------------------------------------------------ reads

    def _labels(self) -> dict[str, str]:
        dup = {r[0] for r in self._db.execute("SELECT name FROM documents GROUP BY name HAVING COUNT(*) > 1")}
        return {r[0]: (f"{r[1]} ({r[0][:8]})" if r[1] in dup else r[1])
                for r in self._db.execute("SELECT id, name FROM documents")}

    _DOC_COLS = ("id, name, media_type, size_bytes, status, reason, chunk_count, pages, title, embed_model, embed_dim, "
                 "pipeline_version, extractor, extractor_version, warnings, has_file, created_at, updated_at")

    def _doc_row(self, r, labels: dict[str, str]) -> DocumentRow:
        return DocumentRow(id=r[0], name=r[1], label=labels.get(r[0], r[1]), media_type=r[2], size_bytes=r[3],
                           status=r[4], reason=r[5], chunk_count=r[6], pages=r[7], title=r[8], embed_model=r[9],
                           embed_dim=r[10], pipeline_version=r[11], extractor=r[12], extractor_version=r[13],
                           warnings=tuple(json.loads(r[14] or "[]")), has_file=bool(r[15]), created_at=r[16],
                           updated_at=r[17])

    def documents(self) -> list[DocumentRow]:
        """Every document (any status), oldest first. Interrupted ones are shown ``failed``."""
        self._reap_stale()
        with self._lock:
            labels = self._labels()
            rows = self._db.execute(f"SELECT {self._DOC_COLS} FROM documents ORDER BY created_at, name, id").fetchall()
            return [self._doc_row(r, labels) for r in rows]

    def get_document(self, doc_id: str) -> DocumentRow | None:
        """The document with this id (full sha256), or ``None``."""
        with self._lock:
            r = self._db.execute(f"SELECT {self._DOC_COLS} FROM documents WHERE id=?", (doc_id,)).fetchone()
            return self._doc_row(r, self._labels()) if r else None

    def _find_prefix(self, prefix: str) -> DocumentRow | None:
        """A document by unique id prefix (at least 4 hex characters), as printed by the CLI."""
        if len(prefix) < 4 or any(c not in "0123456789abcdef" for c in prefix):
            return None
        with self._lock:
            ids = [r[0] for r in self._db.execute("SELECT id FROM documents WHERE id LIKE ?", (prefix + "%",))]
        return self.get_document(ids[0]) if len(ids) == 1 else None

    def canonical_text(self, doc_id: str) -> str:
        """The stored canonical text every offset points into. Raises :class:`StoreError` if not indexed."""
        with self._lock:
            r = self._db.execute("SELECT canonical FROM documents WHERE id=?", (doc_id,)).fetchone()
        if not r or r[0] is None:
            raise StoreError(f"no canonical text for document {doc_id}")
        return r[0]

    def original_path(self, doc_id: str) -> Path:
        """Path of the original bytes (``files/<sha256>``); it may not exist for unknown ids or too-large files."""
        if len(doc_id) != 64 or any(c not in "0123456789abcdef" for c in doc_id):
            raise StoreError(f"not a document id: {doc_id!r}")
        return self.path / "files" / doc_id

    def chunks(self, ids: Sequence[int]) -> list[ChunkRow]:
        """The chunk rows for ``ids``, in the same order. Raises :class:`StoreError` for an unknown id."""
        ids = [int(i) for i in ids]
        if not ids:
            return []
        with self._lock:
            labels = self._labels()
            got = {}
            for i in range(0, len(ids), 500):
                part = ids[i:i + 500]
                q = ('SELECT c.id, c.doc_id, d.name, d.media_type, c.idx, c.text, c.content, c.section, c.start, '
                     'c."end", c.page, c.page_end, c.token_split FROM chunks c JOIN documents d ON d.id = c.doc_id '
                     f"WHERE c.id IN ({','.join('?' * len(part))})")
                for r in self._db.execute(q, part):
                    got[r[0]] = ChunkRow(chunk_id=r[0], document_id=r[1], document_name=r[2],
                                         document_label=labels.get(r[1], r[2]), media_type=r[3] or "", index=r[4],
                                         text=r[5], content=r[6], section=tuple(json.loads(r[7])), start=r[8],
                                         end=r[9], page=r[10], page_end=r[11], token_split=bool(r[12]))
        missing = [i for i in ids if i not in got]
        if missing:
            raise StoreError(f"unknown chunk id(s): {missing[:5]} (deleted meanwhile?)")
        return [got[i] for i in ids]

    def chunk(self, chunk_id: int) -> ChunkRow:
        """One chunk row. Raises :class:`StoreError` if unknown."""
        return self.chunks([chunk_id])[0]

    def document_chunks(self, doc_id: str) -> list[ChunkRow]:
        """All chunks of one document, in document order."""
        with self._lock:
            ids = [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE doc_id=? ORDER BY idx", (doc_id,))]
        return self.chunks(ids)

    @property
    def chunk_count(self) -> int:
        """Chunk rows in the store (all belong to ready documents)."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    @property
    def is_empty(self) -> bool:
        """True when no chunk is indexed (searches return nothing; the gate refuses)."""
        return self.chunk_count == 0

    # ------------------------------------------------------------------ search

    @property
    def reranker(self):
        """The cross-encoder from ``models_dir`` if one is present (design stage 6), else ``None``."""
        if not self._reranker_checked:

            self._reranker = load_reranker(self.settings.models_dir)
            self._reranker_checked = True
        return self._reranker

    def _texts(self, ids: list[int]) -> list[str]:
        return [c.text for c in self.chunks(ids)]

    def search(self, query: str, k: int = 20, mode: str = "hybrid", *, rerank: bool | None = None) -> list[Hit]:
        """Top ``k`` chunks for ``query`` (design stages 4-6), best first, each with its cosine distance.

        ``mode`` ``hybrid`` | ``dense`` | ``bm25``; ``rerank`` None = use the
        cross-encoder when one is in ``models_dir``. An empty store or a query
        matching nothing gives ``[]``. Raises ``ValueError`` for an unknown mode.
        """
        return self.search_planned(query, k, mode, rerank=rerank)[0]

    def search_planned(self, query: str, k: int = 20, mode: str = "hybrid", *,
                       rerank: bool | None = None) -> tuple[list[Hit], QueryPlan]:
        """:meth:`search`, and how the question was searched (:class:`rag.types.QueryPlan`, issue 19)."""
        idx = self._indexes()
        if len(idx.dense) == 0:
            if mode not in ("hybrid", "dense", "bm25"):
                raise ValueError(f"unknown mode {mode!r}; allowed: hybrid, dense, bm25")
            return [], QueryPlan(query)
        q_vec = self.embedder.encode_query(query)
        rr = self.reranker if rerank or rerank is None else None
        return retrieve_planned(query, q_vec, idx.dense, idx.bm25, k=k, mode=mode,
                                depth=max(k, self.settings.candidates_k), rrf_k=self.settings.rrf_k,
                                reranker=rr, texts=self._texts, rerank_top=self.settings.rerank_top)

    def term_stats(self):
        """Document frequencies over every chunk text (:class:`rag.answer.learned_gate.TermStats`), cached per generation.

        The learned gate's IDF weights come from here; rebuilt (about 0.3 s at
        1k chunks) only after the store changed.
        """

        gen = self._generation()
        cached = self._term_stats_cache
        if cached is not None and cached[0] == gen:
            return cached[1]
        with self._lock:
            texts = [r[0] for r in self._db.execute("SELECT text FROM chunks ORDER BY id")]
        stats = TermStats.from_texts(texts)
        self._term_stats_cache = (gen, stats)
        return stats

    def gate(self, query: str, threshold: float | None = None, max_sources: int | None = None, *,
             k: int | None = None, mode: str = "hybrid", gate: str | None = None, min_score: float | None = None):
        """Search then gate (design stage 7, issue 8): a :class:`rag.answer.gate.GateResult`.

        ``gate`` ``"learned"`` (default from settings): the distance gate AND
        the answerability score (:func:`rag.answer.learned_gate.apply_learned_gate`);
        ``"distance"``: the design's distance gate alone. Other defaults from
        settings (threshold 0.675, max_sources 4, k = candidates_k,
        min_score = the shipped model's cut). Raises ``ValueError`` for an
        unknown gate or mode.
        """

        s = self.settings
        kind = gate or s.gate
        if kind not in ("learned", "distance"):
            raise ValueError(f"unknown gate {kind!r}; allowed: learned, distance")
        threshold = s.threshold if threshold is None else threshold
        max_sources = max_sources or s.max_sources
        hits, plan = self.search_planned(query, k=k or s.candidates_k, mode=mode)
        if kind == "distance":
            return replace(apply_gate(query, hits, threshold, max_sources), plan=plan)
        head = hits[:max_sources]
        texts = {c.chunk_id: c.text for c in self.chunks([h.chunk_id for h in head])} if head else {}
        return replace(apply_learned_gate(query, hits, texts, self.term_stats(), threshold, max_sources,
                                          s.min_answer_score if min_score is None else min_score), plan=plan)

    def close(self) -> None:
        """Close the SQLite connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
