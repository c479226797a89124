"""``rag jobs``, ``rag worker`` and ``rag watch`` (issue 25), and :func:`wait_for_jobs`, ``rag ingest``'s wait.

* ``rag jobs [--all] [--json]`` - what is queued, running (file, stage, page x of y for OCR, ETA) and
  failed (with whether a retry can help); ``rag jobs cancel JOB...``; ``rag jobs retry [JOB... | --failed]``
  (``--failed``: every failed job a retry can help, as the app's "Retry all failed");
* ``rag worker`` - run the store's worker in the foreground until Ctrl-C (``--idle-exit S`` to stop when
  idle; with ``--exit-if-busy`` it leaves at once when another worker serves the store, else it waits to
  take over); ``--watch DIR`` keeps folders in sync too;
* ``rag watch DIR...`` - keep folders in sync with the store (``ingest --sync``'s rules) and index what
  changes, until Ctrl-C.

``rag jobs --json`` prints ``{"store", "workers": [...], "jobs": [Job.to_json()...]}``.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rag.cli.collection import collection_option, store_settings
from rag.errors import StoreError
from rag.store.jobs import ACTIVE, Job, JobState, result_of
from rag.store.results import IngestResult, IngestStatus
from rag.store.worker import Worker, lower_priority

if TYPE_CHECKING:
    from rag.store.store import Store

log = logging.getLogger(__name__)

_store_option = click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None,
                             help="Store directory (default: settings, env RAG_STORE, else ./data).")


def open_store(store_dir: str | None, collection: str | None, *, must_exist: bool = True):
    """The store of ``--store``/``--collection`` (:class:`rag.store.store.Store`)."""
    from rag.store.store import Store

    s = store_settings(store_dir, collection, create=not must_exist)
    if must_exist and not Path(s.store).is_dir():
        raise StoreError(f"no store at {s.store}; ingest documents first: python -m rag ingest --store {s.store} PATH")
    return Store(s.store, settings=s)


def calibrate(store: Store) -> None:
    """What the worker does once a queue is drained: :func:`rag.answer.refresh.after_indexing` (the gate's
    references, then each ready document's overview), imported on first use so that the CLI starts without the
    answer layer."""
    from rag.answer.refresh import after_indexing

    after_indexing(store)


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return f", about {seconds:.0f} s left" if seconds < 90 else f", about {seconds / 60:.0f} min left"


def job_line(job: Job) -> str:
    """One line of ``rag jobs``: id, state, the file, and what it does now or why it failed."""
    head = f"{job.id:>5}  {job.state:<9} {job.name}"
    if job.state == JobState.RUNNING:
        elapsed = job.elapsed_s()
        took = f", {elapsed:.0f} s so far" if elapsed is not None else ""
        if job.stalled():
            return f"{head}: {job.stage_text()}{took}"
        return f"{head}: {job.stage_text()} ({job.fraction:.0%}{took}{_eta(job.eta_s())})"
    if job.state == JobState.FAILED:
        hint = "a retry may help" if job.retryable else "a retry cannot help"
        return f"{head}: {job.reason} ({hint})"
    if job.state in (JobState.DONE, JobState.CANCELLED) and job.result:
        return f"{head}: {IngestResult.from_json(job.result).message.split(':', 1)[-1].strip()}"
    return head


def wait_for_jobs(store: Store, job_ids: list[int], *, on_progress: Callable[[Job, str, int, int], None],
                  on_done: Callable[[int, IngestResult], None], poll_s: float = 0.3) -> None:
    """Wait until every job of ``job_ids`` is finished, running them in this process when no worker serves
    the store (a contained extractor, one index update for the run, the gate calibrated after it), else
    following the worker that does (and taking over if it stops). ``on_done(job_id, result)`` once per job,
    as each finishes; ``on_progress(job, stage, done, total)`` while they run."""
    mine = set(job_ids)
    told: set[int] = set()

    def check() -> bool:
        """Report the jobs finished since the last look; ``True`` when all of them are."""
        for jid in sorted(mine - told):
            job = store.jobs.get(jid)
            if job is None or not job.active:
                told.add(jid)
                on_done(jid, result_of(job) if job else IngestResult("", "?", IngestStatus.CANCELLED, job_id=jid))
            elif job.state == JobState.RUNNING:
                on_progress(job, job.stage or "", job.done, job.total)
        return told >= mine

    def ran(job: Job, r: IngestResult) -> None:
        if job.id in mine and job.id not in told:
            told.add(job.id)
            on_done(job.id, r)

    while not check():
        worker = Worker(store, after_batch=calibrate, on_progress=on_progress, on_result=ran,
                        batch_seconds=float("inf"))  # one index update for the run, as before the queue
        # told when searchable; run on until each job is finished (its sentence units may follow, issue 41)
        if worker.run(until=lambda: not any((j := store.jobs.get(i)) is not None and j.active for i in mine),
                      only=lambda: mine, wait_for_lock=False) == -1:
            time.sleep(poll_s)  # another worker runs them: follow it


# --------------------------------------------------------------------------- rag jobs


@click.group("jobs", invoke_without_command=True)
@_store_option
@collection_option
@click.option("--all", "show_all", is_flag=True, help="Also the finished jobs (done, cancelled) kept for 14 days.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_context
def jobs_cmd(ctx: click.Context, store_dir: str | None, collection: str | None, show_all: bool, as_json: bool) -> None:
    """List the store's indexing jobs: queued, running (stage, OCR page, ETA) and failed."""
    ctx.ensure_object(dict)
    ctx.obj.update(store_dir=store_dir, collection=collection)
    if ctx.invoked_subcommand is not None:
        return
    store = open_store(store_dir, collection)
    jobs = store.jobs.list(None if show_all else (*ACTIVE, JobState.FAILED))
    workers = store.jobs.workers()
    if as_json:
        click.echo(json.dumps({"store": str(store.path), "workers": [
            {"id": w.id, "pid": w.pid, "host": w.host, "started_at": w.started_at, "heartbeat": w.heartbeat,
             "job_id": w.job_id, "alive": w.alive} for w in workers], "jobs": [j.to_json() for j in jobs]},
            ensure_ascii=False, indent=2))
        return
    alive = [w for w in workers if w.alive]
    click.echo(f"store {store.path}: " + (", ".join(f"worker pid {w.pid} on {w.host}" for w in alive)
                                          if alive else "no worker running (start one: rag worker)"))
    counts = store.jobs.counts()
    click.echo(", ".join(f"{counts.get(s, 0)} {s}" for s in JobState))
    for j in jobs:
        click.echo(job_line(j))


def _ctx_store(ctx: click.Context):
    return open_store(ctx.obj.get("store_dir"), ctx.obj.get("collection"))


@jobs_cmd.command("cancel")
@click.argument("job_ids", nargs=-1, required=True, type=int, metavar="JOB...")
@click.pass_context
def cancel_cmd(ctx: click.Context, job_ids: tuple[int, ...]) -> None:
    """Cancel jobs: a queued file is not added; a running one stops at its next step."""
    store = _ctx_store(ctx)
    for jid in job_ids:
        job = store.cancel_job(jid)
        if job is None:
            raise StoreError(f"no job {jid}")
        click.echo(f"{jid}: " + ("cancelled" if job.state == JobState.CANCELLED
                                 else "stopping (the worker stops it at its next step)" if job.active
                                 else f"already {job.state}"))


@jobs_cmd.command("retry")
@click.argument("job_ids", nargs=-1, type=int, metavar="[JOB...]")
@click.option("--failed", "all_failed", is_flag=True, help="Every failed job a retry can help (transient faults).")
@click.option("--limit", "limit_s", type=click.IntRange(5, 86400), default=None, metavar="SECONDS",
              help="A larger time limit for these jobs: each step (a page, OCR of a page, chunking...) and the whole "
                   "file may take this long (for a file that failed by running out of time, or stopped its worker).")
@click.pass_context
def retry_cmd(ctx: click.Context, job_ids: tuple[int, ...], all_failed: bool, limit_s: int | None) -> None:
    """Queue failed jobs again (a worker runs them)."""
    store = _ctx_store(ctx)
    if not job_ids and not all_failed:
        raise click.UsageError("give JOB... or --failed")
    jobs = [store.jobs.get(j) for j in job_ids]
    if any(j is None for j in jobs):
        raise StoreError(f"no job {', '.join(str(i) for i, j in zip(job_ids, jobs) if j is None)}")
    if all_failed:
        latest = {j.doc_id: j for j in store.jobs.list((JobState.FAILED,))}
        jobs += [j for j in latest.values() if j.retryable]
    for job in jobs:
        doc = store.get_document(job.doc_id)
        if doc is None or doc.status != "failed":
            click.echo(f"{job.id}: nothing to retry ({job.name} is {doc.status if doc else 'gone'})")
            continue
        r = store.enqueue_retry(doc.id, limit_s)
        limit = f", with a limit of {limit_s} s per step" if limit_s else ""
        click.echo(f"{job.id}: {job.name} queued again as job {r.job_id}{limit}")


# --------------------------------------------------------------------------- rag worker / rag watch


def _on_sigterm(worker: Worker) -> None:
    def handler(signum, frame) -> None:
        worker.stop()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, handler)


@click.command("worker")
@_store_option
@collection_option
@click.option("--idle-exit", type=click.FloatRange(0), default=None, metavar="SECONDS",
              help="Stop after this long with nothing to do (default: run until Ctrl-C).")
@click.option("--exit-if-busy", is_flag=True, help="Leave at once when another worker serves the store.")
@click.option("--parent-pid", type=int, default=None, hidden=True,
              help="The app that started this worker (with --watch, the worker stays while it lives).")
@click.option("--watch", "watch_dirs", multiple=True, type=click.Path(file_okay=False),
              help="Also keep this folder in sync (repeatable; default: settings watch_dirs).")
def worker_cmd(store_dir: str | None, collection: str | None, idle_exit: float | None, exit_if_busy: bool,
               parent_pid: int | None, watch_dirs: tuple[str, ...]) -> None:
    """Run the store's worker: index queued files (extraction contained: memory and time limits)."""
    store = open_store(store_dir, collection, must_exist=False)
    lower_priority(store.settings.worker_nice)
    watch = [Path(d) for d in watch_dirs] or list(store.settings.watch_dirs)
    worker = Worker(store, after_batch=calibrate, idle_exit_s=idle_exit, parent_pid=parent_pid, watch=watch,
                    watchdog=True)
    _on_sigterm(worker)
    if not exit_if_busy:
        from rag.store.worker import worker_running

        if worker_running(store.path):
            click.echo(f"another worker serves {store.path}; waiting to take over (Ctrl-C to leave)", err=True)
    click.echo(f"worker pid {os.getpid()} on {store.path}" + (f", watching {', '.join(map(str, watch))}" if watch else ""),
               err=True)
    try:
        n = worker.run(wait_for_lock=not exit_if_busy)
    except KeyboardInterrupt:
        worker.stop()
        n = worker.jobs_run
    if n == -1:
        click.echo(f"another worker serves {store.path}; leaving", err=True)
        return
    click.echo(f"worker stopped after {n} job(s)", err=True)


@click.command("watch")
@_store_option
@collection_option
@click.argument("folders", nargs=-1, required=True, type=click.Path(file_okay=False))
def watch_cmd(store_dir: str | None, collection: str | None, folders: tuple[str, ...]) -> None:
    """Keep FOLDERS in sync with the store until Ctrl-C: new and changed files are indexed (a changed file
    replaces its earlier version), deleted ones leave, as with `ingest --sync`."""
    from rag.store.sync import FolderWatcher

    store = open_store(store_dir, collection, must_exist=False)

    def said(kind: str, path: Path, r: IngestResult | None) -> None:
        if kind == "removed":
            click.echo(f"removed    {path}")
        elif r is not None and r.status != IngestStatus.DUPLICATE:
            click.echo(r.message)

    def done(job: Job, r: IngestResult) -> None:
        click.echo(r.message)

    watcher = FolderWatcher(store, folders, on_change=said)
    watcher.start()
    worker = Worker(store, after_batch=calibrate, on_result=done)
    _on_sigterm(worker)
    click.echo(f"watching {', '.join(folders)} (Ctrl-C to stop)", err=True)
    try:
        worker.run(wait_for_lock=True)  # another worker already serving the store indexes what is queued
    except KeyboardInterrupt:
        worker.stop()
    finally:
        watcher.stop()
    sys.exit(0)
