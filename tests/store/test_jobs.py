"""The durable job queue and the worker (issue 25) on the fake embedder: accept, run, cancel, resume, retry."""

from __future__ import annotations

import threading
import time

import pytest

from rag.errors import StoreError
from rag.settings import get_settings
from rag.store.jobs import JobKind, JobState
from rag.store.store import Store
from rag.store.worker import Worker, worker_lock, worker_running


def _md(title: str, n: int = 3) -> bytes:
    paras = "\n\n".join(f"Paragraph {i} of {title} talks about topic {title.lower()} number {i}." for i in range(n))
    return f"# {title}\n\n## Part\n\n{paras}\n".encode()


@pytest.fixture()
def store(tmp_path, hash_embedder):
    s = Store(tmp_path / "store", settings=get_settings(store=tmp_path / "store"), embedder=hash_embedder)
    yield s
    s.close()


def _drain(store: Store, **kw) -> Worker:
    """Run an in-process worker (extraction here, not in a child: plumbing only) until the queue is empty."""
    w = Worker(store, contained=False, **kw)
    assert w.run(until=lambda: not store.jobs.active()) >= 0
    return w


def _clean(store: Store) -> None:
    report = store.check()
    assert report.ok, report.problems
    assert report.chunks == report.dense_ids == report.bm25_ids == store.chunk_count


def test_accepting_a_file_keeps_it_and_queues_a_job_without_indexing(store):
    r = store.enqueue_bytes(_md("Alpha"), "a.md")
    assert r.status == "queued" and r.job_id and r.chunk_count == 0
    doc = store.get_document(r.document_id)
    assert doc.status == "queued" and store.original_path(doc.id).read_bytes() == _md("Alpha")
    job = store.jobs.get(r.job_id)
    assert (job.state, job.kind, job.doc_id, job.name) == (JobState.QUEUED, JobKind.INGEST, doc.id, "a.md")
    assert store.chunk_count == 0 and store.search("alpha topic") == []
    again = store.enqueue_bytes(_md("Alpha"), "a.md")  # the same bytes again: the same job, not a second one
    assert again.status == "queued" and again.job_id == r.job_id and len(store.jobs.list()) == 1


def test_a_worker_indexes_the_queue_in_order_and_each_job_keeps_its_result(store):
    ids = [store.enqueue_bytes(_md(t), f"{t}.md").job_id for t in ("Alpha", "Beta", "Gamma")]
    seen = []
    w = _drain(store, on_result=lambda job, r: seen.append((job.id, r.status)))
    assert w.jobs_run == 3 and seen == [(i, "ready") for i in ids]
    for i in ids:
        job = store.jobs.get(i)
        assert job.state == JobState.DONE and job.result["status"] == "ready" and job.result["chunk_count"] > 0
        assert job.fraction == 1.0 and job.owner is None
    assert [d.status for d in store.documents()] == ["ready"] * 3
    hits = store.search("beta topic", k=3)
    assert store.chunk(hits[0].chunk_id).document_name == "Beta.md"
    _clean(store)
    assert store.jobs.workers() == []  # a clean stop leaves no worker row


def test_duplicates_and_same_name_need_no_job(store):
    store.enqueue_bytes(_md("Alpha"), "a.md")
    _drain(store)
    assert store.enqueue_bytes(_md("Alpha"), "other.md").status == "duplicate"
    assert store.enqueue_bytes(_md("Alpha2"), "a.md", on_conflict="ask").status == "exists"
    r = store.enqueue_bytes(_md("Alpha2"), "a.md")  # replace, by the worker
    _drain(store)
    job = store.jobs.get(r.job_id)
    assert job.result["status"] == "ready" and job.result["replaced_id"]
    assert [d.name for d in store.documents()] == ["a.md"] and store.documents()[0].versions == 1
    _clean(store)


def test_a_file_that_cannot_be_read_fails_not_retryable_and_a_fault_fails_retryable(store, monkeypatch):
    bad = store.enqueue_bytes(b"\x00\x01\x02binary" * 50, "x.bin")
    _drain(store)
    doc = store.get_document(bad.document_id)
    job = store.jobs.get(bad.job_id)
    assert doc.status == "failed" and doc.retryable is False and job.state == JobState.FAILED
    assert job.retryable is False and job.reason == doc.reason and "unsupported" in doc.reason
    calls = {"n": 0}
    real = store.embedder.encode

    def flaky(texts):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("disk full")
        return real(texts)

    monkeypatch.setattr(store.embedder, "encode", flaky)
    r = store.enqueue_bytes(_md("Delta"), "d.md")
    _drain(store)
    doc = store.get_document(r.document_id)
    assert doc.status == "failed" and doc.retryable is True and "OSError: disk full" in doc.reason
    # "retry all failed" retries only what a retry can help
    assert [x.status for x in store.retry_failed()] == ["ready"]
    assert store.get_document(bad.document_id).status == "failed"
    queued = store.enqueue_retry(bad.document_id)  # asked for by name, it is tried again (and fails again)
    assert store.jobs.get(queued.job_id).kind == JobKind.RETRY
    _drain(store)
    assert store.get_document(bad.document_id).status == "failed"
    _clean(store)


def test_cancel_a_queued_job_removes_the_file_and_a_running_one_stops(store):
    r = store.enqueue_bytes(_md("Alpha"), "a.md")
    job = store.cancel_job(r.job_id)
    assert job.state == JobState.CANCELLED and store.get_document(r.document_id) is None
    assert not store.original_path(r.document_id).exists()
    r2 = store.enqueue_bytes(_md("Beta", 400), "b.md")
    w = Worker(store, contained=False)
    started = threading.Event()

    def progress(job, stage, done, total):
        if stage == "embed" and done:
            started.set()
            time.sleep(0.05)

    w.on_progress = progress
    t = threading.Thread(target=w.run, kwargs={"until": lambda: not store.jobs.active()})
    t.start()
    assert started.wait(60)
    other = Store(store.path, embedder=store.embedder)  # the app, in another connection
    assert other.cancel_job(r2.job_id).cancel_requested
    t.join(60)
    assert store.jobs.get(r2.job_id).state == JobState.CANCELLED and store.get_document(r2.document_id) is None
    other.close()
    _clean(store)


def test_a_stopped_worker_puts_its_job_back_and_the_next_one_finishes_it(store):
    r = store.enqueue_bytes(_md("Beta", 400), "b.md")
    w = Worker(store, contained=False)
    w.on_progress = lambda job, stage, done, total: w.stop() if stage == "embed" and done else None
    w.run()
    job = store.jobs.get(r.job_id)
    assert job.state == JobState.QUEUED and job.attempts == 0 and store.get_document(r.document_id).status == "queued"
    _drain(store)
    assert store.get_document(r.document_id).status == "ready"
    _clean(store)


def test_a_job_left_running_by_a_dead_process_is_shown_queued_and_resumed(store):
    """What a SIGKILL leaves (the real kill is in tests/store/test_worker_processes.py): a running job whose
    document lock is free."""
    r = store.enqueue_bytes(_md("Alpha"), "a.md")
    store.jobs.take(r.job_id, "gone:1:x")
    store._db.execute("UPDATE documents SET status='indexing' WHERE id=?", (r.document_id,))
    s2 = Store(store.path, embedder=store.embedder)  # opening it, the reaper finds the lock free
    assert [d.status for d in s2.documents()] == ["queued"] and s2.jobs.get(r.job_id).state == JobState.QUEUED
    assert "starts again when a worker runs" in s2.documents()[0].reason
    _drain(s2)
    assert s2.get_document(r.document_id).status == "ready" and s2.jobs.get(r.job_id).attempts == 2
    _clean(s2)
    s2.close()


def test_a_job_that_stopped_its_worker_twice_fails_for_good_with_its_stage(store):
    """Issue 35: a file that kills, hangs or times out a worker twice is a poison pill: the next worker fails it
    with the stage it was in, and never takes it again on its own; a retry with a larger limit stays possible."""
    r = store.enqueue_bytes(_md("Alpha"), "a.md")
    for i in range(2):
        assert store.jobs.take(r.job_id, f"gone:{i}:x") is not None
        store.jobs.progress(r.job_id, f"gone:{i}:x", "chunk", 0, 1)
    assert store.jobs.take(r.job_id, "w") is None
    job = store.jobs.get(r.job_id)
    assert job.state == JobState.FAILED and job.retryable is False
    assert "stopped 2 times while cutting into chunks" in job.reason and "--limit" in job.reason
    assert store.get_document(r.document_id).status == "failed"
    assert store.jobs.candidates() == []
    again = store.enqueue_retry(r.document_id, limit_s=600)
    assert store.jobs.get(again.job_id).limit_s == 600


def test_an_idle_timeout_does_not_run_out_while_a_job_waits_for_its_document_lock(store):
    """A standby worker that takes over from a dead one may find a job's document lock still held (by the dead
    worker's extraction child, or an ingest in another process): it waits for it instead of idling out."""
    r = store.enqueue_bytes(_md("Alpha"), "a.md")
    held, release = threading.Event(), threading.Event()

    def hold():
        with store.locks.document(r.document_id) as got:
            assert got
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(5)
    w = Worker(store, contained=False, idle_exit_s=0.3)
    timer = threading.Timer(1.5, release.set)  # five idle timeouts later the lock is free
    timer.start()
    try:
        assert w.run() == 1
    finally:
        release.set()
        t.join()
        timer.cancel()
    assert store.get_document(r.document_id).status == "ready"


def test_one_worker_per_store(store):
    with worker_lock(store.path, wait=False) as got:
        assert got and worker_running(store.path)
        assert Worker(store, contained=False).run(wait_for_lock=False) == -1
    assert not worker_running(store.path)


def test_deleting_a_queued_document_cancels_its_job(store):
    r = store.enqueue_bytes(_md("Alpha"), "a.md")
    assert store.delete(r.document_id)
    assert store.jobs.get(r.job_id).state == JobState.CANCELLED
    _drain(store)
    assert store.documents() == []


def test_retry_of_an_unknown_or_fileless_document_says_so(store):
    with pytest.raises(StoreError, match="no document"):
        store.enqueue_retry("f" * 64)


def test_a_document_left_indexing_with_no_job_is_failed_interrupted(store):
    """A store written before the job table: a row left ``indexing`` by a dead process has no job to resume it."""
    from rag.store.writer import INTERRUPTED

    store._db.execute("INSERT INTO documents(id, name, size_bytes, status, embed_model, embed_dim, pipeline_version, "
                      "created_at, updated_at) VALUES (?, 'old.md', 1, 'indexing', 'm', 384, '1', 'x', 'x')", ("a" * 64,))
    (doc,) = store.documents()
    assert doc.status == "failed" and doc.reason == INTERRUPTED and doc.retryable is True


def test_a_heartbeat_after_the_commit_never_cancels_the_indexed_document(store):
    """Seen under load (issue 35's benchmark): the worker's heartbeat read its job just before the commit and beat
    just after it; the finished job was 'not owned' any more, taken for a lost lease, and the next progress report
    cancelled the job and dropped the document it had just indexed."""
    r = store.enqueue_bytes(_md("Alpha"), "a.md")
    _drain(store)
    beat = store.jobs.heartbeat(r.job_id, "whoever")
    assert beat.finished and not beat.owned and not beat.cancel
    assert store.jobs.get(r.job_id).state == JobState.DONE
    assert store.get_document(r.document_id).status == "ready"


def test_a_cancel_heard_after_the_commit_is_too_late_and_loses_nothing(store):
    from rag.errors import Cancelled

    r = store.enqueue_bytes(_md("Alpha"), "a.md")
    job = store.jobs.take(r.job_id, "me")

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "index" and done == total:
            raise Cancelled("a.md: cancelled")

    got = store.run_job(job, "me", progress)
    assert got.status == "ready" and store.get_document(r.document_id).status == "ready"
    assert store.jobs.get(r.job_id).state == JobState.DONE


def test_time_left_is_measured_from_the_embedding_rate_and_said_in_passages(store):
    """Issue 42: every file said "less than a minute left" (guessed from fixed stage weights) and counted "815
    pieces" while the result said "220 passages". Time left is told once embedding has a measured rate."""
    r = store.enqueue_bytes(_md("Gamma"), "c.md")
    job = store.jobs.take(r.job_id, "w:1:x")
    store.jobs.progress(job.id, "w:1:x", "extract", 0, 1)
    job = store.jobs.get(job.id)
    assert job.eta_s() is None and job.stage_at is not None  # reading: no rate to tell a time from yet
    store.jobs.progress(job.id, "w:1:x", "embed", 0, 800)
    began = store.jobs.get(job.id).stage_at
    store.jobs.progress(job.id, "w:1:x", "embed", 200, 800)
    job = store.jobs.get(job.id)
    assert job.stage_at == began  # the same stage: its start is kept
    # 200 of 800 texts in 30 s: 600 more take 90 s, whatever share the stage weights give reading
    assert job.eta_s(now=began + 30) == pytest.approx(90.0)
    assert job.stage_text() == "embedding its passages" and "pieces" not in job.stage_text()
    store.jobs.progress(job.id, "w:1:x", "embed", 10, 800)
    assert store.jobs.get(job.id).eta_s(now=began + 30) is None  # under 5 % done: no figure yet


def test_a_reader_s_own_bug_is_not_called_a_damaged_file_and_may_be_retried(store, monkeypatch):
    """A half-applied update (a new user's walk, 2026-12-07) made every ODF file "damaged ODT (NameError ...)",
    and "retry all failed" refused them: "a retry cannot help"."""
    from rag.errors import ExtractionError
    from rag.ingest import extract
    from rag.types import MediaType

    real = extract.READERS[MediaType.HTML.value]

    def broken(data, name, limits=None):
        try:
            raise NameError("name 'table_lines' is not defined")
        except NameError as e:
            raise ExtractionError(name, f"damaged HTML ({type(e).__name__}: {e})") from e

    monkeypatch.setitem(extract.READERS, MediaType.HTML.value, broken)
    page = b"<html><body><h1>Epsilon</h1>" + b"<p>The epsilon release ships on Friday with the new importer.</p>" * 5
    r = store.enqueue_bytes(page + b"</body></html>", "e.html")
    _drain(store)
    doc = store.get_document(r.document_id)
    assert doc.status == "failed" and doc.retryable is True
    assert "internal error in the reader (NameError), not a fault of the file" in doc.reason
    assert "damaged" not in doc.reason
    monkeypatch.setitem(extract.READERS, MediaType.HTML.value, real)
    assert [x.status for x in store.retry_failed()] == ["ready"]
