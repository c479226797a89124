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

from rag.answer.asked_with import changed_knobs, default_knobs
from rag.answer.followup import RewriteMethod
from rag.answer.history import Turn, chat_markdown
from rag.answer.waits import FIRST_WORDS, Wait
from rag.collections import DEFAULT
from rag.errors import StoreError
from rag.models import KNOWN_GGUF, GGUFSpec
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
    for c, label in zip(rows, chat_labels(rows)):
        mark = "▸ " if c.id == current else ""
        st.button(f"{mark}{md_escape(label)}", key=f"open_chat_{c.id}", on_click=chat.open_chat, args=(c.id,),
                  help=f"{c.turns} question(s), last {human_time(c.updated_at)}", width="stretch")
    saved = store.chats.get(current) if current is not None else None
    if saved is not None and saved.turns:
        turns = [Turn.from_json(t.record, t.created_at) for t in store.chats.turns(saved.id)]
        name = services.collection_name()
        labels = {d.id: d.label for d in store.documents()}
        md = chat_markdown(saved.title, turns, collection=None if name == DEFAULT else name, names=labels,
                           exported_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                           defaults=default_knobs(services.settings()))
        st.download_button("Export chat (Markdown)", data=md.encode("utf-8"), file_name=f"chat-{saved.id}.md",
                           mime="text/markdown", key="export_chat", icon=":material/download:")


def chat_labels(rows: list[Any]) -> list[str]:
    """Each saved chat's label in the list: its title, and when two chats share a title, when each was last used
    (issue 42: two chats with the same title differed only by a tooltip), then its number if that is the same too."""
    titles = [r.title for r in rows]
    out = [t if titles.count(t) == 1 else f"{t} · {human_time(r.updated_at)}" for t, r in zip(titles, rows)]
    return [x if out.count(x) == 1 else f"{x} · #{r.id}" for x, r in zip(out, rows)]


def model_label(file_name: str) -> str:
    """How the model choice reads: "Fast (0.5B)" / "Better (1.5B)" for the shipped models, the file name for any
    other ``*.gguf`` dropped into ``models/``."""
    spec = KNOWN_GGUF.get(file_name)
    return spec.choice if spec is not None and spec.choice else file_name


def model_caption(spec: GGUFSpec | None, wait: Wait | None, pace: tuple[str, float] | None = None) -> str:
    """Under a model's choice: its first-word wait as measured on this machine (the median of its last answers,
    :mod:`rag.answer.waits`) once it has answered here; else, when another shipped model has answered here
    (``pace``: its label and its measured wait over its test-machine figure), the test machine's figure scaled by
    that ratio and said as an estimate (a new user read the 0.5B's "about 5.1 s here" beside the 1.5B's "about
    3.4 s on our quiet test machine", and took the slower model for the faster one, 2026-12-06); else the figure of
    our 2-core test machine said as such (issue 42: "about 3.0 s" was promised, 7.6-24 s came); then how often its
    answers were right."""
    if spec is None:
        return wait.plain() if wait is not None else "a model you added to models/"
    right = ""
    if spec.right_documents_pct is not None:
        user = f", {spec.right_user_pct} % in your own words" if spec.right_user_pct is not None else ""
        right = f"answers right {spec.right_documents_pct} % of the time{user}"
    if wait is not None:
        first = wait.plain()
    elif spec.first_word_s is not None and pace is not None:
        first = (f"first words after about {spec.first_word_s * pace[1]:.0f} s here (estimated from "
                 f"{pace[0]}'s times on this machine)")
    elif spec.first_word_s is not None:
        first = f"first words after about {spec.first_word_s:.1f} s on our quiet test machine (2 cores)"
    else:
        first = ""
    return " · ".join(x for x in (first, right) if x)


def machine_pace(names: list[str]) -> tuple[str, float] | None:
    """How this machine's first words compare with our test machine's: ``(label, measured / figure)`` of the first
    shipped model of ``names`` that has answered here (:data:`rag.answer.waits.FIRST_WORDS`) and has a
    test-machine figure; ``None`` when none has."""
    for n in names:
        spec, wait = KNOWN_GGUF.get(n), FIRST_WORDS.wait(n)
        if spec is not None and spec.first_word_s and wait is not None:
            return model_label(n), wait.median_ms / 1000 / spec.first_word_s
    return None


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
    services.seed_first_words()
    captions = [model_caption(KNOWN_GGUF.get(n), FIRST_WORDS.wait(n), machine_pace(order)) for n in order]
    picked = st.radio("Answer with", order, index=start, key="model_file", format_func=model_label,
                      captions=captions, label_visibility="collapsed")
    missing = [s for s in KNOWN_GGUF.values() if s.file_name not in names and s.choice]
    if missing:
        st.caption(" · ".join(f"{md_escape(s.choice)} is not installed (`make models-1.5b`)" for s in missing))
    return picked


@dataclass(frozen=True)
class Knobs:
    """The Advanced section's values: the gate's ``threshold`` (cosine distance), ``max_sources``,
    ``min_score`` (the answerability cut), ``mention_score`` (the lower cut of the "mentions" band; ``None``
    for a gate without one), ``source_tokens`` (what the model reads, tokens) and the follow-up ``rewrite``
    method."""

    threshold: float
    max_sources: int
    min_score: float
    source_tokens: int
    rewrite: str
    mention_score: float | None = None

    def settings(self) -> dict[str, Any]:
        """The knobs as :meth:`rag.settings.Settings.with_overrides` keywords."""
        out = {"threshold": self.threshold, "max_sources": self.max_sources, "min_score": self.min_score,
               "source_tokens": self.source_tokens}
        if self.mention_score is not None:
            out["mention_score"] = self.mention_score
        return out

    def gate(self) -> dict[str, float | None]:
        """The knobs that decide a refusal, as :func:`rag.answer.asked_with.changed_knobs` compares them."""
        return {"threshold": self.threshold, "max_sources": self.max_sources, "min_score": self.min_score,
                "mention_score": self.mention_score}


#: The follow-up choices as the sidebar's narrow box shows them whole (issue 42: "add the previous question's key
#: words" was cut off); what each one does is in the box's help.
FOLLOW_UP_CHOICES = {"keywords": "Add key words", "context": "Add last question", "model": "Model rewrites",
                     "off": "As typed"}

#: The sliders' session-state keys, by the settings field each one sets.
KNOB_KEYS = {"threshold": "threshold", "max_sources": "max_sources", "min_score": "min_score",
             "mention_score": "mention_score", "source_tokens": "source_tokens"}


def knob_defaults(cfg: Settings) -> dict[str, float | int | None]:
    """What each Advanced slider starts at and "Reset to defaults" returns to: the gate's knobs
    (:func:`rag.answer.asked_with.default_knobs`) and the model's ``source_tokens``."""
    return {**default_knobs(cfg), "source_tokens": int(cfg.source_tokens)}


def _worked_in() -> None:
    """A knob was moved: the Advanced section stays open for the rest of the session."""
    st.session_state.advanced_open = True


def _reset_knobs(defaults: dict[str, Any]) -> None:
    for name, key in KNOB_KEYS.items():
        if defaults.get(name) is not None:
            st.session_state[key] = defaults[name]
    _worked_in()


def _init_knobs(defaults: dict[str, Any]) -> None:
    """Each slider's value lives in session state from its first draw (no ``value=``), so "Reset" can set it."""
    for name, key in KNOB_KEYS.items():
        if key not in st.session_state and defaults.get(name) is not None:
            st.session_state[key] = defaults[name]


def advanced(cfg: Settings, model_file: str | None) -> Knobs:
    """The "Advanced" section: every cut the gate decides with, as a slider that can reach its default, and
    "Reset to defaults"; what the model reads; the model file's details; the last question's candidates with
    the verdict at the values the sliders show (re-gated in this same run), and asked again.

    Folded at first; open while any knob is off its default or was just reset (issue 42: it folded itself
    when an answer arrived, with the user's slider inside).
    """
    defaults = knob_defaults(cfg)
    _init_knobs(defaults)
    current = {name: st.session_state.get(key) for name, key in KNOB_KEYS.items()}
    changed = changed_knobs(current, defaults) or current["source_tokens"] != defaults["source_tokens"]
    opened = bool(changed) or st.session_state.get("advanced_open", False)
    with st.expander("Advanced", icon=":material/tune:", expanded=opened):
        st.caption("For specialists: how sure the app must be before it answers, and what the model reads. "
                   "The defaults were measured on our test questions (docs/evaluation.md).")
        threshold = st.slider(
            "Threshold (cosine distance)", min_value=0.0, max_value=1.5, step=0.005, key=KNOB_KEYS["threshold"], on_change=_worked_in,
            format="%.3f", help=f"A chunk is a source only if its cosine distance to the question is under this "
                                f"(default {defaults['threshold']:g}). None under it: no answer, and the model is "
                                "not called.")
        max_sources = st.slider("Max sources", min_value=1, max_value=10, key=KNOB_KEYS["max_sources"], on_change=_worked_in,
                                help=f"At most this many passages are shown and read (default "
                                     f"{defaults['max_sources']}).")
        min_score = st.slider(
            "Answerability cut", min_value=0.0, max_value=1.0, step=0.01, key=KNOB_KEYS["min_score"], on_change=_worked_in, format="%.2f",
            help="The gate also scores how well the sources answer the question (nearest distance on this "
                 "store's own scale, query words found or missing, ...): from this cut up the question is answered "
                 f"(default {defaults['min_score']:g}). Higher refuses more; 0 answers whatever is under the "
                 "threshold.")
        mention_score = None
        if defaults["mention_score"] is not None:
            mention_score = st.slider(
                "Mention cut", min_value=0.0, max_value=1.0, step=0.01, key=KNOB_KEYS["mention_score"], on_change=_worked_in,
                format="%.2f",
                help="From this score up to the answerability cut the app says the documents mention this but may "
                     f"not answer it, and shows the passages; below it, no answer (default "
                     f"{defaults['mention_score']:g}). At or above the answerability cut there is no such band.")
        source_tokens = st.slider(
            "Source text the model reads (tokens)", min_value=0, max_value=800, step=20,
            key=KNOB_KEYS["source_tokens"], on_change=_worked_in,
            help="The model reads the sentences of the sources closest to the question, up to this many tokens in "
                 f"all (0: every source whole; default {defaults['source_tokens']}). Fewer answer sooner: on 2 "
                 "cores each 100 tokens add about a second before the first word. The sources you see and open "
                 "are always whole.")
        st.button("Reset to defaults", key="reset_knobs", icon=":material/restart_alt:", disabled=not changed,
                  on_click=_reset_knobs, args=(defaults,), help="Every slider above back to where it started.")
        rewrite = st.selectbox(
            "Follow-up questions", [m.value for m in RewriteMethod], key="rewrite_method",
            format_func=FOLLOW_UP_CHOICES.get,
            help="A question that leans on the previous one ('How many problems does it contain?') is made "
                 "standalone before it is searched; the searched question is shown under yours. A question that "
                 "names its own subject is never touched. Add key words: the previous question's key words are "
                 "added (the default); add last question: the whole previous question is added; model rewrites: "
                 "the model rewrites it; as typed: searched as you wrote it. See docs/answers.md.")
        _model_details(model_file)
        knobs = Knobs(threshold, max_sources, min_score, source_tokens, rewrite, mention_score)
        _candidates(knobs)
    return knobs


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
    code = model_file.replace("`", "'")  # a code span shows its characters as they are: no escapes in it (issue 42)
    st.caption(f"Model file `{code}`{quant} · {md_escape(info['architecture'])} · "
               f"context {info['context_length']} · {info['size_mb']} MB"
               + (" · chat template" if info["chat_template"] else " · no chat template"))
    measured = [s for s in KNOWN_GGUF.values() if s.measured]
    if measured:
        st.caption("Measured on the dev questions (docs/answers.md):  \n" + "  \n".join(
            f"**{s.label}**: {s.measured}" for s in measured))


def _candidates(knobs: Knobs) -> None:
    """The last question's retrieved chunks, their cosine distances against the threshold, and the verdict the
    gate gives at the values the sliders show now (computed in this run from ``knobs``, never from an earlier
    one), with a button to ask again at them."""
    last = next((t for t in reversed(st.session_state.turns) if t.candidates and t.gate is not None), None)
    st.markdown("**Last question's candidates**")
    if last is None:
        st.caption("Ask a question to see the cosine distances of the retrieved chunks.")
        return
    st.caption(md_escape(last.question))
    verdict = chat.gate_at(last, knobs.threshold, knobs.max_sources, knobs.min_score, knobs.mention_score)
    ranks = {h.fused_rank for h in verdict.sources}
    st.altair_chart(chat.distance_chart(last.candidates, knobs.threshold, ranks), width="stretch", height=200)
    st.caption("Each retrieved chunk's cosine distance, in fused order. Dark green: a source; light green: "
               "under the threshold but beyond max sources; grey: over. Dashed line: the threshold.")
    st.markdown(chat.what_if(verdict))
    if st.button("Ask it again at these values", key="reask"):
        st.session_state.pending_question = (last.question, last.standalone)
