"""The store's locks (rag.store.locks): one writer at a time, a document lock shows who is indexing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from rag.store.locks import StoreLocks
from rag.store.schema import connect


def test_document_lock_is_exclusive_and_released(tmp_path):
    locks = StoreLocks(tmp_path / "locks")
    doc = "cd" * 32
    assert locks.document_free(doc)
    with locks.document(doc) as got:
        assert got
        with locks.document(doc) as again:  # another open file: another holder
            assert again is False
        assert not locks.document_free(doc)
    assert locks.document_free(doc)
    locks.discard_document(doc)
    assert not (tmp_path / "locks" / f"{doc}.lock").exists()


def test_write_section_commits_or_rolls_back(tmp_path):
    locks, conn = StoreLocks(tmp_path / "locks"), connect(tmp_path / "s.sqlite3")
    conn.execute("CREATE TABLE t (x INTEGER)")
    with locks.write(conn):
        conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(RuntimeError, match="abandon"):
        with locks.write(conn):
            conn.execute("INSERT INTO t VALUES (2)")
            raise RuntimeError("abandon this write")
    assert conn.execute("SELECT x FROM t").fetchall() == [(1,)] and not conn.in_transaction


def test_write_lock_excludes_another_process(tmp_path):
    locks = StoreLocks(tmp_path / "locks")
    probe = textwrap.dedent(f"""
        import fcntl
        fh = open({str(tmp_path / "locks" / "write.lock")!r}, "a+")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            print("free")
        except BlockingIOError:
            print("held")
    """)

    def other() -> str:
        return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout.strip()

    with locks.write():
        assert other() == "held"
    assert other() == "free"
