"""Leave-one-corpus-out helpers (rag.evaluation.loco, issue 15): the cut rule, the verdicts, the counts."""

import numpy as np

from rag.evaluation import loco


def q(i, kind, wording="ood", answerable=False, d=0.4, x=0.0):
    return loco.GateQuery(i, kind, wording, f"query {i}", answerable, d, {"f": {"x": x}})


def test_groups_and_labels():
    assert q("a", "in", "user", True).group == "user" and q("a", "in", "user", True).label == 1
    assert q("b", "in", "user", False).label == -1
    assert q("c", "near").group == "near" and q("c", "near").label == 0


def test_verdicts_three_bands_and_the_threshold():
    v = loco.verdicts(np.array([0.9, 0.5, 0.1, 0.9]), np.array([0.3, 0.3, 0.3, 0.8]), 0.6, 0.3)
    assert v.tolist() == ["answered", "mentions", "refused", "refused"]


def test_cut_rule_bounds_near_answers_and_in_domain_refusals():
    qs = ([q(f"i{k}", "in", "doc", True) for k in range(40)] + [q(f"n{k}", "near") for k in range(10)]
          + [q(f"f{k}", "far", d=0.9) for k in range(3)])
    p = np.array([0.2 + 0.02 * k for k in range(40)] + [0.1 * k for k in range(10)] + [0.99] * 3)
    answer, mention = loco.choose_cuts(p, qs)
    near_answered = (p[40:50] >= answer).mean()
    assert near_answered <= 0.2 and (p[40:50] >= answer - 0.01).mean() > 0.2  # the lowest such cut
    assert (p[:40] < mention).mean() <= 0.025 and mention <= answer
    table = loco.verdict_table(qs, loco.verdicts(p, np.array([x.nearest_distance for x in qs]), answer, mention))
    assert table["far"] == (3, 0, 0, 3)  # no chunk under the threshold
    assert table["doc"][0] == 40 and table["doc (needle in top 4)"] == table["doc"]


def test_run_fits_on_one_corpus_and_scores_the_other():
    rng = np.random.default_rng(0)
    fit = ([q(f"i{k}", "in", "doc", True, x=rng.normal(1)) for k in range(30)]
           + [q(f"n{k}", "near", x=rng.normal(-1)) for k in range(15)] + [q("far", "far", d=0.9, x=-3.0)])
    test = [q("t1", "in", "user", True, x=2.0), q("t2", "near", x=-2.0)]
    r = loco.run(fit, test, "f", ("x",))
    assert r.fit_probability.shape == (46,) and r.test_probability.shape == (2,)
    assert r.test_probability[0] > r.test_probability[1] and r.mention_cut <= r.answer_cut
