"""What the layers above derive from one document, kept with the store and gone with the document (issue 29).

A document's id is the sha256 of its bytes, so what is derived from it alone (its overview: sections and a
summary made of its own sentences, :mod:`rag.answer.overview`) never goes stale while the document is stored.
It is kept as small text files under the store directory::

    derived/<document id>/<name>.json

written atomically (a temporary file, then a rename), removed with the document (:meth:`rag.store.store.Store.delete`
calls :func:`remove`) and swept of documents no longer stored (:func:`sweep`: a version replaced by a newer one).
The store itself never reads them; a store opened read-only simply recomputes (writes fail silently).
"""

from __future__ import annotations

import os
import re
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path

#: The folder under the store directory.
FOLDER = "derived"

_ID = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,80}$")


def path(store_path: Path, doc_id: str, name: str) -> Path:
    """``<store>/derived/<doc_id>/<name>.json``. Raises ``ValueError`` for a malformed id or name (never a path
    outside the folder)."""
    if not _ID.match(doc_id) or not _NAME.match(name):
        raise ValueError(f"not a document id and derived name: {doc_id!r}, {name!r}")
    return Path(store_path) / FOLDER / doc_id / f"{name}.json"


def read(store_path: Path, doc_id: str, name: str) -> str | None:
    """The text kept under ``name`` for ``doc_id``, or ``None`` when there is none (or it cannot be read)."""
    try:
        return path(store_path, doc_id, name).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


def write(store_path: Path, doc_id: str, name: str, text: str) -> bool:
    """Keep ``text`` under ``name`` for ``doc_id`` (atomic replace); ``False`` when the store cannot be written."""
    target = path(store_path, doc_id, name)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
        return True
    except OSError:
        tmp.unlink(missing_ok=True)
        return False


def remove(store_path: Path, doc_id: str) -> None:
    """Forget everything derived from ``doc_id`` (the document left the store)."""
    if _ID.match(doc_id):
        shutil.rmtree(Path(store_path) / FOLDER / doc_id, ignore_errors=True)


def sweep(store_path: Path, keep: Iterable[str]) -> int:
    """Remove what was derived from documents not in ``keep`` (ids); returns how many documents were swept."""
    root = Path(store_path) / FOLDER
    keep = set(keep)
    try:
        gone = [p for p in root.iterdir() if p.is_dir() and _ID.match(p.name) and p.name not in keep]
    except OSError:
        return 0
    for p in gone:
        shutil.rmtree(p, ignore_errors=True)
    return len(gone)
