"""Tests of rag.evaluation.runner and report: the tiny corpus (tests/evaluation/conftest.py), whose recall is known
by construction, through the real extractor, chunker, embedder and retrieval; then its report, JSON and plots."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from rag.evaluation.cache import EmbeddingCache
from rag.evaluation.data import Question, expand_queries
from rag.evaluation.report import write_report
from rag.evaluation.runner import metrics_for, pair_tests, run_evaluation


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
    for s, found in (("A", 2), ("E", 3)):  # each wording finds half of A's and of E's hits (same needle texts)
        split = res.metric(s, "hybrid").by_wording
        assert {w: (m.n_queries, m.recall[20].hits) for w, m in split.items()} == {"doc": (4, found), "user": (4, found)}
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
    assert "## Recall by wording" in text and "## Comparisons by wording" in text
    assert "By wording (E, hybrid): documents' wording R@4 0.750" in text
    for png in ("recall.png", "distances.png", "sweep.png"):
        assert (tmp_path / "out" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "out" / "report.json").read_text())["n_queries"] == 8


# --------------------------------------------------------------------------- the split by wording, on fakes (issue 19)


@dataclass(frozen=True)
class FakeHit:
    chunk_id: int


class FakeIndex:
    """Chunk ``i`` holds needle ``<N i>`` (written ``<N1>``); nothing else is read by the metrics."""

    def content(self, chunk_id: int) -> str:
        return f"text with <N{chunk_id}> inside"


def _run(ranks: dict[str, int | None]) -> dict[str, list[FakeHit]]:
    """Hit lists putting the chunk holding each query's needle at the given rank (none for None)."""
    out = {}
    for key, r in ranks.items():
        qid = int(key[1])
        hits = [FakeHit(100 + i) for i in range(20)]
        if r is not None:
            hits[r - 1] = FakeHit(qid)
        out[key] = hits
    return out


def test_metrics_and_sign_tests_split_by_wording():
    questions = [Question(f"q{i}", "d.md", f"<N{i}>", f"doc words {i}", f"user words {i}", ("doc", "user")) for i in range(1, 6)]
    queries = expand_queries(questions)
    # config a: the documents' wording always first, the users' wording only for q1 (rank 2) and q2 (rank 9)
    a = _run({"q1/doc": 1, "q1/user": 2, "q2/doc": 1, "q2/user": 9, "q3/doc": 1, "q3/user": None,
              "q4/doc": 1, "q4/user": None, "q5/doc": 1, "q5/user": None})
    # config b: users' wording rescued at rank 3 for q3-q5, documents' wording of q5 lost
    b = _run({"q1/doc": 1, "q1/user": 2, "q2/doc": 1, "q2/user": 9, "q3/doc": 1, "q3/user": 3,
              "q4/doc": 1, "q4/user": 3, "q5/doc": None, "q5/user": 3})
    ma = metrics_for("E", "a", queries, a, FakeIndex())
    mb = metrics_for("E", "b", queries, b, FakeIndex())
    assert list(ma.by_wording) == ["doc", "user"]
    doc, user = ma.by_wording["doc"], ma.by_wording["user"]
    assert (doc.n_queries, user.n_queries) == (5, 5)
    assert doc.recall[1].hits == 5 and doc.mrr == 1.0
    assert [user.recall[k].hits for k in (1, 4, 8, 20)] == [0, 1, 1, 2]
    assert user.mrr == pytest.approx((1 / 2 + 1 / 9) / 5)
    assert ma.recall[4].hits == doc.recall[4].hits + user.recall[4].hits  # the overall figure is the sum
    assert ma.mrr == pytest.approx((doc.mrr + user.mrr) / 2)
    _, mode_tests = pair_tests([ma, mb], queries, ks=(4,))
    (t,) = mode_tests
    assert (t.a, t.b, t.test.wins, t.test.losses) == ("a", "b", 1, 3)  # overall: +1 (q5/doc) / -3 (q3-q5 user)
    assert (t.by_wording["doc"].wins, t.by_wording["doc"].losses) == (1, 0)
    assert (t.by_wording["user"].wins, t.by_wording["user"].losses) == (0, 3)
    assert t.by_wording["user"].p == pytest.approx(0.25)
