"""The store's promises (DESIGN.md "What the store must promise"), on real small files: the fake embedder for the
plumbing, the real one where other processes index into the same store (slow)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rag.answer.pipeline import search_and_gate
from rag.errors import ModelMismatchError, StoreError
from rag.index.embed import DEFAULT_ENCODER, ENCODERS
from rag.settings import get_settings
from rag.store.store import Store, clean_name
from rag.store.worker import Worker
from rag.store.writer import RESUMES

ROOT = Path(__file__).resolve().parents[2]


def _md(title: str, n: int = 3) -> bytes:
    paras = "\n\n".join(f"Paragraph {i} of {title} talks about topic {title.lower()} number {i}." for i in range(n))
    return f"# {title}\n\n## Part\n\n{paras}\n".encode()


@pytest.fixture()
def store(tmp_path, fake_embedder):
    """A store opened as the app opens it (no embedder given: the encoder its settings name), with the fake's
    vectors, so it stamps the real encoder's name and the CLI could reopen it."""
    s = Store(tmp_path / "store", settings=get_settings(store=tmp_path / "store"))
    yield s
    s.close()


@pytest.fixture()
def real_store(tmp_path, embedder):
    """The same with the real encoder: other processes (which load it) index into it."""
    s = Store(tmp_path / "store", settings=get_settings(store=tmp_path / "store"), embedder=embedder)
    yield s
    s.close()


def _check_consistent(s: Store) -> None:
    """Every ready document's chunk count equals its rows; both indexes hold exactly the chunk rows."""
    report = s.check()
    assert report.ok, report.problems
    assert report.chunks == report.dense_ids == report.bm25_ids == s.chunk_count
    assert sum(report.documents.values()) == len(s.documents())


def test_ingest_markdown_offsets_and_metadata(store, cases_dir):
    r = store.ingest_path(cases_dir / "c14_long_paragraph_needle.md")
    assert r.status == "ready" and r.chunk_count > 0, r.message
    d = store.get_document(r.document_id)
    assert d.name == "c14_long_paragraph_needle.md" and d.status == "ready" and d.chunk_count == r.chunk_count
    assert d.embed_model == ENCODERS[DEFAULT_ENCODER].name and d.embed_dim == 384  # the stamp names the encoder
    assert d.pipeline_version and d.extractor_version and d.created_at and d.media_type.startswith("text/")
    canonical = store.canonical_text(d.id)
    for c in store.document_chunks(d.id):
        assert canonical[c.start:c.end] == c.content
    assert store.original_path(d.id).read_bytes() == (cases_dir / "c14_long_paragraph_needle.md").read_bytes()
    _check_consistent(store)


def test_pdf_chunks_have_pages(store, corpus_dir):
    r = store.ingest_path(corpus_dir / "pdfs" / "02-layoutparser-table-page.pdf")
    assert r.status == "ready", r.message
    assert store.get_document(r.document_id).pages == 1
    assert all(c.page == 1 for c in store.document_chunks(r.document_id))


def test_same_bytes_twice_is_a_noop_that_says_so(store):
    first = store.ingest_bytes(_md("Alpha"), "a.md")
    again = store.ingest_bytes(_md("Alpha"), "renamed.md")
    assert first.status == "ready" and again.status == "duplicate"
    assert "already indexed" in again.message and "same text as a.md" in again.message
    assert len(store.documents()) == 1 and store.chunk_count == first.chunk_count


def test_same_name_different_bytes_kept_both_are_two_documents_told_apart(store):
    from rag.answer.cite import citations

    a = store.ingest_bytes(_md("Alpha"), "notes.md")
    b = store.ingest_bytes(_md("Beta"), "notes.md", on_conflict="keep-both")  # the default replaces (issue 16)
    assert a.document_id != b.document_id and a.status == b.status == "ready"
    labels = {d.id: d.label for d in store.documents()}
    assert labels[a.document_id] != labels[b.document_id]
    assert labels[a.document_id] == f"notes.md ({a.document_id[:8]})"
    g = search_and_gate(store, "topic alpha beta paragraph", store.settings.with_overrides(threshold=2.0, max_sources=20))
    cites = citations(g, store)
    by_doc = {c.document_id: c.locator_label for c in cites}
    assert len(by_doc) == 2 and len(set(by_doc.values())) == 2


def test_hostile_names_never_write_outside(tmp_path, hash_embedder, cases_dir):
    manifest = json.loads((cases_dir / "c20_traversal_manifest.json").read_text())
    payload = (cases_dir / "c20_payload.md").read_bytes()
    root = tmp_path / "deep" / "a" / "b"
    s = Store(root / "store", embedder=hash_embedder)
    absolute = Path("/tmp/absolute_upload.md")
    before = absolute.stat().st_mtime_ns if absolute.exists() else None
    for i, up in enumerate(manifest["uploads"]):
        r = s.ingest_bytes(payload + f"\n\nvariant {i}\n".encode(), up["upload_name"])
        # "report.md\0.pdf" may be refused by extraction (text named .pdf): failed, kept, never outside
        assert r.status in ("ready", "failed"), r.message
        assert "/" not in r.name and "\\" not in r.name and "\x00" not in r.name
    assert (absolute.stat().st_mtime_ns if absolute.exists() else None) == before
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and (root / "store") not in p.parents]
    assert outside == []
    files = sorted(p.name for p in (root / "store" / "files").iterdir())
    assert len(files) == len(manifest["uploads"]) and all(len(n) == 64 and set(n) <= set("0123456789abcdef")
                                                          for n in files)
    assert {d.name for d in s.documents()} >= {"outside_upload.md", "absolute_upload.md", "escape.md"}
    s.close()


def test_clean_name():
    assert clean_name("../../x.md") == "x.md"
    assert clean_name("..\\..\\w.md") == "w.md"
    assert clean_name("report.md\x00.pdf") == "report.md.pdf"
    assert clean_name("..") == "unnamed" and clean_name("") == "unnamed"


def test_failed_document_visible_retryable_and_never_blocks(store, cases_dir):
    bad = store.ingest_path(cases_dir / "c08_encrypted_userpw.pdf")
    good = store.ingest_bytes(_md("Gamma"), "g.md")
    assert bad.status == "failed" and bad.reason and good.status == "ready"
    row = store.get_document(bad.document_id)
    assert row.status == "failed" and row.reason == bad.reason and row.chunk_count == 0
    again = store.retry(bad.document_id)
    assert again.status == "failed" and again.reason == bad.reason
    # a refused file says a retry cannot help, and "retry all failed" leaves it alone (issue 25)
    assert row.retryable is False and again.retryable is False
    assert store.retry_failed() == []
    with pytest.raises(StoreError, match="no document"):
        store.retry("f" * 64)
    _check_consistent(store)


def test_delete_removes_everything(store):
    a = store.ingest_bytes(_md("Alpha"), "a.md")
    b = store.ingest_bytes(_md("Beta"), "b.md")
    assert store.delete(a.document_id)
    assert store.get_document(a.document_id) is None
    assert not store.original_path(a.document_id).exists()
    assert store.chunk_count == b.chunk_count
    hits = store.search("alpha paragraph", k=20)
    assert hits and {c.document_id for c in store.chunks([h.chunk_id for h in hits])} == {b.document_id}
    assert store.delete(a.document_id) is False
    _check_consistent(store)
    # reopened: the persisted indexes agree
    s2 = Store(store.path)
    _check_consistent(s2)


def test_empty_store_answers_without_error(store):
    assert store.is_empty and store.search("anything at all", k=20) == []
    g = search_and_gate(store, "how do I renew my passport")
    assert g.refused and g.refusal == 'NO ANSWER: nothing under cosine distance 0.675 for "how do I renew my passport"'
    store.ingest_bytes(_md("Alpha", 1), "one.md")
    assert len(store.search("alpha", k=20)) == store.chunk_count  # fewer chunks than k: no padding
    assert store.search("the of and", k=5, mode="bm25") == []


def test_model_mismatch_refuses_and_lists_documents(store):
    store.ingest_bytes(_md("Alpha"), "alpha.md")

    class Other:
        name, dim = "some/other-model", 384

    class Wider:
        name, dim = store.model_name, 768

    for other in (Other(), Wider()):
        with pytest.raises(ModelMismatchError, match="alpha.md") as e:
            Store(store.path, embedder=other)
        assert e.value.stale == ["alpha.md"]
    Store(store.path).close()  # the right model still opens


def test_persistence_and_rebuild_from_sqlite(store):
    store.ingest_bytes(_md("Alpha"), "a.md")
    store.ingest_bytes(_md("Beta"), "b.md")
    want = [h.chunk_id for h in store.search("beta topic", k=5)]
    for p in (store.path / "index").iterdir():  # lose the index caches: rebuilt from SQLite
        import shutil

        shutil.rmtree(p) if p.is_dir() else p.unlink()
    s2 = Store(store.path)
    assert [h.chunk_id for h in s2.search("beta topic", k=5)] == want
    _check_consistent(s2)


def test_other_store_object_sees_changes(store):
    other = Store(store.path)
    assert other.search("delta", k=5) == []
    store.ingest_bytes(_md("Delta"), "d.md")
    hits = other.search("delta topic", k=5)
    assert hits and other.chunk(hits[0].chunk_id).document_name == "d.md"


_WORKER = textwrap.dedent("""
    import sys, time
    from rag.store.store import Store
    store_dir, mode, *names = sys.argv[1:]
    s = Store(store_dir)
    def progress(stage, done, total):
        if mode == "hang" and stage == "embed":
            print("EMBEDDING", flush=True)
            time.sleep(600)
    for n in names:
        body = "# " + n + "\\n\\n" + "\\n\\n".join(f"Sentence {i} about {n} and its subject {i}." for i in range(40))
        r = s.ingest_bytes(body.encode(), n + ".md", progress)
        print(r.status, n, flush=True)
""")


def _worker(store_dir: Path, mode: str, *names: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", _WORKER, str(store_dir), mode, *names], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


@pytest.mark.slow
def test_kill_9_mid_ingest_leaves_a_store_that_opens_answers_and_retries(real_store):
    store = real_store
    store.ingest_bytes(_md("Alpha"), "alpha.md")
    p = _worker(store.path, "hang", "victim")
    try:
        assert p.stdout.readline().strip() == "EMBEDDING"
        os.kill(p.pid, signal.SIGKILL)
    finally:
        p.wait(timeout=60)
    s2 = Store(store.path, embedder=store.embedder)
    victim = [d for d in s2.documents() if d.name == "victim.md"][0]
    # issue 25: its job is left, so it waits for a worker instead of failing
    assert victim.status == "queued" and victim.reason == RESUMES and victim.chunk_count == 0
    assert s2.search("alpha topic", k=5)
    _check_consistent(s2)
    Worker(s2, contained=False).run(until=lambda: not s2.jobs.active())
    done = s2.get_document(victim.id)
    assert done.status == "ready" and done.chunk_count > 0
    _check_consistent(s2)


@pytest.mark.slow
def test_two_processes_ingesting_at_once_do_not_corrupt(real_store):
    store = real_store
    p1 = _worker(store.path, "run", "north", "east", "south")
    p2 = _worker(store.path, "run", "west", "up", "down")
    out1, _ = p1.communicate(timeout=600)
    out2, _ = p2.communicate(timeout=600)
    assert p1.returncode == 0 and p2.returncode == 0
    assert (out1 + out2).split().count("ready") == 6
    s2 = Store(store.path, embedder=store.embedder)
    docs = s2.documents()
    assert len(docs) == 6 and all(d.status == "ready" for d in docs)
    _check_consistent(s2)
    for n in ("north", "west", "down"):
        hits = s2.search(f"sentence about {n}", k=3)
        assert s2.chunk(hits[0].chunk_id).document_name == f"{n}.md"
    # the process that loaded before the others wrote still sees the final state
    assert len(store.documents()) == 6 and len(store.search("sentence about up", k=200)) == s2.chunk_count


def test_check_reports_what_breaks_the_promises(tmp_path, hash_embedder):
    import sqlite3

    s = Store(tmp_path / "s", embedder=hash_embedder)
    r = s.ingest_bytes(_md("Alpha"), "a.md")
    report = s.check()
    assert report.ok and report.documents == {"ready": 1} and report.chunks == r.chunk_count
    assert report.generation == 2 and report.index_files and report.orphan_files == ()  # chunks, then units
    s.original_path(r.document_id).unlink()
    (s.path / "files" / ("0" * 64)).write_bytes(b"left over")
    db = sqlite3.connect(s.path / "store.sqlite3")  # a chunk written behind the store's back (no generation bump)
    db.execute('INSERT INTO chunks(doc_id, idx, text, content, section, start, "end", vector) '
               "SELECT doc_id, 99, text, content, section, start, \"end\", vector FROM chunks LIMIT 1")
    db.commit()
    report = s.check()
    assert not report.ok and report.orphan_files == ("0" * 64,)
    problems = "\n".join(report.problems)
    assert "1 chunk row(s) missing from the dense index" in problems
    assert "1 chunk row(s) missing from the BM25 index" in problems
    assert f"chunk_count {r.chunk_count} but {r.chunk_count + 1} chunk row(s)" in problems
    assert "the kept original" in problems and len(report.problems) == 4
    s.close()


def test_check_after_the_index_files_are_lost_rebuilds_and_writes_them_back(tmp_path, hash_embedder):
    import shutil

    s = Store(tmp_path / "s", embedder=hash_embedder)
    s.ingest_bytes(_md("Alpha"), "a.md")
    s.close()
    shutil.rmtree(tmp_path / "s" / "index")
    s2 = Store(tmp_path / "s", embedder=hash_embedder)
    report = s2.check()
    assert report.ok and report.index_files and report.dense_ids == report.chunks > 0
    assert sorted(p.name for p in (tmp_path / "s" / "index").iterdir()) == ["bm25.g2", "dense.g2.faiss"]
    s2.close()


def _tiny_pptx() -> bytes:
    import io

    import pptx

    deck = pptx.Presentation()
    for title, body in (("Yard rules", "Helmets are worn on the yard at all times."),
                        ("Speed", "The speed limit on the yard is 15 km/h.")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = body
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def test_chunk_locator_round_trips_through_the_store(tmp_path, hash_embedder):
    """Issue 17: each chunk's Locator is stored (chunks.locator, migration 2) and comes back with the chunk."""
    path = tmp_path / "store"
    with Store(path, settings=get_settings(store=path), embedder=hash_embedder) as s:
        r = s.ingest_bytes(_tiny_pptx(), "rules.pptx")
        assert r.status == "ready", r.message
        rows = s.document_chunks(r.document_id)
        assert [(c.locator.kind, c.locator.first) for c in rows] == [("slide", 1), ("slide", 2)]
        assert rows[1].locator.scope == "Speed" and rows[1].page is None
        assert s.canonical_text(r.document_id)[rows[1].start:rows[1].end] == rows[1].content
