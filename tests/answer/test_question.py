"""A question is read once (rag.answer.question, issue 36 item 7): one record of its terms and language that the
follow-up rewrite, the search's stages, the gate and the translation all read."""

from __future__ import annotations

import pytest
from fakes import HashEmbedder

from rag.answer import question as question_mod
from rag.answer.pipeline import gated_sources
from rag.answer.question import analyse
from rag.settings import get_settings
from rag.store.store import Store
from rag.text import tokenize

LEAVE = b"""# Leave policy

## Annual leave

Full-time staff get 28 days of annual leave per year, including bank holidays. Part-time staff get annual
leave pro rata to the days they work.
"""


def test_the_record_holds_the_terms_the_tokenizer_gives():
    q = analyse("How many days of annual leave do full-time staff get, and days off?")
    assert q.tokens == tuple(tokenize(q.text)) and q.terms == set(tokenize(q.text))
    assert q.ordered_terms == list(dict.fromkeys(tokenize(q.text)))
    assert analyse(q.text) is q  # the same record for the same text


def test_one_question_is_tokenized_and_its_language_detected_once(tmp_path, monkeypatch):
    """Before: tokenized in five places and its language detected twice (translation, then the calibrated gate)."""
    detected, tokenized = [], []
    real_lang, real_tok = question_mod.question_language, question_mod.tokenize
    monkeypatch.setattr(question_mod, "question_language", lambda t: detected.append(t) or real_lang(t))
    monkeypatch.setattr(question_mod, "tokenize", lambda t: tokenized.append(t) or real_tok(t))
    question_mod.analyse.cache_clear()
    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s"), embedder=HashEmbedder())
    try:
        assert s.ingest_bytes(LEAVE, "leave.md").status == "ready"
        q = "How many days of annual leave do full-time staff get each year?"
        gate, cites, _ = gated_sources(s, q)
        assert cites and gate.language is not None
        assert detected == [q] and tokenized.count(q) == 1
    finally:
        s.close()
        question_mod.analyse.cache_clear()


@pytest.mark.parametrize("text", ["", "   ", "?"])
def test_empty_questions_have_no_terms_and_no_language(text):
    q = analyse(text)
    assert q.tokens == () and q.language is None
