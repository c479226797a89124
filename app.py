"""The chat page: ask the indexed documents; answers stream with clickable [n] citations.

Run with ``make run`` (http://localhost:8501). Documents are added on the
Documents page. This page only calls ``rag/`` (via :mod:`ui.chat` and
:mod:`ui.sidebar`): a :class:`rag.answer.conversation.Conversation` takes each
turn (a follow-up made standalone before retrieval and shown under the
question, the gate, a refusal that never calls the model, the streamed answer,
the turn saved in the collection's chats); the sidebar picks the collection,
the documents to ask within, and a saved chat to reopen or export.
"""

import streamlit as st

from rag.answer.followup import Rewrite, RewriteMethod
from rag.collections import DEFAULT
from rag.errors import RagError
from rag.models import KNOWN_GGUF
from rag.types import DocStatus
from ui import chat, jobs, services, sidebar
from ui.access import require_access
from ui.format import md_escape

st.set_page_config(page_title="Document QA", page_icon="📄", layout="wide")
services.init_state()
require_access()  # issue 26: a password first when served beyond this machine
cfg = services.settings()

# ---------------------------------------------------------------- sidebar
with st.sidebar:
    sidebar.collection_picker()
    try:
        store = services.store()
    except RagError as e:
        st.error(md_escape(str(e)))
        st.stop()
    jobs.progress_panel(store)
    scope = sidebar.scope_picker(store)
    sidebar.chat_list(store)
    st.header("Answering")
    threshold = st.slider(
        "Threshold (cosine distance)", min_value=0.0, max_value=1.5, value=float(cfg.threshold), step=0.005,
        key="threshold", format="%.3f",
        help="A chunk is a source only if its cosine distance to the question is under this. "
             "None under it: NO ANSWER, and the model is not called.",
    )
    max_sources = st.slider("Max sources", min_value=1, max_value=10, value=int(cfg.max_sources), key="max_sources")
    min_score = st.slider(
        "Answerability cut", min_value=0.0, max_value=1.0, value=float(services.default_min_score()), step=0.05,
        key="min_score", format="%.2f",
        help="The gate also scores how well the sources answer the question (nearest distance on this store's "
             "own scale, query words found or missing, ...): below this cut the question is not answered "
             "outright even when chunks are under the threshold. A little below it the app says the documents "
             "mention this but may not answer it and shows the passages; further below, NO ANSWER. "
             "Higher refuses more; 0 turns it off.",
    )
    source_tokens = st.slider(
        "Source text the model reads (tokens)", min_value=0, max_value=800, value=int(cfg.source_tokens), step=20,
        key="source_tokens",
        help="The model reads the sentences of the sources closest to the question, up to this many tokens in all "
             "(0: every source whole). Fewer answer sooner: on 2 cores each 100 tokens add about a second before "
             "the first word. The sources you see and open are always whole.",
    )
    model_paths = services.models()
    names = [p.name for p in model_paths]
    model_file = st.selectbox(
        "Model", names, index=names.index(cfg.model_file) if cfg.model_file in names else 0, key="model_file",
        help="GGUF files in models/ (add more with `make models-1.5b`).",
    ) if names else None
    if model_file:
        p = model_paths[names.index(model_file)]
        info = services.gguf_summary(str(p), p.stat().st_mtime)
        if "error" in info:
            st.error(md_escape(info["error"]))
        else:
            st.caption(
                f"{md_escape(info['name'])} · {md_escape(info['architecture'])} · "
                f"context {info['context_length']} · {info['size_mb']} MB"
                + (" · chat template" if info["chat_template"] else " · no chat template")
            )
    else:
        st.error("No model in models/: run `make models`.")
    measured = [s for s in KNOWN_GGUF.values() if s.measured]
    if measured:
        st.caption("Measured on the dev questions (docs/answers.md):  \n" + "  \n".join(
            f"**{s.label}**: {s.measured}" + ("" if s.file_name in names else " · not installed: `make models-1.5b`")
            for s in measured))

    rewrite = st.selectbox(
        "Follow-up questions", [m.value for m in RewriteMethod], key="rewrite_method",
        format_func={"keywords": "add the previous question's key words", "context": "add the previous question",
                     "model": "rewritten by the model", "off": "searched as typed"}.get,
        help="A question that leans on the previous one ('How many problems does it contain?') is made standalone "
             "before it is searched; the searched question is shown under yours. See docs/answers.md for how "
             "each way was measured.")
    turns = st.session_state.turns
    last = next((t for t in reversed(turns) if t.candidates and t.gate is not None), None)
    st.subheader("Last question's candidates")
    if last is None:
        st.caption("Ask a question to see the cosine distances of the retrieved chunks.")
    else:
        st.caption(md_escape(last.question))
        verdict = chat.gate_at(last, threshold, max_sources, min_score)
        ranks = {h.fused_rank for h in verdict.sources}
        st.altair_chart(chat.distance_chart(last.candidates, threshold, ranks), width="stretch", height=200)
        st.caption("Each retrieved chunk's cosine distance, in fused order. Dark green: a source; light green: "
                   "under the threshold but beyond max sources; grey: over. Red dashed line: the threshold.")
        st.markdown(chat.what_if(verdict))
        if st.button("Ask it again at this threshold", key="reask"):
            st.session_state.pending_question = (last.question, last.searched)

# ---------------------------------------------------------------- conversation
st.title("Ask your documents")
n_docs = sum(1 for d in store.documents() if d.status == DocStatus.READY)
where = "" if services.collection_name() == DEFAULT else f" in collection {md_escape(services.collection_name())}"
if n_docs == 0:
    st.info(f"No document is indexed{where} yet: add PDF, Word, PowerPoint, spreadsheet, web page, e-book, image, "
            "Markdown or text files on the **Documents** page.")
else:
    st.caption(f"{n_docs} document(s) indexed{where} · answers cite their sources as [n]; click one to open it.")

for i, turn in enumerate(st.session_state.turns):
    with st.chat_message("user"):
        chat.render_question(turn)
    with st.chat_message("assistant"):
        chat.render_turn_body(turn, key=f"t{i}")

typed = st.chat_input("Ask a question about your documents", key="question")
pending = None if typed else st.session_state.pop("pending_question", None)
question = (typed or (pending[0] if pending else "") or "").strip()
if question:
    conv = chat.conversation(cfg.with_overrides(threshold=threshold, max_sources=max_sources, min_score=min_score,
                                                source_tokens=source_tokens, model_file=model_file))
    try:  # a follow-up made standalone first (a question asked again is searched as it was)
        rw = Rewrite(question, pending[1]) if pending else conv.standalone(question, rewrite)
    except RagError as e:
        st.error(md_escape(str(e)))
        st.stop()
    with st.chat_message("user"):
        st.markdown(md_escape(question))
        if rw.rewritten:
            st.caption("Standalone question: " + md_escape(rw.standalone))
    with st.chat_message("assistant"):
        turn = chat.show(conv.ask(question, scope=scope, followup=rw), conv)
    chat.keep_turn(turn, conv)
    st.rerun()
