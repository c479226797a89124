"""Issue 41, Deliver 1: a document is searchable by its chunks first; its sentence units follow in the same job
(stage ``sentences``), durable like the rest of it: stopped, killed, cancelled or deleted in between, nothing is
lost and nothing is left over."""

from __future__ import annotations

import threading

from rag.settings import get_settings
from rag.store.jobs import JobState
from rag.store.store import Store
from rag.store.worker import Worker

# Paragraphs of several sentences about different things: a chunk's units rank it for one sentence's question.
DOC = ("# Office guide\n\n" + "\n\n".join(
    f"## Part {i}\n\nThe cafeteria {i} serves lunch from noon until two every weekday. "
    f"Visitors to wing {i} sign the register at the front desk before entering. "
    f"Bicycles of team {i} may be left in the locked shed behind building C overnight. "
    f"The printers on floor {i} need a badge to release a job." for i in range(12)) + "\n").encode()
QUESTIONS = ("where can I leave my bicycle overnight", "when is lunch served", "how do printers release a job")


def _units(s: Store) -> int:
    with s._locks.thread:
        return s._db.execute("SELECT COUNT(*) FROM chunk_units").fetchone()[0]


def _found(s: Store) -> list[list[str]]:
    return [[s.chunk(h.chunk_id).content for h in s.search(q, k=5)] for q in QUESTIONS]


def _store(path, emb, **kw) -> Store:
    return Store(path, settings=get_settings(store=path, **kw), embedder=emb)


def _stop_at_sentences(store: Store) -> Worker:
    """A worker stopped as it starts embedding the sentences: the chunks are committed, the job put back."""
    w = Worker(store, contained=False)
    w.on_progress = lambda job, stage, done, total: w.stop() if stage == "sentences" else None
    w.run()
    return w


def _drain(store: Store) -> Worker:
    w = Worker(store, contained=False)
    assert w.run(until=lambda: not store.jobs.active()) >= 0
    return w


def test_searchable_by_chunks_first_then_by_units_as_the_units_setting_is(tmp_path, hash_embedder):
    off = _store(tmp_path / "off", hash_embedder, unit_vectors=False)
    off.ingest_bytes(DOC, "guide.md")
    on = _store(tmp_path / "on", hash_embedder)
    on.ingest_bytes(DOC, "guide.md")  # the library call: chunks, then units, before it returns
    assert _units(off) == 0 < _units(on)
    s = _store(tmp_path / "s", hash_embedder)
    r = s.enqueue_bytes(DOC, "guide.md")
    _stop_at_sentences(s)
    job = s.jobs.get(r.job_id)
    assert s.get_document(r.document_id).status == "ready" and job.state == JobState.QUEUED  # put back
    assert _units(s) == 0 and _found(s) == _found(off)  # answerable now, as with units off
    assert _drain(s).jobs_run == 1
    job = s.jobs.get(r.job_id)
    assert job.state == JobState.DONE and job.result["status"] == "ready" and job.result["chunk_count"] > 0
    assert _units(s) == _units(on) and _found(s) == _found(on)  # refined: as if indexed in one go
    assert s.check().ok
    for x in (off, on, s):
        x.close()


def test_a_process_killed_between_the_chunks_and_the_units_leaves_a_job_the_next_worker_finishes(tmp_path,
                                                                                                hash_embedder):
    s = _store(tmp_path / "s", hash_embedder)

    class Killed(BaseException):
        pass

    def die(stage, done, total):
        if stage == "sentences":
            raise Killed

    try:
        s.ingest_bytes(DOC, "guide.md", die)
    except Killed:
        pass
    [doc] = s.documents()
    job = s.jobs.for_document(doc.id)
    assert doc.status == "ready" and job.state == JobState.RUNNING and _units(s) == 0  # what a SIGKILL leaves
    s2 = _store(tmp_path / "s", hash_embedder)
    assert [d.status for d in s2.documents()] == ["ready"]  # never shown as indexing or failed meanwhile
    assert _drain(s2).jobs_run == 1
    assert s2.jobs.get(job.id).state == JobState.DONE and _units(s2) > 0 and s2.check().ok
    s.close()
    s2.close()


def test_a_cancel_while_the_units_are_embedded_keeps_the_document_searchable(tmp_path, hash_embedder):
    s = _store(tmp_path / "s", hash_embedder, embed_batch_size=2)
    r = s.enqueue_bytes(DOC, "guide.md")
    w = Worker(s, contained=False)
    w.on_progress = lambda job, stage, done, total: s.jobs.request_cancel(job.id) if stage == "sentences" else None
    w.run(until=lambda: not s.jobs.active())
    job = s.jobs.get(r.job_id)
    assert job.state == JobState.CANCELLED and "stays searchable" in job.reason
    assert s.get_document(r.document_id).status == "ready" and _units(s) == 0 and _found(s)[0]
    assert s.check().ok
    s.close()


def test_deleting_a_document_while_its_units_are_embedded_leaves_no_units_behind(tmp_path, hash_embedder):
    s = _store(tmp_path / "s", hash_embedder, embed_batch_size=2)
    r = s.enqueue_bytes(DOC, "guide.md")
    deleted: list[bool] = []
    started = threading.Event()

    def delete_once(job, stage, done, total):
        if stage == "sentences" and not started.is_set():
            started.set()
            t = threading.Thread(target=lambda: deleted.append(s.delete(r.document_id)))
            t.start()

    w = Worker(s, contained=False, on_progress=delete_once)
    w.run(until=lambda: not s.jobs.active() and bool(deleted))
    assert started.is_set() and deleted == [True] and s.get_document(r.document_id) is None
    assert s.chunk_count == 0 and _units(s) == 0 and not s.jobs.active()
    assert s.check().ok
    s.close()


def test_a_stopped_units_stage_resumed_with_units_off_writes_none(tmp_path, hash_embedder):
    s = _store(tmp_path / "s", hash_embedder)
    r = s.enqueue_bytes(DOC, "guide.md")
    _stop_at_sentences(s)
    s2 = _store(tmp_path / "s", hash_embedder, unit_vectors=False)
    _drain(s2)
    assert s2.jobs.get(r.job_id).state == JobState.DONE and _units(s2) == 0
    assert s2.get_document(r.document_id).status == "ready"
    s.close()
    s2.close()


def test_a_queue_of_files_makes_every_file_searchable_before_any_file_s_sentence_units(tmp_path, hash_embedder):
    """Issue 41: three files dropped at once; the worker ran each file's units before the next file's chunks, so
    the last file was searchable only after the others' units. Now every file's chunks come first, each job's
    units follow (put back in the queue, shown as searchable), and each job ends once, done, with its units."""
    s = _store(tmp_path / "s", hash_embedder)
    docs = [DOC.replace(b"Office guide", f"Office guide {n}".encode()).replace(b"cafeteria", f"canteen{n}".encode())
            for n in range(3)]
    got = [s.enqueue_bytes(d, f"guide{n}.md") for n, d in enumerate(docs)]
    order: list[tuple[str, str]] = []
    seen: list[tuple[str, str, float]] = []
    w = Worker(s, contained=False)

    def note(job, stage, done, total):
        if stage in ("index", "sentences") and (job.name, stage) not in order:
            order.append((job.name, stage))
            if stage == "sentences":  # while one file's units run, the others wait as searchable
                seen.extend((j.name, j.stage_text(), j.fraction) for j in s.jobs.active() if j.deferred)

    w.on_progress = note
    told = []
    w.on_result = lambda job, r: told.append((job.name, r.status))
    assert w.run(until=lambda: not s.jobs.active()) >= 0
    # the last file has nobody behind it: its units follow its chunks at once; then the others', oldest first
    assert order == [("guide0.md", "index"), ("guide1.md", "index"), ("guide2.md", "index"),
                     ("guide2.md", "sentences"), ("guide0.md", "sentences"), ("guide1.md", "sentences")]
    assert ("guide1.md", "searchable; sentence search after the files ahead of it", 0.62) in seen
    # one outcome per file, told when it is searchable, in the queue's order
    assert told == [(f"guide{n}.md", "ready") for n in range(3)] and w.jobs_run == 3
    for r in got:
        job = s.jobs.get(r.job_id)
        assert job.state == JobState.DONE and job.attempts == 1 and job.result["status"] == "ready"
    with s._locks.thread:
        per_doc = dict(s._db.execute("SELECT c.doc_id, COUNT(*) FROM chunk_units u JOIN chunks c ON c.id = u.chunk_id "
                                     "GROUP BY c.doc_id").fetchall())
    assert sorted(per_doc) == sorted(r.document_id for r in got) and min(per_doc.values()) > 0
    assert s.check().ok
    s.close()


def test_a_file_alone_in_the_queue_embeds_its_units_in_the_same_take(tmp_path, hash_embedder):
    s = _store(tmp_path / "s", hash_embedder)
    r = s.enqueue_bytes(DOC, "guide.md")
    stages = []
    w = Worker(s, contained=False)
    w.on_progress = lambda job, stage, done, total: stages.append(stage)
    assert w.run(until=lambda: not s.jobs.active()) >= 0
    assert "sentences" in stages and s.jobs.get(r.job_id).attempts == 1 and _units(s) > 0
    s.close()


def test_a_version_replaced_while_its_units_wait_ends_their_job_instead_of_failing_it(tmp_path, hash_embedder):
    s = _store(tmp_path / "s", hash_embedder)
    old = s.enqueue_bytes(DOC, "guide.md")
    s.enqueue_bytes(DOC.replace(b"Office guide", b"Visitor guide"), "other.md")
    w = Worker(s, contained=False)
    w.on_progress = lambda job, stage, done, total: w.stop() if job.name == "other.md" else None
    w.run()  # guide.md searchable, its units put back; stopped as other.md starts
    assert s.jobs.get(old.job_id).deferred
    new = s.enqueue_bytes(DOC.replace(b"cafeteria", b"canteen"), "guide.md")  # a new version, same name
    _drain(s)
    gone = s.jobs.get(old.job_id)
    assert gone.state == JobState.DONE and "replaced" in gone.reason
    assert sorted(d.name for d in s.documents()) == ["guide.md", "other.md"] and all(d.status == "ready" for d in s.documents())
    assert s.get_document(new.document_id).status == "ready" and s.check().ok
    s.close()


def test_a_heartbeat_of_the_take_that_put_a_job_back_does_not_cancel_its_next_take(tmp_path, hash_embedder):
    """Found by tests/store/test_worker_processes.py under load: the heartbeat thread read the running take,
    the loop put the job back for its sentence units (no longer owned) and went on; the beat then found the job
    not owned and noted it cancelled, and the worker's next take of that job, for its units, ended cancelled.
    Here the beat of the first take of guide.md lands while other.md runs."""
    s = _store(tmp_path / "s", hash_embedder)
    first = s.enqueue_bytes(DOC, "guide.md")
    s.enqueue_bytes(DOC.replace(b"Office guide", b"Visitor guide").replace(b"cafeteria", b"canteen"), "other.md")
    w = Worker(s, contained=False)
    takes = []

    def note(job, stage, done, total):
        if not any(t is job for t in takes):
            takes.append(job)
        if job.name == "other.md" and stage == "read":
            assert s.jobs.get(first.job_id).deferred  # put back, not owned by anyone
            w._beat(takes[0])  # what the heartbeat thread started while guide.md's first take ran

    w.on_progress = note
    assert w.run(until=lambda: not s.jobs.active()) >= 0
    assert [t.name for t in takes] == ["guide.md", "other.md", "guide.md"]
    job = s.jobs.get(first.job_id)
    assert job.state == JobState.DONE and job.result["status"] == "ready", (job.state, job.reason)
    assert _units(s) > 0 and s.check().ok
    s.close()


def test_a_worker_process_lowers_its_priority_and_never_raises_it():
    """Issue 41: ``rag worker`` runs at settings ``worker_nice`` (default 10) so the app's searches take the cores
    first; asked for less than it has, it keeps what it has (run in a child: the test process keeps its own)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    code = ("import os; from rag.store.worker import lower_priority; from rag.settings import get_settings; "
            "n = get_settings().worker_nice; print(os.nice(0), n, lower_priority(n), lower_priority(3), os.nice(0))")
    for env_nice, want in ((None, 10), ("4", 4), ("0", 0)):
        env = {k: v for k, v in os.environ.items() if k != "RAG_WORKER_NICE"}
        if env_nice is not None:
            env["RAG_WORKER_NICE"] = env_nice
        base, n, got, again, now = map(int, subprocess.run(
            [sys.executable, "-c", code], env={**env, "PYTHONPATH": root}, capture_output=True, text=True,
            timeout=60, check=True).stdout.split())
        assert n == want and got == max(base, want) and again == now == max(base, want, 3), (env_nice, got, now)
