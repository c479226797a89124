"""A question is read once (rag.question, issue 36 item 7): one record of its terms and language that the
follow-up rewrite, the search's stages, the gate and the translation all read."""

from __future__ import annotations

from collections import Counter

import pytest
from fakes import HashEmbedder

from rag import question as question_mod
from rag.answer.pipeline import gated_sources
from rag.question import analyse
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
    monkeypatch.setattr(question_mod, "tokenize", lambda t, **k: tokenized.append(t) or real_tok(t, **k))
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


GERMAN = """# Urlaub

## Jahresurlaub

Vollzeitkräfte erhalten 28 Tage Jahresurlaub pro Jahr, einschließlich der Feiertage. Teilzeitkräfte erhalten
den Urlaub anteilig zu ihren Arbeitstagen.
""".encode()


#: Every module that reads a question's words or language on one ask (a module imported only after the counters
#: are in place would escape them).
ANALYSING = ("rag.answer.conversation", "rag.answer.pipeline", "rag.answer.followup", "rag.answer.translate",
             "rag.answer.cite", "rag.answer.excerpt", "rag.answer.key_passage", "rag.answer.gate.gates",
             "rag.answer.gate.learned_gate", "rag.answer.gate.calibrated_gate", "rag.answer.check.attribute",
             "rag.answer.check.claims", "rag.answer.check.judged", "rag.answer.check.verdict",
             "rag.answer.check.confidence", "rag.index.analyzer", "rag.index.bm25", "rag.index.fusion")


class _Counts:
    """How often each text is tokenized, has its language asked for (all languages; among the documents'), and
    has its tokens stemmed, by every module of ``rag`` (a module-level name patched wherever it was imported)."""

    def __init__(self, monkeypatch):
        import importlib
        import sys

        from rag import language, text
        from rag.index import analyzer

        for name in ANALYSING:  # imported first, so that their names are patched too
            importlib.import_module(name)

        self.tokenized, self.detected, self.among, self.stemmed = Counter(), Counter(), Counter(), Counter()
        patched = {"tokenize": (text.tokenize, self.tokenized), "detect": (language.detect, self.detected),
                   "detect_language": (language.detect_language, self.among)}
        for name, (real, counter) in patched.items():
            def counting(t, *a, _real=real, _counter=counter, **k):
                _counter[t] += 1
                return _real(t, *a, **k)
            for mod in [m for n, m in sys.modules.items() if n == "rag" or n.startswith("rag.")]:
                if getattr(mod, name, None) is real:
                    monkeypatch.setattr(mod, name, counting)
        real_stemmer = analyzer._stemmer

        class Stemmer:
            def __init__(self, inner):
                self.inner = inner

            def stemWords(self, words):  # noqa: N802 - PyStemmer's name
                counts.stemmed[tuple(words)] += 1
                return self.inner.stemWords(words)

        counts = self
        monkeypatch.setattr(analyzer, "_stemmer", lambda lang: (lambda s: s and Stemmer(s))(real_stemmer(lang)))
        question_mod.analyse.cache_clear()
        language._detect.cache_clear()


def test_one_ask_reads_each_question_once(tmp_path, monkeypatch, fake_generator):
    """Issue 36, item 7: from ``Conversation.ask``, a question (and its follow-up's standalone form) is tokenized
    once, stemmed once, and has its language detected once of each kind (sure-or-none among all languages, for
    the gate and the translation; the best among the documents' languages, for BM25's stemmer): the follow-up
    rewrite, retrieval (both BM25 legs' terms, the coverage weight, the plan), the gate and the translation read
    the one :class:`rag.question.Question`."""
    from rag.answer.conversation import Conversation

    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s", translate_questions=True),
              embedder=HashEmbedder())
    try:
        assert s.ingest_bytes(LEAVE, "leave.md").status == "ready"
        assert s.ingest_bytes(GERMAN, "urlaub.md").status == "ready"  # two languages: BM25 detects the query's
        counts = _Counts(monkeypatch)
        conv = Conversation(s, save=False)
        first = "How many days of annual leave do full-time staff get each year?"
        conv.ask(first).run()
        follow = conv.ask("And how many do they get for part-time?")
        follow.run()
        asked = [first, follow.followup.question, follow.followup.standalone]
        assert len(set(asked)) == 3, asked
        for q in asked:
            assert counts.tokenized[q] == 1, (q, counts.tokenized[q])
            assert counts.detected[q] <= 1 and counts.among[q] <= 1, (q, counts.detected[q], counts.among[q])
            assert counts.stemmed[question_mod.analyse(q).tokens] <= 1, q
        assert counts.detected[first] == 1 and counts.among[first] == 1
        assert counts.stemmed[question_mod.analyse(first).tokens] == 1
    finally:
        s.close()
        question_mod.analyse.cache_clear()
