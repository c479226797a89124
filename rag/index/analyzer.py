"""Stage 4 of the design, lexical leg (issue 19): BM25 terms stemmed in each document's own language.

A term is a :func:`rag.text.tokenize` token (NFKC, case-folded Unicode words,
CJK bigrams, English stopwords dropped) reduced by the Snowball stemmer
(PyStemmer) of the text's language, so "caching", "cached" and "caches" meet
at "cach" and a user's "tumour cells" finds "tumor cell". The language is
detected once per document (:func:`rag.language.document_languages`: py3langid, 97 languages, model
shipped in the wheel) and, for a query, among the languages of the indexed documents only,
so a short query cannot be taken for a language the corpus does not hold.
A language without a Snowball stemmer (or undetectable text) keeps the plain
tokens. Index and query always go through the same :class:`Analyzer`.

Measured on both dev corpora (issue 19, docs/evaluation.md): users' wording
R@4 +3 / -2, documents' wording +1 / -0 on its own; cost about 0.1 ms per query.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rag.language import DEFAULT_LANGUAGE
from rag.question import CACHED_QUESTIONS, analyse
from rag.text import tokenize

#: ISO 639-1 code -> Snowball algorithm name (PyStemmer), for the languages both know.
SNOWBALL = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek",
    "en": "english", "es": "spanish", "eu": "basque", "fi": "finnish", "fr": "french", "ga": "irish",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "nl": "dutch", "no": "norwegian", "pl": "polish", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil", "tr": "turkish",
}


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
        """The language of ``query``, chosen among the documents' :attr:`languages` (detected once per question:
        :meth:`rag.question.Question.language_among`)."""
        return analyse(query).language_among(self.languages)

    def query_terms(self, query: str) -> list[str]:
        """:meth:`terms` of a question, from its one record (:func:`rag.question.analyse`: tokenized once) and
        stemmed once per question and analyzer: what BM25's search and its coverage weight both read."""
        return list(_query_terms(self, query))


@lru_cache(maxsize=CACHED_QUESTIONS)
def _query_terms(analyzer: Analyzer, query: str) -> tuple[str, ...]:
    tokens = list(analyse(query).tokens)
    if not analyzer.stem or not tokens:
        return tuple(tokens)
    stemmer = _stemmer(analyzer.query_language(query))
    return tuple(stemmer.stemWords(tokens)) if stemmer else tuple(tokens)
