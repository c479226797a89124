"""Issue 25's done-when on real processes: a worker killed with SIGKILL in the middle of a document, two
workers on one store, and (issue 26 item 2) a bomb that fails alone while another document indexes.

The workers are separate Python processes running :class:`rag.store.worker.Worker` on the fake embedder
(the queue's plumbing is under test, not the model); extraction is contained in a child process as in the app.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from rag.ingest.contained import rss_mb
from rag.settings import get_settings
from rag.store.jobs import JobState
from rag.store.store import Store
from rag.store.worker import Worker
from rag.store.writer import RESUMES

ROOT = Path(__file__).resolve().parents[2]

#: A worker process: the store at argv[1]; with argv[2] == "hang-on NAME" it stops (sleeps) while embedding
#: the document NAME, after printing "EMBEDDING NAME"; it prints "DONE name" per job and "RUN pid" at start.
#: argv[5] > 0: it stops once that many jobs of the store are done (else only after ``idle_exit`` with nothing to do).
_WORKER = textwrap.dedent("""
    import sys, time, os
    sys.path.insert(0, os.path.join(sys.argv[3], "tests"))
    from fakes import HashEmbedder
    from rag.store.store import Store
    from rag.settings import get_settings
    from rag.store.jobs import JobState
    from rag.store.worker import Worker
    store_dir, mode, stop_after = sys.argv[1], sys.argv[2], int(sys.argv[5])
    s = Store(store_dir, settings=get_settings(store=store_dir), embedder=HashEmbedder())
    def progress(job, stage, done, total):
        if mode == "hang-on " + job.name and stage == "embed" and done:
            print("EMBEDDING", job.name, flush=True)
            time.sleep(600)
        if mode == "slow" and stage == "embed":
            time.sleep(0.3)
    print("RUN", os.getpid(), flush=True)
    w = Worker(s, on_progress=progress, on_result=lambda job, r: print("DONE", r.name, r.status, flush=True),
               idle_exit_s=float(sys.argv[4]))
    done = lambda: sum(j.state == JobState.DONE for j in s.jobs.list()) >= stop_after
    w.run(until=done if stop_after > 0 else None)
    print("EXIT", w.jobs_run, flush=True)
""")


def _worker(store_dir: Path, mode: str = "run", idle_exit: float = 3.0, stop_after: int = 0) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", _WORKER, str(store_dir), mode, str(ROOT), str(idle_exit), str(stop_after)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _md(title: str, n: int = 60) -> bytes:
    paras = "\n\n".join(f"Paragraph {i} of {title} talks about topic {title.lower()} number {i}." for i in range(n))
    return f"# {title}\n\n## Part\n\n{paras}\n".encode()


@pytest.fixture()
def store(tmp_path, hash_embedder):
    s = Store(tmp_path / "store", settings=get_settings(store=tmp_path / "store"), embedder=hash_embedder)
    yield s
    s.close()


def _every_document_ready_once(s: Store, names: list[str]) -> None:
    docs = s.documents()
    assert sorted(d.name for d in docs) == sorted(names)  # each once: no duplicate row, none lost
    assert all(d.status == "ready" for d in docs), [(d.name, d.status, d.reason) for d in docs]
    report = s.check()
    assert report.ok, report.problems
    assert report.chunks == report.dense_ids == report.bm25_ids == sum(d.chunk_count for d in docs)
    for n in names:  # each document's chunks are there once: its own search finds it first
        hits = s.search(f"topic {n.removesuffix('.md').lower()} number 7", k=3)
        assert s.chunk(hits[0].chunk_id).document_name == n


def test_sigkill_in_the_middle_of_a_document_then_restart_every_document_ready_once(store):
    names = [f"{t}.md" for t in ("alpha", "beta", "gamma", "delta")]
    for n in names:
        assert store.enqueue_bytes(_md(n.removesuffix(".md")), n).status == "queued"
    p = _worker(store.path, "hang-on gamma.md")
    try:
        lines = []
        while True:
            line = p.stdout.readline().strip()
            assert line, f"the worker ended early: {lines}"
            lines.append(line)
            if line.startswith("EMBEDDING"):
                break
        os.kill(p.pid, signal.SIGKILL)
    finally:
        p.wait(timeout=60)
    assert "DONE alpha.md ready" in lines and "DONE beta.md ready" in lines
    s2 = Store(store.path, embedder=store.embedder)  # the app or the CLI opening the store after the crash
    gamma = next(d for d in s2.documents() if d.name == "gamma.md")
    assert gamma.status == "queued" and gamma.reason == RESUMES and gamma.chunk_count == 0
    assert s2.check().ok  # nothing of gamma was written: its rows come in one transaction
    p = _worker(store.path, idle_exit=1.0)  # the worker starts again
    out, _ = p.communicate(timeout=300)
    assert p.returncode == 0 and "DONE gamma.md ready" in out and "DONE delta.md ready" in out, out
    _every_document_ready_once(s2, names)
    jobs = {j.name: j for j in s2.jobs.list()}
    assert all(j.state == JobState.DONE for j in jobs.values()) and jobs["gamma.md"].attempts == 2
    s2.close()


def test_two_workers_on_one_store_index_each_file_once_and_the_second_takes_over(store):
    names = [f"doc{i}.md" for i in range(6)]
    # idle_exit is a safety net while the jobs are being queued; each stops once all six are done
    first = _worker(store.path, "slow", idle_exit=10.0, stop_after=len(names))
    assert first.stdout.readline().startswith("RUN")
    second = _worker(store.path, "slow", idle_exit=10.0, stop_after=len(names))
    assert second.stdout.readline().startswith("RUN")
    time.sleep(1.0)
    for n in names:
        store.enqueue_bytes(_md(n.removesuffix(".md"), 120), n)
    # the one holding the store indexes; the other waits; kill the active one in the middle of the queue: once
    # two files are searchable (their jobs end only after every file's chunks, issue 41) while a job still runs
    deadline = time.monotonic() + 120
    while True:
        assert time.monotonic() < deadline, [(j.name, j.state) for j in store.jobs.list()]
        running = [w for w in store.jobs.workers() if w.alive and w.job_id is not None]
        if len([d for d in store.documents() if d.status == "ready"]) >= 2 and running:
            break
        time.sleep(0.1)
    running = running[0]
    assert running.pid in (first.pid, second.pid)
    victim, standby = (first, second) if running.pid == first.pid else (second, first)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait(timeout=60)
    out, _ = standby.communicate(timeout=300)
    assert standby.returncode == 0, out
    s2 = Store(store.path, embedder=store.embedder)
    _every_document_ready_once(s2, names)
    jobs = s2.jobs.list()
    assert len(jobs) == 6 and all(j.state == JobState.DONE for j in jobs)
    assert sum(j.attempts for j in jobs) <= 7  # at most the one killed mid-document was taken twice
    s2.close()


def test_a_bomb_fails_alone_while_another_document_indexes_and_the_worker_stays_small(store, tmp_path):
    """A TIFF of many large frames (decoded: GBs) queued before a normal file: the bomb fails with a reason
    naming the limit it hit and cannot be retried; the other file is ready; this process (the worker's) grew
    by little while the child read the bomb."""
    sys.path.insert(0, str(ROOT / "tests" / "ingest"))
    from test_contained import _frames_tiff

    bomb = _frames_tiff(12, 6000)
    store.settings.extract_memory_mb = 600
    store.settings.extract_seconds = 120
    rb = store.enqueue_bytes(bomb, "frames.tiff")
    rg = store.enqueue_bytes(_md("gamma"), "gamma.md")
    before = rss_mb(os.getpid())
    peak = {"mb": before}
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.05):
            peak["mb"] = max(peak["mb"], rss_mb(os.getpid()) or 0)

    t = threading.Thread(target=watch)
    t.start()
    t0 = time.monotonic()
    try:
        Worker(store).run(until=lambda: not store.jobs.active())
    finally:
        stop.set()
        t.join()
    took = time.monotonic() - t0
    bad, good = store.get_document(rb.document_id), store.get_document(rg.document_id)
    assert good.status == "ready" and good.chunk_count > 0
    assert bad.status == "failed" and bad.retryable is False, bad
    assert "limit" in bad.reason or "pixels" in bad.reason or "frames" in bad.reason, bad.reason
    assert store.jobs.get(rb.job_id).state == JobState.FAILED
    assert peak["mb"] - before < 150, (before, peak)  # the decoded frames never entered this process
    assert took < 120
    assert store.retry_failed() == []  # a limit hit is not retried by "retry all failed"
    assert store.check().ok
