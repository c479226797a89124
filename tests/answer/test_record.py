"""One wire format for an answer (rag.answer.record): ``Answer.to_json`` and its one inverse ``Answer.from_json``.

The chat storage and the ``bench answers`` files both write the full form and read it back with the same
decoder; what they wrote before the format key existed still decodes (review 2026-12-01, "Wire format").
"""

from __future__ import annotations

import json

from rag.answer.check.attribute import ClaimVerdict, SentenceAttribution
from rag.answer.cite import Citation
from rag.answer.gate import apply_gate
from rag.answer.key_passage import KeyPassage, KeySentence
from rag.answer.record import ANSWER_FORMAT, Answer
from rag.evaluation.bench.answers import rescored, rows_json
from rag.types import AnswerVerdict, Hit, Locator, LocatorKind, QueryPlan, TextRole, Verdict

QUOTE = "Full-time staff get 28 days of annual leave. Part-time staff get it pro rata."


def _cite(i: int) -> Citation:
    return Citation(index=i, document_id="a" * 64, document_name="leave.docx", locator_label="leave.docx > Leave, ¶ 2",
                    fragment="#char=12,70", quote=QUOTE, cosine_distance=0.25, fused_rank=i, page=None, start=12,
                    end=70, media_type="application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                    chunk_id=3, section=("Leave",), locator=Locator(LocatorKind.PARAGRAPH, 2, 2, "Leave"),
                    also_in=("copy.docx > Leave, ¶ 2",))


def _answer() -> Answer:
    hit = Hit(chunk_id=3, rank=1, fused_rank=1, rrf_score=1 / 61, cosine_distance=0.25)
    gate = apply_gate("How many days of leave?", [hit], 0.675, 4)
    from dataclasses import replace

    gate = replace(gate, plan=QueryPlan("How many days of leave?", "en", 0.8))
    sents = [SentenceAttribution("Staff get 28 days [2].", (2,), (1,), False, False, miscited=True, missing=("28",)),
             SentenceAttribution("How many days of leave?", (), (), False, False, claim=False, echo=True,
                                 verdict=ClaimVerdict.ECHO, reason="restates the question")]
    kp = KeyPassage((KeySentence(1, "Full-time staff get 28 days of annual leave.", 0, 44, "leave.docx > Leave, ¶ 2", 0.8),),
                    1.5, "Full-time staff get 28 days of annual leave.")
    return Answer(query="How many days of leave?",
                  text="Staff get 28 days [2]. How many days of leave?", citations=[_cite(1), _cite(2)],
                  sentences=sents, invalid_citations_removed=1, links_removed=2, model="m.gguf", retrieval_ms=12.3,
                  ttft_ms=700.0, first_words_ms=780.0, generation_ms=900.0, tokens=12, dropped_sources=(2,), gate=gate,
                  raw_text="Staff get 28 days [2] [7]. How many days of leave?",
                  read_spans={1: ((0, 44),)}, key_passage=kp)


def test_the_full_form_rebuilds_the_same_answer():
    a = _answer()
    d = json.loads(json.dumps(a.to_json(full=True)))
    assert d["format"] == ANSWER_FORMAT
    b = Answer.from_json(d)
    for name in ("query", "threshold", "refused", "refusal", "text", "citations", "sentences", "invalid_citations_removed",
                 "links_removed", "model", "retrieval_ms", "ttft_ms", "first_words_ms", "generation_ms", "tokens", "dropped_sources",
                 "raw_text", "nearest_distance", "read_spans", "key_passage"):
        assert getattr(b, name) == getattr(a, name), name
    assert b.citations[0].locator == Locator(LocatorKind.PARAGRAPH, 2, 2, "Leave")
    assert type(b.citations[0].role) is TextRole
    assert (b.judged.verdict, b.gate.kind, b.gate.plan, b.why) == (a.judged.verdict, a.gate.kind, a.gate.plan, a.why)
    assert (b.judged.text, b.judged.note, b.judged.answer_from, b.judged.cited) == (a.judged.text, a.judged.note, a.judged.answer_from, a.judged.cited)
    assert json.loads(json.dumps(b.to_json(full=True))) == d


def test_the_ask_json_contract_carries_no_storage_keys():
    d = _answer().to_json()
    assert not {"format", "raw_text", "first_text", "links_removed", "dropped_sources"} & set(d)
    assert set(d["answer_sentences"][0]) == {"text", "cited", "supported_by", "unsupported", "inferred", "verdict",
                                             "reason", "cites", "supported", "label"}


def test_a_chat_turn_saved_before_the_format_key_still_decodes():
    """A record written by rag.answer.history at RECORD_VERSION 1 (its own keys, the gate as why / notice)."""
    from rag.answer.history import Turn

    rec = {"version": 1, "question": "And part-time?", "standalone": "And part-time? leave", "method": "keywords",
           "error": None, "scope": None, "candidates": [[1, 0.25, "leave.docx > Leave, ¶ 2"]],
           "query": "And part-time? leave", "threshold": 0.675, "refused": False, "refusal": None,
           "text": "Part-time staff get it pro rata [1].", "raw_text": "Part-time staff get it pro rata [1].",
           "model": "m.gguf", "citations": [json.loads(json.dumps(_answer().to_json()["citations"][0]))],
           "sentences": [{"text": "Part-time staff get it pro rata [1].", "cited": [1], "supported_by": [1],
                          "unsupported": False, "inferred": False, "miscited": False, "declines": False, "claim": True,
                          "dangling": False, "echo": False, "verdict": "supported", "reason": "", "missing": []}],
           "invalid_citations_removed": 0, "links_removed": 0, "ttft_ms": 812.4, "nearest_distance": 0.25,
           "why": "nearest distance 0.250, score 0.41 in [0.30, 0.55)",
           "notice": 'MAY NOT ANSWER: the documents mention "And part-time? leave" but may not answer it',
           "read_spans": {"1": [[0, 44]]}, "key_passage": None, "reasked": False, "first_text": None}
    a = Turn.from_json(rec).answer
    assert a.text == "Part-time staff get it pro rata [1]." and a.judged.text == a.text and a.ttft_ms == 812.4
    assert a.citations[0] == _cite(1) and a.read_spans == {1: ((0, 44),)}
    assert a.why.startswith("nearest distance") and a.notice.startswith("MAY NOT ANSWER")
    assert a.gate_verdict == Verdict.MENTIONS and a.judged.verdict == AnswerVerdict.MAY_NOT_ANSWER  # recomputed: format 1


def test_a_bench_row_saved_before_the_format_key_still_decodes_with_its_locators():
    """``bench answers --json-out`` rows kept the model's words as ``raw`` / ``first_raw``; the old decoder left
    each citation's locator a dict (a ``Citation`` holding JSON), the one decoder gives a ``Locator``."""
    old = {**_answer().to_json(), "retrieval_ms": 12.3, "key": "q01/doc", "wording": "doc", "needle": "x",
           "answer_keys": [["28 days"]], "raw": "Staff get 28 days [1]. [9]", "first_raw": None}
    a = Answer.from_json(json.loads(json.dumps(old)))
    assert a.raw_text == "Staff get 28 days [1]. [9]" and a.retrieval_ms == 12.3
    assert a.citations == (_cite(1), _cite(2)) and isinstance(a.citations[0].locator, Locator)
    r = rescored(json.loads(json.dumps(old)), embedder=None)
    assert r.text == "Staff get 28 days [1]." and r.invalid_citations_removed == 1 and r.sentences[0].passed


def test_bench_rows_are_the_full_form():
    from rag.evaluation.bench.answers import Row

    row = Row("q01/doc", "doc", "How many days of leave?", "28 days", (("28 days",),), _answer())
    (d,) = rows_json([row])
    assert d["format"] == ANSWER_FORMAT and d["key"] == "q01/doc" and d["raw_text"] == _answer().raw_text
    assert Answer.from_json(json.loads(json.dumps(d))).raw_text == _answer().raw_text



def test_a_rescored_bench_row_is_judged_by_todays_rules_not_by_the_verdict_it_was_saved_with():
    """``bench answers --rescore`` re-runs the claim check on saved answers; the verdict must follow it (it kept
    the saved one, so a change of the rules measured nothing)."""
    from rag.evaluation.bench.answers import Row

    a = _answer()
    (d,) = json.loads(json.dumps(rows_json([Row("q01/doc", "doc", a.query, "28 days", (("28 days",),), a)])))
    d["verdict"], d["verdict_reason"] = "refused", "saved by an older rule"
    assert Answer.from_json(d).judged.verdict == AnswerVerdict.REFUSED  # what a saved chat shows: the verdict as shown
    r = rescored(d, embedder=None)
    assert r.judged == r.judged and r.judged.verdict != AnswerVerdict.REFUSED
