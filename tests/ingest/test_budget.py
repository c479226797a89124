"""Every step of indexing one document is bounded (issue 35, item 2): a stuck step is stopped, an optional one
(role tagging, sentence units) is left out with a warning the user sees, a stuck reader or chunker fails its
file with the stage in the reason, and the next file is read at once."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from rag.errors import StageTimedOut
from rag.ingest import budget
from rag.ingest.contained import ContainedExtractor
from rag.ingest.extract import extract_bytes
from rag.ingest.read import text_stages
from rag.settings import ChunkingSettings

TEXT = b"# Notices\n\nThe widget ships in March.\n\nIt costs twelve euros. It weighs two kilos. It is blue."


TESTS = Path(__file__).resolve().parents[1]
CHUNKING = ChunkingSettings(512, 256, 64, True)


@pytest.fixture
def quick(monkeypatch):
    """Text stages may take 1 s here (the parent reads the budget; the child, which finds the runaway readers of
    ``tests/runaway.py`` on its path, runs the stages)."""
    monkeypatch.setenv("PYTHONPATH", str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setattr(budget, "TEXT_S", 1.0)
    monkeypatch.setattr(budget, "TEXT_PER_MCHAR_S", 0.0)


def test_allowances_grow_with_the_document_and_stop_at_the_ceiling():
    assert budget.allowance("start", size_bytes=50 * 2**20) > budget.allowance("start", size_bytes=1000)
    assert budget.allowance("chunk", chars=5_000_000) > budget.allowance("chunk", chars=1000)
    assert budget.allowance("embed", texts=10_000) > budget.allowance("embed", texts=10)
    b = budget.Budget(ceiling_s=5.0)
    b.renew("chunk", chars=10**9)
    assert b.at_ceiling and b.deadline - b.started == pytest.approx(5.0, abs=0.1)
    retry = budget.Budget(ceiling_s=600.0, floor_s=300.0)
    retry.renew("extract")
    assert retry.allowed_s == pytest.approx(300.0, abs=0.1)
    with pytest.raises(ValueError, match="unknown stage 'parse'; allowed: start, extract"):
        budget.allowance("parse")


def test_a_stuck_role_tagger_is_stopped_and_the_document_indexed_without_roles(quick):
    with ContainedExtractor(600, 120, target="runaway:behave") as ex:
        t0 = time.monotonic()
        got = ex.read(b"stuck roles\n" + TEXT, "notices.md", params=CHUNKING)
        assert time.monotonic() - t0 < 60
    assert got.skipped == ("roles",) and got.chunks
    assert any("tables of contents were not detected: the tagger ran out of time" in w for w in got.document.warnings)


def test_a_stuck_chunker_fails_its_file_with_the_stage_and_the_next_file_is_read(quick):
    with ContainedExtractor(600, 120, target="runaway:behave") as ex:
        with pytest.raises(StageTimedOut, match=r"chunking stopped after \d+ s \(a text of [\d,]+ characters\), "
                                                r"over its time limit of 1 s \(retry with a larger limit: "
                                                r"rag jobs retry --limit SECONDS\)") as info:
            ex.read(b"stuck chunk\n" + TEXT, "notices.md", params=CHUNKING)
        assert info.value.stage == "chunk" and info.value.limit == "extract_seconds"
        ok = ex.read(TEXT, "next.md", params=CHUNKING)
    assert ok.chunks and ok.document.name == "next.md" and not ok.skipped


def test_a_slow_optional_stage_in_this_process_is_left_out_with_a_warning(monkeypatch):
    """The inline path (no child to stop) relies on the stages' own deadlines."""
    import rag.ingest.read as read

    def slow_roles(doc, deadline=None):
        while True:
            deadline.check(0)
            time.sleep(0.01)

    monkeypatch.setattr(budget, "TEXT_S", 0.2)
    monkeypatch.setattr(read, "find_roles", slow_roles)
    doc = extract_bytes(TEXT, "notices.md")
    got = text_stages(doc, CHUNKING)
    assert got.skipped == ("roles",) and got.chunks
    assert any("the tagger ran out of time (after 0 s at character 0" in w for w in got.document.warnings)


def test_the_watchdog_ends_a_worker_process_stuck_past_its_budget():
    """The backstop for a call that never returns in the worker's own process (it fires while the call holds the
    GIL): the process exits with its traceback, the job is taken once more by the next worker, then failed."""
    code = textwrap.dedent("""
        import time, types
        from rag.store import worker as w
        w.WATCHDOG_MARGIN_S = 0.5
        job = types.SimpleNamespace(limit_s=None, size_bytes=0)
        self = types.SimpleNamespace(watchdog=True, extractor=None)
        w.COMMIT_S = 0.5
        w.Worker._arm(self, job, "index", 0)
        while True:
            pass
    """)
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and time.monotonic() - t0 < 100
    assert "Timeout" in p.stderr and "<string>" in p.stderr


def test_a_worker_stops_a_hung_step_fails_that_file_and_indexes_the_next(quick, tmp_path, hash_embedder):
    """Issue 35's symptom: one file hung indexing for good and nothing else moved. Here the first file's chunker
    never returns; the worker fails it with the stage in its reason and indexes the second at once."""
    from rag.settings import get_settings
    from rag.store.jobs import JobState
    from rag.store.store import Store
    from rag.store.worker import Worker

    store = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s"), embedder=hash_embedder)
    try:
        stuck = store.enqueue_bytes(b"stuck chunk\n" + TEXT, "stuck.md")
        fine = store.enqueue_bytes(TEXT + b" Fine.", "fine.md")
        w = Worker(store, extractor=ContainedExtractor(600, 120, target="runaway:behave"))
        assert w.run(until=lambda: not store.jobs.active()) == 2
        bad, good = store.jobs.get(stuck.job_id), store.jobs.get(fine.job_id)
        assert bad.state == JobState.FAILED and "chunking stopped after" in bad.reason and bad.retryable is False
        assert good.state == JobState.DONE, (good.state, good.reason, good.result)
        assert store.get_document(fine.document_id).status == "ready"
    finally:
        store.close()
