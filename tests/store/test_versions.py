"""Document versions (issue 16): a name + content identify a document; a new version replaces the old one atomically."""

from __future__ import annotations

import sqlite3

import pytest

from rag.settings import get_settings
from rag.store.schema import MIGRATIONS, connect, migrate, schema_version
from rag.store.store import Store

V1 = b"# Leave\n\n## Annual\n\nStaff get 25 days of annual leave.\n\n## Sabbatical\n\nAfter five years staff may take a sabbatical.\n"
V2 = b"# Leave\n\n## Annual\n\nStaff get 28 days of annual leave.\n"
OTHER = b"# Ferns\n\nThe royal fern grows in acid bogs.\n"


@pytest.fixture()
def store(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", settings=get_settings(store=tmp_path / "s"), embedder=hash_embedder)
    yield s
    s.close()


def _contents(s: Store, query: str, **kw) -> list[str]:
    return [c.content for c in s.chunks([h.chunk_id for h in s.search(query, k=20, **kw)])]


def test_new_bytes_under_the_same_name_replace_the_old_version_in_one_generation(store):
    first = store.ingest_bytes(V1, "leave.md")
    gen = store.index_cache.generation()
    r = store.ingest_bytes(V2, "leave.md")
    assert r.status == "ready" and r.replaced_id == first.document_id
    assert "replaced the version added" in r.message and first.document_id[:8] in r.message
    assert store.index_cache.generation() == gen + 1  # the new chunks in and the old ones out: one commit
    [doc] = store.documents()
    assert (doc.id, doc.name, doc.label, doc.versions) == (r.document_id, "leave.md", "leave.md", 1)
    [old] = store.versions(doc.id)
    assert (old.id, old.name, old.current_id) == (first.document_id, "leave.md", doc.id)
    assert old.added_at <= old.replaced_at and old.size_bytes == len(V1)
    texts = " ".join(_contents(store, "sabbatical annual leave days"))
    assert "28 days" in texts and "25 days" not in texts and "sabbatical" not in texts
    assert not store.original_path(first.document_id).exists()
    assert store.check().ok, store.check().problems


def test_keep_both_and_ask(store):
    a = store.ingest_bytes(V1, "leave.md")
    asked = store.ingest_bytes(V2, "leave.md", on_conflict="ask")
    assert asked.status == "exists" and asked.existing_id == a.document_id and "nothing done" in asked.message
    assert [d.id for d in store.documents()] == [a.document_id]
    assert store.same_name("leave.md", V2).id == a.document_id and store.same_name("leave.md", V1) is None
    both = store.ingest_bytes(V2, "leave.md", on_conflict="keep-both")
    assert both.status == "ready" and both.replaced_id is None
    labels = sorted(d.label for d in store.documents())
    assert labels == sorted([f"leave.md ({a.document_id[:8]})", f"leave.md ({both.document_id[:8]})"])
    with pytest.raises(ValueError, match="unknown on_conflict"):
        store.ingest_bytes(OTHER, "x.md", on_conflict="merge")


def test_same_bytes_or_same_text_under_another_name_is_reported_not_indexed(store):
    a = store.ingest_bytes(OTHER, "ferns.md")
    same_bytes = store.ingest_bytes(OTHER, "copy.md")
    assert same_bytes.status == "duplicate" and same_bytes.existing_name == "ferns.md"
    assert "same text as ferns.md" in same_bytes.message
    crlf = store.ingest_bytes(OTHER.replace(b"\n", b"\r\n"), "windows.md")  # other bytes, same canonical text
    assert crlf.status == "duplicate" and crlf.same_text and "same text as ferns.md" in crlf.message
    again = store.ingest_bytes(OTHER.replace(b"\n", b"\r\n"), "ferns.md")  # a "new version" with the same text
    assert again.status == "duplicate" and "same text as ferns.md" in again.message
    assert [d.id for d in store.documents()] == [a.document_id] and store.check().ok
    assert not store.original_path(crlf.document_id).exists()


def test_a_new_version_that_fails_leaves_the_current_one_answering(store):
    a = store.ingest_bytes(V1, "leave.md")
    bad = store.ingest_bytes(b"   \n\n", "leave.md")
    assert bad.status == "failed"
    assert store.get_document(a.document_id).status == "ready" and "25 days" in " ".join(_contents(store, "annual leave"))


def test_an_old_version_brought_back_and_delete_removes_the_history(store):
    a = store.ingest_bytes(V1, "leave.md")
    b = store.ingest_bytes(V2, "leave.md")
    back = store.ingest_bytes(V1, "leave.md")
    assert back.status == "ready" and back.document_id == a.document_id and back.replaced_id == b.document_id
    assert [v.id for v in store.versions(a.document_id)] == [b.document_id]  # not itself
    assert store.delete(a.document_id)
    assert store.documents() == [] and store.versions(a.document_id) == []
    conn = connect(store.path / "store.sqlite3")
    assert conn.execute("SELECT COUNT(*) FROM document_versions").fetchone()[0] == 0


def test_replace_picks_the_document_read_from_the_same_path(tmp_path, store):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    (tmp_path / "x" / "a.md").write_bytes(V1)
    (tmp_path / "y" / "a.md").write_bytes(OTHER)
    x = store.ingest_path(tmp_path / "x" / "a.md")
    y = store.ingest_path(tmp_path / "y" / "a.md", on_conflict="keep-both")
    (tmp_path / "x" / "a.md").write_bytes(V2)
    r = store.ingest_path(tmp_path / "x" / "a.md")
    assert r.replaced_id == x.document_id  # not y's, though y is newer
    assert {d.id for d in store.documents()} == {r.document_id, y.document_id}
    assert {d.source for d in store.sourced_under(tmp_path / "x")} == {str((tmp_path / "x" / "a.md").resolve())}
    assert [d.id for d in store.sourced_under(tmp_path)] != [] and store.sourced_under(tmp_path / "z") == []


def test_scope_restricts_every_leg_to_the_chosen_documents(store):
    a = store.ingest_bytes(V1, "leave.md")
    f = store.ingest_bytes(OTHER, "ferns.md")
    for mode in ("hybrid", "dense", "bm25"):
        assert not any("fern" in c for c in _contents(store, "royal fern acid bogs", mode=mode, doc_ids=[a.document_id]))
        assert any("fern" in c for c in _contents(store, "royal fern acid bogs", mode=mode, doc_ids=[f.document_id]))
    assert store.search("royal fern", doc_ids=[]) == []
    assert store.search("royal fern", doc_ids=["0" * 64]) == []


def test_a_store_at_the_schema_before_versions_migrates_and_keeps_its_documents(tmp_path, hash_embedder):
    path = tmp_path / "v1"
    with Store(path, embedder=hash_embedder) as s:  # today's code writes a store; then it is rolled back to v2's DDL
        doc = s.ingest_bytes(V1, "leave.md")
    conn = sqlite3.connect(path / "store.sqlite3")
    conn.executescript("DROP TABLE chat_turns; DROP TABLE chats; DROP TABLE document_versions; "
                       "DROP INDEX documents_name; DROP INDEX documents_text_sha; "
                       "ALTER TABLE documents DROP COLUMN text_sha; ALTER TABLE documents DROP COLUMN source; "
                       + "".join(f"ALTER TABLE documents DROP COLUMN {c}; "  # migration 5 (issue 23)
                                 for c in ("page_spans", "parts", "ocr_pages", "language"))
                       + "DELETE FROM migrations WHERE version > 2;")
    conn.commit()
    conn.close()
    conn = connect(path / "store.sqlite3")
    assert schema_version(conn) == 2  # the schema before issue 16 (issue 17's chunks.locator is migration 2)
    assert migrate(conn) == list(range(3, len(MIGRATIONS) + 1))
    sha = conn.execute("SELECT text_sha FROM documents").fetchone()[0]
    assert sha and len(sha) == 64
    conn.close()
    with Store(path, embedder=hash_embedder) as s:
        [d] = s.documents()
        assert (d.id, d.versions, d.source) == (doc.document_id, 0, None) and s.check().ok
        assert s.ingest_bytes(V1.replace(b"\n", b"\r\n"), "copy.md").status == "duplicate"  # the backfilled hash
        assert s.ingest_bytes(V2, "leave.md").replaced_id == doc.document_id
        assert s.chats.list() == []
