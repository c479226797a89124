"""Stage 6 of the design (optional): a cross-encoder over the fused top 25.

Loaded from a local folder only (:func:`rag.models.find_cross_encoder`); nothing
is fetched. ``rank`` is renumbered after the rerank, ``fused_rank`` keeps the
fusion rank. :func:`default_reranker` is the one the store's searches use: the
cross-encoder in ``models_dir`` when there is one, looked up and loaded once
per process.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Callable, Mapping, Union

import numpy as np

from rag.models import find_cross_encoder
from rag.types import Hit

#: Where the reranker reads chunk texts from: ``{id: text}`` or ``ids -> [text]``.
TextSource = Union[Mapping[int, str], Callable[[list[int]], Sequence[str]]]


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

    path = find_cross_encoder(Path(models_dir))
    return Reranker(path) if path else None


@functools.lru_cache(maxsize=8)
def _default_reranker(models_dir: str) -> Reranker | None:
    return load_reranker(Path(models_dir))


def default_reranker(models_dir: Path) -> Reranker | None:
    """:func:`load_reranker` for ``models_dir``, looked up once per process and directory (design stage 6).

    ``None`` when the directory holds no cross-encoder; a cross-encoder added
    later is seen by the next process.
    """
    return _default_reranker(str(Path(models_dir).resolve()))
