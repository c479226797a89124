"""The sidebar's widgets (issues 16, 29). The pages call these; logic stays in ``rag/``.

* :func:`collection_picker` - switch, create, rename and delete collections (:mod:`rag.collections`);
* :func:`scope_picker` - the documents a question is asked within (retrieval and the gate see nothing else);
* :func:`chat_list` - a new chat, the saved chats of this collection (reopened with their sources), and the
  current one exported as Markdown (:func:`rag.answer.history.chat_markdown`);
* :func:`model_picker` - "Fast (0.5B)" / "Better (1.5B)" with each one's measured wait and hit rate;
* :func:`advanced` - the figures a specialist tunes (threshold, sources, answerability cut, what the model
  reads, follow-ups) and the last question's candidates, folded away in an "Advanced" section (issue 29:
  the sidebar opened on cosine, cut and token sliders and a ``.gguf`` file name).

Widget changes that switch state run in callbacks, before the page script, so
every widget is drawn from the new state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import streamlit as st

from rag.answer.followup import RewriteMethod
from rag.answer.history import Turn, chat_markdown
from rag.collections import DEFAULT
from rag.errors import StoreError
from rag.models import KNOWN_GGUF
from rag.settings import Settings
from rag.types import DocStatus
from ui import chat, services
from ui.format import md_escape
from ui.plain import human_time

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
                  help=f"{c.turns} question(s), last {human_time(c.updated_at)}", width="stretch")
    saved = store.chats.get(current) if current is not None else None
    if saved is not None and saved.turns:
        turns = [Turn.from_json(t.record, t.created_at) for t in store.chats.turns(saved.id)]
        name = services.collection_name()
        labels = {d.id: d.label for d in store.documents()}
        md = chat_markdown(saved.title, turns, collection=None if name == DEFAULT else name, names=labels,
                           exported_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        st.download_button("Export chat (Markdown)", data=md.encode("utf-8"), file_name=f"chat-{saved.id}.md",
                           mime="text/markdown", key="export_chat", icon=":material/download:")


def model_label(file_name: str) -> str:
    """How the model choice reads: "Fast (0.5B)" / "Better (1.5B)" for the shipped models, the file name for any
    other ``*.gguf`` dropped into ``models/``."""
    spec = KNOWN_GGUF.get(file_name)
    return spec.choice if spec is not None and spec.choice else file_name


def model_picker(cfg: Settings) -> str | None:
    """The "Answer with" choice among the installed models, each with its measured wait and hit rate; returns
    the chosen file name (``None`` when no model is installed: refusals and key passages still work)."""
    names = [p.name for p in services.models()]
    st.subheader("Answer with")
    if not names:
        st.warning("No answer model is installed: run `make models`. Until then the app shows the passages "
                   "that answer, without a written answer.")
        return None
    known = sorted((n for n in names if n in KNOWN_GGUF), key=lambda n: KNOWN_GGUF[n].size_bytes)
    order = known + [n for n in names if n not in KNOWN_GGUF]
    start = order.index(cfg.model_file) if cfg.model_file in order else 0
    captions = [KNOWN_GGUF[n].plain_figures() if n in KNOWN_GGUF else "a model you added to models/" for n in order]
    picked = st.radio("Answer with", order, index=start, key="model_file", format_func=model_label,
                      captions=captions, label_visibility="collapsed")
    missing = [s for s in KNOWN_GGUF.values() if s.file_name not in names and s.choice]
    if missing:
        st.caption(" · ".join(f"{md_escape(s.choice)} is not installed (`make models-1.5b`)" for s in missing))
    return picked


@dataclass(frozen=True)
class Knobs:
    """The Advanced section's values: the gate's ``threshold`` (cosine distance), ``max_sources``,
    ``min_score`` (the answerability cut), ``source_tokens`` (what the model reads, tokens) and the
    follow-up ``rewrite`` method."""

    threshold: float
    max_sources: int
    min_score: float
    source_tokens: int
    rewrite: str

    def settings(self) -> dict[str, Any]:
        """The knobs as :meth:`rag.settings.Settings.with_overrides` keywords."""
        return {"threshold": self.threshold, "max_sources": self.max_sources, "min_score": self.min_score,
                "source_tokens": self.source_tokens}


def advanced(cfg: Settings, model_file: str | None) -> Knobs:
    """The "Advanced" section (folded): the gate's and the model's figures, the model file's details, and
    the last question's candidates with their cosine distances (re-gated here at other values, and asked
    again)."""
    with st.expander("Advanced", icon=":material/tune:"):
        st.caption("For specialists: how sure the app must be before it answers, and what the model reads. "
                   "The defaults were measured on our test questions (docs/evaluation.md).")
        threshold = st.slider(
            "Threshold (cosine distance)", min_value=0.0, max_value=1.5, value=float(cfg.threshold), step=0.005,
            key="threshold", format="%.3f",
            help="A chunk is a source only if its cosine distance to the question is under this. "
                 "None under it: no answer, and the model is not called.")
        max_sources = st.slider("Max sources", min_value=1, max_value=10, value=int(cfg.max_sources),
                                key="max_sources")
        min_score = st.slider(
            "Answerability cut", min_value=0.0, max_value=1.0, value=float(services.default_min_score()), step=0.05,
            key="min_score", format="%.2f",
            help="The gate also scores how well the sources answer the question (nearest distance on this "
                 "store's own scale, query words found or missing, ...): below this cut the question is not "
                 "answered outright even when chunks are under the threshold. A little below it the app says the "
                 "documents mention this but may not answer it and shows the passages; further below, no answer. "
                 "Higher refuses more; 0 turns it off.")
        source_tokens = st.slider(
            "Source text the model reads (tokens)", min_value=0, max_value=800, value=int(cfg.source_tokens),
            step=20, key="source_tokens",
            help="The model reads the sentences of the sources closest to the question, up to this many tokens in "
                 "all (0: every source whole). Fewer answer sooner: on 2 cores each 100 tokens add about a second "
                 "before the first word. The sources you see and open are always whole.")
        rewrite = st.selectbox(
            "Follow-up questions", [m.value for m in RewriteMethod], key="rewrite_method",
            format_func={"keywords": "add the previous question's key words", "context": "add the previous question",
                         "model": "rewritten by the model", "off": "searched as typed"}.get,
            help="A question that leans on the previous one ('How many problems does it contain?') is made "
                 "standalone before it is searched; the searched question is shown under yours. A question that "
                 "names its own subject is never touched. See docs/answers.md.")
        _model_details(model_file)
        _candidates(threshold, max_sources, min_score)
    return Knobs(threshold, max_sources, min_score, source_tokens, rewrite)


def _model_details(model_file: str | None) -> None:
    if not model_file:
        return
    path = next((p for p in services.models() if p.name == model_file), None)
    if path is None:
        return
    info = services.gguf_summary(str(path), path.stat().st_mtime)
    if "error" in info:
        st.error(md_escape(info["error"]))
        return
    spec = KNOWN_GGUF.get(model_file)
    quant = f" · {md_escape(spec.label)}" if spec is not None else ""
    st.caption(f"Model file `{md_escape(model_file)}`{quant} · {md_escape(info['architecture'])} · "
               f"context {info['context_length']} · {info['size_mb']} MB"
               + (" · chat template" if info["chat_template"] else " · no chat template"))
    measured = [s for s in KNOWN_GGUF.values() if s.measured]
    if measured:
        st.caption("Measured on the dev questions (docs/answers.md):  \n" + "  \n".join(
            f"**{s.label}**: {s.measured}" for s in measured))


def _candidates(threshold: float, max_sources: int, min_score: float) -> None:
    """The last question's retrieved chunks, their cosine distances against the threshold, and the verdict the
    gate would give at the values above (with a button to ask again at them)."""
    last = next((t for t in reversed(st.session_state.turns) if t.candidates and t.gate is not None), None)
    st.markdown("**Last question's candidates**")
    if last is None:
        st.caption("Ask a question to see the cosine distances of the retrieved chunks.")
        return
    st.caption(md_escape(last.question))
    verdict = chat.gate_at(last, threshold, max_sources, min_score)
    ranks = {h.fused_rank for h in verdict.sources}
    st.altair_chart(chat.distance_chart(last.candidates, threshold, ranks), width="stretch", height=200)
    st.caption("Each retrieved chunk's cosine distance, in fused order. Dark green: a source; light green: "
               "under the threshold but beyond max sources; grey: over. Dashed line: the threshold.")
    st.markdown(chat.what_if(verdict))
    if st.button("Ask it again at these values", key="reask"):
        st.session_state.pending_question = (last.question, last.standalone)
