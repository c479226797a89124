"""Folders kept in sync (issue 25): ``rag watch`` / ``watch_dirs`` apply ``ingest --sync``'s rules as files change."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rag.settings import get_settings
from rag.store.store import Store
from rag.store.sync import FolderWatcher, conflict_policies, expand_paths
from rag.store.worker import Worker


@pytest.fixture()
def store(tmp_path, hash_embedder):
    s = Store(tmp_path / "store", settings=get_settings(store=tmp_path / "store"), embedder=hash_embedder)
    yield s
    s.close()


def _drain(store: Store) -> None:
    Worker(store, contained=False).run(until=lambda: not store.jobs.active())


def _wait(cond, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def _ready(store: Store) -> dict[str, str]:
    return {d.name: d.source for d in store.documents() if d.status == "ready"}


def test_rules_skip_hidden_and_lock_files_and_keep_both_for_a_second_name(tmp_path):
    (tmp_path / "a").mkdir()
    for p in ("x.md", ".hidden.md", "~$draft.docx", "a/x.md", ".git/config"):
        (tmp_path / p).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / p).write_text("# T\n\ntext\n")
    files = expand_paths([tmp_path])
    assert [f.relative_to(tmp_path).as_posix() for f in files] == ["a/x.md", "x.md"]
    assert list(conflict_policies(files, "replace").values()) == ["replace", "keep-both"]


def test_watcher_queues_new_and_changed_files_and_removes_deleted_ones(store, tmp_path):
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "old.md").write_text("# Old\n\nThe old rule about harbour cranes.\n")
    events = []
    queued = []  # (name, document id) of each file the watcher queued (a duplicate of bytes already there is not)
    w = FolderWatcher(store, [folder], on_change=lambda kind, path, r: (
        events.append((kind, Path(path).name)),
        queued.append((Path(path).name, r.document_id)) if r is not None and r.status == "queued" else None))
    w.start()
    try:
        assert ("queued", "old.md") in events  # the first sync
        _drain(store)
        assert set(_ready(store)) == {"old.md"}
        v1 = store.documents()[0].id
        (folder / "new.md").write_text("# New\n\nA new rule about cold stores.\n")
        _wait(lambda: any(n == "new.md" for n, _ in queued))
        (folder / "old.md").write_text("# Old\n\nThe changed rule about harbour cranes, second edition.\n")
        _wait(lambda: any(n == "old.md" and i != v1 for n, i in queued))
        _drain(store)
        docs = {d.name: d for d in store.documents()}
        assert set(docs) == {"old.md", "new.md"} and docs["old.md"].versions == 1  # the change is a new version
        assert "second edition" in store.canonical_text(docs["old.md"].id)
        (folder / "new.md").unlink()
        _wait(lambda: ("removed", "new.md") in events)
        assert set(_ready(store)) == {"old.md"}
    finally:
        w.stop()
    assert store.check().ok
