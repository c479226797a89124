"""The calibrated gate (issue 15, the default): three verdicts from evidence read on the store's own scale.

Steps, for one question and its fused hits (cost about 1-2 ms, no model):

1. identical chunks collapse (:func:`collapse_duplicates`): the same text
   uploaded twice is one candidate, and its citation says where else it is;
2. the distance gate (design stage 7) keeps at most ``max_sources`` hits
   under the cosine-distance ``threshold`` (the slider); none: refused;
3. the answerability score: a logistic regression over
   :func:`rag.answer.gate.learned_gate.calibrated_features` (distances relative to
   the store's :class:`rag.answer.gate.calibration.Calibration`, lexical shares),
   fitted and validated leave-one-corpus-out (``docs/evaluation.md``);
4. the verdict (:class:`rag.types.Verdict`): ``answered`` at or above
   ``min_score``; ``mentions`` ("the documents mention this but may not
   answer it") from ``mention_score`` up; ``refused`` below it. A question
   in the mentions band whose nearest passage stands apart from the next
   four (:func:`stands_out`, issue 40) is answered: a user's question in
   their own words shares few of the passage's words (low coverage) but
   still finds one passage far closer than the rest;
5. the question's language against the documents' (:mod:`rag.language`):
   when they differ and the verdict is not ``answered``, the message says so
   instead of "nothing under the threshold" (``reason`` ``"language"``).

PUBLIC API: :class:`CalibratedGate` (the row of :data:`rag.answer.gate.gates.GATES`), :func:`apply_calibrated_gate`, :func:`collapse_duplicates`,
:func:`stands_out` (:data:`STANDOUT_GAP`),
:func:`calibrated_model`, :func:`verdict_for`, :func:`verdict_messages`,
:func:`mention_text`, :func:`language_refusal_text`, and for a store
:func:`store_calibration` / :func:`store_gate_stats` (kept by its index cache
per generation; the calibration also on disk, ``index/calibration-v1.g<N>.json``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from rag.answer.gate import (  # noqa: F401  (verdict texts re-exported)
    Evidence,
    GateContext,
    GateKnobs,
    GateResult,
    LanguageCheck,
    apply_gate,
    check_score_cut,
    language_refusal_text,
    mention_text,
    regate,
    score_refusal_text,
    scored_verdict,
    verdict_for,
    verdict_messages,
)
from rag.answer.gate.calibration import CALIBRATION_VERSION, Calibration, calibrate, distinct_indices, gate_term_stats
from rag.answer.gate.learned_gate import GateModel, calibrated_features
from rag.language import differs, main_languages
from rag.question import analyse
from rag.text import TermStats
from rag.types import GateKind, Hit, Verdict

#: The shipped calibrated model (fitted on both dev corpora; figures in docs/evaluation.md).
CALIBRATED_MODEL_PATH = Path(__file__).with_name("calibrated_gate.json")

_MODEL: GateModel | None = None

#: A "mentions" question is answered when its ``relative_gap`` (the 1st-to-5th nearest cosine distance gap over
#: the store's span, :func:`rag.answer.gate.learned_gate.calibrated_features`) is over this (issue 40). Chosen on
#: the course chapters as the most permissive value that answers none of their near out-of-domain queries
#: (the highest of those in the band: 0.31), held out on pdf-dev and real (docs/evaluation.md): users' answerable
#: questions answered +4 / -0 and +5 / -0, near out-of-domain answered 5 -> 5 of 10 and 4 -> 4 of 10.
STANDOUT_GAP = 0.35


#: The rule needs the next four to compare with: with fewer candidates ``relative_gap`` is the gap to the last one
#: (a store of two or three chunks), which was not measured.
STANDOUT_CANDIDATES = 5


def stands_out(features: Mapping[str, float], candidates: int) -> bool:
    """Whether the nearest passage stands apart from the next four: at least :data:`STANDOUT_CANDIDATES`
    ``candidates`` (distinct hits) and ``relative_gap`` over :data:`STANDOUT_GAP`."""
    return candidates >= STANDOUT_CANDIDATES and float(features.get("relative_gap", 0.0)) > STANDOUT_GAP


def calibrated_model() -> GateModel:
    """The shipped calibrated :class:`rag.answer.gate.learned_gate.GateModel`, loaded once per process."""
    global _MODEL
    if _MODEL is None:
        _MODEL = GateModel.load(CALIBRATED_MODEL_PATH)
    return _MODEL


def store_calibration(store) -> Calibration:
    """The gate's references for ``store`` (a :class:`rag.store.store.Store`), computed when its documents changed.

    Kept by the store's index cache with the current generation, on disk as
    ``index/calibration-v<version>.g<N>.json``, so it is re-run only after
    the documents change: about 2-3 s on a quiet 2-core machine for 1k chunks
    (one batched encode of at most 256 sentences); the documents' languages are
    the ones the store recorded (no detector is loaded for it).
    """
    def compute(table) -> str:
        return calibrate(table.contents, table.vectors, store.embedder.encode, encoder_key=store.model_name,
                         languages=table.languages).to_json()

    return store.index_cache.artifact(f"calibration-v{CALIBRATION_VERSION}", compute, Calibration.from_json)


def store_gate_stats(store) -> TermStats:
    """The gate's term statistics for ``store``: distinct chunk texts plus the unrelated bank (kept per generation)."""
    return store.index_cache.memo(
        "gate_term_stats", lambda t: gate_term_stats([t.texts[i] for i in distinct_indices(t.contents)]))


def collapse_duplicates(hits: Sequence[Hit], contents: Mapping[int, str]) -> tuple[list[Hit], dict[int, tuple[int, ...]]]:
    """Keep the first (best-ranked) of hits whose chunk ``content`` is identical (whitespace collapsed).

    ``contents`` maps chunk id -> quoted content. Returns the kept hits, in
    order, and ``{kept chunk id: (ids of the identical chunks dropped, ...)}``
    for the kept hits that had copies. Hits missing from ``contents`` are kept.
    """
    first: dict[str, int] = {}
    kept: list[Hit] = []
    dups: dict[int, list[int]] = {}
    for h in hits:
        c = contents.get(h.chunk_id)
        key = " ".join(c.split()) if c is not None else None
        if key is not None and key in first:
            dups.setdefault(first[key], []).append(h.chunk_id)
            continue
        if key is not None:
            first[key] = h.chunk_id
        kept.append(h)
    return kept, {k: tuple(v) for k, v in dups.items()}


def _why(f: Mapping[str, float], score: float, verdict: Verdict, min_score: float, mention_score: float,
         nearest: float | None, self_distance: float, far_distance: float, threshold: float | None = None) -> str:
    if verdict == Verdict.ANSWERED and score < min_score:  # answered by the passage that stands apart (issue 40)
        return (_why(f, score, Verdict.MENTIONS, min_score, mention_score, nearest, self_distance, far_distance)
                + f"; answered: the nearest passage stands apart from the next four (gap {f['relative_gap']:.2f} "
                  f"> {STANDOUT_GAP:.2f} on this store's scale)")
    near = f"nearest distance {nearest:.3f}" if nearest is not None else "no candidate"
    rel = (f" ({f['relative_distance']:.2f} on this store's scale: 0 = its own sentences at "
           f"{self_distance:.3f}, 1 = unrelated questions at {far_distance:.3f})")
    low = min(mention_score, min_score)
    cut = {Verdict.ANSWERED: f">= {min_score:.2f}", Verdict.MENTIONS: f"in [{mention_score:.2f}, {min_score:.2f})",
           Verdict.REFUSED: f"< {low:.2f}"}[verdict]
    if verdict == Verdict.REFUSED and score >= low:  # refused by the distance threshold, not by the score
        over = f" {threshold:g}" if threshold is not None else ""
        cut = f">= {low:.2f}, but no chunk is under the cosine distance threshold{over}"
    return (f"{near}{rel}, query words covered {f['coverage']:.0%} (best chunk {f['best_chunk_coverage']:.0%}), "
            f"unknown to the documents {f['unknown_terms']:.0%}; score {score:.2f} {cut}")


def apply_calibrated_gate(query: str, hits: Sequence[Hit], texts: Mapping[int, str],
                          contents: Mapping[int, str], stats: TermStats, calibration: Calibration, *,
                          threshold: float = 0.675, max_sources: int = 4, min_score: float | None = None,
                          mention_score: float | None = None, model: GateModel | None = None,
                          question_lang: tuple[str, float] | None | bool = True) -> GateResult:
    """The default gate's decision for ``query`` (see the module docstring); a :class:`rag.answer.gate.GateResult`.

    ``hits`` fused, best first; ``texts`` chunk id -> embedded text (for the
    lexical evidence), ``contents`` chunk id -> quoted content (for the
    duplicates) of at least the candidates; ``stats`` the store's
    :class:`rag.text.TermStats` (duplicates counted once); ``calibration``
    the store's references. ``min_score``/``mention_score`` default to the
    model's. ``question_lang``: ``True`` detects it, ``None``/``False`` skips
    the check, or pass ``(code, probability)``. Raises ``ValueError`` like
    :func:`rag.answer.gate.apply_gate`, or for a score cut outside [0, 1].
    """
    model = model or calibrated_model()
    cut = check_score_cut("min_score", model.default_min_score if min_score is None else min_score)
    default_mention = model.default_mention_score if model.default_mention_score is not None else cut
    mention = check_score_cut("mention_score", default_mention if mention_score is None else mention_score)
    kept, dups = collapse_duplicates(hits, contents)
    dist = apply_gate(query, kept, threshold, max_sources)
    f = calibrated_features(query, kept, texts, stats, calibration, top=max_sources)
    score = float(model.probability(f)) if kept else 0.0
    lang = analyse(query).language if question_lang is True else (question_lang or None)
    language = LanguageCheck(lang[0] if lang else None, round(lang[1], 3) if lang else None,
                             tuple(main_languages(calibration.languages)),
                             differs(lang[0] if lang else None, calibration.languages))
    decision = scored_verdict(query, score, cut, mention, dist, language, standout=stands_out(f, len(kept)))
    evidence = Evidence({k: round(float(v), 4) for k, v in f.items()}, score, calibration.self_distance,
                        calibration.far_distance, calibration.n_chunks, calibration.n_distinct)
    return replace(dist, kind=GateKind.CALIBRATED, why=_why(f, score, decision["verdict"], cut, mention,
                                                             dist.nearest_distance, calibration.self_distance,
                                                             calibration.far_distance, threshold),
                   evidence=evidence, language=language, duplicates=dups, **decision)


class CalibratedGate:
    """The calibrated gate as a row of :data:`rag.answer.gate.gates.GATES`: :func:`apply_calibrated_gate` over the
    texts and contents of every hit, the store's gate statistics and calibration (``model``: default the shipped
    one)."""

    kind: ClassVar[GateKind] = GateKind.CALIBRATED

    def __init__(self, model: GateModel | None = None):
        self._model = model

    def decide(self, query: str, hits: Sequence[Hit], knobs: GateKnobs, context: GateContext) -> GateResult:
        ids = [h.chunk_id for h in hits]
        return apply_calibrated_gate(query, hits, context.texts(ids), context.contents(ids), context.gate_stats(),
                                     context.calibration(), threshold=knobs.threshold, max_sources=knobs.max_sources,
                                     min_score=knobs.min_score, mention_score=knobs.mention_score, model=self._model)

    def regate(self, result: GateResult, knobs: GateKnobs) -> GateResult:
        """``result`` at ``knobs`` (both cuts), its ``why`` re-written at the new cuts from its evidence."""
        standout = result.evidence is not None and stands_out(result.evidence.features, len(result.candidates))
        r = regate(result, knobs.threshold, knobs.max_sources, knobs.min_score, knobs.mention_score, standout)
        ev = r.evidence
        if ev is None or r.score is None or ev.self_distance is None or ev.far_distance is None:
            return r
        mention = r.min_score if r.mention_score is None else r.mention_score
        return replace(r, why=_why(ev.features, r.score, r.verdict, r.min_score, mention, r.nearest_distance,
                                   ev.self_distance, ev.far_distance, r.threshold))

    def default_min_score(self) -> float:
        return float((self._model or calibrated_model()).default_min_score)

    def default_mention_score(self) -> float:
        """The lower cut its "mentions" band starts at (the shipped model's; its ``min_score`` when it has none)."""
        m = self._model or calibrated_model()
        return float(m.default_mention_score if m.default_mention_score is not None else m.default_min_score)
