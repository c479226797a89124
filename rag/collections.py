"""Named collections: several stores under one data folder (issue 16).

The data folder is ``settings.store`` (``./data`` by default). The store that
lives there is the collection named :data:`DEFAULT`, exactly as before
collections existed: an existing ``data/`` keeps working unchanged. Every
other collection is a store of its own under ``<data>/collections/<name>/``
(its own SQLite file, indexes, originals and chats), so nothing is shared or
mixed between collections::

    data/                      the "default" collection (store.sqlite3, files/, index/, locks/)
    data/collections/Client A/ another collection, a whole store

Names: 1-64 characters, letters (any script), digits, spaces, ``_``, ``-``
and ``.``; not starting with a dot or a space; ``default`` is taken. Creating
only makes the folder (the store is created when first opened); renaming
moves the folder; deleting removes it with everything in it, and its
documents' served copies (:mod:`rag.served`). A store open in another process
while its collection is renamed or deleted keeps its open files; reopen it by
its new name.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from rag.errors import StoreError
from rag.served import ServedCopies

#: The name of the collection that lives in the data folder itself.
DEFAULT = "default"

#: Sub-folder of the data folder holding the other collections.
COLLECTIONS_DIR = "collections"

_NAME = re.compile(r"^[^\W_][\w .-]{0,63}$")


@dataclass(frozen=True)
class Collection:
    """One collection: its ``name``, the store folder ``path``, whether it is the :data:`DEFAULT` one,
    and whether its store exists yet (``store.sqlite3`` is there)."""

    name: str
    path: Path
    is_default: bool
    exists: bool


def check_name(name: str) -> str:
    """``name`` stripped, if it is a valid new collection name; else :class:`rag.errors.StoreError` saying why."""
    n = (name or "").strip()
    if not _NAME.match(n) or n.endswith("."):
        raise StoreError(f"not a collection name: {name!r} (1-64 letters, digits, spaces, '_', '-' or '.', "
                         "starting with a letter or digit)")
    if n.casefold() == DEFAULT:
        raise StoreError(f"{DEFAULT!r} is the collection in the data folder itself; pick another name")
    return n


class Collections:
    """The collections under the data folder ``root`` (``settings.store``)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    @property
    def folder(self) -> Path:
        return self.root / COLLECTIONS_DIR

    def path(self, name: str | None) -> Path:
        """The store folder of collection ``name`` (``None`` or :data:`DEFAULT`: the data folder itself).

        Does not check that it exists. Raises :class:`rag.errors.StoreError` for an invalid name.
        """
        if name is None or name.strip().casefold() == DEFAULT:
            return self.root
        return self.folder / check_name(name)

    def get(self, name: str | None) -> Collection:
        """Collection ``name``; raises :class:`rag.errors.StoreError` when it was never created (the default always is)."""
        p = self.path(name)
        default = p == self.root
        if not default and not p.is_dir():
            known = ", ".join(c.name for c in self.list())
            raise StoreError(f"no collection {name!r} (known: {known}); create it first")
        return Collection(DEFAULT if default else p.name, p, default, (p / "store.sqlite3").is_file())

    def list(self) -> list[Collection]:
        """The default collection first, then the others by name (case-insensitive)."""
        out = [Collection(DEFAULT, self.root, True, (self.root / "store.sqlite3").is_file())]
        if self.folder.is_dir():
            for p in sorted(self.folder.iterdir(), key=lambda q: q.name.casefold()):
                if p.is_dir() and _NAME.match(p.name):
                    out.append(Collection(p.name, p, False, (p / "store.sqlite3").is_file()))
        return out

    def create(self, name: str) -> Collection:
        """A new, empty collection ``name``. Raises :class:`rag.errors.StoreError` if the name is invalid or taken."""
        n = check_name(name)
        if any(c.name.casefold() == n.casefold() for c in self.list()):
            raise StoreError(f"a collection named {n!r} exists already")
        p = self.folder / n
        p.mkdir(parents=True)
        return Collection(n, p, False, False)

    def rename(self, old: str, new: str) -> Collection:
        """Rename collection ``old`` to ``new`` (its folder moves). The default collection cannot be renamed.

        Raises :class:`rag.errors.StoreError` for the default, an unknown ``old`` or a taken or invalid ``new``.
        """
        src = self.get(old)
        if src.is_default:
            raise StoreError("the default collection is the data folder itself; it cannot be renamed")
        n = check_name(new)
        if n == src.name:
            return src
        if any(c.name.casefold() == n.casefold() and c.name != src.name for c in self.list()):
            raise StoreError(f"a collection named {n!r} exists already")
        dest = self.folder / n
        src.path.rename(dest)
        return Collection(n, dest, False, (dest / "store.sqlite3").is_file())

    def delete(self, name: str) -> None:
        """Delete collection ``name`` and everything in it (documents, indexes, chats, served copies).

        Raises :class:`rag.errors.StoreError` for the default collection or an unknown name.
        """
        c = self.get(name)
        if c.is_default:
            raise StoreError("the default collection cannot be deleted (delete its documents instead)")
        ServedCopies(c.path).withdraw_all()  # issue 26: its documents' served copies leave with it
        shutil.rmtree(c.path)
