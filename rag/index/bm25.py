"""Stage 4 of the design, lexical leg: BM25 (``bm25s``, k1 1.2, b 0.75) over :func:`rag.text.tokenize` tokens.

A stopword-only or empty query has no tokens and so no hits.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rag.text import tokenize


class BM25Index:
    """BM25 (Lucene variant, k1 1.2, b 0.75 by default) over chunk texts, via ``bm25s``.

    Built in one go from ``texts`` and their ``ids`` (bm25s has no incremental
    add: the store rebuilds it after each change, about 0.1 s per 1k chunks).
    Tokens come from :func:`tokenize`.
    """

    def __init__(self, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self._ids = np.zeros(0, np.int64)
        self._bm25 = None

    @classmethod
    def build(cls, texts: Sequence[str], ids: Sequence[int] | np.ndarray, *, k1: float = 1.2, b: float = 0.75) -> "BM25Index":
        """Index ``texts[i]`` under ``ids[i]``. Raises ``ValueError`` if the lengths differ."""
        if len(texts) != len(ids):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        # every document gets at least the empty token, so bm25s keeps the row
        return cls.from_tokens([tokenize(t) or [""] for t in texts], ids, k1=k1, b=b)

    @classmethod
    def from_tokens(cls, tokens: Sequence[list[str]], ids: Sequence[int] | np.ndarray, *, k1: float = 1.2,
                    b: float = 0.75) -> "BM25Index":
        """Index already tokenised documents (:func:`rag.text.tokenize` lists, none empty) under ``ids``.

        Terms become ids once per distinct list object, so a corpus replicated
        by reference (the 1M-chunk benchmark, issue 18) costs one copy of its
        term ids, not one per replica. Raises ``ValueError`` if the lengths differ.
        """
        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets DEBUG: "Building index from IDs" on stderr
        if len(tokens) != len(ids):
            raise ValueError(f"{len(ids)} ids for {len(tokens)} token lists")
        idx = cls(k1, b)
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
        q = [t for t in tokenize(query) if t in self._bm25.vocab_dict]
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

    def save(self, folder: Path) -> None:
        """Write to ``folder`` (created): bm25s files + ``ids.npy`` + ``params.json``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        np.save(folder / "ids.npy", self._ids)
        (folder / "params.json").write_text(json.dumps({"k1": self.k1, "b": self.b, "empty": self._bm25 is None}))
        if self._bm25 is not None:
            self._bm25.save(str(folder / "bm25s"))

    @classmethod
    def load(cls, folder: Path) -> "BM25Index":
        """Read an index written by :meth:`save`."""
        import bm25s

        folder = Path(folder)
        p = json.loads((folder / "params.json").read_text())
        idx = cls(p["k1"], p["b"])
        idx._ids = np.load(folder / "ids.npy")
        if not p["empty"]:
            idx._bm25 = bm25s.BM25.load(str(folder / "bm25s"))
        return idx
