"""Question and document languages (issues 15, 19; one module since issue 23): the detector on a bank of questions in
seven languages, the documents' languages, the restriction to the corpus languages."""

import json
from pathlib import Path

from rag import language

BANK = Path(__file__).parent / "fixtures" / "lang_questions.jsonl"


def test_bank_questions_get_their_language_or_none_never_a_wrong_one():
    items = [json.loads(line) for line in BANK.read_text(encoding="utf-8").splitlines()]
    got = [(i["lang"], language.question_language(i["text"])) for i in items]
    wrong = [(want, g, i["text"]) for (want, g), i in zip(got, items) if g is not None and g[0] != want]
    assert wrong == []
    foreign = [g for want, g in got if want != "en"]
    assert sum(g is not None for g in foreign) >= 0.9 * len(foreign)


def test_short_or_unsure_questions_get_no_language():
    assert language.question_language("LoRA rank?") is None
    assert language.question_language("Wann werden die Parkausweise erneuert?")[0] == "de"


def test_differs_only_when_both_sides_are_known():
    assert language.differs("de", {"en": 1.0})
    assert not language.differs("de", {"en": 0.8, "de": 0.2})
    assert not language.differs(None, {"en": 1.0})
    assert not language.differs("de", {})
    # every document's language counts, however few its chunks: a French manual of 100 chunks beside a Russian
    # contract of 3,000 (a new user's walk, 2026-12-07: its French questions were translated into Russian)
    assert language.main_languages({"ru": 0.97, "fr": 0.03}) == ["ru", "fr"]
    assert not language.differs("fr", {"ru": 0.968, "en": 0.031, "fr": 0.001})
    assert language.language_name("de") == "German" and language.language_name("xx") == "xx"
