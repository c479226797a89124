"""A question read once (issue 36, item 7): its terms and its language, for every stage that reads it.

Followed through the code, one question was tokenized in five places (the follow-up signal and rewrite, the
key passage, the excerpts, the learned gate's features, the evidence sentence) and its language detected
twice (the translation, then the calibrated gate). :func:`analyse` reads a text once into a frozen
:class:`Question`; each stage asks for the same text's record, so the work is done once per question and
every stage reads the same terms (:func:`rag.text.tokenize`) and the same language
(:func:`rag.language.question_language`, detected the first time it is asked for: the distance gate and a
store without translation never need it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from rag.language import question_language
from rag.text import tokenize

#: Questions kept analysed in a process (a chat's recent questions and their rewrites; tiny records).
CACHED_QUESTIONS = 512


@dataclass(frozen=True)
class Question:
    """One question as the pipeline reads it: ``text`` as given; ``tokens`` its :func:`rag.text.tokenize` terms in
    order (repeats kept); :attr:`terms` the distinct ones; :attr:`language` ``(ISO 639-1 code, probability)``
    when the detector is sure, else ``None``."""

    text: str
    tokens: tuple[str, ...] = field(compare=False)

    @property
    def terms(self) -> frozenset[str]:
        """The distinct terms."""
        return frozenset(self.tokens)

    @property
    def ordered_terms(self) -> list[str]:
        """The distinct terms in question order."""
        return list(dict.fromkeys(self.tokens))

    @cached_property
    def language(self) -> tuple[str, float] | None:
        """The question's language (:func:`rag.language.question_language`), detected once, when first asked for."""
        return question_language(self.text)


@lru_cache(maxsize=CACHED_QUESTIONS)
def analyse(text: str) -> Question:
    """The :class:`Question` of ``text``: tokenized once; the same record for the same text in this process."""
    return Question(text, tuple(tokenize(text)))
