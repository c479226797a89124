"""What an honest refusal or "may not answer" says (issue 39, Deliver 3): what was searched, what was closest,
whether the user's own settings decided, and what to try next.

A refusal that reads "your documents do not seem to say this" tells a user nothing when there are no documents,
when they asked within one file, or when their own threshold refused a question the defaults would have let
through. :class:`Searched` is what the pipeline knows when it asks (the documents in scope, how many the store
holds, the closest passages with their locators, the knobs' defaults); it is kept in the answer's record
(:class:`rag.answer.record.Answer`, ``searched``), so a reopened chat, ``ask --json``, the HTTP API, the CLI
and the app all say the same. :func:`advise` turns it and the answer's verdict into an :class:`Advice`: plain
sentences, no Streamlit, no click.

Which knob *decided* is read from numbers the gate kept (:class:`rag.answer.gate.GateResult`): a refusal for
want of a passage under the threshold was decided by the user's threshold when the nearest passage is under
the default one; a refusal or "may not answer" by score was decided by the user's cut when the score meets the
default cut. A knob that was changed but did not decide is not blamed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag.answer.gate import GateReason, GateResult
from rag.language import language_name
from rag.types import AnswerVerdict, Verdict

#: How many of the closest passages a refusal names.
CLOSEST = 3

#: How a person reads each knob (the same words as :data:`rag.answer.asked_with.KNOB_LABELS`).
_KNOB = {"threshold": "threshold (cosine distance)", "min_score": "answerability cut", "mention_score": "mention cut"}


@dataclass(frozen=True)
class Closest:
    """One passage close to the question: where it is (``label``, a locator) and its ``distance`` (cosine)."""

    label: str
    distance: float


@dataclass(frozen=True)
class Searched:
    """What was searched for one question: the ``documents`` (names) in scope, ``total`` ready documents in the
    store, ``scoped`` (asked within some documents), the ``closest`` passages seen (best first, at most
    :data:`CLOSEST`) and the knobs' ``defaults`` (:func:`rag.answer.asked_with.default_knobs`)."""

    documents: tuple[str, ...] = ()
    total: int = 0
    scoped: bool = False
    closest: tuple[Closest, ...] = ()
    defaults: Mapping[str, float | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"documents": list(self.documents), "total": self.total, "scoped": self.scoped,
                "closest": [{"label": c.label, "cosine_distance": round(c.distance, 4)} for c in self.closest],
                "defaults": dict(self.defaults)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> Searched | None:
        if not d:
            return None
        return cls(tuple(d.get("documents") or ()), int(d.get("total") or 0), bool(d.get("scoped")),
                   tuple(Closest(str(c["label"]), float(c["cosine_distance"])) for c in d.get("closest") or ()),
                   dict(d.get("defaults") or {}))


@dataclass(frozen=True)
class Advice:
    """A doubt's explanation: ``searched`` (one sentence), ``closest`` (the passages nearest the question,
    ``"report.pdf, p. 5 (cosine distance 0.71)"``), ``decided`` (the user's own setting that decided, with its
    default; ``None`` when none did), ``tries`` (what to try, each a short imperative sentence), and
    ``no_documents`` (there was nothing to search)."""

    searched: str
    closest: tuple[str, ...] = ()
    decided: str | None = None
    tries: tuple[str, ...] = ()
    no_documents: bool = False

    def lines(self) -> list[str]:
        """The advice as lines of text (the CLI's and the export's): searched, closest, decided, then what to try."""
        out = [self.searched]
        if self.closest:
            out.append("Closest passages: " + "; ".join(self.closest) + ".")
        if self.decided:
            out.append(self.decided)
        if self.tries:
            out.append("Try: " + " ".join(self.tries))
        return out

    def to_json(self) -> dict[str, Any]:
        """``ask --json``'s ``advice``: every part, and ``text`` (:meth:`lines` joined)."""
        return {"searched": self.searched, "closest": list(self.closest), "decided": self.decided,
                "try": list(self.tries), "no_documents": self.no_documents, "text": " ".join(self.lines())}


def names_phrase(names: Sequence[str], most: int = 3) -> str:
    """``"a.pdf"``, ``"a.pdf and b.md"``, ``"a.pdf, b.md and c.docx"``; past ``most`` names, ``"5 documents"``."""
    names = list(names)
    if not names:
        return "no document"
    if len(names) > most:
        return f"{len(names)} documents"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def decided_by(gate: GateResult, defaults: Mapping[str, float | None]) -> str | None:
    """The sentence naming the user's own knob when it, not the documents, decided ``gate``'s refusal or
    "mentions" (module doc); ``None`` when the defaults would have decided the same (or are unknown)."""
    if gate.verdict == Verdict.REFUSED and (gate.reason == GateReason.THRESHOLD
                                            or (gate.reason is None and gate.score is None)):
        return _by_threshold(gate, defaults)
    if gate.score is None or gate.min_score is None:
        return None
    if gate.verdict == Verdict.REFUSED:
        return _by_score_cut(gate, gate.score, gate.min_score, defaults)
    if gate.verdict == Verdict.MENTIONS:
        return _by_min_score(gate, gate.score, gate.min_score, defaults)
    return None


def _differs(defaults: Mapping[str, float | None], name: str, value: float | None) -> float | None:
    """The default of knob ``name`` when it is known and ``value`` is another (to 4 places), else ``None``."""
    d = defaults.get(name)
    if value is None or d is None or round(float(value), 4) == round(float(d), 4):
        return None
    return float(d)


def _by_threshold(gate: GateResult, defaults: Mapping[str, float | None]) -> str | None:
    """A distance refusal that the default threshold would have let through."""
    d = _differs(defaults, "threshold", gate.threshold)
    near = gate.nearest_distance
    if d is not None and near is not None and gate.threshold <= near < d:
        return (f"Your {_KNOB['threshold']} {gate.threshold:g} decided this (default {d:g}): the closest passage "
                f"is at {near:.3f}, which the default lets through.")
    return None


def _by_score_cut(gate: GateResult, score: float, min_score: float,
                  defaults: Mapping[str, float | None]) -> str | None:
    """A score refusal under the user's lower cut that the default cut would have shown."""
    low, name = _lower_cut(min_score, gate.mention_score)
    dmin = defaults.get("min_score")
    if dmin is None:
        return None
    dlow, _ = _lower_cut(float(dmin), defaults.get("mention_score"))
    if round(low, 4) != round(dlow, 4) and score >= dlow:
        return (f"Your {_KNOB[name]} {low:g} decided this (default {dlow:g}): the answerability score "
                f"{score:.2f} meets the default, so at the defaults passages would be shown.")
    return None


def _by_min_score(gate: GateResult, score: float, min_score: float,
                  defaults: Mapping[str, float | None]) -> str | None:
    """A "mentions" under the user's min_score that the default would have counted as answered."""
    d = _differs(defaults, "min_score", min_score)
    if d is not None and score >= d:
        return (f"Your {_KNOB['min_score']} {min_score:g} decided this (default {d:g}): the answerability "
                f"score {score:.2f} meets the default, so at the defaults the question counts as answered.")
    return None


def _lower_cut(min_score: float, mention_score: float | None) -> tuple[float, str]:
    """The cut under which a scored gate refuses, and which knob it is."""
    if mention_score is not None and mention_score < min_score:
        return float(mention_score), "mention_score"
    return float(min_score), "min_score"


def advise(verdict: AnswerVerdict, gate: GateResult, searched: Searched | None) -> Advice | None:
    """The :class:`Advice` of an answer judged ``verdict`` whose gate decided ``gate``, from what was ``searched``
    (``None`` for an answer recorded before issue 39 kept it: then no advice). Only a refusal and "may not
    answer" get advice: the other verdicts say why in their reason and mark each sentence."""
    if searched is None or verdict not in (AnswerVerdict.REFUSED, AnswerVerdict.MAY_NOT_ANSWER):
        return None
    if searched.total == 0:
        return Advice(searched="There are no documents to search yet.",
                      tries=("Add documents (the Documents page, or rag ingest FILE), then ask again.",),
                      no_documents=True)
    if searched.scoped and not searched.documents:
        return Advice(searched="None of the documents asked within is indexed yet.",
                      tries=("Wait until they are ready, or ask all documents.",), no_documents=True)
    n = len(searched.documents)
    if searched.scoped:
        where = f"Searched within {names_phrase(searched.documents)} only"
        where += f" ({n} of the {searched.total} documents)." if searched.total > n else "."
    elif n == 1:
        where = f"Searched the only document, {searched.documents[0]}."
    else:
        where = f"Searched all {n} documents" + (f" ({names_phrase(searched.documents)})." if n <= 3 else ".")
    closest = tuple(f"{c.label} (cosine distance {c.distance:.2f})" for c in searched.closest[:CLOSEST])
    decided = decided_by(gate, searched.defaults)
    tries: list[str] = []
    if decided:
        tries.append("Ask again with the default settings.")
    lang = gate.language
    if lang is not None and lang.differs and lang.question:
        langs = " or ".join(language_name(c) for c in lang.documents) or "the documents' language"
        tries.append(f"Ask in {langs}.")
    tries.append("Use the words the document itself would use (names, terms, numbers).")
    if searched.scoped and searched.total > n:
        tries.append("Widen the scope: ask all documents.")
    elif n > 1:
        tries.append("Name the document, or ask within the one that should hold the answer.")
    return Advice(searched=where, closest=closest, decided=decided, tries=tuple(tries))
