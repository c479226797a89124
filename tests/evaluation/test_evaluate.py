"""Tests of rag.evaluation.evaluate: statistics against known values, metrics, loaders, the sweep, and a tiny corpus
whose recall is known by construction (real extractor, chunker, embedder and retrieval)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from rag.evaluation import evaluate as ev

# --------------------------------------------------------------------------- statistics


@pytest.mark.parametrize(
    "k, n, low, high",
    [
        (38, 64, 0.4715, 0.7054),  # the chapter's A at R@20 (DESIGN.md)
        (53, 64, 0.7179, 0.9012),  # the chapter's E at R@20
        (8, 10, 0.4902, 0.9433),  # the textbook example
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
    ],
)
def test_wilson_known_values(k, n, low, high):
    lo, hi = ev.wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=6e-5)
    assert hi == pytest.approx(high, abs=6e-5)


def test_wilson_matches_scipy_on_a_grid():
    from scipy.stats import binomtest

    for n in (1, 7, 48, 96):
        for k in range(n + 1):
            ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
            assert ev.wilson_interval(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_wilson_edge_cases():
    assert ev.wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes <= n"):
        ev.wilson_interval(5, 4)


@pytest.mark.parametrize(
    "wins, losses, p",
    [(18, 3, 0.0015), (12, 2, 0.0129), (25, 4, 0.0001), (1, 1, 1.0), (6, 0, 0.03125)],
)
def test_sign_test_known_values(wins, losses, p):
    a = [True] * wins + [False] * losses + [True, False] * 3  # ties: (T,T) and (F,F)
    b = [False] * wins + [True] * losses + [True, False] * 3
    t = ev.sign_test(a, b)
    assert (t.wins, t.losses) == (wins, losses)
    assert t.p == pytest.approx(p, abs=5e-5)


def test_sign_test_no_discordant_pairs_and_bad_input():
    assert ev.sign_test([True, False], [True, False]) == ev.SignTest(0, 0, 1.0)
    with pytest.raises(ValueError, match="equal length"):
        ev.sign_test([True], [True, False])
    assert ev.format_p(0.00001) == "< 0.0001"
    assert str(ev.SignTest(18, 3, 0.00149)) == "+18 / -3, p = 0.0015"


# --------------------------------------------------------------------------- metrics


def test_rank_recall_mrr():
    contents = ["alpha beta", "the whole needle here", "needle again"]
    assert ev.first_hit_rank(contents, "whole needle") == 2
    assert ev.first_hit_rank(contents, "whole needle again") is None  # the WHOLE needle, in ONE chunk
    ranks = [1, 2, None, 5, 20, 21]
    assert ev.hits_at(ranks, 4) == [True, True, False, False, False, False]
    assert ev.recall_at(ranks, 1) == pytest.approx(1 / 6)
    assert ev.recall_at(ranks, 20) == pytest.approx(4 / 6)
    assert ev.mean_reciprocal_rank(ranks) == pytest.approx((1 + 0.5 + 0.2 + 0.05 + 1 / 21) / 6)
    assert ev.recall_at([], 4) == 0.0 and ev.mean_reciprocal_rank([]) == 0.0


def test_hit_within_chars_counts_only_whole_chunks():
    small = ["x" * 1000, "y" * 1000, "needle" + "z" * 100]
    assert not ev.hit_within_chars(small, "needle", 2000)  # 1000 + 1000 + 106 > 2000
    assert ev.hit_within_chars(small, "needle", 2000 + 6 + 100)
    assert not ev.hit_within_chars(["needle" + "z" * 4000], "needle", 2000)  # one oversized chunk delivers nothing


def test_destroyed_needles():
    qs = [ev.Question("q1", "d", "cut here", "a", "b"), ev.Question("q2", "d", "kept", "a", "b")]
    assert ev.destroyed_needles(qs, ["... cut", "here ...", "it is kept"]) == ["q1"]


# --------------------------------------------------------------------------- loaders


def test_dev_files_load(corpus_dir):
    qs = ev.load_questions(corpus_dir / "dev_questions.jsonl")
    ood = ev.load_ood(corpus_dir / "dev_ood.jsonl")
    assert len(qs) == 24 and len(ev.expand_queries(qs)) == 48
    assert {o.kind for o in ood} == {"near", "far"} and len(ood) == 20


@pytest.mark.parametrize(
    "text, match",
    [
        ('{"id": "q1", "query": "x", "kind": "near"}\n{not json\n', r"bad.jsonl:2: bad JSON"),
        ('{"id": "q1", "query": "", "kind": "near"}\n', r"bad.jsonl:1: missing or empty field 'query'"),
        ('{"id": "q1", "query": "x", "kind": "near"}\n{"id": "q1", "query": "y", "kind": "far"}\n', "duplicate id 'q1'"),
        ('{"id": "q1", "query": "x", "kind": "middling"}\n', "kind must be 'near' or 'far'"),
        ("\n\n", "bad.jsonl: no rows"),
    ],
)
def test_ood_loader_names_file_and_line(tmp_path, text, match):
    p = tmp_path / "bad.jsonl"
    p.write_text(text)
    with pytest.raises(ev.EvalInputError, match=match):
        ev.load_ood(p)


def test_missing_questions_file(tmp_path):
    with pytest.raises(ev.EvalInputError, match="nope.jsonl: cannot read"):
        ev.load_questions(tmp_path / "nope.jsonl")


# --------------------------------------------------------------------------- sweep


@dataclass(frozen=True)
class FakeHit:
    chunk_id: int
    cosine_distance: float


def test_sweep_rows_and_recommendation():
    contents = {0: "has NEEDLE", 1: "other", 2: "other two", 3: "x", 4: "y", 5: "z"}
    gate, _ = ev.get_gate()
    in_domain = [
        ([FakeHit(0, 0.30), FakeHit(1, 0.50)], "a", "NEEDLE"),  # answerable, survives any cut > 0.30
        ([FakeHit(1, 0.40), FakeHit(0, 0.60)], "b", "NEEDLE"),  # answerable, lost under 0.60
        ([FakeHit(1, 0.45)], "c", "NEEDLE"),  # not answerable (needle not in top 4)
    ]
    ood = [([FakeHit(3, 0.55)], "near"), ([FakeHit(4, 0.80)], "far")]
    rows = ev.sweep_rows(in_domain, ood, [0.35, 0.5, 0.65, 0.9], gate, contents)
    got = [(r.threshold, r.bluffs_near, r.bluffs_far, r.lost, r.refused) for r in rows]
    assert got == [(0.35, 0, 0, 1, 2), (0.5, 0, 0, 1, 0), (0.65, 1, 0, 0, 0), (0.9, 1, 1, 0, 0)]
    rec, rule = ev.recommend_threshold(rows, n_answerable=2, n_ood=2)
    assert rec == 0.65 and "fewest bluffs" in rule  # loses nothing, bluffs least among those
    rec, rule = ev.recommend_threshold(rows, n_answerable=2, n_ood=2, max_lost_share=0.5)
    assert rec == 0.5  # may lose 1: 0.35 and 0.5 tie on bluffs and losses, the larger wins
    rec, rule = ev.recommend_threshold(rows[:2], n_answerable=2, n_ood=2)
    assert rec == 0.5 and "minimum" in rule  # every row loses too much: smallest bluff share + lost share


# --------------------------------------------------------------------------- a tiny corpus, recall known by construction

# Three documents on unrelated topics. Each needle is a sentence of its own paragraph; the queries are the
# needle's own words, so a correct retriever ranks the holding chunk first. In "bees.md" one needle sits
# across character 512 of a single long paragraph: blind 512-character cutting (A) destroys it, while the
# boundary strategies (C, E) keep it whole. A fourth question's needle is in no document (destroyed by all).
BEES = (
    "# Bees\n\n## Colony life\n\n"
    + "Honey bees live in colonies ruled by a single queen who lays the eggs for the whole hive every day. " * 4
    + "\n\nWorker bees perform a waggle dance to tell their sisters the direction and distance of flowers. "
    "The dance is repeated many times inside the dark hive so that foragers can learn the route. "
    "Drones exist mainly to mate with young queens from other colonies during the summer flights.\n"
)
KEYS = (
    "# Locks\n\n## Pin tumblers\n\nA pin tumbler lock holds spring loaded pins that block the plug from turning "
    "until the correct key lifts every pin to the shear line.\n\n## Safes\n\nBank vaults use time locks that "
    "refuse to open before a set hour even with the right combination.\n"
)
VOLCANO = (
    "# Volcanoes\n\n## Eruptions\n\nBasaltic lava is runny because it contains little silica, so gas escapes "
    "easily and eruptions are gentle.\n\n## Ash\n\nVolcanic ash can stop jet engines because the glass "
    "particles melt inside the hot turbine.\n"
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from rag.ingest.extract import extract_path

    d = tmp_path_factory.mktemp("tiny")
    for name, text in (("bees.md", BEES), ("locks.md", KEYS), ("volcanoes.md", VOLCANO)):
        (d / name).write_text(text)
    needles = {
        "q1": ("locks.md", "refuse to open before a set hour even with the right combination"),
        "q2": ("volcanoes.md", "Volcanic ash can stop jet engines because the glass particles melt inside the hot turbine."),
        "q3": ("bees.md", "Worker bees perform a waggle dance to tell their sisters the direction and distance of flowers."),
        "q4": ("nowhere.md", "This sentence is in no document at all."),
    }
    qf = d / "questions.jsonl"
    qf.write_text("".join(json.dumps({"id": k, "doc": doc, "needle": n, "query_course": n, "query_ticket": n.lower()}) + "\n"
                          for k, (doc, n) in needles.items()))
    of = d / "ood.jsonl"
    of.write_text(json.dumps({"id": "o1", "query": "Who won the 2018 FIFA World Cup final?", "kind": "far"}) + "\n"
                  + json.dumps({"id": "o2", "query": "How do magma chambers refill between eruptions?", "kind": "near"}) + "\n")
    docs = [extract_path(d / n) for n in ("bees.md", "locks.md", "volcanoes.md")]
    return d, docs, ev.load_questions(qf), ev.load_ood(of)


@pytest.mark.slow
def test_tiny_corpus_recall_known_by_construction(tiny, embedder, tmp_path):
    d, docs, questions, ood = tiny
    # where blind cutting falls: the bees needle must straddle a 512-character boundary of its document
    canon = docs[0].canonical
    i = canon.index("Worker bees perform")
    needle = questions[2].needle
    assert i // 512 != (i + len(needle) - 1) // 512, "construction: the bees needle must cross a blind cut"
    cache = ev.EmbeddingCache(tmp_path / "cache.sqlite")
    res = ev.run_evaluation(docs, questions, ood, strategies=["A", "C", "E"], modes=["dense", "bm25", "hybrid"],
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
    cache2 = ev.EmbeddingCache(tmp_path / "cache.sqlite")
    ev.run_evaluation(docs, questions, ood, strategies=["A"], modes=["dense"], embedder=embedder, cache=cache2)
    assert cache2.misses == 0 and cache2.hits > 0
    md = ev.write_report(res, tmp_path / "out")
    text = md.read_text()
    assert "Does E beat A at R@20 (hybrid)?" in text and "Strategy A destroys 2 of 4 needles" in text
    for png in ("recall.png", "distances.png", "sweep.png"):
        assert (tmp_path / "out" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "out" / "report.json").read_text())["n_queries"] == 8


@pytest.mark.slow
def test_cli_eval_json(tiny, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rag.cli.main import main

    d, *_ = tiny
    monkeypatch.setenv("RAG_EMBED_CACHE", str(tmp_path / "c.sqlite"))
    r = CliRunner().invoke(main, ["eval", "--questions", str(d / "questions.jsonl"), "--ood", str(d / "ood.jsonl"),
                                  "--docs", str(d), "--strategies", "E", "--modes", "hybrid,rerank",
                                  "--out", str(tmp_path / "o"), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["strategies"] == ["E"] and out["modes"] == ["hybrid"] and "rerank" in out["skipped_modes"]
    assert (tmp_path / "o" / "report.md").exists()


@pytest.mark.slow
def test_cli_eval_bad_strategy(tiny, tmp_path):
    from click.testing import CliRunner

    from rag.cli.main import main

    d, *_ = tiny
    r = CliRunner().invoke(main, ["eval", "--questions", str(d / "questions.jsonl"), "--ood", str(d / "ood.jsonl"),
                                  "--docs", str(d), "--strategies", "Z", "--out", str(tmp_path / "o")])
    assert r.exit_code != 0 and "unknown strategy 'Z'" in r.output


@pytest.mark.slow
def test_evaluation_page_runs_on_the_users_store(tmp_path, monkeypatch, embedder):
    from streamlit.testing.v1 import AppTest

    from rag.index.store import Store
    from rag.settings import get_settings

    monkeypatch.setenv("RAG_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("RAG_EMBED_CACHE", str(tmp_path / "cache.sqlite"))
    with Store(tmp_path / "store", get_settings(), embedder=embedder) as s:
        for name, text in (("locks.md", KEYS), ("volcanoes.md", VOLCANO)):
            assert s.ingest_bytes(text.encode(), name).status == "ready"
    page = Path(__file__).resolve().parents[2] / "pages" / "3_Evaluation.py"
    at = AppTest.from_file(str(page), default_timeout=180).run()
    assert not at.exception
    q = json.dumps({"id": "q1", "doc": "locks.md", "needle": "refuse to open before a set hour",
                    "query_course": "When do bank vault time locks open?", "query_ticket": "vault wont open at night"})
    o = json.dumps({"id": "o1", "query": "How long should I boil an egg?", "kind": "far"})
    at.file_uploader(key="eval_questions").set_value([("q.jsonl", q.encode(), "application/json")]).run()
    at.file_uploader(key="eval_ood").set_value([("o.jsonl", o.encode(), "application/json")]).run()
    at.button(key="eval_run").click().run()
    assert not at.exception and not at.error
    assert any("Does E beat A at R@20" in m.value for m in at.markdown)
    assert len(at.get("image")) == 3  # recall, sweep, distances
