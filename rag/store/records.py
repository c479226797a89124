"""The store's records: what its reads return (documents, earlier versions, chunks) and what :meth:`check` finds;
and how a document row and a chunk row are read from SQLite (:func:`document_row`, :func:`chunk_rows`).

All frozen; offsets are 0-based code points into the document's stored canonical text, pages 1-based physical
pages, timestamps ISO 8601 UTC.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from rag.types import DocStatus, Locator, TextRole, role_of


@dataclass(frozen=True)
class DocumentRow:
    """One document as stored.

    ``id`` hex sha256 of the bytes; ``name`` the user's file name (display
    only); ``label`` the name shown in citations (the name plus ``(<8 hex>)``
    when another stored document has the same name); ``status`` a
    :class:`rag.types.DocStatus` (``queued``/``indexing``/``ready``/``failed``);
    ``reason`` why it failed; ``chunk_count`` the chunk rows really stored
    (written by the server after indexing); ``pages`` physical pages (PDF) or
    0; timestamps ISO 8601 UTC; ``ocr_pages`` the 1-based pages OCR read;
    ``language`` the ISO 639-1 code of its text (``None`` while not indexed); ``retryable`` (failed only)
    whether a retry can help (issue 25: a transient fault) or not (a damaged, refused or too large file, a
    limit hit), ``None`` when not failed; ``coverage`` the share (0..1) of the words a person sees that its
    canonical text holds (issue 37, :mod:`rag.ingest.coverage`), ``None`` when not audited.
    """

    id: str
    name: str
    label: str
    media_type: str | None
    size_bytes: int
    status: DocStatus
    reason: str | None
    chunk_count: int
    pages: int
    title: str | None
    embed_model: str
    embed_dim: int
    pipeline_version: str
    extractor: str | None
    extractor_version: str | None
    warnings: tuple[str, ...]
    has_file: bool
    created_at: str
    updated_at: str
    source: str | None = None
    versions: int = 0
    ocr_pages: tuple[int, ...] = ()
    language: str | None = None
    retryable: bool | None = None
    coverage: float | None = None


@dataclass(frozen=True)
class VersionRow:
    """One earlier version of a document, replaced by a newer one under the same name (issue 16).

    ``id`` the sha256 of that version's bytes (no longer indexed, its file no
    longer kept); ``added_at`` when it was added, ``replaced_at`` when it was
    replaced (ISO 8601 UTC); ``current_id`` the document in its place now.
    """

    id: str
    name: str
    media_type: str | None
    size_bytes: int
    chunk_count: int
    pages: int
    added_at: str
    replaced_at: str
    current_id: str


@dataclass(frozen=True)
class ChunkRow:
    """One stored chunk joined with its document (what citations and the CLI need).

    ``text`` is what was embedded; ``content`` what gets quoted
    (``canonical[start:end] == content``, 0-based code points); ``page`` /
    ``page_end`` 1-based physical pages or ``None`` for text documents;
    ``locator`` the chunk's :class:`rag.types.Locator` (issue 17's formats;
    ``None`` for PDF, text and chunks stored before migration 2); ``role`` its
    :class:`rag.types.TextRole` (issue 28; ``body`` for chunks stored before migration 6).
    """

    chunk_id: int
    document_id: str
    document_name: str
    document_label: str
    media_type: str
    index: int
    text: str
    content: str
    section: tuple[str, ...]
    start: int
    end: int
    page: int | None
    page_end: int | None
    token_split: bool = False
    locator: Locator | None = None
    role: TextRole = TextRole.BODY


@dataclass(frozen=True)
class ConsistencyReport:
    """What :meth:`Store.check` found: the store's promises checked against its files (issue 12).

    ``generation`` the index generation checked; ``schema_version`` the
    store's migration level; ``documents`` rows per :class:`rag.types.DocStatus`
    value; ``chunks`` chunk rows in SQLite; ``dense_ids``/``bm25_ids`` ids held
    by the FAISS and BM25 indexes of that generation; ``index_files`` whether
    that generation's files are on disk; ``orphan_files`` stored originals
    with no document row (harmless: reused if the same bytes come again).
    ``problems`` one line per broken promise (chunk rows missing from an
    index or the reverse, a chunk count that differs from the rows, chunks of
    a document that is not ready, a vector of the wrong size, a kept original
    that is missing, an unknown status, missing index files); ``ok`` when none.
    """

    generation: int
    schema_version: int
    documents: dict[str, int]
    chunks: int
    dense_ids: int
    bm25_ids: int
    index_files: bool
    orphan_files: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def status_of(value: str) -> DocStatus | str:
    """``value`` as a :class:`rag.types.DocStatus` (an unknown one stays a string; :meth:`rag.store.store.Store.check` reports it)."""
    try:
        return DocStatus(value)
    except ValueError:
        return value


# --------------------------------------------------------------------------- reading them (caller holds the thread lock)

#: The columns :func:`document_row` reads, in order.
DOC_COLS = ("id, name, media_type, size_bytes, status, reason, chunk_count, pages, title, embed_model, embed_dim, "
            "pipeline_version, extractor, extractor_version, warnings, has_file, created_at, updated_at, source, "
            "(SELECT COUNT(*) FROM document_versions v WHERE v.current_id = documents.id), ocr_pages, language, "
            "retryable, coverage")


def labels(conn: sqlite3.Connection) -> dict[str, str]:
    """Document id -> the name shown in citations: the name, plus ``(<8 hex>)`` when another document has it too."""
    dup = {r[0] for r in conn.execute("SELECT name FROM documents GROUP BY name HAVING COUNT(*) > 1")}
    return {r[0]: (f"{r[1]} ({r[0][:8]})" if r[1] in dup else r[1])
            for r in conn.execute("SELECT id, name FROM documents")}


def document_row(r: Sequence, names: dict[str, str]) -> DocumentRow:
    """The :class:`DocumentRow` of one row of :data:`DOC_COLS`; ``names`` from :func:`labels`."""
    return DocumentRow(id=r[0], name=r[1], label=names.get(r[0], r[1]), media_type=r[2], size_bytes=r[3],
                       status=status_of(r[4]), reason=r[5], chunk_count=r[6], pages=r[7], title=r[8],
                       embed_model=r[9], embed_dim=r[10], pipeline_version=r[11], extractor=r[12],
                       extractor_version=r[13], warnings=tuple(json.loads(r[14] or "[]")), has_file=bool(r[15]),
                       created_at=r[16], updated_at=r[17], source=r[18], versions=int(r[19]),
                       ocr_pages=tuple(json.loads(r[20] or "[]")), language=r[21],
                       retryable=None if r[4] != DocStatus.FAILED or r[22] is None else bool(r[22]),
                       coverage=r[23])


def chunk_rows(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, ChunkRow]:
    """``{chunk id: ChunkRow}`` for the known ones of ``ids`` (500 per query), joined with their documents."""
    names = labels(conn)
    got: dict[int, ChunkRow] = {}
    for i in range(0, len(ids), 500):
        part = list(ids[i:i + 500])
        q = ('SELECT c.id, c.doc_id, d.name, d.media_type, c.idx, c.text, c.content, c.section, c.start, '
             'c."end", c.page, c.page_end, c.token_split, c.locator, c.role FROM chunks c JOIN documents d '
             f"ON d.id = c.doc_id WHERE c.id IN ({','.join('?' * len(part))})")
        for r in conn.execute(q, part):
            got[r[0]] = ChunkRow(chunk_id=r[0], document_id=r[1], document_name=r[2],
                                 document_label=names.get(r[1], r[2]), media_type=r[3] or "", index=r[4],
                                 text=r[5], content=r[6], section=tuple(json.loads(r[7])), start=r[8],
                                 end=r[9], page=r[10], page_end=r[11], token_split=bool(r[12]),
                                 locator=Locator.from_json(json.loads(r[13])) if r[13] else None,
                                 role=role_of(r[14]))
    return got
