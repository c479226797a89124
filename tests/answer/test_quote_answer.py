"""Quote-then-answer (rag.answer.quote_answer, issue 24 item 3b): the copied sentence must be in the source and
the short answer a span of it; and the model as a selector of the key passage (rag.answer.evidence, item 3a)."""

from __future__ import annotations

import numpy as np

from rag.answer import evidence
from rag.answer.cite import Citation
from rag.answer.excerpt import citation_views
from rag.answer.listwise import ListwiseResult
from rag.answer.quote_answer import check_quote_answer, parse_quote_answer, quote_result, quote_span
from rag.answer.roles import SUPPORTING

GRPO = ("For each question, GRPO samples a group of outputs from the old policy. The group size is 16 in our "
        "experiments. The advantage of each output is its reward minus the group mean, divided by the group's "
        "standard deviation.")
OTHER = "PPO uses a value function as a baseline, trained alongside the policy."


def _cite(i: int, quote: str) -> Citation:
    return Citation(index=i, document_id=f"d{i}", document_name="grpo.md", locator_label=f"grpo.md > Part {i}",
                    fragment="#char=0,1", quote=quote, cosine_distance=0.3, fused_rank=i, page=None, start=0,
                    end=len(quote), media_type="text/markdown", chunk_id=i, section=("GRPO",))


CITES = [_cite(1, GRPO), _cite(2, OTHER)]
VIEWS = [v for v, _ in citation_views(CITES, keep=SUPPORTING)]


def test_parse_the_quote_its_marker_and_the_short_answer():
    raw = '"The group size is 16 in our experiments." [1]\nAnswer: 16 [1]'
    assert parse_quote_answer(raw) == ("The group size is 16 in our experiments.", [1], "16 [1]")
    assert parse_quote_answer("no quote here") == ("", [], "")


def test_a_checked_reply_is_supported_and_its_quote_becomes_the_key_passage():
    raw = '“The group size is 16 in our experiments.” [1]\nAnswer: 16 in our experiments [1]'
    qa = check_quote_answer(raw, CITES, VIEWS)
    assert qa.ok and qa.index == 1 and qa.shown == "16 in our experiments [1]."
    sents, kp = quote_result(raw, CITES, VIEWS, None)
    assert [str(s.verdict) for s in sents] == ["supported"] and sents[0].shown_cites == (1,)
    assert kp.index == 1 and kp.sentences[0].text == "The group size is 16 in our experiments."
    assert GRPO[kp.sentences[0].start:kp.sentences[0].end] == kp.sentences[0].text


def test_a_quote_in_no_source_or_an_answer_outside_the_quote_fails():
    bad_quote = '"The group size is 64 in our experiments." [1]\nAnswer: 64 [1]'
    assert check_quote_answer(bad_quote, CITES, VIEWS).reason == "the copied sentence is in no source"
    outside = '"The group size is 16 in our experiments." [1]\nAnswer: 32 outputs [1]'
    qa = check_quote_answer(outside, CITES, VIEWS)
    assert not qa.ok and qa.reason == "the short answer is not a span of the copied sentence"
    sents, kp = quote_result(outside, CITES, VIEWS, None)
    assert str(sents[0].verdict) == "unsupported" and kp is None
    # cited to the wrong source: the source that holds the sentence is the one cited
    assert check_quote_answer('"The group size is 16 in our experiments." [2]\nAnswer: 16 [2]', CITES, VIEWS).index == 1
    sents, _ = quote_result("The sources do not contain the answer.", CITES, VIEWS, None)
    assert str(sents[0].verdict) == "declines"


def test_quote_span_ignores_case_and_line_breaks():
    assert quote_span("the GROUP size is\n16", GRPO) == (GRPO.index("The group size"), GRPO.index("16") + 2)
    assert quote_span("not there at all", GRPO) is None


def test_the_selector_picks_the_sentence_the_model_and_the_words_agree_on(monkeypatch):
    """The listwise pass is replaced by fixed scores: with weight 0 the lexical best wins, with a large weight the
    model's choice does; the key passage is the best stretch holding the chosen sentence."""
    seen = {}

    def fake(question, items, generator, *, orders=2, **kw):
        seen["items"] = list(items)
        scores = np.full(len(items), -3.0, dtype=np.float32)
        pick = next(k for k, t in enumerate(items) if "standard deviation" in t)
        scores[pick] = -0.1
        return ListwiseResult(scores, scores[None, :], (50,) * orders, 1.0)

    monkeypatch.setattr(evidence, "listwise_scores", fake)
    q = "What is the group size in GRPO?"
    kp0, sel0 = evidence.select_key_passage(q, CITES, None, object(), weight=0.0)
    assert "group size is 16" in kp0.text and sel0.chosen == 0
    kp, sel = evidence.select_key_passage(q, CITES, None, object(), weight=5.0)
    assert "standard deviation" in kp.text and "standard deviation" in sel.texts[sel.chosen]
    assert len(seen["items"]) == len(set(seen["items"])) >= 2 and sel.to_json()["chosen"] == sel.chosen
