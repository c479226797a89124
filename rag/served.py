"""Served copies of a store's PDFs (issue 26, item 4): what a web server's static folder publishes so that a
citation opens the original in the browser's own viewer at ``#page=N``, per collection, gone with the document.

Layout, under the static folder the app is given (settings ``static_dir``; Streamlit serves it at
``/app/static/``)::

    <static>/<key>/<token>.pdf     key: 32 hex characters, random, one per store (a collection)
                                   token: 32 hex characters, random, one per publication of one document

Both are drawn by :mod:`secrets` (128 bits each), so a URL is a capability: knowing a document's bytes, hash or
name gives nothing, and a web page elsewhere cannot probe for it (Streamlit answers static files with
``Access-Control-Allow-Origin: *``, so a guessable name could be read by any site the user visits). The same PDF
in two collections has two unrelated URLs; deleting it and adding it again gives a new one, so an old link stays
dead. The copy is a hard link to the store's original (a copy across file systems), never a symbolic link
(Streamlit refuses targets outside its folder).

The store folder keeps the record, ``<store>/served.json`` (mode 0600: it holds the capabilities): the key, the
static folders copies were written to, and each document's token; changed under ``<store>/locks/served.lock``
(``fcntl.flock``; several processes and threads share a store). Whatever removes a document's original
(:func:`rag.store.backup.remove_original`: delete, a replaced version, ``ingest --sync``) calls
:meth:`ServedCopies.withdraw`; removing a collection calls :meth:`ServedCopies.withdraw_all`; so the store never
needs to know the web server's folder: the record says where its copies are. :func:`sweep` (at app start) removes
copies no store holds: documents deleted while the record could not be reached, folders of removed data folders,
and the shared ``<static>/<sha256>.pdf`` copies of the layout before this one.

Standard library only (ground floor: :mod:`rag.collections` uses it); knows nothing of Streamlit.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path

#: The record of a store's served copies, in the store folder.
RECORD = "served.json"
#: The lock file (under the store's ``locks/`` folder) every change of the record holds.
LOCK = "served.lock"

_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_DOC_ID = re.compile(r"^[0-9a-f]{64}$")
#: A served file: ``<token>.pdf``.
_SERVED = re.compile(r"^[0-9a-f]{32}\.pdf$")
#: The shared layout before issue 26: ``<static>/<sha256>.pdf`` for every collection (and its temporary files).
_LEGACY = re.compile(r"^(?:[0-9a-f]{64}\.pdf|\.[0-9a-f]{64}\.\d+\.tmp)$")
#: A served URL path relative to the static folder: ``<key>/<token>.pdf``.
SERVED_PATH = re.compile(r"^[0-9a-f]{32}/[0-9a-f]{32}\.pdf$")


@dataclass
class Record:
    """What ``served.json`` holds: the store's ``key``; ``dirs`` the static folders written to (absolute);
    ``docs`` document id (sha256 hex) -> token."""

    key: str
    dirs: list[str] = field(default_factory=list)
    docs: dict[str, str] = field(default_factory=dict)

    def path(self, doc_id: str) -> str | None:
        """``<key>/<token>.pdf`` of a published document, else ``None``."""
        token = self.docs.get(doc_id)
        return f"{self.key}/{token}.pdf" if token else None


def _check_id(doc_id: str) -> str:
    if not _DOC_ID.match(doc_id or ""):
        raise ValueError(f"not a document id (sha256 hex): {doc_id!r}")
    return doc_id


def _link(src: Path, dest: Path) -> None:
    """``dest`` becomes the bytes of ``src``: a hard link, else a copy; through a temporary name and a rename."""
    tmp = dest.with_name(f".{dest.stem}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)


class ServedCopies:
    """The served copies of the store under ``store`` (its folder; see the module docstring).

    Thread- and process-safe; every method but :meth:`record` holds the store's served lock.
    Raises ``ValueError`` for a ``doc_id`` that is not a sha256 hex string.
    """

    def __init__(self, store: str | Path):
        self.store = Path(store)

    # ------------------------------------------------------------------ the record

    def record(self) -> Record | None:
        """The record, or ``None`` when this store never published anything (or the file is unreadable)."""
        try:
            data = json.loads((self.store / RECORD).read_text(encoding="utf-8"))
            key, dirs, docs = data["key"], data.get("dirs", []), data.get("docs", {})
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not isinstance(key, str) or not _HEX32.match(key):
            return None
        docs = {d: t for d, t in dict(docs).items() if _DOC_ID.match(str(d)) and _HEX32.match(str(t))}
        return Record(key, [str(d) for d in dirs if isinstance(d, str)], docs)

    def _save(self, rec: Record) -> None:
        tmp = self.store / f".{RECORD}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"key": rec.key, "dirs": rec.dirs, "docs": rec.docs}, fh, indent=1, sort_keys=True)
        os.replace(tmp, self.store / RECORD)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        folder = self.store / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / LOCK, "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield

    # ------------------------------------------------------------------ publish, withdraw

    def publish(self, doc_id: str, src: str | Path, static_dir: str | Path) -> str:
        """Make the original ``src`` of document ``doc_id`` served from ``static_dir``; returns its URL path
        relative to the static folder, ``<key>/<token>.pdf``. Idempotent: the same path while the document is
        published (the file is written again if it went missing).

        The caller says the document is indexed; ``src`` is checked under the lock, so a document whose
        original was removed meanwhile (deleted by another process) is never published again. Raises
        ``FileNotFoundError`` when ``src`` is not a file, ``OSError`` when the copy cannot be written.
        """
        _check_id(doc_id)
        src, static_dir = Path(src), Path(static_dir).resolve()
        if not self.store.is_dir():
            raise FileNotFoundError(f"no store folder {self.store}")
        with self._locked():
            if not src.is_file():
                raise FileNotFoundError(f"the original of {doc_id[:8]} is not in the store (deleted?)")
            rec = self.record() or Record(secrets.token_hex(16))
            token = rec.docs.get(doc_id) or secrets.token_hex(16)
            dest = static_dir / rec.key / f"{token}.pdf"
            if not (dest.is_file() and dest.stat().st_size == src.stat().st_size):
                dest.parent.mkdir(parents=True, exist_ok=True)
                _link(src, dest)
            if rec.docs.get(doc_id) != token or str(static_dir) not in rec.dirs:
                rec.docs[doc_id] = token
                if str(static_dir) not in rec.dirs:
                    rec.dirs.append(str(static_dir))
                self._save(rec)
        return f"{rec.key}/{token}.pdf"

    def withdraw(self, doc_id: str) -> int:
        """Remove document ``doc_id``'s served copy from every static folder it was written to (its URL answers
        404 from now on); returns the files removed. Nothing to do (0) when it was never published."""
        _check_id(doc_id)
        if not self.store.is_dir():
            return 0
        with self._locked():  # also when there is no record yet: a publish in flight writes it under this lock
            rec = self.record()
            if rec is None or doc_id not in rec.docs:
                return 0
            token = rec.docs.pop(doc_id)
            removed = self._unlink(rec, [f"{token}.pdf"])
            self._save(rec)
        return removed

    def withdraw_all(self) -> int:
        """Remove every served copy of this store and the record (before its collection is removed); returns
        the files removed."""
        with self._locked():
            rec = self.record()
            if rec is None:
                return 0
            removed = 0
            for d in rec.dirs:
                folder = Path(d) / rec.key
                if folder.is_dir():
                    removed += sum(1 for p in folder.iterdir() if p.is_file())
                    shutil.rmtree(folder, ignore_errors=True)
            (self.store / RECORD).unlink(missing_ok=True)
        return removed

    def keep_only(self, doc_ids: AbstractSet[str]) -> int:
        """Withdraw every document not in ``doc_ids`` (the store's indexed ones) and remove any file in this
        store's static folders that the record does not name; returns the files removed."""
        with self._locked():
            rec = self.record()
            if rec is None:
                return 0
            gone = [d for d in rec.docs if d not in doc_ids]
            for d in gone:
                rec.docs.pop(d)
            keep = {f"{t}.pdf" for t in rec.docs.values()}
            removed = 0
            for d in rec.dirs:
                folder = Path(d) / rec.key
                if folder.is_dir():
                    for p in folder.iterdir():
                        if p.name not in keep and p.is_file():
                            p.unlink(missing_ok=True)
                            removed += 1
            if gone:
                self._save(rec)
        return removed

    @staticmethod
    def _unlink(rec: Record, names: Iterable[str]) -> int:
        removed = 0
        for d in rec.dirs:
            for name in names:
                p = Path(d) / rec.key / name
                if p.is_file():
                    p.unlink(missing_ok=True)
                    removed += 1
        return removed


def sweep(static_dir: str | Path, stores: Iterable[str | Path],
          indexed: Callable[[Path], AbstractSet[str] | None]) -> int:
    """Remove from ``static_dir`` every served copy no store holds; returns the files and folders removed.

    ``stores`` the store folders of this data folder (every collection); ``indexed(store)`` the ids of its
    indexed documents, or ``None`` when the store cannot be read now (its copies are then left alone). For each
    store with a record: copies of documents it no longer holds go (:meth:`ServedCopies.keep_only`). Then, in
    ``static_dir``: every ``<key>/`` folder that is no store's, and every copy of the shared layout before issue
    26 (``<sha256>.pdf``). Other files in the static folder (the app's own) are never touched. A second data
    folder served from the same static folder loses its copies here; they are written again when next linked.
    """
    removed, keys = 0, set()
    for store in stores:
        served = ServedCopies(store)
        rec = served.record()
        if rec is None:
            continue
        keys.add(rec.key)
        held = indexed(Path(store))
        if held is not None:
            removed += served.keep_only(held)
    static = Path(static_dir)
    if not static.is_dir():
        return removed
    for p in static.iterdir():
        if p.is_dir() and not p.is_symlink() and _HEX32.match(p.name) and p.name not in keys:
            shutil.rmtree(p, ignore_errors=True)
            removed += 1
        elif p.is_file() and _LEGACY.match(p.name):
            p.unlink(missing_ok=True)
            removed += 1
    return removed
