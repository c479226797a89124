"""``rag ingest --no-wait``, ``rag jobs``, ``rag worker`` (issue 25), in-process through click's runner with the
fake embedder; the worker's extraction runs in its contained child as in the app."""

from __future__ import annotations

import json

from click.testing import CliRunner

from rag.cli.main import main


def _run(*args):
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.output


def _files(folder):
    folder.mkdir()
    for i, topic in enumerate(("cranes", "badges", "drills")):
        (folder / f"{i}-{topic}.md").write_text(f"# {topic}\n\nEvery team checks the {topic} list before noon.\n")
    (folder / "empty.md").write_text("   \n")
    return sorted(folder.iterdir())


def test_no_wait_queues_then_the_worker_indexes_and_jobs_lists_each_state(tmp_path, fake_embedder):
    store = tmp_path / "store"
    files = _files(tmp_path / "in")
    code, out = _run("ingest", "--store", store, "--no-wait", "--json", tmp_path / "in")
    rows = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and [r["status"] for r in rows] == ["queued"] * 4 and all(r["job_id"] for r in rows)
    assert [r["name"] for r in rows] == [f.name for f in files]
    code, out = _run("jobs", "--store", store, "--json")
    listed = json.loads(out)
    assert code == 0 and [j["state"] for j in listed["jobs"]] == ["queued"] * 4 and listed["workers"] == []
    code, out = _run("worker", "--store", store, "--idle-exit", "0.5")
    assert code == 0
    code, out = _run("jobs", "--store", store, "--all")
    assert code == 0 and "0 queued, 0 running, 3 done, 1 failed, 0 cancelled" in out
    assert "empty.md: no text to index" in out or "empty.md: empty or blank" in out
    assert "(a retry cannot help)" in out
    code, out = _run("status", "--store", store, "--json")
    docs = {d["name"]: d for d in json.loads(out)["documents"]}
    assert [docs[f.name]["status"] for f in files if f.name != "empty.md"] == ["ready"] * 3
    assert docs["empty.md"]["status"] == "failed" and docs["empty.md"]["retryable"] is False


def test_ingest_waits_by_default_and_prints_what_it_printed_before(tmp_path, fake_embedder):
    store = tmp_path / "store"
    _files(tmp_path / "in")
    code, out = _run("ingest", "--store", store, tmp_path / "in")
    lines = out.splitlines()
    assert code == 1  # the empty file failed; the others are indexed
    assert [x.split()[0] for x in lines[:4]] == ["ready", "ready", "ready", "failed"]
    assert lines[-1].startswith("3 ok, 1 failed in")
    code, out = _run("ingest", "--store", store, "--json", tmp_path / "in")  # again: nothing new
    assert [json.loads(x)["status"] for x in out.splitlines()] == ["duplicate"] * 3 + ["failed"]


def test_cancel_a_queued_job_and_retry_only_what_can_help(tmp_path, fake_embedder):
    store = tmp_path / "store"
    _files(tmp_path / "in")
    code, out = _run("ingest", "--store", store, "--no-wait", "--json", tmp_path / "in")
    first = json.loads(out.splitlines()[0])
    code, out = _run("jobs", "--store", store, "cancel", first["job_id"])
    assert code == 0 and out.strip() == f"{first['job_id']}: cancelled"
    _run("worker", "--store", store, "--idle-exit", "0.5")
    code, out = _run("jobs", "--store", store, "retry", "--failed")
    assert code == 0 and "queued again" not in out  # the one failure is a blank file: a retry cannot help
    r = CliRunner().invoke(main, ["jobs", "--store", str(store), "cancel", "999"])
    assert r.exit_code == 1 and "no job 999" in r.output
    code, out = _run("status", "--store", store, "--json")
    assert first["name"] not in {d["name"] for d in json.loads(out)["documents"]}  # a cancelled file is not added


def test_the_worker_writes_each_ready_documents_overview_after_indexing(tmp_path, fake_embedder):
    """Issue 29: overviews are made after indexing by the worker (never delaying "ready"), not on first view."""
    from rag.answer.overview import KEPT_AS
    from rag.store import derived
    from rag.store.store import Store

    store = tmp_path / "store"
    _files(tmp_path / "in")
    code, _ = _run("ingest", "--store", store, tmp_path / "in")
    with Store(store) as s:
        ready = [d for d in s.documents() if d.status == "ready"]
        assert len(ready) == 3
        kept = [derived.read(s.path, d.id, KEPT_AS) for d in ready]
    assert all(kept) and all("list before noon" in k for k in kept), kept
