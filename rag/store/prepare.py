"""The slow half of an ingest (design stages 1-3): one file's bytes read (extracted, role-tagged, chunked, cut into
sentence units) and embedded, with no store lock held and nothing written (:func:`prepare` -> :class:`Prepared`);
the store's writer (:mod:`rag.store.writer`) commits the result. Reading runs in this process (:func:`read_inline`)
or in a contained child process (:meth:`rag.ingest.contained.ContainedExtractor.read`, issues 26 and 35: every
text stage is stopped there when it runs out of time), behind one signature (:data:`Read`). Embedding, in this
process, runs under its own budget (:func:`rag.ingest.budget.allowance`), checked between batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from rag.errors import Cancelled, StageTimedOut, StoreError
from rag.ingest.budget import allowance
from rag.ingest.chunk import chunk_units, unit_text
from rag.ingest.limits import Limits
from rag.ingest.read import ReadResult, read_bytes
from rag.settings import ChunkingSettings
from rag.types import Chunk, Document

if TYPE_CHECKING:
    from rag.index.embed import Encoder
    from rag.settings import Settings

#: ``progress(stage, done, total)``: stage ``extract`` | ``ocr`` | ``roles`` | ``chunk`` | ``units`` | ``embed``
#: (done/total in texts) | ``index``.
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


def read_inline(data: bytes, name: str, progress: Progress = _no_progress,
                should_stop: Callable[[], bool] | None = None, limits: Limits | None = None,
                params: ChunkingSettings | None = None, *, floor_s: float = 0.0) -> ReadResult:
    """:func:`rag.ingest.read.read_bytes` in this process, with the reader ``limits`` (issue 26).

    The store's default reader; the worker passes :meth:`rag.ingest.contained.ContainedExtractor.read` instead
    (same signature), which runs it in a child process with memory and time limits. Here only the optional
    stages' own deadlines apply (nothing can stop a stuck step in this process).
    """
    return read_bytes(data, name, limits=limits, progress=progress, params=params)


#: ``read(data, name, progress, should_stop, limits, params, *, floor_s) -> ReadResult``: where reading runs
#: (:func:`read_inline`, or a contained child process). Raises :class:`rag.errors.ExtractionError` (and
#: :class:`rag.errors.Cancelled`).
Read = Callable[..., ReadResult]


def prepare(data: bytes, name: str, settings: Settings, embedder: Encoder, dim: int, progress: Progress = _no_progress,
            *, read: Read = read_inline, should_stop: Callable[[], bool] | None = None,
            floor_s: float = 0.0, units: bool = True) -> Prepared:
    """Read (with ``read``: extract, roles, chunks with strategy E at the settings' budget and encoder window,
    units) and embed one file.

    Embeds in batches of ``settings.embed_batch_size`` (unset: the encoder's own) and reports progress
    per batch; ``should_stop()`` true between two steps raises :class:`rag.errors.Cancelled`. Embedding may
    take :func:`rag.ingest.budget.allowance` ``("embed", texts=n)`` seconds (at least ``floor_s``, a retry's
    larger limit). Raises :class:`rag.errors.ExtractionError` for a file that cannot be read,
    :class:`rag.errors.StageTimedOut` for a step that ran out of time, :class:`rag.errors.StoreError` when
    the embedder returns the wrong shape. ``units`` false: no sentence units are cut or embedded here, whatever
    the settings say (the writer embeds them after the document is searchable, issue 41: :func:`embed_units`).
    """
    s = settings
    stop = should_stop or (lambda: False)
    progress("extract", 0, 1)
    params = s.chunking if units else replace(s.chunking, unit_vectors=False)
    got = read(data, name, progress, should_stop, Limits.from_settings(s), params,
               floor_s=floor_s)
    doc, chunks, spans = got.document, list(got.chunks), tuple(got.units)
    if stop():
        raise Cancelled(f"{name}: cancelled")
    all_texts = [c.text for c in chunks] + [unit_text(chunks[i], a, b) for i, a, b in spans]
    vecs = embed_texts(all_texts, name, s, embedder, dim, progress, stop, "embed", floor_s)
    return Prepared(doc, chunks, vecs[:len(chunks)], spans, vecs[len(chunks):])


def embed_texts(all_texts: list[str], name: str, settings: Settings, embedder: Encoder, dim: int, progress: Progress,
                stop: Callable[[], bool], stage: str = "embed", floor_s: float = 0.0) -> np.ndarray:
    """``(len(all_texts), dim)`` float32 vectors of ``all_texts``, in batches of ``settings.embed_batch_size``
    (unset: the encoder's own), ``progress(stage, done, total)`` per batch, under the ``embed`` budget
    (:func:`rag.ingest.budget.allowance`, at least ``floor_s``). ``stop()`` true between batches raises
    :class:`rag.errors.Cancelled`; running out of time :class:`rag.errors.StageTimedOut`; a wrong shape from the
    embedder :class:`rag.errors.StoreError`.

    embed_once (issue 41): each distinct text is embedded once and its vector shared by every row that has that
    text (the encoder is deterministic per text)."""
    where: dict[str, int] = {}
    rows = [where.setdefault(t, len(where)) for t in all_texts]
    texts = list(where)
    bs = max(1, settings.embed_batch_size or embedder.batch_size or 32)
    parts = []
    progress(stage, 0, len(texts))
    limit_s, t0 = max(floor_s, allowance("embed", texts=len(texts))), time.monotonic()
    for i in range(0, len(texts), bs):
        if stop():
            raise Cancelled(f"{name}: cancelled")
        if time.monotonic() - t0 > limit_s:
            raise StageTimedOut(name, stage, time.monotonic() - t0, limit_s,
                                f"at text {i:,} of {len(texts):,}")
        parts.append(embedder.encode(texts[i:i + bs]))
        progress(stage, min(i + bs, len(texts)), len(texts))
    vecs = np.concatenate(parts) if parts else np.zeros((0, dim), np.float32)
    if vecs.shape != (len(texts), dim):
        raise StoreError(f"{name}: embedder returned {vecs.shape}, expected ({len(texts)}, {dim})")
    return np.ascontiguousarray(vecs, dtype=np.float32)[np.asarray(rows, dtype=np.intp)] if rows else \
        np.zeros((0, dim), np.float32)


@dataclass(frozen=True)
class StoredChunk:
    """What the units of a stored chunk are cut from: its row ``id``, embedded ``text``, ``content``, ``start``
    offset and stored ``role`` (``None``: stored before roles, read as body; the attributes
    :func:`rag.ingest.chunk.chunk_units` and :func:`rag.ingest.chunk.unit_text` read)."""

    id: int
    text: str
    content: str
    start: int
    role: str | None = None


def embed_units(chunks: list[StoredChunk], name: str, settings: Settings, embedder: Encoder, dim: int,
                progress: Progress = _no_progress, should_stop: Callable[[], bool] | None = None,
                floor_s: float = 0.0) -> tuple[list[tuple[int, int, int]], np.ndarray]:
    """The sentence units of a searchable document's stored ``chunks`` (:func:`rag.ingest.chunk.chunk_units`) and
    their vectors: ``([(chunk row id, start, end)], (n, dim) float32)``, progress stage ``sentences``."""
    stop = should_stop or (lambda: False)
    spans = [(c, a, b) for c in chunks for a, b in chunk_units(c)]  # type: ignore[arg-type]
    vecs = embed_texts([unit_text(c, a, b) for c, a, b in spans], name, settings, embedder, dim,  # type: ignore[arg-type]
                       progress, stop, "sentences", floor_s)
    return [(c.id, a, b) for c, a, b in spans], vecs
