"""Stage 4 of the design, lexical leg: BM25 (``bm25s``, k1 1.2, b 0.75) over :mod:`rag.index.analyzer` terms.

Terms are :func:`rag.text.tokenize` tokens stemmed in each document's language
(issue 19); the query goes through the same analyzer. A stopword-only or empty
query has no terms and so no hits.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag.index.analyzer import Analyzer
from rag.language import document_languages


class BM25Index:
    """BM25 (Lucene variant, k1 1.2, b 0.75 by default) over chunk texts, via ``bm25s``.

    Built in one go from ``texts`` and their ``ids`` (bm25s has no incremental
    add: the store rebuilds it after each change, about 0.1 s per 1k chunks).
    Terms come from :attr:`analyzer` (:class:`rag.index.analyzer.Analyzer`).
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75, analyzer: Analyzer | None = None):
        self.k1, self.b = k1, b
        self.analyzer = analyzer or Analyzer(stem=False)
        self._ids = np.zeros(0, np.int64)
        self._bm25 = None

    @classmethod
    def build(cls, texts: Sequence[str], ids: Sequence[int] | np.ndarray, *, k1: float = 1.2, b: float = 0.75,
              groups: Sequence[object] | None = None, stem: bool = True,
              languages: Sequence[str | None] | None = None, identifiers: bool = True) -> "BM25Index":
        """Index ``texts[i]`` under ``ids[i]``, stemmed in its language (issue 19) unless ``stem`` is False.

        ``languages[i]`` is the ISO code of ``texts[i]``'s document when known (the store records it per
        document, issue 23); a text without one has its language detected once per document: ``groups[i]``
        names the document of ``texts[i]`` (``None``: all texts are taken as one document). Raises
        ``ValueError`` if the lengths differ.
        """
        if (len(texts) != len(ids) or (groups is not None and len(groups) != len(texts))
                or (languages is not None and len(languages) != len(texts))):
            raise ValueError(f"{len(ids)} ids, {len(groups) if groups is not None else len(texts)} groups and "
                             f"{len(languages) if languages is not None else len(texts)} languages for {len(texts)} texts")
        langs = _languages(texts, groups, languages) if stem and len(texts) else []
        analyzer = Analyzer(stem=stem, languages=tuple(sorted(set(langs))) or Analyzer().languages,
                            identifiers=identifiers)
        # every document gets at least the empty token, so bm25s keeps the row
        tokens = [analyzer.terms(t, langs[i] if stem else None) or [""] for i, t in enumerate(texts)]
        return cls.from_tokens(tokens, ids, k1=k1, b=b, analyzer=analyzer)

    @classmethod
    def from_tokens(cls, tokens: Sequence[list[str]], ids: Sequence[int] | np.ndarray, *, k1: float = 1.2,
                    b: float = 0.75, analyzer: Analyzer | None = None) -> "BM25Index":
        """Index already analysed documents (term lists, none empty) under ``ids``; queries go through ``analyzer``
        (default: plain :func:`rag.text.tokenize` tokens, no stemming), which must be the one that made ``tokens``.

        Terms become ids once per distinct list object, so a corpus replicated
        by reference (the 1M-chunk benchmark, issue 18) costs one copy of its
        term ids, not one per replica. Raises ``ValueError`` if the lengths differ.
        """
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets DEBUG: "Building index from IDs" on stderr
        if len(tokens) != len(ids):
            raise ValueError(f"{len(ids)} ids for {len(tokens)} token lists")
        idx = cls(k1, b, analyzer)
        idx._ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if len(tokens):
            vocab: dict[str, int] = {}
            seen: dict[int, list[int]] = {}  # id(list) -> its term ids; every list stays alive in ``tokens``
            doc_ids = []
            for t in tokens:
                got = seen.get(id(t))
                if got is None:
                    got = seen[id(t)] = [vocab.setdefault(w, len(vocab)) for w in t]
                doc_ids.append(got)
            idx._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
            idx._bm25.index((doc_ids, vocab), show_progress=False)
        return idx

    def __len__(self) -> int:
        return int(self._ids.size)

    def ids(self) -> np.ndarray:
        """All ids held, int64, in build order."""
        return self._ids.copy()

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` by BM25 score: ``(ids int64 (m,), scores float32 (m,))``, best first.

        Only chunks sharing at least one token with the query are returned
        (score > 0): an empty or stopword-only query, or an empty index, gives no hits.
        ``allowed`` (int64 ids) keeps only those chunks (issue 16's scope; the
        statistics stay the whole index's); ``None`` keeps all.
        """
        empty = (np.zeros(0, np.int64), np.zeros(0, np.float32))
        if self._bm25 is None or k <= 0:
            return empty
        q = [t for t in self.analyzer.query_terms(query) if t in self._bm25.vocab_dict]
        if not q:
            return empty
        scores = np.asarray(self._bm25.get_scores(q), dtype=np.float32)
        if allowed is not None:
            scores = np.where(np.isin(self._ids, np.asarray(allowed, dtype=np.int64)), scores, 0.0).astype(np.float32)
        k = min(int(k), int((scores > 0).sum()))
        if k <= 0:
            return empty
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.lexsort((top, -scores[top]))]  # score desc, then position: deterministic ties
        return self._ids[top], scores[top]

    def coverage(self, query: str, chunk_id: int) -> float | None:
        """IDF-weighted share of the query's known terms that chunk ``chunk_id`` contains, in [0, 1] (issue 19).

        ``sum(idf(t) for t in q if t in chunk) / sum(idf(t) for t in q)`` over the
        query's distinct terms found in the index (IDF as BM25's Lucene variant).
        1.0 when the chunk holds every specific word of the question (the
        documents' own wording), low when the best lexical match shares only a
        few common words with it (a user's wording). ``None`` when the query has
        no indexed term or ``chunk_id`` is not in the index. Read without the identifier terms
        (:func:`rag.index.analyzer.identifier_terms`): they repeat words already counted.
        """
        if self._bm25 is None:
            return None
        pos = np.flatnonzero(self._ids == int(chunk_id))
        vocab = self._bm25.vocab_dict
        terms = [t for t in dict.fromkeys(self.analyzer.query_terms(query, identifiers=False)) if t in vocab]
        if not terms or not pos.size:
            return None
        csc = self._bm25.scores
        n = int(csc["num_docs"])
        row = int(pos[0])
        total = held = 0.0
        for t in terms:
            j = vocab[t]
            docs = csc["indices"][csc["indptr"][j]:csc["indptr"][j + 1]]
            idf = float(np.log(1.0 + (n - docs.size + 0.5) / (docs.size + 0.5)))
            total += idf
            if np.any(docs == row):
                held += idf
        return held / total if total > 0 else None

    def save(self, folder: Path) -> None:
        """Write to ``folder`` (created): bm25s files + ``ids.npy`` + ``params.json``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "ids.npy", self._ids)
        (folder / "params.json").write_text(json.dumps({
            "k1": self.k1, "b": self.b, "empty": self._bm25 is None,
            "stem": self.analyzer.stem, "languages": list(self.analyzer.languages),
            "identifiers": self.analyzer.identifiers}))
        if self._bm25 is not None:
            self._bm25.save(str(folder / "bm25s"))

    @classmethod
    def load(cls, folder: Path) -> "BM25Index":
        """Read an index written by :meth:`save`."""
        import bm25s

        folder = Path(folder)
        p = json.loads((folder / "params.json").read_text())
        # an index written before issue 19 has no "stem" (plain tokens), one before issue 40's identifier pass no
        # "identifiers": its queries are analysed as its texts were
        idx = cls(p["k1"], p["b"], Analyzer(stem=bool(p.get("stem", False)),
                                             languages=tuple(p.get("languages") or Analyzer().languages),
                                             identifiers=bool(p.get("identifiers", False))))
        idx._ids = np.load(folder / "ids.npy")
        if not p["empty"]:
            idx._bm25 = bm25s.BM25.load(str(folder / "bm25s"))
        return idx


def _languages(texts: Sequence[str], groups: Sequence[object] | None,
               known: Sequence[str | None] | None) -> list[str]:
    """Each text's language: ``known[i]`` where given, else detected once per document (the others' group)."""
    if known is not None and all(known):
        return list(known)
    detected = document_languages(texts, groups)
    return [k or d for k, d in zip(known, detected)] if known is not None else detected
