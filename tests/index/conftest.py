"""Fixtures of the index tests: a deterministic fake embedder for the store's plumbing (no model loaded)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from rag.text import tokenize


class HashEmbedder:
    """Bag of hashed tokens -> 384-d unit vectors: texts sharing words are close (cosine), no model needed.

    Deterministic across processes (sha1 of each token, never ``hash()``).
    """

    name = "test/hash-embedder"
    dim = 384

    def _one(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, np.float32)
        for t in tokenize(text) or ["<empty>"]:
            h = int.from_bytes(hashlib.sha1(t.encode()).digest()[:4], "little")
            v[h % self.dim] += 1.0
        return v / np.linalg.norm(v)

    def encode(self, texts):
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def encode_query(self, query: str) -> np.ndarray:
        return self._one(query)


@pytest.fixture(scope="session")
def hash_embedder() -> HashEmbedder:
    return HashEmbedder()
