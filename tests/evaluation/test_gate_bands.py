"""The gate's bands against the passage's rank (rag.evaluation.gate_bands, issue 40): records, tables, fits, rules."""

import importlib.util
from pathlib import Path

import numpy as np

from rag.answer.gate.learned_gate import CALIBRATED_FEATURES
from rag.evaluation import gate_bands as gb
from rag.types import Hit

ROOT = Path(__file__).resolve().parents[2]


def rec(corpus, key, kind="in", wording="user", rank=1, verdict="answered", nearest=0.4, **f):
    feats = {"relative_distance": 0.3, "coverage": 0.6, "relative_unit_distance": 0.2} | f
    return gb.GateRecord(corpus, key, kind, wording, f"query {key}", rank, verdict, 0.5, nearest, feats)


def test_candidate_features_read_the_legs_the_units_and_the_documents():
    hits = [Hit(1, 1, 1, 0.032, 0.50, dense_rank=3, bm25_rank=1), Hit(2, 2, 2, 0.031, 0.45, dense_rank=1),
            Hit(3, 3, 3, 0.016, 0.60, bm25_rank=2)]
    f = gb.candidate_features(hits, {1: "a", 2: "a", 3: "b"}, {1: 0.7}, 0.4, lambda d: d * 2)
    assert f["unit_distance"] == 1 - 0.7 and abs(f["relative_unit_distance"] - 0.6) < 1e-9  # the unit beats 0.45
    assert f["dense_first_fused_rank"] == 2 and f["top_in_both_legs"] == 1.0 and f["bm25_weight"] == 0.4
    assert abs(f["rrf_margin"] - (0.032 - 0.016) / 0.032) < 1e-9  # against the other document's best hit
    assert abs(f["distance_margin"] - 0.15) < 1e-9 and abs(f["distance_gap_12"] - 0.05) < 1e-9
    empty = gb.candidate_features([], {}, {}, 1.0, lambda d: d)
    assert empty["unit_distance"] == 2.0 and set(empty) == set(gb.CANDIDATE_FEATURES)


def test_records_round_trip_and_the_band_table_splits_by_rank(tmp_path):
    rs = [rec("c", "q1/user", rank=2, verdict="refused"), rec("c", "q2/user", rank=9, verdict="mentions"),
          rec("c", "q1/doc", wording="doc"), rec("c", "o1", kind="near", wording="ood", rank=None, verdict="mentions")]
    gb.save(rs, tmp_path / "r.jsonl")
    assert gb.load(tmp_path / "r.jsonl") == rs
    table = gb.band_table(rs)
    assert "| c | user | top 4 | 1 | 1 | 0 | 0 |" in table and "| c | user | not in top 4 | 1 | 0 | 1 | 0 |" in table
    assert "| c | near | - | 1 | 0 | 1 | 0 |" in table
    assert gb.outcome_cells(rs, [r.verdict for r in rs]) == {"doc": "1 (1) / 1", "user": "0 (0) / 1", "near": "1 (0) / 1"}


def test_a_rescue_cut_passes_no_out_of_domain_query_of_the_fitting_corpus():
    rs = [rec("a", "q1/user", verdict="refused", relative_unit_distance=0.2),
          rec("a", "q2/user", verdict="refused", relative_unit_distance=0.5),
          rec("a", "o1", kind="near", wording="ood", rank=None, verdict="refused", relative_unit_distance=0.4),
          rec("a", "q3/user", verdict="refused", nearest=0.8, relative_unit_distance=0.0)]  # over the threshold
    cut = gb.rescue_rule(rs, "a", "relative_unit_distance")
    assert 0.2 < cut < 0.4
    assert gb.rescue(rs, "relative_unit_distance", cut) == ["mentions", "refused", "refused", "refused"]
    assert gb.rescue_rule(rs[2:3], "a", "relative_unit_distance") is None


def test_loco_compare_fits_on_one_corpus_and_counts_on_the_other():
    rng = np.random.default_rng(1)
    rs = []
    for c in ("a", "b"):
        for i in range(20):
            x = rng.normal(0.2, 0.1)
            rs.append(rec(c, f"q{i}/user", relative_distance=x, coverage=1 - x, relative_unit_distance=x))
            rs.append(rec(c, f"q{i}/doc", wording="doc", relative_distance=x, coverage=1 - x, relative_unit_distance=x))
        for i in range(8):
            x = rng.normal(0.8, 0.1)
            rs.append(rec(c, f"o{i}", kind="near", wording="ood", rank=None, relative_distance=x, coverage=1 - x,
                          relative_unit_distance=x))
    lines = gb.loco_compare(rs, {"+ units": (*gb.SHIPPED, "relative_unit_distance")})
    assert len(lines) == 2 + 2 * 2 and any("a -> b" in line and "+ units" in line for line in lines)


def test_the_script_imports_and_names_its_candidates():
    spec = importlib.util.spec_from_file_location("gate_bands_script", ROOT / "scripts" / "gate_bands.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    known = set(gb.CANDIDATE_FEATURES) | set(CALIBRATED_FEATURES)  # what a record carries
    assert all(set(v) <= known for v in mod.CANDIDATES.values())


def test_a_mentions_rule_moves_mentions_up_and_nothing_else():
    rs = [rec("a", "q1/user", verdict="mentions", relative_gap=0.5), rec("a", "q2/user", verdict="refused", relative_gap=0.9),
          rec("a", "o1", kind="near", wording="ood", rank=None, verdict="mentions", relative_gap=0.3)]
    cut = gb.rescue_rule(rs, "a", "relative_gap", below=False, band="mentions")
    assert 0.3 < cut < 0.5
    assert gb.rescue(rs, "relative_gap", cut, below=False, band="mentions") == ["answered", "refused", "mentions"]
    assert any("mentions -> answered" in line for line in gb.rescue_table(rs, [("relative_gap", False)], "mentions"))


def test_auc_counts_ties_half_and_the_table_has_a_row_per_held_out_corpus():
    assert gb.auc([0.9, 0.5], [0.5, 0.1]) == 0.875 and np.isnan(gb.auc([], [0.1]))
    rs = [rec(c, f"q{i}/{w}", wording=w, relative_distance=0.1 * i, coverage=0.5) for c in ("a", "b")
          for i in range(4) for w in ("doc", "user")]
    rs += [rec(c, f"o{i}", kind="near", wording="ood", rank=None, relative_distance=0.5 + 0.1 * i, coverage=0.4)
           for c in ("a", "b") for i in range(3)]
    lines = gb.auc_table(rs, {}, ["a"])
    assert len(lines) == 3 and lines[2].startswith("| a -> b | 1.00 / 1.00")
