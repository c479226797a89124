"""Tests of rag.answer.gate.learned_gate: features on real retrieval, the shipped coefficients on a small fixed store
(three dev chapters, strategy E, hybrid), save/load, and the decision's contract (the learned gate at the
widest distance threshold, 2.0, so that the score alone decides)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

from rag.answer.gate import learned_gate as gm
from rag.evaluation.cache import EmbeddingCache
from rag.evaluation.data import load_ood, load_questions
from rag.evaluation.indexes import build_strategy_index
from rag.text import TermStats

DOCS = ("02-llm-inference.md", "06-semantic-search-faiss.md", "12-evaluation.md")


@pytest.fixture(scope="module")
def small_store(corpus_dir, embedder, tmp_path_factory):
    from rag.ingest.extract import extract_path

    docs = [extract_path(corpus_dir / "docs" / n) for n in DOCS]
    cache = EmbeddingCache(tmp_path_factory.mktemp("gm") / "cache.sqlite")
    idx = build_strategy_index(docs, "E", embedder, cache)
    stats = TermStats.from_texts([c.text for c in idx.chunks])
    return idx, stats, {i: c.text for i, c in enumerate(idx.chunks)}


def _decide(small_store, embedder, query, **kw):
    from rag.index.fusion import retrieve

    idx, stats, texts = small_store
    hits = retrieve(query, embedder.encode_query(query), idx.dense, idx.bm25, k=20)
    return gm.apply_learned_gate(query, hits, texts, stats, threshold=2.0, **kw)  # the score alone decides


def test_shipped_model_loads_and_is_documented():
    m = gm.GateModel.load()
    assert m.features == list(gm.FEATURES)
    assert 0.0 < m.default_min_score < 1.0
    assert "leave-one-question-out" in m.info["cv"]


@pytest.mark.slow
def test_far_out_of_domain_refused_in_domain_course_questions_answered(small_store, embedder, corpus_dir):
    far = [o for o in load_ood(corpus_dir / "dev_ood.jsonl") if o.kind == "far"]
    for o in far:
        d = _decide(small_store, embedder, o.query)
        assert d.refused and d.sources == () and d.refusal.startswith("NO ANSWER"), d.why
    qs = [q for q in load_questions(corpus_dir / "dev_questions.jsonl") if q.doc in DOCS]
    assert len(qs) == 5
    for q in qs:
        d = _decide(small_store, embedder, q.query_doc)
        assert not d.refused, (q.id, d.why)
        assert 1 <= len(d.sources) <= 4 and d.refusal is None
        assert any(q.needle in small_store[0].content(h.chunk_id) for h in d.sources), q.id


@pytest.mark.slow
def test_knob_direction_and_why(small_store, embedder):
    q = "What is Time to First Token (TTFT) and which inference phase primarily affects it?"
    assert not _decide(small_store, embedder, q, min_score=0.0).refused  # answer everything
    assert _decide(small_store, embedder, q, min_score=1.0).refused  # refuse everything
    d = _decide(small_store, embedder, q)
    assert "nearest distance" in d.why and "lexical coverage" in d.why and "score" in d.why
    assert set(d.evidence.features) == set(gm.FEATURES) and d.evidence.score == d.score
    with pytest.raises(ValueError, match=r"min_score must be in \[0, 1\]"):
        _decide(small_store, embedder, q, min_score=1.5)


@dataclass(frozen=True)
class H:
    chunk_id: int
    cosine_distance: float
    dense_rank: int | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None


def test_features_by_hand():
    texts = {0: "faiss index flat inner product", 1: "bm25 lexical scores", 2: "unrelated words"}
    stats = TermStats.from_texts(list(texts.values()))
    hits = [H(0, 0.3, 1, 1, 5.0), H(1, 0.5, 2, None, None), H(2, 0.6, 3, 2, 1.0)]
    f = gm.gate_features("faiss zebra", hits, texts, stats)
    assert f["nearest_distance"] == pytest.approx(0.3)
    assert f["gap_1_5"] == pytest.approx(0.3)  # fewer than 5 hits: the last one
    assert f["unknown_terms"] == pytest.approx(0.5)  # "zebra" is in no chunk
    assert f["missing_idf"] == pytest.approx(stats.idf("zebra"))
    assert 0 < f["coverage"] < 1 and f["best_chunk_coverage"] == pytest.approx(f["coverage"])
    assert f["leg_overlap"] == pytest.approx(2 / 5)
    nothing = gm.gate_features("faiss", [], texts, stats)
    assert nothing["nearest_distance"] == 2.0 and nothing["coverage"] == 0.0


def test_fit_save_load_roundtrip(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, len(gm.FEATURES)))
    y = (X[:, 0] < 0).astype(int)
    m = gm.fit_gate_model(X, y)
    p = m.save(tmp_path / "g.json")
    m2 = gm.GateModel.load(p)
    assert np.allclose(m.probability(X), m2.probability(X))
    assert ((m.probability(X) >= 0.5) == y.astype(bool)).mean() > 0.9
    groups = [str(i // 2) for i in range(40)]
    assert gm.cross_val_probabilities(X, y, groups).shape == (40,)
    old = json.loads(p.read_text())
    old["default_cut"] = old.pop("default_min_score")  # a file written before issue 12 renamed the knob
    (tmp_path / "old.json").write_text(json.dumps({**old, "default_cut": 0.42}))
    assert gm.GateModel.load(tmp_path / "old.json").default_min_score == 0.42
    (tmp_path / "bad.json").write_text(json.dumps({"features": ["a"]}))
    with pytest.raises(ValueError, match="bad.json: not a gate model"):
        gm.GateModel.load(tmp_path / "bad.json")
