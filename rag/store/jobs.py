"""The job table: indexing work kept in the store's own SQLite, so accepting a file is durable and instant (issue 25).

Why a table in the store's database rather than a task-queue library (huey's ``SqliteHuey`` was the
candidate): a job and the document it indexes change in ONE transaction. Accepting a file writes the
document row (``queued``) and its job row together; finishing writes the chunk rows, the document's
``ready`` and the job's ``done`` together, so a worker killed at any point leaves either the old state or the
new one, never a document indexed twice or a job lost. ``SqliteHuey`` deletes a task from its own file
when a consumer takes it (a consumer killed mid-task loses it), keeps no progress, has no lease, and would
be a second database per collection beside ``store.sqlite3``. The whole queue here is this module (one
table, one partial unique index) and the worker loop (:mod:`rag.store.worker`).

A job's life (:class:`JobState`)::

    queued --take--> running --commit--> done        (the document is ready, a duplicate, or was replaced)
                        |----fail------> failed      (reason; ``retryable`` says whether a retry can help)
    queued/running --cancel--> cancelled             (the document leaves; a running one stops at the next step)
    running, its worker gone --take--> running       (resumed from the start: nothing of it was committed)

Who may run a job: whoever holds the document's lock (``locks/<sha256>.lock``, an ``flock`` the kernel
releases when a process dies, :mod:`rag.store.locks`). A ``running`` job whose lock is free was left by a
worker that died, and is taken again (``attempts`` counts the takes; after :data:`MAX_ATTEMPTS` it fails, not
retryable: the document stopped its worker every time; issue 35: a job that killed, hung or timed out a worker
twice is a poison pill, and no worker loops on it). The lease (``owner``, ``lease_until``, renewed by
heartbeats every :data:`HEARTBEAT_S`) says which worker runs it and whether it is alive, for ``rag jobs``
and the app, and is what a job would be claimed by on a queue shared between machines (``docs/jobs.md``).
At most one job per document is active (a partial unique index), so the same bytes accepted twice, by two
apps or by the CLI and the app, are indexed once.

Times: ``created_at``/``finished_at`` ISO 8601 UTC text like every other row; ``started``, ``lease_until``
and ``heartbeat`` Unix seconds (floats: elapsed times and ETAs are computed from them).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
import uuid
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from rag.store.locks import StoreLocks
from rag.store.results import IngestResult, IngestStatus
from rag.store.schema import now_iso

#: Seconds a lease lasts without a heartbeat; a worker renews it every :data:`HEARTBEAT_S`.
LEASE_S = 30.0
HEARTBEAT_S = 5.0

#: Takes of one job before it fails for good (each take after the first follows a worker that died on it, or that
#: its watchdog stopped: issue 35, a job that stopped a worker twice is never taken again on its own).
MAX_ATTEMPTS = 2

#: Seconds without a heartbeat after which a running job is shown as stalled, not as indexing (issue 35).
STALLED_S = 60.0

#: Share of the embedding stage done before a running job's time left is told (its rate is measured by then).
ETA_AFTER = 0.05

#: Finished jobs older than this are deleted when a worker starts (the documents keep their state).
KEEP_FINISHED_DAYS = 14


class JobState(StrEnum):
    """Where a job is (see the module docstring for the transitions)."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


#: States of a job that is not finished.
ACTIVE = (JobState.QUEUED, JobState.RUNNING)


class JobKind(StrEnum):
    """What a job does: ``ingest`` a file just accepted; ``retry`` a failed document from its kept original."""

    INGEST = "ingest"
    RETRY = "retry"


#: The share of a document's indexing each stage stands for, ``stage -> (start, end)`` in 0..1 (what a
#: progress bar and the ETA use). Measured on the course corpus with the int8 encoder: embedding is most of
#: the time of a text document; a scanned PDF spends it in OCR, which reports pages and takes the extract span.
#: Issue 41: the chunks are embedded first (``embed``) and the document is searchable after ``index``; its
#: sentence units (``sentences``, about twice the chunks' embedding) follow.
STAGES: dict[str, tuple[float, float]] = {
    "read": (0.0, 0.02), "extract": (0.02, 0.25), "ocr": (0.02, 0.6), "roles": (0.25, 0.26), "chunk": (0.26, 0.29),
    "units": (0.29, 0.3),
    "embed": (0.3, 0.6), "index": (0.6, 0.62), "sentences": (0.62, 1.0),
}


def worker_id() -> str:
    """A new worker identity: ``host:pid:random`` (what ``owner`` holds)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class Job:
    """One row of the job table.

    ``doc_id`` the sha256 of the bytes (kept as ``files/<doc_id>``); ``name`` the user's file name;
    ``source`` the absolute path read (``None`` for an upload); ``size_bytes`` of the original;
    ``on_conflict`` :class:`rag.store.writer.OnConflict` value; ``stage``/``done``/``total`` the last
    progress report (``ocr`` pages, ``embed`` chunks, else 0/1); ``reason`` why it failed or was cancelled;
    ``retryable`` whether a retry can help (a transient fault) or not (a damaged, refused or too large file,
    a limit hit); ``result`` the finished job's outcome as ``IngestResult`` fields; ``owner`` the worker
    holding the lease until ``lease_until`` (Unix s); ``attempts`` takes so far; ``cancel_requested`` set by
    a cancel while running; ``limit_s`` the larger time limit a retry asked for (seconds; ``None``: the settings').
    """

    id: int
    kind: JobKind
    doc_id: str
    name: str
    source: str | None
    size_bytes: int
    on_conflict: str
    state: JobState
    stage: str | None
    done: int
    total: int
    reason: str | None
    retryable: bool | None
    result: dict[str, Any] | None
    attempts: int
    owner: str | None
    lease_until: float | None
    cancel_requested: bool
    created_at: str
    started: float | None
    heartbeat: float | None
    finished_at: str | None
    limit_s: float | None = None
    stage_at: float | None = None

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    def stalled(self, now: float | None = None) -> bool:
        """Whether a running job's heartbeat has not advanced for :data:`STALLED_S` (its worker is stuck or gone)."""
        beat = self.heartbeat or self.started
        return self.state == JobState.RUNNING and beat is not None and (now or time.time()) - beat > STALLED_S

    def elapsed_s(self, now: float | None = None) -> float | None:
        """Seconds since a running job was taken (``None`` when it is not running)."""
        if self.state != JobState.RUNNING or self.started is None:
            return None
        return max(0.0, (now or time.time()) - self.started)

    @property
    def deferred(self) -> bool:
        """Whether this queued job's document is already searchable and only its sentence units are left (put
        back by :meth:`JobQueue.defer` so that the files behind it get their chunks first, issue 41)."""
        return self.state == JobState.QUEUED and self.stage == "sentences"

    @property
    def searchable(self) -> bool:
        """Whether this active job's document can already be searched: only its sentence units are left (queued
        behind other files, :attr:`deferred`, or being embedded)."""
        return self.active and self.stage == "sentences"

    @property
    def fraction(self) -> float:
        """Progress of a running job, 0..1 (stage weights :data:`STAGES`); 1.0 when finished, 0.0 when queued."""
        if self.deferred:
            return STAGES["sentences"][0]
        if self.state == JobState.QUEUED or self.stage is None:
            return 0.0 if self.active else 1.0
        if not self.active:
            return 1.0
        lo, hi = STAGES.get(self.stage, (0.0, 1.0))
        return lo + (hi - lo) * (min(self.done, self.total) / self.total if self.total else 0.0)

    def eta_s(self, now: float | None = None) -> float | None:
        """Seconds left in a running job's embedding stage, measured from its own rate there once :data:`ETA_AFTER`
        of it is done: for ``embed``, until the document can be searched; for ``sentences`` (issue 41, after it
        is searchable), until sentence search has it too; ``None`` before
        (issue 42: guessed from fixed stage weights, every file said "less than a minute left" while reading
        took seconds and embedding minutes)."""
        if self.state != JobState.RUNNING or self.stalled(now):
            return None
        if self.stage == "index":
            return 0.0
        if self.stage not in ("embed", "sentences") or not self.total or self.stage_at is None or \
                self.done < ETA_AFTER * self.total:
            return None
        spent = max(0.0, (now or time.time()) - self.stage_at)
        return spent * (self.total - self.done) / self.done

    def stage_text(self) -> str:
        """What a running job does now, in words: ``OCR page 12 of 300``, ``embedding its passages``, ..."""
        if self.deferred:
            return "searchable; sentence search after the files ahead of it"
        if self.state == JobState.QUEUED:
            return "queued"
        if self.state != JobState.RUNNING:
            return str(self.state)
        if self.stalled():
            beat = self.heartbeat or self.started or time.time()
            return f"stalled while {self._doing()} (no heartbeat from its worker for {time.time() - beat:.0f} s)"
        return self._doing()

    def _doing(self) -> str:
        words = {"read": "reading the file", "extract": "extracting the text", "chunk": "cutting into chunks",
                 "roles": "finding contents and reference lists", "units": "cutting into sentences",
                 "index": "updating the index"}
        if self.stage == "extract" and self.total > 1:
            return f"reading page {min(self.done + 1, self.total)} of {self.total}"
        if self.stage == "ocr" and self.total:
            return f"OCR page {min(self.done + 1, self.total)} of {self.total}"
        if self.stage == "embed" and self.total:
            # the distinct passage texts, embedded once each (issue 42: "815 pieces", passages and sentences
            # together, while the result said "220 passages")
            return "embedding its passages"
        if self.stage == "sentences":  # issue 41: the document is ready; its sentence units follow
            n = f": {self.done} of {self.total}" if self.total else ""
            return f"searchable; embedding its sentences for sentence search{n}"
        return words.get(self.stage or "", "starting")

    def to_json(self) -> dict[str, Any]:
        """The job as ``rag jobs --json`` prints it (every field; ``fraction`` and ``eta_s`` added)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out.update(fraction=round(self.fraction, 4), eta_s=None if self.eta_s() is None else round(self.eta_s(), 1))
        return out


def result_of(job: Job) -> IngestResult:
    """The outcome of a finished job: its stored result, or one made from its state and reason."""
    if job.result:
        return IngestResult.from_json(job.result)
    status = {JobState.FAILED: IngestStatus.FAILED, JobState.CANCELLED: IngestStatus.CANCELLED}.get(
        job.state, IngestStatus.QUEUED)
    return IngestResult(job.doc_id, job.name, status, reason=job.reason, retryable=job.retryable, job_id=job.id)


_COLS = ("id, kind, doc_id, name, source, size_bytes, on_conflict, state, stage, done, total, reason, retryable, "
         "result, attempts, owner, lease_until, cancel, created_at, started, heartbeat, finished_at, limit_s, stage_at")


def _job(r: tuple) -> Job:
    return Job(id=r[0], kind=JobKind(r[1]), doc_id=r[2], name=r[3], source=r[4], size_bytes=r[5], on_conflict=r[6],
               state=JobState(r[7]), stage=r[8], done=r[9], total=r[10], reason=r[11],
               retryable=None if r[12] is None else bool(r[12]), result=json.loads(r[13]) if r[13] else None,
               attempts=r[14], owner=r[15], lease_until=r[16], cancel_requested=bool(r[17]), created_at=r[18],
               started=r[19], heartbeat=r[20], finished_at=r[21], limit_s=r[22], stage_at=r[23])


# --------------------------------------------------------------------------- inside the caller's transaction


def active_job(conn: sqlite3.Connection, doc_id: str) -> Job | None:
    """The queued or running job of document ``doc_id``, or ``None`` (read in the caller's transaction)."""
    r = conn.execute(f"SELECT {_COLS} FROM jobs WHERE doc_id=? AND state IN (?, ?)", (doc_id, *ACTIVE)).fetchone()
    return _job(r) if r else None


def insert_job(conn: sqlite3.Connection, kind: JobKind, doc_id: str, name: str, *, source: str | None,
               size_bytes: int, on_conflict: str, owner: str | None = None, limit_s: float | None = None) -> int:
    """Add a job (caller's write transaction): ``queued``, or ``running`` under ``owner`` when given (an
    ingest run in the caller's own process). Raises ``sqlite3.IntegrityError`` when the document already has
    an active job (the partial unique index ``jobs_active``). ``limit_s``: a retry's larger time limit (s)."""
    now, t = now_iso(), time.time()
    state = JobState.RUNNING if owner else JobState.QUEUED
    cur = conn.execute(
        "INSERT INTO jobs(kind, doc_id, name, source, size_bytes, on_conflict, state, attempts, owner, lease_until, "
        "started, heartbeat, created_at, updated_at, limit_s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (kind, doc_id, name, source, size_bytes, on_conflict, state, 1 if owner else 0, owner,
         t + LEASE_S if owner else None, t if owner else None, t if owner else None, now, now, limit_s))
    return int(cur.lastrowid)


def finish_job(conn: sqlite3.Connection, job_id: int, state: JobState, *, reason: str | None = None,
               retryable: bool | None = None, result: dict[str, Any] | None = None) -> None:
    """Mark a job finished (``done``/``failed``/``cancelled``) in the caller's write transaction, so it
    commits with the document rows it changed."""
    conn.execute("UPDATE jobs SET state=?, reason=?, retryable=?, result=?, owner=NULL, lease_until=NULL, "
                 "finished_at=?, updated_at=? WHERE id=?",
                 (state, reason, None if retryable is None else int(retryable),
                  json.dumps(result, ensure_ascii=False) if result is not None else None, now_iso(), now_iso(),
                  job_id))


# --------------------------------------------------------------------------- the queue


@dataclass(frozen=True)
class Beat:
    """What a heartbeat learned: whether the caller still owns the job, whether a cancel was asked, and whether
    the job has finished meanwhile (its commit ran between the worker's look at it and the beat: not a loss)."""

    owned: bool
    cancel: bool
    finished: bool = False


@dataclass(frozen=True)
class WorkerRow:
    """A worker's row in ``workers``: ``id`` (``host:pid:random``), ``pid``, ``host``, ``started_at`` (ISO),
    ``heartbeat`` (Unix s), ``job_id`` the job it runs now (or ``None``), ``alive`` whether its heartbeat
    is younger than :data:`LEASE_S` (a worker killed with ``kill -9`` leaves its row behind, not alive)."""

    id: str
    pid: int
    host: str
    started_at: str
    heartbeat: float
    job_id: int | None

    @property
    def alive(self) -> bool:
        return time.time() - self.heartbeat < LEASE_S


class JobQueue:
    """The job table of one store (its connection ``conn`` and :class:`rag.store.locks.StoreLocks`).

    Reads hold the store's thread lock; writes go through its write section (one transaction each).
    """

    def __init__(self, conn: sqlite3.Connection, locks: StoreLocks):
        self.conn, self.locks = conn, locks

    # ------------------------------------------------------------------ reads

    def get(self, job_id: int) -> Job | None:
        """The job with this id, or ``None``."""
        with self.locks.thread:
            r = self.conn.execute(f"SELECT {_COLS} FROM jobs WHERE id=?", (int(job_id),)).fetchone()
        return _job(r) if r else None

    def list(self, states: tuple[str, ...] | None = None, *, limit: int = 500) -> list[Job]:
        """Jobs in ``states`` (default: all), oldest first, at most ``limit`` (the newest ``limit``)."""
        where, args = "", ()
        if states:
            where, args = f"WHERE state IN ({','.join('?' * len(states))})", tuple(states)
        with self.locks.thread:
            rows = self.conn.execute(f"SELECT {_COLS} FROM jobs {where} ORDER BY id DESC LIMIT ?",
                                     (*args, int(limit))).fetchall()
        return [_job(r) for r in reversed(rows)]

    def active(self) -> list[Job]:
        """Queued and running jobs, in the order they will run: oldest first, except that a job whose document is
        already searchable and waits only for its sentence units (:attr:`Job.deferred`) runs after every job still
        waiting for its chunks (issue 41: a queue of files ran each file's units before the next file's chunks)."""
        return sorted(self.list(ACTIVE), key=lambda j: j.deferred)

    def for_document(self, doc_id: str) -> Job | None:
        """The newest job of document ``doc_id`` (any state), or ``None``."""
        with self.locks.thread:
            r = self.conn.execute(f"SELECT {_COLS} FROM jobs WHERE doc_id=? ORDER BY id DESC LIMIT 1",
                                  (doc_id,)).fetchone()
        return _job(r) if r else None

    def counts(self) -> dict[str, int]:
        """Jobs per state (states with none are absent)."""
        with self.locks.thread:
            return dict(self.conn.execute("SELECT state, COUNT(*) FROM jobs GROUP BY state").fetchall())

    def candidates(self, only: set[int] | None = None) -> list[Job]:
        """Jobs a worker may try to take, in order: queued ones and running ones (taken only when their
        document lock is free, i.e. their worker died). ``only`` restricts to those ids."""
        jobs = self.active()
        return [j for j in jobs if only is None or j.id in only]

    # ------------------------------------------------------------------ a worker's writes

    def take(self, job_id: int, owner: str) -> Job | None:
        """Claim job ``job_id`` for ``owner`` (the caller holds the document's lock); ``None`` when it is no
        longer active. A job taken :data:`MAX_ATTEMPTS` times already fails instead (not retryable) and
        ``None`` is returned."""
        t = time.time()
        with self.locks.write(self.conn):
            r = self.conn.execute(f"SELECT {_COLS} FROM jobs WHERE id=? AND state IN (?, ?)",
                                  (job_id, *ACTIVE)).fetchone()
            if r is None:
                return None
            job = _job(r)
            if job.attempts >= MAX_ATTEMPTS:
                where = f" while {job._doing()}" if job.stage else ""
                reason = (f"the worker stopped {job.attempts} times{where} (killed, out of memory, or stuck past "
                          "its time limit); not tried again on its own (retry with a larger limit: rag jobs retry "
                          "--limit SECONDS)")
                finish_job(self.conn, job.id, JobState.FAILED, reason=reason, retryable=False)
                self.conn.execute("UPDATE documents SET status='failed', reason=?, retryable=0, chunk_count=0, "
                                  "updated_at=? WHERE id=? AND status IN ('queued', 'indexing')",
                                  (reason, now_iso(), job.doc_id))
                return None
            self.conn.execute("UPDATE jobs SET state=?, owner=?, lease_until=?, heartbeat=?, started=?, stage=NULL, stage_at=NULL, "
                              "done=0, total=0, attempts=attempts+1, updated_at=? WHERE id=?",
                              (JobState.RUNNING, owner, t + LEASE_S, t, t, now_iso(), job.id))
        return self.get(job_id)

    def heartbeat(self, job_id: int, owner: str) -> Beat:
        """Renew ``owner``'s lease on the job; says whether it still owns it and whether a cancel was asked."""
        t = time.time()
        with self.locks.write(self.conn):
            n = self.conn.execute("UPDATE jobs SET lease_until=?, heartbeat=? WHERE id=? AND owner=? AND state=?",
                                  (t + LEASE_S, t, job_id, owner, JobState.RUNNING)).rowcount
            r = self.conn.execute("SELECT cancel, state FROM jobs WHERE id=?", (job_id,)).fetchone()
        return Beat(owned=n == 1, cancel=bool(r and r[0]), finished=bool(r and r[1] not in ACTIVE))

    def progress(self, job_id: int, owner: str, stage: str, done: int, total: int) -> bool:
        """Record the running job's stage and ``done``/``total`` (what every page and ``rag jobs`` show);
        returns whether a cancel was asked meanwhile."""
        with self.locks.write(self.conn):
            self.conn.execute("UPDATE jobs SET stage_at=CASE WHEN stage IS ? THEN stage_at ELSE ? END, stage=?, done=?, "
                              "total=?, updated_at=? WHERE id=? AND owner=?",
                              (stage, time.time(), stage, int(done), int(total), now_iso(), job_id, owner))
            r = self.conn.execute("SELECT cancel FROM jobs WHERE id=?", (job_id,)).fetchone()
        return bool(r and r[0])

    def release(self, job_id: int, owner: str) -> None:
        """Put ``owner``'s running job back in the queue untouched (a worker stopping on request: that take does
        not count as an attempt); its document goes back to ``queued``."""
        with self.locks.write(self.conn):
            n = self.conn.execute("UPDATE jobs SET state=?, owner=NULL, lease_until=NULL, stage=NULL, stage_at=NULL, done=0, total=0, "
                                  "attempts=MAX(0, attempts-1), updated_at=? WHERE id=? AND owner=? AND state=?",
                                  (JobState.QUEUED, now_iso(), job_id, owner, JobState.RUNNING)).rowcount
            if n:
                self.conn.execute("UPDATE documents SET status='queued', updated_at=? WHERE id=(SELECT doc_id FROM "
                                  "jobs WHERE id=?) AND status='indexing'", (now_iso(), job_id))

    def chunks_waiting(self, job_id: int) -> bool:
        """Whether a queued job other than ``job_id`` waits for its document's chunks (its document not ready):
        what :meth:`defer` is for."""
        with self.locks.thread:
            return self.conn.execute(
                "SELECT 1 FROM jobs j JOIN documents d ON d.id = j.doc_id WHERE j.state=? AND j.id!=? AND "
                "d.status!='ready' LIMIT 1", (JobState.QUEUED, int(job_id))).fetchone() is not None

    def defer(self, job_id: int, owner: str, searchable: IngestResult) -> bool:
        """Put ``owner``'s running job, whose document was just made searchable, back in the queue for its
        sentence units (:attr:`Job.deferred`: it runs after the jobs still waiting for their chunks; the take does
        not count as an attempt; the document stays ready), keeping ``searchable``, the chunks' result, for the
        job's end. ``False`` when ``owner`` no longer runs it."""
        with self.locks.write(self.conn):
            return self.conn.execute(
                "UPDATE jobs SET state=?, owner=NULL, lease_until=NULL, stage='sentences', stage_at=NULL, done=0, "
                "total=0, attempts=MAX(0, attempts-1), result=?, updated_at=? WHERE id=? AND owner=? AND state=?",
                (JobState.QUEUED, json.dumps(searchable.to_json(), ensure_ascii=False), now_iso(), job_id, owner,
                 JobState.RUNNING)).rowcount > 0

    def request_cancel(self, job_id: int) -> None:
        """Ask the worker running ``job_id`` to stop it (it checks at each heartbeat and progress step)."""
        with self.locks.write(self.conn):
            self.conn.execute("UPDATE jobs SET cancel=1, updated_at=? WHERE id=? AND state IN (?, ?)",
                              (now_iso(), job_id, *ACTIVE))

    def prune(self, keep_days: int = KEEP_FINISHED_DAYS) -> int:
        """Delete finished jobs older than ``keep_days`` days; returns how many."""
        cutoff = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() - keep_days * 86400))
        with self.locks.write(self.conn):
            return self.conn.execute("DELETE FROM jobs WHERE state NOT IN (?, ?) AND created_at < ?",
                                     (*ACTIVE, cutoff)).rowcount

    # ------------------------------------------------------------------ workers

    def register_worker(self, owner: str) -> None:
        """Record a worker starting (its row is what the app shows as "worker running")."""
        with self.locks.write(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO workers(id, pid, host, started_at, heartbeat, job_id) "
                              "VALUES (?,?,?,?,?,NULL)", (owner, os.getpid(), socket.gethostname(), now_iso(),
                                                          time.time()))

    def beat_worker(self, owner: str, job_id: int | None) -> None:
        """Renew a worker's heartbeat, with the job it runs now."""
        with self.locks.write(self.conn):
            self.conn.execute("UPDATE workers SET heartbeat=?, job_id=? WHERE id=?", (time.time(), job_id, owner))

    def unregister_worker(self, owner: str) -> None:
        """Remove a worker's row (a clean stop) and the rows of workers long dead."""
        with self.locks.write(self.conn):
            self.conn.execute("DELETE FROM workers WHERE id=? OR heartbeat < ?", (owner, time.time() - 86400))

    def workers(self) -> list[WorkerRow]:
        """The workers' rows, newest heartbeat first (see :attr:`WorkerRow.alive`)."""
        with self.locks.thread:
            rows = self.conn.execute("SELECT id, pid, host, started_at, heartbeat, job_id FROM workers "
                                     "ORDER BY heartbeat DESC").fetchall()
        return [WorkerRow(*r) for r in rows]
