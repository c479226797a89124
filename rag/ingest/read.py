"""One file read into what the index needs, text stages included (issue 35, item 2): extract, tag roles, chunk,
cut sentence units, each stage bounded (:mod:`rag.ingest.budget`).

:func:`read_bytes` is what the contained child process runs (:class:`rag.ingest.contained.ContainedExtractor`),
so that a step stuck on a hostile text (issue 35: a contents pattern that backtracked without end on dot
leaders) is stopped with the reader, not inside the worker; the store's inline path runs it too. Only
embedding is left to the caller (it needs the encoder, loaded once in the worker).

Stages report ``progress(stage, 0, size)`` as they start (``size``: characters of canonical text), which is how
the parent renews each stage's budget. The optional stages (roles, units) also watch a cooperative deadline of
their own and, when it passes, are left out with a warning (:data:`rag.ingest.budget.SKIPPED_WARNING`); a
stage in ``skip`` (the parent's second try after it had to stop the child in that stage) is left out the same
way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from rag.ingest.budget import SKIPPED_WARNING, Deadline, StageTimeout, allowance
from rag.ingest.chunk import chunk_document, chunk_units
from rag.ingest.limits import Limits
from rag.ingest.roles import find_roles
from rag.settings import ChunkingSettings
from rag.types import Chunk, Document

#: ``progress(stage, done, total)``.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ReadResult:
    """A file read: its :class:`rag.types.Document` (roles tagged, the warnings of left-out stages added), its
    chunks in order, and ``units`` ``(chunk position, start, end)`` of every unit with a vector of its own
    (0-based code points into the canonical text). ``skipped`` the optional stages left out."""

    document: Document
    chunks: tuple[Chunk, ...] = ()
    units: tuple[tuple[int, int, int], ...] = ()
    skipped: tuple[str, ...] = field(default=())


def _page_detail(doc: Document, offset: int | None) -> str:
    if offset is None:
        return ""
    page = doc.page_at(offset)
    if page and doc.page_count:
        return f"on page {page} of {doc.page_count}"
    return f"at character {offset:,} of {len(doc.canonical):,}"


def _warn(doc: Document, stage: str, detail: str) -> Document:
    return replace(doc, warnings=tuple(doc.warnings) + (SKIPPED_WARNING[stage].format(detail=detail),))


def text_stages(doc: Document, params: ChunkingSettings | None, *, progress: Progress | None = None,
                skip: frozenset[str] = frozenset(), count_tokens=None) -> ReadResult:
    """Roles, chunks and units of an extracted document (see the module doc); ``params`` ``None``: roles only
    (no chunks). Raises nothing for a slow optional stage (it is left out with a warning)."""
    report = progress or (lambda *a: None)
    n = len(doc.canonical)
    skipped: list[str] = []
    report("roles", 0, n)
    if "roles" in skip:
        doc = _warn(doc, "roles", "stopped by the time limit")
        skipped.append("roles")
    else:
        deadline = Deadline("roles", 0.5 * allowance("roles", chars=n))
        try:
            doc = replace(doc, roles=find_roles(doc, deadline=deadline))
        except StageTimeout as e:
            doc = _warn(doc, "roles", f"after {e.seconds:.0f} s {_page_detail(doc, e.offset)}".strip())
            skipped.append("roles")
    if params is None:
        return ReadResult(doc, skipped=tuple(skipped))
    report("chunk", 0, n)
    chunks = chunk_document(doc, "E", budget_chars=params.budget_chars, overlap_chars=params.overlap_chars,
                            window_tokens=params.window_tokens, count_tokens=count_tokens, tag_roles=False)
    units: tuple[tuple[int, int, int], ...] = ()
    if params.unit_vectors and chunks:
        report("units", 0, n)
        if "units" in skip:
            doc = _warn(doc, "units", "stopped by the time limit")
            skipped.append("units")
        else:
            deadline = Deadline("units", 0.5 * allowance("units", chars=n))
            try:
                out = []
                for i, c in enumerate(chunks):
                    if i % 64 == 0:
                        deadline.check(c.start)
                    out += [(i, a, b) for a, b in chunk_units(c)]
                units = tuple(out)
            except StageTimeout as e:
                doc = _warn(doc, "units", f"after {e.seconds:.0f} s {_page_detail(doc, e.offset)}".strip())
                skipped.append("units")
    return ReadResult(doc, tuple(chunks), units, tuple(skipped))


def read_bytes(data: bytes, name: str, *, limits: Limits | None = None, progress: Progress | None = None,
               params: ChunkingSettings | None = None, skip: frozenset[str] = frozenset(),
               extract: Callable[..., Document] | None = None) -> ReadResult:
    """Extract one file's bytes (``extract``, default :func:`rag.ingest.extract.extract_bytes`, with the reader
    ``limits``) and run the text stages on it (:func:`text_stages`). Raises what the reader raises
    (:class:`rag.errors.ExtractionError` and kin)."""
    if extract is None:
        from rag.ingest.extract import extract_bytes as extract
    doc = extract(data, name, limits=limits, progress=progress)
    return text_stages(doc, params, progress=progress, skip=skip)
