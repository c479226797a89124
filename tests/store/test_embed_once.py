"""Issue 41 (embed_once): each distinct text of a document's chunk+unit batch is embedded once."""

from __future__ import annotations

import numpy as np
from fakes import HashEmbedder

from rag.ingest.chunk import unit_text
from rag.settings import get_settings
from rag.store.prepare import prepare

# The same section twice: its chunk (and its one-sentence unit) repeat word for word.
DOC = (b"# Guide\n\n## Parking\n\nCar parking permits are renewed every January at reception.\n\n"
       b"## Parking\n\nCar parking permits are renewed every January at reception.\n\n"
       b"## Bicycles\n\nBicycles may be left in the shed. The shed is locked at night.\n")


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts):
        self.seen.extend(texts)
        return super().encode(texts)


def test_each_distinct_text_is_embedded_once_and_every_row_gets_its_vector():
    emb = CountingEmbedder()
    got = prepare(DOC, "guide.md", get_settings(), emb, emb.dim)
    texts = [c.text for c in got.chunks] + [unit_text(got.chunks[i], a, b) for i, a, b in got.units]
    assert len(set(texts)) < len(texts)  # the document does repeat a text
    assert sorted(emb.seen) == sorted(set(texts))  # ... and the encoder saw each distinct text exactly once
    vecs = np.concatenate([got.vectors, got.unit_vectors]) if len(got.units) else got.vectors
    np.testing.assert_allclose(vecs, HashEmbedder().encode(texts), atol=1e-6)
