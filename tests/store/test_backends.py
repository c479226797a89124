"""The search backends (issue 18): the same retrieval tests for the local FAISS + bm25s leg and for Milvus
(through milvus-lite, a local file), plus what only Milvus has (the collection stamp, reopening)."""

from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ModelMismatchError
from rag.settings import get_settings
from rag.store.backend import Batch, ChunkTable, LocalBackend, search
from rag.store.milvus import MilvusBackend, open_backend, resolve_uri, terms_of

TEXTS = [
    "Longformer and Reformer use a sparse version of the attention matrix.",
    "Time to first token depends on the prefill phase.",
    "KV caching stores keys and values to speed up decoding.",
    "The unigram tokenizer prunes its vocabulary by loss.",
    "FAISS builds an index for semantic search over embeddings.",
    "GRPO estimates the baseline from a group of sampled answers.",
    "Learning curves show training and validation loss per step.",
    "ROUGE compares a summary with reference summaries.",
] * 3  # 24 chunks: every text three times, distinct vectors
IDS = np.arange(100, 100 + len(TEXTS), dtype=np.int64) * 7  # sparse, non-contiguous ids


def _unit(rng, n, d=384):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


VECS = _unit(np.random.default_rng(0), len(TEXTS))


def _make(kind: str, tmp_path_factory):
    if kind == "local":
        return LocalBackend(384)
    return MilvusBackend(str(tmp_path_factory.mktemp("milvus") / "m.db"), encoder="test-encoder", dim=384)


@pytest.fixture(scope="module", params=["local", "milvus"])
def backend(request, tmp_path_factory):
    be = _make(request.param, tmp_path_factory)
    be.rebuild(IDS, VECS, TEXTS)
    yield be
    be.close()


def test_dense_leg_matches_brute_force(backend):
    for q in _unit(np.random.default_rng(1), 4):
        ids, d = backend.dense.search(q, 5)
        brute = 1.0 - VECS @ q
        order = np.argsort(brute)[:5]
        assert ids.tolist() == IDS[order].tolist()
        np.testing.assert_allclose(d, brute[order], atol=1e-5)
        np.testing.assert_allclose(backend.dense.distances(q, ids), d, atol=1e-5)


def test_bm25_leg_finds_exact_terms_and_nothing_for_stopwords(backend):
    ids, scores = backend.bm25.search("prefill phase", 10)
    assert sorted(ids.tolist()) == sorted(IDS[[1, 9, 17]].tolist())
    assert (scores > 0).all() and list(scores) == sorted(scores, reverse=True)
    assert len(backend.bm25.search("the of and", 10)[0]) == 0
    assert len(backend.bm25.search("zzzunknownword", 10)[0]) == 0
    assert len(backend.bm25.search("", 10)[0]) == 0


def test_hybrid_every_hit_has_its_distance_and_the_modes_differ(backend):
    q = VECS[2]
    hits = search(backend, "sparse attention matrix", q, k=10, mode="hybrid", depth=20)
    assert 0 < len(hits) <= 10 and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    pos = {int(i): n for n, i in enumerate(IDS)}
    for h in hits:
        assert abs(h.cosine_distance - (1.0 - float(VECS[pos[h.chunk_id]] @ q))) < 1e-5
    assert next(h for h in hits if h.chunk_id == IDS[2]).dense_rank == 1  # the query's own vector
    assert hits[0].dense_rank and hits[0].bm25_rank  # found by both legs: fused first
    bm_only = [h for h in hits if h.dense_rank is None]
    assert all(h.bm25_rank is not None and h.bm25_score > 0 for h in bm_only)
    assert {h.chunk_id for h in search(backend, "sparse attention matrix", q, k=10, mode="bm25")} == set(IDS[[0, 8, 16]].tolist())
    assert len(search(backend, "sparse attention matrix", q, k=5, mode="dense")) == 5
    with pytest.raises(ValueError, match="unknown mode"):
        search(backend, "x", q, mode="fuzzy")


def test_both_backends_rank_alike(tmp_path_factory):
    """Same chunks, same vectors: same dense order, same BM25 order and scores (k1 1.2, b 0.75 reach Milvus)."""
    a, b = _make("local", tmp_path_factory), _make("milvus", tmp_path_factory)
    for be in (a, b):
        be.rebuild(IDS, VECS, TEXTS)
    for query in ("sparse attention matrix", "keys and values", "loss"):
        la, lb = a.bm25.search(query, 10), b.bm25.search(query, 10)
        assert set(la[0].tolist()) == set(lb[0].tolist())
        np.testing.assert_allclose(np.sort(lb[1]), np.sort(la[1]), rtol=1e-4)
        q = VECS[5]
        assert [h.chunk_id for h in search(a, query, q, k=8)] == [h.chunk_id for h in search(b, query, q, k=8)]
    b.close()


@pytest.mark.parametrize("kind", ["local", "milvus"])
def test_batches_add_and_remove(kind, tmp_path_factory):
    be = _make(kind, tmp_path_factory)
    assert len(be) == 0 and search(be, "prefill", VECS[0], k=5) == []
    rows = {}

    def all_rows():
        keys = sorted(rows)
        return ChunkTable(np.array(keys, np.int64), [rows[i] for i in keys], None)

    first = Batch(IDS[:8], VECS[:8], TEXTS[:8])
    rows.update(zip(IDS[:8].tolist(), TEXTS[:8]))
    be.update(first, all_rows=all_rows)
    assert len(be) == 8
    rows.update(zip(IDS[8:].tolist(), TEXTS[8:]))
    be.update(Batch(IDS[8:], VECS[8:], TEXTS[8:]), all_rows=all_rows)
    assert len(be) == 24
    gone = IDS[[1, 9, 17]].tolist()
    for i in gone:
        rows.pop(i)
    be.update(removed=gone, all_rows=all_rows)
    assert len(be) == 21
    assert len(be.bm25.search("prefill phase", 10)[0]) == 0
    assert not set(gone) & set(be.dense.search(VECS[1], 24)[0].tolist())
    be.close()


def test_local_batch_needs_all_rows():
    be = LocalBackend(384)
    with pytest.raises(ValueError, match="all_rows"):
        be.update(Batch(IDS[:2], VECS[:2], TEXTS[:2]))


def test_batch_rejects_mismatched_lengths():
    with pytest.raises(ValueError, match="batch of 2 ids, 2 vectors, 1 texts"):
        Batch(IDS[:2], VECS[:2], TEXTS[:1])


def test_milvus_collection_is_stamped_and_reopens(tmp_path):
    uri = str(tmp_path / "sub" / "m.db")
    be = MilvusBackend(uri, encoder="enc-a", dim=384)
    be.rebuild(IDS, VECS, TEXTS)
    be.close()
    again = MilvusBackend(uri, encoder="enc-a", dim=384)
    assert len(again) == len(IDS)
    assert again.ids().tolist() == sorted(IDS.tolist())
    np.testing.assert_allclose(again.vectors(IDS[:3]), VECS[:3], atol=1e-6)
    again.close()
    with pytest.raises(ModelMismatchError, match="holds vectors of enc-a"):
        MilvusBackend(uri, encoder="enc-b", dim=384)


def test_terms_are_the_local_tokens():
    assert terms_of("The KV-cache, naïve ﬁne-tuning!") == "kv cache naïve fine tuning"
    assert terms_of("the of and") == ""


def test_backend_selected_by_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_BACKEND", "milvus")
    s = get_settings()
    assert s.backend == "milvus" and s.milvus_uri == ""
    assert resolve_uri("", tmp_path) == str(tmp_path.resolve() / "milvus.db")
    assert resolve_uri("http://milvus:19530", tmp_path) == "http://milvus:19530"
    be = open_backend(s, tmp_path, encoder="enc", dim=384)
    assert be.kind == "milvus" and (tmp_path / "milvus.db").exists()
    be.close()
    monkeypatch.setenv("RAG_BACKEND", "local")
    assert open_backend(get_settings(), tmp_path, encoder="enc").kind == "local"


def test_one_index_cache_drives_either_backend(tmp_path, hash_embedder):
    """Issue 23: the store's index cache is one class over a SearchBackend; no Milvus subclass with its own copy of
    the update path."""
    from rag.store import milvus
    from rag.store.cache import IndexCache
    from rag.store.store import Store

    opened = {}
    for kind in ("local", "milvus"):
        path = tmp_path / kind
        s = Store(path, settings=get_settings(store=path, backend=kind), embedder=hash_embedder)
        s.ingest_bytes(b"# Prefill\n\nThe prefill phase reads the whole prompt at once.\n", "prefill.md")
        opened[kind] = (type(s.index_cache), s.index_cache.backend.kind, s.index_cache.files_present(1), s.check().ok)
        s.close()
    assert opened == {"local": (IndexCache, "local", True, True), "milvus": (IndexCache, "milvus", True, True)}
    assert not hasattr(milvus, "MilvusIndexCache")
