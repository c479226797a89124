"""The ingest path of the store (design stages 1-4): bytes -> extract -> chunk -> embed -> rows -> indexes.

:class:`Writer` is what the store calls, in two halves joined by the job table (issue 25, :mod:`rag.store.jobs`):

* :meth:`Writer.accept` (``Store.enqueue_bytes``; the app's uploads, ``rag ingest``): names the file by
  content (``sha256``); ``duplicate`` when those bytes are already ``ready``; with :class:`OnConflict` ``ask``,
  ``exists`` when other bytes are ready under the same name (issue 16); else keeps the original as
  ``files/<sha256>`` (fsync'ed) and writes the document row ``queued`` and its job in one transaction. Instant.
* :meth:`Writer.run` (a worker, :mod:`rag.store.worker`, holding the document's lock): extracts (where
  ``extract`` says: in a contained child process for the worker), chunks (strategy E) and embeds the chunks with
  no store lock held (:func:`prepare`: the slow part), then in ONE write transaction: ``duplicate`` when a ready
  document holds the same canonical text ("same text as X"); else the chunk rows with their vectors, the row
  ``ready`` with its chunk count, with ``replace`` the retired version it replaces (:mod:`rag.store.rows`),
  the one index delta of both (:meth:`rag.store.cache.IndexCache.commit`: one generation, so no search ever
  sees both versions or neither) and the job ``done``. A worker killed before that commit left nothing of
  the document but its ``queued`` row and its job, which the next worker runs again. Issue 41: the sentence
  units are embedded after that commit, the document already searchable, and written in a second transaction
  that ends the job (:meth:`Writer._sentences`); killed in between, the document stays ready and the next
  worker embeds only its units.

:meth:`Writer.ingest` (``Store.ingest_bytes``, the synchronous library call) is both at once in the
caller's process. Any failure sets the row and the job ``failed`` with a one-line reason and ``retryable``
(kept visible; other documents are never affected), logged through ``logging.getLogger(__name__)``: an
unexpected error with its traceback (``logger.exception``), a file that cannot be extracted as one ``info``
line (the user already gets the reason; a bad file is not an operator's problem).
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rag.errors import Cancelled, ExtractionError, LimitExceeded, StoreError, reader_fault
from rag.ingest.limits import Limits, check_size
from rag.settings import PIPELINE_VERSION, Settings
from rag.store.backup import remove_original, write_name
from rag.store.cache import IndexCache
from rag.store.jobs import Job, JobKind, JobQueue, JobState, active_job, finish_job, insert_job, worker_id
from rag.store.locks import StoreLocks
from rag.store.prepare import (
    Prepared,
    Progress,
    Read,
    StoredChunk,
    _no_progress,
    prepare,
    read_inline,
)
from rag.store.results import IngestResult, IngestStatus, OnConflict, clean_name
from rag.store.rows import Replaced, pick_replaced, retire_version, text_sha, write_chunks
from rag.store.schema import now_iso
from rag.store.sentences import embed_and_write_units
from rag.types import DocStatus

if TYPE_CHECKING:
    from rag.index.embed import Encoder

logger = logging.getLogger(__name__)

#: The reason shown for a document whose indexing process stopped with no job left to resume it.
INTERRUPTED = "interrupted while indexing (the process stopped); retry"

#: The reason a document waiting for its interrupted job to run again carries (issue 25: it resumes by itself).
RESUMES = "interrupted (the worker stopped); indexing starts again when a worker runs"

#: Bytes read from each end of a file refused for its size on disk, to give its failed row an id (1 MiB).
REFUSED_SAMPLE = 1 << 20


class Writer:
    """Ingests files into one store (see the module docstring for the steps and promises).

    ``root`` the store directory (``files/`` is written here); ``conn``,
    ``locks``, ``cache`` the store's connection, locks and index cache;
    ``embedder`` a callable returning the embedder (loaded on first use);
    ``model_name``/``model_dim`` what every document row records; ``read`` where reading runs
    (:data:`rag.store.prepare.Read`; default :func:`rag.store.prepare.read_inline`). ``jobs`` is the store's :class:`rag.store.jobs.JobQueue`.
    """

    def __init__(self, root: Path, conn: sqlite3.Connection, locks: StoreLocks, cache: IndexCache, settings: Settings,
                 embedder: Callable[[], Encoder], model_name: str, model_dim: int, read: Read = read_inline):
        self.root, self.conn, self.locks, self.cache, self.settings = Path(root), conn, locks, cache, settings
        self.embedder, self.model_name, self.model_dim, self.read = embedder, model_name, model_dim, read
        self.jobs = JobQueue(conn, locks)

    # ------------------------------------------------------------------ accepting a file

    def _screen(self, doc_id: str, name: str, on_conflict: str, source: str | None,
                result: Callable[..., IngestResult]) -> IngestResult | None:
        """What needs no work: the same bytes already ready (``duplicate``), or, with ``ask``, other bytes
        ready under the same name (``exists``). ``None`` when the file has to be indexed."""
        if on_conflict not in tuple(OnConflict):
            raise ValueError(f"unknown on_conflict {on_conflict!r}; allowed: {', '.join(OnConflict)}")
        existing = self._ready(doc_id)
        if existing is not None:
            self._note_source(doc_id, source)
            return result(IngestStatus.DUPLICATE, chunk_count=existing[1], existing_name=existing[0], existing_id=doc_id)
        if on_conflict == OnConflict.ASK:
            other = self.same_name(name, doc_id)
            if other is not None:
                return result(IngestStatus.EXISTS, existing_name=name, existing_id=other)
        return None

    def _too_big(self, doc_id: str, name: str, size: int, source: str | None,
                 result: Callable[..., IngestResult]) -> IngestResult | None:
        """``failed`` (not retryable, nothing kept) for a file over ``max_upload_mb`` (issue 26's
        :func:`rag.ingest.limits.check_size`); ``None`` otherwise."""
        try:
            check_size(size, name, Limits.from_settings(self.settings))
            return None
        except LimitExceeded as e:
            reason = e.reason
        with self.locks.write(self.conn):
            self._upsert_row(doc_id, name, size, DocStatus.FAILED, source, has_file=False)
            self.conn.execute("UPDATE documents SET reason=?, retryable=0 WHERE id=?", (reason, doc_id))
        return result(IngestStatus.FAILED, reason=reason, retryable=False)

    def accept(self, data: bytes, name: str, *, on_conflict: str = OnConflict.REPLACE,
               source: str | None = None) -> IngestResult:
        """Keep the bytes and queue their job; no extraction here (issue 25: accepting a file is durable and instant).

        The original is written (fsync'ed) as ``files/<sha256>``, then the document row (``queued``) and its
        job row in one transaction. Returns ``queued`` with ``job_id`` (also when the same bytes are queued
        or running already: that job), or what needs no work: ``duplicate``, ``exists`` (with ``ask``),
        ``failed`` (too large). Raises ``ValueError`` for an unknown ``on_conflict``.
        """
        t0 = time.perf_counter()
        name, doc_id = clean_name(name), hashlib.sha256(data).hexdigest()

        def result(status: IngestStatus, **kw) -> IngestResult:
            return IngestResult(doc_id, name, status, elapsed_ms=(time.perf_counter() - t0) * 1000, **kw)

        early = self._screen(doc_id, name, on_conflict, source, result) or self._too_big(
            doc_id, name, len(data), source, result)
        if early is not None:
            return early
        with self.locks.thread:
            job = active_job(self.conn, doc_id)
        if job is None:
            self._save_original(doc_id, data)
            write_name(self.root, doc_id, name)  # issue 26: what a rebuild from the originals calls it
            with self.locks.write(self.conn):
                job = active_job(self.conn, doc_id)
                if job is None:
                    self._upsert_row(doc_id, name, len(data), DocStatus.QUEUED, source)
                    job_id = insert_job(self.conn, JobKind.INGEST, doc_id, name, source=source,
                                        size_bytes=len(data), on_conflict=on_conflict)
        return result(IngestStatus.QUEUED, job_id=job.id if job is not None else job_id)

    def accept_retry(self, doc_id: str, limit_s: float | None = None) -> IngestResult:
        """Queue a failed (or interrupted) document again from its kept original (a ``retry`` job, keep-both);
        ``limit_s`` a larger time limit for it (seconds: every stage may take that long, issue 35).

        Raises :class:`rag.errors.StoreError` when the document is unknown or its original was not kept.
        """
        with self.locks.thread:
            row = self.conn.execute("SELECT name, size_bytes, has_file, source, reason FROM documents WHERE id=?",
                                    (doc_id,)).fetchone()
        if row is None:
            raise StoreError(f"no document with id {doc_id}")
        if not row[2] or not (self.root / "files" / doc_id).is_file():
            raise StoreError(f"{row[0]}: the original file was not kept ({row[4]}); add it again")
        with self.locks.write(self.conn):
            job = active_job(self.conn, doc_id)
            if job is None:
                self.conn.execute("UPDATE documents SET status=?, reason=NULL, retryable=NULL, updated_at=? "
                                  "WHERE id=? AND status!=?", (DocStatus.QUEUED, now_iso(), doc_id, DocStatus.READY))
                job_id = insert_job(self.conn, JobKind.RETRY, doc_id, row[0], source=row[3], size_bytes=row[1],
                                    on_conflict=OnConflict.KEEP_BOTH, limit_s=limit_s)
        return IngestResult(doc_id, row[0], IngestStatus.QUEUED, job_id=job.id if job is not None else job_id)

    # ------------------------------------------------------------------ indexing

    def ingest(self, data: bytes, name: str, progress: Progress | None = None, *,
               on_conflict: str = OnConflict.REPLACE, source: str | None = None) -> IngestResult:
        """Index one file's bytes now, in this process; never raises for bad input (see
        :meth:`rag.store.store.Store.ingest_bytes`).

        The same path as a worker's: the original and a job row (``running``, owned by this process) are
        written first, so a process killed meanwhile leaves a job that any worker resumes.
        ``on_conflict`` (:class:`OnConflict`) decides what other bytes under a name already
        indexed do; ``source`` the absolute path the bytes were read from (``None`` for an upload).
        """
        t0 = time.perf_counter()
        name, doc_id = clean_name(name), hashlib.sha256(data).hexdigest()

        def result(status: IngestStatus, **kw) -> IngestResult:
            return IngestResult(doc_id, name, status, elapsed_ms=(time.perf_counter() - t0) * 1000, **kw)

        early = self._screen(doc_id, name, on_conflict, source, result)
        if early is not None:
            return early
        with self.locks.document(doc_id) as got:
            if not got:
                return result(IngestStatus.BUSY)
            existing = self._ready(doc_id)  # re-check under the document lock
            if existing is not None:
                return result(IngestStatus.DUPLICATE, chunk_count=existing[1], existing_name=existing[0],
                              existing_id=doc_id)
            early = self._too_big(doc_id, name, len(data), source, result)
            if early is not None:
                return early
            self._save_original(doc_id, data)
            write_name(self.root, doc_id, name)  # issue 26: what a rebuild from the originals calls it
            owner = worker_id()
            with self.locks.write(self.conn):
                self._upsert_row(doc_id, name, len(data), DocStatus.INDEXING, source)
                job = active_job(self.conn, doc_id)
                if job is None:
                    job_id = insert_job(self.conn, JobKind.INGEST, doc_id, name, source=source, size_bytes=len(data),
                                        on_conflict=on_conflict, owner=owner)
                else:  # queued (or left by a dead worker): this call runs it, with its own name and policy
                    job_id = job.id
                    t = time.time()
                    self.conn.execute(
                        "UPDATE jobs SET state=?, owner=?, name=?, on_conflict=?, source=COALESCE(?, source), "
                        "attempts=attempts+1, started=?, heartbeat=?, lease_until=?, updated_at=? WHERE id=?",
                        (JobState.RUNNING, owner, name, on_conflict, source, t, t, t + 30, now_iso(), job_id))
            job = self.jobs.get(job_id)
            return self.run(job, owner, progress, t0=t0)

    def run(self, job: Job, owner: str, progress: Progress | None = None,
            should_stop: Callable[[], bool] | None = None, *, read: Read | None = None,
            t0: float | None = None, yield_units: bool = False) -> IngestResult:
        """Index the document of ``job``, which the caller has taken (it holds the document's lock).

        Read (``read``, default the indexer's: extract, roles, chunks), embed, then ONE write transaction: the chunk
        rows, ``ready``, the replaced version's exit, the index delta and the job's ``done`` with its result
        (or the twin: ``duplicate``). With the ``unit_vectors`` setting on (the default), the job stays running
        after that commit: the document is searchable by its chunks, and its sentence units follow
        (:meth:`_sentences`, issue 41) before the job ends; a job taken again for a document already ready (its
        run stopped in between) does only that second half; with ``yield_units`` (a worker's queue) and another
        file waiting for its chunks, the job goes back to the queue for that half instead (:meth:`JobQueue.defer`,
        the ready result returned). A failure marks the document and the job ``failed`` together, with
        ``retryable``: ``False`` for a file that cannot be extracted or holds no text (a retry cannot help),
        ``True`` for anything else (a fault of this process). A cancel (``should_stop``) ends it
        ``cancelled`` (:meth:`cancel`). Never raises for bad input.
        """
        t0 = t0 or time.perf_counter()
        progress = progress or _no_progress
        doc_id, name = job.doc_id, job.name

        def result(status: IngestStatus, **kw) -> IngestResult:
            return IngestResult(doc_id, name, status, elapsed_ms=(time.perf_counter() - t0) * 1000, job_id=job.id,
                                **kw)

        if job.kind == JobKind.INGEST and self._ready(doc_id) is not None:
            # its chunks were committed by a run that stopped before its sentences (issue 41): only they are left
            first = IngestResult.from_json(job.result) if job.result else None  # kept by a deferral
            return self._sentences(job, owner, progress, should_stop, result, first)
        try:
            progress("read", 0, 1)
            data = (self.root / "files" / doc_id).read_bytes()
        except OSError:
            return self._fail(job, result, "the kept original file is missing; add the file again", retryable=False)
        with self.locks.write(self.conn):
            self.conn.execute("UPDATE documents SET status=?, reason=NULL, retryable=NULL, updated_at=? WHERE id=?",
                              (DocStatus.INDEXING, now_iso(), doc_id))
        later = bool(self.settings.unit_vectors)  # issue 41: the sentence units once the document is searchable
        try:
            prepared = prepare(data, name, self.settings, self.embedder(), self.model_dim, progress,
                               read=read or self.read, should_stop=should_stop,
                               floor_s=float(job.limit_s or 0), units=not later)
            del data
            if not prepared.chunks:
                logger.info("%s (%s): no text to index", name, doc_id[:8])
                return self._fail(job, result, "no text to index (empty or blank document)", retryable=False,
                                  warnings=tuple(prepared.document.warnings))
            progress("index", 0, 1)
            r = self._commit(job, prepared, result, finish=not later)
            try:
                progress("index", 1, 1)
            except Cancelled:  # committed: a cancel heard now is too late, and must not drop the indexed document
                pass
            if later and r.status == IngestStatus.READY:
                return self._units_now_or_later(job, owner, progress, should_stop, result, r, yield_units)
            return r
        except Cancelled:
            return self._drop(job, result)
        except ExtractionError as e:  # the reader's own bug is no fault of the file: a retry may help
            reason = reader_fault(e) or e.reason
            logger.info("%s (%s): not indexed: %s", name, doc_id[:8], reason)
            return self._fail(job, result, reason, retryable=reason != e.reason)
        except Exception as e:  # noqa: BLE001 - one bad file must never take the others down
            logger.exception("%s (%s): internal error while indexing", name, doc_id[:8])
            return self._fail(job, result, f"internal error while indexing: {type(e).__name__}: {e}", retryable=True)

    def _commit(self, job: Job, prepared: Prepared, result: Callable[..., IngestResult], *,
                finish: bool = True) -> IngestResult:
        """The one write transaction of an ingest: the new chunks, the replaced version's exit, the index delta
        and the job's end (with ``finish`` false the job stays running: its sentences follow, :meth:`_sentences`).
        When a ready document already holds the same canonical text, this document's row
        and stored original are removed instead (``duplicate``, "same text as X"), and the job ends."""
        doc_id, name = job.doc_id, job.name
        sha = text_sha(prepared.document.canonical)
        warnings = tuple(prepared.document.warnings)
        replaced = None
        with self.locks.write(self.conn):
            twin = self.conn.execute("SELECT id, name FROM documents WHERE text_sha=? AND status=? AND id!=? "
                                     "ORDER BY created_at LIMIT 1", (sha, DocStatus.READY, doc_id)).fetchone()
            if twin is not None:
                self.conn.execute("DELETE FROM documents WHERE id=?", (doc_id,))
                r = result(IngestStatus.DUPLICATE, existing_name=twin[1], existing_id=twin[0], same_text=True,
                           warnings=warnings)
                finish_job(self.conn, job.id, JobState.DONE, result=r.to_json())
            else:
                n, delta = write_chunks(self.conn, doc_id, prepared, self.model_name, self.model_dim)
                if job.on_conflict == OnConflict.REPLACE:
                    old = pick_replaced(self.conn, name, doc_id, job.source)
                    if old is not None:
                        delta = delta + retire_version(self.conn, old[0], doc_id)
                        if (left := active_job(self.conn, old[0])) is not None:  # its deferred sentence units
                            finish_job(self.conn, left.id, JobState.DONE, reason="replaced before its sentence search")
                        replaced = Replaced(old[0], name, old[2])
                self.cache.commit(delta)
                r = result(IngestStatus.READY, chunk_count=n, warnings=warnings, coverage=prepared.document.coverage,
                           replaced_id=replaced.id if replaced else None,
                           replaced_added_at=replaced.added_at if replaced else None)
                if finish:
                    finish_job(self.conn, job.id, JobState.DONE, result=r.to_json())
        if twin is not None:
            remove_original(self.root, doc_id)
        if replaced is not None:
            remove_original(self.root, replaced.id)
            self.locks.discard_document(replaced.id)
        return r

    def _units_now_or_later(self, job: Job, owner: str, progress: Progress, should_stop: Callable[[], bool] | None,
                            result: Callable[..., IngestResult], searchable: IngestResult,
                            yield_units: bool) -> IngestResult:
        """After the chunks' commit: the units now, or the job queued for them (``yield_units``, issue 41)."""
        if yield_units and job.kind == JobKind.INGEST and self.jobs.chunks_waiting(job.id) and \
                self.jobs.defer(job.id, owner, searchable):
            return searchable
        return self._sentences(job, owner, progress, should_stop, result, searchable)

    def _sentences(self, job: Job, owner: str, progress: Progress, should_stop: Callable[[], bool] | None,
                   result: Callable[..., IngestResult], first: IngestResult | None) -> IngestResult:
        """The second half of an ingest (issue 41, Deliver 1): the ready document's sentence units from its stored
        chunks (:func:`rag.store.sentences.embed_and_write_units`); ``first`` the result of the chunks' commit
        (``None`` when a run that stopped in between is resumed: made from the stored rows)."""
        doc_id = job.doc_id
        with self.locks.thread:
            rows = self.conn.execute("SELECT id, text, content, start, role FROM chunks WHERE doc_id=? ORDER BY idx",
                                     (doc_id,)).fetchall()
        done = first or result(IngestStatus.READY, chunk_count=len(rows))
        chunks = [StoredChunk(int(i), t, c, int(st), r) for i, t, c, st, r in rows]
        return embed_and_write_units(self.conn, self.locks, self.cache, self.settings, self.embedder, self.model_dim,
                                     job, owner, chunks, done, progress, should_stop,
                                     is_ready=lambda d: self._ready(d) is not None)

    def _fail(self, job: Job, result: Callable[..., IngestResult], reason: str, *, retryable: bool,
              warnings: tuple[str, ...] = ()) -> IngestResult:
        """The document and its job ``failed`` with ``reason`` and ``retryable``, in one transaction."""
        r = result(IngestStatus.FAILED, reason=reason, retryable=retryable, warnings=warnings)
        with self.locks.write(self.conn):
            self.conn.execute("UPDATE documents SET status=?, reason=?, retryable=?, chunk_count=0, updated_at=? "
                              "WHERE id=?", (DocStatus.FAILED, reason, int(retryable), now_iso(), job.doc_id))
            finish_job(self.conn, job.id, JobState.FAILED, reason=reason, retryable=retryable, result=r.to_json())
        return r

    def _drop(self, job: Job, result: Callable[..., IngestResult] | None = None) -> IngestResult:
        """End ``job`` ``cancelled``: a new file leaves with its row and kept original; a retried document
        stays failed ("cancelled", retryable)."""
        reason = "cancelled by the user"
        r = (result(IngestStatus.CANCELLED, reason=reason) if result is not None
             else IngestResult(job.doc_id, job.name, IngestStatus.CANCELLED, reason=reason, job_id=job.id))
        gone = False
        with self.locks.write(self.conn):
            if job.kind == JobKind.RETRY:
                self.conn.execute("UPDATE documents SET status=?, reason=?, retryable=1, chunk_count=0, updated_at=? "
                                  "WHERE id=? AND status!=?",
                                  (DocStatus.FAILED, reason, now_iso(), job.doc_id, DocStatus.READY))
            else:
                gone = self.conn.execute("DELETE FROM documents WHERE id=? AND status!=?",
                                         (job.doc_id, DocStatus.READY)).rowcount > 0
            finish_job(self.conn, job.id, JobState.CANCELLED, reason=reason, result=r.to_json())
        if gone:
            remove_original(self.root, job.doc_id)
        return r

    def cancel(self, job_id: int) -> Job | None:
        """Cancel a job: at once when no worker runs it (queued, or left by a dead worker), else the worker
        running it stops at its next step. Returns the job as it is now (``None`` if unknown)."""
        job = self.jobs.get(job_id)
        if job is None or not job.active:
            return job
        with self.locks.document(job.doc_id) as got:
            if got:  # nobody runs it
                job = self.jobs.get(job_id)
                if job is not None and job.active:
                    self._drop(job)
                return self.jobs.get(job_id)
        self.jobs.request_cancel(job_id)
        return self.jobs.get(job_id)

    def reap(self, doc_ids: list[str]) -> None:
        """Documents ``queued``/``indexing`` whose lock is free (their process is gone): with an active job
        they go back to ``queued`` (the job resumes when a worker runs, :data:`RESUMES`); with none (an ingest
        from before the job table) they become ``failed`` (:data:`INTERRUPTED`, retryable)."""
        for doc_id in doc_ids:
            with self.locks.document(doc_id) as got:
                if not got:
                    continue
                with self.locks.write(self.conn):
                    job = active_job(self.conn, doc_id)
                    busy = (DocStatus.QUEUED, DocStatus.INDEXING)
                    if job is not None:
                        self.conn.execute("UPDATE documents SET status=?, reason=?, updated_at=? WHERE id=? AND "
                                          "status=?", (DocStatus.QUEUED, RESUMES, now_iso(), doc_id, DocStatus.INDEXING))
                        self.conn.execute("UPDATE jobs SET state=?, owner=NULL, lease_until=NULL, stage=NULL, "
                                          "updated_at=? WHERE id=? AND state=?",
                                          (JobState.QUEUED, now_iso(), job.id, JobState.RUNNING))
                        continue
                    n = self.conn.execute("UPDATE documents SET status=?, reason=?, retryable=1, updated_at=? "
                                          "WHERE id=? AND status IN (?, ?)",
                                          (DocStatus.FAILED, INTERRUPTED, now_iso(), doc_id, *busy)).rowcount
                if n:
                    logger.warning("%s was interrupted while indexing; marked failed", doc_id[:8])

    def refuse_unread(self, path: Path, name: str, size: int, reason: str, source: str | None) -> IngestResult:
        """Record a file refused before it was read (too large on disk, issue 26) as a ``failed`` document with
        ``reason`` (not retryable), without its original. The id is a sha256 over the size and the first and
        last :data:`REFUSED_SAMPLE` bytes, not over the whole file: hashing a file of many GB only to refuse it
        took 7 s for 3 GB here (more on a slow disk), unbounded in time. Two refused files with the same size,
        head and tail share one failed row, which says the same thing of both."""
        t0 = time.perf_counter()
        name = clean_name(name)
        try:
            h = hashlib.sha256(b"refused unread\0%d\0" % size)
            with open(path, "rb") as fh:
                h.update(fh.read(REFUSED_SAMPLE))
                if size > 2 * REFUSED_SAMPLE:
                    fh.seek(size - REFUSED_SAMPLE)
                    h.update(fh.read(REFUSED_SAMPLE))
            doc_id = h.hexdigest()
        except OSError as e:
            return IngestResult("", name, IngestStatus.FAILED, reason=f"cannot read file: {e.strerror}")
        if self._ready(doc_id) is None:
            with self.locks.write(self.conn):
                self._upsert_row(doc_id, name, size, DocStatus.FAILED, source, has_file=False)
                self.conn.execute("UPDATE documents SET reason=?, retryable=0 WHERE id=?", (reason, doc_id))
        return IngestResult(doc_id, name, IngestStatus.FAILED, reason=reason, retryable=False,
                            elapsed_ms=(time.perf_counter() - t0) * 1000)

    # ------------------------------------------------------------------ rows

    def same_name(self, name: str, doc_id: str) -> str | None:
        """The id of the newest other ready document named ``name`` (what a new version would replace), or ``None``."""
        with self.locks.thread:
            row = self.conn.execute("SELECT id FROM documents WHERE name=? AND id!=? AND status=? "
                                    "ORDER BY created_at DESC LIMIT 1", (name, doc_id, DocStatus.READY)).fetchone()
        return row[0] if row else None

    def _note_source(self, doc_id: str, source: str | None) -> None:
        """Record where a document already indexed was read from, when it was not known (an upload, then a folder)."""
        if source is None:
            return
        with self.locks.write(self.conn):
            self.conn.execute("UPDATE documents SET source=? WHERE id=? AND source IS NULL", (source, doc_id))

    def _ready(self, doc_id: str) -> tuple[str, int] | None:
        """``(name, chunk_count)`` of the document if it is ``ready``, else ``None``."""
        with self.locks.thread:
            row = self.conn.execute("SELECT name, chunk_count FROM documents WHERE id=? AND status=?",
                                    (doc_id, DocStatus.READY)).fetchone()
        return (row[0], int(row[1])) if row else None

    def _save_original(self, doc_id: str, data: bytes) -> None:
        """Keep the bytes as ``files/<sha256>`` (fsync'ed temp file + atomic rename; kept if already there)."""
        dest = self.root / "files" / doc_id
        if dest.is_file() and dest.stat().st_size == len(data):
            return
        tmp = dest.with_name(f"{doc_id}.tmp{os.getpid()}.{threading.get_ident()}")
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)

    def _upsert_row(self, doc_id: str, name: str, size: int, status: DocStatus, source: str | None, *,
                    has_file: bool = True) -> None:
        """Insert (or reset) the document row with ``status`` (caller's write transaction; a retry keeps the
        source it had; a ready row is never touched)."""
        now = now_iso()
        self.conn.execute(
            "INSERT INTO documents(id, name, size_bytes, status, embed_model, embed_dim, pipeline_version, "
            "has_file, source, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(id) DO UPDATE SET name=excluded.name, status=excluded.status, reason=NULL, retryable=NULL, "
            "chunk_count=0, has_file=excluded.has_file, source=COALESCE(excluded.source, documents.source), "
            "updated_at=excluded.updated_at WHERE documents.status != 'ready'",
            (doc_id, name, size, status, self.model_name, self.model_dim, PIPELINE_VERSION,
             int(has_file), source, now, now))
