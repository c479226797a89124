"""A chat's turns as records (saved with the store, :mod:`rag.store.chats`) and as Markdown (issue 16).

:func:`turn_record` turns one answered question into the JSON the store keeps
(the question as typed and as searched, the answer or refusal, every
citation with its locator and quote, the per-sentence verdicts);
:func:`answer_from_record` rebuilds the :class:`rag.answer.pipeline.Answer`
so a reopened chat shows its sources as they were, even after the documents
changed; :func:`chat_markdown` writes a chat as Markdown with its citations
and locators (the app's download button, ``rag chats export``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rag.answer.attribute import ClaimVerdict, SentenceAttribution
from rag.answer.cite import citation_json
from rag.answer.key_passage import KeyPassage, KeySentence
from rag.answer.pipeline import Answer
from rag.types import Citation, Locator

#: The version of the record layout written by :func:`turn_record`.
RECORD_VERSION = 1


@dataclass(frozen=True)
class HistoryTurn:
    """One turn read back: ``question`` as typed, ``standalone`` as searched (equal when not rewritten),
    ``answer`` rebuilt (``None`` when the turn ended in an error), ``error`` that error,
    ``candidates`` ``(fused rank, cosine distance, label)`` of the chunks the gate saw,
    ``scope`` the document ids the question was restricted to (``None``: all), ``created_at`` ISO 8601."""

    question: str
    standalone: str
    answer: Answer | None
    error: str | None = None
    candidates: tuple[tuple[int, float, str], ...] = ()
    scope: tuple[str, ...] | None = None
    created_at: str = ""
    method: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def turn_record(question: str, standalone: str, answer: Answer | None, *, method: str = "",
                error: str | None = None, candidates: Sequence[tuple[int, float, str]] = (),
                scope: Sequence[str] | None = None) -> dict[str, Any]:
    """The JSON-ready record of one turn (see :class:`HistoryTurn` for the fields; ``answer`` may be ``None``)."""
    rec: dict[str, Any] = {
        "version": RECORD_VERSION, "question": question, "standalone": standalone, "method": method,
        "error": error, "scope": list(scope) if scope is not None else None,
        "candidates": [[int(r), float(d), str(label)] for r, d, label in candidates],
    }
    if answer is not None:
        g = answer.gate
        rec.update(
            query=answer.query, threshold=answer.threshold, refused=answer.refused, refusal=answer.refusal,
            text=answer.text, raw_text=answer.raw_text, model=answer.model,
            citations=[citation_json(c) for c in answer.citations],
            sentences=[asdict(s) for s in answer.sentences],
            invalid_citations_removed=answer.invalid_citations_removed, links_removed=answer.links_removed,
            ttft_ms=answer.ttft_ms, nearest_distance=answer.nearest_distance,
            why=getattr(g, "why", None) if g is not None else None,
            notice=getattr(g, "notice", None) if g is not None else None,
            read_spans={str(n): [list(sp) for sp in spans] for n, spans in answer.read_spans.items()},
            key_passage=answer.key_passage.to_json() if answer.key_passage is not None else None,
            reasked=answer.reasked, first_text=answer.first_text,
        )
    return rec


def _known(cls: type, d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k in cls.__dataclass_fields__}


def citation_from_json(d: dict[str, Any]) -> Citation:
    """A :class:`rag.types.Citation` from :func:`rag.answer.cite.citation_json` (unknown keys ignored, JSON
    lists back to the tuples the record holds)."""
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in _known(Citation, d).items()}
    return Citation(**{**kw, "locator": Locator.from_json(d.get("locator"))})


def sentence_from_json(d: dict[str, Any]) -> SentenceAttribution:
    """A :class:`rag.answer.attribute.SentenceAttribution` from its ``asdict`` (unknown keys ignored)."""
    kw = _known(SentenceAttribution, d)
    kw["cited"], kw["supported_by"] = tuple(kw.get("cited") or ()), tuple(kw.get("supported_by") or ())
    kw["missing"] = tuple(kw.get("missing") or ())
    if kw.get("verdict") is not None:
        kw["verdict"] = ClaimVerdict(kw["verdict"])
    return SentenceAttribution(**kw)


def key_passage_from_json(d: dict[str, Any] | None) -> KeyPassage | None:
    """A :class:`rag.answer.key_passage.KeyPassage` from its ``to_json`` (``None`` for ``None``)."""
    if not d:
        return None
    return KeyPassage(sentences=tuple(KeySentence(**_known(KeySentence, s)) for s in d.get("sentences") or []),
                      ms=float(d.get("ms") or 0.0), body=d.get("body") or "")


@dataclass(frozen=True)
class _SavedGate:
    """The part of a gate result a reopened turn shows (the why line, the 'mentions' notice of issue 15)."""

    why: str | None = None
    notice: str | None = None


def answer_from_record(rec: dict[str, Any]) -> Answer | None:
    """The :class:`rag.answer.pipeline.Answer` a :func:`turn_record` holds (``None`` when it holds none)."""
    if "refused" not in rec:
        return None
    return Answer(
        query=rec.get("query") or rec.get("standalone") or rec["question"], threshold=rec.get("threshold", 0.0),
        refused=bool(rec["refused"]), refusal=rec.get("refusal"), text=rec.get("text"),
        citations=[citation_from_json(c) for c in rec.get("citations") or []],
        sentences=[sentence_from_json(s) for s in rec.get("sentences") or []],
        invalid_citations_removed=int(rec.get("invalid_citations_removed") or 0),
        links_removed=int(rec.get("links_removed") or 0), model=rec.get("model"), ttft_ms=rec.get("ttft_ms"),
        raw_text=rec.get("raw_text"), nearest_distance=rec.get("nearest_distance"),
        gate=_SavedGate(rec.get("why"), rec.get("notice")),
        read_spans={int(n): tuple(tuple(sp) for sp in spans) for n, spans in (rec.get("read_spans") or {}).items()},
        key_passage=key_passage_from_json(rec.get("key_passage")), reasked=bool(rec.get("reasked")),
        first_text=rec.get("first_text"),
    )


def turn_from_record(rec: dict[str, Any], created_at: str = "") -> HistoryTurn:
    """A :class:`HistoryTurn` from a stored record."""
    scope = rec.get("scope")
    return HistoryTurn(
        question=rec["question"], standalone=rec.get("standalone") or rec["question"], answer=answer_from_record(rec),
        error=rec.get("error"), candidates=tuple((int(r), float(d), str(lb)) for r, d, lb in rec.get("candidates") or []),
        scope=tuple(scope) if scope is not None else None, created_at=created_at, method=rec.get("method") or "",
    )


def previous_questions(turns: Any) -> list[str]:
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
    return "\n".join("> " + line if line.strip() else ">" for line in text.strip().split("\n"))


def _locator(c: Citation) -> str:
    return f"{c.locator_label} `{c.fragment}`" if c.fragment else c.locator_label


def turn_markdown(n: int, t: HistoryTurn) -> str:
    """One turn as Markdown: the question (and the question searched), the key passage and the checked answer
    (issue 14: what the claim check left out is listed with why) or the refusal, then its sources."""
    out = [f"## {n}. {t.question}"]
    if t.standalone != t.question:
        out.append(f"*Standalone question:* {t.standalone}")
    if t.scope is not None:
        out.append(f"*Asked within {len(t.scope)} chosen document(s).*")
    a = t.answer
    if t.error:
        out.append(f"**Error:** {t.error}")
    elif a is None:
        out.append("(no answer)")
    elif a.refused:
        out.append(f"**{a.refusal}**" + (f"\n\nWhy: {a.gate.why}" if getattr(a.gate, "why", None) else ""))
    else:
        kp = a.key_passage
        if kp is not None and kp.sentences:
            out.append(f"**Key passage** [{kp.index}] {kp.sentences[0].locator_label}\n\n{_quote(kp.body or kp.text)}")
        if a.note:
            out.append(f"*{a.note}*")
        elif a.shown_text:
            out.append(a.shown_text)
        elif not a.generated:
            out.append("(no text generated)")
        removed = a.removed_sentences
        if removed:
            out.append(f"*Left out by the claim check ({len(removed)}):*\n\n"
                       + "\n".join(f"- {s.text.strip()} ({s.verdict}: {s.reason})" for s in removed))
    if a is not None and a.citations:
        cited = set(a.cited_indices)
        lines = ["**Sources**", ""]
        for c in a.citations:
            mark = "" if c.index in cited or not cited else " (not cited)"
            lines.append(f"[{c.index}] {_locator(c)} · cosine distance {c.cosine_distance:.3f}{mark}")
            lines.append("")
            lines.append(_quote(c.quote))
            lines.append("")
        out.append("\n".join(lines).rstrip())
    return "\n\n".join(out)


def chat_markdown(title: str, turns: Sequence[HistoryTurn], *, collection: str | None = None,
                  exported_at: str = "") -> str:
    """A chat as one Markdown document: a title line, then each turn (:func:`turn_markdown`).

    Citations keep their numbers, locator labels (document > section, or
    ``paper.pdf, p. 5``) and fragments (``#page=N``, ``#char=S,E``) with the quoted text.
    """
    head = [f"# {title}"]
    meta = ", ".join(x for x in (f"collection {collection}" if collection else "",
                                 f"exported {exported_at}" if exported_at else "") if x)
    if meta:
        head.append(f"*{meta}*")
    return "\n\n".join(head + [turn_markdown(i, t) for i, t in enumerate(turns, start=1)]) + "\n"
