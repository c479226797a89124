"""Chat turns as stored records and as Markdown (rag.answer.history, issue 16)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from fakes import gate_result

from rag.answer.check.attribute import ClaimVerdict, SentenceAttribution
from rag.answer.cite import Citation
from rag.answer.history import Candidate, Turn, chat_markdown, previous_questions, turn_markdown
from rag.answer.key_passage import KeyPassage, KeySentence
from rag.answer.pipeline import Answer


def _cite(i: int, *, pdf: bool = False) -> Citation:
    if pdf:
        return Citation(index=i, document_id="d" * 64, document_name="paper.pdf", locator_label="paper.pdf, p. 5",
                        fragment="#page=5", quote="Dense passage retrieval uses inner product.", cosine_distance=0.31,
                        fused_rank=i, page=5, start=10, end=53, media_type="application/pdf", chunk_id=7)
    return Citation(index=i, document_id="a" * 64, document_name="leave.md", locator_label="leave.md > Annual leave",
                    fragment="#char=12,70", quote="Full-time staff get 28 days of annual leave.\nPer year.",
                    cosine_distance=0.25, fused_rank=i, page=None, start=12, end=70, media_type="text/markdown",
                    chunk_id=3, section=("Leave", "Annual leave"))


def _answer() -> Answer:
    s = SentenceAttribution("Staff get 28 days [1].", (1,), (1,), False, False)
    return Answer(query="How many days of leave? (after: What is the leave policy?)",
                  gate=gate_result("How many days of leave? (after: What is the leave policy?)"), text="Staff get 28 days [1].", citations=[_cite(1), _cite(2, pdf=True)], sentences=[s],
                  model="m.gguf", raw_text="Staff get 28 days [1].", read_spans={1: ((0, 10),)})


def _record(question: str, standalone: str, answer: Answer | None, *, method: str = "", error: str | None = None,
            candidates: tuple[tuple[int, float, str], ...] = (), scope: list[str] | None = None) -> dict:
    """The record a saved chat keeps for one turn (:meth:`rag.answer.history.Turn.to_json`), through JSON."""
    t = Turn(question, standalone, answer, error=error, method=method, scope=tuple(scope) if scope is not None else None,
             candidates=tuple(Candidate(*c) for c in candidates))
    return json.loads(json.dumps(t.to_json()))


def test_an_answered_turn_survives_the_round_trip_through_json():
    rec = _record("How many days?", "How many days of leave? (after: What is the leave policy?)", _answer(),
                      method="context", candidates=[(1, 0.25, "leave.md > Annual leave")], scope=["a" * 64])
    rec = json.loads(json.dumps(rec))  # what the store keeps
    t = Turn.from_json(rec, "2026-11-30T10:00:00+00:00")
    a = t.answer
    assert (t.question, t.method, t.scope, t.candidates) == ("How many days?", "context", ("a" * 64,),
                                                            (Candidate(1, 0.25, "leave.md > Annual leave"),))
    assert a.text == "Staff get 28 days [1]." and a.citations == _answer().citations
    assert a.sentences == _answer().sentences and a.read_spans == {1: ((0, 10),)} and a.judged.cited == (1,)


def test_a_refused_turn_and_an_error_turn():
    refused = Answer(query="q", gate=gate_result("q", refused=True, threshold=0.5))
    a = Turn.from_json(json.loads(json.dumps(_record("q", "q", refused)))).answer
    assert a.refused and a.refusal == refused.refusal and a.text is None and a.citations == ()
    t = Turn.from_json(_record("q", "q", None, error="model missing"))
    assert t.answer is None and t.error == "model missing"


def test_markdown_export_keeps_questions_answers_citations_and_locators():
    answered = Turn.from_json(_record("How many days?", "How many days of leave? (after: What is the leave policy?)",
                                            _answer(), method="context"))
    refused = Turn.from_json(_record("Can I take a sabbatical?", "Can I take a sabbatical?",
                                           Answer(query="x", gate=replace(gate_result("x", refused=True), refusal="NO ANSWER: x"))))
    md = chat_markdown("Leave questions", [answered, refused], collection="HR", exported_at="2026-11-30T10:00:00+00:00")
    assert md.startswith("# Leave questions\n\n*collection HR, exported 2026-11-30T10:00:00+00:00*")
    assert "## 1. How many days?" in md and "*Standalone question:* How many days of leave?" in md
    assert "Staff get 28 days [1]." in md
    assert "[1] leave.md > Annual leave `#char=12,70` · cosine distance 0.250" in md
    assert "[2] paper.pdf, p. 5 `#page=5` · cosine distance 0.310 (not cited)" in md
    assert "> Full-time staff get 28 days of annual leave.\n> Per year." in md
    assert "## 2. Can I take a sabbatical?\n\n**Verdict: Refused.** The documents hold nothing" in md
    assert "\n\n**NO ANSWER: x**" in md


def test_the_export_carries_the_verdict_the_may_not_answer_notice_and_the_inferred_marks():
    """Issue 24: the exported chat dropped the banners and the "(inferred)" marks the app shows."""
    from dataclasses import replace

    from rag.answer.gate import apply_gate
    from rag.types import Hit

    inferred = SentenceAttribution("Full-time staff get 28 days of annual leave.", (), (1,), False, True,
                                   verdict=ClaimVerdict.INFERRED, reason="no citation written; [1] holds it")
    gate = replace(apply_gate("q", [Hit(1, 1, 1, 1 / 61, 0.3)], 0.675, 4), verdict="mentions",
                   notice='MAY NOT ANSWER: the documents mention "leave" but may not answer it')
    a = Answer(query="How many days of leave?", text=inferred.text,
               citations=[_cite(1)], sentences=[inferred], model="m.gguf", gate=gate)
    md = turn_markdown(1, Turn.from_json(json.loads(json.dumps(_record("q", "q", a)))))
    assert "**Verdict: May not answer.** The documents mention this but may not answer it." in md
    assert '*MAY NOT ANSWER: the documents mention "leave" but may not answer it*' in md
    assert "Full-time staff get 28 days of annual leave [1]. *(source found by the app)*" in md


def test_history_files_in_every_accepted_shape():
    assert previous_questions(["What is X?", {"question": "and Y?", "standalone": "and Y? (after: What is X?)"},
                               {"role": "assistant", "content": "X is..."}, {"role": "user", "content": "Z?"}]) == [
        "What is X?", "and Y? (after: What is X?)", "Z?"]
    with pytest.raises(ValueError, match="item 1"):
        previous_questions(["ok", 3])
    with pytest.raises(ValueError, match="JSON list"):
        previous_questions({"question": "x"})


def test_a_reopened_turn_keeps_the_key_passage_and_the_claim_checks_verdicts():
    """Issue 14 in a saved chat (issue 16): the reopened turn shows the same checked answer as the live one."""
    echo = SentenceAttribution("How many days of leave do staff get?", (), (), False, False, claim=False, echo=True,
                               verdict=ClaimVerdict.ECHO, reason="restates the question")
    kp = KeyPassage((KeySentence(1, "Full-time staff get 28 days of annual leave.", 0, 44,
                                 "leave.md > Annual leave", 0.8),), 1.5, "Full-time staff get 28 days of annual leave.")
    live = Answer(query="q", gate=gate_result("q"), text=echo.text, citations=[_cite(1)],
                  sentences=[echo], model="m.gguf", key_passage=kp)
    a = Turn.from_json(json.loads(json.dumps(_record("q", "q", live)))).answer
    assert a.key_passage == kp and a.sentences[0].verdict is ClaimVerdict.ECHO
    assert (a.judged.answer_from, a.judged.text, a.judged.note) == (live.judged.answer_from, live.judged.text, live.judged.note)
    assert a.judged.text == kp.text and a.judged.note
    md = turn_markdown(1, Turn.from_json(json.loads(json.dumps(_record("q", "q", live)))))
    assert "**Key passage** [1] leave.md > Annual leave" in md and "> Full-time staff get 28 days" in md
    assert "Left out by the claim check (1)" in md and "(repeats the question)" in md
    assert "restates the question" not in md  # the label once, not "repeats the question: restates the question"
    # a left-out sentence is listed without its [n], as the chat lists it (2026-12-06: the export had "Hinton [1]
    # developed t-SNE [2]." where the chat had no marker, and a left-out [n] reads as a citation)
    cited = replace(echo, text="How many days of leave do staff get [1]?")
    md = turn_markdown(1, Turn.from_json(json.loads(json.dumps(_record("q", "q", replace(live, sentences=[cited]))))))
    assert "- How many days of leave do staff get? (repeats the question)" in md


def test_the_export_names_the_documents_asked_within_and_says_what_inferred_means():
    """Issue 29: the screen names the documents a question was asked within and explains "(inferred)" under the
    answer; the export says the same."""
    inferred = SentenceAttribution("Staff get 28 days.", (), (1,), False, True)
    a = Answer(query="q", gate=gate_result("q"), text="Staff get 28 days.",
               citations=[_cite(1)], sentences=[inferred], model="m.gguf", raw_text="Staff get 28 days.")
    t = Turn.from_json(_record("How many days?", "How many days?", a, scope=["a" * 64]))
    md = turn_markdown(1, t, {"a" * 64: "leave.md"})
    assert "*Asked within leave.md.*" in md
    assert "*(source found by the app)*" in md
    assert "*(source found by the app): the model named no source for that sentence" in md
    assert "inferred" not in md  # issue 39: plain words, not the claim check's code
    assert "*Asked within 1 chosen document(s).*" in turn_markdown(1, t)  # no names known: the count


def test_the_export_flags_a_left_out_sentence_where_the_model_wrote_it():
    """Issue 39: a sentence the claim check left out was moved into a list after the answer, so a reader who had read
    the streamed answer lost its place; now it stays where the model wrote it, struck through, with why, and the
    sentences around it keep their order and their [n]."""
    first = SentenceAttribution("Full-time staff get 28 days of annual leave [1].", (1,), (1,), False, False)
    wrong = SentenceAttribution("Part-time staff get 40 days [1].", (1,), (), True, False,
                                reason="no source holds '40'")
    last = SentenceAttribution("The leave is counted per year [1].", (1,), (1,), False, False)
    text = " ".join(s.text for s in (first, wrong, last))
    a = Answer(query="How many days of leave?", gate=gate_result("How many days of leave?"), text=text,
               citations=[_cite(1)], sentences=[first, wrong, last], model="m.gguf", raw_text=text)
    md = turn_markdown(1, Turn.from_json(_record("How many days?", "How many days?", a)))
    i, j, k = (md.index("28 days of annual leave [1]"), md.index("~~Part-time staff get 40 days.~~"),
               md.index("counted per year [1]"))
    assert i < j < k
    assert "~~Part-time staff get 40 days.~~ *(left out: not supported by the sources: no source holds '40')*" in md
    assert "Left out by the claim check" not in md  # not listed a second time


def test_the_export_keeps_a_code_block_a_code_block():
    """As the chat shows it (2026-12-06): a fenced block of the answer is a code block in the export too, its [n]
    after the closing fence, not a literal "```bash" run into the next sentence."""
    from rag.answer.check.attribute import attribute, lexical_support, split_sentences

    raw = "Use this command:\n```bash\ndotnet new web\n```\nIt creates a web app [1]."
    pieces = split_sentences(raw)
    quotes = ["Using the CLI: dotnet new web creates a web app."]
    att = attribute(pieces, [1], lexical_support(pieces, quotes, None), quotes=quotes)
    a = Answer(query="How do I create a web app?", text=raw, citations=[_cite(1)], sentences=att, model="m.gguf",
               gate=gate_result("How do I create a web app?"))
    md = turn_markdown(1, Turn.from_json(json.loads(json.dumps(_record("q", "q", a)))))
    assert "\n```bash\ndotnet new web\n```\n[1]" in md and ")*\nIt creates a web app [1]." in md


def test_the_export_says_once_when_the_app_found_every_sentence_s_source():
    """As the chat (two new users' walks, 2026-12-06): every claim shown with a source the app attached gets one line
    under the answer, not a mark after each sentence nor the per-sentence note."""
    from rag.answer.check.attribute import ClaimVerdict
    from rag.answer.history import ALL_ATTACHED

    said = [SentenceAttribution(t, (), (1,), False, True, verdict=ClaimVerdict.INFERRED)
            for t in ("Staff get 28 days.", "Part-time staff get it pro rata.")]
    a = Answer(query="q", gate=gate_result("q"), text=" ".join(x.text for x in said), citations=[_cite(1)],
               sentences=said, model="m.gguf", raw_text=" ".join(x.text for x in said))
    md = turn_markdown(1, Turn.from_json(_record("How many days?", "How many days?", a)))
    assert "*(source found by the app)*" not in md and f"*({ALL_ATTACHED})*" in md
    assert "Staff get 28 days [1]. Part-time staff get it pro rata [1]." in md


def test_a_saved_table_source_is_exported_under_its_column_names():
    """A spreadsheet's source keeps its column names through a saved chat, and the export shows the key passage
    and the quote as tables (a walk over a 56-column CSV, 2026-12-07)."""
    quote = "254 | Kenya | Nairobi |\n| MLI | 223 | Mali | Bamako |"
    cite = replace(_cite(1), document_name="codes.csv", locator_label="codes.csv, row 121", quote=quote,
                   media_type="text/csv", columns=("Code", "Dial", "Name", "Capital"), first_column=1)
    kp = KeyPassage((KeySentence(1, quote[:23], 0, 23, "codes.csv, row 121", 0.8),), 1.0, quote[:23])
    live = Answer(query="q", gate=gate_result("q"), text=None, citations=[cite], model="m.gguf", key_passage=kp)
    saved = Turn.from_json(json.loads(json.dumps(_record("q", "q", live))))
    assert saved.answer.citations[0].columns == cite.columns and saved.answer.citations[0].first_column == 1
    md = turn_markdown(1, saved)
    assert "**Key passage** [1] codes.csv, row 121\n\n| Dial | Name | Capital |\n|---|---|---|\n| 254 | Kenya | Nairobi |" in md
    assert "| Code | Dial | Name | Capital |\n|---|---|---|---|\n|   | 254 | Kenya | Nairobi |\n| MLI | 223 | Mali | Bamako |" in md
