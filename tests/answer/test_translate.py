"""Questions in another language than the documents (rag.answer.translate, issue 27 item 5): translated only then,
searched and gated as translated, and said so; one check of the real 0.5B (slow)."""

from __future__ import annotations

import pytest

from rag.answer.gate.calibrated_gate import store_calibration
from rag.answer.pipeline import gated_sources
from rag.answer.translate import (
    Translation,
    answer_language_note,
    clean_translation,
    needs_translation,
    translate_question,
    translation_messages,
)
from rag.errors import ModelError
from rag.settings import get_settings

DOC = "02-llm-inference.md"
GERMAN = "Was ist die Zeit bis zum ersten Token (TTFT) und welche Inferenzphase beeinflusst sie hauptsächlich?"
ENGLISH = "What is the time to the first token (TTFT) and which inference phase mainly affects it?"


class Translator:
    """A stand-in for the GGUF: records the messages it was given and answers ``reply``."""

    def __init__(self, reply: str = ENGLISH, fail: bool = False):
        self.reply, self.fail, self.calls = reply, fail, []

    def complete(self, messages, max_tokens):
        self.calls.append(messages)
        if self.fail:
            raise ModelError("model missing; run: make models")
        return self.reply


@pytest.fixture(scope="module")
def store(tmp_path_factory, corpus_dir, hash_embedder):
    from rag.store.store import Store

    s = Store(tmp_path_factory.mktemp("translate-store"), settings=get_settings(), embedder=hash_embedder)
    assert s.ingest_path(corpus_dir / "docs" / DOC).status == "ready"
    return s


def test_only_a_question_in_none_of_the_documents_languages_is_translated():
    assert needs_translation(GERMAN, {"en": 1.0}) == ("de", "en")
    assert needs_translation(ENGLISH, {"en": 1.0}) is None
    assert needs_translation(GERMAN, {"en": 0.9, "de": 0.1}) is None  # a German document is there: as asked
    assert needs_translation("TTFT?", {"en": 1.0}) is None  # too short to tell: as asked
    assert needs_translation(GERMAN, {}) is None  # the documents' language unknown: as asked


def test_the_prompt_asks_for_the_documents_language_with_one_worked_example():
    msgs = translation_messages(GERMAN, "en")
    assert msgs[0]["content"].startswith("Translate the user's question into English.")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"] and msgs[-1]["content"] == GERMAN
    assert [m["role"] for m in translation_messages(ENGLISH, "de")] == ["system", "user"]  # no German example


def test_the_model_output_is_cleaned_or_dropped():
    assert clean_translation('Translation: "How long is it?"\nExtra line', "Wie lange?") == "How long is it?"
    assert clean_translation("", "Wie lange?") == "Wie lange?"
    assert clean_translation("x " * 200, "Wie lange?") == "Wie lange?"


def test_translate_question_calls_the_model_only_when_needed_and_survives_its_failure():
    t = Translator()
    assert translate_question(ENGLISH, {"en": 1.0}, lambda: t) == Translation(ENGLISH) and t.calls == []
    out = translate_question(GERMAN, {"en": 1.0}, lambda: t)
    assert out.translated and out.query == ENGLISH and (out.source_language, out.target_language) == ("de", "en")
    assert len(t.calls) == 1
    failed = translate_question(GERMAN, {"en": 1.0}, lambda: Translator(fail=True))
    assert failed == Translation(GERMAN) and not failed.translated


def test_a_translated_question_is_searched_gated_and_reported_as_translated(store):
    t = Translator()
    gate, cites, ms = gated_sources(store, GERMAN, get_translator=lambda: t)
    assert store_calibration(store).languages == {"en": 1.0}
    assert gate.query == ENGLISH and len(t.calls) == 1
    plan = gate.plan
    assert plan.query == GERMAN and plan.rewritten == ENGLISH and plan.translated_from == "de"
    assert plan.to_json()["translated_from"] == "de" and plan.to_json()["rewritten_query"] == ENGLISH
    assert not gate.language.differs  # the gate read the translation
    assert ms > 0


def test_an_english_question_never_reaches_the_model_and_the_setting_turns_it_off(store):
    t = Translator()
    gate, _, _ = gated_sources(store, ENGLISH, get_translator=lambda: t)
    assert t.calls == [] and gate.plan.translated_from is None and gate.plan.rewritten is None
    off = get_settings(translate_questions=False)
    gate, _, _ = gated_sources(store, GERMAN, off, get_translator=lambda: t)
    assert t.calls == [] and gate.query == GERMAN and gate.language.differs  # the gate says the languages differ


def test_the_note_names_both_languages():
    assert answer_language_note("de", "en") == ("Your question is in German and the documents are in English: it was "
                                                "searched as translated, and the answer is in English.")
    assert answer_language_note(None, "en") is None


@pytest.mark.slow
def test_the_real_model_translates_a_german_question(gguf_path):
    from rag.answer.translate import translation_generator

    gen = translation_generator(get_settings())
    out = translate_question(GERMAN, {"en": 1.0}, lambda: gen)
    assert out.translated and out.source_language == "de"
    assert "TTFT" in out.query and "token" in out.query.lower()


def test_the_searched_as_line_ends_its_sentence_once():
    """"Searched as (translated from Spanish): ... end of the story?." read as a typo (2026-12-02)."""
    from types import SimpleNamespace

    from rag.answer.translate import searched_as_line
    from rag.types import QueryPlan

    def line(rewritten: str) -> str:
        plan = QueryPlan(query="¿cómo termina?", language="es", rewritten=rewritten, translated_from="es")
        return searched_as_line(SimpleNamespace(plan=plan, language=SimpleNamespace(documents=("en",))))

    assert "How does the story end? Your question is in Spanish" in line("How does the story end?")
    assert "the end of the story. Your question" in line("the end of the story")
