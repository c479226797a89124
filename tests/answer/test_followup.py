"""Follow-up questions made standalone before retrieval (rag.answer.followup, issue 16)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.answer import followup
from rag.answer.followup import (
    RewriteMethod,
    clean_model_rewrite,
    needs_context,
    rewrite_followup,
    rewrite_messages,
    store_idf,
    with_context,
    with_keywords,
)
from rag.text import TermStats

DIALOGUES = Path(__file__).resolve().parents[1] / "data" / "followup_dialogues.jsonl"


@pytest.mark.parametrize("question", [
    "And for part-time staff?", "What about the second one?", "How many problems does it contain?",
    "Why is micromotion a problem there?", "Which tissue is recommended as a control for that staining?",
    "Up to how many?", "Which server do I connect to?", "Für wen kann es sinnvoll sein?", "How did he name them?",
    "By how much did it grow during FY 2024?",
])
def test_cheap_signals_flag_follow_ups(question):
    assert needs_context(question)


@pytest.mark.parametrize("question", [
    "What is the formula for the advantage value in GRPO?", "What is FAISS?",
    "Which models use a sparse version of the attention matrix for long texts?",
    "Is there a model that handles long documents?", "What proportion of breast cancer is HER2 negative?", "",
    "What is Time to First Token and which inference phase affects it?",  # the pronoun points inside the question
])
def test_cheap_signals_leave_standalone_questions_alone(question):
    assert not needs_context(question)


def test_the_dialogue_set_is_what_docs_answers_md_says():
    rows = [json.loads(x) for x in DIALOGUES.read_text(encoding="utf-8").splitlines() if x.strip()]
    follow = [r for r in rows if r["kind"] == "followup"]
    assert len(follow) >= 20 and {r["corpus"] for r in follow} == {"course", "pdf-dev"}
    assert len({r["id"] for r in rows}) == len(rows) and all(len(r["turns"]) == 2 for r in rows)
    assert not any(needs_context(r["turns"][1]) for r in rows if r["kind"] == "standalone")


def test_keywords_rewrite_adds_the_rarest_words_of_the_previous_question():
    idf = {"humaneval": 6.0, "benchmark": 3.0, "coding": 2.5, "problems": 9.0}.get
    r = rewrite_followup("How many problems does it contain?", ["What is the HumanEval coding benchmark for LLMs?"],
                         idf=lambda t: idf(t, 1.0))
    assert r.rewritten and r.method == "keywords"
    # the three rarest new words, as written and in their order; "problems" is already in the follow-up
    assert r.standalone == "How many problems does it contain? (HumanEval coding benchmark)"
    assert with_keywords("And it?", "What is it?", lambda t: 1.0) == "And it?"  # nothing left to add


def test_a_follow_up_that_puts_another_phrase_in_place_does_not_search_the_old_one():
    """A new user's follow-up (2026-12-06, a talk's .pptx): "and what about from visual studio?" after "how do I
    create a new asp.net app from the command line?" was searched as "... (app command line)" and answered about the
    command line. A follow-up opening on a preposition puts its phrase in place of the previous one's."""
    prev = "how do I create a new asp.net app from the command line?"
    assert with_keywords("and what about from visual studio?", prev, lambda t: 1.0) == \
        "and what about from visual studio? (create new asp)"
    assert with_keywords("And for paid users?", "What is the upload limit for free users on the web app?",
                         lambda t: 1.0) == "And for paid users? (upload limit web)"
    # a preposition inside the follow-up contrasts nothing: the previous question's words are all offered
    assert with_keywords("Before building it, which comments are dropped for being short?",
                         "How is FAISS used for semantic search?", lambda t: 1.0).endswith("(FAISS used semantic)")


def test_keywords_are_words_the_documents_use():
    """The rarest words of a user's question are often ones no chunk holds ("people complain bot" in the tryout):
    they cannot help find anything, so they are never added."""
    stats = TermStats.from_texts(["Time to first token measures the prefill phase.", "The decode phase writes tokens."])
    r = rewrite_followup("And how can we make it faster?",
                         ["people complain our bot sits forever before the first token - which phase is to blame?"],
                         idf=store_idf(stats))
    assert r.standalone == "And how can we make it faster? (first token phase)"


@pytest.mark.parametrize("question", [
    "people complain our bot sits there forever before the first word appears - which part of generation causes that?",
    "if I flip my dataset to return pandas frames, does it rewrite or copy the stored data on disk?",
])
def test_a_long_question_states_its_own_subject_whatever_pronoun_it_holds(question):
    assert not needs_context(question)


def test_the_dev_questions_are_almost_never_taken_for_follow_ups(corpus_dir):
    """108 standalone questions (both corpora, both wordings): the pronoun rule took 14 for follow-ups, 10 of them
    support-ticket questions, before long questions were let alone; now 3."""
    qs = []
    for rel, keys in (("dev_questions.jsonl", ("query_course", "query_ticket")),
                      ("pdf-dev/questions.jsonl", ("query_doc", "query_user"))):
        for line in (corpus_dir / rel).read_text(encoding="utf-8").splitlines():
            if line.strip():
                qs += [json.loads(line)[k] for k in keys]
    assert len(qs) == 108 and sum(needs_context(q) for q in qs) <= 3


def test_context_rewrite_puts_the_previous_question_after_the_follow_up():
    r = rewrite_followup("How many problems does it contain?", ["What is HumanEval?"], "context")
    assert r.rewritten and r.method == "context"
    assert r.standalone == with_context("How many problems does it contain?", "What is HumanEval?")
    assert r.standalone == "How many problems does it contain? (after: What is HumanEval?)"


def test_nothing_is_rewritten_without_history_a_signal_or_when_off():
    assert not rewrite_followup("How many problems does it contain?", []).rewritten
    assert not rewrite_followup("What is the formula for the advantage in GRPO?", ["What is FAISS?"]).rewritten
    assert not rewrite_followup("And for part-time staff?", ["How long is leave?"], "off").rewritten
    assert rewrite_followup("What is FAISS?", ["How long is leave?"], always=True).rewritten
    with pytest.raises(ValueError, match="unknown rewrite method"):
        rewrite_followup("and it?", ["x"], "magic")


class FakeGenerator:
    def __init__(self, reply: str):
        self.reply, self.calls = reply, []

    def complete(self, messages, max_tokens):
        self.calls.append((messages, max_tokens))
        return self.reply


def test_model_rewrite_asks_with_the_previous_question_and_cleans_the_reply():
    gen = FakeGenerator('Rewritten question: "How many problems does HumanEval contain?"\nExtra line')
    r = rewrite_followup("How many problems does it contain?", ["Old question?", "What is HumanEval?"],
                         RewriteMethod.MODEL, get_generator=lambda: gen)
    assert r.standalone == "How many problems does HumanEval contain?" and r.method == "model"
    [(messages, max_tokens)] = gen.calls
    assert max_tokens == followup.REWRITE_MAX_TOKENS
    assert "What is HumanEval?" in messages[-1]["content"] and "Old question?" not in messages[-1]["content"]
    assert messages[:3] == rewrite_messages("x", ["y"])[:3]  # the same cached prefix every time


def test_model_is_not_touched_for_a_standalone_question():
    called = []
    r = rewrite_followup("What is the formula for the advantage value in GRPO?", ["What is FAISS?"], "model",
                         get_generator=lambda: called.append(1))
    assert not r.rewritten and called == []


@pytest.mark.parametrize("reply, expected", [
    ("", "and it?"), ("   \n", "and it?"), ("'Is it green?'", "Is it green?"), ("word " * 200, "and it?"),
])
def test_unusable_model_replies_fall_back_to_the_question(reply, expected):
    assert clean_model_rewrite(reply, "and it?") == expected


@pytest.mark.slow
def test_the_real_model_rewrites_through_its_own_cached_prefix(gguf_path):
    from rag.settings import get_settings

    gen = followup.rewrite_generator(get_settings(model_file=str(gguf_path), threads=2))
    out = followup.model_rewrite("How many problems does it contain?", ["What is the HumanEval benchmark?"], gen)
    assert out and len(out.split()) < 40
    # its own context: the rewrite's instruction and worked exchange are the cached prefix, not the answer prompt's
    assert "tomato hornworm" in gen.llm.detokenize(list(gen._prefix)).decode().lower()
    assert gen._prefix_cached and gen.n_ctx == followup.REWRITE_N_CTX


@pytest.mark.parametrize("question", [
    "How do I renew my passport?", "Who approves my expenses?", "How do I renew my passport before it expires?",
    "What is micromotion?", "What is speculative decoding?", "Is it safe to eat raw eggs?",
    "Is it worth fine-tuning a small model?", "How long does it take to get a visa?",
    "When is it safe to transplant tomato seedlings outdoors?",
])
def test_a_question_that_names_its_own_subject_is_standalone(question):
    """Issue 29: the asker's own thing ("my passport"), a definition of a bare noun phrase, and an "it" that points
    at nothing ("is it safe to") name the question's subject."""
    assert not needs_context(question)


@pytest.mark.parametrize("question", ["What does the name mean?", "Which server do I connect to?",
                                      "How do I turn on packing with it?", "Is it safe?", "How long does it take?"])
def test_short_questions_about_nothing_named_stay_follow_ups(question):
    assert needs_context(question)


def test_the_signal_says_why_a_question_is_taken_for_a_follow_up():
    from rag.answer.followup import Signal, followup_signal

    assert followup_signal("And for part-time staff?") == Signal.OPENER
    assert followup_signal("How many problems does it contain?") == Signal.POINTER
    assert followup_signal("Where is the cafeteria?") == Signal.SHORT  # the weak one: the store decides
    assert followup_signal("What is FAISS?") is None


def test_keeps_own_subject_reads_the_rewrites_passages():
    from rag.answer.followup import keeps_own_subject, own_words

    leave = ["Full-time staff get 28 days of annual leave per year.", "Part-time staff get leave pro rata."]
    assert own_words("How do I renew my passport?") == ["renew", "passport"]
    assert not keeps_own_subject("How do I renew my passport?", leave)
    assert keeps_own_subject("And for part-time staff?", leave)
    assert keeps_own_subject("Up to how many?", leave)  # no word of its own: the previous question's subject
    assert keeps_own_subject("Who gets the renewal?", ["Contracts are renewed each year."])  # "renew" stem
    assert not keeps_own_subject("What is the onboarding target?", [])


def test_a_that_opening_a_relative_clause_points_at_nothing():
    """A new user's walk (2026-12-06): "Which status code rejects a request body that is too large?", asked after a
    question on SARIF fingerprints, was read as a follow-up and searched with "(populate result fingerprints)"."""
    from rag.answer.followup import followup_signal

    assert followup_signal("Which status code rejects a request body that is too large?") is None
    assert followup_signal("Is the model that does best open source?") is None
    for q in ("What does that mean?", "Why is that so?", "How does that work?", "Who wrote that?",
              "Can I use that for tables?"):
        assert followup_signal(q) is not None, q


def test_a_common_word_of_the_question_does_not_keep_a_rewrite_to_the_old_topic():
    # a new user's walk (2026-12-07): "what currency do they use in switzerland?" after "what file formats can I
    # export my book to?" kept its rewrite "... (file export book)": the export passages say "use"
    from rag.answer.followup import keeps_own_subject
    from rag.text import TermStats

    export = ["Use the export menu to save your book as EPUB or HTML.", "Use the toolbar to add a figure."]
    stats = TermStats.from_texts(export + ["Switzerland uses the Swiss franc (CHF)."]
                                 + [f"Use tool {i} to edit a chapter." for i in range(10)])
    q = "what currency do they use in switzerland?"
    assert keeps_own_subject(q, export)  # without the store's statistics, "use" is enough
    assert not keeps_own_subject(q, export, stats)
    # a follow-up whose own words are all common still reads them all
    assert keeps_own_subject("how do I use it?", export, stats)
    assert keeps_own_subject("And for the toolbar?", export, stats)
    # a word no chunk holds is in no passage: it does not decide ("part" of "part-time" in a policy that never says it)
    small = TermStats.from_texts(["Full-time staff get 28 days of annual leave."] + ["Bikes go in the shed."] * 9)
    assert keeps_own_subject("And part-time staff?", ["Full-time staff get 28 days of annual leave."], small)
