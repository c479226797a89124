"""Tests of rag.evaluation.metrics: the statistics against known values and scipy, and the metrics on small lists."""

from __future__ import annotations

import pytest

from rag.evaluation import metrics as mt
from rag.evaluation.data import Question

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
    lo, hi = mt.wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=6e-5)
    assert hi == pytest.approx(high, abs=6e-5)


def test_wilson_matches_scipy_on_a_grid():
    from scipy.stats import binomtest

    for n in (1, 7, 48, 96):
        for k in range(n + 1):
            ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
            assert mt.wilson_interval(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_wilson_edge_cases():
    assert mt.wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes <= n"):
        mt.wilson_interval(5, 4)


@pytest.mark.parametrize(
    "wins, losses, p",
    [(18, 3, 0.0015), (12, 2, 0.0129), (25, 4, 0.0001), (1, 1, 1.0), (6, 0, 0.03125)],
)
def test_sign_test_known_values(wins, losses, p):
    a = [True] * wins + [False] * losses + [True, False] * 3  # ties: (T,T) and (F,F)
    b = [False] * wins + [True] * losses + [True, False] * 3
    t = mt.sign_test(a, b)
    assert (t.wins, t.losses) == (wins, losses)
    assert t.p == pytest.approx(p, abs=5e-5)


def test_sign_test_no_discordant_pairs_and_bad_input():
    assert mt.sign_test([True, False], [True, False]) == mt.SignTest(0, 0, 1.0)
    with pytest.raises(ValueError, match="equal length"):
        mt.sign_test([True], [True, False])
    assert mt.format_p(0.00001) == "< 0.0001"
    assert str(mt.SignTest(18, 3, 0.00149)) == "+18 / -3, p = 0.0015"



# --------------------------------------------------------------------------- metrics


def test_rank_recall_mrr():
    contents = ["alpha beta", "the whole needle here", "needle again"]
    assert mt.first_hit_rank(contents, "whole needle") == 2
    assert mt.first_hit_rank(contents, "whole needle again") is None  # the WHOLE needle, in ONE chunk
    ranks = [1, 2, None, 5, 20, 21]
    assert mt.hits_at(ranks, 4) == [True, True, False, False, False, False]
    assert mt.recall_at(ranks, 1) == pytest.approx(1 / 6)
    assert mt.recall_at(ranks, 20) == pytest.approx(4 / 6)
    assert mt.mean_reciprocal_rank(ranks) == pytest.approx((1 + 0.5 + 0.2 + 0.05 + 1 / 21) / 6)
    assert mt.recall_at([], 4) == 0.0 and mt.mean_reciprocal_rank([]) == 0.0


def test_hit_within_chars_counts_only_whole_chunks():
    small = ["x" * 1000, "y" * 1000, "needle" + "z" * 100]
    assert not mt.hit_within_chars(small, "needle", 2000)  # 1000 + 1000 + 106 > 2000
    assert mt.hit_within_chars(small, "needle", 2000 + 6 + 100)
    assert not mt.hit_within_chars(["needle" + "z" * 4000], "needle", 2000)  # one oversized chunk delivers nothing


def test_destroyed_needles():
    qs = [Question("q1", "d", "cut here", "a", "b"), Question("q2", "d", "kept", "a", "b")]
    assert mt.destroyed_needles(qs, ["... cut", "here ...", "it is kept"]) == ["q1"]


def test_needle_matches_across_line_breaks_but_not_across_chunks():
    pdf_text = "the host caches this value and does not\nexpect a device to change it dynamically."
    needle = "does not expect a device to change it"
    assert mt.holds_needle(pdf_text, needle)
    assert mt.first_hit_rank(["other", pdf_text], needle) == 2
    assert mt.holds_needle("a  b\tc", "a b c") and mt.holds_needle("a b c", "a\nb c")
    assert not mt.holds_needle("does not", needle)
    assert mt.destroyed_needles([Question("d1", "x", needle, "a", "b")], ["does not expect", "a device to change it"]) == ["d1"]


def test_summarize_ranks():
    s = mt.summarize_ranks([1, 3, None, 10], "user")
    assert (s.group, s.n_queries) == ("user", 4)
    assert [s.recall[k].hits for k in mt.RECALL_KS] == [1, 2, 2, 3]
    assert s.recall[4].value == 0.5 and (s.recall[4].low, s.recall[4].high) == mt.wilson_interval(2, 4)
    assert s.mrr == pytest.approx((1 + 1 / 3 + 0.1) / 4)
    empty = mt.summarize_ranks([])
    assert empty.n_queries == 0 and empty.recall[20].value == 0.0 and empty.mrr == 0.0


def test_a_needle_of_table_cells_matches_the_markdown_row_it_became():
    from rag.evaluation.metrics import holds_needle

    table = ("| ID | Name | C type | Python |\n|---|---|---|---|\n| 0x14 | INT32 | int32_t | int |\n"
             "| 0x24 | FLOAT | float | float |\n| 0x28 | DOUBLE | double | float |")
    assert holds_needle(table, "0x14 INT32 int32_t int 0x24 FLOAT float float 0x28 DOUBLE double float")
    assert not holds_needle(table, "0x14 INT32 int32_t int 0x28 DOUBLE")  # cells out of order: no match
    assert not holds_needle(table, "INT64")
