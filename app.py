"""The chat page: ask the indexed documents; answers stream with clickable [n] citations.

Run with ``make run`` (http://localhost:8501). Documents are added on the
Documents page. This page only calls ``rag/`` (via :mod:`ui.chat`): the store
gates the question, a refusal never calls the model.
"""

import streamlit as st

from rag.errors import RagError
from rag.types import DocStatus
from ui import chat, services
from ui.format import md_escape

st.set_page_config(page_title="Document QA", page_icon="📄", layout="wide")
services.init_state()
cfg = services.settings()

# ---------------------------------------------------------------- sidebar
with st.sidebar:
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

    turns = st.session_state.turns
    last = next((t for t in reversed(turns) if t.candidates), None)
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
            st.session_state.pending_question = last.question

# ---------------------------------------------------------------- conversation
st.title("Ask your documents")
try:
    store = services.store()
    n_docs = sum(1 for d in store.documents() if d.status == DocStatus.READY)
except RagError as e:
    st.error(md_escape(str(e)))
    st.stop()
if n_docs == 0:
    st.info("No document is indexed yet: add PDF, Word, PowerPoint, spreadsheet, web page, e-book, image, "
            "Markdown or text files on the **Documents** page.")
else:
    st.caption(f"{n_docs} document(s) indexed · answers cite their sources as [n]; click one to open it.")

for i, turn in enumerate(st.session_state.turns):
    with st.chat_message("user"):
        st.markdown(md_escape(turn.question))
    with st.chat_message("assistant"):
        chat.render_turn_body(turn, key=f"t{i}")

question = st.chat_input("Ask a question about your documents", key="question")
question = question or st.session_state.pop("pending_question", None)
if question and question.strip():
    question = question.strip()
    with st.chat_message("user"):
        st.markdown(md_escape(question))
    with st.chat_message("assistant"):
        turn = chat.ask(question, threshold, max_sources, model_file or cfg.model_file, min_score, source_tokens)
    st.session_state.turns.append(turn)
    st.rerun()
