"""Retrieval (design stages 4-6): tokenizer, dense vs brute force, BM25, RRF, retrieve(), rerank."""

from __future__ import annotations

import numpy as np
import pytest

from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.index.fusion import retrieve, rrf
from rag.index.rerank import Reranker, load_reranker
from rag.text import tokenize


def _unit(rng, n, d=384):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# ---------------------------------------------------------------- tokenizer

def test_tokenizer_keeps_non_latin_scripts():
    toks = tokenize("Привет мир, Ελληνικά, مرحبا بالعالم, naïve ﬁne-tuning")
    for w in ["привет", "мир", "ελληνικά", "مرحبا", "بالعالم", "naïve", "fine", "tuning"]:
        assert w in toks


def test_tokenizer_cjk_bigrams():
    assert tokenize("東京大学") == ["東京", "京大", "大学"]
    assert tokenize("猫") == ["猫"]
    assert tokenize("GPU东京") == ["gpu", "东京"]


def test_tokenizer_drops_stopwords(cases_dir):
    for line in (cases_dir / "c16_stopword_queries.txt").read_text().splitlines():
        assert tokenize(line) == [], line


# ---------------------------------------------------------------- dense

def test_dense_matches_brute_force():
    rng = np.random.default_rng(0)
    vecs = _unit(rng, 200)
    ids = np.arange(1000, 1200, dtype=np.int64)
    idx = DenseIndex.build(ids, vecs)
    for q in _unit(rng, 5):
        got_ids, got_d = idx.search(q, 10)
        brute = 1.0 - vecs @ q
        order = np.argsort(brute)[:10]
        assert got_ids.tolist() == ids[order].tolist()
        np.testing.assert_allclose(got_d, brute[order], atol=1e-5)
        np.testing.assert_allclose(idx.distances(q, got_ids), got_d, atol=1e-5)


def test_dense_fewer_than_k_and_empty_never_pad():
    rng = np.random.default_rng(1)
    idx = DenseIndex.build([7, 8, 9], _unit(rng, 3))
    ids, d = idx.search(_unit(rng, 1)[0], 20)
    assert sorted(ids.tolist()) == [7, 8, 9] and len(d) == 3 and (ids >= 0).all()
    empty = DenseIndex()
    ids, d = empty.search(_unit(rng, 1)[0], 20)
    assert ids.size == 0 and d.size == 0


def test_dense_rejects_non_unit_vectors():
    with pytest.raises(ValueError, match="not unit-norm"):
        DenseIndex.build([1], np.full((1, 384), 0.5, np.float32))


def test_dense_remove_and_save_load(tmp_path):
    rng = np.random.default_rng(2)
    vecs = _unit(rng, 10)
    idx = DenseIndex.build(np.arange(10), vecs)
    assert idx.remove([3, 4, 99]) == 2 and len(idx) == 8
    idx.save(tmp_path / "d.faiss")
    back = DenseIndex.load(tmp_path / "d.faiss")
    assert sorted(back.ids().tolist()) == [0, 1, 2, 5, 6, 7, 8, 9]
    assert back.search(vecs[5], 1)[0].tolist() == [5]


# ---------------------------------------------------------------- BM25

TEXTS = [
    "The error code E1234 appears when the flux capacitor overheats.",
    "Cats sleep most of the day in warm places.",
    "Привет мир: это русский текст о поиске.",
    "東京大学で機械学習を研究する。",
    "A completely different sentence about gardening tools.",
]


def test_bm25_exact_strings_and_scripts():
    idx = BM25Index.build(TEXTS, [10, 11, 12, 13, 14])
    assert idx.search("e1234", 5)[0].tolist() == [10]
    assert idx.search("поиске", 5)[0].tolist() == [12]
    assert idx.search("機械学習", 5)[0].tolist() == [13]
    ids, scores = idx.search("cats sleep warm", 3)
    assert ids[0] == 11 and (np.diff(scores) <= 0).all()


def test_bm25_no_hits_for_stopwords_unknown_empty():
    idx = BM25Index.build(TEXTS, [10, 11, 12, 13, 14])
    for q in ["the of and", "", "???", "zzzunknownzzz"]:
        ids, scores = idx.search(q, 5)
        assert ids.size == 0 and scores.size == 0
    assert BM25Index.build([], []).search("cats", 5)[0].size == 0


def test_bm25_save_load(tmp_path):
    idx = BM25Index.build(TEXTS, [10, 11, 12, 13, 14])
    idx.save(tmp_path / "b")
    back = BM25Index.load(tmp_path / "b")
    assert back.search("e1234 cats", 5)[0].tolist() == idx.search("e1234 cats", 5)[0].tolist()


# ---------------------------------------------------------------- fusion

def test_rrf_formula_and_order():
    fused = dict(rrf([[1, 2, 3], [3, 1]], k=60))
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)
    assert [c for c, _ in rrf([[1, 2, 3], [3, 1]])] == [1, 3, 2]
    assert rrf([]) == []


@pytest.fixture(scope="module")
def small_indexes(hash_embedder):
    vecs = hash_embedder.encode(TEXTS)
    ids = np.array([10, 11, 12, 13, 14], np.int64)
    return DenseIndex.build(ids, vecs), BM25Index.build(TEXTS, ids)


def test_retrieve_hybrid_every_hit_has_distance(hash_embedder, small_indexes):
    dense, bm25 = small_indexes
    q = "error code E1234"
    hits = retrieve(q, hash_embedder.encode_query(q), dense, bm25, k=20)
    assert len(hits) == 5  # fewer chunks than k: no padding
    assert hits[0].chunk_id == 10 and hits[0].dense_rank is not None and hits[0].bm25_rank == 1
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5] and all(h.fused_rank == h.rank for h in hits)
    qv = hash_embedder.encode_query(q)
    for h in hits:
        assert h.cosine_distance == pytest.approx(float(1 - hash_embedder.encode([TEXTS[h.chunk_id - 10]])[0] @ qv), abs=1e-4)


def test_retrieve_modes(hash_embedder, small_indexes):
    dense, bm25 = small_indexes
    q = "E1234"
    qv = hash_embedder.encode_query(q)
    assert [h.chunk_id for h in retrieve(q, qv, dense, bm25, mode="bm25")] == [10]
    assert len(retrieve(q, qv, dense, bm25, mode="dense", k=3)) == 3
    assert all(h.bm25_rank is None for h in retrieve(q, qv, dense, bm25, mode="dense"))
    with pytest.raises(ValueError, match="allowed: hybrid, dense, bm25"):
        retrieve(q, qv, dense, bm25, mode="sparse")


def test_retrieve_empty_index_and_stopword_query(hash_embedder):
    assert retrieve("anything", hash_embedder.encode_query("anything"), DenseIndex(), BM25Index.build([], [])) == []
    dense = DenseIndex.build([1], hash_embedder.encode(["cats"]))
    bm25 = BM25Index.build(["cats"], [1])
    hits = retrieve("the of and", hash_embedder.encode_query("the of and"), dense, bm25, mode="bm25")
    assert hits == []


# ---------------------------------------------------------------- rerank

@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A tiny random BERT cross-encoder built and saved here (no download)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    d = tmp_path_factory.mktemp("models") / "tiny-ce"
    d.mkdir()
    words = sorted({w for t in TEXTS for w in tokenize(t)} | {"error", "code", "cats"})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab_file=str(d / "vocab.txt"))
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=128, num_labels=1)
    BertForSequenceClassification(cfg).save_pretrained(d)
    tok.save_pretrained(d)
    return d


@pytest.mark.slow  # builds and loads a (tiny, random) cross-encoder: torch + transformers, about 20 s on 2 cores
def test_reranker_found_loaded_and_reorders(hash_embedder, small_indexes, tiny_cross_encoder):
    from rag.models import find_cross_encoder

    models_dir = tiny_cross_encoder.parent
    assert find_cross_encoder(models_dir) == tiny_cross_encoder
    rr = load_reranker(models_dir)
    assert isinstance(rr, Reranker)
    dense, bm25 = small_indexes
    q = "error code cats"
    qv = hash_embedder.encode_query(q)
    plain = retrieve(q, qv, dense, bm25, k=5)
    texts = {10 + i: t for i, t in enumerate(TEXTS)}
    hits = retrieve(q, qv, dense, bm25, k=5, reranker=rr, texts=texts)
    scores = rr.scores(q, [texts[h.chunk_id] for h in plain])
    expect = [plain[i].chunk_id for i in sorted(range(5), key=lambda i: (-scores[i], i))]
    assert [h.chunk_id for h in hits] == expect
    assert [h.rank for h in hits] == [1, 2, 3, 4, 5]
    by_id = {h.chunk_id: h for h in plain}
    for h in hits:
        assert h.fused_rank == by_id[h.chunk_id].fused_rank and h.rerank_score is not None
    # a callable text source works the same
    again = retrieve(q, qv, dense, bm25, k=5, reranker=rr, texts=lambda ids: [texts[i] for i in ids])
    assert [h.chunk_id for h in again] == expect


def test_no_cross_encoder_means_none(tmp_path):
    assert load_reranker(tmp_path) is None
