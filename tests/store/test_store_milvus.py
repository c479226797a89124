"""The store on the Milvus backend (issue 18, through milvus-lite): the same answers as the local backend."""

from __future__ import annotations

import pytest

from rag.settings import get_settings
from rag.store.store import Store

TOPICS = ("Attention", "Prefill", "Caching", "Tokenizer", "Summaries", "Curves")


def _md(title: str) -> bytes:
    paras = "\n\n".join(f"{title} paragraph {i}: the {title.lower()} part number {i} of this note." for i in range(6))
    return f"# {title}\n\n## Notes on {title.lower()}\n\n{paras}\n".encode()


def _open(path, backend, embedder):
    return Store(path, settings=get_settings(store=path, backend=backend), embedder=embedder)


@pytest.fixture()
def pair(tmp_path, hash_embedder):
    local, milvus = _open(tmp_path / "local", "local", hash_embedder), _open(tmp_path / "milvus", "milvus", hash_embedder)
    for s in (local, milvus):
        s.ingest_paths([])  # an empty batch is fine
        with s.batch():
            for t in TOPICS:
                s.ingest_bytes(_md(t), f"{t.lower()}.md")
    yield local, milvus
    local.close()
    milvus.close()


def _cited(store, query, k=8):
    return [(c.document_name, c.start, c.end) for c in store.chunks([h.chunk_id for h in store.search(query, k=k)])]


@pytest.mark.parametrize("query", ["prefill part number 3", "caching note", "the tokenizer", "curves paragraph 5"])
def test_milvus_store_answers_like_the_local_one(pair, query):
    local, milvus = pair
    assert milvus.index_cache.backend.kind == "milvus" and (milvus.path / "milvus.db").exists()
    assert _cited(milvus, query) == _cited(local, query)
    for mode in ("dense", "bm25"):
        a = [(h.chunk_id, h.dense_rank, h.bm25_rank) for h in local.search(query, k=5, mode=mode)]
        b = [(h.chunk_id, h.dense_rank, h.bm25_rank) for h in milvus.search(query, k=5, mode=mode)]
        assert len(a) == len(b) and [x[1:] for x in a] == [x[1:] for x in b]


def test_milvus_store_is_consistent_deletes_and_reopens(pair, hash_embedder):
    _, milvus = pair
    report = milvus.check()
    assert report.ok, report.problems
    assert report.chunks == report.dense_ids == report.bm25_ids == milvus.chunk_count
    doc = next(d for d in milvus.documents() if d.name == "caching.md")
    assert milvus.delete(doc.id)
    assert all(c.document_name != "caching.md" for c in milvus.chunks([h.chunk_id for h in milvus.search("caching", k=20)]))
    assert milvus.check().ok
    path, n = milvus.path, milvus.chunk_count
    milvus.close()
    again = _open(path, "milvus", hash_embedder)
    assert again.check().ok and again.index_cache.current().generation == again.index_cache.generation()
    assert len(again.index_cache.backend) == n
    again.close()


def test_a_lost_collection_is_rebuilt_from_sqlite(pair, hash_embedder):
    _, milvus = pair
    backend = milvus.index_cache.backend
    backend.client.drop_collection(backend.collection)  # the backend lost everything: SQLite still has it all
    path = milvus.path
    milvus.close()
    again = _open(path, "milvus", hash_embedder)
    assert _cited(again, "prefill part number 3")[0][0] == "prefill.md"
    assert again.check().ok
    again.close()


def test_milvus_store_scopes_like_the_local_one(pair):
    """Issue 16: ``doc_ids`` keeps both legs to the chosen documents on Milvus too (an ``id in [...]`` filter)."""
    local, milvus = pair
    for s in (local, milvus):
        chosen = [d.id for d in s.documents() if d.name in ("caching.md", "curves.md")]
        for mode in ("hybrid", "dense", "bm25"):
            names = {c.document_name for c in s.chunks([h.chunk_id for h in s.search("prefill part number 3", k=8,
                                                                                     mode=mode, doc_ids=chosen)])}
            assert names and names <= {"caching.md", "curves.md"}, (s.path, mode, names)
    chosen_l = [d.id for d in local.documents() if d.name == "caching.md"]
    chosen_m = [d.id for d in milvus.documents() if d.name == "caching.md"]
    a = [(c.start, c.end) for c in local.chunks([h.chunk_id for h in local.search("caching note", k=5, doc_ids=chosen_l)])]
    b = [(c.start, c.end) for c in milvus.chunks([h.chunk_id for h in milvus.search("caching note", k=5, doc_ids=chosen_m)])]
    assert a == b
