"""The features of one answer, the combiner over them and the vetoes on "supported" (rag.answer.check.confidence, issue 39)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from rag.answer.check.confidence import (
    FEATURES,
    NEUTRAL,
    Combiner,
    answer_features,
    longest_run,
    swapped_words,
    unaddressed,
    verdict_from,
    vetoes,
)
from rag.answer.check.probes import TokenProbs, YesNo
from rag.answer.cite import Citation
from rag.answer.gate import apply_gate
from rag.answer.key_passage import KeyPassage, KeySentence
from rag.answer.pipeline import check_answer
from rag.answer.record import Answer
from rag.types import AnswerVerdict, Hit

LEAVE = "Full-time staff get 28 days of annual leave. Part-time staff get it pro rata. Sabbaticals are not offered."
OTHER = "The office opens at 8 am. Visitors sign in at the front desk."
PROPS = "Do not populate result.fingerprints. Do populate result.partialFingerprints when your tool can."


def _cite(i: int, quote: str, doc: str | None = None, dist: float = 0.3) -> Citation:
    return Citation(index=i, document_id=doc or f"d{i}", document_name="policy.md", locator_label=f"policy.md > {i}",
                    fragment="#char=0,10", quote=quote, cosine_distance=dist, fused_rank=i, page=None, start=0,
                    end=len(quote), media_type="text/markdown", chunk_id=i, section=("Leave",))


def _answer(q: str, raw: str | None, quotes=(LEAVE, OTHER), kp_text: str = "Full-time staff get 28 days of annual leave.",
            kp_score: float = 0.8) -> Answer:
    hits = [Hit(chunk_id=i, rank=i, fused_rank=i, rrf_score=1 / (60 + i), cosine_distance=0.3 + 0.05 * i,
                dense_rank=i, bm25_rank=i) for i in (1, 2)]
    gate = apply_gate(q, hits, 0.675, 4)
    cites = [_cite(i, t, dist=0.3 + 0.05 * (i - 1)) for i, t in enumerate(quotes, 1)]
    kp = KeyPassage((KeySentence(1, kp_text, 0, len(kp_text), "policy.md > 1", kp_score + 0.1),), 1.0, kp_text)
    a = Answer(query=q, citations=cites, gate=gate, key_passage=kp)
    if raw is not None:
        text, _, _, sentences = check_answer(raw, cites, None, q)
        a = replace(a, text=text, sentences=sentences)
    return a


Q = "How many days of annual leave do full-time staff get?"


def test_every_feature_is_a_float_and_the_probes_default_to_neutral():
    x = answer_features(_answer(Q, "Full-time staff get 28 days of annual leave [1]."))
    assert list(x) == list(FEATURES) and all(isinstance(v, float) for v in x.values())
    assert {k: x[k] for k in NEUTRAL} == NEUTRAL
    assert x["kp_overlap"] == 1.0 and x["kp_specifics"] == 1.0 and x["kp_cited"] == 1.0 and x["kp_shown"] == 0.0
    assert x["passed_share"] == 1.0 and x["failed"] == 0.0 and x["legs_agree"] == 1.0
    assert x["nearest"] == pytest.approx(0.3) and x["doc_margin"] == pytest.approx(0.05)


def test_the_probes_fill_their_features():
    tp = TokenProbs(-0.2, -1.5, 0.1, 12, 40.0)
    yn = YesNo(0.8, 0.5, 0.7, 90.0, 120)
    x = answer_features(_answer(Q, "Full-time staff get 28 days of annual leave [1]."), tp, yn)
    assert (x["lp_mean"], x["lp_min"], x["lp_low"]) == (-0.2, -1.5, 0.1)
    assert x["yn_yes"] == 0.8 and x["yn_answer"] == 0.7
    assert x["yn_score"] == pytest.approx(math.log(4) - 0.0)


def test_an_answer_whose_number_the_key_passage_lacks_disagrees():
    """The claim is true of its source, but the key passage says another number: an off-key answer. The claim
    is shown (issue 39: supported by the source it cites), partly supported, and the features say the key
    passage's numbers are not the answer's."""
    a = _answer(Q, "Full-time staff get 28 days of annual leave [1].",
                kp_text="Full-time staff get 30 days of annual leave.")
    x = answer_features(a)
    assert x["kp_shown"] == 0.0 and x["kp_cited"] == 1.0 and x["passed_share"] == 1.0
    assert x["kp_specifics"] == 0.0 and a.judged.off_key and a.judged.verdict == "partly_supported"


def test_a_failed_claim_counts_and_vetoes_supported():
    a = _answer(Q, "Full-time staff get 28 days of annual leave [1]. They also get 12 weeks of sabbatical [1].")
    x = answer_features(a)
    assert x["claims"] == 2.0 and x["failed"] == 1.0 and x["passed_share"] == 0.5
    assert "failed" in vetoes(a)


def test_longest_run_is_the_share_of_the_answer_found_verbatim():
    assert longest_run("Staff get 28 days [1].", "Full-time staff get 28 days of annual leave.") == 1.0
    assert longest_run("Staff get thirty days.", "Full-time staff get 28 days.") == pytest.approx(2 / 4)
    assert longest_run("", "anything") == 0.0


def test_a_yes_no_question_answered_without_a_side_is_vetoed():
    q = "Should SARIF producers populate result.fingerprints?"
    sides = _answer(q, "Do not populate result.fingerprints [1].", quotes=(PROPS, OTHER), kp_text=PROPS)
    assert "yes_no" not in vetoes(sides) and "entity" not in vetoes(sides)
    other = _answer(q, "Populate result.partialFingerprints when your tool can [1].", quotes=(PROPS, OTHER), kp_text=PROPS)
    assert {"yes_no", "entity"} <= set(vetoes(other))


def test_a_follow_up_yes_no_question_opening_on_and_is_still_one():
    """The browser walk of 2026-12-03: "And can they carry unused days over?", answered with the last turn's
    "28 days of annual leave [2]" (the carried-over words drew the key passage there), was shown as supported."""
    q = "And can they carry unused days over?"
    repeat = _answer(q, "Full-time staff get 28 days of annual leave per calendar year [1].",
                     kp_text="Full-time staff get 28 days of annual leave per calendar year.")
    assert "yes_no" in vetoes(repeat)
    answered = _answer(q, "Unused days can no longer be carried over [1].",
                       kp_text="Unused days can no longer be carried over; they lapse on 31 December.")
    assert "yes_no" not in vetoes(answered)
    assert unaddressed("Andrew's phone number?", "It is 555.") == []  # a word that begins with "and" is no conjunction


def test_a_quantity_without_a_number_is_vetoed():
    a = _answer("How many days of annual leave do part-time staff get?", "Part-time staff get it pro rata [1].",
                kp_text="Part-time staff get it pro rata.")
    assert "number" in vetoes(a)


def test_a_formula_answered_with_a_worked_examples_numbers_is_vetoed():
    """The course set's q24: "What is the formula for the advantage value in GRPO?" answered with the worked
    example's figures, verbatim from its table, was shown as supported."""
    q = "What is the formula for the advantage value in GRPO?"
    example = r"The formula for the advantage value in GRPO is \( A_i = \frac{1 - 0.5}{0.53} \) [2]."
    kp = r"| Advantage Value (Correct response) | \( A_i = \frac{1 - 0.5}{0.53}= 0.94 \) |"
    assert "formula" in vetoes(_answer(q, example, kp_text=kp))
    formula = r"It is \( A_1 = \frac{r_1 - \text{mean}(\{r_1, r_2\})}{\text{std}(\{r_1, r_2\})} \) [1]."
    assert "formula" not in vetoes(_answer(q, formula, kp_text=formula))
    assert unaddressed(q, "Subtract the group mean from each reward and divide by the standard deviation.") == []
    assert unaddressed("How is the advantage computed?", "A_i = (1 - 0.5) / 0.53 = 0.94.") == ["formula"]
    assert unaddressed("What is the advantage of GRPO?", "A_i = (1 - 0.5) / 0.53 = 0.94.") == []


SPARSE = ("Most transformer models use full attention in the sense that the attention matrix is square. It can be a "
          "big computational bottleneck when you have long texts. Longformer and reformer are models that try to be "
          "more efficient and use a sparse version of the attention matrix to speed up training.")
SPARSE_Q = "Which models use a sparse version of the attention matrix to be more efficient on long texts?"


def test_a_copied_sentence_with_another_subject_is_vetoed():
    """The course set's q01: the source's sentence copied with "Transformer models" put in place of "Longformer and
    reformer" passed the claim check (every word is in the source) and was shown as supported."""
    swap = _answer(SPARSE_Q, "Transformer models try to be more efficient and use a sparse version of the attention "
                             "matrix to speed up training [1].", quotes=(SPARSE, OTHER), kp_text=SPARSE)
    assert "swapped" in vetoes(swap)
    assert swapped_words(swap.sentences[0].text, SPARSE, SPARSE_Q) == ({"transformer"}, {"longformer", "reformer"})
    for right in ("Longformer and Reformer try to be more efficient and use a sparse version of the attention matrix [1].",
                  "These models try to be more efficient and use a sparse version of the attention matrix to speed up "
                  "training [1].",
                  "Longformer uses a sparse version of the attention matrix to speed up training [1].",
                  "Longformer and reformer are models that try to be more efficient and use a sparse version of the "
                  "attention matrix to train faster [1].",
                  "Notably, Longformer and reformer are models that try to be more efficient and use a sparse version "
                  "of the attention matrix [1]."):  # a word put in, nothing taken out
        assert swapped_words(right, SPARSE, SPARSE_Q) is None, right
        assert "swapped" not in vetoes(_answer(SPARSE_Q, right, quotes=(SPARSE, OTHER), kp_text=SPARSE)), right
    assert swapped_words("Transformer models are slow [1].", SPARSE, SPARSE_Q) is None  # no long copy: not a swap
    # the course set's q19, right: a clause of the claim's own before the copied words is no subject put in
    metrics = ("Our predictions are still logits, not the actual predictions, which is why the metric is returning "
               "this (somewhat obscure) error.")
    assert swapped_words("The compute_metrics() function fails at the end of the evaluation phase because the "
                         "predictions are logits, not the actual predictions, which is why the metric is returning "
                         "this (somewhat obscure) error [1].", metrics, "Why does compute_metrics() fail?") is None


def test_verdict_from_the_probability():
    c = Combiner(("key_score",), (1.0,), (0.5,), (0.2,), 0.0, supported_at=0.9, doubt_below=0.3)
    assert verdict_from(0.95, [], c) == AnswerVerdict.SUPPORTED
    assert verdict_from(0.95, ["yes_no"], c) == AnswerVerdict.PARTLY_SUPPORTED
    assert verdict_from(0.5, [], c) == AnswerVerdict.PARTLY_SUPPORTED
    assert verdict_from(0.1, [], c) == AnswerVerdict.MAY_NOT_ANSWER
    assert verdict_from(0.99, ["nothing"], c) == AnswerVerdict.MAY_NOT_ANSWER
    assert verdict_from(None, [], None) == AnswerVerdict.PARTLY_SUPPORTED


def test_the_combiner_is_a_standardised_logistic_regression_and_round_trips():
    c = Combiner(("key_score", "nearest"), (2.0, -1.0), (0.5, 0.4), (0.25, 0.1), 0.5, fitted_on="test")
    x = {"key_score": 0.75, "nearest": 0.3}
    assert c.probability(x) == pytest.approx(1 / (1 + math.exp(-(0.5 + 2.0 + 1.0))))
    assert c.probability({}) == pytest.approx(1 / (1 + math.exp(-0.5)))
    assert Combiner.from_json(c.to_json()) == replace(c)


def test_with_a_combiner_the_verdict_comes_from_the_probability_and_says_why(monkeypatch):
    """The shipped combiner judges every generated answer: its probability is in the record and ``ask --json``,
    "supported" needs it at 0.9 and no veto, and the reason says the chance in plain words."""
    import rag.answer.check.confidence as conf

    high = Combiner(("key_score",), (10.0,), (0.0,), (1.0,), 0.0, supported_at=0.9, doubt_below=0.3)
    monkeypatch.setattr(conf, "shipped_combiner", lambda: high)
    a = _answer(Q, "Full-time staff get 28 days of annual leave [1].")
    assert a.judged.verdict == AnswerVerdict.SUPPORTED and a.judged.confidence > 0.9
    assert "every sentence shown is supported by a source it cites" in a.judged.reason and "%" in a.judged.reason
    d = a.to_json(full=True)
    assert d["confidence"] == round(a.judged.confidence, 3)
    back = Answer.from_json(d)
    assert back.judged.verdict == AnswerVerdict.SUPPORTED and back.judged.confidence == d["confidence"]
    failed = _answer(Q, "Full-time staff get 28 days of annual leave [1]. They also get 12 weeks of sabbatical [1].")
    assert failed.judged.verdict == AnswerVerdict.PARTLY_SUPPORTED
    assert failed.judged.reason.startswith("a sentence of the answer is not supported by the sources it cites")
    low = Combiner(("key_score",), (1.0,), (0.0,), (1.0,), -5.0, supported_at=0.9, doubt_below=0.3)
    monkeypatch.setattr(conf, "shipped_combiner", lambda: low)
    a = _answer(Q, "Full-time staff get 28 days of annual leave [1].")
    assert a.judged.verdict == AnswerVerdict.MAY_NOT_ANSWER and "check the sources" in a.judged.reason
