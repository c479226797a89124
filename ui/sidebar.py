"""The sidebar's collection, scope and chat widgets (issue 16). The pages call these; logic stays in ``rag/``.

* :func:`collection_picker` - switch, create, rename and delete collections (:mod:`rag.collections`);
* :func:`scope_picker` - the documents a question is asked within (retrieval and the gate see nothing else);
* :func:`chat_list` - a new chat, the saved chats of this collection (reopened with their sources), and the
  current one exported as Markdown (:func:`rag.answer.history.chat_markdown`).

Widget changes that switch state run in callbacks, before the page script, so
every widget is drawn from the new state.
"""

from __future__ import annotations

from datetime import datetime, timezone

import streamlit as st

from rag.answer.history import chat_markdown, turn_from_record
from rag.collections import DEFAULT
from rag.errors import StoreError
from rag.types import DocStatus
from ui import chat, services
from ui.format import md_escape

#: How many saved chats the sidebar lists (the most recently used first).
CHATS_LISTED = 25


def _say(level: str, text: str) -> None:
    st.session_state.collection_msg = (level, text)


def _pick_key(current: str) -> str:
    """The collection selectbox's key while ``current`` is this session's collection (see :func:`collection_picker`)."""
    return f"collection_pick::{current}"


def _on_pick(key: str) -> None:
    services.switch_collection(st.session_state[key])


def _on_create() -> None:
    try:
        c = services.collections().create(st.session_state.get("new_collection", ""))
    except (StoreError, OSError) as e:
        _say("error", str(e))
        return
    services.switch_collection(c.name)
    st.session_state.new_collection = ""
    _say("success", f"Created collection {c.name}")


def _on_rename() -> None:
    old = services.collection_name()
    try:
        services.forget_stores()
        c = services.collections().rename(old, st.session_state.get("rename_collection", ""))
    except (StoreError, OSError) as e:
        _say("error", str(e))
        return
    st.session_state.collection = c.name
    st.session_state.rename_collection = ""
    _say("success", f"Renamed {old} to {c.name}")


def _on_delete() -> None:
    name = services.collection_name()
    if not st.session_state.get("confirm_delete_collection"):
        _say("warning", f"Tick the box to delete {name} and everything in it")
        return
    try:
        services.forget_stores()
        services.collections().delete(name)
    except (StoreError, OSError) as e:
        _say("error", str(e))
        return
    services.switch_collection(DEFAULT)
    st.session_state.confirm_delete_collection = False
    _say("success", f"Deleted collection {name}")


def collection_picker() -> str:
    """The collection selectbox and the "Manage collections" expander; returns this session's collection."""
    current = services.collection_name()
    names = [c.name for c in services.collections().list()]
    # One widget per current collection (its key names it), drawn at that collection: the box always shows the
    # collection every page lists. A single key whose value was set before drawing showed "default" after a
    # page change while the page listed another collection's documents (issue 25, found trying the app).
    key = _pick_key(current)
    st.selectbox("Collection", names, index=names.index(current) if current in names else 0, key=key,
                 on_change=_on_pick, args=(key,),
                 help="Each collection is a store of its own (documents, indexes, chats) under the data folder. "
                      f"'{DEFAULT}' is the data folder's own store.")
    msg = st.session_state.pop("collection_msg", None)
    busy = msg is not None or any(st.session_state.get(k) for k in
                                  ("new_collection", "rename_collection", "confirm_delete_collection"))
    with st.expander("Manage collections", expanded=busy):  # stays open while used and to show what happened
        if msg:
            getattr(st, msg[0])(md_escape(msg[1]))
        st.text_input("New collection", key="new_collection", placeholder="e.g. Client A")
        st.button("Create", key="create_collection", on_click=_on_create)
        is_default = current == DEFAULT
        st.text_input(f"Rename {current} to", key="rename_collection", disabled=is_default)
        st.button("Rename", key="rename_collection_btn", on_click=_on_rename, disabled=is_default)
        st.checkbox(f"Yes, delete {current} with its documents and chats", key="confirm_delete_collection",
                    disabled=is_default)
        st.button("Delete collection", key="delete_collection", on_click=_on_delete, disabled=is_default,
                  type="primary")
        if is_default:
            st.caption(f"'{DEFAULT}' is the data folder's own store: it cannot be renamed or deleted.")
    return current


def scope_picker(store) -> list[str] | None:
    """The "Ask within" multiselect of this collection's ready documents; their ids, or ``None`` for all."""
    docs = [d for d in store.documents() if d.status == DocStatus.READY]
    labels = {d.id: d.label for d in docs}
    if "scope_docs" in st.session_state:  # a document deleted or replaced meanwhile leaves the scope
        st.session_state.scope_docs = [i for i in st.session_state.scope_docs if i in labels]
    picked = st.multiselect(
        "Ask within", list(labels), format_func=lambda i: labels.get(i, i[:12]), key="scope_docs",
        placeholder="All documents",
        help="Only the chosen documents are searched and gated: a question about anything else is refused.")
    return list(picked) or None


def chat_list(store) -> None:
    """A "New chat" button, the saved chats (click to reopen) and the current chat's Markdown download."""
    st.subheader("Chats")
    st.button("New chat", key="new_chat", on_click=services.reset_chat, icon=":material/add:")
    current = st.session_state.get("chat_id")
    rows = store.chats.list()[:CHATS_LISTED]
    if not rows:
        st.caption("Your questions are kept here, per collection.")
    for c in rows:
        mark = "▸ " if c.id == current else ""
        st.button(f"{mark}{md_escape(c.title)}", key=f"open_chat_{c.id}", on_click=chat.open_chat, args=(c.id,),
                  help=f"{c.turns} question(s), last {c.updated_at}", width="stretch")
    saved = store.chats.get(current) if current is not None else None
    if saved is not None and saved.turns:
        turns = [turn_from_record(t.record, t.created_at) for t in store.chats.turns(saved.id)]
        name = services.collection_name()
        md = chat_markdown(saved.title, turns, collection=None if name == DEFAULT else name,
                           exported_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        st.download_button("Export chat (Markdown)", data=md.encode("utf-8"), file_name=f"chat-{saved.id}.md",
                           mime="text/markdown", key="export_chat", icon=":material/download:")
