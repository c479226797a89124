"""Issue 16 in the CLI, with the fake embedder (no model): versions (c25), --sync, --doc scope, follow-ups, chats,
collections."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

from rag.cli.main import main

SABBATICAL = "Can I take a sabbatical?"
DAYS = "How many days of annual leave do full-time staff get?"


def _run(*args, ok: bool = True):
    r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    if ok:
        assert r.exit_code == 0, r.output
    return r


def _ask_json(store, question, *extra):
    return json.loads(_run("ask", "--store", store, "--no-generate", "--json", *extra, question).stdout)


def _quotes(d) -> str:
    return "\n".join(c["quote"] for c in d["citations"])


@pytest.fixture(scope="module")
def c25(tmp_path_factory, fake_embedder_module, cases_dir):
    """v1 then v2 of leave-policy.md, ingested from their own folders with the default (replace)."""
    store = tmp_path_factory.mktemp("c25") / "store"
    first = _run("ingest", "--store", store, cases_dir / "c25_versions" / "v1" / "leave-policy.md")
    second = _run("ingest", "--store", store, cases_dir / "c25_versions" / "v2" / "leave-policy.md")
    return store, first, second


def test_c25_the_new_version_replaces_the_old_with_a_notice(c25):
    store, first, second = c25
    assert first.stdout.startswith("ready")
    assert second.stdout.startswith("ready") and "replaced the version added" in second.stdout
    assert "note: 1 document(s) replaced by a new version" in second.stderr and "--keep-both" in second.stderr
    docs = json.loads(_run("status", "--store", store, "--json").stdout)["documents"]
    assert [(d["name"], d["versions"]) for d in docs] == [("leave-policy.md", 1)]
    out = _run("status", "--store", store).stdout
    assert "(version 2, added " in out and "previous version " in out


def test_c25_answers_come_from_the_current_version_only(c25):
    store, _, _ = c25
    d = _ask_json(store, SABBATICAL)
    assert d["refused"] or "sabbatical" not in _quotes(d).lower(), d
    d = _ask_json(store, DAYS)
    assert not d["refused"] and "28 days" in _quotes(d) and "25 days" not in _quotes(d)


def test_keep_both_then_sync_reindexes_changed_files_and_removes_deleted_ones(tmp_path, fake_embedder, cases_dir):
    store, folder = tmp_path / "store", tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    shutil.copy(cases_dir / "c25_versions" / "v1" / "leave-policy.md", folder / "leave-policy.md")
    shutil.copy(cases_dir / "c26_bike_shed.md", folder / "sub" / "c26_bike_shed.md")
    shutil.copy(cases_dir / "c26_visitor_guide.md", folder / "c26_visitor_guide.md")
    _run("ingest", "--store", store, "--sync", folder)
    shutil.copy(cases_dir / "c25_versions" / "v2" / "leave-policy.md", folder / "leave-policy.md")  # changed
    (folder / "sub" / "c26_bike_shed.md").unlink()  # deleted
    r = _run("ingest", "--store", store, "--sync", "--json", folder)
    rows = {json.loads(x)["name"]: json.loads(x) for x in r.stdout.splitlines()}
    assert rows["c26_bike_shed.md"]["status"] == "removed"
    assert rows["leave-policy.md"]["status"] == "ready" and rows["leave-policy.md"]["replaced_id"]
    assert rows["c26_visitor_guide.md"]["status"] == "duplicate"  # unchanged: nothing done
    names = sorted(d["name"] for d in json.loads(_run("status", "--store", store, "--json").stdout)["documents"])
    assert names == ["c26_visitor_guide.md", "leave-policy.md"]
    assert _ask_json(store, "When does the bike shed close?")["refused"]
    assert _ask_json(store, SABBATICAL)["refused"] or "sabbatical" not in _quotes(_ask_json(store, SABBATICAL)).lower()
    # --keep-both: the old text beside the new one, two documents told apart by their labels
    r = _run("ingest", "--store", store, "--keep-both", cases_dir / "c25_versions" / "v1" / "leave-policy.md")
    assert r.stdout.startswith("ready") and "replaced" not in r.stdout and "note:" not in r.stderr
    labels = [d["label"] for d in json.loads(_run("status", "--store", store, "--json").stdout)["documents"]]
    assert sum(label.startswith("leave-policy.md (") for label in labels) == 2
    assert _run("ingest", "--store", store, "--sync", ok=False).exit_code == 2  # --sync needs a folder


@pytest.mark.slow
def test_doc_scope_restricts_search_and_the_gate(tmp_path, embedder, cases_dir):
    """The gate answers within the scope: it needs the real embedder's distances (the fake's refuse)."""
    store = tmp_path / "store"
    _run("ingest", "--store", store, cases_dir / "c26_bike_shed.md", cases_dir / "c26_visitor_guide.md")
    docs = {d["name"]: d["id"] for d in json.loads(_run("status", "--store", store, "--json").stdout)["documents"]}
    bike, visitor = docs["c26_bike_shed.md"][:8], docs["c26_visitor_guide.md"][:8]
    hits = json.loads(_run("search", "--store", store, "--json", "--doc", visitor, "When does the bike shed close?").stdout)
    assert hits["hits"] and {h["document_name"] for h in hits["hits"]} == {"c26_visitor_guide.md"}
    assert not _ask_json(store, "When does the bike shed close?")["refused"]
    scoped = _ask_json(store, "When does the bike shed close?", "--doc", visitor)
    assert scoped["scope"] == [docs["c26_visitor_guide.md"]]
    assert scoped["refused"] or {c["document_name"] for c in scoped["citations"]} == {"c26_visitor_guide.md"}
    both = _ask_json(store, "When does the bike shed close?", "--doc", visitor, "--doc", bike)
    assert not both["refused"] and len(both["scope"]) == 2
    r = _run("search", "--store", store, "--doc", "ffffffff", "x", ok=False)
    assert r.exit_code == 1 and "no document with id ffffffff" in r.output


def test_history_makes_a_follow_up_standalone_and_chats_are_saved_and_exported(c25, tmp_path, fake_embedder):
    store, _, _ = c25
    hist = tmp_path / "history.json"
    hist.write_text(json.dumps([{"question": "What does the leave policy say about annual leave?"}]))
    d = _ask_json(store, "And how many days do they get?", "--history", hist)
    assert d["followup"]["question"] == "And how many days do they get?"
    assert d["followup"]["method"] == "keywords" and d["followup"]["standalone"].startswith("And how many days")
    assert d["query"] == d["followup"]["standalone"] != "And how many days do they get?"
    assert "followup" not in _ask_json(store, DAYS)  # no history: the JSON contract is unchanged
    first = _ask_json(store, DAYS, "--chat", "new")
    second = _ask_json(store, "And can they carry days over?", "--chat", first["chat_id"])
    assert second["chat_id"] == first["chat_id"] and second["followup"]["standalone"] != second["followup"]["question"]
    chats = json.loads(_run("chats", "list", "--store", store, "--json").stdout)
    assert [(c["id"], c["title"], c["turns"]) for c in chats] == [(first["chat_id"], DAYS, 2)]
    out = tmp_path / "chat.md"
    _run("chats", "export", "--store", store, first["chat_id"], "-o", out)
    md = out.read_text(encoding="utf-8")
    assert md.startswith(f"# {DAYS}") and f"## 1. {DAYS}" in md and "## 2. And can they carry days over?" in md
    assert "*Standalone question:* And can they carry days over? (" in md
    assert "leave-policy.md > " in md and "`#char=" in md and "> Full-time staff get 28 days" in md
    turns = json.loads(_run("chats", "show", "--store", store, first["chat_id"], "--json").stdout)
    assert len(turns) == 2 and turns[1]["standalone"] == second["query"]
    r = _run("ask", "--store", store, "--chat", "99", "--no-generate", "x", ok=False)
    assert r.exit_code == 1 and "no chat with id 99" in r.output


def test_collections_are_stores_of_their_own_and_the_default_is_the_data_folder(tmp_path, fake_embedder, cases_dir):
    data = tmp_path / "data"
    _run("ingest", "--store", data, cases_dir / "c26_bike_shed.md")  # the data folder's own store, as before
    _run("collections", "create", "--store", data, "Client A")
    _run("ingest", "--store", data, "--collection", "Client A", cases_dir / "c26_visitor_guide.md")
    _run("ingest", "--store", data, "--collection", "new-one", cases_dir / "c26_visitor_guide.md")  # made on ingest
    names = lambda *a: [d["name"] for d in json.loads(_run("status", "--store", data, "--json", *a).stdout)["documents"]]  # noqa: E731
    assert names() == ["c26_bike_shed.md"] == names("--collection", "default")
    assert names("--collection", "Client A") == ["c26_visitor_guide.md"]
    listed = json.loads(_run("collections", "list", "--store", data, "--json").stdout)
    assert [c["name"] for c in listed] == ["default", "Client A", "new-one"] and listed[0]["path"] == str(data)
    _run("collections", "rename", "--store", data, "Client A", "Client B")
    assert names("--collection", "Client B") == ["c26_visitor_guide.md"]
    assert _run("status", "--store", data, "--collection", "Client A", ok=False).exit_code == 1
    _run("collections", "delete", "--store", data, "--yes", "Client B")
    assert [c["name"] for c in json.loads(_run("collections", "list", "--store", data, "--json").stdout)] == [
        "default", "new-one"]
    r = _run("collections", "delete", "--store", data, "--yes", "default", ok=False)
    assert r.exit_code == 1 and "cannot be deleted" in r.output
    assert _run("collections", "create", "--store", data, "../evil", ok=False).exit_code == 1
    assert names() == ["c26_bike_shed.md"]  # the default collection never moved


def test_a_store_made_before_issue_16_opens_unchanged_as_the_default_collection(tmp_path, fake_embedder, cases_dir):
    data = tmp_path / "data"
    _run("ingest", "--store", data, cases_dir / "c26_bike_shed.md")
    before = json.loads(_run("search", "--store", data, "--json", "When does the bike shed close?").stdout)
    asked = _ask_json(data, "When does the bike shed close?")
    conn = sqlite3.connect(data / "store.sqlite3")  # roll the file back to schema 2 (the store of main before issue 16)
    conn.executescript("DROP TABLE chat_turns; DROP TABLE chats; DROP TABLE document_versions; "
                       "DROP INDEX documents_name; DROP INDEX documents_text_sha; "
                       "ALTER TABLE documents DROP COLUMN text_sha; ALTER TABLE documents DROP COLUMN source; "
                       + "".join(f"ALTER TABLE documents DROP COLUMN {c}; "  # migration 5 (issue 23)
                                 for c in ("page_spans", "parts", "ocr_pages", "language"))
                       + "DELETE FROM migrations WHERE version > 2;")
    conn.commit()
    conn.close()
    after = json.loads(_run("search", "--store", data, "--json", "When does the bike shed close?").stdout)
    assert after == before
    assert [c["name"] for c in json.loads(_run("collections", "list", "--store", data, "--json").stdout)] == ["default"]
    again = _ask_json(data, "When does the bike shed close?")
    assert {k: again[k] for k in ("refused", "refusal", "citations")} == {k: asked[k] for k in ("refused", "refusal", "citations")}
