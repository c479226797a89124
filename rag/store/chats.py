"""The chats kept with a store (issue 16): each question, the standalone question searched, and the answer as JSON.

Tables ``chats`` and ``chat_turns`` (schema migration 4, :mod:`rag.store.schema`).
A turn's ``record`` is opaque here: the answer layer writes and reads it
(:mod:`rag.answer.history`); this module only keeps it, in order, through the
store's write lock, so several processes may append to the same store. Chats
never touch the indexes (no index generation moves).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from rag.errors import StoreError
from rag.store.locks import StoreLocks

#: A chat's title is its first question, cut to this many characters.
TITLE_CHARS = 80


@dataclass(frozen=True)
class ChatRow:
    """One saved chat: ``id`` (1, 2, ...), ``title``, ISO 8601 UTC times (microseconds), ``turns`` how many
    questions it holds."""

    id: int
    title: str
    created_at: str
    updated_at: str
    turns: int


@dataclass(frozen=True)
class TurnRow:
    """One question of a chat: ``index`` 0-based order; ``question`` as typed; ``standalone`` as searched;
    ``record`` the turn as JSON (:meth:`rag.answer.history.Turn.to_json`); ``created_at`` ISO 8601 UTC."""

    chat_id: int
    index: int
    question: str
    standalone: str
    record: dict[str, Any]
    created_at: str


def now_iso() -> str:
    """The current time, ISO 8601 UTC to the microsecond (chats created in the same second keep their order)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def title_for(question: str) -> str:
    """A chat title from its first question: one line, at most :data:`TITLE_CHARS` characters (an ellipsis if cut)."""
    one = " ".join(question.split()) or "chat"
    return one if len(one) <= TITLE_CHARS else one[: TITLE_CHARS - 1].rstrip() + "…"


class ChatLog:
    """The chats of the store whose SQLite connection is ``conn`` (``locks`` its :class:`StoreLocks`)."""

    def __init__(self, conn: sqlite3.Connection, locks: StoreLocks):
        self.conn, self.locks = conn, locks

    _COLS = "c.id, c.title, c.created_at, c.updated_at, (SELECT COUNT(*) FROM chat_turns t WHERE t.chat_id = c.id)"

    def list(self) -> list[ChatRow]:
        """Every chat, the most recently used first."""
        with self.locks.thread:
            rows = self.conn.execute(f"SELECT {self._COLS} FROM chats c ORDER BY c.updated_at DESC, c.id DESC").fetchall()
        return [ChatRow(*r) for r in rows]

    def get(self, chat_id: int) -> ChatRow | None:
        """The chat ``chat_id``, or ``None``."""
        with self.locks.thread:
            r = self.conn.execute(f"SELECT {self._COLS} FROM chats c WHERE c.id=?", (int(chat_id),)).fetchone()
        return ChatRow(*r) if r else None

    def create(self, title: str) -> int:
        """A new empty chat titled :func:`title_for` ``title``; returns its id."""
        now = now_iso()
        with self.locks.write(self.conn):
            cur = self.conn.execute("INSERT INTO chats(title, created_at, updated_at) VALUES (?, ?, ?)",
                                    (title_for(title), now, now))
            return int(cur.lastrowid)

    def append(self, chat_id: int, question: str, standalone: str, record: dict[str, Any]) -> int:
        """Add a turn at the end of chat ``chat_id``; returns its 0-based index.

        ``record`` must be JSON-serialisable. Raises :class:`rag.errors.StoreError` for an unknown chat.
        """
        data = json.dumps(record, ensure_ascii=False)
        now = now_iso()
        with self.locks.write(self.conn):
            if self.conn.execute("SELECT 1 FROM chats WHERE id=?", (int(chat_id),)).fetchone() is None:
                raise StoreError(f"no chat with id {chat_id}")
            idx = self.conn.execute("SELECT COALESCE(MAX(idx) + 1, 0) FROM chat_turns WHERE chat_id=?",
                                    (int(chat_id),)).fetchone()[0]
            self.conn.execute("INSERT INTO chat_turns(chat_id, idx, question, standalone, record, created_at) "
                              "VALUES (?, ?, ?, ?, ?, ?)", (int(chat_id), idx, question, standalone, data, now))
            self.conn.execute("UPDATE chats SET updated_at=? WHERE id=?", (now, int(chat_id)))
        return int(idx)

    def turns(self, chat_id: int) -> list[TurnRow]:
        """The turns of chat ``chat_id`` in order (``[]`` for an unknown chat)."""
        with self.locks.thread:
            rows = self.conn.execute("SELECT chat_id, idx, question, standalone, record, created_at FROM chat_turns "
                                     "WHERE chat_id=? ORDER BY idx", (int(chat_id),)).fetchall()
        return [TurnRow(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows]

    def rename(self, chat_id: int, title: str) -> None:
        """Give chat ``chat_id`` a new title. Raises :class:`rag.errors.StoreError` for an unknown chat or empty title."""
        if not title.strip():
            raise StoreError("a chat title cannot be empty")
        with self.locks.write(self.conn):
            cur = self.conn.execute("UPDATE chats SET title=? WHERE id=?", (title_for(title), int(chat_id)))
            if cur.rowcount == 0:
                raise StoreError(f"no chat with id {chat_id}")

    def delete(self, chat_id: int) -> bool:
        """Delete chat ``chat_id`` and its turns; ``False`` if there was none."""
        with self.locks.write(self.conn):
            return self.conn.execute("DELETE FROM chats WHERE id=?", (int(chat_id),)).rowcount > 0
