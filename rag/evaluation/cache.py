"""The embedding cache of the evaluation: every distinct chunk text embedded once, ever.

Six chunking strategies share most of their texts; :class:`EmbeddingCache`
keys vectors by ``sha256(model name + NUL + text)`` in one SQLite file
(``~/.cache/rag/embeddings.sqlite`` by default), safe to delete at any time.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag.index.embed import Encoder
from rag.settings import get_settings


def default_cache_path() -> Path:
    """Settings ``embed_cache`` (env ``RAG_EMBED_CACHE``), else ``$XDG_CACHE_HOME/rag/embeddings.sqlite``
    (``~/.cache/...`` by default)."""
    configured = get_settings().embed_cache
    if configured is not None:
        return configured
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rag" / "embeddings.sqlite"


class EmbeddingCache:
    """Vectors keyed by ``sha256(model name + NUL + text)`` in one SQLite file.

    Six chunking strategies share most of their texts, so the evaluation
    embeds each distinct text once, ever. Rows are ``(384,)`` float32 unit
    vectors stored as raw bytes. Safe to delete at any time.
    """

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(self.path), check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB NOT NULL)")
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(model: str, text: str) -> str:
        return hashlib.sha256(f"{model}\0{text}".encode()).hexdigest()

    def encode(self, texts: Sequence[str], embedder: Encoder, *, progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """Vectors for ``texts``: ``(len(texts), dim)`` float32, L2-normalised; only unseen texts reach ``embedder``.

        ``progress(done, total)`` is called after each batch of new texts.
        """
        dim, model = int(embedder.dim), str(embedder.name)
        keys = [self.key(model, t) for t in texts]
        found: dict[str, np.ndarray] = {}
        uniq = list(dict.fromkeys(keys))
        for i in range(0, len(uniq), 500):
            part = uniq[i : i + 500]
            q = f"SELECT key, v FROM vec WHERE key IN ({','.join('?' * len(part))})"
            for k, v in self._db.execute(q, part):
                found[k] = np.frombuffer(v, dtype=np.float32)
        todo = {k: t for k, t in zip(keys, texts) if k not in found}
        self.hits += len(uniq) - len(todo)
        self.misses += len(todo)
        items = list(todo.items())
        batch = 256
        for i in range(0, len(items), batch):
            part = items[i : i + batch]
            vecs = embedder.encode([t for _, t in part])
            self._db.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?)", [(k, v.tobytes()) for (k, _), v in zip(part, vecs)])
            self._db.commit()
            found.update({k: v for (k, _), v in zip(part, vecs)})
            if progress:
                progress(min(i + batch, len(items)), len(items))
        if not keys:
            return np.zeros((0, dim), dtype=np.float32)
        return np.ascontiguousarray(np.stack([found[k] for k in keys]), dtype=np.float32)

    def close(self) -> None:
        self._db.close()
