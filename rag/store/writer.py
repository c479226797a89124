"""The ingest path of the store (design stages 1-4): bytes -> extract -> chunk -> embed -> rows -> indexes.

:class:`Writer` is what :meth:`rag.store.store.Store.ingest_bytes` (and
``ingest_path``, ``retry``) call. For one file it

1. names it by content (``sha256``) and returns ``duplicate`` when those bytes are already ``ready``; with
   :class:`OnConflict` ``ask``, returns ``exists`` when other bytes are ready under the same name (issue 16);
2. takes the document's lock (``busy`` when another process holds it) and keeps the original as ``files/<sha256>``;
3. writes the document row as ``indexing``;
4. extracts, chunks (strategy E) and embeds with no store lock held (:func:`prepare`: the slow part);
5. in ONE write transaction: returns ``duplicate`` when a ready document holds the same canonical text
   (``text_sha``, "same text as X"); else writes the chunk rows with their vectors, sets the row ``ready``
   with its chunk count, with ``replace`` retires the version it replaces (:func:`pick_replaced`,
   :func:`retire_version`: its chunks leave, its row goes to ``document_versions``), and commits the one
   index delta of both (:meth:`rag.store.cache.IndexCache.commit`): one generation, so no search ever sees
   both versions or neither.

Any failure sets the row ``failed`` with a one-line reason (kept visible and
retryable; other documents are never affected) and is logged through
``logging.getLogger(__name__)``: an unexpected error with its traceback
(``logger.exception``), a file that cannot be extracted as one ``info`` line (the
user already gets the reason; a bad file is not an operator's problem).
Step 5 is separate from the rest (:func:`write_chunks` returns an
:class:`rag.store.cache.IndexDelta`), so a batch of documents can later be
written and committed to the indexes once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np

from rag.errors import ExtractionError, LimitExceeded, StoreError
from rag.ingest.chunk import chunk_document, chunk_units, unit_text
from rag.ingest.extract import extract_bytes
from rag.ingest.limits import Limits, check_size
from rag.language import text_language
from rag.settings import PIPELINE_VERSION
from rag.store.backup import remove_original, write_name
from rag.store.cache import IndexCache, IndexDelta
from rag.store.locks import StoreLocks
from rag.store.schema import now_iso
from rag.types import Chunk, DocStatus, Document

logger = logging.getLogger(__name__)

#: ``progress(stage, done, total)``: stage ``extract`` | ``chunk`` | ``embed`` (done/total in chunks) | ``index``.
Progress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    pass


class IngestStatus(StrEnum):
    """What happened to one file (the ``status`` of :class:`IngestResult` and of ``ingest --json``)."""

    READY = DocStatus.READY.value
    DUPLICATE = "duplicate"
    FAILED = DocStatus.FAILED.value
    BUSY = "busy"
    EXISTS = "exists"


class OnConflict(StrEnum):
    """What to do with different bytes under a name the store already holds (issue 16).

    ``replace``: the new version takes the old one's place (the old one leaves
    the index in the same transaction and is kept as a previous version);
    ``keep-both``: both stay, as two documents; ``ask``: nothing is done and
    the result says ``exists`` (the app then asks the user).
    """

    REPLACE = "replace"
    KEEP_BOTH = "keep-both"
    ASK = "ask"


def clean_name(name: str) -> str:
    """A display name from a client-supplied file name: the last path component
    (``/`` and ``\\`` both split), NFC, without control characters (NUL included).

    Display metadata only: the store never uses it as a path. An empty result
    becomes ``"unnamed"``.
    """
    base = unicodedata.normalize("NFC", str(name)).replace("\\", "/").split("/")[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp")).strip()
    return base if base not in ("", ".", "..") else "unnamed"


@dataclass(frozen=True)
class IngestResult:
    """What happened to one file.

    ``status``: ``ready`` (indexed now), ``duplicate`` (the same bytes, or
    the same text, already indexed: nothing done; ``existing_name`` says
    under which name), ``failed`` (``reason`` says why; the row stays,
    retryable), ``busy`` (another process is indexing the same bytes right
    now) or ``exists`` (other bytes are indexed under this name and the
    caller asked to be asked, :class:`OnConflict`; nothing done;
    ``existing_id`` names that document). ``replaced_id`` /
    ``replaced_added_at`` the version this one replaced (issue 16).
    ``message`` is the one-line status the CLI prints; ``elapsed_ms`` wall time.
    """

    document_id: str
    name: str
    status: str
    reason: str | None = None
    chunk_count: int = 0
    warnings: tuple[str, ...] = ()
    elapsed_ms: float = 0.0
    existing_name: str | None = None
    existing_id: str | None = None
    same_text: bool = False
    replaced_id: str | None = None
    replaced_added_at: str | None = None

    @property
    def message(self) -> str:
        short = self.document_id[:8]
        if self.status == IngestStatus.READY:
            line = f"ready      {self.name} ({short}): {self.chunk_count} chunks"
            if self.replaced_id:
                line += (f"; replaced the version added {self.replaced_added_at} ({self.replaced_id[:8]}), "
                         "kept as a previous version")
            return line
        if self.status == IngestStatus.DUPLICATE:
            other = self.existing_name and (self.existing_name != self.name or self.same_text)
            if other:
                return f"duplicate  {self.name} ({short}): already indexed, same text as {self.existing_name}; nothing done"
            return f"duplicate  {self.name} ({short}): same bytes already indexed; nothing done"
        if self.status == IngestStatus.BUSY:
            return f"busy       {self.name} ({short}): being indexed by another process"
        if self.status == IngestStatus.EXISTS:
            return (f"exists     {self.name} ({short}): another version is indexed under this name "
                    f"({(self.existing_id or '')[:8]}); nothing done")
        return f"failed     {self.name} ({short}): {self.reason}"


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


def prepare(data: bytes, name: str, settings: Any, embedder: Any, dim: int, progress: Progress = _no_progress) -> Prepared:
    """Extract, chunk (strategy E, the settings' budget and encoder window) and embed one file's bytes.

    Embeds in batches of ``settings.embed_batch_size`` (unset: the encoder's own) and reports progress
    per batch. Raises :class:`rag.errors.ExtractionError` for a file that
    cannot be read, :class:`rag.errors.StoreError` when the embedder returns
    the wrong shape.
    """
    s = settings
    progress("extract", 0, 1)
    doc = extract_bytes(data, name, limits=Limits.from_settings(s), progress=progress)
    progress("extract", 1, 1)
    progress("chunk", 0, 1)
    chunks = chunk_document(doc, "E", budget_chars=s.chunk_budget_chars, overlap_chars=s.overlap_chars,
                            window_tokens=s.encoder_window_tokens, count_tokens=getattr(embedder, "count_tokens", None))
    progress("chunk", 1, 1)
    units = tuple((i, a, b) for i, c in enumerate(chunks) for a, b in chunk_units(c)) if s.unit_vectors else ()
    texts = [c.text for c in chunks] + [unit_text(chunks[i], a, b) for i, a, b in units]
    bs = max(1, s.embed_batch_size or getattr(embedder, "batch_size", None) or 32)
    parts = []
    progress("embed", 0, len(texts))
    for i in range(0, len(texts), bs):
        parts.append(embedder.encode(texts[i:i + bs]))
        progress("embed", min(i + bs, len(texts)), len(texts))
    vecs = np.concatenate(parts) if parts else np.zeros((0, dim), np.float32)
    if vecs.shape != (len(texts), dim):
        raise StoreError(f"{name}: embedder returned {vecs.shape}, expected ({len(texts)}, {dim})")
    vecs = np.ascontiguousarray(vecs, dtype=np.float32)
    return Prepared(doc, chunks, vecs[:len(chunks)], units, vecs[len(chunks):])


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
    page spans, locator parts, OCR pages and ``language`` (ISO 639-1 of its chunk texts), so that answering,
    the viewer, the Documents page and BM25 never extract or detect again."""
    conn.execute("UPDATE documents SET page_spans=?, parts=?, ocr_pages=?, language=? WHERE id=?",
                 (json.dumps([p.to_json() for p in doc.pages], ensure_ascii=False),
                  json.dumps([p.to_json() for p in doc.parts], ensure_ascii=False),
                  json.dumps(list(doc.ocr_pages)), language, doc_id))


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


class Writer:
    """Ingests files into one store (see the module docstring for the steps and promises).

    ``root`` the store directory (``files/`` is written here); ``conn``,
    ``locks``, ``cache`` the store's connection, locks and index cache;
    ``embedder`` a callable returning the embedder (loaded on first use);
    ``model_name``/``model_dim`` what every document row records.
    """

    def __init__(self, root: Path, conn: sqlite3.Connection, locks: StoreLocks, cache: IndexCache, settings: Any,
                 embedder: Callable[[], Any], model_name: str, model_dim: int):
        self.root, self.conn, self.locks, self.cache, self.settings = Path(root), conn, locks, cache, settings
        self.embedder, self.model_name, self.model_dim = embedder, model_name, model_dim

    def ingest(self, data: bytes, name: str, progress: Progress | None = None, *,
               on_conflict: str = OnConflict.REPLACE, source: str | None = None) -> IngestResult:
        """Index one file's bytes; never raises for bad input (see :meth:`rag.store.store.Store.ingest_bytes`).

        ``on_conflict`` (:class:`OnConflict`) decides what other bytes under a name already
        indexed do; ``source`` the absolute path the bytes were read from (``None`` for an upload).
        """
        t0 = time.perf_counter()
        progress = progress or _no_progress
        name = clean_name(name)
        doc_id = hashlib.sha256(data).hexdigest()
        if on_conflict not in tuple(OnConflict):
            raise ValueError(f"unknown on_conflict {on_conflict!r}; allowed: {', '.join(OnConflict)}")

        def result(status: IngestStatus, **kw) -> IngestResult:
            return IngestResult(doc_id, name, status, elapsed_ms=(time.perf_counter() - t0) * 1000, **kw)

        def failed(reason: str, **kw) -> IngestResult:
            self._set_failed(doc_id, reason)
            return result(IngestStatus.FAILED, reason=reason, **kw)

        existing = self._ready(doc_id)
        if existing is not None:
            self._note_source(doc_id, source)
            return result(IngestStatus.DUPLICATE, chunk_count=existing[1], existing_name=existing[0], existing_id=doc_id)
        if on_conflict == OnConflict.ASK:
            other = self.same_name(name, doc_id)
            if other is not None:
                return result(IngestStatus.EXISTS, existing_name=name, existing_id=other)
        with self.locks.document(doc_id) as got:
            if not got:
                return result(IngestStatus.BUSY)
            existing = self._ready(doc_id)  # re-check under the document lock
            if existing is not None:
                return result(IngestStatus.DUPLICATE, chunk_count=existing[1], existing_name=existing[0],
                              existing_id=doc_id)
            try:
                check_size(len(data), name, Limits.from_settings(self.settings))
                too_big = None
            except LimitExceeded as e:
                too_big = e.reason
            if not too_big:
                self._save_original(doc_id, data)
                write_name(self.root, doc_id, name)  # issue 26: what a rebuild from the originals calls it
            self._begin(doc_id, name, len(data), has_file=not too_big, source=source)
            if too_big:
                return failed(too_big)
            try:
                prepared = prepare(data, name, self.settings, self.embedder(), self.model_dim, progress)
                if not prepared.chunks:
                    logger.info("%s (%s): no text to index", name, doc_id[:8])
                    return failed("no text to index (empty or blank document)",
                                  warnings=tuple(prepared.document.warnings))
                progress("index", 0, 1)
                outcome = self._commit(doc_id, name, prepared, on_conflict, source)
                progress("index", 1, 1)
            except ExtractionError as e:
                logger.info("%s (%s): not indexed: %s", name, doc_id[:8], e.reason)
                return failed(e.reason)
            except Exception as e:  # noqa: BLE001 - one bad file must never take the others down
                logger.exception("%s (%s): internal error while indexing", name, doc_id[:8])
                return failed(f"internal error while indexing: {type(e).__name__}: {e}")
        if isinstance(outcome, Twin):  # the same text is already indexed under another document
            self.locks.discard_document(doc_id)
            return result(IngestStatus.DUPLICATE, existing_name=outcome.name, existing_id=outcome.id, same_text=True,
                          warnings=tuple(prepared.document.warnings))
        n, replaced = outcome
        return result(IngestStatus.READY, chunk_count=n, warnings=tuple(prepared.document.warnings),
                      replaced_id=replaced.id if replaced else None,
                      replaced_added_at=replaced.added_at if replaced else None)

    def _commit(self, doc_id: str, name: str, prepared: Prepared, on_conflict: str,
                source: str | None) -> tuple[int, Replaced | None] | Twin:
        """The one write transaction of an ingest: the new chunks, the replaced version's exit, the index delta.

        Returns ``(chunk_count, replaced)``, or the :class:`Twin` when a ready document already holds the
        same canonical text (then this document's row and stored original are removed instead).
        """
        sha = text_sha(prepared.document.canonical)
        with self.locks.write(self.conn):
            twin = self.conn.execute("SELECT id, name FROM documents WHERE text_sha=? AND status=? AND id!=? "
                                     "ORDER BY created_at LIMIT 1", (sha, DocStatus.READY, doc_id)).fetchone()
            if twin is not None:
                self.conn.execute("DELETE FROM documents WHERE id=?", (doc_id,))
                remove_original(self.root, doc_id)
                return Twin(twin[0], twin[1])
            n, delta = write_chunks(self.conn, doc_id, prepared, self.model_name, self.model_dim)
            replaced = None
            if on_conflict == OnConflict.REPLACE:
                old = pick_replaced(self.conn, name, doc_id, source)
                if old is not None:
                    delta = delta + retire_version(self.conn, old[0], doc_id)
                    replaced = Replaced(old[0], name, old[2])
            self.cache.commit(delta)
        if replaced is not None:
            remove_original(self.root, replaced.id)
            self.locks.discard_document(replaced.id)
        return n, replaced

    def same_name(self, name: str, doc_id: str) -> str | None:
        """The id of the newest other ready document named ``name`` (what a new version would replace), or ``None``."""
        with self.locks.thread:
            row = self.conn.execute("SELECT id FROM documents WHERE name=? AND id!=? AND status=? "
                                    "ORDER BY created_at DESC LIMIT 1", (name, doc_id, DocStatus.READY)).fetchone()
        return row[0] if row else None

    def _note_source(self, doc_id: str, source: str | None) -> None:
        """Record where a document already indexed was read from, when it was not known (an upload, then a folder)."""
        if source is None:
            return
        with self.locks.write(self.conn):
            self.conn.execute("UPDATE documents SET source=? WHERE id=? AND source IS NULL", (source, doc_id))

    def _ready(self, doc_id: str) -> tuple[str, int] | None:
        """``(name, chunk_count)`` of the document if it is ``ready``, else ``None``."""
        with self.locks.thread:
            row = self.conn.execute("SELECT name, chunk_count FROM documents WHERE id=? AND status=?",
                                    (doc_id, DocStatus.READY)).fetchone()
        return (row[0], int(row[1])) if row else None

    def _save_original(self, doc_id: str, data: bytes) -> None:
        """Keep the bytes as ``files/<sha256>`` (fsync'ed temp file + atomic rename; kept if already there)."""
        dest = self.root / "files" / doc_id
        if dest.is_file() and dest.stat().st_size == len(data):
            return
        tmp = dest.with_name(f"{doc_id}.tmp{os.getpid()}.{threading.get_ident()}")
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)

    def _begin(self, doc_id: str, name: str, size: int, *, has_file: bool, source: str | None = None) -> None:
        """Insert (or reset) the document row as ``indexing`` (a retry keeps the source it had)."""
        now = now_iso()
        with self.locks.write(self.conn):
            self.conn.execute(
                "INSERT INTO documents(id, name, size_bytes, status, embed_model, embed_dim, pipeline_version, "
                "has_file, source, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT(id) DO UPDATE SET name=excluded.name, status=excluded.status, reason=NULL, "
                "chunk_count=0, has_file=excluded.has_file, source=COALESCE(excluded.source, documents.source), "
                "updated_at=excluded.updated_at",
                (doc_id, name, size, DocStatus.INDEXING, self.model_name, self.model_dim, PIPELINE_VERSION,
                 int(has_file), source, now, now))

    def refuse_unread(self, path: Path, name: str, size: int, reason: str, source: str | None) -> IngestResult:
        """Record a file refused before it was read (too large on disk, issue 26) as a ``failed`` document with
        ``reason``, without its original; the id is the sha256 of the file, streamed (bounded memory)."""
        t0 = time.perf_counter()
        name = clean_name(name)
        try:
            with open(path, "rb") as fh:
                doc_id = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError as e:
            return IngestResult("", name, IngestStatus.FAILED, reason=f"cannot read file: {e.strerror}")
        if self._ready(doc_id) is None:
            self._begin(doc_id, name, size, has_file=False, source=source)
            self._set_failed(doc_id, reason)
        return IngestResult(doc_id, name, IngestStatus.FAILED, reason=reason,
                            elapsed_ms=(time.perf_counter() - t0) * 1000)

    def _set_failed(self, doc_id: str, reason: str) -> None:
        with self.locks.write(self.conn):
            self.conn.execute("UPDATE documents SET status=?, reason=?, chunk_count=0, updated_at=? WHERE id=?",
                              (DocStatus.FAILED, reason, now_iso(), doc_id))

