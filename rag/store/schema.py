"""The store's SQLite file: connection, schema version, numbered migrations and the ``meta`` keys (issue 12).

The schema is never written as ``CREATE TABLE IF NOT EXISTS`` on each open
(that can never add a column to an existing store). It is an ordered list of
migrations, :data:`MIGRATIONS`; migration ``n`` (1-based) runs exactly once
per store, in its own transaction together with the row that records it in
the ``migrations`` table, so a store is always at a whole version. The way
simonw/llm's ``migrations.py`` does it.

Adding a column later (document versions, collections, coverage ...) is one
function appended to :data:`MIGRATIONS`::

    def m002_document_version(conn):
        conn.execute("ALTER TABLE documents ADD COLUMN version INTEGER NOT NULL DEFAULT 1")

    MIGRATIONS = (m001_initial, m002_document_version)

Every store created before versions were recorded (no ``migrations`` table)
holds exactly migration 1's tables, so migration 1 is today's schema with the
same ``IF NOT EXISTS`` DDL: on such a store it creates nothing and only
records version 1. A store whose recorded version is newer than this code
knows is refused (:class:`rag.errors.StoreError`), never written.

``meta`` (key -> text) holds ``embed_model``, ``embed_dim``, ``created_at``
and ``generation`` (the index generation, see :mod:`rag.store.cache`).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path

from rag.errors import ModelMismatchError, StoreError
from rag.language import text_language
from rag.types import DocStatus

#: One migration: applies its DDL/DML through the connection (inside a transaction the caller opened).
Migration = Callable[[sqlite3.Connection], None]


def now_iso() -> str:
    """The current time, ISO 8601 UTC to the second (every timestamp the store writes)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def connect(path: Path) -> sqlite3.Connection:
    """Open (or create) the SQLite file at ``path``: WAL, foreign keys on, 60 s busy timeout, autocommit.

    Autocommit (``isolation_level=None``): every transaction is an explicit
    ``BEGIN`` ... ``COMMIT`` (see :mod:`rag.store.locks`). Shared between
    threads (the store serialises access with its thread lock).
    Raises ``sqlite3.Error`` when the file cannot be opened.
    """
    conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=60000")
    return conn


# --------------------------------------------------------------------------- the migrations


def m001_initial(conn: sqlite3.Connection) -> None:
    """Version 1: ``meta``, ``documents``, ``chunks`` (each chunk's float32 vector in ``vector``).

    Exactly the schema of every store written before versions were recorded
    (commit d8907ac and earlier), so those stores pass through it unchanged.
    """
    for ddl in (
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, media_type TEXT, size_bytes INTEGER NOT NULL,
    status TEXT NOT NULL, reason TEXT, chunk_count INTEGER NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0,
    title TEXT, embed_model TEXT NOT NULL, embed_dim INTEGER NOT NULL, pipeline_version TEXT NOT NULL,
    extractor TEXT, extractor_version TEXT, warnings TEXT NOT NULL DEFAULT '[]', canonical TEXT,
    has_file INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, text TEXT NOT NULL, content TEXT NOT NULL, section TEXT NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, page INTEGER, page_end INTEGER,
    token_split INTEGER NOT NULL DEFAULT 0, vector BLOB NOT NULL)""",
        "CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id)",
    ):
        conn.execute(ddl)


def m002_chunk_locator(conn: sqlite3.Connection) -> None:
    """Version 2 (issue 17): ``chunks.locator``, the chunk's :class:`rag.types.Locator` as JSON
    (slide, sheet rows, paragraph, HTML section, image region); NULL for PDF, text and older chunks."""
    conn.execute("ALTER TABLE chunks ADD COLUMN locator TEXT")


def m003_document_versions(conn: sqlite3.Connection) -> None:
    """Version 3 (issue 16): document versions, where a file came from, and the hash of its text.

    * ``documents.text_sha`` - sha256 of the canonical text (UTF-8), filled for the rows that have one, so
      the same text under another name or in other bytes is found ("same text as X");
    * ``documents.source`` - the absolute path a file was read from (``ingest PATH``), ``NULL`` for an
      upload; what ``ingest DIR --sync`` compares with the folder;
    * ``document_versions`` - one row per replaced version of a document: its id (sha256 of its bytes),
      name, size, type, chunks, pages, when it was added and when it was replaced, and ``current_id``, the
      document that holds its place now (deleting that document deletes its history).
    """
    conn.execute("ALTER TABLE documents ADD COLUMN text_sha TEXT")
    conn.execute("ALTER TABLE documents ADD COLUMN source TEXT")
    conn.execute("CREATE INDEX IF NOT EXISTS documents_name ON documents(name)")
    conn.execute("CREATE INDEX IF NOT EXISTS documents_text_sha ON documents(text_sha)")
    conn.execute("""CREATE TABLE IF NOT EXISTS document_versions (
    id TEXT NOT NULL, name TEXT NOT NULL, media_type TEXT, size_bytes INTEGER NOT NULL,
    chunk_count INTEGER NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0, added_at TEXT NOT NULL,
    replaced_at TEXT NOT NULL, current_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    PRIMARY KEY (current_id, id))""")
    rows = conn.execute("SELECT id, canonical FROM documents WHERE canonical IS NOT NULL").fetchall()
    for doc_id, canonical in rows:
        conn.execute("UPDATE documents SET text_sha=? WHERE id=?",
                     (hashlib.sha256(canonical.encode("utf-8")).hexdigest(), doc_id))


def m004_chats(conn: sqlite3.Connection) -> None:
    """Version 4 (issue 16): the chats of this store (``chats``) and their turns (``chat_turns``).

    A turn keeps the question as typed, the standalone question that was searched, and ``record``: the
    answer as JSON (text, refusal, citations with their locators and quotes), so a chat reopens with its
    sources even after its documents changed. Deleting a chat deletes its turns.
    """
    conn.execute("""CREATE TABLE IF NOT EXISTS chats (
    id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL)""")
    conn.execute("""CREATE TABLE IF NOT EXISTS chat_turns (
    id INTEGER PRIMARY KEY AUTOINCREMENT, chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, question TEXT NOT NULL, standalone TEXT NOT NULL, record TEXT NOT NULL,
    created_at TEXT NOT NULL, UNIQUE (chat_id, idx))""")


#: The warning issue 13's PDF reader wrote for pages it read by OCR (``"page(s) 2, 5 read by OCR (...)"``): how a
#: document stored before migration 5 says which pages OCR read.
_OCR_WARNING = re.compile(r"^page\(s\) ([\d, ]+) read by OCR")


def _ocr_pages_from_warnings(warnings_json: str | None) -> list[int]:
    for w in json.loads(warnings_json or "[]"):
        m = _OCR_WARNING.match(w)
        if m:
            return [int(x) for x in m.group(1).split(",") if x.strip()]
    return []


def m005_extraction_facts(conn: sqlite3.Connection) -> None:
    """Version 5 (issue 23): what extraction learned, kept per document so nothing re-derives it.

    * ``documents.page_spans`` - the PDF's pages in the canonical text, JSON ``[[page, label, start, end], ...]``
      (``[]`` for other formats): what a citation's evidence page is read from, never the PDF again;
    * ``documents.parts`` - the locator map of issue 17's formats, JSON (:meth:`rag.types.Part.to_json`);
    * ``documents.ocr_pages`` - the 1-based pages OCR read, JSON (the Documents page shows them);
    * ``documents.language`` - the ISO 639-1 code of the document (:func:`rag.language.text_language` of its
      chunk texts), what BM25 stems with and the gate's calibration counts.

    Filled here for the documents already stored: the language from their chunk texts (the value BM25 detected
    at each rebuild until now), the OCR pages from the warning that named them. Page spans and parts cannot be
    rebuilt from the rows: they stay ``NULL`` and the store reads them once from the kept original when first
    asked (:meth:`rag.store.store.Store.page_map`).
    """
    for col in ("page_spans", "parts", "ocr_pages", "language"):
        conn.execute(f"ALTER TABLE documents ADD COLUMN {col} TEXT")
    for doc_id, warnings_json in conn.execute("SELECT id, warnings FROM documents").fetchall():
        texts = [r[0] for r in conn.execute("SELECT text FROM chunks WHERE doc_id=? ORDER BY idx", (doc_id,))]
        conn.execute("UPDATE documents SET ocr_pages=?, language=? WHERE id=?",
                     (json.dumps(_ocr_pages_from_warnings(warnings_json)), text_language(texts) if texts else None,
                      doc_id))


def m006_chunk_role(conn: sqlite3.Connection) -> None:
    """Version 6 (issue 28): ``chunks.role``, the chunk's :class:`rag.types.TextRole` (``body``, ``heading``,
    ``furniture``, ``references``, ``toc``, ``navigation``); NULL for chunks stored before it, read as ``body``.
    A store whose ledger was rolled back past it keeps the column (nothing to add)."""
    if "role" not in {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}:
        conn.execute("ALTER TABLE chunks ADD COLUMN role TEXT")


def m007_chunk_units(conn: sqlite3.Connection) -> None:
    """Version 7 (issue 27, item 1): ``chunk_units``, one float32 vector per unit (sentence, list item, table row)
    of a chunk of more than one unit (:func:`rag.ingest.chunk.chunk_units`), with the unit's span in the canonical
    text (0-based code points, end exclusive). Deleting a chunk deletes its units. Older chunks have none (their
    own vector alone, as before) until their document is indexed again."""
    conn.execute("""CREATE TABLE IF NOT EXISTS chunk_units (
    id INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, vector BLOB NOT NULL)""")
    conn.execute("CREATE INDEX IF NOT EXISTS chunk_units_chunk ON chunk_units(chunk_id)")


def m008_jobs(conn: sqlite3.Connection) -> None:
    """Version 8 (issue 25): the durable job queue (:mod:`rag.store.jobs`) and whether a failure can be retried.

    * ``jobs`` - one row per piece of indexing work: the document (sha256 of its bytes, kept as
      ``files/<sha256>``), its name, source path and conflict policy, the state (queued / running / done /
      failed / cancelled), the last progress report, the reason and ``retryable`` of a failure, the result,
      the lease (``owner``, ``lease_until``, ``heartbeat``, Unix seconds) and the attempts; at most one active
      job per document (``jobs_active``);
    * ``workers`` - the workers' heartbeats (which process serves the store, and on what);
    * ``documents.retryable`` - 1 when a retry can help (interrupted, internal fault), 0 when not (a damaged,
      refused or too large file, a limit hit); filled for the failed rows already there from their reasons.
    """
    conn.execute("""CREATE TABLE IF NOT EXISTS jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, doc_id TEXT NOT NULL, name TEXT NOT NULL, source TEXT,
    size_bytes INTEGER NOT NULL DEFAULT 0, on_conflict TEXT NOT NULL, state TEXT NOT NULL, stage TEXT,
    done INTEGER NOT NULL DEFAULT 0, total INTEGER NOT NULL DEFAULT 0, reason TEXT, retryable INTEGER, result TEXT,
    attempts INTEGER NOT NULL DEFAULT 0, owner TEXT, lease_until REAL, cancel INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL, started REAL, heartbeat REAL, finished_at TEXT)""")
    conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS jobs_active ON jobs(doc_id) WHERE state IN ('queued', 'running')")
    conn.execute("CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, id)")
    conn.execute("""CREATE TABLE IF NOT EXISTS workers (
    id TEXT PRIMARY KEY, pid INTEGER NOT NULL, host TEXT NOT NULL, started_at TEXT NOT NULL, heartbeat REAL NOT NULL,
    job_id INTEGER)""")
    if "retryable" not in {r[1] for r in conn.execute("PRAGMA table_info(documents)")}:
        conn.execute("ALTER TABLE documents ADD COLUMN retryable INTEGER")
    conn.execute("UPDATE documents SET retryable = CASE WHEN reason LIKE 'interrupted%' OR reason LIKE 'internal error%' "
                 "THEN 1 ELSE 0 END WHERE status = 'failed'")


def m009_coverage(conn: sqlite3.Connection) -> None:
    """Version 9 (issue 37): ``documents.coverage``, the share (0..1) of the words a person sees that the
    canonical text holds, by the format's independent audit (:mod:`rag.ingest.coverage`; a PDF's pages' mean);
    NULL for a format without an audit and for documents indexed before it, until they are indexed again."""
    if "coverage" not in {r[1] for r in conn.execute("PRAGMA table_info(documents)")}:
        conn.execute("ALTER TABLE documents ADD COLUMN coverage REAL")


def m010_job_limit(conn: sqlite3.Connection) -> None:
    """Version 10 (issue 35): ``jobs.limit_s``, the larger time limit (seconds) a retry asked for (``rag jobs retry
    --limit``): the least any stage of that job may take, and its ceiling; NULL = the settings' limits."""
    if "limit_s" not in {r[1] for r in conn.execute("PRAGMA table_info(jobs)")}:
        conn.execute("ALTER TABLE jobs ADD COLUMN limit_s REAL")


def m011_job_stage_at(conn: sqlite3.Connection) -> None:
    """Version 11 (issue 42): ``jobs.stage_at``, when the running job's current stage began (Unix s): a job's time
    left is measured from its own rate within the stage (every file said "less than a minute left" when it was
    guessed from fixed stage weights); NULL before a stage is reported."""
    if "stage_at" not in {r[1] for r in conn.execute("PRAGMA table_info(jobs)")}:
        conn.execute("ALTER TABLE jobs ADD COLUMN stage_at REAL")


#: The schema, in order: ``MIGRATIONS[n - 1]`` is migration ``n``. Append only; never edit an applied one.
MIGRATIONS: tuple[Migration, ...] = (m001_initial, m002_chunk_locator, m003_document_versions, m004_chats,
                                     m005_extraction_facts, m006_chunk_role, m007_chunk_units, m008_jobs,
                                     m009_coverage, m010_job_limit, m011_job_stage_at)

#: The version a store has after :func:`migrate` with this code.
SCHEMA_VERSION = len(MIGRATIONS)

_LEDGER = ("CREATE TABLE IF NOT EXISTS migrations "
           "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)")


def schema_version(conn: sqlite3.Connection) -> int:
    """The highest migration recorded in ``conn``'s store; 0 for a new file or one made before versions."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='migrations'").fetchone() is None:
        return 0
    return int(conn.execute("SELECT COALESCE(MAX(version), 0) FROM migrations").fetchone()[0])


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration] | None = None) -> list[int]:
    """Bring the store up to ``len(migrations)`` (default :data:`MIGRATIONS`): apply each missing one once, in order.

    Each migration runs in its own ``BEGIN IMMEDIATE`` transaction with the
    ``migrations`` row that records it (number, function name, time), so a
    failing migration leaves the store at the previous version and re-raises.
    The caller holds the store's write lock (:meth:`rag.store.locks.StoreLocks.write`
    without a transaction). Returns the versions applied now (``[]`` when
    already current). Raises :class:`rag.errors.StoreError` when the store is
    newer than ``migrations``.
    """
    migrations = MIGRATIONS if migrations is None else tuple(migrations)
    conn.execute(_LEDGER)
    have = schema_version(conn)
    if have > len(migrations):
        raise StoreError(f"the store has schema version {have}, newer than this code's {len(migrations)}; "
                         "upgrade the application before opening it")
    applied = []
    for version, step in enumerate(migrations, start=1):
        if version <= have:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            step(conn)
            conn.execute("INSERT INTO migrations(version, name, applied_at) VALUES (?, ?, ?)",
                         (version, step.__name__, now_iso()))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(version)
    return applied


# --------------------------------------------------------------------------- meta


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """The ``meta`` value of ``key``, or ``None``."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: object) -> None:
    """Set ``meta[key] = str(value)`` (inside the caller's transaction)."""
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, str(value)))


def stamp_model(conn: sqlite3.Connection, path: Path, name: str, dim: int) -> None:
    """Record the embedding model of a new store (``meta``: model, dimension, generation 0, creation time); refuse
    another model's store: :class:`rag.errors.ModelMismatchError` naming the documents to re-index (vectors are
    never mixed). Called under the store's write lock, in its transaction."""
    have, have_dim = get_meta(conn, "embed_model"), get_meta(conn, "embed_dim")
    if have is None:
        set_meta(conn, "embed_model", name)
        set_meta(conn, "embed_dim", dim)
        set_meta(conn, "generation", 0)
        set_meta(conn, "created_at", now_iso())
        return
    stale = [r[0] for r in conn.execute(
        "SELECT name FROM documents WHERE status=? AND (embed_model!=? OR embed_dim!=?) ORDER BY name",
        (DocStatus.READY, name, dim))]
    if have != name or int(have_dim) != dim:
        stale = stale or [r[0] for r in conn.execute(
            "SELECT name FROM documents WHERE status=? ORDER BY name", (DocStatus.READY,))]
        listed = ", ".join(stale) if stale else "(no documents)"
        raise ModelMismatchError(
            f"the store at {path} was indexed with {have} ({have_dim}-d), not {name} "
            f"({dim}-d); vectors are never mixed. Re-index into a new store: {listed}", stale)
