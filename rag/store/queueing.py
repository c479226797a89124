"""The store's queue methods (issue 25), mixed into :class:`rag.store.store.Store` (kept apart so the facade
stays one screenful per concern): accept a file for a worker, queue a retry, cancel a job, run a taken job.

The work is :class:`rag.store.writer.Writer`'s (``accept``, ``accept_retry``, ``cancel``, ``run``); the job table
is :mod:`rag.store.jobs` (``store.jobs``); the worker that calls :meth:`QueueFacade.run_job` is
:mod:`rag.store.worker`.
"""

from __future__ import annotations

from pathlib import Path

from rag.errors import LimitExceeded, StoreError
from rag.ingest.limits import Limits, check_size
from rag.store.prepare import Progress, Read
from rag.store.results import IngestResult, IngestStatus, OnConflict, clean_name


class QueueFacade:
    """The queue half of the store's public API (``self`` is a :class:`rag.store.store.Store`)."""

    def enqueue_bytes(self, data: bytes, name: str, *, on_conflict: str = OnConflict.REPLACE,
                      source: str | None = None) -> IngestResult:
        """Accept a file for indexing by a worker: the original and a job row are kept, nothing is extracted
        here (:meth:`rag.store.writer.Writer.accept`). ``queued`` with ``job_id``, or ``duplicate`` /
        ``exists`` / ``failed`` (too large) at once."""
        return self._writer.accept(data, name, on_conflict=on_conflict, source=source)

    def enqueue_path(self, path: str | Path, *, on_conflict: str = OnConflict.REPLACE) -> IngestResult:
        """:meth:`enqueue_bytes` on a file read from disk, named by its base name, its absolute path as ``source``;
        a file over ``max_upload_mb`` on the file system is refused before it is read (issue 26)."""
        p = Path(path)
        try:
            check_size(p.stat().st_size, p.name, Limits.from_settings(self.settings))
            data = p.read_bytes()
        except LimitExceeded as e:
            return self._writer.refuse_unread(p, p.name, p.stat().st_size, e.reason, str(p.resolve()))
        except OSError as e:
            return IngestResult("", clean_name(p.name), IngestStatus.FAILED, reason=f"cannot read file: {e.strerror}")
        return self.enqueue_bytes(data, p.name, on_conflict=on_conflict, source=str(p.resolve()))

    def enqueue_retry(self, doc_id: str, limit_s: float | None = None) -> IngestResult:
        """Queue a failed document again from its kept original (``doc_id`` full or a unique prefix), with a
        larger time limit ``limit_s`` (seconds) when given. Raises :class:`StoreError` if unknown or its
        original was not kept."""
        doc = self.find_document(doc_id)
        if doc is None:
            raise StoreError(f"no document with id {doc_id}")
        return self._writer.accept_retry(doc.id, limit_s)

    def cancel_job(self, job_id: int):
        """Cancel job ``job_id`` (:meth:`rag.store.writer.Writer.cancel`); returns it as it is now, or ``None``."""
        return self._writer.cancel(job_id)

    def run_job(self, job, owner: str, progress: Progress | None = None, should_stop=None, *,
                read: Read | None = None, yield_units: bool = False) -> IngestResult:
        """Index the document of a job taken by ``owner`` (a worker, holding the document's lock):
        :meth:`rag.store.writer.Writer.run` (``yield_units``: its sentence units may wait for the files behind)."""
        return self._writer.run(job, owner, progress, should_stop, read=read, yield_units=yield_units)
