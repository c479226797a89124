"""The second half of an ingest (issue 41, Deliver 1): a ready document's sentence units, embedded after it became
searchable by its chunks, and stopping that stage when the document is deleted.

:func:`embed_and_write_units` is what :meth:`rag.store.writer.Writer.run` ends a job with; :func:`stop_sentences`
is what :meth:`rag.store.store.Store.delete` asks first.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from rag.errors import Cancelled, ExtractionError
from rag.settings import Settings
from rag.store.cache import IndexCache, IndexDelta
from rag.store.jobs import Job, JobQueue, JobState, finish_job
from rag.store.locks import StoreLocks
from rag.store.prepare import Progress, StoredChunk, embed_units
from rag.store.results import IngestResult

if TYPE_CHECKING:
    from rag.index.embed import Encoder

logger = logging.getLogger(__name__)


def embed_and_write_units(conn: sqlite3.Connection, locks: StoreLocks, cache: IndexCache, settings: Settings,
                          embedder: Callable[[], Encoder], model_dim: int, job: Job, owner: str,
                          chunks: list[StoredChunk], done: IngestResult, progress: Progress,
                          should_stop: Callable[[], bool] | None, *,
                          is_ready: Callable[[str], bool]) -> IngestResult:
    """Embed the sentence units of job ``job``'s ready document from its stored ``chunks`` (stage ``sentences``)
    and write them with a new index generation, ending the job ``done`` with ``done`` in ONE transaction.

    The document stays ready whatever happens here: a cancel ends the job ``cancelled`` and a failure ends it
    ``done`` with a warning (on the job's result and the document), both without units, as the ``unit_vectors``
    setting off has it; a document deleted, replaced (``is_ready(doc_id)`` false, or other chunk ids) or a job
    taken by another ``owner`` meanwhile gets none. Returns the job's result, with the warning when there is one.
    """
    doc_id, name = job.doc_id, job.name
    spans: list[tuple[int, int, int]] = []
    vecs = None
    warning = None
    if settings.unit_vectors:
        try:
            spans, vecs = embed_units(chunks, name, settings, embedder(), model_dim, progress,
                                      should_stop, floor_s=float(job.limit_s or 0))
        except Cancelled:
            with locks.write(conn):
                finish_job(conn, job.id, JobState.CANCELLED, result=done.to_json(),
                           reason="cancelled by the user while its sentences were embedded; the document "
                                  "stays searchable without sentence search")
            return done
        except Exception as e:  # noqa: BLE001 - the searchable document must not be lost to its units
            if not isinstance(e, ExtractionError):
                logger.exception("%s (%s): sentence units failed", name, doc_id[:8])
            warning = ("sentence search is off for this document: "
                       f"{e.reason if isinstance(e, ExtractionError) else f'{type(e).__name__}: {e}'}")
            spans = []
    if warning:
        done = replace(done, warnings=(*done.warnings, warning))
    with locks.write(conn):
        state = conn.execute("SELECT state, owner FROM jobs WHERE id=?", (job.id,)).fetchone()
        if state is None or state[0] != JobState.RUNNING or state[1] != owner:
            return done  # deleted or cancelled meanwhile: its end was written with it
        now = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE doc_id=? ORDER BY idx", (doc_id,))]
        if now != [c.id for c in chunks] or not is_ready(doc_id):
            finish_job(conn, job.id, JobState.DONE, result=done.to_json(),
                       reason="the document changed while its sentences were embedded")
            return done
        conn.execute("DELETE FROM chunk_units WHERE chunk_id IN (SELECT id FROM chunks WHERE doc_id=?)", (doc_id,))
        if spans and vecs is not None:
            conn.executemany('INSERT INTO chunk_units(chunk_id, start, "end", vector) VALUES (?,?,?,?)',
                             [(c, a, b, v.tobytes()) for (c, a, b), v in zip(spans, vecs)])
            cache.commit(IndexDelta())  # a new generation: its unit index is read again
        if warning:
            conn.execute("UPDATE documents SET warnings=json_insert(COALESCE(warnings, '[]'), '$[#]', ?) "
                     "WHERE id=?", (warning, doc_id))
        finish_job(conn, job.id, JobState.DONE, result=done.to_json())
    return done


def stop_sentences(jobs: JobQueue, locks: StoreLocks, doc_id: str, wait_s: float = 30.0) -> None:
    """A ready document whose sentence units are being embedded (issue 41): ask its worker to stop and wait up
    to ``wait_s`` seconds for it to let go of the document (a cancel is heard between two encoder batches)."""
    job = jobs.for_document(doc_id)
    if job is None or not job.active or locks.document_free(doc_id):
        return
    jobs.request_cancel(job.id)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and not locks.document_free(doc_id):
        time.sleep(0.05)
