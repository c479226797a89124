"""Chats kept with a store (rag.store.chats, issue 16): saved in SQLite, listed, reopened, renamed, deleted."""

from __future__ import annotations

import pytest

from rag.errors import StoreError
from rag.store.chats import TITLE_CHARS, title_for
from rag.store.store import Store


def test_chats_are_kept_in_order_and_seen_by_another_store_object(tmp_path, hash_embedder):
    s = Store(tmp_path / "s", embedder=hash_embedder)
    a = s.chats.create("What is the leave policy?")
    b = s.chats.create("  Second\n chat  ")
    assert s.chats.append(a, "What is the leave policy?", "What is the leave policy?", {"text": "x", "n": [1]}) == 0
    assert s.chats.append(a, "And for part-time staff?", "And for part-time staff? (after: ...)", {"refused": True}) == 1
    other = Store(tmp_path / "s", embedder=hash_embedder)  # another process would see the same
    [first, second] = other.chats.list()
    assert (first.id, first.title, first.turns) == (a, "What is the leave policy?", 2)  # most recently used first
    assert (second.id, second.title, second.turns) == (b, "Second chat", 0)
    turns = other.chats.turns(a)
    assert [t.index for t in turns] == [0, 1] and turns[1].standalone.endswith("(after: ...)")
    assert turns[0].record == {"text": "x", "n": [1]}
    other.chats.rename(b, "Renamed")
    assert s.chats.get(b).title == "Renamed"
    assert s.chats.delete(a) and not s.chats.delete(a) and s.chats.turns(a) == []
    with pytest.raises(StoreError, match="no chat with id"):
        s.chats.append(a, "q", "q", {})
    with pytest.raises(StoreError, match="empty"):
        s.chats.rename(b, "  ")
    assert s.check().ok  # chats never touch the indexes
    s.close()
    other.close()


def test_a_long_first_question_is_cut_for_the_title():
    t = title_for("word " * 100)
    assert len(t) == TITLE_CHARS and t.endswith("…")
