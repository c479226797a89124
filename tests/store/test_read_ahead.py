"""Issue 41 item 3: a worker reads the next queued file in a second contained child while the current one embeds
(:mod:`rag.store.read_ahead`). The reads ahead are real (child processes, the real readers or the runaway test
readers of ``tests/runaway.py``); the embedder is the fake one (the queue's plumbing is under test)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rag.ingest.contained import ContainedExtractor
from rag.settings import get_settings
from rag.store.jobs import JobState
from rag.store.store import Store
from rag.store.worker import Worker

TESTS = Path(__file__).resolve().parents[1]


def _md(title: str, n: int = 40) -> bytes:
    paras = "\n\n".join(f"Paragraph {i} of {title} talks about topic {title.lower()} number {i}." for i in range(n))
    return f"# {title}\n\n## Part\n\n{paras}\n".encode()


def _store(path: Path, embedder, **settings) -> Store:
    s = get_settings(store=path)
    settings.setdefault("read_ahead", True)  # off by default (docs/performance.md); these tests are about it on
    for k, v in settings.items():
        setattr(s, k, v)
    return Store(path, settings=s, embedder=embedder)


def _chunks(store: Store) -> dict[str, list[tuple]]:
    out = {}
    for d in store.documents():
        out[d.name] = [(c.start, c.end, c.text) for c in store.document_chunks(d.id)]
    return out


@pytest.fixture
def runaway_path(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_the_next_file_is_read_while_the_current_one_embeds_and_indexes_the_same(tmp_path, hash_embedder):
    names = ["alpha.md", "beta.md", "gamma.md"]
    got = {}
    for ahead in (False, True):
        store = _store(tmp_path / f"s{ahead}", hash_embedder, read_ahead=ahead)
        for n in names:
            store.enqueue_bytes(_md(n.removesuffix(".md")), n)
        started_at_embed: dict[str, int] = {}
        box: dict[str, Worker] = {}

        def progress(job, stage, done, total, seen=started_at_embed, box=box):
            if stage == "embed" and job.name not in seen:
                ahead = box["w"].read_ahead
                seen[job.name] = ahead.started if ahead else 0

        w = box["w"] = Worker(store, on_progress=progress)
        w.run(until=lambda store=store: not store.jobs.active())
        assert all(j.state == JobState.DONE for j in store.jobs.list())
        got[ahead] = _chunks(store)
        if ahead:
            # the second and third files were read ahead, each begun before the file in front of it embedded
            assert (w.read_ahead.started, w.read_ahead.used, w.read_ahead.dropped) == (2, 2, 0)
            assert started_at_embed == {"alpha.md": 1, "beta.md": 2, "gamma.md": 2}
        else:
            assert w.read_ahead is None
        assert store.check().ok
        store.close()
    assert got[True] == got[False] and set(got[True]) == set(names)  # the same chunks, offsets and texts


def test_a_read_ahead_that_runs_out_of_memory_is_dropped_and_its_job_reads_the_file_alone(tmp_path, hash_embedder,
                                                                                      runaway_path):
    """The second child has half the memory limit: a file needing more fails there, and its job reads it again
    with the whole limit (only a success of a read ahead is used)."""
    store = _store(tmp_path / "s", hash_embedder)
    store.enqueue_bytes(_md("alpha"), "alpha.md")
    eater = store.enqueue_bytes(b"eat 368\n", "eater.md")  # 368 MiB more than the child's own: over 400, under 800
    w = Worker(store, extractor=ContainedExtractor(800, 60, target="runaway:behave"))
    w.run(until=lambda: not store.jobs.active())
    doc = store.get_document(eater.document_id)
    assert doc.status == "ready", doc.reason
    assert (w.read_ahead.started, w.read_ahead.used, w.read_ahead.dropped) == (1, 0, 1)
    store.close()


def test_a_read_ahead_made_for_other_limits_is_not_used(tmp_path, hash_embedder):
    """A setting changed between the read ahead and the job's own read: the job reads its file again."""
    store = _store(tmp_path / "s", hash_embedder)
    store.enqueue_bytes(_md("alpha"), "alpha.md")
    beta = store.enqueue_bytes(_md("beta"), "beta.md")

    def progress(job, stage, done, total):
        if job.name == "alpha.md" and stage == "index":
            store.settings.max_pages = store.settings.max_pages - 1  # a reader limit: another request

    w = Worker(store, on_progress=progress)
    w.run(until=lambda: not store.jobs.active())
    assert store.get_document(beta.document_id).status == "ready"
    assert (w.read_ahead.started, w.read_ahead.used, w.read_ahead.dropped) == (1, 0, 1)
    store.close()


def test_a_queued_file_cancelled_while_it_is_read_ahead_is_never_indexed(tmp_path, hash_embedder, runaway_path):
    store = _store(tmp_path / "s", hash_embedder)
    store.enqueue_bytes(_md("alpha"), "alpha.md")
    slow = store.enqueue_bytes(b"sleep\n", "slow.md")  # its reader never returns
    store.enqueue_bytes(_md("gamma"), "gamma.md")

    def progress(job, stage, done, total):
        if job.name == "alpha.md" and stage == "index" and done:
            assert w.read_ahead.started == 1
            store.cancel_job(slow.job_id)

    w = Worker(store, on_progress=progress, extractor=ContainedExtractor(800, 60, target="runaway:behave"))
    w.run(until=lambda: not store.jobs.active())
    assert store.jobs.get(slow.job_id).state == JobState.CANCELLED
    assert store.get_document(slow.document_id) is None
    assert sorted(d.name for d in store.documents()) == ["alpha.md", "gamma.md"]
    assert all(d.status == "ready" for d in store.documents())
    assert (w.read_ahead.started, w.read_ahead.used, w.read_ahead.dropped) == (1, 0, 1)  # stopped for gamma's read
    store.close()
