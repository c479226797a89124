"""Stage 7 of the design: the gate, a table of strategies behind one typed decision (a comparison of numbers, not a prompt).

PUBLIC API: :class:`GateResult` (the decision, typed: :class:`rag.types.Verdict`, :class:`rag.types.GateKind`,
:class:`Evidence`, :class:`LanguageCheck`, :class:`GateReason`), :class:`GateKnobs` (threshold, max sources, score
cuts), the :class:`Gate` protocol every strategy implements (``decide`` a question's hits, ``regate`` a decision
at other knobs without searching again) with the :class:`GateContext` it may read, :class:`DistanceGate` and
:func:`apply_gate` (the design's gate), :func:`regate`, and the refusal and verdict texts
(:func:`refusal_text`, :func:`score_refusal_text`, :func:`verdict_for`, :func:`verdict_messages`).

The distance gate keeps at most ``max_sources`` (4) fused hits whose cosine distance is under the threshold
(0.675); if none pass, it refuses with ``NO ANSWER: nothing under cosine distance 0.675 for "<query>"`` and the
model is never called. The scored gates (:mod:`rag.answer.gate.learned_gate` issue 8, :mod:`rag.answer.gate.calibrated_gate`
issue 15) keep the same sources AND compare an answerability score with ``min_score``; the table of all three is
:data:`rag.answer.gate.gates.GATES`; the store's own references the calibrated gate reads are
:mod:`rag.answer.gate.calibration`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from rag.language import language_name
from rag.settings import Settings
from rag.text import TermStats
from rag.types import GateKind, Hit, QueryPlan, Verdict

if TYPE_CHECKING:  # the calibration module imports nothing of the gate's; only its type is named here
    from rag.answer.gate.calibration import Calibration


def refusal_text(query: str, threshold: float) -> str:
    """The refusal line: ``NO ANSWER: nothing under cosine distance <threshold> for "<query>"``.

    The threshold prints in its shortest form (``0.675``, ``0.6``).
    """
    return f'NO ANSWER: nothing under cosine distance {threshold:g} for "{query}"'


def score_refusal_text(query: str, score: float, min_score: float) -> str:
    """The learned gate's refusal line: ``NO ANSWER: the sources do not seem to answer "<query>" (score 0.12 < 0.40)``."""
    return f'NO ANSWER: the sources do not seem to answer "{query}" (score {score:.2f} < {min_score:.2f})'


class GateReason(StrEnum):
    """Why a question is not answered outright: no chunk under the ``threshold``; an answerability ``score``
    under the cut; or the question's ``language`` is not the documents' (said instead of either)."""

    THRESHOLD = "threshold"
    SCORE = "score"
    LANGUAGE = "language"


@dataclass(frozen=True)
class Evidence:
    """What a scored gate read for one question: ``features`` (name -> value, see
    :data:`rag.answer.gate.learned_gate.FEATURES` / ``CALIBRATED_FEATURES``), the ``score`` P(the sources answer it)
    in [0, 1], and for the calibrated gate the store's references (``self_distance`` / ``far_distance`` cosine
    distances, ``chunks`` / ``distinct_chunks`` counts; ``None`` otherwise)."""

    features: Mapping[str, float]
    score: float
    self_distance: float | None = None
    far_distance: float | None = None
    chunks: int | None = None
    distinct_chunks: int | None = None

    def to_json(self) -> dict[str, float | int]:
        """``ask --json``'s ``gate.evidence``: every feature and the score rounded to 4 places, then the references."""
        d: dict[str, float | int] = {k: round(float(v), 4) for k, v in self.features.items()}
        d["score"] = round(float(self.score), 4)
        if self.self_distance is not None:
            d.update(self_distance=self.self_distance, far_distance=self.far_distance, chunks=self.chunks,
                     distinct_chunks=self.distinct_chunks)
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> Evidence | None:
        """The inverse of :meth:`to_json` (``None`` for ``None``)."""
        if not d:
            return None
        refs = ("score", "self_distance", "far_distance", "chunks", "distinct_chunks")
        return cls({k: v for k, v in d.items() if k not in refs}, float(d.get("score") or 0.0), d.get("self_distance"),
                   d.get("far_distance"), d.get("chunks"), d.get("distinct_chunks"))


@dataclass(frozen=True)
class LanguageCheck:
    """The question's language against the documents' (issue 15): ``question`` ISO 639-1 code (``None`` when
    not detected) with its ``probability``, the ``documents``' main languages, and whether they ``differs``."""

    question: str | None
    probability: float | None
    documents: tuple[str, ...]
    differs: bool

    def to_json(self) -> dict[str, Any]:
        """``{"question", "probability", "documents", "differs"}`` (``ask --json``'s ``gate.language``)."""
        return {"question": self.question, "probability": self.probability, "documents": list(self.documents),
                "differs": self.differs}

    @classmethod
    def from_json(cls, d: Mapping[str, Any] | None) -> LanguageCheck | None:
        """The inverse of :meth:`to_json` (``None`` for ``None``)."""
        if not d:
            return None
        return cls(d.get("question"), d.get("probability"), tuple(d.get("documents") or ()), bool(d.get("differs")))


@dataclass(frozen=True)
class GateResult:
    """The gate's decision for one query.

    ``sources`` the kept hits in fused (final) order, at most ``max_sources``,
    each with ``cosine_distance < threshold``; ``refused`` true when none
    pass, then ``refusal`` holds the NO ANSWER line (else ``None``);
    ``candidates`` every hit the gate saw, with distances (for the app's
    chart); ``nearest_distance`` the smallest cosine distance among the
    candidates (``None`` when there were none); ``verdict`` ``answered``,
    ``mentions`` (the calibrated gate's middle band: sources shown with
    ``notice``, "the documents mention this but may not answer it") or
    ``refused``; ``kind`` the strategy that decided. A scored gate adds
    ``score`` P(the sources answer the question) in [0, 1], the cuts
    ``min_score`` / ``mention_score`` it was compared with, ``why`` one line
    of evidence, ``evidence`` what it read (:class:`Evidence`) and ``reason``
    (:class:`GateReason`) when not answered. The calibrated gate also gives
    ``language`` (:class:`LanguageCheck`) and ``duplicates`` kept chunk id ->
    ids of chunks with identical content collapsed into it. ``plan`` how the
    question was searched (:class:`rag.types.QueryPlan`, issue 19), when the
    store's search produced the hits.
    """

    query: str
    threshold: float
    max_sources: int
    refused: bool
    refusal: str | None
    sources: tuple[Hit, ...]
    candidates: tuple[Hit, ...]
    nearest_distance: float | None
    verdict: Verdict
    kind: GateKind = GateKind.DISTANCE
    score: float | None = None
    min_score: float | None = None
    mention_score: float | None = None
    why: str | None = None
    notice: str | None = None
    reason: GateReason | None = None
    evidence: Evidence | None = None
    language: LanguageCheck | None = None
    duplicates: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    plan: QueryPlan | None = None

    def to_json(self) -> dict[str, Any]:
        """``ask --json``'s ``gate`` object: ``kind, verdict, reason, nearest_distance, score, min_score,
        mention_score, why, evidence, language, duplicates_collapsed, max_sources`` (distance and score rounded
        to 4 places; ``duplicates_collapsed`` counts the chunks collapsed into a kept one)."""
        return {"kind": str(self.kind), "verdict": str(self.verdict), "reason": _str(self.reason),
                "nearest_distance": _r4(self.nearest_distance), "score": _r4(self.score), "min_score": self.min_score,
                "mention_score": self.mention_score, "why": self.why,
                "evidence": self.evidence.to_json() if self.evidence is not None else None,
                "language": self.language.to_json() if self.language is not None else None,
                "duplicates_collapsed": sum(len(v) for v in self.duplicates.values()), "max_sources": self.max_sources}

    @classmethod
    def from_json(cls, g: Mapping[str, Any], *, query: str, threshold: float, refused: bool, refusal: str | None,
                  notice: str | None = None, verdict: str | None = None, plan: Mapping | None = None) -> GateResult:
        """The decision a :meth:`to_json` object describes, without its hits (``sources`` and ``candidates``
        empty: what a reopened answer shows). The answer's own keys (``query``, ``threshold``, ``refused``,
        ``refusal``, ``notice``, ``verdict``, ``retrieval``) complete it; a ``g`` holding only ``why`` (a chat
        record of format 1) gives a distance-gate record with that line."""
        v = g.get("verdict") or verdict or (Verdict.MENTIONS if notice and not refused else
                                            Verdict.REFUSED if refused else Verdict.ANSWERED)
        return cls(query=query, threshold=threshold, max_sources=int(g.get("max_sources") or 0), refused=refused,
                   refusal=refusal, sources=(), candidates=(), nearest_distance=g.get("nearest_distance"),
                   verdict=Verdict(v), kind=GateKind(g.get("kind") or GateKind.DISTANCE), score=g.get("score"),
                   min_score=g.get("min_score"), mention_score=g.get("mention_score"), why=g.get("why"),
                   notice=notice, reason=GateReason(g["reason"]) if g.get("reason") else None,
                   evidence=Evidence.from_json(g.get("evidence")), language=LanguageCheck.from_json(g.get("language")),
                   plan=QueryPlan.from_json(plan))


def _r4(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)


def _str(x: StrEnum | None) -> str | None:
    return None if x is None else str(x)


@dataclass(frozen=True)
class GateKnobs:
    """The knobs of a gate: ``threshold`` cosine distance in [0, 2] (design stage 7), ``max_sources`` >= 1,
    ``min_score`` / ``mention_score`` the answerability cuts in [0, 1] (``None``: the shipped model's)."""

    threshold: float = 0.675
    max_sources: int = 4
    min_score: float | None = None
    mention_score: float | None = None

    @classmethod
    def from_settings(cls, s: Settings) -> GateKnobs:
        """The knobs of a :class:`rag.settings.Settings` (``threshold``, ``max_sources``, ``min_score``, ``mention_score``)."""
        return cls(s.threshold, s.max_sources, s.min_score, s.mention_score)


class GateContext(Protocol):
    """What a gate may read about the searched store besides the hits; each is read only when a gate asks
    (:class:`rag.answer.gate.gates.StoreContext` reads them from a :class:`rag.store.store.Store`)."""

    def texts(self, chunk_ids: Sequence[int]) -> Mapping[int, str]:
        """Chunk id -> the embedded ``text`` (``[Doc > Section]`` header + content)."""

    def contents(self, chunk_ids: Sequence[int]) -> Mapping[int, str]:
        """Chunk id -> the quoted ``content``."""

    def term_stats(self) -> TermStats:
        """The index's term statistics over chunk texts (the learned gate's IDF)."""

    def gate_stats(self) -> TermStats:
        """Distinct chunk texts plus the unrelated bank (the calibrated gate's IDF)."""

    def calibration(self) -> Calibration:
        """The store's references (:class:`rag.answer.gate.calibration.Calibration`)."""


class Gate(Protocol):
    """One gate strategy (a row of :data:`rag.answer.gate.gates.GATES`).

    ``decide`` the :class:`GateResult` for ``query``'s fused ``hits`` (best first) at ``knobs``, reading what it
    needs from ``context``; ``regate`` the same question's decision at other knobs, without searching or
    scoring again (the app's slider); ``default_min_score`` the answerability cut its slider starts at (0.0
    when it has no score); ``default_mention_score`` the lower cut of its "mentions" band (``None`` for a gate
    without one). ``decide`` and ``regate`` raise ``ValueError`` for a knob out of bounds.
    """

    kind: GateKind

    def decide(self, query: str, hits: Sequence[Hit], knobs: GateKnobs, context: GateContext) -> GateResult: ...

    def regate(self, result: GateResult, knobs: GateKnobs) -> GateResult: ...

    def default_min_score(self) -> float: ...

    def default_mention_score(self) -> float | None: ...


class DistanceGate:
    """The design's gate alone (:func:`apply_gate`): no score, nothing read beyond the hits."""

    kind: ClassVar[GateKind] = GateKind.DISTANCE

    def decide(self, query: str, hits: Sequence[Hit], knobs: GateKnobs, context: GateContext | None = None) -> GateResult:
        return apply_gate(query, hits, knobs.threshold, knobs.max_sources)

    def regate(self, result: GateResult, knobs: GateKnobs) -> GateResult:
        return regate(result, knobs.threshold, knobs.max_sources)

    def default_min_score(self) -> float:
        return 0.0

    def default_mention_score(self) -> None:
        return None


#: Keep a hit as a source by :func:`source_distance` (its best unit's, when nearer), once the chunk distances have
#: decided that the question is not refused: a long chunk whose one line answers ("Total Budget: $331,404" in a
#: form of twenty fields, both legs' first hit) was dropped for its whole vector's distance. Measured on the three
#: dev corpora (every question, both wordings; nothing fitted): the passage among the sources +1 / +2 / +2 -1
#: (course / pdf-dev / real), and of the six answers it changes three turn right, none wrong (docs/evaluation.md).
SOURCES_BY_UNITS = True


def source_distance(hit: Hit) -> float:
    """The distance a hit is kept as a source by: its chunk vector's (:attr:`rag.types.Hit.cosine_distance`), or its
    best unit's through the dense leg (:attr:`rag.types.Hit.unit_distance`) when nearer."""
    if hit.unit_distance is None or math.isnan(hit.unit_distance):
        return hit.cosine_distance
    return min(hit.cosine_distance, hit.unit_distance)


def apply_gate(query: str, hits: Sequence[Hit], threshold: float = 0.675, max_sources: int = 4) -> GateResult:
    """Keep the first ``max_sources`` hits (in the given fused order) with cosine distance < ``threshold``; refused
    when none has. Not refused, a hit is kept by its :func:`source_distance` (:data:`SOURCES_BY_UNITS`).

    A hit with an unknown (NaN) distance never passes. Raises ``ValueError``
    if ``max_sources < 1`` or the threshold is outside ``[0, 2]``.
    """
    if max_sources < 1:
        raise ValueError(f"max_sources must be >= 1, got {max_sources}")
    if not 0.0 <= threshold <= 2.0:
        raise ValueError(f"threshold is a cosine distance in [0, 2], got {threshold}")
    passing = [h for h in hits if not math.isnan(h.cosine_distance) and h.cosine_distance < threshold]
    refused = not passing
    if SOURCES_BY_UNITS and not refused:
        passing = [h for h in hits if not math.isnan(h.cosine_distance) and source_distance(h) < threshold]
    kept = tuple(passing[:max_sources])
    dists = [h.cosine_distance for h in hits if not math.isnan(h.cosine_distance)]
    return GateResult(
        query=query, threshold=threshold, max_sources=max_sources, refused=refused,
        refusal=refusal_text(query, threshold) if refused else None,
        sources=kept, candidates=tuple(hits), nearest_distance=min(dists) if dists else None,
        verdict=Verdict.REFUSED if refused else Verdict.ANSWERED,
    )


def check_score_cut(name: str, value: float) -> float:
    """``value`` as a float when it is in [0, 1]; else ``ValueError`` naming the knob."""
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return float(value)


# --------------------------------------------------------------------------- verdicts (issue 15)


def verdict_for(score: float, min_score: float, mention_score: float) -> Verdict:
    """``answered`` when ``score >= min_score``; ``mentions`` when ``score >= mention_score``; else ``refused``.

    A ``mention_score`` at or above ``min_score`` leaves no ``mentions`` band.
    """
    if score >= min_score:
        return Verdict.ANSWERED
    if score >= min(mention_score, min_score):
        return Verdict.MENTIONS
    return Verdict.REFUSED


def mention_text(query: str, score: float, min_score: float) -> str:
    """The ``mentions`` line: ``MAY NOT ANSWER: the documents mention "<query>" but may not answer it (score 0.31 < 0.55)``."""
    return (f'MAY NOT ANSWER: the documents mention "{query}" but may not answer it '
            f"(score {score:.2f} < {min_score:.2f})")


def language_refusal_text(query: str, question_lang: str, doc_langs: Sequence[str]) -> str:
    """The refusal when the question's language is not the documents': says so, never "nothing under the threshold"."""
    docs = " and ".join(language_name(c) for c in doc_langs) or "another language"
    q = language_name(question_lang)
    return (f'NO ANSWER: "{query}" seems to be in {q}, and the documents are in {docs}. This search matches words '
            f"and meanings within one language, so the answer may be there all the same: ask again in {docs}.")


def verdict_messages(query: str, verdict: Verdict, score: float, min_score: float, mention_score: float,
                     distance_refusal: str | None, language: LanguageCheck | None,
                     ) -> tuple[GateReason | None, str | None, str | None]:
    """``(reason, refusal, notice)`` for a verdict: why it is not answered, the NO ANSWER line, the mentions line.

    ``distance_refusal`` the distance gate's line when no chunk was under the
    threshold (else ``None``); ``language`` the gate's language check. When
    the question's language differs from the documents', the reason is
    ``language`` and the lines say so instead of "nothing under the threshold".
    """
    reason: GateReason | None = None
    refusal = notice = None
    if verdict == Verdict.REFUSED:
        reason = GateReason.THRESHOLD if distance_refusal else GateReason.SCORE
        refusal = distance_refusal or score_refusal_text(query, score, min(mention_score, min_score))
    elif verdict == Verdict.MENTIONS:
        notice = mention_text(query, score, min_score)
    if language is not None and language.differs and verdict != Verdict.ANSWERED:
        reason = GateReason.LANGUAGE
        docs = language.documents
        if verdict == Verdict.REFUSED:
            refusal = language_refusal_text(query, language.question, docs)
        else:
            notice = (f"{notice}. The question seems to be in {language_name(language.question)} and the documents "
                      f"are in {' and '.join(language_name(c) for c in docs)}: asking in their language may find more.")
    return reason, refusal, notice


def scored_verdict(query: str, score: float, min_score: float, mention_score: float | None, distance: GateResult,
                   language: LanguageCheck | None = None, standout: bool = False) -> dict[str, Any]:
    """The fields a scored gate sets on the distance gate's ``distance`` result: ``verdict``, ``refused``,
    ``refusal``, ``notice``, ``reason``, ``sources`` (none when refused), the cuts and the score.

    Refused when the distance gate refused or ``score`` is under the lower cut; ``mentions`` from
    ``mention_score`` (``None``: no band) up to ``min_score``; answered from ``min_score`` up, and from
    ``mention_score`` up when ``standout`` (the calibrated gate's passage that stands apart, issue 40).
    """
    mention = min_score if mention_score is None else mention_score
    verdict = Verdict.REFUSED if distance.refused else verdict_for(score, min_score, mention)
    if standout and verdict == Verdict.MENTIONS:
        verdict = Verdict.ANSWERED
    reason, refusal, notice = verdict_messages(query, verdict, score, min_score, mention,
                                               distance.refusal if distance.refused else None, language)
    refused = verdict == Verdict.REFUSED
    return dict(verdict=verdict, refused=refused, refusal=refusal, notice=notice, reason=reason,
                sources=() if refused else distance.sources, score=score, min_score=min_score,
                mention_score=mention_score)


# --------------------------------------------------------------------------- re-gating


def regate(result: GateResult, threshold: float, max_sources: int, min_score: float | None = None,
           mention_score: float | None = None, standout: bool = False) -> GateResult:
    """The same question's decision at another threshold / max sources / score cuts, without searching again.

    Re-applies the distance gate to ``result.candidates`` (identical chunks collapsed by the gate stay
    collapsed); a scored result keeps the answerability ``score`` already computed and compares it with
    ``min_score`` and ``mention_score`` (each defaulting to the cut it was computed with). This is what lets a
    user move the sliders and watch a question flip between answered, mentions and refused. The result's
    ``why`` is the decided one's: the gate that re-decides rewrites it (issue 42: the app's what-if showed the
    old cut). ``standout`` as in :func:`scored_verdict`. Raises ``ValueError`` like :func:`apply_gate`, or for a
    cut outside [0, 1].
    """
    dropped = {i for ids in result.duplicates.values() for i in ids}
    dist = apply_gate(result.query, [h for h in result.candidates if h.chunk_id not in dropped], threshold, max_sources)
    if result.score is None:
        return replace(dist, candidates=result.candidates, plan=result.plan)
    cut = result.min_score if min_score is None else check_score_cut("min_score", min_score)
    mention = result.mention_score if mention_score is None else check_score_cut("mention_score", mention_score)
    return replace(result, threshold=threshold, max_sources=max_sources, nearest_distance=dist.nearest_distance,
                   **scored_verdict(result.query, result.score, cut, mention, dist, result.language, standout))
