"""The calibrated gate (issue 15): duplicates collapsed, three verdicts, honest language refusals, regate."""

import pytest

from rag.answer.gate import regate
from rag.answer.gate.calibrated_gate import (
    apply_calibrated_gate,
    calibrated_model,
    collapse_duplicates,
    language_refusal_text,
    verdict_for,
)
from rag.answer.gate.calibration import Calibration
from rag.answer.gate.learned_gate import CALIBRATED_FEATURES, GateModel
from rag.text import TermStats
from rag.types import Hit, Verdict

CAL = Calibration(n_chunks=3, n_distinct=3, n_pseudo=3, self_distance_raw=0.3, self_distance=0.3,
                  far_distance=0.8, far_low=0.7, languages={"en": 1.0})
TEXTS = {1: "[Guide > Parking]\nParking permits are renewed every January at the front desk.",
         2: "[Guide > Bicycles]\nEmployees who cycle to work can use the showers in building B.",
         3: "[Copy > Parking]\nParking permits are renewed every January at the front desk."}
CONTENTS = {i: t.split("\n", 1)[1] for i, t in TEXTS.items()}
STATS = TermStats.from_texts([TEXTS[1], TEXTS[2]])


def hit(cid, rank, d):
    return Hit(chunk_id=cid, rank=rank, fused_rank=rank, rrf_score=1 / (60 + rank), cosine_distance=d,
               dense_rank=rank, bm25_rank=rank, bm25_score=1.0)


def distance_model(cut=0.6, mention=0.3):
    """Score falls with the relative distance only: sigmoid(-4 * relative_distance + 1)."""
    names = list(CALIBRATED_FEATURES)
    coef = [-4.0 if n == "relative_distance" else 0.0 for n in names]
    return GateModel(names, [0.0] * len(names), [1.0] * len(names), coef, 1.0, default_min_score=cut,
                     default_mention_score=mention)


def test_identical_contents_collapse_to_the_best_ranked():
    kept, dups = collapse_duplicates([hit(3, 1, 0.2), hit(2, 2, 0.5), hit(1, 3, 0.2)], CONTENTS)
    assert [h.chunk_id for h in kept] == [3, 2]
    assert dups == {3: (1,)}


def test_verdict_bands():
    assert verdict_for(0.7, 0.6, 0.3) is Verdict.ANSWERED
    assert verdict_for(0.4, 0.6, 0.3) is Verdict.MENTIONS
    assert verdict_for(0.2, 0.6, 0.3) is Verdict.REFUSED
    assert verdict_for(0.4, 0.35, 0.5) is Verdict.ANSWERED  # mention cut above the answer cut: no band
    assert verdict_for(0.3, 0.35, 0.5) is Verdict.REFUSED


@pytest.mark.parametrize("d, verdict", [(0.30, "answered"), (0.45, "mentions"), (0.66, "refused")])
def test_three_verdicts_from_the_relative_distance(d, verdict):
    g = apply_calibrated_gate("When are parking permits renewed?", [hit(1, 1, d), hit(2, 2, 0.67)], TEXTS,
                              CONTENTS, STATS, CAL, model=distance_model(), question_lang=None)
    assert g.verdict == verdict and g.kind == "calibrated"
    assert g.refused == (verdict == "refused")
    assert bool(g.sources) == (verdict != "refused")
    assert (g.notice is not None) == (verdict == "mentions")
    assert g.evidence.features["relative_distance"] == pytest.approx((d - 0.3) / 0.5, abs=1e-3)
    assert "this store's scale" in g.why



def test_why_of_a_threshold_refusal_never_claims_the_score_is_under_the_cut():
    """'Did the load test pass?' was refused with why '... score 0.43 < 0.25': the distance threshold refused it."""
    g = apply_calibrated_gate("When are parking permits renewed?", [hit(1, 1, 0.3)], TEXTS, CONTENTS, STATS, CAL,
                              threshold=0.25, model=distance_model(), question_lang=None)
    assert g.refused and g.reason == "threshold" and g.score >= 0.3
    assert g.why.endswith(f"score {g.score:.2f} >= 0.30, but no chunk is under the cosine distance threshold 0.25")
    low = apply_calibrated_gate("When are parking permits renewed?", [hit(1, 1, 0.66)], TEXTS, CONTENTS, STATS, CAL,
                                model=distance_model(), question_lang=None)
    assert low.refused and low.why.endswith(f"score {low.score:.2f} < 0.30")


def test_duplicates_are_cited_once_and_counted():
    g = apply_calibrated_gate("When are parking permits renewed?", [hit(1, 1, 0.3), hit(3, 2, 0.3), hit(2, 3, 0.6)],
                              TEXTS, CONTENTS, STATS, CAL, model=distance_model(), question_lang=None)
    assert [h.chunk_id for h in g.sources] == [1, 2]
    assert g.duplicates == {1: (3,)}


def test_other_language_is_said_plainly_never_nothing_under_the_threshold():
    q = "Wann werden die Parkausweise erneuert?"
    g = apply_calibrated_gate(q, [hit(1, 1, 0.9)], TEXTS, CONTENTS, STATS, CAL, model=distance_model(),
                              question_lang=("de", 0.99))
    assert g.refused and g.reason == "language"
    assert "German" in g.refusal and "English" in g.refusal and "nothing under" not in g.refusal
    assert g.language.to_json() == {"question": "de", "probability": 0.99, "documents": ["en"], "differs": True}
    same = apply_calibrated_gate(q, [hit(1, 1, 0.9)], TEXTS, CONTENTS, STATS,
                                 Calibration(3, 3, 3, 0.3, 0.3, 0.8, 0.7, {"en": 0.8, "de": 0.2}),
                                 model=distance_model(), question_lang=("de", 0.99))
    assert same.reason == "threshold" and "nothing under" in same.refusal
    assert language_refusal_text("q", "fr", ["en"]).startswith('NO ANSWER: "q" seems to be in French')


def test_regate_moves_between_the_three_verdicts_without_searching():
    g = apply_calibrated_gate("When are parking permits renewed?", [hit(1, 1, 0.3), hit(3, 2, 0.3)], TEXTS,
                              CONTENTS, STATS, CAL, model=distance_model(), question_lang=None)
    assert g.verdict == "answered"
    assert regate(g, 0.675, 4, min_score=0.9).verdict == "mentions"
    assert regate(g, 0.675, 4, min_score=0.99).notice.startswith("MAY NOT ANSWER")
    low = regate(g, 0.25, 4)
    assert low.verdict == "refused" and low.reason == "threshold" and "nothing under cosine distance 0.25" in low.refusal
    back = regate(low, 0.675, 4)
    assert back.verdict == "answered" and [h.chunk_id for h in back.sources] == [1]  # the copy stays collapsed


def test_bad_cuts_raise():
    with pytest.raises(ValueError, match="min_score"):
        apply_calibrated_gate("q", [], TEXTS, CONTENTS, STATS, CAL, model=distance_model(), min_score=1.5,
                              question_lang=None)


def test_the_shipped_model_reads_the_calibrated_features():
    m = calibrated_model()
    assert set(m.features) <= set(CALIBRATED_FEATURES)
    assert m.default_mention_score is not None and 0.0 <= m.default_mention_score <= m.default_min_score <= 1.0
    assert "loco" in m.info


def test_regate_takes_both_cuts_and_rewrites_why_at_them():
    """Issue 42: the app's what-if said "answered" and "score 0.05 < 0.27" in one box at cut 0: ``why`` kept
    the cut the gate first decided with. Re-decided by the gate, it names the cuts it was re-decided at."""
    from rag.answer.gate import GateKnobs
    from rag.answer.gate.calibrated_gate import CalibratedGate

    g = apply_calibrated_gate("When are parking permits renewed?", [hit(1, 1, 0.6)], TEXTS, CONTENTS, STATS, CAL,
                              model=distance_model(), question_lang=None)
    assert g.verdict == "refused" and g.score < 0.3 and "< 0.30" in g.why
    gate = CalibratedGate(distance_model())
    at0 = gate.regate(g, GateKnobs(0.675, 4, 0.0, 0.0))
    assert at0.verdict == "answered" and f"score {g.score:.2f} >= 0.00" in at0.why and "< 0.30" not in at0.why
    band = gate.regate(g, GateKnobs(0.675, 4, 0.6, round(g.score - 0.01, 2)))
    assert band.verdict == "mentions" and band.mention_score == round(g.score - 0.01, 2)
    assert f"in [{band.mention_score:.2f}, 0.60)" in band.why
    assert gate.default_mention_score() == 0.3
    with pytest.raises(ValueError, match="mention_score"):
        regate(g, 0.675, 4, mention_score=1.5)


def test_a_passage_that_stands_apart_from_the_next_four_is_answered_not_mentioned():
    """Issue 40: in the mentions band, a nearest passage far closer than the next four is answered (the gate's
    ``relative_gap`` over STANDOUT_GAP), also when re-gated; under five candidates the rule does not apply."""
    from rag.answer.gate import GateKnobs
    from rag.answer.gate.calibrated_gate import STANDOUT_GAP, CalibratedGate

    texts = TEXTS | {i: f"[Guide > Other {i}]\nThe canteen opens at {i} o'clock on weekdays." for i in (4, 5, 6)}
    contents = {i: t.split("\n", 1)[1] for i, t in texts.items()}
    q = "When are parking permits renewed?"
    apart = [hit(1, 1, 0.45)] + [hit(c, r, 0.67) for r, c in enumerate((2, 4, 5, 6), start=2)]
    close = [hit(1, 1, 0.45)] + [hit(c, r, 0.50) for r, c in enumerate((2, 4, 5, 6), start=2)]
    g = apply_calibrated_gate(q, apart, texts, contents, STATS, CAL, model=distance_model(), question_lang=None)
    assert g.score < 0.6 and g.evidence.features["relative_gap"] > STANDOUT_GAP
    assert g.verdict == "answered" and g.notice is None and "stands apart from the next four" in g.why
    m = apply_calibrated_gate(q, close, texts, contents, STATS, CAL, model=distance_model(), question_lang=None)
    assert m.verdict == "mentions" and m.score == g.score and "stands apart" not in m.why
    few = apply_calibrated_gate(q, apart[:3], texts, contents, STATS, CAL, model=distance_model(), question_lang=None)
    assert few.evidence.features["relative_gap"] > STANDOUT_GAP and few.verdict == "mentions"
    gate = CalibratedGate(distance_model())
    assert gate.regate(g, GateKnobs(0.675, 4)).verdict == "answered"
    assert gate.regate(g, GateKnobs(0.675, 4, 0.9, 0.3)).verdict == "answered"  # the band, not the answer cut
    assert gate.regate(g, GateKnobs(0.675, 4, 0.9, 0.5)).verdict == "refused"  # under the lower cut: refused
    assert gate.regate(g, GateKnobs(0.4, 4)).verdict == "refused"  # nothing under the threshold
