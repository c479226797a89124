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

An index built since issue 40's identifier pass (``identifiers``) also holds, beside those terms, the
:func:`identifier_terms` of its text: an identifier joined by ``.``, ``_`` or ``-`` kept whole
("result.fingerprints", "max_tokens", "3.14"), and the parts of a camel-case word ("partialFingerprints" ->
"partial", "fingerprints"), so a question that types the dotted name finds the chunk that says it, and one that
says "partial fingerprints" finds ``partialFingerprints``. Indexes saved before keep their plain terms (and their
queries too: the flag is saved with the index).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache

from rag.language import DEFAULT_LANGUAGE
from rag.question import CACHED_QUESTIONS, analyse
from rag.text import CJK_RE, STOPWORDS, WORD_RE, tokenize

#: Characters that join word runs into one identifier when they sit between two runs with no space.
JOINERS = frozenset("._-")
#: Word runs longer than this (characters) are not split at case changes: no identifier is that long.
MAX_CAMEL = 64
#: At most this many word runs joined into one identifier (a longer chain is cut into pieces of this size).
MAX_JOINED = 8

#: Marks a word in capitals that spells a stopword as an acronym term (:func:`acronym_terms`).
ACRONYM = "_"

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


def camel_parts(word: str) -> list[str]:
    """The parts of a camel-case ``word`` (original case, letters and digits only), split where a lower-case
    letter meets an upper-case one and before the last capital of a capital run followed by a lower-case letter:
    "partialFingerprints" -> ["partial", "Fingerprints"], "HTTPServer" -> ["HTTP", "Server"]; ``[word]`` when it
    has no such change or is longer than :data:`MAX_CAMEL` characters. One linear scan, no regular expression."""
    if len(word) > MAX_CAMEL or word.islower() or word.isupper():
        return [word]
    parts, start = [], 0
    for i in range(1, len(word)):
        prev, cur = word[i - 1], word[i]
        nxt = word[i + 1] if i + 1 < len(word) else ""
        if (prev.islower() and cur.isupper()) or (prev.isupper() and cur.isupper() and nxt.islower()):
            parts.append(word[start:i])
            start = i
    parts.append(word[start:])
    return parts


#: At most this many camel-case parts are indexed (a longer run of case changes is a key or base64, not a name).
MAX_PARTS = 5


def _code_like(parts: list[str]) -> bool:
    """Whether camel-case ``parts`` (:func:`camel_parts`) are a name from code, whose parts a reader says apart:
    lower camel case ("partialFingerprints", "getElementById") or three parts and more ("DataCollatorForSeq2Seq",
    "XMLHttpRequest"), at most :data:`MAX_PARTS`, each of two characters or more. A product's two-part name
    ("GitHub", "JavaScript", "OpenAI", "iPhone") is not split: "git" and "java" are other things (an adversarial
    review, 2026-12-06)."""
    if not 2 <= len(parts) <= MAX_PARTS or any(len(p) < 2 for p in parts):
        return False
    return parts[0][:1].islower() or len(parts) >= 3


def identifier_terms(text: str) -> list[str]:
    """The extra BM25 tokens of ``text`` (NFKC, case-folded, :data:`rag.text.STOPWORDS` dropped), in order:

    * each identifier of 2 to :data:`MAX_JOINED` word runs joined by one :data:`JOINERS` character with no space,
      whole ("result.fingerprints", "x-request-id", "3.14"); a full stop between a lower-case word and a capital is a
      sentence's end with its space lost ("restarts.Then"), not a join ("System.Text" is one);
    * each part of a camel-case word (:func:`camel_parts`) that is a name from code (:func:`_code_like`).

    These come on top of :func:`rag.text.tokenize`'s tokens (which already hold every run on its own and a
    camel-case word whole). Words holding CJK characters are left to :func:`rag.text.tokenize`. Linear in
    ``len(text)``: one pass of :data:`rag.text.WORD_RE` (a single character class, no backtracking)."""
    text = unicodedata.normalize("NFKC", text)
    out: list[str] = []
    joined, runs, last_end, prev = "", 0, -2, ""
    for m in WORD_RE.finditer(text):
        word = m.group()
        if CJK_RE.search(word):
            if runs > 1:
                out.append(joined)
            joined, runs = "", 0
            continue
        parts = camel_parts(word)
        if _code_like(parts):
            out.extend(parts)
        if (runs and runs < MAX_JOINED and m.start() == last_end + 1 and text[last_end] in JOINERS
                and not (text[last_end] == "." and word[:1].isupper() and prev.islower())):
            joined, runs = joined + text[last_end] + word, runs + 1
        else:
            if runs > 1:
                out.append(joined)
            joined, runs = word, 1
        last_end, prev = m.end(), word
    if runs > 1:
        out.append(joined)
    return [t for t in (w.casefold() for w in out) if t not in STOPWORDS]


def acronym_terms(text: str) -> list[str]:
    """The BM25 terms of ``text``'s words in capitals that spell a stopword (:data:`rag.text.STOPWORDS`), case-folded
    with :data:`ACRONYM` after them: "IT" -> "it_". :func:`rag.text.tokenize` drops the stopword "it" everywhere,
    so "Does the proposal have an IT component?" could not find "IT component (...)? (Yes/No)" (a new user's walk
    of the API, 2026-12-06). A line mostly in capitals gives none: its stopwords are stopwords (an adversarial
    review, 2026-12-06). Unlike :func:`identifier_terms` these
    are words the plain tokens lack, so the BM25 leg's coverage reads them. Linear: one pass of
    :data:`rag.text.WORD_RE`."""
    out = []
    for line in unicodedata.normalize("NFKC", text).splitlines():
        letters = [ch for ch in line if ch.isalpha()]
        if sum(ch.isupper() for ch in letters) * 2 > len(letters):
            continue  # a line in capitals ("IS IT SAFE TO DELETE THE CACHE?", a licence's "WHETHER IT IS")
        out.extend(w.casefold() + ACRONYM for w in WORD_RE.findall(line)
                   if len(w) >= 2 and w.isupper() and w.casefold() in STOPWORDS)
    return out


@dataclass(frozen=True)
class Analyzer:
    """Text -> BM25 terms. ``stem`` False gives the plain :func:`rag.text.tokenize` tokens (the pre-issue-19 index).

    ``languages`` are the ISO codes of the indexed documents (sorted); queries
    are detected among them. ``identifiers`` adds :func:`identifier_terms` to the tokens (indexes built since
    issue 40's identifier pass; an index saved before reads its queries without them).
    """

    stem: bool = True
    languages: tuple[str, ...] = (DEFAULT_LANGUAGE,)
    identifiers: bool = False

    def terms(self, text: str, lang: str | None = None) -> list[str]:
        """The terms of ``text`` in language ``lang`` (detected among :attr:`languages` when ``None``)."""
        tokens = tokenize(text) + (identifier_terms(text) + acronym_terms(text) if self.identifiers else [])
        if not self.stem or not tokens:
            return tokens
        stemmer = _stemmer(lang or self.query_language(text))
        return stemmer.stemWords(tokens) if stemmer else tokens

    def query_language(self, query: str) -> str:
        """The language of ``query``, chosen among the documents' :attr:`languages` (detected once per question:
        :meth:`rag.question.Question.language_among`)."""
        return analyse(query).language_among(self.languages)

    def query_terms(self, query: str, *, identifiers: bool = True) -> list[str]:
        """:meth:`terms` of a question, from its one record (:func:`rag.question.analyse`: tokenized once) and
        stemmed once per question and analyzer: what BM25's search reads. ``identifiers`` False leaves out
        :func:`identifier_terms` (which repeat words the plain tokens already hold): what BM25's coverage weight
        reads, so the fusion and the gate weigh a question as they were fitted to (with :func:`acronym_terms`,
        words no plain token holds)."""
        if not identifiers and self.identifiers:  # the acronym terms stay: no plain token holds them
            return list(_query_terms(replace(self, identifiers=False), query)) + acronym_terms(query)
        return list(_query_terms(self, query))


@lru_cache(maxsize=CACHED_QUESTIONS)
def _query_terms(analyzer: Analyzer, query: str) -> tuple[str, ...]:
    tokens = list(analyse(query).tokens) + (identifier_terms(query) + acronym_terms(query) if analyzer.identifiers
                                            else [])
    if not analyzer.stem or not tokens:
        return tuple(tokens)
    stemmer = _stemmer(analyzer.query_language(query))
    return tuple(stemmer.stemWords(tokens)) if stemmer else tuple(tokens)
