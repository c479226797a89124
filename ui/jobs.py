"""The app's side of the job queue (issue 25): start the worker for the user, and show its progress on every page.

* :func:`ensure_worker` - start ``rag worker`` for a store when none serves it (a separate process, in a
  session of its own, so a Streamlit restart neither stops it nor starts a second one: the worker's
  ``locks/worker.lock`` lets only one run; it stops by itself ``worker_idle_exit_s`` after its queue is
  empty, and the app starts it again when a file is added); :func:`resume_all` does it once per server
  process for every collection with work left (after a restart or a reboot);
* :func:`progress_panel` - the sidebar's "Indexing" box on every page: queued, running (file, stage, OCR
  page x of y, ETA) and failed, refreshed every :data:`REFRESH_S` seconds by a fragment, so no page has to
  stay open for indexing to go on.

What the panel says is built by pure functions (:func:`panel_lines`), tested without Streamlit.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import streamlit as st

from rag.store.jobs import Job, JobState
from rag.store.worker import worker_running
from rag.types import DocStatus
from ui import services
from ui.format import md_escape

#: Seconds between two refreshes of the progress panel while work is queued or running (idle: 4x longer).
REFRESH_S = 2.0

#: Seconds during which a worker just started is not started again (it takes a moment to hold its lock).
_SPAWN_GRACE_S = 20.0
_spawned: dict[str, tuple[float, subprocess.Popen]] = {}
_spawn_lock = threading.Lock()

ROOT = Path(__file__).resolve().parent.parent


def ensure_worker(store_path: Path) -> bool:
    """Start ``rag worker`` for the store at ``store_path`` unless one serves it; ``True`` when one was started.

    The worker's output goes to ``<store>/worker.log``. Cheap when one runs (one ``flock`` probe).
    """
    key = str(Path(store_path).resolve())
    with _spawn_lock:
        seen = _spawned.get(key)
        if seen is not None and seen[1].poll() is None and time.monotonic() - seen[0] < _SPAWN_GRACE_S:
            return False
        if worker_running(Path(key)):
            return False
        s = services.settings()
        log = open(Path(key) / "worker.log", "ab")
        cmd = [sys.executable, "-m", "rag", "worker", "--store", key, "--exit-if-busy",
               "--parent-pid", str(os.getpid())]
        if s.worker_idle_exit_s:
            cmd += ["--idle-exit", str(s.worker_idle_exit_s)]
        proc = subprocess.Popen(cmd, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        log.close()
        _spawned[key] = (time.monotonic(), proc)
        return True


@st.cache_resource(show_spinner=False)
def resume_all() -> int:
    """Once per server process: start a worker for every collection whose store has jobs left (queued, or
    interrupted by a stop of the machine). Returns how many were started."""
    started = 0
    for c in services.collections().list():
        try:
            store = services.store_at(c.path)
            if store.jobs.active():
                started += ensure_worker(store.path)
        except Exception:  # noqa: BLE001 - one unreadable collection must not stop the app
            continue
    return started


# --------------------------------------------------------------------------- what the panel says


def time_left(job: Job, now: float | None = None) -> str:
    """``" · about 3 min left"``, ``" · under a minute left"``, or ``""`` while the job has no measured rate
    (:meth:`rag.store.jobs.Job.eta_s`: issue 42, every file said "less than a minute left", guessed from fixed
    stage weights)."""
    seconds = job.eta_s(now)
    if seconds is None:
        return ""
    when = "under a minute" if seconds < 60 else f"about {round(seconds / 60)} min"
    if job.stage == "embed":  # issue 41: the document can be searched once its passages are in
        return f" · searchable in {when}"
    return f" · {when} left"


def left_text(jobs: list[Job]) -> str:
    """How many files are left, and how many of them can already be searched (a new user read "4 file(s) left"
    beside "5 ready" and could not tell which was true, 2026-12-06): ``"4 file(s) left (all searchable already;
    sentence search to follow)"``, ``"3 file(s) left (1 searchable already)"``, ``"2 file(s) left"``."""
    n, ready = len(jobs), sum(j.searchable for j in jobs)
    if ready and ready == n:
        return f"{n} file(s) left (all searchable already; sentence search to follow)"
    return f"{n} file(s) left ({ready} searchable already)" if ready else f"{n} file(s) left"


def panel_lines(jobs: list[Job], failed_docs: list[Any], worker_alive: bool, now: float | None = None, *,
                on_documents_page: bool = False) -> list[str]:
    """The panel's Markdown lines for the active ``jobs`` (queued and running, in order) and the failed
    documents (``DocumentRow``\\s): the running file with its stage and time left, the queued count and names,
    the names of the files that could not be indexed (why, Retry and Remove are on the Documents page: issue 42,
    their full reasons sat in this box on every page with no way to dismiss them). ``on_documents_page``: the
    page's own list shows each file's figures, so the box only points to it (the page and the box gave
    different figures for the same file). ``[]`` when there is nothing to say."""
    lines = []
    running = [j for j in jobs if j.state == JobState.RUNNING]
    queued = [j for j in jobs if j.state == JobState.QUEUED and not j.deferred]
    later = [j for j in jobs if j.deferred]  # searchable already; their sentence units wait (issue 41)
    if on_documents_page:
        if jobs:
            lines.append(f"{left_text(jobs)}: each one's progress is in the list on this page.")
    else:
        for j in running:
            lines.append(f"**{md_escape(j.name)}**: {j.stage_text()} · {j.fraction:.0%}{time_left(j, now)}")
        if queued:
            names = ", ".join(md_escape(j.name) for j in queued[:3]) + (f" and {len(queued) - 3} more"
                                                                         if len(queued) > 3 else "")
            lines.append(f"{len(queued)} queued: {names}")
        if later:
            lines.append(f"{len(later)} searchable, sentence search to follow: "
                         + ", ".join(md_escape(j.name) for j in later[:3]) + (" and more" if len(later) > 3 else ""))
    if jobs and not worker_alive:
        lines.append("Starting the indexing worker…")
    if failed_docs:
        names = ", ".join(f"**{md_escape(d.name)}**" for d in failed_docs[:3]) + (
            f" and {len(failed_docs) - 3} more" if len(failed_docs) > 3 else "")
        where = "see why on this page, or remove them" if on_documents_page else "why, retry or remove: Documents page"
        lines.append(f"Could not be indexed: {names} ({where})")
    return lines


def progress_panel(store: Any, *, on_documents_page: bool = False) -> None:
    """The sidebar's "Indexing" box (call inside ``with st.sidebar``); refreshes itself while work is left.

    ``on_documents_page``: the box points to that page's upload list instead of showing figures of its own
    (:func:`panel_lines`). Starts the worker when jobs wait and none runs.
    """
    resume_all()
    run_every = REFRESH_S if store.jobs.active() else REFRESH_S * 4

    @st.fragment(run_every=run_every)
    def panel() -> None:
        jobs = store.jobs.active()
        failed = [d for d in store.documents() if d.status == DocStatus.FAILED]
        alive = worker_running(store.path)
        if jobs and not alive:
            ensure_worker(store.path)
        lines = panel_lines(jobs, failed, alive, on_documents_page=on_documents_page)
        if lines:
            with st.container(border=True, key="indexing_panel"):
                st.markdown("**Indexing**" if jobs else "**Documents**")
                running = next((j for j in jobs if j.state == JobState.RUNNING), None)
                if running is not None and not on_documents_page:
                    st.progress(running.fraction)
                st.markdown("  \n".join(lines))
                if jobs:
                    st.caption("Indexing goes on in the background: you can use other pages or close this tab.")

    panel()
