"""The index cache (rag.store.cache): deltas add up, the incremental path equals the one rebuild, files per generation."""

from __future__ import annotations

import json

import numpy as np

from rag.index.fusion import retrieve
from rag.settings import get_settings
from rag.store.cache import IndexDelta
from rag.store.store import Store


def _unit(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, 4)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_deltas_add_up_to_one_batch():
    a = IndexDelta.add([1, 2], _unit(2, 0))
    b = IndexDelta.remove([2, 7]) + IndexDelta.add([3], _unit(1, 1))
    both = a + b
    assert both.added_ids.tolist() == [1, 3] and both.removed_ids == (7,)
    np.testing.assert_array_equal(both.added_vectors, np.concatenate([a.added_vectors[:1], _unit(1, 1)]))
    assert (IndexDelta() + IndexDelta.remove([5])).removed_ids == (5,)
    assert (IndexDelta() + IndexDelta()).added_vectors is None


def _md(title: str) -> bytes:
    body = "\n\n".join(f"{title} note {i} about item {title.lower()}{i}." for i in range(4))
    return f"# {title}\n\n{body}\n".encode()


def test_incremental_updates_equal_the_rebuild_and_files_follow_the_generation(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s"), embedder=hash_embedder)
    ids = [s.ingest_bytes(_md(t), f"{t}.md").document_id for t in ("Alpha", "Beta", "Gamma")]
    s.delete(ids[1])
    cache = s.index_cache
    live, fresh = cache.current(), cache.rebuild()
    # three ingests, each its chunks then its sentence units (issue 41: searchable first), one delete
    assert live.generation == fresh.generation == cache.generation() == 7
    assert sorted(live.dense.ids().tolist()) == sorted(fresh.dense.ids().tolist()) == cache.rows().ids.tolist()
    assert live.bm25.ids().tolist() == fresh.bm25.ids().tolist()
    for q in ("gamma note", "alpha item alpha2"):
        want = retrieve(q, hash_embedder.encode_query(q), fresh.dense, fresh.bm25, k=5,
                        depth=max(5, s.settings.candidates_k), rrf_k=s.settings.rrf_k)
        assert [h.chunk_id for h in s.search(q, k=5, rerank=False)] == [h.chunk_id for h in want] != []
    names = sorted(p.name for p in (s.path / "index").iterdir())
    assert names == ["bm25.g7", "dense.g7.faiss"]  # older generations removed
    s.close()


def test_term_stats_are_kept_with_the_generation(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", embedder=hash_embedder)
    s.ingest_bytes(_md("Alpha"), "a.md")
    first = s.term_stats()
    assert first is s.term_stats() and first.n_chunks == s.chunk_count and first.df["alpha"] == s.chunk_count
    s.ingest_bytes(_md("Beta"), "b.md")
    second = s.term_stats()
    assert second is not first and second.n_chunks == s.chunk_count and second.df["alpha"] == first.n_chunks
    s.close()


def test_derived_values_and_artifacts_follow_the_generation(tmp_path, hash_embedder):
    """Issue 15: what the answer layer derives from the chunk rows is kept per generation, on disk for artifacts."""
    s = Store(tmp_path / "s", embedder=hash_embedder)
    s.ingest_bytes(_md("Alpha"), "a.md")
    calls = []

    def compute(table):
        calls.append(len(table.ids))
        assert table.contents is not None and table.vectors is not None and len(table.contents) == len(table.ids)
        return f'{{"n": {len(table.ids)}}}'

    parse = json.loads
    cache = s.index_cache
    first = cache.artifact("thing", compute, parse)
    assert first == {"n": s.chunk_count} and cache.artifact("thing", compute, parse) is first and len(calls) == 1
    gen = cache.generation()
    assert (s.path / "index" / f"thing.g{gen}.json").is_file()
    # another store object (another process) reads the file instead of computing again
    other = Store(tmp_path / "s", embedder=hash_embedder)
    assert other.index_cache.artifact("thing", compute, parse) == first and len(calls) == 1
    # a file it cannot parse (an older format) is computed again
    (s.path / "index" / f"thing.g{gen}.json").write_text("not json")
    third = Store(tmp_path / "s", embedder=hash_embedder)
    assert third.index_cache.artifact("thing", compute, parse) == first and len(calls) == 2
    # a change of documents: the old file goes with its generation, the value is derived again
    s.ingest_bytes(_md("Beta"), "b.md")
    assert not (s.path / "index" / f"thing.g{gen}.json").exists()
    assert cache.artifact("thing", compute, parse) == {"n": s.chunk_count} and len(calls) == 3
    assert cache.memo("m", lambda t: len(t.ids)) == s.chunk_count
    for x in (s, other, third):
        x.close()
