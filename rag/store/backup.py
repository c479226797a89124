"""A store that can be brought back (issue 26, item 5): consistent backups of its SQLite file, its integrity
checked, and a repair that restores or rebuilds it.

* :func:`backup` - SQLite's online backup API (``Connection.backup``) copies the database page by page inside
  one read transaction, so the copy is consistent even while another process writes; it is written under a
  temporary name, checked (``PRAGMA quick_check``) and renamed into ``<store>/backups/``. The store makes one
  before it applies a migration and, on the schedule of settings ``backup_hours`` (default every 24 h, checked
  when the store opens and after each change), keeps the newest ``backups_kept`` of each kind.
* :func:`integrity` - ``PRAGMA integrity_check`` of a database file (a truncated or overwritten file fails it,
  or cannot be opened at all: both are reported as problems, never raised).
* :func:`repair` - ``rag repair``: a database that fails the check is moved aside to ``<store>/damaged/<time>/``
  and the newest backup that passes it is restored (``--rebuild``: none, a new empty database); the index files
  are dropped (rebuilt from SQLite on opening); then every original kept in ``files/`` that the database does not
  hold as a ready document is indexed again under the name recorded for it (``names/<sha256>``).

What a backup does not hold (documents added after it) comes back from the originals; chats after it do not.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import sqlite3
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rag.served import ServedCopies
from rag.store.results import IngestStatus, OnConflict
from rag.types import DocStatus

logger = logging.getLogger(__name__)

#: Sub-folder of the store holding the backups.
BACKUP_DIR = "backups"
#: Sub-folder of the store where a damaged database is moved by :func:`repair`.
DAMAGED_DIR = "damaged"
DB_NAME = "store.sqlite3"
#: Sub-folder of the store recording each kept original's name (``names/<sha256>``).
NAMES_DIR = "names"


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")


def integrity(path: Path) -> list[str]:
    """Problems ``PRAGMA integrity_check`` finds in the SQLite file ``path`` (``[]`` when it is sound).

    A file that is missing, not a database, or cannot be read is one problem line; never raises.
    """
    if not Path(path).is_file():
        return [f"{path} is missing"]
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)) as conn:
            rows = [r[0] for r in conn.execute("PRAGMA integrity_check")]
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as e:
        return [f"{Path(path).name}: {e}"]
    return [] if rows == ["ok"] else rows[:20]


def backups(store: Path) -> list[Path]:
    """The store's backups, newest first."""
    folder = Path(store) / BACKUP_DIR
    if not folder.is_dir():
        return []
    return sorted(folder.glob("store-*.sqlite3"), key=lambda p: p.name, reverse=True)


def backup(conn: sqlite3.Connection, store: Path, kind: str = "scheduled", *, keep: int = 3) -> Path:
    """A consistent copy of the open database ``conn`` as ``<store>/backups/store-<UTC time>-<kind>.sqlite3``.

    Written through a temporary file, checked, then renamed (a crash never leaves a half backup under a backup's
    name); only the newest ``keep`` backups of the same ``kind`` stay. Raises ``sqlite3.Error`` when the copy
    cannot be made or fails its check.
    """
    folder = Path(store) / BACKUP_DIR
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / f"store-{_stamp()}-{kind}.sqlite3"
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    with contextlib.closing(sqlite3.connect(tmp)) as out:
        conn.backup(out)
        ok = out.execute("PRAGMA quick_check").fetchone()[0]
    if ok != "ok":
        tmp.unlink(missing_ok=True)
        raise sqlite3.DatabaseError(f"the backup failed its check: {ok}")
    os.replace(tmp, dest)
    same = [p for p in backups(store) if p.name.endswith(f"-{kind}.sqlite3")]
    for old in same[keep:]:
        old.unlink(missing_ok=True)
    return dest


def due(store: Path, hours: float, now: float | None = None) -> bool:
    """Whether a scheduled backup is due: ``hours`` > 0 and no backup of any kind newer than that."""
    if hours <= 0:
        return False
    newest = backups(store)
    if not newest:
        return True
    age = (now if now is not None else time.time()) - newest[0].stat().st_mtime
    return age >= hours * 3600


def write_name(store: Path, doc_id: str, name: str) -> None:
    """Record the user's name of original ``files/<doc_id>`` as ``names/<doc_id>``, for a rebuild (``files/``
    holds nothing but originals named by content)."""
    folder = Path(store) / NAMES_DIR
    with contextlib.suppress(OSError):
        folder.mkdir(exist_ok=True)
        (folder / doc_id).write_text(name, encoding="utf-8")


def read_name(store: Path, doc_id: str) -> str | None:
    """The name recorded by :func:`write_name`, or ``None``."""
    try:
        return (Path(store) / NAMES_DIR / doc_id).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def remove_original(store: Path, doc_id: str) -> None:
    """A document left the store (deleted, replaced by a new version, or a twin of one indexed): remove its kept
    original, its recorded name and its served copies (:meth:`rag.served.ServedCopies.withdraw`, issue 26), so
    every path that removes a document unpublishes it."""
    (Path(store) / "files" / doc_id).unlink(missing_ok=True)
    (Path(store) / NAMES_DIR / doc_id).unlink(missing_ok=True)
    ServedCopies(store).withdraw(doc_id)


@dataclass
class RepairReport:
    """What :func:`repair` found and did: ``problems`` of the database before; ``moved_to`` where the damaged
    files went; ``restored_from`` the backup restored (``None``: none, or not needed); ``reindexed`` and
    ``failed`` (name, reason) the originals indexed again; ``ok`` whether the store passes its checks now."""

    problems: list[str] = field(default_factory=list)
    moved_to: Path | None = None
    restored_from: Path | None = None
    reindexed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    ok: bool = False


def _move_aside(store: Path) -> Path:
    dest = Path(store) / DAMAGED_DIR / _stamp()
    dest.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        src = Path(store) / f"{DB_NAME}{suffix}"
        if src.exists():
            shutil.move(str(src), dest / src.name)
    return dest


def _restore(src: Path, dest: Path) -> None:
    with contextlib.closing(sqlite3.connect(f"file:{src}?mode=ro", uri=True)) as a, \
            contextlib.closing(sqlite3.connect(dest)) as b:
        a.backup(b)


def repair(store: Path, open_store, *, rebuild: bool = False) -> RepairReport:
    """Bring the store at ``store`` back (see the module doc); ``open_store(path)`` opens a
    :class:`rag.store.store.Store` (the caller's settings and embedder). Returns a :class:`RepairReport`.

    ``rebuild``: start from an empty database whatever the check says (every kept original indexed again).
    """
    store = Path(store)
    report = RepairReport(problems=integrity(store / DB_NAME) if (store / DB_NAME).exists() else [])
    if report.problems or rebuild:
        report.moved_to = _move_aside(store) if (store / DB_NAME).exists() else None
        if not rebuild:
            for candidate in backups(store):
                if not integrity(candidate):
                    _restore(candidate, store / DB_NAME)
                    report.restored_from = candidate
                    break
    shutil.rmtree(store / "index", ignore_errors=True)  # caches of SQLite: rebuilt on opening
    s = open_store(store)
    try:
        originals = sorted(p.name for p in (store / "files").glob("*") if len(p.name) == 64)
        for doc_id in originals:
            doc = s.get_document(doc_id)
            if doc is not None and doc.status == DocStatus.READY:
                continue
            name = read_name(store, doc_id) or (doc.name if doc is not None else f"recovered-{doc_id[:12]}")
            r = s.ingest_bytes((store / "files" / doc_id).read_bytes(), name, on_conflict=OnConflict.KEEP_BOTH)
            if r.status in (IngestStatus.READY, IngestStatus.DUPLICATE):
                report.reindexed.append(name)
            else:
                report.failed.append((name, r.reason or r.status))
        report.ok = s.check().ok and not integrity(store / DB_NAME)
    finally:
        s.close()
    return report


def scheduled_backup(conn: sqlite3.Connection, locks, path: Path, settings) -> Path | None:
    """A scheduled backup of the store at ``path`` when the newest is older than settings ``backup_hours`` and the
    store holds documents (the store calls it on opening and after each change). Returns it, or ``None``. A
    backup that cannot be written is logged, never raised (the store itself is fine)."""
    if not due(path, settings.backup_hours):
        return None
    try:
        with locks.thread:
            if not conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone():
                return None
            return backup(conn, path, "scheduled", keep=settings.backups_kept)
    except (sqlite3.Error, OSError) as e:
        logger.warning("store %s: scheduled backup failed: %s", path, e)
        return None
