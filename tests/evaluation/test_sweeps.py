"""Tests of rag.evaluation.sweeps: bluffs and lost answers counted per threshold, and the recommendation rule."""

from __future__ import annotations

from dataclasses import dataclass

from rag.evaluation import sweeps as sw


@dataclass(frozen=True)
class FakeHit:
    chunk_id: int
    cosine_distance: float
    unit_distance: float | None = None  # as rag.types.Hit: the dense leg's, when units are searched


def test_sweep_rows_and_recommendation():
    contents = {0: "has NEEDLE", 1: "other", 2: "other two", 3: "x", 4: "y", 5: "z"}
    gate, _ = sw.get_gate()
    in_domain = [
        ([FakeHit(0, 0.30), FakeHit(1, 0.50)], "a", "NEEDLE"),  # answerable, survives any cut > 0.30
        ([FakeHit(1, 0.40), FakeHit(0, 0.60)], "b", "NEEDLE"),  # answerable, lost under 0.60
        ([FakeHit(1, 0.45)], "c", "NEEDLE"),  # not answerable (needle not in top 4)
    ]
    ood = [([FakeHit(3, 0.55)], "near"), ([FakeHit(4, 0.80)], "far")]
    rows = sw.sweep_rows(in_domain, ood, [0.35, 0.5, 0.65, 0.9], gate, contents)
    got = [(r.threshold, r.bluffs_near, r.bluffs_far, r.lost, r.refused) for r in rows]
    assert got == [(0.35, 0, 0, 1, 2), (0.5, 0, 0, 1, 0), (0.65, 1, 0, 0, 0), (0.9, 1, 1, 0, 0)]
    rec, rule = sw.recommend_threshold(rows, n_answerable=2, n_ood=2)
    assert rec == 0.65 and "fewest bluffs" in rule  # loses nothing, bluffs least among those
    rec, rule = sw.recommend_threshold(rows, n_answerable=2, n_ood=2, max_lost_share=0.5)
    assert rec == 0.5  # may lose 1: 0.35 and 0.5 tie on bluffs and losses, the larger wins
    rec, rule = sw.recommend_threshold(rows[:2], n_answerable=2, n_ood=2)
    assert rec == 0.5 and "minimum" in rule  # every row loses too much: smallest bluff share + lost share


class _CopyingRun(dict):
    """A run whose hit lists are handed out as fresh copies on each access (any upstream copy or slice does this)."""

    def __getitem__(self, key):
        return list(super().__getitem__(key))


def test_combined_sweep_reads_each_query_score_by_its_key_not_by_the_list_object():
    """Review 2026-12-01, defect 1: scores were looked up by id(hits) with a default of 1.0, so a copied hit list let
    a query the learned gate refuses through. Here the out-of-domain query scores 0.1 (under the cut 0.5): it must
    never count as a bluff, and the in-domain query scored 0.2 must count as refused at every threshold."""
    from types import SimpleNamespace as NS

    runs = {("E", "hybrid"): _CopyingRun({"q1/doc": [FakeHit(0, 0.3)], "q2/doc": [FakeHit(1, 0.3)],
                                          "o1": [FakeHit(2, 0.3)]})}
    result = NS(gate_run=NS(keys=["q1/doc", "q2/doc", "o1"], probability=[0.9, 0.2, 0.1],
                            model=NS(default_min_score=0.5),
                            sweep=NS(strategy="E", mode="hybrid", n_answerable=2, n_near=1, n_far=0)),
                indexes={"E": NS(content={0: "has NEEDLE", 1: "has NEEDLE", 2: "other"}.__getitem__)},
                runs=runs, queries=[NS(key="q1/doc", needle="NEEDLE"), NS(key="q2/doc", needle="NEEDLE")],
                ood=[NS(id="o1", kind="near")])
    sweep = sw.combined_gate_sweep(result, thresholds=[0.5, 0.9])
    assert [(r.bluffs_near, r.lost, r.refused) for r in sweep.rows] == [(0, 1, 1), (0, 1, 1)]
