"""A chat's turns as records (saved with the store, :mod:`rag.store.chats`) and as Markdown (issue 16).

:class:`Turn` is one question and its answer; :meth:`Turn.to_json` is the JSON the store keeps
(:class:`TurnDict`: the question as typed and as searched, the answer or refusal, every citation with its
locator and quote, the per-sentence verdicts) and :meth:`Turn.from_json` rebuilds it, answer included,
so a reopened chat shows its sources as they were, even after the documents changed; :func:`chat_markdown` writes a chat as Markdown with its citations
and locators (the app's download button, ``rag chats export``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from rag.answer.asked_with import asked_with_line, changed_knobs, gate_knobs
from rag.answer.check.attribute import SentenceAttribution
from rag.answer.check.shown import code_block, code_fence, join_shown
from rag.answer.cite import Citation
from rag.answer.gate import GateResult
from rag.answer.record import Answer, AnswerDict
from rag.answer.tables import as_table, markdown_table
from rag.text import markdown_literal as lit
from rag.text import strip_markers

#: The version of the record layout written by :meth:`Turn.to_json`: 3 nests the answer under ``answer``
#: (:meth:`rag.answer.record.Answer.to_json`'s full form); 2 kept the answer's keys beside the turn's, 1 kept its
#: own keys. All three are read.
RECORD_VERSION = 3

#: The mark after a shown sentence whose ``[n]`` the app attached (the model cited no source, or one that does not
#: hold the sentence): plain words, not the claim check's code ``inferred`` (issue 39: "(inferred)" read as a code
#: to first-time users). The chat, the export and the CLI write this one text.
ATTACHED_MARK = "source found by the app"

#: Shown once under an answer whose every claim shown carries a source the app attached (the model cited none
#: that says it): the per-sentence mark on each sentence was noise (two new users' walks, 2026-12-06).
ALL_ATTACHED = "sources found by the app for every sentence: the model named none that says it"


def all_attached(sentences: Sequence[Any], left_out: Iterable[Any] = ()) -> bool:
    """Whether every claim shown (two or more, not among ``left_out``) is one the app attached its source to."""
    dropped = {id(s) for s in left_out}
    claims = [s for s in sentences if id(s) not in dropped and str(getattr(s, "verdict", "")) in ("supported", "inferred")]
    return len(claims) >= 2 and all(s.inferred for s in claims)


@dataclass(frozen=True)
class Candidate:
    """One retrieved chunk the gate saw: fused ``rank`` (1-based), ``cosine_distance``, where it is (``label``)."""

    rank: int
    cosine_distance: float
    label: str


class TurnDict(TypedDict):
    """The JSON of one turn (:meth:`Turn.to_json`): what a saved chat keeps per question (:mod:`rag.store.chats`)
    and what ``rag chats show --json`` prints. ``candidates`` ``[fused rank, cosine distance, label]``;
    ``answer`` ``None`` when the turn ended in an ``error``; ``created_at`` ISO 8601 UTC, when known."""

    version: int
    question: str
    standalone: str
    method: str
    error: str | None
    scope: list[str] | None
    candidates: list[tuple[int, float, str]]
    answer: AnswerDict | None
    created_at: NotRequired[str]


@dataclass(frozen=True)
class Turn:
    """One question and what was answered: the one turn record of the app, the CLI, the saved chats and the export.

    ``question`` as typed, ``standalone`` as searched (equal when not rewritten), ``answer`` (``None`` only when
    ``error`` says why: the model failed, or the turn was interrupted), ``method`` the follow-up rewrite that made
    it standalone (``""``: none), ``scope`` the document ids it was asked within (``None``: all),
    ``candidates`` every chunk the gate saw, labelled, ``created_at`` ISO 8601 (``""`` before it is saved).
    ``gate`` the gate's decision with its hits, for a turn asked in this process only (so the app can re-apply
    the gate at another threshold without searching again); it is not saved.
    """

    question: str
    standalone: str
    answer: Answer | None = None
    error: str | None = None
    method: str = ""
    scope: tuple[str, ...] | None = None
    candidates: tuple[Candidate, ...] = ()
    created_at: str = ""
    gate: GateResult | None = field(default=None, repr=False, compare=False)

    @property
    def rewritten(self) -> bool:
        """The question was searched as another wording (a follow-up made standalone)."""
        return self.standalone != self.question

    def to_json(self) -> TurnDict:
        """The JSON-ready record of this turn (:data:`RECORD_VERSION`; the answer in its full form)."""
        d: TurnDict = {
            "version": RECORD_VERSION, "question": self.question, "standalone": self.standalone,
            "method": self.method, "error": self.error, "scope": list(self.scope) if self.scope is not None else None,
            "candidates": [(int(c.rank), float(c.cosine_distance), str(c.label)) for c in self.candidates],
            "answer": self.answer.to_json(full=True) if self.answer is not None else None,
        }
        if self.created_at:
            d["created_at"] = self.created_at
        return d

    @classmethod
    def from_json(cls, rec: Mapping[str, Any], created_at: str = "") -> Turn:
        """The :class:`Turn` of a stored record, any version (1 and 2 keep the answer's keys beside the turn's;
        :meth:`rag.answer.record.Answer.from_json` reads the answer's own format); ``created_at`` the row's time
        (default the record's own)."""
        standalone = rec.get("standalone") or rec["question"]
        if int(rec.get("version") or 1) >= 3:
            ans = rec.get("answer")
            answer = Answer.from_json({**ans, "query": ans.get("query") or standalone}) if ans else None
        else:
            answer = Answer.from_json({**rec, "query": rec.get("query") or standalone}) if "refused" in rec else None
        scope = rec.get("scope")
        return cls(question=rec["question"], standalone=standalone, answer=answer, error=rec.get("error"),
                   method=rec.get("method") or "", scope=tuple(scope) if scope is not None else None,
                   candidates=tuple(Candidate(int(r), float(d), str(lb)) for r, d, lb in rec.get("candidates") or []),
                   created_at=created_at or rec.get("created_at") or "")


def previous_questions(turns: object) -> list[str]:
    """The questions of a conversation given as JSON (``ask --history FILE``), oldest first, as searched.

    ``turns`` a list whose items are a question string, an object with
    ``question`` (and ``standalone``, preferred when present: what was
    searched), or a chat message ``{"role": "user" | "assistant", "content"}``
    (only the user's count). Raises ``ValueError`` naming the first item that is none of these.
    """
    if not isinstance(turns, list):
        raise ValueError("the history must be a JSON list of turns")
    out = []
    for i, t in enumerate(turns):
        if isinstance(t, str):
            q = t
        elif isinstance(t, dict) and isinstance(t.get("standalone") or t.get("question"), str):
            q = t.get("standalone") or t["question"]
        elif isinstance(t, dict) and "role" in t and isinstance(t.get("content"), str):
            if t["role"] != "user":
                continue
            q = t["content"]
        else:
            raise ValueError(f"history item {i}: not a question, a {{'question': ...}} object or a chat message")
        if q.strip():
            out.append(q.strip())
    return out


# --------------------------------------------------------------------------- Markdown export


def _quote(text: str) -> str:
    """Document text as an inert Markdown quote (issue 26: no raw HTML, no link, no autolinked URL)."""
    return "\n".join("> " + lit(line) if line.strip() else ">" for line in text.strip().split("\n"))


def _passage(kp: Any, cites: Sequence[Citation]) -> str:
    """The key passage as the export quotes it: a table's rows under their column names, else an inert quote."""
    c = next((c for c in cites if c.index == kp.index), None)
    a, b = kp.sentences[0].start, kp.sentences[-1].end
    table = as_table(c.quote, a, b, c.columns, c.first_column) if c is not None and kp.body in ("", c.quote[a:b]) else None
    return markdown_table(*table) if table else _quote(kp.body or kp.text)


def _locator(c: Citation) -> str:
    fragment = c.fragment.replace("`", "") if c.fragment else ""
    return f"{lit(c.locator_label)} `{fragment}`" if fragment else lit(c.locator_label)


def verdict_markdown(a: Answer) -> str:
    """The answer's verdict as the export writes it (issue 24): ``**Verdict: Partly supported.** <reason>.``"""
    v = a.judged
    return f"**Verdict: {v.label}.** {lit(v.reason[:1].upper() + v.reason[1:])}."


def shown_markdown(a: Answer) -> str:
    """The checked answer as the chat shows it: each sentence with its ``[n]``, and ``*(source found by the app)*``
    (:data:`ATTACHED_MARK`) after one whose source the server attached (the model cited none, or a source that
    does not hold it); the model's sentences the check left out stay in their place, struck through, with why."""
    j = a.judged
    if not j.shown:
        return lit(j.text or "", keep_markers=True)
    dropped = {id(s) for s in j.removed}
    said = a.sentences or j.shown
    once = all_attached(said, j.removed)
    parts = [_left_out(s) if id(s) in dropped else _shown_sentence(s, mark=not once) for s in said]
    return join_shown([x for x in parts if x]) + (f"\n\n*({ALL_ATTACHED})*" if once else "")


def _shown_sentence(s: SentenceAttribution, mark: bool = True) -> str:
    """A shown sentence as the export writes it: its words literal with its ``[n]`` (a fenced code block as a code
    block, :func:`rag.answer.check.attribute.code_block`), ``*(source found by the app)*`` after an attached one."""
    note = f" *({ATTACHED_MARK})*" if mark and s.inferred and s.shown_cites else ""
    block = code_block(s.text)
    if block is not None:
        cites = "".join(f"[{n}]" for n in s.shown_cites)
        return code_fence(*block) + (f"\n{cites}{note}" if cites else "")
    return lit(s.shown(), keep_markers=True) + note


def _left_out(s: SentenceAttribution) -> str:
    """A sentence the claim check left out, where the model wrote it (issue 39, as the chat shows it): struck
    through, without its ``[n]``, and why."""
    body = lit(" ".join(strip_markers(s.text).split()))  # a code block's lines too: one struck line
    if not any(ch.isalnum() for ch in body):  # a bare "[1] [2]": nothing to flag
        return ""
    return f"~~{body}~~ *(left out: {lit(s.explained)})*"


def _within(scope: Sequence[str], names: Mapping[str, str] | None) -> str:
    """The documents a turn was asked within, by name when ``names`` (id -> name) knows them (issue 29: the screen
    names them), else their count."""
    if names:
        got = [names.get(i, i[:8]) for i in scope]
        listed = got[0] if len(got) == 1 else ", ".join(got[:-1]) + " and " + got[-1] if len(got) <= 3 else ""
        if listed:
            return lit(listed)
    return f"{len(scope)} chosen document(s)"


#: Said with the key passage shown beside claims that each pass against a source (the one they cite, or the one the
#: app found for them) but none rests on it (:attr:`rag.answer.check.judged.Judged.off_key`, issue 39; the chat and
#: the export, issue 42).
OFF_KEY_LINE = ("Each of the answer's claims is true of a source, but none rests on this passage, the one that best "
                "matches the question: compare them to judge whether they answer it.")

#: What :data:`ATTACHED_MARK` means, written once under an answer that carries it (the chat's caption says the same).
INFERRED_NOTE = (f"*({ATTACHED_MARK}): the model named no source for that sentence, or one that does not say it; the "
                 "app found the source that holds its words.*")


def turn_markdown(n: int, t: Turn, names: Mapping[str, str] | None = None,
                  defaults: Mapping[str, float | None] | None = None) -> str:
    """One turn as Markdown: the question (and the question searched), the answer's verdict (issue 24), the
    gate's "may not answer" notice, the key passage and the checked answer with its "(source found by the app)"
    marks (issue 14; since issue 39 what the claim check left out stands in place, struck through, with why) or the
    refusal, then its sources. With ``defaults``
    (:func:`rag.answer.asked_with.default_knobs`), a turn decided at other knobs says so (issue 42)."""
    out = [f"## {n}. {lit(t.question)}"]
    if t.rewritten:
        out.append(f"*Standalone question:* {lit(t.standalone)}")
    if t.scope is not None:
        out.append(f"*Asked within {_within(t.scope, names)}.*")
    a = t.answer
    asked = asked_with_line(changed_knobs(gate_knobs(a.gate), defaults)) if a is not None and defaults else ""
    if asked:
        out.append(f"*{lit(asked)}*")
    if t.error:
        out.append(f"**Error:** {lit(t.error)}")
    elif a is None:
        out.append("(no answer)")
    elif a.refused:
        out.append(verdict_markdown(a))
        out.append(f"**{lit(a.refusal)}**" + (f"\n\nWhy: {lit(a.why)}" if a.why else ""))
        out += _advice_markdown(a)
    else:
        out += _answered_markdown(a)
        out += _advice_markdown(a)
    if a is not None and a.citations:
        out.append(_sources_markdown(a))
    return "\n\n".join(out)


def _advice_markdown(a: Answer) -> list[str]:
    """A refusal's or "may not answer"'s advice (issue 39, Deliver 3: what was searched, the closest passages,
    the user's setting that decided, what to try), one line each; nothing for the other verdicts."""
    advice = a.advice
    return ["\n".join(f"- {lit(line)}" for line in advice.lines())] if advice is not None else []


def _answered_markdown(a: Answer) -> list[str]:
    """The blocks of an answer the gate passed: verdict, notice, key passage, the checked answer or the note,
    and what the claim check left out."""
    out = [verdict_markdown(a)]
    if a.notice:
        out.append(f"*{lit(a.notice)}*" + (f" (why: {lit(a.why)})" if a.why else ""))
    kp = a.key_passage
    j = a.judged
    beside = j.off_key and bool(j.text) and not j.note  # issue 42: shown after the claims, to compare them with
    passage = (f"**Key passage** [{kp.index}] {lit(kp.sentences[0].locator_label)}\n\n{_passage(kp, a.citations)}"
               if kp is not None and kp.sentences else "")
    if passage and not beside:
        out.append(passage)
    if j.note:
        out.append(f"*{lit(j.note)}*")
    elif j.text:
        out.append(shown_markdown(a))
        if any(s.inferred and s.shown_cites for s in j.shown) and not all_attached(a.sentences or j.shown, j.removed):
            out.append(INFERRED_NOTE)
        if passage and beside:
            out.append(f"{passage}\n\n*{OFF_KEY_LINE}*")
    elif not a.generated:
        out.append("(no text generated)")
    if j.removed and not (j.text and j.shown):  # a model answer flags them in place (shown_markdown)
        out.append(f"*Left out by the claim check ({len(j.removed)}):*\n\n"
                   + "\n".join(f"- {lit(' '.join(strip_markers(s.text).split())) or '…'} ({lit(s.explained)})"
                               for s in j.removed))  # no [n]: as the chat lists them (a left-out [n] reads as cited)
    return out


def _sources_markdown(a: Answer) -> str:
    """The answer's numbered sources with locator, fragment, distance and quote; "(not cited)" on the ones the
    shown answer does not cite."""
    cited = set(a.judged.cited)
    lines = ["**Sources**", ""]
    for c in a.citations:
        mark = "" if c.index in cited or not cited else " (not cited)"
        table = as_table(c.quote, 0, len(c.quote), c.columns, c.first_column)  # a table's rows under their names
        lines += [f"[{c.index}] {_locator(c)} · cosine distance {c.cosine_distance:.3f}{mark}", "",
                  markdown_table(*table) if table else _quote(c.quote), ""]
    return "\n".join(lines).rstrip()


def chat_markdown(title: str, turns: Sequence[Turn], *, collection: str | None = None,
                  exported_at: str = "", names: Mapping[str, str] | None = None,
                  defaults: Mapping[str, float | None] | None = None) -> str:
    """A chat as one Markdown document: a title line, then each turn (:func:`turn_markdown`; ``names`` maps
    document ids to the names a scoped turn was asked within; ``defaults`` the knobs' defaults, to say which
    turns were asked with others).

    Citations keep their numbers, locator labels (document > section, or
    ``paper.pdf, p. 5``) and fragments (``#page=N``, ``#char=S,E``) with the quoted text. Every text a
    person, a document or the model wrote is written inert (:func:`rag.text.markdown_literal`, issue 26).
    """
    head = [f"# {lit(title)}"]
    meta = ", ".join(x for x in (f"collection {lit(collection)}" if collection else "",
                                 f"exported {exported_at}" if exported_at else "") if x)
    if meta:
        head.append(f"*{meta}*")
    return "\n\n".join(head + [turn_markdown(i, t, names, defaults) for i, t in enumerate(turns, start=1)]) + "\n"
