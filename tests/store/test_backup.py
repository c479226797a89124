"""Issue 26, item 4: a recoverable store. Consistent backups (SQLite's online backup) before migrations and on a
schedule; ``doctor`` fails on a corrupted store; ``rag repair`` brings a truncated ``store.sqlite3`` back from the
newest backup plus the kept originals, or rebuilds it from the originals alone."""

from __future__ import annotations

import functools
import os
import sqlite3
import time

import pytest
from click.testing import CliRunner

from rag.cli import doctor as doctor_cli
from rag.cli.main import main
from rag.settings import get_settings
from rag.store import backup as backup_mod
from rag.store.schema import MIGRATIONS, connect, migrate
from rag.store.store import Store

DOCS = {"valves.md": b"# Valves\n\nThe relief valve is checked every Monday.",
        "boiler.md": b"# Boiler\n\nThe boiler is serviced in May by the contractor.",
        "crane.md": b"# Crane\n\nThe crane wire rope is inspected every 90 days."}


@pytest.fixture
def open_store(tmp_path, hash_embedder):
    settings = get_settings(store=tmp_path / "store")
    return functools.partial(Store, settings=settings, embedder=hash_embedder)


def _ingest(store, names):
    for n in names:
        assert store.ingest_bytes(DOCS[n], n).status == "ready"


def _names(store):
    return sorted(d.name for d in store.documents() if d.status == "ready")


def test_first_change_makes_a_consistent_scheduled_backup(open_store, tmp_path):
    with open_store(tmp_path / "store") as s:
        assert backup_mod.backups(s.path) == []  # an empty store has nothing to keep
        _ingest(s, ["valves.md"])
        kept = backup_mod.backups(s.path)
        assert len(kept) == 1 and kept[0].name.endswith("-scheduled.sqlite3") and not backup_mod.integrity(kept[0])
        _ingest(s, ["boiler.md"])
        assert len(backup_mod.backups(s.path)) == 1  # not due again for 24 h
        os.utime(kept[0], (time.time() - 25 * 3600,) * 2)
        assert s.backup_if_due() is not None and len(backup_mod.backups(s.path)) == 2


def test_a_backup_is_made_before_a_migration(tmp_path, open_store):
    path = tmp_path / "store"
    path.mkdir()
    conn = connect(path / "store.sqlite3")
    migrate(conn, MIGRATIONS[:-1])  # a store written by the previous version of the code
    conn.close()
    with open_store(path):
        pass
    assert any(f"before-migration-{len(MIGRATIONS)}" in p.name for p in backup_mod.backups(path))


def test_a_truncated_store_fails_doctor_and_repair_brings_it_back(open_store, tmp_path, monkeypatch):
    path = tmp_path / "store"
    with open_store(path) as s:
        _ingest(s, ["valves.md"])  # in the scheduled backup (made after the first change)
        _ingest(s, ["boiler.md", "crane.md"])  # added after it: they come back from their kept originals
    db = path / "store.sqlite3"
    for side in ("store.sqlite3-wal", "store.sqlite3-shm"):
        (path / side).unlink(missing_ok=True)
    with open(db, "r+b") as fh:
        fh.truncate(db.stat().st_size // 3)
    ok, lines = doctor_cli.store_health(path, get_settings(store=path))
    assert not ok and any("rag repair" in line for line in lines)
    monkeypatch.setattr(doctor_cli, "report", lambda: "")  # versions and model hashes: not this test's business
    r = CliRunner().invoke(main, ["doctor", "--store", str(path)])
    assert r.exit_code == 1 and "store check          FAILED" in r.output

    report = backup_mod.repair(path, open_store)
    assert report.problems and report.restored_from is not None and report.moved_to.is_dir()
    assert sorted(report.reindexed) == ["boiler.md", "crane.md"] and report.ok
    with open_store(path) as s:
        assert _names(s) == ["boiler.md", "crane.md", "valves.md"]
        hits = s.search("crane wire rope inspected", k=1)
        assert s.chunk(hits[0].chunk_id).document_name == "crane.md"
    assert doctor_cli.store_health(path, get_settings(store=path), open_store)[0]


def test_rebuild_from_the_originals_alone_keeps_their_names(open_store, tmp_path):
    path = tmp_path / "store"
    with open_store(path) as s:
        _ingest(s, ["valves.md", "boiler.md"])
        assert s.delete(s.documents()[0].id)
    (path / "store.sqlite3").write_bytes(b"not a database at all" * 100)
    for p in backup_mod.backups(path):
        p.unlink()
    report = backup_mod.repair(path, open_store)
    assert report.restored_from is None and report.ok
    with open_store(path) as s:
        assert _names(s) == ["boiler.md"]  # the deleted one's original went with it


def test_integrity_reports_instead_of_raising(tmp_path):
    bad = tmp_path / "x.sqlite3"
    bad.write_bytes(b"\0" * 4096)
    assert backup_mod.integrity(bad) and backup_mod.integrity(tmp_path / "missing.sqlite3")
    good = tmp_path / "g.sqlite3"
    sqlite3.connect(good).execute("CREATE TABLE t (x)").connection.commit()
    assert backup_mod.integrity(good) == []
