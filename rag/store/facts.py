"""What extraction learned about each document, as the store keeps it (migration 5, issue 23).

Per document: the PDF's page spans in the canonical text (:class:`rag.types.PageSpan`), the locator parts of
issue 17's formats (:class:`rag.types.Part`), the pages OCR read and the document's language. Written with the
chunks (:func:`rag.store.writer.write_facts`), read here, so that nothing downstream extracts again: a
citation's evidence page comes from the page spans (never from the PDF), the viewer's slides, rows and regions
from the parts, the Documents page's OCR column from the stored pages, BM25 and the gate's calibration from the
stored language.

A document stored before migration 5 has no page spans or parts (the chunk rows do not hold them): the first
time they are asked for, :func:`backfill` reads them from the kept original once and stores them when the
extracted canonical text is the one stored; otherwise, or without a kept original, the document keeps empty
ones (a citation then opens at the chunk's first page, as for any document without a page map). That
extraction runs in a child process with the worker's memory limit and at most :data:`BACKFILL_SECONDS`
(:class:`rag.ingest.contained.ContainedExtractor`), never in the calling process: the caller is the app's
server, answering a question (review 2026-12-02, defect A), and an old original is as untrusted as a new one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from rag.errors import ExtractionError
from rag.ingest.contained import ContainedExtractor
from rag.ingest.limits import Limits
from rag.store.locks import StoreLocks
from rag.types import Document, PageSpan, Part

logger = logging.getLogger(__name__)

#: Most wall time, seconds, that reading an old document's facts may take (the first question citing it waits
#: for it, once): past it the document keeps no page map, as one whose original was not kept. The worker's own
#: ``extract_seconds`` (an hour) is for indexing, which no one waits on.
BACKFILL_SECONDS = 120


@dataclass(frozen=True)
class Facts:
    """One document's stored facts: ``pages`` its page spans (PDF; empty otherwise), ``parts`` its locator map
    (issue 17's formats; empty for PDF and text); ``None`` for either when not known yet (before migration 5)."""

    pages: tuple[PageSpan, ...] | None
    parts: tuple[Part, ...] | None


def _pages(text: str | None) -> tuple[PageSpan, ...] | None:
    return None if text is None else tuple(PageSpan.from_json(v) for v in json.loads(text))


def _parts(text: str | None) -> tuple[Part, ...] | None:
    return None if text is None else tuple(p for p in (Part.from_json(d) for d in json.loads(text)) if p is not None)


def read(conn: sqlite3.Connection, doc_id: str) -> tuple[Facts, str | None, str | None]:
    """``(facts, name, text_sha)`` of ``doc_id`` as stored (caller holds the thread lock); empty facts if unknown."""
    row = conn.execute("SELECT page_spans, parts, name, text_sha FROM documents WHERE id=?", (doc_id,)).fetchone()
    if row is None:
        return Facts((), ()), None, None
    return Facts(_pages(row[0]), _parts(row[1])), row[2], row[3]


def extract_contained(data: bytes, name: str, memory_mb: int, limits: Limits,
                      seconds: float = BACKFILL_SECONDS) -> Document:
    """``data`` extracted in a child process of its own (:class:`rag.ingest.contained.ContainedExtractor`, closed
    after), within ``memory_mb`` MiB and ``seconds``, with the readers' ``limits``. Raises
    :class:`rag.errors.ExtractionError` (:class:`rag.errors.LimitExceeded` past a limit)."""
    child = ContainedExtractor(memory_mb, seconds)
    try:
        return child.extract(data, name, limits=limits)
    finally:
        child.close()


def backfill(conn: sqlite3.Connection, locks: StoreLocks, files: Path, doc_id: str, *,
             memory_mb: int = 1536, limits: Limits | None = None) -> Facts:
    """Read a pre-migration-5 document's page spans and parts from its kept original once, and store them.

    The original is extracted in a child process (:func:`extract_contained`, within ``memory_mb`` and
    :data:`BACKFILL_SECONDS`, with the readers' ``limits``). Stored only when the extraction gives the canonical
    text the store holds (same ``text_sha``); otherwise, past a limit, or without a kept original, empty ones
    are stored (and returned), so this runs once per document.
    """
    with locks.thread:
        facts, name, sha = read(conn, doc_id)
    if facts.pages is not None and facts.parts is not None or name is None:
        return facts
    pages: tuple[PageSpan, ...] = ()
    parts: tuple[Part, ...] = ()
    try:
        doc = extract_contained((files / doc_id).read_bytes(), name, memory_mb, limits or Limits())
        if hashlib.sha256(doc.canonical.encode("utf-8")).hexdigest() == sha:
            pages, parts = doc.pages, doc.parts
        else:
            logger.info("%s (%s): extracted text differs from the stored one; no page map", name, doc_id[:8])
    except (OSError, ExtractionError) as e:
        logger.info("%s (%s): page map not rebuilt (%s)", name, doc_id[:8], e)
    with locks.write(conn):
        conn.execute("UPDATE documents SET page_spans=COALESCE(page_spans, ?), parts=COALESCE(parts, ?) WHERE id=?",
                     (json.dumps([p.to_json() for p in pages]), json.dumps([p.to_json() for p in parts]), doc_id))
    return Facts(facts.pages if facts.pages is not None else pages, facts.parts if facts.parts is not None else parts)
