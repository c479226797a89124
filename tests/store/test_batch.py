"""Batch ingest (issue 18): a folder or a multi-file upload updates FAISS and BM25 once, and ends consistent."""

from __future__ import annotations

import numpy as np
import pytest

from rag.settings import get_settings
from rag.store.cache import IndexDelta
from rag.store.store import Store


def _md(title: str, n: int = 4) -> bytes:
    paras = "\n\n".join(f"Paragraph {i} of {title} is about {title.lower()} topic {i}." for i in range(n))
    return f"# {title}\n\n{paras}\n".encode()


@pytest.fixture()
def store(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s"), embedder=hash_embedder)
    yield s
    s.close()


def _count_index_updates(store, monkeypatch) -> list[int]:
    calls = []
    real = store.index_cache._apply

    def counting(old, gen, delta):
        calls.append(gen)
        return real(old, gen, delta)

    monkeypatch.setattr(store.index_cache, "_apply", counting)
    return calls


def test_a_folder_is_indexed_with_one_index_update(store, tmp_path, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("alpha", "beta", "gamma", "delta"):
        (folder / f"{name}.md").write_bytes(_md(name.title()))
    (folder / "empty.md").write_bytes(b"   \n")
    updates = _count_index_updates(store, monkeypatch)
    seen = []
    results = store.ingest_paths(sorted(folder.iterdir()), on_result=lambda p, r: seen.append((p.name, r.status)))
    assert [r.status for r in results].count("ready") == 4 and len(seen) == 5
    assert dict(seen)["empty.md"] == "failed"
    assert len(updates) == 1  # four documents, one FAISS + BM25 update
    report = store.check()
    assert report.ok, report.problems
    assert report.chunks == report.dense_ids == report.bm25_ids == store.chunk_count > 0
    hits = store.search("gamma topic", k=3)
    assert store.chunk(hits[0].chunk_id).document_name == "gamma.md"


def test_searches_during_a_batch_see_the_store_as_it_was(store):
    store.ingest_bytes(_md("Before"), "before.md")
    with store.batch():
        store.ingest_bytes(_md("During"), "during.md")
        names = {store.chunk(h.chunk_id).document_name for h in store.search("during topic", k=20)}
        assert "during.md" not in names
    names = {store.chunk(h.chunk_id).document_name for h in store.search("during topic", k=20)}
    assert "during.md" in names
    assert store.check().ok


def test_another_writer_inside_a_batch_means_a_rebuild_that_holds_everything(tmp_path, hash_embedder):
    path = tmp_path / "s"
    a = Store(path, settings=get_settings(store=path), embedder=hash_embedder)
    b = Store(path, settings=get_settings(store=path), embedder=hash_embedder)
    with a.batch():
        a.ingest_bytes(_md("One"), "one.md")
        b.ingest_bytes(_md("Two"), "two.md")  # another process's write between two of the batch's own
        a.ingest_bytes(_md("Three"), "three.md")
    for s in (a, b):
        report = s.check()
        assert report.ok, report.problems
        assert report.dense_ids == report.bm25_ids == report.chunks == a.chunk_count
    a.close()
    b.close()


def test_a_failing_batch_still_leaves_the_indexes_matching_sqlite(store):
    with pytest.raises(RuntimeError, match="boom"):
        with store.batch():
            store.ingest_bytes(_md("Kept"), "kept.md")
            raise RuntimeError("boom")
    assert store.check().ok
    assert any(store.chunk(h.chunk_id).document_name == "kept.md" for h in store.search("kept topic", k=5))


def test_deletes_inside_a_batch(store):
    r = store.ingest_bytes(_md("Gone"), "gone.md")
    with store.batch():
        store.ingest_bytes(_md("Stays"), "stays.md")
        assert store.delete(r.document_id)
    report = store.check()
    assert report.ok and all(store.chunk(h.chunk_id).document_name == "stays.md" for h in store.search("topic", k=20))


def test_the_dense_index_turns_ivf_past_the_switch_size(store, monkeypatch):
    import rag.index.dense as dense

    monkeypatch.setattr(dense, "APPROX_MIN_CHUNKS", 20)
    store.ingest_bytes(_md("Small", 5), "small.md")
    assert store.index_cache.current().dense.kind == "flat"
    with store.batch():
        for i in range(24):
            store.ingest_bytes(_md(f"Doc{i}", 5), f"doc{i}.md")
    assert store.chunk_count >= 20
    idx = store.index_cache.current()
    assert idx.dense.kind == "ivf" and len(idx.dense) == store.chunk_count
    assert store.check().ok


def test_delta_sum_drops_what_a_later_delta_removes():
    v = np.eye(384, dtype=np.float32)[:3]
    d = IndexDelta.add([1, 2, 3], v) + IndexDelta.remove([2, 7])
    assert d.added_ids.tolist() == [1, 3] and d.removed_ids == (7,)
