"""Folders kept in sync with a store: the rules of ``ingest --sync`` and the watcher of ``rag watch`` (issue 25).

The rules, one place for both:

* :func:`expand_paths` - the files of a run: the files given, plus every file under each folder
  (recursive, sorted; hidden files and folders, and Office lock files ``~$...``, skipped);
* :func:`conflict_policies` - a changed file replaces the version read from the same path (the default
  ``replace``); a second file of the same name elsewhere in the tree is kept beside it (``keep-both``);
* :func:`removed_by_sync` - the documents read from a file under a folder that is no longer there.

:class:`FolderWatcher` applies them as files change (``watchdog``): each path that changed is queued
(:meth:`rag.store.store.Store.enqueue_path`) once it has been quiet for :data:`SETTLE_S` (a file still being
copied is not read half-written), and the documents of deleted files leave. The worker indexes what it queues.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from rag.store.results import IngestResult, OnConflict

if TYPE_CHECKING:
    from rag.store.records import DocumentRow
    from rag.store.store import Store

logger = logging.getLogger(__name__)

#: Seconds a changed path must stay quiet before it is queued (copies and saves arrive as several events).
SETTLE_S = 1.0


def _skipped(parts: Iterable[str]) -> bool:
    return any(part.startswith((".", "~$")) for part in parts)


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files given, plus every file under each folder (recursive, sorted; hidden files and folders skipped)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(f for f in sorted(p.rglob("*")) if f.is_file() and not _skipped(f.relative_to(p).parts))
        else:
            out.append(p)
    return out


def conflict_policies(files: list[Path], default: str) -> dict[Path, str]:
    """The on-conflict policy of each file of one run: ``default``, except that a file whose name an
    earlier file of the same run already had keeps both (two files of one folder tree are two documents)."""
    seen: set[str] = set()
    out = {}
    for f in files:
        out[f] = OnConflict.KEEP_BOTH if f.name in seen else default
        seen.add(f.name)
    return out


def removed_by_sync(store: Store, folders: list[Path], files: list[Path]) -> list[DocumentRow]:
    """Documents read from a file under one of ``folders`` that is no longer among ``files``."""
    present = {str(f.resolve()) for f in files}
    gone = {}
    for folder in folders:
        for d in store.sourced_under(folder):
            if d.source not in present:
                gone[d.id] = d
    return list(gone.values())


class FolderWatcher:
    """Keeps ``folders`` in sync with ``store`` while it runs (see the module docstring).

    :meth:`start` first syncs the folders as ``ingest --sync`` does, then watches them; :meth:`stop` ends it.
    ``on_change(kind, path, result)`` is told of each file queued (``kind`` ``"queued"``, with its
    :class:`rag.store.results.IngestResult`) or removed (``"removed"``, ``result`` ``None``).
    """

    def __init__(self, store: Store, folders: Iterable[str | Path],
                 on_change: Callable[[str, Path, IngestResult | None], None] | None = None):
        self.store = store
        self.folders = [Path(f).resolve() for f in folders]
        self.on_change = on_change
        self._pending: dict[Path, float] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._observer = None
        self._thread: threading.Thread | None = None

    def sync(self, changed: Iterable[Path] | None = None) -> None:
        """Queue ``changed`` paths (default: every file) with their policy, and remove the documents of files
        no longer there."""
        files = expand_paths(self.folders)
        policies = conflict_policies(files, OnConflict.REPLACE)
        for d in removed_by_sync(self.store, self.folders, files):
            if self.store.delete(d.id):
                logger.info("removed %s: %s is no longer there", d.name, d.source)
                if self.on_change is not None:
                    self.on_change("removed", Path(d.source or d.name), None)
        if changed is None:
            wanted = set(files)
        else:  # a folder moved or copied in arrives as one event: every file under it counts as changed
            changed = [Path(p) for p in changed]
            dirs = [p for p in changed if p.is_dir()]
            wanted = {f for f in files if f in changed or any(d in f.parents for d in dirs)}
        for f in files:
            if f in wanted:
                r = self.store.enqueue_path(f, on_conflict=policies[f])
                if self.on_change is not None:
                    self.on_change("queued", f, r)

    def start(self) -> None:
        """Sync once, then watch (``watchdog``'s observer and a thread that queues settled paths)."""
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        for folder in self.folders:
            folder.mkdir(parents=True, exist_ok=True)
        self.sync()
        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:
                if event.event_type in ("opened", "closed_no_write"):
                    return
                for attr in ("src_path", "dest_path"):
                    p = getattr(event, attr, "")
                    if p:
                        watcher._touch(Path(p if isinstance(p, str) else p.decode()))

        self._observer = Observer()
        for folder in self.folders:
            self._observer.schedule(Handler(), str(folder), recursive=True)
        self._observer.start()
        self._thread = threading.Thread(target=self._loop, name="rag-folder-watcher", daemon=True)
        self._thread.start()
        logger.info("watching %s", ", ".join(map(str, self.folders)))

    def _touch(self, path: Path) -> None:
        for folder in self.folders:
            try:
                rel = path.relative_to(folder)
            except ValueError:
                continue
            if not _skipped(rel.parts):
                with self._lock:
                    self._pending[path] = time.monotonic()
            return

    def _loop(self) -> None:
        while not self._stop.wait(SETTLE_S / 4):
            now = time.monotonic()
            with self._lock:
                ready = [p for p, t in self._pending.items() if now - t >= SETTLE_S]
                for p in ready:
                    del self._pending[p]
            if ready:
                try:
                    self.sync(ready)
                except Exception:  # noqa: BLE001 - one bad event must not end the watch
                    logger.exception("folder sync failed")

    def stop(self) -> None:
        """Stop watching."""
        self._stop.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=10)
        if self._thread is not None:
            self._thread.join(timeout=10)
