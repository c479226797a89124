"""Stages 4-6 of the design: dense + BM25 retrieval, reciprocal rank fusion, optional rerank.

PUBLIC API (stable; other modules build on it):

* :func:`tokenize` - the BM25 tokenizer: NFKC, case-folded Unicode words (any
  script), CJK runs as character bigrams, English stopwords dropped.
* :class:`DenseIndex` - FAISS ``IndexFlatIP`` over ``(n, 384)`` float32 unit
  rows keyed by int64 chunk ids; ``search(q_vec, k) -> (ids, cosine_distances)``.
* :class:`BM25Index` - ``bm25s`` (k1 1.2, b 0.75); ``BM25Index.build(texts, ids)``;
  ``search(query, k) -> (ids, scores)``; no hits for empty/stopword-only queries.
* :func:`rrf` - reciprocal rank fusion (k 60) over ranked id lists.
* :class:`Hit` - one fused candidate with its cosine distance and leg ranks.
* :func:`retrieve` - ``retrieve(query, q_vec, dense, bm25, k=20, mode="hybrid") -> list[Hit]``.
* :class:`Reranker` / :func:`load_reranker` - optional cross-encoder over the fused top 25.

These classes need no store: the evaluation builds throwaway in-memory indexes
with them (``DenseIndex.build(ids, vecs)``, ``BM25Index.build(texts, ids)``).

Conventions: ids are ``int64`` chunk ids (the store's chunk row ids, or any
unique integers); ranks are 1-based; cosine distance is ``1 - <q, v>`` on unit
vectors, in ``[0, 2]``. Index searches never return FAISS's ``-1`` padding: an
index smaller than ``k`` returns fewer hits, an empty one none.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, Union

import numpy as np

#: Where the reranker reads chunk texts from: ``{id: text}`` or ``ids -> [text]``.
TextSource = Union[Mapping[int, str], Callable[[list[int]], Sequence[str]]]

MODES = ("hybrid", "dense", "bm25")

# --------------------------------------------------------------------------- tokenizer

_WORD = re.compile(r"[^\W_]+")
# Scripts written without spaces between words: Han, Hiragana, Katakana (plus extensions).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")


def _english_stopwords() -> frozenset[str]:
    try:
        from bm25s.stopwords import STOPWORDS_EN

        return frozenset(STOPWORDS_EN)
    except ImportError:  # pragma: no cover - bm25s is a requirement
        return frozenset()


STOPWORDS = _english_stopwords()


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


# --------------------------------------------------------------------------- dense leg


class DenseIndex:
    """Exact inner-product search (FAISS ``IndexIDMap2(IndexFlatIP)``) over unit vectors.

    Vectors are ``(n, dim)`` float32, L2-normalised (checked on ``add``); ids
    are unique int64. Inner product = cosine similarity, reported as cosine
    distance ``1 - ip``.
    """

    def __init__(self, dim: int = 384):
        import faiss

        self.dim = dim
        self.index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))

    @classmethod
    def build(cls, ids: Sequence[int] | np.ndarray, vectors: np.ndarray, dim: int | None = None) -> "DenseIndex":
        """A new index holding ``vectors`` ((n, dim) float32 unit rows) under ``ids`` (n int64)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        d = dim or (vectors.shape[1] if vectors.ndim == 2 and vectors.shape[1] else 384)
        idx = cls(d)
        idx.add(ids, vectors)
        return idx

    def __len__(self) -> int:
        return int(self.index.ntotal)

    def add(self, ids: Sequence[int] | np.ndarray, vectors: np.ndarray) -> None:
        """Add ``vectors`` ((n, dim) float32, unit norm) under ``ids``. Raises ``ValueError`` on bad shapes/norms."""
        from rag.embed import check_unit_norm

        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        ids = np.ascontiguousarray(ids, dtype=np.int64).reshape(-1)
        if len(ids) != len(vectors):
            raise ValueError(f"{len(ids)} ids for {len(vectors)} vectors")
        if len(ids) == 0:
            return
        check_unit_norm(vectors)
        self.index.add_with_ids(vectors, ids)

    def remove(self, ids: Iterable[int]) -> int:
        """Remove the given ids (unknown ids are ignored); returns how many were removed."""
        arr = np.asarray(list(ids), dtype=np.int64)
        if arr.size == 0:
            return 0
        return int(self.index.remove_ids(arr))

    def ids(self) -> np.ndarray:
        """All ids held, int64, in insertion order."""
        import faiss

        return faiss.vector_to_array(self.index.id_map).astype(np.int64) if len(self) else np.zeros(0, np.int64)

    def vectors(self, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """The stored unit vectors of ``ids``: ``(len(ids), dim)`` float32. Raises ``KeyError``-like RuntimeError for unknown ids."""
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        for i, cid in enumerate(ids):
            out[i] = self.index.reconstruct(int(cid))
        return out

    def distances(self, q_vec: np.ndarray, ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Cosine distances ``1 - <q, v_id>`` of the stored vectors of ``ids`` to ``q_vec`` ((dim,) unit float32)."""
        if len(ids) == 0:
            return np.zeros(0, dtype=np.float32)
        d = 1.0 - self.vectors(ids) @ np.asarray(q_vec, dtype=np.float32).reshape(-1)
        return np.clip(d, 0.0, 2.0).astype(np.float32)

    def search(self, q_vec: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` by inner product: ``(ids int64 (m,), cosine_distances float32 (m,))``, best first, ``m <= k``.

        Never returns FAISS's ``-1`` padding (an index smaller than ``k`` gives
        fewer hits; an empty index none).
        """
        n = len(self)
        k = min(int(k), n)
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        q = np.ascontiguousarray(q_vec, dtype=np.float32).reshape(1, self.dim)
        sims, ids = self.index.search(q, k)
        keep = ids[0] >= 0
        return ids[0][keep].astype(np.int64), np.clip(1.0 - sims[0][keep], 0.0, 2.0).astype(np.float32)

    def save(self, path: Path) -> None:
        """Write the index to ``path`` (FAISS format). Not atomic by itself: write to a temp name, then rename."""
        import faiss

        faiss.write_index(self.index, str(path))

    @classmethod
    def load(cls, path: Path) -> "DenseIndex":
        """Read an index written by :meth:`save`."""
        import faiss

        idx = cls.__new__(cls)
        idx.index = faiss.read_index(str(path))
        idx.dim = int(idx.index.d)
        return idx


# --------------------------------------------------------------------------- lexical leg


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
        import bm25s

        if len(texts) != len(ids):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        idx = cls(k1, b)
        idx._ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        if len(texts):
            # every document gets at least the empty token, so bm25s keeps the row
            tokens = [tokenize(t) or [""] for t in texts]
            idx._bm25 = bm25s.BM25(k1=k1, b=b, method="lucene")
            idx._bm25.index(tokens, show_progress=False)
        return idx

    def __len__(self) -> int:
        return int(self._ids.size)

    def ids(self) -> np.ndarray:
        """All ids held, int64, in build order."""
        return self._ids.copy()

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` by BM25 score: ``(ids int64 (m,), scores float32 (m,))``, best first.

        Only chunks sharing at least one token with the query are returned
        (score > 0): an empty or stopword-only query, or an empty index, gives no hits.
        """
        empty = (np.zeros(0, np.int64), np.zeros(0, np.float32))
        if self._bm25 is None or k <= 0:
            return empty
        q = [t for t in tokenize(query) if t in self._bm25.vocab_dict]
        if not q:
            return empty
        scores = np.asarray(self._bm25.get_scores(q), dtype=np.float32)
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


# --------------------------------------------------------------------------- fusion


def rrf(ranked: Sequence[Sequence[int]], k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal rank fusion (design stage 5): ``score(d) = sum_lists 1 / (k + rank)``, rank 1-based.

    Ranks only, no score scaling. Returns ``[(id, score)]`` best first; ties
    keep the order of first appearance (list 0 first), so it is deterministic.
    """
    scores: dict[int, float] = {}
    for lst in ranked:
        for r, cid in enumerate(lst, start=1):
            scores[int(cid)] = scores.get(int(cid), 0.0) + 1.0 / (k + r)
    order = {cid: i for i, cid in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


@dataclass(frozen=True)
class Hit:
    """One retrieved chunk, in final order.

    ``rank`` 1-based final position (after the optional rerank); ``fused_rank``
    1-based rank after reciprocal rank fusion (equals ``rank`` without rerank);
    ``rrf_score`` the fusion score (``1/(60+r)`` per leg); ``cosine_distance``
    ``1 - <q, v>`` computed from the stored vector for EVERY hit (BM25-only
    hits included); ``dense_rank``/``bm25_rank`` 1-based rank in each leg or
    ``None`` when that leg did not return it; ``bm25_score`` raw BM25 score or
    ``None``; ``rerank_score`` the cross-encoder logit or ``None``.
    """

    chunk_id: int
    rank: int
    fused_rank: int
    rrf_score: float
    cosine_distance: float
    dense_rank: int | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None
    rerank_score: float | None = None


def retrieve(query: str, q_vec: np.ndarray | None, dense: DenseIndex, bm25: BM25Index | None, *,
             k: int = 20, mode: str = "hybrid", depth: int | None = None, rrf_k: int = 60,
             reranker: "Reranker | None" = None, texts: "TextSource | None" = None,
             rerank_top: int = 25) -> list[Hit]:
    """Retrieve the top ``k`` chunks for ``query`` (design stages 4-6).

    ``q_vec`` is the query embedding ((384,) float32, unit norm); ``mode`` one
    of ``hybrid`` (RRF of both legs), ``dense``, ``bm25`` (each leg still goes
    through :func:`rrf`, so scores are comparable). Each leg returns ``depth``
    candidates (default ``max(k, 100)``). Every hit carries its cosine distance
    from the stored vector, so the gate can judge BM25-only hits too. With a
    ``reranker`` (and ``texts``: a mapping chunk id -> embedded text, or a
    callable ``ids -> list[str]``) the fused top
    ``rerank_top`` are reordered by the cross-encoder. Returns fewer than ``k``
    hits (or none) when the index is small or empty or the query matches
    nothing; never padding. Raises ``ValueError`` for an unknown mode.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; allowed: {', '.join(MODES)}")
    depth = max(k, depth or 100)
    legs: list[list[int]] = []
    d_rank: dict[int, int] = {}
    b_rank: dict[int, tuple[int, float]] = {}
    if mode in ("hybrid", "dense") and len(dense):
        ids, _ = dense.search(q_vec, depth)
        legs.append(ids.tolist())
        d_rank = {int(c): r for r, c in enumerate(ids, start=1)}
    if mode in ("hybrid", "bm25") and bm25 is not None and len(bm25):
        ids, scores = bm25.search(query, depth)
        legs.append(ids.tolist())
        b_rank = {int(c): (r, float(s)) for r, (c, s) in enumerate(zip(ids, scores), start=1)}
    fused = rrf(legs, k=rrf_k)[: max(k, rerank_top if reranker else k)]
    if not fused:
        return []
    ids = [cid for cid, _ in fused]
    dist = dense.distances(q_vec, ids) if q_vec is not None else np.full(len(ids), np.nan, np.float32)
    hits = [
        Hit(chunk_id=cid, rank=i, fused_rank=i, rrf_score=s, cosine_distance=float(dist[i - 1]),
            dense_rank=d_rank.get(cid), bm25_rank=b_rank.get(cid, (None, None))[0],
            bm25_score=b_rank.get(cid, (None, None))[1])
        for i, (cid, s) in enumerate(fused, start=1)
    ]
    if reranker is not None and texts is not None:
        hits = reranker.rerank(query, hits, texts, top=rerank_top)
    return hits[:k]


# --------------------------------------------------------------------------- rerank


class Reranker:
    """A sentence-transformers ``CrossEncoder`` over (query, chunk text) pairs (design stage 6).

    Loaded from a local folder only (``rag.models.find_cross_encoder``); about
    570 ms per query for ms-marco-MiniLM-L-6-v2 over 25 pairs on CPU.
    """

    def __init__(self, path: Path):
        from sentence_transformers import CrossEncoder

        self.path = Path(path)
        self.model = CrossEncoder(str(path), device="cpu", local_files_only=True)

    def scores(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One relevance logit per text: ``(len(texts),)`` float32, higher is better."""
        if not texts:
            return np.zeros(0, np.float32)
        s = self.model.predict([(query, t) for t in texts], convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(s, dtype=np.float32).reshape(len(texts), -1)[:, -1]

    def rerank(self, query: str, hits: Sequence[Hit], texts: "TextSource", *, top: int = 25) -> list[Hit]:
        """Reorder the first ``top`` hits by cross-encoder score (stable on ties); the rest keep their order.

        ``rank`` is renumbered; ``fused_rank`` keeps the fusion rank.
        """
        head, tail = list(hits[:top]), list(hits[top:])
        ids = [h.chunk_id for h in head]
        s = self.scores(query, list(texts(ids)) if callable(texts) else [texts[i] for i in ids])
        order = sorted(range(len(head)), key=lambda i: (-float(s[i]), i))
        out = [replace(head[i], rerank_score=float(s[i])) for i in order] + tail
        return [replace(h, rank=r) for r, h in enumerate(out, start=1)]


def load_reranker(models_dir: Path) -> Reranker | None:
    """The cross-encoder found in ``models_dir`` (see ``rag.models.find_cross_encoder``), or ``None``."""
    from rag.models import find_cross_encoder

    path = find_cross_encoder(Path(models_dir))
    return Reranker(path) if path else None
