"""Tests of rag.evaluation.runner and report: the tiny corpus (tests/evaluation/conftest.py), whose recall is known
by construction, through the real extractor, chunker, embedder and retrieval; then its report, JSON and plots."""

from __future__ import annotations

import json

import pytest

from rag.evaluation.cache import EmbeddingCache
from rag.evaluation.report import write_report
from rag.evaluation.runner import run_evaluation


@pytest.mark.slow
def test_tiny_corpus_recall_known_by_construction(tiny, embedder, tmp_path):
    d, docs, questions, ood = tiny
    # where blind cutting falls: the bees needle must straddle a 512-character boundary of its document
    canon = docs[0].canonical
    i = canon.index("Worker bees perform")
    needle = questions[2].needle
    assert i // 512 != (i + len(needle) - 1) // 512, "construction: the bees needle must cross a blind cut"
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    res = run_evaluation(docs, questions, ood, strategies=["A", "C", "E"], modes=["dense", "bm25", "hybrid"],
                            embedder=embedder, cache=cache, thresholds=[0.3, 0.6, 0.9])
    assert res.chunk_stats["A"].destroyed == ["q3", "q4"]
    assert res.chunk_stats["C"].destroyed == ["q4"] and res.chunk_stats["E"].destroyed == ["q4"]
    assert res.chunk_stats["E"].header_share > 0 and res.chunk_stats["C"].header_share == 0
    for mode in ("dense", "bm25", "hybrid"):
        for s, found in (("A", 4), ("C", 6), ("E", 6)):  # of 8 queries: q4 never, q3 not under A
            m = res.metric(s, mode)
            assert m.recall[1].hits == found, (s, mode, m.ranks)
            assert m.recall[20].hits == found
            assert m.mrr == pytest.approx(found / 8)
    t = next(p for p in res.strategy_tests if p.within == "hybrid" and p.k == 20 and {p.a, p.b} == {"A", "E"})
    assert (t.test.wins, t.test.losses) == ((0, 2) if t.a == "A" else (2, 0))
    assert t.test.p == pytest.approx(0.5)
    sw = res.sweeps[0]
    assert (sw.strategy, sw.mode, sw.n_answerable, sw.n_in_domain) == ("E", "hybrid", 6, 8)
    assert sw.row(0.3).bluffs == 0 and sw.row(0.9).bluffs_near == 1  # a loose cut lets the near-topic one through
    assert sw.row(0.9).lost == 0
    learned = res.sweeps[1]  # the learned gate's leave-one-question-out sweep, beside the distance one
    assert learned.knob == "probability cut" and learned.n_answerable == 6 and res.gate_run.model.default_cut > 0
    # second run: every text comes from the cache
    cache2 = EmbeddingCache(tmp_path / "cache.sqlite")
    run_evaluation(docs, questions, ood, strategies=["A"], modes=["dense"], embedder=embedder, cache=cache2)
    assert cache2.misses == 0 and cache2.hits > 0
    md = write_report(res, tmp_path / "out")
    text = md.read_text()
    assert "Does E beat A at R@20 (hybrid)?" in text and "Strategy A destroys 2 of 4 needles" in text
    for png in ("recall.png", "distances.png", "sweep.png"):
        assert (tmp_path / "out" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "out" / "report.json").read_text())["n_queries"] == 8
