"""The store's locks (design "What the store must promise": several processes may share one store).

* :meth:`StoreLocks.write` - the one write section: this process's thread lock,
  then ``fcntl.flock`` on ``locks/write.lock`` (other processes), then one
  SQLite ``BEGIN IMMEDIATE`` ... ``COMMIT`` transaction (``ROLLBACK`` on any
  exception). Every change to the store goes through it, so writers never
  interleave and the index files are written by one writer at a time.
* :meth:`StoreLocks.document` - ``locks/<sha256>.lock``, held (non-blocking)
  while that document is being indexed. A document whose status is
  ``indexing`` while its lock is free was left by a process that died.

POSIX only (``fcntl``). Locks are advisory: only processes using this module respect them.
"""

from __future__ import annotations

import contextlib
import fcntl
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def file_lock(path: Path, *, wait: bool) -> Iterator[bool]:
    """An exclusive ``flock`` on ``path`` (created if missing): yields ``True`` once held, or ``False`` at once
    when another open file holds it and ``wait`` is false. Released on exit, and by the kernel when the process
    dies (so a killed worker never leaves a lock behind). The one primitive of a document's lock and the
    worker's (:func:`rag.store.worker.worker_lock`)."""
    with open(path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class StoreLocks:
    """The thread lock and the ``flock`` files under one store's ``locks/`` folder (created if missing).

    ``thread`` is the re-entrant lock that serialises this process's use of
    the store's one SQLite connection; hold it for every read that must not
    interleave with a write of another thread.
    """

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.thread = threading.RLock()

    @contextlib.contextmanager
    def write(self, conn: sqlite3.Connection | None = None) -> Iterator[None]:
        """Exclusive write section: thread lock + ``flock(locks/write.lock)`` (+ one transaction on ``conn``).

        With ``conn`` the body runs inside ``BEGIN IMMEDIATE``; it commits on
        exit and rolls back (and re-raises) on any exception. Without ``conn``
        only the locks are held (schema migrations open their own transactions).
        Blocks until other writers are done. Re-entrant within a thread only
        without ``conn`` (SQLite has no nested transactions).
        """
        with self.thread:
            with open(self.folder / "write.lock", "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    if conn is None:
                        yield
                        return
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        yield
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    conn.execute("COMMIT")
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def document(self, doc_id: str) -> Iterator[bool]:
        """Hold ``locks/<doc_id>.lock`` without waiting: yields ``True``, or ``False`` if another holder has it.

        ``doc_id`` is a hex sha256 (never a client-supplied name). Another
        thread of this process holding it also yields ``False`` (``flock`` is
        per open file).
        """
        with file_lock(self.folder / f"{doc_id}.lock", wait=False) as got:
            yield got

    def document_free(self, doc_id: str) -> bool:
        """True when nobody is indexing ``doc_id`` right now (its lock could be taken and was released)."""
        with self.document(doc_id) as got:
            return got

    def discard_document(self, doc_id: str) -> None:
        """Remove ``locks/<doc_id>.lock`` (after the document was deleted)."""
        (self.folder / f"{doc_id}.lock").unlink(missing_ok=True)
