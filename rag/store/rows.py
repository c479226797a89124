"""The rows one ingest writes (design "What the store must promise"; issue 16's versions), inside the caller's
transaction: a document's chunk rows and ``ready`` state (:func:`write_chunks`), which document a new version
replaces (:func:`pick_replaced`) and how it leaves (:func:`retire_version`), and the same text in other bytes
(:func:`text_sha`, :class:`Twin`). Used by :class:`rag.store.writer.Indexer`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag.language import text_language
from rag.store.cache import IndexDelta
from rag.store.schema import now_iso
from rag.types import DocStatus, Document

if TYPE_CHECKING:
    from rag.store.prepare import Prepared


def write_chunks(conn: sqlite3.Connection, doc_id: str, prepared: Prepared, model_name: str, model_dim: int) -> tuple[int, IndexDelta]:
    """Replace ``doc_id``'s chunk rows by ``prepared``'s and mark the document ``ready`` (caller's transaction).

    Returns the chunk rows now stored (the count written into the document
    row) and the :class:`rag.store.cache.IndexDelta` for the indexes.
    """
    old = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE doc_id=?", (doc_id,))]
    conn.execute("DELETE FROM chunks WHERE doc_id=?", (doc_id,))
    ids = []
    for c, v in zip(prepared.chunks, prepared.vectors):
        cur = conn.execute(
            'INSERT INTO chunks(doc_id, idx, text, content, section, start, "end", page, page_end, '
            "token_split, vector, locator, role) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (doc_id, c.index, c.text, c.content, json.dumps(list(c.section), ensure_ascii=False), c.start,
             c.end, c.page, c.page_end, int(c.token_split), v.tobytes(),
             json.dumps(c.locator.to_json(), ensure_ascii=False) if c.locator else None, str(c.role)))
        ids.append(cur.lastrowid)
    if prepared.units:
        conn.executemany('INSERT INTO chunk_units(chunk_id, start, "end", vector) VALUES (?,?,?,?)',
                         [(ids[i], a, b, v.tobytes()) for (i, a, b), v in zip(prepared.units, prepared.unit_vectors)])
    n = conn.execute("SELECT COUNT(*) FROM chunks WHERE doc_id=?", (doc_id,)).fetchone()[0]
    doc = prepared.document
    conn.execute(
        "UPDATE documents SET status=?, reason=NULL, chunk_count=?, media_type=?, pages=?, title=?, "
        "extractor=?, extractor_version=?, warnings=?, canonical=?, text_sha=?, embed_model=?, embed_dim=?, "
        "updated_at=? WHERE id=?",
        (DocStatus.READY, n, doc.media_type, doc.page_count, doc.title, doc.extractor, doc.extractor_version,
         json.dumps(list(doc.warnings), ensure_ascii=False), doc.canonical, text_sha(doc.canonical), model_name,
         model_dim, now_iso(), doc_id))
    write_facts(conn, doc_id, doc, text_language([c.text for c in prepared.chunks]) if prepared.chunks else None)
    return n, IndexDelta.remove(old) + IndexDelta.add(ids, prepared.vectors)


def write_facts(conn: sqlite3.Connection, doc_id: str, doc: Document, language: str | None) -> None:
    """Keep what extraction learned about ``doc`` (migration 5, issue 23), inside the caller's transaction: its
    page spans, locator parts, OCR pages, ``language`` (ISO 639-1 of its chunk texts) and text coverage
    (migration 9, issue 37), so that answering,
    the viewer, the Documents page and BM25 never extract or detect again."""
    conn.execute("UPDATE documents SET page_spans=?, parts=?, ocr_pages=?, language=?, coverage=? WHERE id=?",
                 (json.dumps([p.to_json() for p in doc.pages], ensure_ascii=False),
                  json.dumps([p.to_json() for p in doc.parts], ensure_ascii=False),
                  json.dumps(list(doc.ocr_pages)), language, doc.coverage, doc_id))


def text_sha(canonical: str) -> str:
    """sha256 (hex) of a canonical text's UTF-8 bytes: the same text in other bytes has the same one."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Twin:
    """A ready document holding the same canonical text as the one being indexed: its id and name."""

    id: str
    name: str


@dataclass(frozen=True)
class Replaced:
    """The version a new one replaced: its id, name and when it was added (ISO 8601 UTC)."""

    id: str
    name: str
    added_at: str


def pick_replaced(conn: sqlite3.Connection, name: str, new_id: str, source: str | None) -> tuple[str, str, str] | None:
    """``(id, status, created_at)`` of the document a new version named ``name`` replaces, or ``None``.

    Among the other documents with that name that are ``ready`` or ``failed`` (one being indexed is
    never replaced): the one read from the same ``source`` path when there is one, else the newest
    ready one, else the newest failed one.
    """
    rows = conn.execute("SELECT id, status, created_at, source FROM documents WHERE name=? AND id!=? AND status IN (?, ?) "
                        "ORDER BY created_at DESC, id", (name, new_id, DocStatus.READY, DocStatus.FAILED)).fetchall()
    if not rows:
        return None
    same = [r for r in rows if source is not None and r[3] == source]
    ready = [r for r in rows if r[1] == DocStatus.READY]
    r = (same or ready or rows)[0]
    return r[0], r[1], r[2]


def retire_version(conn: sqlite3.Connection, old_id: str, new_id: str) -> IndexDelta:
    """Replace document ``old_id`` by ``new_id`` inside the caller's transaction (issue 16).

    A ready ``old_id`` becomes a row of ``document_versions`` (its history moves to ``new_id``); a failed
    one just goes. Its chunks and row are deleted; returns the delta removing its chunks from the indexes.
    ``new_id``'s own earlier appearance in that history (a version brought back) is dropped.
    """
    row = conn.execute("SELECT name, media_type, size_bytes, chunk_count, pages, created_at, status FROM documents "
                       "WHERE id=?", (old_id,)).fetchone()
    if row is None:
        return IndexDelta()
    conn.execute("UPDATE document_versions SET current_id=? WHERE current_id=?", (new_id, old_id))
    if row[6] == DocStatus.READY:
        conn.execute("INSERT OR REPLACE INTO document_versions(id, name, media_type, size_bytes, chunk_count, pages, "
                     "added_at, replaced_at, current_id) VALUES (?,?,?,?,?,?,?,?,?)",
                     (old_id, row[0], row[1], row[2], row[3], row[4], row[5], now_iso(), new_id))
    conn.execute("DELETE FROM document_versions WHERE id=? AND current_id=?", (new_id, new_id))
    ids = [r[0] for r in conn.execute("SELECT id FROM chunks WHERE doc_id=?", (old_id,))]
    conn.execute("DELETE FROM chunks WHERE doc_id=?", (old_id,))
    conn.execute("DELETE FROM documents WHERE id=?", (old_id,))
    return IndexDelta.remove(ids)
