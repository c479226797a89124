"""One vocabulary for every stage: the tokenizer, the stop list, and term statistics (IDF).

Used by BM25 (:mod:`rag.index.bm25`), the excerpts (:mod:`rag.answer.excerpt`),
the claim check (:mod:`rag.answer.attribute`) and the refusal gate
(:mod:`rag.answer.learned_gate`), so that a "term" means the same everywhere.

* :func:`tokenize` - NFKC, case-folded Unicode words (any script), CJK runs as
  character bigrams, English stopwords (bm25s' list) dropped;
* :class:`TermStats` - document frequencies over chunk texts and BM25's IDF.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bm25s.stopwords import STOPWORDS_EN

_WORD = re.compile(r"[^\W_]+")
# Scripts written without spaces between words: Han, Hiragana, Katakana (plus extensions).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")


#: English stopwords (bm25s' list): dropped from every token list.
STOPWORDS = frozenset(STOPWORDS_EN)


def _split_cjk(word: str) -> list[str]:
    out: list[str] = []
    pos = 0
    for m in _CJK.finditer(word):
        if m.start() > pos:
            out.append(word[pos:m.start()])
        run = m.group()
        out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        pos = m.end()
    if pos < len(word):
        out.append(word[pos:])
    return out


def tokenize(text: str, *, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """BM25 tokens of ``text``: NFKC-normalised, case-folded runs of Unicode letters/digits.

    Unlike the design's ``[a-z0-9]+`` this keeps Cyrillic, Greek, Arabic and
    every other script; runs of CJK characters become overlapping character
    bigrams (a lone CJK character stays a unigram). English stopwords are
    dropped, so a stopword-only query has no tokens (and BM25 returns no hits).
    """
    words = _WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    tokens: list[str] = []
    for w in words:
        parts = _split_cjk(w) if _CJK.search(w) else [w]
        tokens.extend(p for p in parts if p not in stopwords)
    return tokens


@dataclass(frozen=True)
class TermStats:
    """Document frequencies of :func:`tokenize` tokens over ``n_chunks`` chunk texts (for IDF)."""

    n_chunks: int
    df: Mapping[str, int]

    @classmethod
    def from_texts(cls, texts: Sequence[str]) -> "TermStats":
        """Count, per token of :func:`tokenize`, how many of ``texts`` contain it."""
        df: Counter[str] = Counter()
        for t in texts:
            df.update(set(tokenize(t)))
        return cls(len(texts), dict(df))

    def idf(self, term: str) -> float:
        """``ln(1 + (N - df + 0.5) / (df + 0.5))``: BM25's IDF; largest for a term in no chunk."""
        d = self.df.get(term, 0)
        return math.log(1.0 + (self.n_chunks - d + 0.5) / (d + 0.5))
