"""The chat page: ask the indexed documents; answers stream with [n] citations that open the cited place.

Reached as "Chat" through ``app.py``'s navigation (``make run``, http://localhost:8501). This page only calls
``rag/`` (via :mod:`ui.chat`, :mod:`ui.sidebar` and :mod:`ui.overview`): a
:class:`rag.answer.conversation.Conversation` takes each turn (a follow-up made standalone before retrieval
and shown under the question, the gate, a refusal that never calls the model, the streamed answer, the turn
saved in the collection's chats).

Two levels (issue 29): the page speaks in plain words (what happened, what to do next); the figures
(distances, scores, cuts, token budgets) sit in each answer's "Details" and in the sidebar's "Advanced"
section. An empty chat says what is in the documents (each one's overview) and offers questions they
answer (:mod:`rag.answer.suggest`, each one answered by the gate).
"""

import time

import streamlit as st

from rag.answer.followup import Rewrite
from rag.collections import DEFAULT
from rag.errors import RagError
from rag.types import DocStatus
from ui import chat, jobs, overview, services, sidebar
from ui.access import require_access
from ui.format import md_escape

st.set_page_config(page_title="Chat · Document QA", page_icon="📄", layout="wide")
services.init_state()
require_access()  # issue 26: a password first when served beyond this machine
cfg = services.settings()

# ---------------------------------------------------------------- sidebar
# One container per part: a part that grows (a new saved chat, a file indexing) leaves the ones below it where
# they were, so an open "Advanced" stays open when an answer arrives (issue 42).
with st.sidebar:
    with st.container():
        sidebar.collection_picker()
    store = services.store_or_stop()
    with st.container():
        jobs.progress_panel(store)  # issue 25: indexing under way, on every page
    with st.container():
        scope = sidebar.scope_picker(store)
    with st.container():
        sidebar.chat_list(store)
    with st.container():
        model_file = sidebar.model_picker(cfg)
    with st.container():
        knobs = sidebar.advanced(cfg, model_file)

# ---------------------------------------------------------------- conversation
st.title("Ask your documents")
ready = [d for d in store.documents() if d.status == DocStatus.READY]
where = "" if services.collection_name() == DEFAULT else f" in collection {md_escape(services.collection_name())}"
asking = cfg.with_overrides(model_file=model_file, **knobs.settings())
if not ready:
    st.info(f"No document is indexed{where} yet. Add PDF, Word, PowerPoint, spreadsheet, web page, e-book, "
            "image, Markdown or text files on the **Documents** page, then come back to ask about them.")
    st.page_link("app_pages/1_Documents.py", label="Add documents", icon=":material/upload_file:")
else:
    st.caption(f"{len(ready)} document(s) indexed{where} · every answer cites its sources as [n]: click one "
               "to see the passage.")
    overview.documents_panel(store, ready, expanded=not st.session_state.turns)
    if not st.session_state.turns:
        overview.suggestions(store, asking, scope)

for i, turn in enumerate(st.session_state.turns):
    with st.chat_message("user", avatar=chat.USER_AVATAR):
        chat.render_question(turn)
    with st.chat_message("assistant", avatar=chat.ASSISTANT_AVATAR):
        chat.render_turn_body(turn, key=f"t{i}")

typed = st.chat_input("Ask a question about your documents", key="question")
pending = None if typed else st.session_state.pop("pending_question", None)
question = (typed or (pending[0] if pending else "") or "").strip()
if question and not ready:  # nothing to search: said plainly, no search, no model, nothing saved
    with st.chat_message("user", avatar=chat.USER_AVATAR):
        st.markdown(md_escape(question))
    with st.chat_message("assistant", avatar=chat.ASSISTANT_AVATAR):
        st.info(f"Add documents first: nothing is indexed{where} yet, so there is nothing to answer from. "
                "Drop your files on the **Documents** page, then ask again.", icon=":material/upload_file:")
        st.page_link("app_pages/1_Documents.py", label="Add documents", icon=":material/upload_file:")
elif question:
    submitted = time.perf_counter()  # "first words" count from here: the follow-up rewrite too (issue 41)
    conv = chat.conversation(asking)
    try:  # a follow-up made standalone first (a question asked again is searched as it was)
        rw = Rewrite(question, pending[1]) if pending and pending[1] else conv.standalone(
            question, knobs.rewrite, scope=scope)
    except RagError as e:
        st.error(md_escape(str(e)))
        st.stop()
    try:  # search and gate (no model yet): a failure here leaves no turn behind
        stream = conv.ask(question, scope=scope, followup=rw, submitted=submitted)
    except RagError as e:
        st.error(md_escape(str(e)))
        st.stop()
    # known before the model writes: with Streamlit's fast reruns a question sent while an answer streams starts
    # the next run before this one has ended, so what this run writes afterwards may come too late for it
    st.session_state.chat_id = conv.ensure_chat(question)
    chat.provisional_turn(question, rw, scope)
    with st.chat_message("user", avatar=chat.USER_AVATAR):
        chat.render_question(chat.Turn(question, rw.standalone, scope=tuple(scope) if scope else None))
    with st.chat_message("assistant", avatar=chat.ASSISTANT_AVATAR):
        turn = chat.show(stream, conv, generate=model_file is not None)
    chat.keep_turn(turn, conv)
    st.rerun()
