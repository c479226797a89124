"""The chat page's widgets: one turn (question, streamed answer, sources), the refusal, the source dialog, the chart.

Pages hold no retrieval logic: :class:`rag.answer.conversation.Conversation` takes the turn (follow-up,
search and gate, citations, the checked answer's stream, saving); this module only renders it.
Everything user-supplied (question, file names, quotes, the model's words) is
shown through :mod:`ui.format`'s escaping or as plain data (dataframes).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from rag.answer.asked_with import asked_with_line, changed_knobs, default_knobs, gate_knobs
from rag.answer.conversation import INTERRUPTED, Candidate, Conversation, TurnStream  # noqa: F401  (re-exported)
from rag.answer.followup import Rewrite
from rag.answer.gate import GateKnobs, GateResult
from rag.answer.gate.gates import regate_with
from rag.answer.history import OFF_KEY_LINE, Turn  # noqa: F401  (Turn re-exported: the pages render it)
from rag.answer.record import Answer, AnswerFrom
from rag.answer.tables import as_table, markdown_table
from rag.answer.translate import searched_as_line
from rag.answer.waits import FIRST_WORDS, Wait
from rag.collections import DEFAULT
from rag.errors import RagError
from rag.settings import Settings
from rag.types import AnswerVerdict, Verdict
from ui import services, viewer
from ui.format import (
    VERDICT_STYLE,
    answer_markdown,
    answer_notes,
    blockquote,
    citation_url,
    copy_button_html,
    copy_text,
    distance_label,
    is_pdf,
    key_passage_markdown,
    md_escape,
    nearest_note,
    pdf_url,
    removed_markdown,
    verdict_markdown,
)
from ui.plain import answered_from, mentions_text, names_phrase, refusal_text, searched_text

#: The chat's avatars: neutral icons (issue 29: Streamlit's default ones are red and orange, and red is for
#: what failed).
USER_AVATAR = ":material/person:"
ASSISTANT_AVATAR = ":material/menu_book:"


def conversation(cfg: Settings) -> Conversation:
    """This session's chat over the collection's store, with the sidebar's knobs in ``cfg``; a saved chat deleted
    meanwhile is started afresh."""
    store = services.store()
    chat_id = st.session_state.get("chat_id")
    conv = Conversation(store, cfg, chat_id if chat_id is not None and store.chats.get(chat_id) else None)
    if st.session_state.get("turns"):  # the page's turns, a cut-off one among them, even before it is saved
        conv.previous = [t.standalone for t in st.session_state.turns]
    return conv


def show(stream: TurnStream, conv: Conversation, generate: bool = True) -> Turn:
    """Stream one turn into the current container (the key passage first); returns the finished :class:`Turn`.

    A refusal says so in plain words and never loads or calls the model; so does a turn with ``generate``
    false (no answer model installed: the sidebar promises the passages that answer, without a written answer,
    and the chat said "model file ... is missing" in red instead). The conversation saves the turn; when
    Streamlit stops the run (a new question sent, the page left while the model writes) the turn is kept with a
    note, on the page and in the saved chat, instead of vanishing.
    """
    if stream.gate.refused:
        stream.run()
        turn = stream.end()
        render_turn_body(turn, key="live")
        return turn
    if not generate:
        stream.without_generation()
        turn = stream.end()
        render_turn_body(turn, key="live")
        return turn
    cites = stream.cites
    # the key passage first (issue 14): verbatim cited evidence on screen before the model is even loaded
    early = st.empty()
    early.markdown(key_passage_markdown(stream.key_passage, cites, cited_pages(cites), _collection()))
    status = st.empty()
    status.caption(md_escape(waiting_line(FIRST_WORDS.wait(stream.settings.model_file))))
    placeholder = st.empty()
    try:
        with st.spinner("Writing the answer…", show_time=True):
            placeholder.write_stream(_escaped(stream, status))
    except RagError:
        turn = stream.end()
        status.empty()
        placeholder.error(md_escape(turn.error or ""))
        return turn
    except BaseException:  # cut off: saved with the note; the page keeps it as its provisional turn
        stream.interrupt()
        stream.end()
        raise
    early.empty()
    status.empty()
    placeholder.empty()
    turn = stream.end()
    if turn.answer is not None:
        FIRST_WORDS.add(turn.answer.model, turn.answer.first_words_ms)  # the next wait is told from it
    render_turn_body(turn, key="live")
    return turn


def waiting_line(wait: Wait | None) -> str:
    """Under the key passage while the model starts: how long the first word took here lately (issue 42: "about
    3.0 s" was promised and 7.6-24 s came), or that this is the first answer measured here."""
    if wait is None:
        return "The model is reading the sources; the first answer here shows how long this machine takes."
    return f"The model is reading the sources: {wait.plain()}."


def writing_line(words: int, elapsed_s: float) -> str:
    """While the answer streams: ``"Writing the answer: 42 words so far · 12 s · each sentence is checked against
    its source when the answer ends"`` (issue 39: the streamed words are a draft, marked as such, until checked)."""
    return (f"Writing the answer: {words} word{'s' if words != 1 else ''} so far · {elapsed_s:.0f} s · each sentence "
            "is checked against its source when the answer ends")


def provisional_turn(question: str, rw: Rewrite, scope: list[str] | None) -> None:
    """Put in this session's conversation, before the model writes, the turn as it stands if the run is cut off
    (:data:`rag.answer.conversation.INTERRUPTED`, no answer: what the saved chat then keeps), for
    :func:`keep_turn` to replace. With Streamlit's fast reruns a question sent while an answer streams starts the
    next run before the cut-off one has ended: the turn it added then came too late, so the page lost it and the
    next question was made standalone without it (found trying the app, 2026-12-06)."""
    turn = Turn(question, rw.standalone, error=INTERRUPTED, method=rw.method, scope=tuple(scope) if scope else None)
    st.session_state.turns.append(turn)
    st.session_state.provisional = turn


def keep_turn(turn: Turn, conv: Conversation) -> None:
    """Put ``turn`` in this session's conversation, in place of its provisional turn (:func:`provisional_turn`);
    the saved chat it went to becomes the session's."""
    turns = st.session_state.turns
    if turns and st.session_state.get("provisional") is turns[-1]:
        turns[-1] = turn
    else:
        turns.append(turn)
    st.session_state.provisional = None
    st.session_state.chat_id = conv.chat_id


def open_chat(chat_id: int) -> None:
    """Make saved chat ``chat_id`` the conversation: its turns, answers and sources as they were saved."""
    store = services.store()
    st.session_state.turns = [Turn.from_json(row.record, row.created_at) for row in store.chats.turns(chat_id)]
    st.session_state.chat_id = chat_id


def scope_names(scope: tuple[str, ...] | list[str] | None) -> list[str] | None:
    """The names of the documents a question was asked within (``None``: all); an id no longer stored shows as
    its first 8 characters."""
    if scope is None:
        return None
    labels = {d.id: d.label for d in services.store().documents()}
    return [labels.get(i, i[:8]) for i in scope]


def render_question(turn: Turn) -> None:
    """The user's side of a turn: the question; the question searched when it was read as a follow-up; the
    documents it was asked within, by name (issue 29)."""
    st.markdown(md_escape(turn.question))
    if turn.rewritten:
        st.caption("Read as a follow-up, searched as: " + md_escape(turn.standalone))
    if turn.scope is not None:
        st.caption("Asked within " + md_escape(names_phrase(scope_names(turn.scope) or [])))


def _collection() -> str | None:
    """This session's collection for citation links (``None`` for the default one: links stay as they were)."""
    name = services.collection_name()
    return None if name == DEFAULT else name


#: Seconds between two updates of the "Writing the answer" line (each is a message to the browser).
STATUS_EVERY_S = 0.5


def _escaped(stream: TurnStream, status: Any = None) -> Iterator[str]:
    """The answer stream, escaped piece by piece (escaping is per character, so pieces can be split anywhere);
    ``status`` (a placeholder) shows the words so far and the time since the question, every
    :data:`STATUS_EVERY_S`."""
    t0 = time.monotonic()
    text, shown = "", 0.0
    for piece in stream:
        text += piece
        now = time.monotonic()
        if status is not None and now - shown >= STATUS_EVERY_S:
            status.caption(writing_line(len(text.split()), now - t0))
            shown = now
        yield md_escape(piece)


def cited_pages(cites: list[Any]) -> dict[int, int]:
    """``{n: page}`` for the PDF citations: the 1-based physical page holding the cited sentence, which
    :func:`rag.answer.cite.citations` already put in ``page`` (issue 13)."""
    return {c.index: c.page for c in cites if is_pdf(c)}


def anchor(key: str) -> str:
    """The id prefix of a turn's source rows: ``[n]`` in its answer links to ``#<anchor>-<n>`` (same page)."""
    return f"src-{key}"


def render_turn_body(turn: Turn, key: str) -> None:
    """The assistant's side of a turn: a refusal, an error, or the answer and its sources, in plain words; the
    figures in its "Details"."""
    if turn.error:
        if turn.error == INTERRUPTED:
            st.warning(md_escape(turn.error))  # stopped by the user, not a failure
        else:
            st.error(md_escape(turn.error))
        return
    a = turn.answer
    if a is None:
        return
    scope = scope_names(turn.scope)
    render_search_note(a.gate)
    render_asked_with(a)
    if a.refused:
        render_refusal(a, scope)
        render_details(turn, key)
        return
    pages = cited_pages(a.citations)
    render_verdict(a, scope)
    render_answer(a, pages, key)
    notes = answer_notes(a, with_model=False)
    if scope:
        notes.insert(0, answered_from(scope))
    if notes:
        st.caption(" · ".join(notes))
    # one click copies the answer and its sources (issue 42); its only script is the button's own handler
    st.html(COPY_CSS + copy_button_html(copy_text(a), key), unsafe_allow_javascript=True)
    render_sources(a.citations, key, pages, a.read_spans)
    render_details(turn, key)


def render_asked_with(a: Answer) -> None:
    """"Asked with non-default settings: ..." above a turn the gate decided with other knobs than the defaults
    (issue 42: an answer at threshold 1.5 and cut 0 read like any other); nothing otherwise."""
    line = asked_with_line(changed_knobs(gate_knobs(a.gate), default_knobs(services.settings())))
    if line:
        st.caption(":material/tune: " + md_escape(line))


def render_answer(a: Answer, pages: dict[int, int], key: str = "live") -> None:
    """The checked answer (issue 14), each text once (issue 42: the key passage, the answer and the source quote
    said the same three times): the model's claims that passed the claim check, each linked to the source that
    supports it; or, when none passed, a plain note and the key passage standing as the answer; without a model
    answer, the key passage. When the claims that passed are each true of a source but none rests on
    the key passage (``off_key``, "partly supported"), the key passage is shown beside them, so the user can judge
    whether they answer the question. The sentences the check left out stay where the model wrote them, struck through,
    with why (issue 39: a user who read them while they streamed sees what became of them); when none passed they are
    listed, with why, in an expander under the key passage. Each ``[n]``
    previews its source on hover and focus and jumps to it below (same page, issue 29), where it opens in the
    app's viewer."""
    here = anchor(key)
    kp = key_passage_markdown(a.key_passage, a.citations, pages, _collection(), anchor=here)
    j = a.judged
    if j.answer_from == AnswerFrom.KEY_PASSAGE:
        if j.note and j.verdict != AnswerVerdict.PARTLY_SUPPORTED:  # partly supported: its verdict says the same
            st.info(md_escape(j.note))  # (no note without a model: an empty box was drawn)
        st.markdown(kp)
    elif j.answer_from == AnswerFrom.MODEL:
        # every sentence the model wrote, in its place: the ones the check left out struck through, with why
        shown = "**Answer**\n\n" + answer_markdown(a.text or "", a.sentences or j.shown, a.citations, pages,
                                                    _collection(), anchor=here, left_out=j.removed)
        if j.off_key and kp:  # issue 39/42: true of the sources cited, none on the key passage: both, side by side
            left, right = st.columns(2, gap="medium")
            left.markdown(shown)
            with right.container(border=True):
                st.markdown(kp)
                st.caption(md_escape(OFF_KEY_LINE))
        else:
            st.markdown(shown)
    else:
        if kp:
            st.markdown(kp)
        if a.generated:
            st.warning("The model wrote no answer the sources support: read the passages below.")
    removed = j.removed
    if removed and j.answer_from != AnswerFrom.MODEL:  # a model answer shows them in place, struck through
        with st.expander(f"The model's answer, left out by the claim check ({len(removed)} "
                         f"sentence{'s' if len(removed) != 1 else ''})"):
            st.markdown(removed_markdown(removed))


def render_verdict(a: Answer, scope: list[str] | None = None) -> None:
    """The answer's one verdict (issue 24) above it: supported (green), partly supported or may not answer
    (orange), with why in plain words; when the gate says the documents only mention the subject, that too,
    in plain words and naming the documents asked within (issue 29; the gate's line is in "Details"). The same
    verdict as ``ask`` prints and the chat export writes."""
    box, icon = VERDICT_STYLE[str(a.judged.verdict)]
    if a.notice and a.judged.verdict == AnswerVerdict.MAY_NOT_ANSWER:
        # the gate's "mention" is the verdict's whole reason: said once, in plain words (it was said twice)
        text = f"**{md_escape(a.judged.label)}** · " + md_escape(mentions_text(a, scope))
    else:
        text = verdict_markdown(a.judged)
        if a.notice:
            text += "  \n" + md_escape(mentions_text(a, scope))
    getattr(st, box)(text, icon=icon)
    if a.judged.verdict == AnswerVerdict.MAY_NOT_ANSWER and a.advice is not None:  # issue 39: searched, what to try
        st.caption(md_escape(" ".join(a.advice.lines())))


def render_search_note(gate: GateResult | None) -> None:
    """For a question translated into the documents' language (issue 27): "Searched as (translated from German):
    ..." and that the answer is in the documents' language, above the answer, since it changes how to read it. A
    follow-up's or a plain rewrite's "Searched as" is in "Details" (issue 29); nothing otherwise."""
    translated = searched_as_line(gate) if gate is not None else None
    if translated:
        st.caption(md_escape(translated))


def render_refusal(a: Answer, scope: list[str] | None = None) -> None:
    """A refusal in plain words (neutral, not red: nothing failed) and what to do next; the model was not
    called. The gate's line, its evidence and the nearest distances are in "Details"."""
    what, nxt = refusal_text(a, scope)
    box, icon = VERDICT_STYLE["refused"]
    getattr(st, box)(f"**{md_escape(a.judged.label)}** · {md_escape(what)}", icon=icon)
    searched = searched_text(a)
    if searched:
        st.caption(md_escape(searched))
    st.caption(md_escape(nxt))


def render_details(turn: Turn, key: str) -> None:
    """The figures behind a turn, folded: how it was searched, the gate's verdict and evidence, each source's
    or candidate's cosine distance, the model and its time to the first word."""
    a = turn.answer
    if a is None:
        return
    with st.expander("Details", icon=":material/info:"):
        lines = []
        plan = a.gate.plan if a.gate is not None else None
        if plan is not None and plan.rewritten:
            lines.append("Searched as: " + md_escape(plan.rewritten))
        if a.refused:
            lines.append("The gate: " + md_escape(a.refusal or "NO ANSWER") + " (the model was not called)")
        elif a.notice:
            lines.append("The gate: " + md_escape(a.notice))
        if a.why:
            lines.append("The gate's evidence: " + md_escape(a.why))
        if a.judged.confidence is not None:  # issue 39: the calibrated probability behind the verdict
            lines.append(f"Chance the shown answer is right (calibrated on the dev corpora): {a.judged.confidence:.0%}")
        lines += [md_escape(n) for n in answer_notes(a) if n.startswith(("model ", "first token"))]
        if a.read_spans:
            lines.append("In bold in the quotes: the sentences the model read (the ones closest to the question); "
                         "sources without bold were read whole.")
        for line in lines:
            st.caption(line)
        if a.refused:
            nearest = sorted(turn.candidates, key=lambda c: c.cosine_distance)[:5]
            if nearest:
                st.caption(f"Nearest cosine distances seen (threshold {a.threshold:g}):")
                st.dataframe(pd.DataFrame({"cosine distance": [round(c.cosine_distance, 3) for c in nearest],
                                           "source": [c.label for c in nearest]}), hide_index=True, width="stretch")
            else:
                st.caption("The documents asked have no indexed passage.")
        elif a.citations:
            st.dataframe(pd.DataFrame({"n": [c.index for c in a.citations],
                                       "source": [c.locator_label for c in a.citations],
                                       "cosine distance": [distance_label(c.cosine_distance) for c in a.citations],
                                       "fused rank": [c.fused_rank for c in a.citations]}),
                         hide_index=True, width="stretch")
            note = nearest_note(a.gate.nearest_distance if a.gate is not None else None, a.citations)
            if note:
                st.caption(md_escape(note))


def render_sources(cites: list[Any], key: str, pages: dict[int, int] | None = None,
                   read: dict[int, tuple[tuple[int, int], ...]] | None = None) -> None:
    """Below an answer, per source: ``[n]`` and where it is, an "Open" button that shows the cited place in the
    app's viewer (issue 29: each citation opened a new tab that took 5-10 s), the same place in a new tab
    (and, for a PDF, the browser's own viewer at the page) as secondary links, and the verbatim quote, folded
    (issue 42: with the key passage and the answer, each text was read three times; on a phone each answer
    was four full quotes long).

    ``read``: per source number, the ranges of its quote the model read (set in bold); others were read whole.
    Each row carries the anchor ``#<anchor(key)>-<n>`` the answer's ``[n]`` jumps to.
    """
    if not cites:
        return
    pages = pages or {}
    read = read or {}
    st.markdown("**Sources**")
    st.html(PREVIEW_CSS)
    for c in cites:
        st.html(f'<span id="{anchor(key)}-{int(c.index)}"></span>')
        left, right = st.columns([0.8, 0.2], vertical_alignment="center")
        page = pages.get(c.index)
        original = pdf_url(c, services.publish_pdf(c.document_id) if is_pdf(c) else None, page)
        secondary = f" · [PDF at page {page or c.page} ↗]({original})" if original else ""
        left.markdown(f"**\\[{c.index}\\] {md_escape(c.locator_label)}** · "
                      f"[new tab ↗]({citation_url(c, page, _collection())}){secondary}")
        if right.button(f"Open [{c.index}]", key=f"preview-{key}-{c.index}", icon=":material/visibility:",
                        help="Show the cited place here, in the app's viewer"):
            show_source(c, page)
        with st.expander(f"Quote [{c.index}]", icon=":material/format_quote:"):  # folded: said once above
            table = as_table(c.quote, 0, len(c.quote), c.columns, c.first_column)  # a table's rows: under their names
            st.markdown(markdown_table(*table) if table else blockquote(c.quote, read.get(c.index, ())))
        if c.also_in:
            st.caption("The same text is also in " + md_escape(", ".join(c.also_in))
                       + " (identical copies are cited once).")


#: The copy button's look: a small secondary button, light or dark as the system.
COPY_CSS = """<style>
.rag-copy { font: inherit; font-size: 0.85rem; padding: 0.15rem 0.7rem; border-radius: 0.5rem; cursor: pointer;
  border: 1px solid rgba(128, 128, 128, 0.45); background: transparent; color: inherit; }
.rag-copy:hover { border-color: #1c64b4; color: #1c64b4; }
.rag-copy:focus-visible { outline: 2px solid #1c64b4; outline-offset: 2px; }
</style>"""

#: The hover and keyboard-focus preview of a ``[n]`` in an answer (issue 42): the link's title (its source's
#: locator and quote, :func:`ui.format.preview_text`) drawn as a card under it, light or dark as the system. No
#: script: CSS only, so nothing a document says can run.
PREVIEW_CSS = """<style>
[data-testid="stChatMessage"] a[href^="#src-"][title] { position: relative; }
[data-testid="stChatMessage"] a[href^="#src-"][title]:hover::after,
[data-testid="stChatMessage"] a[href^="#src-"][title]:focus-visible::after {
  content: attr(title); position: absolute; left: 0; top: 1.6em; z-index: 1000; width: min(26rem, 80vw);
  white-space: pre-line; padding: 0.6rem 0.8rem; border-radius: 0.5rem; font-size: 0.85rem; line-height: 1.35;
  font-weight: normal; color: #31333f; background: #ffffff;
  border: 1px solid rgba(128, 128, 128, 0.35); box-shadow: 0 4px 14px rgba(0, 0, 0, 0.18); pointer-events: none;
}
@media (prefers-color-scheme: dark) {
  [data-testid="stChatMessage"] a[href^="#src-"][title]:hover::after,
  [data-testid="stChatMessage"] a[href^="#src-"][title]:focus-visible::after { color: #fafafa; background: #262730; }
}
</style>"""


@st.dialog("Cited source", width="large")
def show_source(c: Any, page: int | None = None) -> None:
    """In-app view of a citation (issue 17): the same viewer as the Source page (:func:`ui.viewer.show`)."""
    viewer.show(viewer.Target.from_citation(c, page), key="dialog")


#: Bar colours of :func:`distance_chart`, by the gate's verdict on each candidate.
VERDICTS = {"source": "#2b8a3e", "under threshold, over max sources": "#8ce99a", "over threshold": "#adb5bd"}


def gate_at(turn: Turn, threshold: float, max_sources: int, min_score: float | None = None,
            mention_score: float | None = None) -> GateResult:
    """The gate re-applied to ``turn``'s candidates at other knob values: no new search, no embedding.

    The gate that decided (:func:`rag.answer.gate.gates.regate_with`) keeps the score it computed and compares it with
    both cuts (``None``: the ones it decided with). Only for a turn asked in this session (``turn.gate`` set; a
    reopened one has no candidates' hits).
    """
    assert turn.gate is not None, "a reopened turn has no gate to re-apply"
    return regate_with(turn.gate, GateKnobs(threshold, max_sources, min_score, mention_score))


def distance_chart(candidates: list[Candidate], threshold: float, source_ranks: set[int] | None = None) -> alt.Chart:
    """Candidate cosine distances by fused rank, coloured by the gate's verdict, with the threshold as a rule.

    ``source_ranks``: fused ranks the gate keeps as sources (default: every candidate under the threshold).
    """
    def verdict(c: Candidate) -> str:
        if c.cosine_distance >= threshold:
            return "over threshold"
        kept = source_ranks is None or c.rank in source_ranks
        return "source" if kept else "under threshold, over max sources"

    df = pd.DataFrame({
        "rank": [c.rank for c in candidates],
        "cosine distance": [c.cosine_distance for c in candidates],
        "source": [c.label for c in candidates],
        "gate": [verdict(c) for c in candidates],
    })
    top = max([threshold, *df["cosine distance"]]) if len(df) else threshold
    y = alt.Y("cosine distance:Q", title="cosine distance", scale=alt.Scale(domain=[0, math.ceil(top * 10) / 10 + 0.05]))
    bars = alt.Chart(df).mark_bar().encode(
        x=alt.X("rank:O", title="fused rank", axis=alt.Axis(labelAngle=0, values=list(range(0, 1001, 5)))),
        y=y,
        color=alt.Color("gate:N", legend=None, scale=alt.Scale(domain=list(VERDICTS), range=list(VERDICTS.values()))),
        tooltip=["rank", alt.Tooltip("cosine distance:Q", format=".3f"), "source", "gate"],
    )
    rule = alt.Chart(pd.DataFrame({"threshold": [threshold]})).mark_rule(
        color="#495057", strokeDash=[4, 3], size=2).encode(y=alt.Y("threshold:Q", title="cosine distance"))
    return alt.layer(bars, rule)


def at_values(g: GateResult) -> str:
    """The values a what-if was computed at, as the sliders show them: ``"At threshold 0.675, answerability cut
    0.62, mention cut 0.27"`` (the cuts only for a scored gate; the mention cut only when it has a band)."""
    parts = [f"threshold {g.threshold:.3f}"]
    if g.score is not None and g.min_score is not None:
        parts.append(f"answerability cut {g.min_score:.2f}")
        if g.mention_score is not None:
            parts.append(f"mention cut {g.mention_score:.2f}")
    return "At " + ", ".join(parts)


def what_if(g: GateResult) -> str:
    """What the gate says at the values of ``g`` (a :class:`rag.answer.gate.GateResult` from :func:`gate_at`), as
    Markdown naming those values (issue 42: each cut the text names is a slider, and the text says which values
    it was computed at)."""
    why = f"\n\n{md_escape(g.why)}" if g.why else ""
    lang = g.language
    if lang is not None and lang.differs and g.verdict != Verdict.ANSWERED:
        why += (f"\n\nThe question seems to be in {md_escape(str(lang.question))}, the documents in "
                f"{md_escape(', '.join(lang.documents))}.")
    at = at_values(g)
    if g.refused:
        if g.score is not None and g.nearest_distance is not None and g.nearest_distance < g.threshold:
            if g.mention_score is not None and g.mention_score < (g.min_score or 0.0):
                cut = f"under the mention cut {g.mention_score:.2f}"
            else:
                cut = f"under the answerability cut {g.min_score:.2f}"
            return f"{at} this question is **refused**: answerability score {g.score:.2f} {cut}.{why}"
        return f"{at} this question is **refused**: no chunk under the threshold.{why}"
    if g.verdict == Verdict.MENTIONS:
        return (f"{at} the documents **mention this but may not answer it**: answerability score "
                f"{g.score:.2f} under the answerability cut {g.min_score:.2f}, {len(g.sources)} source(s) shown with "
                f"that warning.{why}")
    return f"{at} this question is **answered** from {len(g.sources)} source(s).{why}"
