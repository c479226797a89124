"""What's in my documents (issue 29), on the Documents page and in the chat: each document's sections and a
short summary made of its own sentences, and the questions the documents answer.

The overview is :func:`rag.answer.overview.document_overview` (computed on first view, kept with the
store); the suggestions are :func:`rag.answer.suggest.suggested_questions` (each one answered by the gate
with the chat's settings), cached here per store generation and settings. Summary sentences are verbatim
and link to the Source page at their place (the cited range highlighted), like a citation.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

import streamlit as st

from rag.answer.overview import Overview, document_overview
from rag.answer.suggest import suggested_questions
from rag.collections import DEFAULT
from rag.errors import RagError
from rag.settings import Settings
from ui import services
from ui.format import SOURCE_PAGE, md_escape
from ui.plain import kind_label

#: Documents listed one line each in the chat's "What's in your documents" (the rest: pick one).
LISTED = 10


def source_link(doc_id: str, start: int, end: int, page: int | None) -> str:
    """The Source page at one summary sentence (its range highlighted; a PDF at its 1-based page)."""
    params: dict[str, object] = {"doc": doc_id, "start": start, "end": end}
    if page is not None:
        params["page"] = page
    name = services.collection_name()
    if name != DEFAULT:
        params["collection"] = name
    return f"{SOURCE_PAGE}?{urlencode(params)}"


def _overview(store, doc_id: str) -> Overview | None:
    try:
        return document_overview(store, doc_id)
    except RagError:  # deleted meanwhile, or unreadable
        return None


def place(label: str, name: str) -> str:
    """Where a sentence is within its document: its locator label without the document's name (``"Install >
    Linux"``, ``"p. 5"``); ``"the beginning"`` for text before the first heading."""
    if label.startswith(name):
        label = label[len(name):].lstrip(" ,>")
    return label or "the beginning"


def what_it_is(doc) -> str:
    """``"PDF, 13 pages"``, ``"Word"``, ``"Markdown"``: a document's kind and length in plain words."""
    pages = f", {doc.pages} page{'s' if doc.pages != 1 else ''}" if doc.pages else ""
    return f"{kind_label(doc.media_type)}{pages}"


def show(store, doc, *, heading: bool = True) -> None:
    """One document's overview: its sections (with pages for a PDF) and its summary sentences, each quoted
    verbatim with a link to its place."""
    with st.spinner("Reading what this document holds…"):
        ov = _overview(store, doc.id)
    if ov is None:
        st.caption("No overview: the document cannot be read right now.")
        return
    if heading:
        st.markdown(f"**{md_escape(doc.label)}** · {md_escape(what_it_is(doc))}")
    if ov.sections:
        parts = [md_escape(s.title) + (f" (p. {s.page})" if s.page is not None and doc.pages else "")
                 for s in ov.sections]
        st.markdown("**Sections:** " + " · ".join(parts))
    if ov.summary:
        st.markdown("**In its own words** (sentences picked from the document, each with where it is):")
        st.markdown("\n".join(f"- “{md_escape(' '.join(s.text.split()))}” — "
                              f"[{md_escape(place(s.label, doc.label))} ↗]({source_link(doc.id, s.start, s.end, s.page)})"
                              for s in ov.summary))
    elif not ov.sections:
        st.caption("This document has no sections and no sentence that reads well alone (a table, a list, "
                   "a scan of a form, ...): ask about it to see its passages.")


def documents_panel(store, docs: Sequence, *, expanded: bool) -> None:
    """The chat's "What's in your documents": one line per document (its kind and its first summary sentence),
    and the whole overview of the one picked."""
    with st.expander(f"What's in your documents ({len(docs)})", expanded=expanded, icon=":material/menu_book:"):
        with st.spinner("Reading what your documents hold…"):
            lines = []
            for d in docs[:LISTED]:
                ov = _overview(store, d.id)
                lead = f": “{md_escape(' '.join(ov.summary[0].text.split()))}”" if ov and ov.summary else ""
                lines.append(f"- **{md_escape(d.label)}** ({md_escape(what_it_is(d))}){lead}")
        st.markdown("\n".join(lines))
        if len(docs) > LISTED:
            st.caption(f"… and {len(docs) - LISTED} more: pick one below.")
        by_id = {d.id: d for d in docs}
        pick = st.selectbox("Read the overview of", list(by_id), key="overview_pick",
                            format_func=lambda i: by_id[i].label)
        show(store, by_id[pick], heading=False)


@st.cache_data(show_spinner=False, max_entries=32)
def _suggested(_store, _settings: Settings, path: str, generation: int, knobs: tuple,
               scope: tuple[str, ...] | None) -> list[tuple[str, str]]:
    picked, _ = suggested_questions(_store, _settings, doc_ids=list(scope) if scope else None)
    return [(s.question, s.document_id) for s in picked]


def suggestions(store, settings: Settings, scope: Sequence[str] | None) -> None:
    """"Try asking": questions the documents cover (each passed the gate at ``settings``, within ``scope``, and its
    key passage restated would be supported: :func:`rag.answer.suggest.supported_if_restated`; the model's own
    answer can still be weaker, so the label promises coverage, not an answer); a click asks it."""
    knobs = (settings.threshold, settings.max_sources, settings.min_score, settings.gate)
    with st.spinner("Finding questions your documents cover…"):
        try:
            picked = _suggested(store, settings, str(store.path), store.index_cache.generation(), knobs,
                                tuple(scope) if scope else None)
        except RagError:
            picked = []
    if not picked:
        return
    st.markdown("**Try asking** (your documents cover these):")
    for i, (question, _) in enumerate(picked):
        if st.button(question, key=f"suggest-{i}", icon=":material/lightbulb:"):
            st.session_state.pending_question = (question, "")  # asked further down this same run
