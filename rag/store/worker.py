"""The worker: one per store, it runs the store's jobs (issue 25) with extraction contained (issue 26 item 2).

``rag worker`` runs one alone; the app starts one for the user (``ui/jobs.py``); ``rag ingest`` runs one in
its own process while it waits, when no other worker serves the store. A worker

1. holds ``locks/worker.lock`` (``flock``, released by the kernel when the process dies) for as long as it
   runs: a second worker on the same store waits for it (``rag worker``) or leaves at once (the app's);
2. registers in ``workers`` and renews its heartbeat and its job's lease every
   :data:`rag.store.jobs.HEARTBEAT_S` from a thread of its own (which is also how a cancel reaches it);
3. takes the oldest job whose document lock it can get (queued ones, and running ones left by a dead
   worker: :meth:`rag.store.jobs.JobQueue.take`) and runs it with :meth:`rag.store.store.Store.run_job`,
   extraction in a :class:`rag.ingest.contained.ContainedExtractor` (memory and time limits from the
   settings ``extract_memory_mb`` / ``extract_seconds``), progress written to the job row at most every
   :data:`PROGRESS_EVERY_S`;
4. updates the search indexes once per run of consecutive jobs (``IndexCache`` batch, issue 18; meanwhile
   other processes search the new rows through a rebuild from SQLite), at the latest every ``batch_seconds``,
   and once the queue is empty calls ``after_batch(store)`` (the app and CLI pass the answer gate's
   calibration, which lives in a layer above this one);
5. with ``watchdog`` (``rag worker``, the app's worker: a process of its own), never stays stuck on one job: a
   C-level timer (:func:`faulthandler.dump_traceback_later`, which fires even while a stuck call holds the GIL)
   ends the process, its traceback in the log, when a stage overruns its budget by :data:`WATCHDOG_MARGIN_S`;
   the job is then taken again once by the next worker and failed the time after (issue 35: no poison pills,
   :data:`rag.store.jobs.MAX_ATTEMPTS`);
6. stops when asked (``stop()``, SIGTERM, Ctrl-C: the job under way is abandoned and resumes next time, as
   after a kill), when ``until()`` says so, or after ``idle_exit_s`` with nothing to do (never while folders
   are watched and the process that started it is alive; a job waiting for a document lock that another
   process still holds is something to do).
"""

from __future__ import annotations

import contextlib
import faulthandler
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.errors import Cancelled
from rag.ingest.budget import allowance
from rag.ingest.contained import STARTUP_S, ContainedExtractor
from rag.store.jobs import HEARTBEAT_S, Job, JobState, worker_id
from rag.store.locks import file_lock
from rag.store.read_ahead import ReadAhead, Request
from rag.store.results import IngestResult

if TYPE_CHECKING:
    from rag.store.store import Store
    from rag.store.sync import FolderWatcher

logger = logging.getLogger(__name__)

#: The most often a running job's progress is written to its row (seconds); a new stage is written at once.
PROGRESS_EVERY_S = 0.5

#: Seconds between two looks at the job table when there is nothing to do.
POLL_S = 0.5

#: How much further a read ahead's child lowers its CPU priority (nice increment): it reads in the cycles the
#: encoder leaves, and the current file's embedding keeps the cores first.
READ_AHEAD_NICE = 9

#: Seconds past a stage's own budget before the watchdog ends a stuck worker process (the contained child and
#: the embedding loop stop themselves within their budgets; this is the backstop for a call that never returns).
WATCHDOG_MARGIN_S = 120.0
#: The watchdog's allowance for writing a document's rows and index delta (seconds).
COMMIT_S = 600.0


@contextlib.contextmanager
def worker_lock(store_path: Path, *, wait: bool) -> Iterator[bool]:
    """Hold ``locks/worker.lock`` of the store at ``store_path``: yields ``True`` once held, or ``False`` at
    once when another process holds it and ``wait`` is false."""
    folder = Path(store_path) / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    with file_lock(folder / "worker.lock", wait=wait) as got:
        yield got


class _Stopping(BaseException):
    """The worker is stopping: the job under way is put back (not cancelled) and resumes with the next worker.
    A ``BaseException`` so that the ingest path's ``except Exception`` does not take it for a fault."""


def lower_priority(nice: int) -> int | None:
    """Lower this process's CPU priority to at least the Unix nice value ``nice`` (0-19; never raised: a process
    cannot raise its own priority), for a worker that runs in a process of its own (``rag worker``, the app's). The
    contained extraction child inherits it. Returns the nice value now in force, or ``None`` where the platform has
    none (Windows) or refuses. Issue 41: while a file is indexed, the app's searches and answers take the cores
    first (``docs/performance.md``: search while the app's worker indexes, nice 0 against the default)."""
    try:
        now = os.nice(0)
        return os.nice(nice - now) if nice > now else now
    except (AttributeError, OSError):
        return None


def worker_running(store_path: Path) -> bool:
    """True when a worker holds the store at ``store_path`` right now (its lock is taken)."""
    with worker_lock(store_path, wait=False) as got:
        return not got


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fd_stream():
    """A stream with a real file descriptor for the watchdog's traceback (the process's own stderr; ``None`` when
    there is none, as under a test runner that captures it: then there is no watchdog)."""
    for stream in (sys.__stderr__, sys.stderr):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (OSError, ValueError, AttributeError):
            continue
    return None


class Worker:
    """Runs one store's jobs (see the module docstring).

    ``store`` an open :class:`rag.store.store.Store`; ``extractor`` where extraction runs (default: a
    :class:`rag.ingest.contained.ContainedExtractor` with the store's settings' limits; ``None`` with
    ``contained=False``: in this process); ``after_batch(store)`` called after each index update;
    ``idle_exit_s`` stop after that long with nothing to do (``None``: never); ``parent_pid`` the process
    that started this one (with ``watch``, the worker stays while it lives); ``watch`` folders kept in sync
    (:class:`rag.store.sync.FolderWatcher`); ``on_progress(job, stage, done, total)`` and
    ``on_result(job, result)`` for a caller that draws progress (the CLI's bar); ``batch_seconds`` the
    longest the search indexes lag behind the rows while a queue drains; ``watchdog`` end this process when a
    job is stuck past its budget (only for a worker that is a process of its own: see the module doc).
    """

    def __init__(self, store: Store, *, contained: bool = True, extractor: ContainedExtractor | None = None,
                 after_batch: Callable[[Store], None] | None = None, idle_exit_s: float | None = None,
                 parent_pid: int | None = None, watch: list[Path] | tuple[Path, ...] = (),
                 on_progress: Callable[[Job, str, int, int], None] | None = None,
                 on_result: Callable[[Job, IngestResult], None] | None = None, batch_seconds: float = 300.0,
                 watchdog: bool = False):
        s = store.settings
        self.store = store
        self.extractor = extractor or (ContainedExtractor(s.extract_memory_mb, s.extract_seconds) if contained else None)
        self._stop = threading.Event()
        #: the next queued file read while the current one embeds (setting ``read_ahead``; contained workers only)
        self.read_ahead = None
        if s.read_ahead and isinstance(self.extractor, ContainedExtractor):
            second = ContainedExtractor(max(128, self.extractor.memory_mb // 2), self.extractor.seconds,
                                        target=self.extractor.target, nice=READ_AHEAD_NICE)
            self.read_ahead = ReadAhead(store.path, second, stopping=self._stop.is_set)
        self._only: set[int] | None = None
        self.after_batch, self.idle_exit_s, self.parent_pid = after_batch, idle_exit_s, parent_pid
        self.watch = [Path(w) for w in watch]
        self.on_progress, self.on_result, self.batch_seconds = on_progress, on_result, batch_seconds
        self.watchdog = watchdog
        self.owner = worker_id()
        self.jobs_run = 0
        self._current: Job | None = None
        self._cancelled: set[int] = set()  # jobs a cancel (or a lost lease) reached; per job, so none leaks
        # guards _current and _cancelled between the loop and the heartbeat thread: a beat answered for a take
        # that has ended must not reach the next take of the same job (a deferred one, issue 41)
        self._take_lock = threading.Lock()
        self._batch_open: float | None = None

    # ------------------------------------------------------------------ control

    def stop(self) -> None:
        """Ask the loop to stop (the job under way is abandoned; it resumes with the next worker)."""
        self._stop.set()

    def _heartbeat(self) -> None:
        """Renew the worker's heartbeat and the running job's lease; notice a cancel or a lost lease."""
        while not self._stop.wait(HEARTBEAT_S):
            try:
                self._beat(self._current)
            except Exception:  # noqa: BLE001 - a busy database must not kill the heartbeat; the next one retries
                logger.warning("worker heartbeat failed", exc_info=True)

    def _beat(self, job: Job | None) -> None:
        """One heartbeat for the take ``job`` (what :attr:`_current` was when the beat began): a cancel or a
        lost lease is noted only while that same take still runs. A job put back for its sentence units
        (:meth:`rag.store.jobs.JobQueue.defer`) is no longer owned, and this worker may take it again at once;
        the beat of the take that ended must not cancel the new one."""
        q = self.store.jobs
        q.beat_worker(self.owner, job.id if job else None)
        if job is None:
            return
        beat = q.heartbeat(job.id, self.owner)
        if not beat.finished and (beat.cancel or not beat.owned):
            with self._take_lock:
                if self._current is job:
                    self._cancelled.add(job.id)

    # ------------------------------------------------------------------ the loop

    def run(self, *, until: Callable[[], bool] | None = None, only: Callable[[], set[int] | None] | None = None,
            wait_for_lock: bool = True) -> int:
        """Run jobs until stopped (see the module docstring); returns how many jobs were run, or ``-1`` when
        another worker holds the store and ``wait_for_lock`` is false. ``only()`` restricts the jobs taken to
        those ids (``None``: all)."""
        with worker_lock(self.store.path, wait=wait_for_lock) as got:
            if not got:
                return -1
            return self._serve(until, only)

    def _serve(self, until: Callable[[], bool] | None, only: Callable[[], set[int] | None] | None) -> int:
        q = self.store.jobs
        q.register_worker(self.owner)
        q.prune()
        if self.extractor is not None:
            self.extractor.start()  # the child imports the readers while the embedder loads
        _ = self.store.embedder  # loaded before the first job, so its progress starts at its first stage
        beat = threading.Thread(target=self._heartbeat, name="rag-worker-heartbeat", daemon=True)
        beat.start()
        watcher = self._start_watcher()
        logger.info("worker %s serves %s", self.owner, self.store.path)
        try:
            self._loop(until, only)
        finally:
            self._shut_down(watcher, beat)
        return self.jobs_run

    def _start_watcher(self) -> FolderWatcher | None:
        """The folder watcher of ``watch``, started (``None`` without a folder)."""
        if not self.watch:
            return None
        from rag.store.sync import FolderWatcher

        watcher = FolderWatcher(self.store, self.watch)
        watcher.start()
        return watcher

    def _loop(self, until: Callable[[], bool] | None, only: Callable[[], set[int] | None] | None) -> None:
        """Take jobs until stopped, ``until()`` is true once the queue is empty, or idle too long."""
        q = self.store.jobs
        idle_since = time.monotonic()
        while not self._stop.is_set():
            allowed = only() if only is not None else None
            if self._run_one(allowed):
                idle_since = time.monotonic()
                if self._batch_open is not None and time.monotonic() - self._batch_open > self.batch_seconds:
                    self._end_batch(drained=False)
                continue
            self._end_batch()
            if until is not None and until():
                break
            if q.candidates(allowed):
                # jobs wait on a document lock another process still holds (a dead worker's extraction
                # child finishing, an ingest in another process): waiting for them is not idling
                idle_since = time.monotonic()
            if self._idle_over(idle_since):
                logger.info("worker %s: nothing to do for %.0f s; stopping", self.owner, self.idle_exit_s)
                break
            self._stop.wait(POLL_S)

    def _shut_down(self, watcher: FolderWatcher | None, beat: threading.Thread) -> None:
        """Stop the watcher, end the open batch, close the extraction child, unregister."""
        self._stop.set()
        if watcher is not None:
            watcher.stop()
        try:
            self._end_batch()
        finally:
            if self.extractor is not None:
                self.extractor.close()
            if self.read_ahead is not None:
                self.read_ahead.close()
            beat.join(timeout=2 * HEARTBEAT_S)
            self.store.jobs.unregister_worker(self.owner)

    def _idle_over(self, idle_since: float) -> bool:
        if self.idle_exit_s is None:
            return False
        if self.watch and (self.parent_pid is None or _alive(self.parent_pid)):
            return False
        return time.monotonic() - idle_since >= self.idle_exit_s

    def _run_one(self, only: set[int] | None) -> bool:
        """Take and run the next job this worker can get; ``False`` when there is none."""
        q = self.store.jobs
        self._only = only
        for cand in q.candidates(only):
            with self.store.locks.document(cand.doc_id) as got:
                if not got:
                    continue  # another worker (or an ingest in another process) runs it
                job = q.take(cand.id, self.owner)
                if job is None:
                    continue
                if self._batch_open is None:
                    self.store.index_cache.begin_batch()
                    self._batch_open = time.monotonic()
                self._run(job, told=cand.deferred)
                return True
        return False

    def _run(self, job: Job, *, told: bool = False) -> None:
        """Run ``job``; ``on_result`` once per job, when its document is searchable: ``told`` for a deferred
        job taken for its sentence units (its outcome was told when it was put back, issue 41)."""
        with self._take_lock:
            self._current = job
            if job.cancel_requested:
                self._cancelled.add(job.id)
        last: dict[str, Any] = {"t": 0.0, "stage": None}
        q = self.store.jobs

        def should_stop() -> bool:
            if self._stop.is_set():
                raise _Stopping
            return job.id in self._cancelled

        def progress(stage: str, done: int, total: int) -> None:
            if should_stop():
                raise Cancelled(f"{job.name}: cancelled")
            t = time.monotonic()
            if stage != last["stage"] or stage in ("extract", "ocr"):
                self._arm(job, stage, total)
            if stage != last["stage"] or t - last["t"] >= PROGRESS_EVERY_S or done >= total:
                if q.progress(job.id, self.owner, stage, done, total):
                    self._cancelled.add(job.id)
                    raise Cancelled(f"{job.name}: cancelled")
                last.update(t=t, stage=stage)
            if self.on_progress is not None:
                self.on_progress(job, stage, done, total)

        read = self._reader(job) if self.extractor is not None else None
        self._arm(job, "start", 0)
        try:
            r = self.store.run_job(job, self.owner, progress, should_stop, read=read, yield_units=True)
        except _Stopping:
            q.release(job.id, self.owner)
            logger.info("%s: left for the next worker (this one is stopping)", job.name)
            return
        finally:
            if self.watchdog:
                faulthandler.cancel_dump_traceback_later()
            with self._take_lock:
                self._current = None
                self._cancelled.discard(job.id)
        self._tell(job, r, told)

    def _reader(self, job: Job):
        """The ``read`` of ``job`` (:data:`rag.store.prepare.Read`): its read ahead when one was made for the
        same request, else the contained extractor's; then the next queued file is read ahead (issue 41)."""
        extractor, ahead = self.extractor, self.read_ahead
        assert extractor is not None

        def read(data: bytes, name: str, progress, should_stop, limits, params, *, floor_s: float = 0.0):
            got = None
            if ahead is not None:
                got = ahead.read(job, Request.of(data, name, limits, params, floor_s), progress, should_stop)
            if got is None:
                got = extractor.read(data, name, progress, should_stop, limits, params, floor_s=floor_s)
            if ahead is not None:
                nxt = next((c for c in self.store.jobs.candidates(self._only)
                            if c.id != job.id and not c.deferred and c.state == JobState.QUEUED), None)
                if nxt is not None:
                    ahead.start(nxt, limits, params, float(nxt.limit_s or 0))
            return got

        return read

    def _tell(self, job: Job, r: IngestResult, told: bool) -> None:
        """Count and log a job run, and pass its result to ``on_result`` once per job: when it is searchable
        (a job put back for its sentence units is counted when they are done, and told no second time)."""
        q = self.store.jobs
        deferred = (now := q.get(job.id)) is not None and now.deferred
        if deferred:  # searchable; its sentence units wait for the files behind it (issue 41)
            logger.info("%s (sentence search to follow)", r.message)
        else:
            self.jobs_run += 1
            logger.info("%s", r.message)
        if self.on_result is not None and not told:
            self.on_result(job, r)

    def _arm(self, job: Job, stage: str, total: int) -> None:
        """(Re)start the watchdog for the piece of ``stage`` that starts now (see the module doc)."""
        if not self.watchdog:
            return
        floor = float(job.limit_s or 0)
        if stage in ("start", "read"):
            budget = max(floor, allowance("start", size_bytes=job.size_bytes))
            if self.extractor is not None and not self.extractor.ready:
                budget += STARTUP_S
        elif stage in ("extract", "ocr", "roles", "chunk", "units"):
            budget = max(floor, allowance(stage, chars=total))
        elif stage in ("embed", "sentences"):  # sentences: a searchable document's units (issue 41)
            budget = max(floor, allowance("embed", texts=total))
        else:
            budget = COMMIT_S
        out = _fd_stream()
        if out is not None:
            faulthandler.dump_traceback_later(budget + WATCHDOG_MARGIN_S, exit=True, file=out)

    def _end_batch(self, *, drained: bool = True) -> None:
        """Update the search indexes for the jobs run since the last update; when the queue is ``drained``, then
        ``after_batch`` (the gate's calibration costs seconds: once per drained queue, not per index update)."""
        if self._batch_open is None:
            return
        self._batch_open = None
        with self.store.locks.write(self.store._db):
            self.store.index_cache.end_batch()
        if drained and self.after_batch is not None and not self.store.is_empty:
            try:
                self.after_batch(self.store)
            except Exception:  # noqa: BLE001 - a calibration fault must not stop indexing
                logger.exception("after-batch step failed")
