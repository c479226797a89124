"""Schema versions and numbered migrations (rag.store.schema, issue 12): old stores open, migration N is one function."""

from __future__ import annotations

import json
import sqlite3

import pytest

from rag.errors import StoreError
from rag.settings import get_settings
from rag.store import schema
from rag.store.schema import MIGRATIONS, SCHEMA_VERSION, connect, migrate, schema_version
from rag.store.store import Store

#: The DDL every store was created with before versions were recorded (commit d8907ac, rag/index/store.py), verbatim.
OLD_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, name TEXT NOT NULL, media_type TEXT, size_bytes INTEGER NOT NULL,
    status TEXT NOT NULL, reason TEXT, chunk_count INTEGER NOT NULL DEFAULT 0, pages INTEGER NOT NULL DEFAULT 0,
    title TEXT, embed_model TEXT NOT NULL, embed_dim INTEGER NOT NULL, pipeline_version TEXT NOT NULL,
    extractor TEXT, extractor_version TEXT, warnings TEXT NOT NULL DEFAULT '[]', canonical TEXT,
    has_file INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL, text TEXT NOT NULL, content TEXT NOT NULL, section TEXT NOT NULL,
    start INTEGER NOT NULL, "end" INTEGER NOT NULL, page INTEGER, page_end INTEGER,
    token_split INTEGER NOT NULL DEFAULT 0, vector BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
"""

CANONICAL = "# Ferns\n\nThe royal fern grows in acid bogs and wet heaths across Europe."
DOC_ID = "ab" * 32


def _old_store(path, embedder, *, doc_id: str = DOC_ID) -> None:
    """A store as the code before migrations wrote it: one ready document with one chunk, no index files."""
    (path / "files").mkdir(parents=True)
    (path / "files" / doc_id).write_text(CANONICAL)
    db = sqlite3.connect(path / "store.sqlite3")
    db.executescript(OLD_SCHEMA)
    for k, v in {"embed_model": embedder.name, "embed_dim": embedder.dim, "generation": 1,
                 "created_at": "2026-11-01T10:00:00+00:00"}.items():
        db.execute("INSERT INTO meta VALUES (?, ?)", (k, str(v)))
    db.execute(
        "INSERT INTO documents(id, name, media_type, size_bytes, status, chunk_count, pages, title, embed_model, "
        "embed_dim, pipeline_version, extractor, extractor_version, warnings, canonical, has_file, created_at, "
        "updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (doc_id, "ferns.md", "text/markdown", len(CANONICAL), "ready", 1, 0, "Ferns", embedder.name, embedder.dim,
         "1", "markdown", "1", "[]", CANONICAL, 1, "2026-11-01T10:00:00+00:00", "2026-11-01T10:00:00+00:00"))
    content = CANONICAL[CANONICAL.index("The royal"):]
    text = "[Ferns]\n" + content
    db.execute('INSERT INTO chunks(doc_id, idx, text, content, section, start, "end", vector) VALUES (?,?,?,?,?,?,?,?)',
               (doc_id, 0, text, content, json.dumps(["Ferns"]), CANONICAL.index(content), len(CANONICAL),
                embedder.encode([text])[0].tobytes()))
    db.commit()
    db.close()


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def test_a_store_made_before_versions_opens_migrated_reads_and_searches(tmp_path, hash_embedder):
    path = tmp_path / "old"
    _old_store(path, hash_embedder)
    with Store(path, settings=get_settings(store=path), embedder=hash_embedder) as s:
        [doc] = s.documents()
        assert (doc.id, doc.name, doc.status, doc.chunk_count) == (DOC_ID, "ferns.md", "ready", 1)
        [chunk] = s.document_chunks(DOC_ID)
        assert s.canonical_text(DOC_ID)[chunk.start:chunk.end] == chunk.content
        for mode in ("hybrid", "dense", "bm25"):
            hits = s.search("where does the royal fern grow", k=5, mode=mode)
            assert [h.chunk_id for h in hits] == [chunk.chunk_id], mode
        report = s.check()
        assert report.ok, report.problems
        assert (report.schema_version, report.generation, report.chunks, report.index_files) == (SCHEMA_VERSION, 1, 1, True)
        # the store keeps working after the migration: a new document, then the old one deleted
        assert s.ingest_bytes(b"# Mosses\n\nSphagnum moss holds twenty times its weight in water.", "m.md").status == "ready"
        assert s.delete(DOC_ID) and s.check().ok
    conn = connect(path / "store.sqlite3")
    assert schema_version(conn) == SCHEMA_VERSION
    assert conn.execute("SELECT version, name FROM migrations ORDER BY version").fetchall() == [
        (n, m.__name__) for n, m in enumerate(MIGRATIONS, start=1)]
    assert [name for _, name in conn.execute("SELECT version, name FROM migrations ORDER BY version")][:4] == [
        "m001_initial", "m002_chunk_locator", "m003_document_versions", "m004_chats"]
    assert "locator" in _columns(conn, "chunks")  # issue 17: the old chunks read back with locator None


def test_migration_1_is_the_old_schema_exactly(tmp_path):
    old, new = sqlite3.connect(tmp_path / "old.sqlite3"), sqlite3.connect(tmp_path / "new.sqlite3", isolation_level=None)
    old.executescript(OLD_SCHEMA)
    assert migrate(new) == list(range(1, SCHEMA_VERSION + 1))
    if SCHEMA_VERSION == 1:
        def ddl(c):
            return sorted(r for r in c.execute("SELECT type, name, sql FROM sqlite_master WHERE name != 'migrations'"))

        assert ddl(new) == ddl(old)


def m002_add_collection(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE documents ADD COLUMN collection TEXT NOT NULL DEFAULT 'default'")


def test_adding_migration_n_is_one_function_applied_once(tmp_path, hash_embedder, monkeypatch):
    path = tmp_path / "old"
    _old_store(path, hash_embedder)
    monkeypatch.setattr(schema, "MIGRATIONS", MIGRATIONS + (m002_add_collection,))
    with Store(path, embedder=hash_embedder) as s:  # the next release opens yesterday's store
        assert [d.name for d in s.documents()] == ["ferns.md"] and s.search("royal fern", k=3)
    conn = connect(path / "store.sqlite3")
    assert "collection" in _columns(conn, "documents")
    assert conn.execute("SELECT collection FROM documents").fetchall() == [("default",)]
    assert schema_version(conn) == len(MIGRATIONS) + 1
    assert migrate(conn) == []  # applied once: a second open changes nothing
    assert [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY version")][-1] == "m002_add_collection"


def test_a_failing_migration_leaves_the_store_at_the_previous_version(tmp_path):
    conn = connect(tmp_path / "s.sqlite3")
    migrate(conn)

    def m002_half_done(c):
        c.execute("ALTER TABLE documents ADD COLUMN half TEXT")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError, match="disk on fire"):
        migrate(conn, MIGRATIONS + (m002_half_done,))
    assert schema_version(conn) == SCHEMA_VERSION and "half" not in _columns(conn, "documents")


def test_a_store_newer_than_the_code_is_refused(tmp_path, hash_embedder):
    path = tmp_path / "future"
    path.mkdir()
    migrate(connect(path / "store.sqlite3"), MIGRATIONS + (m002_add_collection,))
    with pytest.raises(StoreError, match="newer than this code"):
        Store(path, embedder=hash_embedder)
