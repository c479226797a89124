"""The slow half of an ingest (design stages 1-3): one file's bytes extracted, chunked and embedded, with no store
lock held and nothing written (:func:`prepare` -> :class:`Prepared`); the store's writer
(:mod:`rag.store.writer`) commits the result. Extraction runs in this process (:func:`extract_inline`) or in a
contained child process (:class:`rag.ingest.contained.ContainedExtractor`, issue 26), behind one signature
(:data:`Extract`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rag.errors import Cancelled, StoreError
from rag.ingest.chunk import chunk_document, chunk_units, unit_text
from rag.ingest.extract import extract_bytes
from rag.ingest.limits import Limits
from rag.types import Chunk, Document

if TYPE_CHECKING:
    from rag.index.embed import Encoder
    from rag.settings import Settings

#: ``progress(stage, done, total)``: stage ``extract`` | ``chunk`` | ``embed`` (done/total in chunks) | ``index``.
Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


@dataclass(frozen=True)
class Prepared:
    """One file extracted, chunked and embedded: ``vectors`` ``(len(chunks), dim)`` float32 unit rows."""

    document: Document
    chunks: list[Chunk]
    vectors: np.ndarray
    #: Issue 27: ``(chunk position, start, end)`` of each unit with a vector of its own, and those vectors
    #: ``(len(units), dim)`` float32 (none when the ``unit_vectors`` setting is off).
    units: tuple[tuple[int, int, int], ...] = ()
    unit_vectors: np.ndarray | None = None


def extract_inline(data: bytes, name: str, progress: Progress = _no_progress,
                   should_stop: Callable[[], bool] | None = None, limits: Limits | None = None) -> Document:
    """:func:`rag.ingest.extract.extract_bytes` in this process, with the reader ``limits`` (issue 26), OCR pages
    reported to ``progress("ocr", ...)``.

    The store's default extractor; the worker passes :class:`rag.ingest.contained.ContainedExtractor`'s
    ``extract`` instead (same signature), which runs it in a child process with memory and time limits.
    """
    return extract_bytes(data, name, limits=limits, progress=progress)


#: ``extract(data, name, progress, should_stop, limits) -> Document``: where extraction runs
#: (:func:`extract_inline`, or a contained child process). Raises :class:`rag.errors.ExtractionError` (and
#: :class:`rag.errors.Cancelled`).
Extract = Callable[..., Document]


def prepare(data: bytes, name: str, settings: Settings, embedder: Encoder, dim: int, progress: Progress = _no_progress,
            *, extract: Extract = extract_inline, should_stop: Callable[[], bool] | None = None) -> Prepared:
    """Extract (with ``extract``), chunk (strategy E, the settings' budget and encoder window) and embed one file.

    Embeds in batches of ``settings.embed_batch_size`` (unset: the encoder's own) and reports progress
    per batch; ``should_stop()`` true between two steps raises :class:`rag.errors.Cancelled`. Raises
    :class:`rag.errors.ExtractionError` for a file that cannot be read, :class:`rag.errors.StoreError` when
    the embedder returns the wrong shape.
    """
    s = settings
    stop = should_stop or (lambda: False)
    progress("extract", 0, 1)
    doc = extract(data, name, progress, should_stop, Limits.from_settings(s))
    progress("extract", 1, 1)
    if stop():
        raise Cancelled(f"{name}: cancelled")
    progress("chunk", 0, 1)
    cut = s.chunking
    chunks = chunk_document(doc, "E", budget_chars=cut.budget_chars, overlap_chars=cut.overlap_chars,
                            window_tokens=cut.window_tokens, count_tokens=embedder.count_tokens)
    progress("chunk", 1, 1)
    units = tuple((i, a, b) for i, c in enumerate(chunks) for a, b in chunk_units(c)) if cut.unit_vectors else ()
    texts = [c.text for c in chunks] + [unit_text(chunks[i], a, b) for i, a, b in units]
    bs = max(1, s.embed_batch_size or embedder.batch_size or 32)
    parts = []
    progress("embed", 0, len(texts))
    for i in range(0, len(texts), bs):
        if stop():
            raise Cancelled(f"{name}: cancelled")
        parts.append(embedder.encode(texts[i:i + bs]))
        progress("embed", min(i + bs, len(texts)), len(texts))
    vecs = np.concatenate(parts) if parts else np.zeros((0, dim), np.float32)
    if vecs.shape != (len(texts), dim):
        raise StoreError(f"{name}: embedder returned {vecs.shape}, expected ({len(texts)}, {dim})")
    vecs = np.ascontiguousarray(vecs, dtype=np.float32)
    return Prepared(doc, chunks, vecs[:len(chunks)], units, vecs[len(chunks):])
