"""The persistent store: documents, chunks and search (design "What the store must promise").

PUBLIC API (stable; the app, the CLI and generation build on it)::

    store = Store(path, settings=None, embedder=None)   # opens, creates or migrates; ModelMismatchError on another embedder
    r = store.ingest_bytes(data, name, progress=None, on_conflict="replace")
                                                        # -> IngestResult(status "ready" | "duplicate" | "failed" | "busy" | "exists")
    r = store.ingest_path(path, progress=None, on_conflict="replace")
    rs = store.ingest_paths(paths, progress=None)       # one index update for the whole batch (issue 18)
    with store.batch(): ...                              # same, around any ingest_bytes / ingest_path / delete calls
    store.documents() -> list[DocumentRow]; store.get_document(id) -> DocumentRow | None
    store.versions(id) -> list[VersionRow]              # the versions a document replaced, newest first (issue 16)
    store.same_name(name, data) -> DocumentRow | None   # what new bytes under ``name`` would replace
    store.sourced_under(folder) -> list[DocumentRow]    # documents read from files under a folder (ingest --sync)
    store.find_document(id_or_prefix) -> DocumentRow | None
    store.canonical_text(id) -> str; store.original_path(id) -> Path
    store.page_map(id) -> tuple[PageSpan, ...]; store.parts(id) -> tuple[Part, ...]   # what extraction learned
    store.chunk(chunk_id) -> ChunkRow; store.chunks(ids) -> list[ChunkRow]  (same order as ids)
    store.delete(id) -> bool; store.retry(id) -> IngestResult; store.retry_failed() -> list[IngestResult]
    r = store.enqueue_bytes(data, name, on_conflict=...)  # issue 25: kept + queued, instant -> "queued" (r.job_id)
    store.enqueue_path(path); store.enqueue_retry(id)   # a worker (rag.store.worker) indexes them
    store.jobs -> rag.store.jobs.JobQueue               # queued / running / failed jobs, workers, progress
    store.cancel_job(job_id) -> Job | None; store.run_job(job, owner, ...)   # what a worker calls
    store.search(query, k=20, mode="hybrid", doc_ids=None) -> list[rag.types.Hit]   # doc_ids: the scope
    store.chats -> rag.store.chats.ChatLog              # the chats kept with this store (issue 16)
    store.term_stats() -> rag.text.TermStats            # of the current index generation
    store.check() -> ConsistencyReport                  # SQLite vs index files vs stored originals
    store.is_empty -> bool; store.chunk_count -> int

Gating is the answer layer's (:func:`rag.answer.pipeline.search_and_gate`).
``progress(stage, done, total)`` is called with stage ``"extract"``, ``"chunk"``,
``"embed"`` (done/total in chunks) and ``"index"``, so a UI can draw a bar.

Layout under the store directory::

    store.sqlite3            SQLite (WAL): meta, migrations, documents, document_versions, chunks (with each
                             chunk's float32 vector), chats, chat_turns
    files/<sha256>           the original bytes, named by content hash, never by the client's name
    index/dense.g<N>.faiss   FAISS IndexIDMap2(IndexFlatIP) for generation N
    index/bm25.g<N>/         bm25s index for generation N
    locks/write.lock         fcntl.flock around every write (several processes may share a store)
    locks/<sha256>.lock      held while that document is being indexed

The parts, one module each: :mod:`rag.store.schema` (the SQLite file, its
schema version and numbered migrations), :mod:`rag.store.locks` (the write lock
and the per-document locks), :mod:`rag.store.cache` (the index files of each
generation, their one rebuild path, the term statistics) and
:mod:`rag.store.writer` (the ingest path). SQLite is the source of truth and
every change is one transaction that bumps the ``generation`` counter; the
index files are caches named by generation, rebuilt from SQLite when missing
(e.g. after a ``kill -9``). A document whose indexing process died (its lock is
free while its status is still ``indexing``) is shown ``failed`` with a reason
and can be retried. Another process's changes are picked up by comparing
generations before each search.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from rag.errors import LimitExceeded, StoreError
from rag.index.embed import EMBED_DIM, encoder_for_store, get_embedder
from rag.index.fusion import MODES, body_first, retrieve_planned
from rag.index.rerank import default_reranker
from rag.ingest.limits import Limits, check_size
from rag.settings import get_settings
from rag.store import derived, facts, records
from rag.store.backup import backup, remove_original, scheduled_backup
from rag.store.cache import IndexDelta, open_index_cache
from rag.store.chats import ChatLog
from rag.store.check import check
from rag.store.facts import Facts
from rag.store.jobs import ACTIVE, JobState
from rag.store.locks import StoreLocks
from rag.store.prepare import Progress, Read
from rag.store.queueing import QueueFacade
from rag.store.records import ChunkRow, ConsistencyReport, DocumentRow, VersionRow
from rag.store.results import IngestResult, IngestStatus, OnConflict, clean_name
from rag.store.schema import SCHEMA_VERSION, connect, get_meta, migrate, now_iso, schema_version, stamp_model
from rag.store.sentences import stop_sentences
from rag.store.writer import INTERRUPTED, Writer
from rag.text import TermStats
from rag.types import DocStatus, Hit, PageSpan, Part, QueryPlan, TextRole

__all__ = ["INTERRUPTED", "ChunkRow", "ConsistencyReport", "DocumentRow", "IngestResult", "IngestStatus", "OnConflict",
           "Progress", "Store", "VersionRow", "clean_name"]

logger = logging.getLogger(__name__)



class Store(QueueFacade):
    """A document store under one directory (see the module docstring for the layout and promises).

    ``settings`` default :func:`rag.settings.get_settings`; ``embedder`` any
    object with ``name``, ``dim``, ``encode(texts)`` and ``encode_query(q)``
    (default: the encoder the store's stamp names, or settings ``encoder`` / the default for a new store,
    :func:`rag.index.embed.encoder_for_store`; loaded on first use). Opening
    applies the schema migrations the store lacks (:mod:`rag.store.schema`).
    Raises :class:`ModelMismatchError` when the store was indexed with
    another model name or dimension (``stale`` lists the documents to
    re-index), and :class:`StoreError` when the directory cannot be used or
    its schema is newer than this code. Thread-safe within a process; several
    processes may share one directory.
    """

    def __init__(self, path: str | Path, settings=None, embedder=None, *, read: Read | None = None):
        self.settings = settings or get_settings()
        self.path = Path(path).resolve()
        self._embedder = embedder
        self.model_dim = int(embedder.dim) if embedder is not None else EMBED_DIM
        try:
            (self.path / "files").mkdir(parents=True, exist_ok=True)
            self._locks = StoreLocks(self.path / "locks")
            self._db = connect(self.path / "store.sqlite3")
            with self._locks.write():
                have = schema_version(self._db)
                if 0 < have < SCHEMA_VERSION:  # issue 26: a consistent copy before the schema changes
                    backup(self._db, self.path, f"before-migration-{have + 1}", keep=self.settings.backups_kept)
                applied = migrate(self._db)
            if applied:
                logger.info("store %s: schema migrated to version %d", self.path, applied[-1])
            with self._locks.write(self._db):
                self.encoder = None if embedder is not None else encoder_for_store(
                    self.settings.encoder, get_meta(self._db, "embed_model"))
                self.model_name = embedder.name if embedder is not None else self.encoder.name
                stamp_model(self._db, self.path, self.model_name, self.model_dim)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open the store at {self.path}: {e}") from e
        #: The index cache (:class:`rag.store.cache.IndexCache`): read it (``current()``, ``rows()``), never write it.
        self.index_cache = open_index_cache(self.path, self._db, self._locks, self.settings, encoder=self.model_name,
                                            dim=self.model_dim)
        self._writer = Writer(self.path, self._db, self._locks, self.index_cache, self.settings,
                              lambda: self.embedder, self.model_name, self.model_dim,
                              **({"read": read} if read is not None else {}))
        #: The job queue kept in this store (:class:`rag.store.jobs.JobQueue`, issue 25).
        self.jobs = self._writer.jobs
        #: The chats kept with this store (:class:`rag.store.chats.ChatLog`, issue 16).
        self.chats = ChatLog(self._db, self._locks)
        self._reap_stale()
        self.backup_if_due()

    def backup_if_due(self) -> Path | None:
        """A scheduled backup when one is due (:func:`rag.store.backup.scheduled_backup`); it, or ``None``."""
        return scheduled_backup(self._db, self._locks, self.path, self.settings)

    @property
    def locks(self) -> StoreLocks:
        """The store's locks (:class:`rag.store.locks.StoreLocks`): a worker holds a document's while it runs its job."""
        return self._locks

    @property
    def embedder(self):
        """The embedder (loaded on first use)."""
        if self._embedder is None:
            self._embedder = get_embedder(self.settings.embed_batch_size, encoder=self.encoder.key)
        return self._embedder

    def _reap_stale(self) -> None:
        """``queued``/``indexing`` documents whose process is gone: back to ``queued`` when their job will resume,
        else ``failed`` (retryable); see :meth:`rag.store.writer.Writer.reap`."""
        with self._locks.thread:
            rows = self._db.execute("SELECT id FROM documents WHERE status IN (?, ?)",
                                    (DocStatus.QUEUED, DocStatus.INDEXING)).fetchall()
        if rows:
            self._writer.reap([r[0] for r in rows])

    # ------------------------------------------------------------------ ingest (rag.store.writer)

    def ingest_bytes(self, data: bytes, name: str, progress: Progress | None = None, *,
                     on_conflict: str = OnConflict.REPLACE, source: str | None = None) -> IngestResult:
        """Extract, chunk (strategy E), embed and index one file's bytes (design stages 1-4).

        ``name`` is the client's file name: display metadata (see
        :func:`clean_name`) and, with the bytes, what identifies a document
        (issue 16); the bytes are kept as ``files/<sha256>``. The same bytes
        twice, or the same canonical text in other bytes: ``duplicate``
        ("same text as X"), nothing done. Other bytes under a name already
        indexed: ``on_conflict`` (:class:`rag.store.writer.OnConflict`)
        ``replace`` (default: the new version takes the old one's place in
        one transaction and index generation; the old one is kept as a
        :class:`VersionRow`), ``keep-both``, or ``ask`` (``exists``, nothing
        done). ``source`` the absolute path read (``None`` for an upload).
        A file that cannot be extracted: ``failed`` with the reason, kept
        visible and retryable, the version it would replace untouched; other
        documents are never affected. Never raises for bad input; an
        unexpected error is logged with its traceback and reported ``failed``.
        Raises ``ValueError`` for an unknown ``on_conflict``.
        """
        result = self._writer.ingest(data, name, progress, on_conflict=on_conflict, source=source)
        self.backup_if_due()
        return result

    def ingest_path(self, path: str | Path, progress: Progress | None = None, *,
                    on_conflict: str = OnConflict.REPLACE) -> IngestResult:
        """:meth:`ingest_bytes` on a file read from disk, named by its base name, its absolute path as ``source``."""
        p = Path(path)
        try:
            check_size(p.stat().st_size, p.name, Limits.from_settings(self.settings))
            data = p.read_bytes()
        except LimitExceeded as e:  # measured from the file system: a 3 GiB file is never read into memory
            return self._writer.refuse_unread(p, p.name, p.stat().st_size, e.reason, str(p.resolve()))
        except OSError as e:
            return IngestResult("", clean_name(p.name), IngestStatus.FAILED, reason=f"cannot read file: {e.strerror}")
        return self.ingest_bytes(data, p.name, progress, on_conflict=on_conflict, source=str(p.resolve()))

    @contextlib.contextmanager
    def batch(self) -> Iterator["Store"]:
        """Ingest many files with ONE index update (issue 18): inside ``with store.batch():`` every document is
        written to SQLite (and its generation moved) as it is done, and FAISS and BM25 are updated once when the
        block exits, also on an exception. Searches in this process meanwhile see the store as it was."""
        self.index_cache.begin_batch()
        try:
            yield self
        finally:
            with self._locks.write(self._db):
                self.index_cache.end_batch()

    def ingest_paths(self, paths: Sequence[str | Path], progress: Progress | None = None,
                     on_result: Callable[[Path, IngestResult], None] | None = None, *,
                     on_conflict: str | Callable[[Path], str] = OnConflict.REPLACE) -> list[IngestResult]:
        """:meth:`ingest_path` for every file in one :meth:`batch`; ``on_result(path, result)`` after each file.

        ``on_conflict`` one :class:`rag.store.writer.OnConflict` for all, or a
        function of the path (issue 16). Returns one result per path, in order;
        never raises for bad input.
        """
        out = []
        with self.batch():
            for path in paths:
                policy = on_conflict(Path(path)) if callable(on_conflict) else on_conflict
                r = self.ingest_path(path, progress, on_conflict=policy)
                out.append(r)
                if on_result is not None:
                    on_result(Path(path), r)
        return out

    def retry(self, doc_id: str, progress: Progress | None = None) -> IngestResult:
        """Index a failed (or interrupted) document again from its stored original.

        ``doc_id`` the full id or a unique prefix. Raises :class:`StoreError`
        if the id is unknown or the original was never kept.
        """
        doc = self.find_document(doc_id)
        if doc is None:
            raise StoreError(f"no document with id {doc_id}")
        if not doc.has_file or not self.original_path(doc.id).is_file():
            raise StoreError(f"{doc.name}: the original file was not kept ({doc.reason}); add it again")
        return self.ingest_bytes(self.original_path(doc.id).read_bytes(), doc.name, progress,
                                 on_conflict=OnConflict.KEEP_BOTH)

    def retry_failed(self, progress: Progress | None = None) -> list[IngestResult]:
        """:meth:`retry` every failed document a retry can help (``retryable``, issue 25) that has its original;
        returns one result each. A damaged, refused or too large file is left as it is."""
        return [self.retry(d.id, progress) for d in self.documents()
                if d.status == DocStatus.FAILED and d.has_file and d.retryable is not False]

    def delete(self, doc_id: str) -> bool:
        """Remove a document: its row, chunks, vectors, BM25 entries, stored file and earlier versions. False if unknown.

        ``doc_id`` the full id or a unique prefix. Raises :class:`StoreError` if it is being indexed right now.
        """
        doc = self.find_document(doc_id)
        if doc is None:
            return False
        if doc.status == DocStatus.READY:
            stop_sentences(self.jobs, self._locks, doc.id)
        with self._locks.document(doc.id) as got:
            if not got:
                raise StoreError(f"{doc.name}: being indexed right now; delete it when it is done")
            with self._locks.write(self._db):
                ids = [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE doc_id=?", (doc.id,))]
                self._db.execute("DELETE FROM chunks WHERE doc_id=?", (doc.id,))
                self._db.execute("DELETE FROM documents WHERE id=?", (doc.id,))
                self._db.execute("UPDATE jobs SET state=?, reason='the document was deleted', owner=NULL, "
                                 "finished_at=?, updated_at=? WHERE doc_id=? AND state IN (?, ?)",
                                 (JobState.CANCELLED, now_iso(), now_iso(), doc.id, *ACTIVE))
                self.index_cache.commit(IndexDelta.remove(ids))
                remove_original(self.path, doc.id)
                derived.remove(self.path, doc.id)  # its overview (issue 29) goes with it
        self._locks.discard_document(doc.id)
        return True

    # ------------------------------------------------------------------ reads

    def documents(self) -> list[DocumentRow]:
        """Every document (any status), oldest first (in upload order within the same second). Interrupted ones are
        shown ``failed``."""
        self._reap_stale()
        with self._locks.thread:
            labels = records.labels(self._db)
            rows = self._db.execute(f"SELECT {records.DOC_COLS} FROM documents ORDER BY created_at, rowid").fetchall()
            return [records.document_row(r, labels) for r in rows]

    def get_document(self, doc_id: str) -> DocumentRow | None:
        """The document with this id (full sha256), or ``None``."""
        with self._locks.thread:
            r = self._db.execute(f"SELECT {records.DOC_COLS} FROM documents WHERE id=?", (doc_id,)).fetchone()
            return records.document_row(r, records.labels(self._db)) if r else None

    def find_document(self, doc_id: str) -> DocumentRow | None:
        """The document with this full id, or with this unique id prefix (at least 4 hex characters,
        as the CLI prints them); ``None`` when unknown or ambiguous."""
        doc = self.get_document(doc_id)
        if doc is not None or len(doc_id) < 4 or any(c not in "0123456789abcdef" for c in doc_id):
            return doc
        with self._locks.thread:
            ids = [r[0] for r in self._db.execute("SELECT id FROM documents WHERE id LIKE ?", (doc_id + "%",))]
        return self.get_document(ids[0]) if len(ids) == 1 else None

    def versions(self, doc_id: str) -> list[VersionRow]:
        """The earlier versions document ``doc_id`` replaced, newest first (``[]`` for none or an unknown id)."""
        with self._locks.thread:
            rows = self._db.execute(
                "SELECT id, name, media_type, size_bytes, chunk_count, pages, added_at, replaced_at, current_id "
                "FROM document_versions WHERE current_id=? ORDER BY replaced_at DESC, added_at DESC", (doc_id,)).fetchall()
        return [VersionRow(*r) for r in rows]

    def same_name(self, name: str, data: bytes) -> DocumentRow | None:
        """The ready document that ``data`` under ``name`` would replace (other bytes, same name), or ``None``.

        What the app asks about before uploading (issue 16); ``name`` is cleaned like an upload's.
        """
        other = self._writer.same_name(clean_name(name), hashlib.sha256(data).hexdigest())
        return self.get_document(other) if other else None

    def sourced_under(self, folder: str | Path) -> list[DocumentRow]:
        """The documents read from a file under ``folder`` (``ingest PATH`` records the absolute path), by name."""
        root = str(Path(folder).resolve()).rstrip("/") + "/"
        with self._locks.thread:
            ids = [r[0] for r in self._db.execute(
                "SELECT id FROM documents WHERE source IS NOT NULL AND substr(source, 1, ?) = ? ORDER BY name, id",
                (len(root), root))]
        return [d for d in (self.get_document(i) for i in ids) if d is not None]

    def canonical_text(self, doc_id: str) -> str:
        """The stored canonical text every offset points into. Raises :class:`StoreError` if not indexed."""
        with self._locks.thread:
            r = self._db.execute("SELECT canonical FROM documents WHERE id=?", (doc_id,)).fetchone()
        if not r or r[0] is None:
            raise StoreError(f"no canonical text for document {doc_id}")
        return r[0]

    def page_map(self, doc_id: str) -> tuple[PageSpan, ...]:
        """The PDF's pages in the stored canonical text (:class:`rag.types.PageSpan`, by offset; migration 5), so a
        citation's page is read here and never from the PDF; ``()`` for other formats and unknown ids.
        A document stored before migration 5 has its page map read once from the kept original, in a child
        process (:func:`rag.store.facts.backfill`)."""
        return self._facts(doc_id).pages or ()

    def parts(self, doc_id: str) -> tuple[Part, ...]:
        """The locator map of issue 17's formats (slides, sheet rows, paragraphs, HTML sections, OCR lines;
        :class:`rag.types.Part`, by offset), as extraction found it; ``()`` for PDF, text and unknown ids."""
        return self._facts(doc_id).parts or ()

    def _facts(self, doc_id: str) -> Facts:
        with self._locks.thread:
            got, name, _ = facts.read(self._db, doc_id)
        if name is not None and (got.pages is None or got.parts is None):
            return facts.backfill(self._db, self._locks, self.path / "files", doc_id,
                                  memory_mb=self.settings.extract_memory_mb, limits=Limits.from_settings(self.settings))
        return got

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
        with self._locks.thread:
            got = records.chunk_rows(self._db, ids)
        missing = [i for i in ids if i not in got]
        if missing:
            raise StoreError(f"unknown chunk id(s): {missing[:5]} (deleted meanwhile?)")
        return [got[i] for i in ids]

    def chunk(self, chunk_id: int) -> ChunkRow:
        """One chunk row. Raises :class:`StoreError` if unknown."""
        return self.chunks([chunk_id])[0]

    def document_chunks(self, doc_id: str) -> list[ChunkRow]:
        """All chunks of one document, in document order."""
        with self._locks.thread:
            ids = [r[0] for r in self._db.execute("SELECT id FROM chunks WHERE doc_id=? ORDER BY idx", (doc_id,))]
        return self.chunks(ids)

    @property
    def chunk_count(self) -> int:
        """Chunk rows in the store (all belong to ready documents)."""
        with self._locks.thread:
            return int(self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    @property
    def is_empty(self) -> bool:
        """True when no chunk is indexed (searches return nothing; the gate refuses)."""
        return self.chunk_count == 0

    # ------------------------------------------------------------------ search

    def _texts(self, ids: list[int]) -> list[str]:
        return [c.text for c in self.chunks(ids)]

    def scope_chunks(self, doc_ids: Sequence[str]) -> np.ndarray:
        """The chunk ids (int64, ascending) of the documents ``doc_ids`` (full ids; unknown ones hold none)."""
        ids: list[int] = []
        with self._locks.thread:
            for i in range(0, len(doc_ids), 500):
                part = list(doc_ids[i:i + 500])
                ids += [r[0] for r in self._db.execute(
                    f"SELECT id FROM chunks WHERE doc_id IN ({','.join('?' * len(part))}) ORDER BY id", part)]
        return np.asarray(sorted(ids), dtype=np.int64)

    def search(self, query: str, k: int = 20, mode: str = "hybrid", *, rerank: bool | None = None,
               doc_ids: Sequence[str] | None = None) -> list[Hit]:
        """Top ``k`` chunks for ``query`` (design stages 4-6), best first, each with its cosine distance.

        ``mode`` ``hybrid`` | ``dense`` | ``bm25`` (:class:`rag.types.RetrievalMode`);
        ``rerank`` None or True = rerank with the cross-encoder in ``models_dir``
        when there is one (:func:`rag.index.rerank.default_reranker`), False =
        never. ``doc_ids`` (full ids) searches only those documents' chunks
        (issue 16's scope; ``None`` = every document, an empty list = none).
        An empty store or a query matching nothing gives ``[]``.
        Raises ``ValueError`` for an unknown mode.
        """
        return self.search_planned(query, k, mode, rerank=rerank, doc_ids=doc_ids)[0]

    def search_planned(self, query: str, k: int = 20, mode: str = "hybrid", *, rerank: bool | None = None,
                       doc_ids: Sequence[str] | None = None) -> tuple[list[Hit], QueryPlan]:
        """:meth:`search`, and how the question was searched (:class:`rag.types.QueryPlan`, issue 19)."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; allowed: {', '.join(MODES)}")
        allowed = None if doc_ids is None else self.scope_chunks(list(doc_ids))
        idx = self.index_cache.current()
        if len(idx.dense) == 0 or (allowed is not None and len(allowed) == 0):
            return [], QueryPlan(query)
        q_vec = self.embedder.encode_query(query)
        rr = default_reranker(self.settings.models_dir) if rerank is not False else None
        hits, plan = retrieve_planned(query, q_vec, idx.dense, idx.bm25, k=k, mode=mode,
                                      depth=max(k, self.settings.candidates_k), rrf_k=self.settings.rrf_k,
                                      reranker=rr, texts=self._texts, rerank_top=self.settings.rerank_top,
                                      allowed=allowed,
                                      units=self.index_cache.units() if self.settings.unit_vectors else None)
        return body_first(hits, self.not_body([h.chunk_id for h in hits])), plan

    def not_body(self, ids: Sequence[int]) -> set[int]:
        """The chunk ids among ``ids`` whose role is not ``body`` (:class:`rag.types.TextRole`, issue 28)."""
        if not ids:
            return set()
        with self._locks.thread:
            out: set[int] = set()
            for i in range(0, len(ids), 500):
                part = [int(x) for x in ids[i:i + 500]]
                out |= {r[0] for r in self._db.execute(
                    f"SELECT id FROM chunks WHERE id IN ({','.join('?' * len(part))}) "
                    f"AND role IS NOT NULL AND role != '{TextRole.BODY.value}'", part)}
        return out

    def term_stats(self) -> TermStats:
        """Document frequencies over every chunk text (:class:`rag.text.TermStats`) of the current index generation.

        The learned gate's and the excerpts' IDF weights come from here; kept
        by the index cache (:meth:`rag.store.cache.IndexCache.term_stats`) and
        recomputed (about 0.3 s at 1k chunks) only after the store changed.
        """
        return self.index_cache.term_stats()

    # ------------------------------------------------------------------ consistency

    def check(self) -> ConsistencyReport:
        """Check the store's promises against its files; never repairs anything (:func:`rag.store.check.check`).

        Reads SQLite and the indexes of the same generation (retried when
        another writer moves it meanwhile). Loads or rebuilds the indexes like
        a search does; costs one pass over the chunk rows.
        """
        return check(self._db, self._locks, self.index_cache, self.model_dim, self.path / "files")

    def close(self) -> None:
        """Close the SQLite connection and the search backend (the Milvus client with backend ``milvus``)."""
        self.index_cache.backend.close()
        with self._locks.thread:
            self._db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
