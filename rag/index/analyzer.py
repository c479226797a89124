"""Stage 4 of the design, lexical leg (issue 19): BM25 terms stemmed in each document's own language.

A term is a :func:`rag.text.tokenize` token (NFKC, case-folded Unicode words,
CJK bigrams, English stopwords dropped) reduced by the Snowball stemmer
(PyStemmer) of the text's language, so "caching", "cached" and "caches" meet
at "cach" and a user's "tumour cells" finds "tumor cell". The language is
detected once per document (py3langid, 97 languages, model shipped in the
wheel) and, for a query, among the languages of the indexed documents only,
so a short query cannot be taken for a language the corpus does not hold.
A language without a Snowball stemmer (or undetectable text) keeps the plain
tokens. Index and query always go through the same :class:`Analyzer`.

Measured on both dev corpora (issue 19, docs/evaluation.md): users' wording
R@4 +3 / -2, documents' wording +1 / -0 on its own; cost about 0.1 ms per query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag.text import tokenize

#: ISO 639-1 code -> Snowball algorithm name (PyStemmer), for the languages both know.
SNOWBALL = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek",
    "en": "english", "es": "spanish", "eu": "basque", "fi": "finnish", "fr": "french", "ga": "irish",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "nl": "dutch", "no": "norwegian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil", "tr": "turkish",
}

#: The language assumed for empty or undetectable text.
DEFAULT_LANGUAGE = "en"

#: Characters of a document read to detect its language (the start is enough and keeps it under 10 ms).
DETECT_CHARS = 20000


@lru_cache(maxsize=16)
def _identifier(among: tuple[str, ...] | None):
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    lid = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    if among:
        lid.set_languages(list(among))
    return lid


def detect_language(text: str, among: Sequence[str] | None = None) -> str:
    """ISO 639-1 code of ``text``'s language (py3langid), chosen among ``among`` when given.

    Text with no letters gives :data:`DEFAULT_LANGUAGE` (or ``among[0]``).
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


@lru_cache(maxsize=64)
def _stemmer(lang: str):
    import Stemmer

    name = SNOWBALL.get(lang)
    return Stemmer.Stemmer(name) if name else None


@dataclass(frozen=True)
class Analyzer:
    """Text -> BM25 terms. ``stem`` False gives the plain :func:`rag.text.tokenize` tokens (the pre-issue-19 index).

    ``languages`` are the ISO codes of the indexed documents (sorted); queries
    are detected among them.
    """

    stem: bool = True
    languages: tuple[str, ...] = (DEFAULT_LANGUAGE,)

    def terms(self, text: str, lang: str | None = None) -> list[str]:
        """The terms of ``text`` in language ``lang`` (detected among :attr:`languages` when ``None``)."""
        tokens = tokenize(text)
        if not self.stem or not tokens:
            return tokens
        stemmer = _stemmer(lang or self.query_language(text))
        return stemmer.stemWords(tokens) if stemmer else tokens

    def query_language(self, query: str) -> str:
        """The language of ``query``, chosen among the documents' :attr:`languages`."""
        return detect_language(query, self.languages)


def document_languages(texts: Sequence[str], groups: Sequence[object] | None = None) -> list[str]:
    """One ISO code per text: detected once per group (a document's chunks share its language).

    ``groups[i]`` is the document key of ``texts[i]``; ``None`` makes all texts
    one group (one language). The first :data:`DETECT_CHARS` characters of
    each group's texts are read: one detection costs 1-10 ms on 2 busy cores.
    """
    keys = list(groups) if groups is not None else [0] * len(texts)
    if len(keys) != len(texts):
        raise ValueError(f"{len(keys)} groups for {len(texts)} texts")
    sample: dict[object, list[str]] = {}
    for k, t in zip(keys, texts):
        got = sample.setdefault(k, [])
        if sum(map(len, got)) < DETECT_CHARS:
            got.append(t)
    lang = {k: detect_language("\n".join(v)) for k, v in sample.items()}
    return [lang[k] for k in keys]
