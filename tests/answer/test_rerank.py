"""The model re-rank of the gate's candidates (rag.answer.rerank, issue 27 item 2): which hits it orders, how the
model's share and the fused prior combine, and that the gate's decision is never the model's."""

from __future__ import annotations

import numpy as np
import pytest

from rag.answer import rerank as rr
from rag.answer.gate import GateResult
from rag.answer.listwise import ListwiseResult
from rag.errors import ModelError
from rag.types import Hit, QueryPlan, Verdict


def _hits(dists):
    return tuple(Hit(chunk_id=100 + i, rank=i + 1, fused_rank=i + 1, rrf_score=0.0, cosine_distance=d)
                 for i, d in enumerate(dists))


def _gate(dists=(0.3, 0.4, 0.5, 0.9, 0.45, 0.5), weight=0.2, refused=False, max_sources=2):
    hits = _hits(dists)
    kept = tuple(h for h in hits if h.cosine_distance < 0.675)[:max_sources]
    return GateResult(query="why is the first word slow?", threshold=0.675, max_sources=max_sources,
                      refused=refused, refusal=None, sources=() if refused else kept, candidates=hits,
                      nearest_distance=min(dists), verdict=Verdict.REFUSED if refused else Verdict.ANSWERED,
                      score=0.7, plan=QueryPlan("why is the first word slow?", bm25_weight=weight))


def test_only_candidates_under_the_threshold_are_shown_and_only_when_bm25_was_weak():
    g = _gate()
    assert [h.chunk_id for h in rr.eligible(g)] == [100, 101, 102, 104, 105]  # 103 is over the threshold
    assert rr.should_rerank(g)
    assert not rr.should_rerank(_gate(weight=1.0))  # BM25's best chunk covered the question: fused order kept
    assert not rr.should_rerank(_gate(refused=True))
    assert not rr.should_rerank(_gate(dists=(0.3, 0.9)))  # one candidate: nothing to order


def test_reorder_weight_zero_keeps_the_fused_order_and_a_large_one_is_the_models():
    hits = list(_hits((0.3, 0.3, 0.3)))
    model = [-3.0, -0.1, -2.0]
    assert [h.chunk_id for h in rr.reorder(hits, model, 0.0)] == [100, 101, 102]
    out = rr.reorder(hits, model, 100.0)
    assert [h.chunk_id for h in out] == [101, 102, 100] and [h.rank for h in out] == [1, 2, 3]
    assert out[0].rerank_score > out[1].rerank_score and out[0].fused_rank == 2


def test_best_unit_is_the_sentence_closest_to_the_question():
    content = "Prefill reads the prompt at once. Decoding writes one token after another. The cache holds keys."
    target = np.array([0.0, 1.0], np.float32)

    def encode(texts):
        return np.array([[0.0, 1.0] if "Decoding" in t else [1.0, 0.0] for t in texts], np.float32)

    assert rr.best_unit(content, "[Doc > Sec]\n", target, encode) == "Decoding writes one token after another."
    assert rr.best_unit("One short sentence here.", "", target, encode) == "One short sentence here."


def test_the_model_chooses_the_sources_but_never_the_verdict(monkeypatch):
    g = _gate()
    monkeypatch.setattr(rr, "rerank_items", lambda store, q, hits: [f"unit {h.chunk_id}" for h in hits])
    seen = {}

    def scores(question, items, generator, *, orders, max_item_tokens):
        seen.update(items=items, orders=orders)
        s = np.array([-4.0, -4.0, -4.0, -0.05, -4.0], np.float32)  # the model wants the 4th shown (chunk 104)
        return ListwiseResult(s, s[None, :], (120,), 5.0)

    monkeypatch.setattr(rr, "listwise_scores", scores)
    out, res = rr.model_rerank(object(), g, get_selector=lambda: "gen", weight=4.0)
    assert seen["items"] == ["unit 100", "unit 101", "unit 102", "unit 104", "unit 105"] and seen["orders"] == 2
    assert [h.chunk_id for h in out.sources] == [104, 100]
    assert (out.verdict, out.score, out.refused, out.nearest_distance) == (g.verdict, g.score, g.refused,
                                                                           g.nearest_distance)
    assert out.plan.reranked and not g.plan.reranked
    assert {h.chunk_id for h in out.candidates} == {h.chunk_id for h in g.candidates}
    assert res.prompt_tokens == (120,)


def test_a_refusal_never_reaches_the_model_and_a_failing_model_leaves_the_fused_order(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("the model was asked")

    monkeypatch.setattr(rr, "rerank_items", lambda store, q, hits: ["x"] * len(hits))
    monkeypatch.setattr(rr, "listwise_scores", boom)
    refused = _gate(refused=True)
    assert rr.model_rerank(object(), refused, get_selector=boom) == (refused, None)

    def missing(*a, **k):
        raise ModelError("model missing; run: make models")

    monkeypatch.setattr(rr, "listwise_scores", missing)
    g = _gate()
    assert rr.model_rerank(object(), g, get_selector=lambda: "gen") == (g, None)


@pytest.mark.slow
def test_the_real_model_scores_every_candidate_and_its_order_picks_the_sources(gguf_path):
    """The real 0.5B end to end through the listwise pass. Whether its order is better than the fusion's is a
    benchmark's question (docs/evaluation.md: measured, off by default), not a test's: on this example the 0.5B put
    the Longformer sentence third in CI, so the test pins the plumbing, not the model's judgement."""
    from rag.answer.listwise import selector_generator
    from rag.settings import get_settings

    items = ["GPT-2 is a decoder-only model trained on web text.",
             "BERT is an encoder-only model trained with masked language modelling.",
             "The vocabulary has 50,257 tokens.",
             "Longformer and Reformer use a sparse version of the attention matrix to be more efficient."]
    g = _gate(dists=(0.4, 0.4, 0.4, 0.4), max_sources=2)
    g = GateResult(**{**g.__dict__, "query": "Which models avoid computing full attention on long documents?"})
    mp = pytest.MonkeyPatch()
    mp.setattr(rr, "rerank_items", lambda store, q, hits: items)
    try:
        out, res = rr.model_rerank(object(), g, get_selector=lambda: selector_generator(get_settings()), weight=4.0)
    finally:
        mp.undo()
    assert res is not None and res.scores.shape == (4,) and np.isfinite(res.scores).all()
    combined = rr.reorder(list(g.candidates), res.scores, 4.0)  # the fused prior + 4 x the model's share
    assert [h.chunk_id for h in out.sources] == [h.chunk_id for h in combined[:2]]
    assert out.verdict == g.verdict and out.plan.reranked and len(out.candidates) == 4
