"""One verdict, shown the same way everywhere (issue 24, item 4): the chat, ``ask`` (its ``Verdict:`` line and
``ask --json``'s ``verdict``), a saved chat reopened, and the Markdown export, for the same answer.

Each surface has its own test elsewhere; this one takes one answer of each verdict through all of them, so a
surface that judged the answer again (and differently) or dropped the verdict fails here. The chat's rendering
runs against a recording stand-in for ``streamlit`` (no server).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import replace
from typing import Any

import pytest

from rag.answer.check.judged import LABELS
from rag.answer.cite import Citation
from rag.answer.gate import apply_gate
from rag.answer.history import Turn, turn_markdown
from rag.answer.key_passage import KeyPassage, KeySentence
from rag.answer.pipeline import check_answer
from rag.answer.record import Answer
from rag.cli.answer import verdict_line
from rag.text import markdown_literal
from rag.types import AnswerVerdict, Hit
from ui import chat
from ui.format import VERDICT_STYLE

Q = "How many days of annual leave do full-time staff get?"
LEAVE = "Full-time staff get 28 days of annual leave. Part-time staff get it pro rata. Sabbaticals are not offered."
OTHER = "The office opens at 8 am. Visitors sign in at the front desk."
KP = "Full-time staff get 28 days of annual leave."


def _cite(i: int, quote: str) -> Citation:
    return Citation(index=i, document_id=f"d{i}", document_name="policy.md", locator_label=f"policy.md > Leave {i}",
                    fragment="#char=0,10", quote=quote, cosine_distance=0.3, fused_rank=i, page=None, start=0,
                    end=len(quote), media_type="text/markdown", chunk_id=i, section=("Leave",))


def _answer(verdict: AnswerVerdict) -> Answer:
    """A live answer that :func:`rag.answer.check.verdict.judge` judges ``verdict``."""
    if verdict == AnswerVerdict.REFUSED:
        return Answer(query=Q, gate=replace(apply_gate(Q, [], 0.675, 4), refusal="NO ANSWER: nothing close enough"))
    gate = apply_gate(Q, [Hit(chunk_id=1, rank=1, fused_rank=1, rrf_score=1 / 61, cosine_distance=0.3)], 0.675, 4)
    raw = {AnswerVerdict.SUPPORTED: "Full-time staff get 28 days of annual leave [1].",
           AnswerVerdict.PARTLY_SUPPORTED: "Full-time staff get 28 days of annual leave [1]. "
                                           "They also get 12 weeks of sabbatical [1].",
           AnswerVerdict.MAY_NOT_ANSWER: "The sources do not contain the answer."}[verdict]
    score = 0.2 if verdict == AnswerVerdict.MAY_NOT_ANSWER else 0.8
    kp = KeyPassage((KeySentence(1, KP, 0, len(KP), "policy.md > Leave 1", score + 0.1),), 1.0, KP)
    cites = [_cite(1, LEAVE), _cite(2, OTHER)]
    text, _, _, sents = check_answer(raw, cites, None, Q)
    return Answer(query=Q, citations=cites, gate=gate, key_passage=kp, model="m.gguf", text=text, sentences=sents,
                  raw_text=raw)


class _Recorder:
    """Stands in for ``streamlit`` in :mod:`ui.chat`: records every call as ``(name, text, kwargs)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, str(args[0]) if args else "", kwargs))
            return contextlib.nullcontext()  # st.expander(...) is used as a context manager
        return record


def _chat_shows(a: Answer, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any]]]:
    rec = _Recorder()
    monkeypatch.setattr(chat, "st", rec)
    if a.refused:
        chat.render_refusal(a, [])
    else:
        chat.render_verdict(a, [])
    return rec.calls


@pytest.mark.parametrize("verdict", list(AnswerVerdict), ids=str)
def test_the_chat_the_cli_a_saved_chat_and_the_export_show_the_same_verdict(verdict, monkeypatch):
    live = _answer(verdict)
    assert live.judged.verdict == verdict  # the answer was built to get it
    label, reason = LABELS[verdict], live.judged.reason
    # ask --json and the CLI's line
    d = json.loads(json.dumps(live.to_json()))
    assert (d["verdict"], d["verdict_reason"]) == (str(verdict), reason)
    assert verdict_line(live) == f"Verdict: {label}: {reason}"
    # the saved chat, reopened: the verdict it was shown with, not a new judgement
    saved = Turn.from_json(json.loads(json.dumps(Turn(Q, Q, live).to_json())))
    reopened = saved.answer
    assert reopened is not None and reopened.judged == live.judged
    # a stored verdict wins over today's rules: judge the reopened answer differently and it keeps the saved one
    if not reopened.refused:
        reopened_again = replace(reopened, sentences=[], text=None)
        assert reopened_again.judged.verdict == verdict
    # the Markdown export of that saved chat
    assert f"**Verdict: {label}.** {markdown_literal(reason[:1].upper() + reason[1:])}" in turn_markdown(1, saved)
    # the chat, for the live turn and for the reopened one
    for a in (live, reopened):
        calls = _chat_shows(a, monkeypatch)
        box, icon = VERDICT_STYLE[str(verdict)]
        if verdict == AnswerVerdict.REFUSED:
            assert (calls[0][0], calls[0][2]["icon"]) == (box, icon)  # an info box: nothing failed (issue 29)
            assert f"**{label}**" in calls[0][1], calls
        else:
            assert (calls[0][0], calls[0][2]["icon"]) == (box, icon)
            assert calls[0][1].startswith(f"**{label}**") and reason[1:20] in calls[0][1]


def test_the_chat_says_why_the_key_passage_stands_once(monkeypatch):
    """A newcomer read the same sentence twice (2026-12-02): the orange verdict ("the model's claims rest on other
    passages ...; the key passage is shown verbatim, check it answers what you asked") and a blue note under it
    saying so again. A partly supported key passage standing as the answer has its verdict alone; a key passage
    that may not answer keeps the note (the verdict does not say why the model's answer is not shown)."""
    from rag.answer.record import AnswerFrom

    monkeypatch.setattr(chat, "_collection", lambda: None)
    for raw, verdict in (("Full-time staff get 40 days of annual leave [1].", AnswerVerdict.PARTLY_SUPPORTED),
                         ("Full-time staff get 40 days of annual leave [1].", AnswerVerdict.MAY_NOT_ANSWER)):
        a = _answer(AnswerVerdict.PARTLY_SUPPORTED)
        if verdict == AnswerVerdict.MAY_NOT_ANSWER:
            weak = KeySentence(1, KP, 0, len(KP), "policy.md > Leave 1", 0.2)
            a = replace(a, key_passage=KeyPassage((weak,), 1.0, KP))
        _text, _, _, _sents = check_answer(raw, a.citations, None, Q)
        a = replace(a, text=_text, sentences=_sents, raw_text=raw)
        assert a.judged.answer_from == AnswerFrom.KEY_PASSAGE and a.judged.verdict == verdict, (a.judged.answer_from, a.judged.verdict)
        rec = _Recorder()
        monkeypatch.setattr(chat, "st", rec)
        chat.render_answer(a, {}, "k")
        notes = [text for name, text, _ in rec.calls if name == "info"]
        if verdict == AnswerVerdict.PARTLY_SUPPORTED:
            assert notes == [], notes
        else:
            assert len(notes) == 1 and "stands as the answer" in notes[0], notes


def test_a_mention_is_said_once_in_the_verdict(monkeypatch):
    """The gate's "mention" made the verdict box read "May not answer · The documents mention this but may not
    answer it." and then "Your documents mention this but may not answer it: ..." (2026-12-02): said once now."""
    from rag.types import Verdict

    a = _answer(AnswerVerdict.SUPPORTED)
    a = replace(a, gate=replace(a.gate, verdict=Verdict.MENTIONS, notice="MAY NOT ANSWER: the documents mention it"),
                saved_verdict=None)
    assert a.judged.verdict == AnswerVerdict.MAY_NOT_ANSWER
    calls = _chat_shows(a, monkeypatch)
    text = calls[0][1]
    # its claims hold and rest on the key passage: the doubt is the question's match, and the box says so (a new
    # user read "may not answer it" over a right, cited answer, 2026-12-06)
    assert text.startswith(f"**{LABELS[AnswerVerdict.MAY_NOT_ANSWER]}** · Every claim shown is supported"), text
    assert "match the question only loosely" in text and "may not answer it" not in text, text
    bare = replace(a, sentences=(), text="")  # nothing the model said stands: the mention is the reason, said once
    text = _chat_shows(bare, monkeypatch)[0][1]
    assert text.startswith(f"**{LABELS[AnswerVerdict.MAY_NOT_ANSWER]}** · Your documents mention this"), text
    assert text.lower().count("mention this") == 1, text
