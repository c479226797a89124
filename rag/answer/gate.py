"""Stage 7 of the design: the distance gate (a comparison of two numbers, not a prompt).

PUBLIC API: :class:`GateResult`, :func:`apply_gate`, :func:`refusal_text`,
:func:`score_refusal_text`, the verdict texts of issue 15 (:func:`verdict_for`, :func:`verdict_messages`), :func:`regate`. Keep at most ``max_sources`` (4)
fused hits whose cosine distance is under the threshold (0.675); if none pass,
refuse with ``NO ANSWER: nothing under cosine distance 0.675 for "<query>"``
and never call the model. The learned gate (issue 8,
:func:`rag.answer.learned_gate.apply_learned_gate`) builds on this one: the
same sources AND an answerability score; :func:`regate` re-applies either.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rag.language import language_name
from rag.types import GateKind, Hit, QueryPlan, Verdict


def refusal_text(query: str, threshold: float) -> str:
    """The refusal line: ``NO ANSWER: nothing under cosine distance <threshold> for "<query>"``.

    The threshold prints in its shortest form (``0.675``, ``0.6``).
    """
    return f'NO ANSWER: nothing under cosine distance {threshold:g} for "{query}"'


def score_refusal_text(query: str, score: float, min_score: float) -> str:
    """The learned gate's refusal line: ``NO ANSWER: the sources do not seem to answer "<query>" (score 0.12 < 0.40)``."""
    return f'NO ANSWER: the sources do not seem to answer "{query}" (score {score:.2f} < {min_score:.2f})'


@dataclass(frozen=True)
class GateResult:
    """The gate's decision for one query.

    ``sources`` the kept hits in fused (final) order, at most ``max_sources``,
    each with ``cosine_distance < threshold``; ``refused`` true when none
    pass, then ``refusal`` holds :func:`refusal_text` (else ``None``);
    ``candidates`` every hit the gate saw, with distances (for the app's
    chart); ``nearest_distance`` the smallest cosine distance among the
    candidates (``None`` when there were none). ``kind`` a :class:`rag.types.GateKind`
    (``"distance"`` or ``"learned"``); for the learned gate ``score`` is P(the sources answer the
    question) in [0, 1], ``min_score`` the cut it was compared with, and
    ``why`` one line of evidence (nearest distance, lexical coverage, score).

    The calibrated gate (issue 15, ``kind`` ``"calibrated"``) adds:
    ``verdict`` one of :class:`rag.types.Verdict` (``answered``, ``mentions``,
    ``refused``; the other gates give ``answered`` or ``refused``);
    ``mention_score`` the cut of the ``mentions`` band; ``notice`` the
    ``mentions`` line shown above the answer; ``reason`` why it is not
    answered (``threshold``, ``score``, ``language``); ``evidence`` the
    calibrated features, score and the store's references; ``language`` the
    question's and the documents' languages; ``duplicates`` kept chunk id ->
    ids of chunks with identical content collapsed into it.
    ``plan`` how the question was searched (:class:`rag.types.QueryPlan`,
    issue 19), when the store's search produced the hits.
    """

    query: str
    threshold: float
    max_sources: int
    refused: bool
    refusal: str | None
    sources: tuple[Hit, ...]
    candidates: tuple[Hit, ...]
    nearest_distance: float | None
    kind: GateKind = GateKind.DISTANCE
    score: float | None = None
    min_score: float | None = None
    why: str | None = None
    verdict: str = ""
    mention_score: float | None = None
    notice: str | None = None
    reason: str | None = None
    evidence: dict | None = None
    language: dict | None = None
    duplicates: dict = field(default_factory=dict)
    plan: QueryPlan | None = None

    def __post_init__(self):
        if not self.verdict:
            object.__setattr__(self, "verdict", "refused" if self.refused else "answered")

    def to_json(self) -> dict[str, Any]:
        """``ask --json``'s ``gate`` object: ``kind, verdict, reason, nearest_distance, score, min_score,
        mention_score, why, evidence, language, duplicates_collapsed, max_sources`` (distance and score rounded
        to 4 places; ``duplicates_collapsed`` counts the chunks collapsed into a kept one)."""
        return {"kind": str(self.kind), "verdict": str(self.verdict), "reason": self.reason,
                "nearest_distance": _r4(self.nearest_distance), "score": _r4(self.score), "min_score": self.min_score,
                "mention_score": self.mention_score, "why": self.why, "evidence": self.evidence,
                "language": self.language, "duplicates_collapsed": sum(len(v) for v in self.duplicates.values()),
                "max_sources": self.max_sources}

    @classmethod
    def from_json(cls, g: Mapping[str, Any], *, query: str, threshold: float, refused: bool, refusal: str | None,
                  notice: str | None = None, verdict: str | None = None, plan: Mapping | None = None) -> GateResult:
        """The decision a :meth:`to_json` object describes, without its hits (``sources`` and ``candidates``
        empty: what a reopened answer shows). The answer's own keys (``query``, ``threshold``, ``refused``,
        ``refusal``, ``notice``, ``verdict``, ``retrieval``) complete it; a ``g`` holding only ``why`` (a chat
        record of format 1) gives a distance-gate record with that line."""
        v = g.get("verdict") or verdict or ""
        return cls(query=query, threshold=threshold, max_sources=int(g.get("max_sources") or 0), refused=refused,
                   refusal=refusal, sources=(), candidates=(), nearest_distance=g.get("nearest_distance"),
                   kind=GateKind(g.get("kind") or GateKind.DISTANCE), score=g.get("score"), min_score=g.get("min_score"),
                   why=g.get("why"), verdict=v or (Verdict.MENTIONS if notice and not refused else ""),
                   mention_score=g.get("mention_score"), notice=notice, reason=g.get("reason"),
                   evidence=g.get("evidence"), language=g.get("language"), plan=QueryPlan.from_json(plan))


def _r4(x: float | None) -> float | None:
    return None if x is None else round(float(x), 4)


def apply_gate(query: str, hits: Sequence[Hit], threshold: float = 0.675, max_sources: int = 4) -> GateResult:
    """Keep the first ``max_sources`` hits (in the given fused order) with cosine distance < ``threshold``.

    A hit with an unknown (NaN) distance never passes. Raises ``ValueError``
    if ``max_sources < 1`` or the threshold is outside ``[0, 2]``.
    """
    if max_sources < 1:
        raise ValueError(f"max_sources must be >= 1, got {max_sources}")
    if not 0.0 <= threshold <= 2.0:
        raise ValueError(f"threshold is a cosine distance in [0, 2], got {threshold}")
    passing = [h for h in hits if not math.isnan(h.cosine_distance) and h.cosine_distance < threshold]
    kept = tuple(passing[:max_sources])
    dists = [h.cosine_distance for h in hits if not math.isnan(h.cosine_distance)]
    refused = not kept
    return GateResult(
        query=query, threshold=threshold, max_sources=max_sources, refused=refused,
        refusal=refusal_text(query, threshold) if refused else None,
        sources=kept, candidates=tuple(hits), nearest_distance=min(dists) if dists else None,
    )


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


def verdict_messages(query: str, verdict: str, score: float, min_score: float, mention_score: float,
                     distance_refusal: str | None, language: Mapping | None) -> tuple[str | None, str | None, str | None]:
    """``(reason, refusal, notice)`` for a verdict: why it is not answered, the NO ANSWER line, the mentions line.

    ``distance_refusal`` the distance gate's line when no chunk was under the
    threshold (else ``None``); ``language`` the gate's language record. When
    the question's language differs from the documents', the reason is
    ``"language"`` and the lines say so instead of "nothing under the threshold".
    """
    reason = refusal = notice = None
    if verdict == Verdict.REFUSED:
        reason = "threshold" if distance_refusal else "score"
        refusal = distance_refusal or score_refusal_text(query, score, min(mention_score, min_score))
    elif verdict == Verdict.MENTIONS:
        notice = mention_text(query, score, min_score)
    lang = language or {}
    if lang.get("differs") and verdict != Verdict.ANSWERED:
        reason = "language"
        docs = lang.get("documents") or []
        if verdict == Verdict.REFUSED:
            refusal = language_refusal_text(query, lang["question"], docs)
        else:
            notice = (f"{notice}. The question seems to be in {language_name(lang['question'])} and the documents "
                      f"are in {' and '.join(language_name(c) for c in docs)}: asking in their language may find more.")
    return reason, refusal, notice


# --------------------------------------------------------------------------- re-gating


def regate(result: GateResult, threshold: float, max_sources: int, min_score: float | None = None) -> GateResult:
    """The same question's decision at another threshold / max sources / score cut, without searching again.

    Re-applies the distance gate to ``result.candidates``; for a learned
    result the answerability ``score`` already computed is compared with
    ``min_score`` (default the cut it was computed with). This is what lets a
    user move the slider and watch a question flip between answered and
    refused. Raises ``ValueError`` like :func:`apply_gate`.
    """
    if result.kind == GateKind.CALIBRATED:
        return _recalibrate(result, threshold, max_sources, min_score)
    dist = replace(apply_gate(result.query, result.candidates, threshold, max_sources), plan=result.plan)
    if result.kind != GateKind.LEARNED or result.score is None:
        return dist
    cut = result.min_score if min_score is None else min_score
    refused = dist.refused or result.score < cut
    refusal = dist.refusal if dist.refused else (score_refusal_text(result.query, result.score, cut) if refused else None)
    return replace(dist, kind=GateKind.LEARNED, refused=refused, refusal=refusal, sources=() if refused else dist.sources,
                   score=result.score, min_score=cut, why=result.why, verdict="")


def _recalibrate(result: GateResult, threshold: float, max_sources: int, min_score: float | None) -> GateResult:
    """:func:`regate` for the calibrated gate: duplicates stay collapsed, the score is kept, the verdict recomputed."""
    dropped = {i for ids in result.duplicates.values() for i in ids}
    dist = apply_gate(result.query, [h for h in result.candidates if h.chunk_id not in dropped], threshold, max_sources)
    cut = result.min_score if min_score is None else min_score
    mention = result.mention_score if result.mention_score is not None else cut
    verdict = "refused" if dist.refused else str(verdict_for(result.score or 0.0, cut, mention))
    reason, refusal, notice = verdict_messages(result.query, verdict, result.score or 0.0, cut, mention,
                                               dist.refusal if dist.refused else None, result.language)
    return replace(result, threshold=threshold, max_sources=max_sources, refused=verdict == "refused",
                   refusal=refusal, sources=() if verdict == "refused" else dist.sources, min_score=cut,
                   verdict=verdict, notice=notice, reason=reason, nearest_distance=dist.nearest_distance)
