"""A question read once (issue 36, item 7): its words, terms and languages, for every stage that reads it.

Followed through the code from :meth:`rag.answer.conversation.Conversation.ask`, one question was tokenized in
five places (the follow-up signal and rewrite, the key passage, the excerpts, the learned gate's features, the
evidence sentence), then again by the search (BM25's terms, its coverage weight) and by the claim check (the
question's claim words, once per sentence of the answer), and its language detected twice (the translation,
then the calibrated gate). :func:`analyse` tokenizes a text once into a frozen :class:`Question`; each stage
asks for the same text's record, so every stage reads the same words and the work is done once per question:

* the follow-up signal and rewrite, the key passage, the excerpts, the gates and the citations read
  :attr:`Question.tokens` (:func:`rag.text.tokenize`'s terms);
* retrieval's lexical leg stems the same tokens (:meth:`rag.index.analyzer.Analyzer.query_terms`, once per
  question and index) in :meth:`Question.language_among` the documents' languages;
* the claim check reads :attr:`Question.claim_words` (:func:`rag.text.content_words`' words);
* the calibrated gate and the translation read :attr:`Question.language`.

Two languages are asked of a question, each detected once, when first asked for: :attr:`Question.language`,
the language among all when the detector is sure (:func:`rag.language.question_language`: the distance gate
and a store without translation never need it), and :meth:`Question.language_among`, the likeliest of the
documents' languages (:func:`rag.language.detect_language`: BM25's stemmer; no detection for a store in one
language).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from rag.language import detect_language, question_language
from rag.text import STOPWORDS, claim_words, content_words, strip_markers, tokenize

#: Questions kept analysed in a process (a chat's recent questions and their rewrites; tiny records).
CACHED_QUESTIONS = 512


def asked(query: str) -> str:
    """``query`` without the bracketed context a follow-up's rewrite adds at its end (``... (HumanEval
    benchmark)``, ``... (after: What is TTFT (Time to First Token)?)``, :mod:`rag.answer.followup`): words for
    the search, not something the user asked the answer to cover. Nested brackets are matched."""
    text = query.rstrip()
    if not text.endswith(")"):
        return text
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            return text[:i].rstrip() if i > 0 else text
    return text


@dataclass(frozen=True)
class Question:
    """One question as the pipeline reads it: ``text`` as given; ``words`` every :func:`rag.text.tokenize` word in
    order, no stopword dropped (the one tokenization); :attr:`tokens` the terms (stopwords dropped, repeats kept);
    :attr:`terms` the distinct ones; :attr:`claim_words` what a claim is made of; :attr:`language`
    ``(ISO 639-1 code, probability)`` when the detector is sure, else ``None``."""

    text: str
    words: tuple[str, ...] = field(compare=False)
    _among: dict[tuple[str, ...], str] = field(default_factory=dict, init=False, compare=False, repr=False)

    @cached_property
    def tokens(self) -> tuple[str, ...]:
        """The terms in order (:data:`rag.text.STOPWORDS` dropped; repeats kept): ``tokenize(text)``."""
        return tuple(w for w in self.words if w not in STOPWORDS)

    @property
    def terms(self) -> frozenset[str]:
        """The distinct terms."""
        return frozenset(self.tokens)

    @property
    def ordered_terms(self) -> list[str]:
        """The distinct terms in question order."""
        return list(dict.fromkeys(self.tokens))

    @cached_property
    def claim_words(self) -> tuple[str, ...]:
        """The question's claim words, :func:`rag.text.content_words` (each once, in that set's order)."""
        plain = strip_markers(self.text) == self.text  # a question rarely holds a [n] marker
        return tuple(claim_words(self.words) if plain else content_words(self.text))

    @cached_property
    def language(self) -> tuple[str, float] | None:
        """The question's language (:func:`rag.language.question_language`), detected once, when first asked for."""
        return question_language(self.text)

    def language_among(self, among: Sequence[str]) -> str:
        """The likeliest of ``among`` (ISO codes: the documents' languages) for the question
        (:func:`rag.language.detect_language`), detected once per set of languages."""
        key = tuple(sorted(set(among)))
        if key not in self._among:
            self._among[key] = detect_language(self.text, among)
        return self._among[key]


@lru_cache(maxsize=CACHED_QUESTIONS)
def analyse(text: str) -> Question:
    """The :class:`Question` of ``text``: tokenized once; the same record for the same text in this process."""
    return Question(text, tuple(tokenize(text, stopwords=frozenset())))
