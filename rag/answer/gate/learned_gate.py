"""A learned refusal gate (issue 8): more evidence than the nearest cosine distance.

The design's gate (``rag.answer.gate.apply_gate``) refuses when no chunk is under a
cosine distance threshold. On the shared dev set near-topic out-of-domain
queries sit at nearest distances that overlap the answerable ones, so one
distance cannot separate them. This gate scores each query with a small
logistic regression over cheap signals computed from the retrieved hits:

==========================  ===============================================================
feature                     meaning
==========================  ===============================================================
``nearest_distance``        smallest cosine distance among the candidates
``gap_1_5``                 5th-smallest minus smallest candidate distance (list shape)
``missing_idf``             IDF of the rarest query term absent from the top 4 chunk texts
``unknown_terms``           share of query terms that occur nowhere in the corpus
``coverage``                IDF-weighted share of query terms found in the top 4 chunk texts
``best_chunk_coverage``     the same, for the single best-covering chunk of the top 4
``leg_overlap``             share of the dense top 5 also in the BM25 top 5
``bm25_norm``               best BM25 score / the query's summed term IDF (0 without BM25 hits)
==========================  ===============================================================

Terms are :func:`rag.text.tokenize` tokens (case-folded, stopwords
dropped); IDF is ``ln(1 + (N - df + 0.5) / (df + 0.5))`` over chunk texts.
Everything costs well under a millisecond per query on top of retrieval.

PUBLIC API (for the store, the CLI and the app)::

    stats = TermStats.from_texts(chunk_texts)               # rag.text.TermStats, once per index (chunk ``text``s)
    model = GateModel.load()                                 # the fitted coefficients (rag/answer/gate/learned_gate.json)
    f = gate_features(query, hits, texts, stats)             # hits: rag.types.Hit list, texts: id -> text
    model = default_model()                                  # the shipped model, loaded once per process
    result = apply_learned_gate(query, hits, texts, stats, threshold, max_sources, min_score)  # a GateResult
    LearnedGate().decide(query, hits, knobs, context)        # the same as a row of rag.answer.gate.gates.GATES

``min_score`` is the knob (the same name in settings, ``--min-score``, the
app and the JSON): LOWER answers more, HIGHER refuses more
(``model.default_min_score`` is the recommended value). A refusal never reaches
answer generation; :func:`refusal_text` gives its line.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from rag.answer.gate import (
    Evidence,
    GateContext,
    GateKnobs,
    GateResult,
    apply_gate,
    check_score_cut,
    regate,
    score_refusal_text,
    scored_verdict,
)
from rag.question import analyse
from rag.text import TermStats, tokenize  # noqa: F401  (TermStats re-exported)
from rag.types import GateKind, Hit

#: Where the fitted model ships (fitted on the shared dev set; see docs/evaluation.md).
DEFAULT_MODEL_PATH = Path(__file__).with_name("learned_gate.json")

FEATURES = ("nearest_distance", "gap_1_5", "missing_idf", "unknown_terms", "coverage", "best_chunk_coverage",
            "leg_overlap", "bm25_norm")


def _coverage(terms: Sequence[str], idf: dict[str, float], tokens: set[str]) -> float:
    total = sum(idf[t] for t in terms)
    return sum(idf[t] for t in terms if t in tokens) / total if total else 0.0


def gate_features(query: str, hits: Sequence, texts: Mapping[int, str], stats: TermStats,
                  top: int = 4) -> dict[str, float]:
    """The gate's features for one query (see the module table); ``hits`` in final rank order.

    ``texts`` maps a chunk id to its embedded ``text``, for at least the first ``top`` hits.
    A query without hits gets the features of "nothing found" (distance 2).
    """

    terms = analyse(query).ordered_terms
    idf = {t: stats.idf(t) for t in terms}
    dists = sorted(h.cosine_distance for h in hits if not math.isnan(h.cosine_distance))
    d1 = dists[0] if dists else 2.0
    d5 = dists[min(4, len(dists) - 1)] if dists else 2.0
    head = list(hits[:top])
    chunk_tokens = [set(tokenize(texts[h.chunk_id])) for h in head]
    union = set().union(*chunk_tokens) if chunk_tokens else set()
    missing = [idf[t] for t in terms if t not in union]
    dense5 = {h.chunk_id for h in sorted((h for h in hits if h.dense_rank), key=lambda h: h.dense_rank)[:5]}
    bm5 = {h.chunk_id for h in sorted((h for h in hits if h.bm25_rank), key=lambda h: h.bm25_rank)[:5]}
    bm_scores = [h.bm25_score for h in hits if h.bm25_score is not None]
    idf_sum = sum(idf.values())
    return {
        "nearest_distance": float(d1),
        "gap_1_5": float(d5 - d1),
        "missing_idf": float(max(missing)) if missing else 0.0,
        "unknown_terms": sum(1 for t in terms if stats.df.get(t, 0) == 0) / len(terms) if terms else 0.0,
        "coverage": _coverage(terms, idf, union),
        "best_chunk_coverage": max((_coverage(terms, idf, c) for c in chunk_tokens), default=0.0),
        "leg_overlap": len(dense5 & bm5) / 5.0 if dense5 and bm5 else 0.0,
        "bm25_norm": float(max(bm_scores) / idf_sum) if bm_scores and idf_sum else 0.0,
    }


#: The calibrated gate's features (issue 15): each one means the same on any store.
CALIBRATED_FEATURES = ("relative_distance", "relative_gap", "missing_specificity", "unknown_terms", "coverage",
                       "best_chunk_coverage", "leg_overlap", "bm25_norm")


def calibrated_features(query: str, hits: Sequence, texts: Mapping[int, str], stats: TermStats,
                        calibration, top: int = 4) -> dict[str, float]:
    """:func:`gate_features` re-expressed against the store's own references (issue 15).

    ``calibration`` is the store's :class:`rag.answer.gate.calibration.Calibration`.
    ``relative_distance``: the nearest cosine distance on the store's scale (0
    = like its own sentences, 1 = like unrelated questions);
    ``relative_gap``: the 1st-to-5th distance gap over the same span;
    ``missing_specificity``: the IDF of the rarest query term missing from the
    top chunks over the IDF of a term in no chunk (in [0, 1], so it does not
    grow with the store's size). The lexical shares (``unknown_terms``,
    ``coverage``, ``best_chunk_coverage``, ``leg_overlap``, ``bm25_norm``) are
    ratios already and are kept as they are. Keys: :data:`CALIBRATED_FEATURES`.
    """
    f = gate_features(query, hits, texts, stats, top=top)
    absent = stats.idf("\x00 no such term")
    return {
        "relative_distance": calibration.relative_distance(f["nearest_distance"]),
        "relative_gap": f["gap_1_5"] / calibration.span,
        "missing_specificity": f["missing_idf"] / absent if absent > 0 else 0.0,
        **{k: f[k] for k in ("unknown_terms", "coverage", "best_chunk_coverage", "leg_overlap", "bm25_norm")},
    }


def feature_matrix(rows: Sequence[Mapping[str, float]], names: Sequence[str] = FEATURES) -> np.ndarray:
    """``(len(rows), len(names))`` float64 matrix of the named features."""
    return np.array([[float(r[n]) for n in names] for r in rows], dtype=np.float64).reshape(len(rows), len(names))


#: The refusal line (``NO ANSWER: the sources do not seem to answer "<query>" (score 0.12 < 0.40)``).
refusal_text = score_refusal_text


@dataclass
class GateModel:
    """Standardised logistic regression over :data:`FEATURES`: ``p = sigmoid(b + sum w_i (x_i - mean_i) / scale_i)``.

    ``default_min_score`` the recommended ``min_score``; ``default_mention_score``
    the calibrated gate's lower cut (the ``mentions`` band, issue 15; ``None``
    for models without one); ``max_distance`` a
    hard ceiling: hits at or above it are never sources (2.0 = none dropped);
    ``info`` provenance (training set, cross-validated figures). Files written
    before issue 12 name the cut ``default_cut``; :meth:`load` reads both.
    """

    features: list[str]
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    default_min_score: float = 0.5
    max_distance: float = 2.0
    default_mention_score: float | None = None
    info: dict = field(default_factory=dict)

    def probability(self, feats: Mapping[str, float] | np.ndarray) -> np.ndarray | float:
        """P(answerable) for one feature dict (a float) or an ``(n, d)`` matrix (an ``(n,)`` float64 array)."""
        one = isinstance(feats, Mapping)
        x = feature_matrix([feats], self.features) if one else np.asarray(feats, dtype=np.float64)
        z = self.intercept + ((x - np.array(self.mean)) / np.array(self.scale)) @ np.array(self.coef)
        p = 1.0 / (1.0 + np.exp(-z))
        return float(p[0]) if one else p

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    def save(self, path: Path = DEFAULT_MODEL_PATH) -> Path:
        """Write the coefficients as JSON (atomically: temp name, then rename)."""
        path = Path(path)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(self.to_json(), encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path = DEFAULT_MODEL_PATH) -> "GateModel":
        """Read a model written by :meth:`save`. Raises ``FileNotFoundError`` / ``ValueError`` (names the file)."""
        path = Path(path)
        try:
            d = json.loads(path.read_text(encoding="utf-8"))
            if "default_cut" in d:  # written before issue 12
                d["default_min_score"] = d.pop("default_cut")
            m = cls(**d)
        except (TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"{path.name}: not a gate model ({e})") from e
        if not (len(m.features) == len(m.mean) == len(m.scale) == len(m.coef)):
            raise ValueError(f"{path.name}: feature, mean, scale and coef lengths differ")
        return m


def default_model() -> GateModel:
    """The shipped :class:`GateModel` (``rag/answer/gate/learned_gate.json``), loaded once per process."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = GateModel.load()
    return _DEFAULT


_DEFAULT: GateModel | None = None


# --------------------------------------------------------------------------- fitting


def fit_gate_model(X: np.ndarray, y: np.ndarray, names: Sequence[str] = FEATURES, *, C: float = 1.0) -> GateModel:
    """Fit the standardised logistic regression (scikit-learn, L2, ``C``, class-balanced) on ``X`` ((n, d)) and ``y`` (0/1)."""
    from sklearn.linear_model import LogisticRegression

    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale == 0] = 1.0
    lr = LogisticRegression(C=C, class_weight="balanced", max_iter=1000)
    lr.fit((X - mean) / scale, np.asarray(y, dtype=int))
    return GateModel(list(names), mean.tolist(), scale.tolist(), lr.coef_[0].tolist(), float(lr.intercept_[0]))


def cross_val_probabilities(X: np.ndarray, y: np.ndarray, groups: Sequence[str], *, C: float = 1.0,
                            names: Sequence[str] = FEATURES) -> np.ndarray:
    """Leave-one-group-out probabilities: each row scored by a model fitted without its group.

    Group both phrasings of a question together (and each OOD query alone),
    so no question is scored by a model that saw it. Rows labelled ``-1`` (an
    in-domain query whose needle is not among its sources: neither class) are
    scored but never fitted on; a fold left with fewer than two classes scores
    its rows 0.5 (undecided). Returns ``(n,)`` float64. The one cross-validation
    of the threshold sweeps (:mod:`rag.evaluation.sweeps`) and the
    leave-one-corpus-out fits (:mod:`rag.evaluation.loco`).
    """
    groups = np.asarray(groups)
    y = np.asarray(y)
    out = np.full(len(y), 0.5, dtype=np.float64)
    train = y >= 0
    for g in dict.fromkeys(groups.tolist()):
        test = groups == g
        fit = train & ~test
        if len(set(y[fit].tolist())) < 2:
            continue
        out[test] = fit_gate_model(X[fit], y[fit], names, C=C).probability(X[test])
    return out


# --------------------------------------------------------------------------- the default gate


def _why(f: Mapping[str, float], p: float, cut: float) -> str:
    """The learned gate's one line of evidence: nearest distance, lexical coverage, the score against ``cut``."""
    return (f"nearest distance {f['nearest_distance']:.3f}, lexical coverage {f['coverage']:.0%}"
            + (f" (rarest missing term idf {f['missing_idf']:.1f})" if f.get("missing_idf") else "")
            + f", score {p:.2f} {'<' if p < cut else '>='} cut {cut:.2f}")


def apply_learned_gate(query: str, hits: Sequence[Hit], texts: Mapping[int, str], stats: TermStats,
                       threshold: float = 0.675, max_sources: int = 4, min_score: float | None = None,
                       model: GateModel | None = None) -> GateResult:
    """The learned gate (issue 8): the distance gate, then an answerability score.

    Sources are exactly those of :func:`apply_gate` (at most ``max_sources``
    hits under the cosine-distance ``threshold``), so both knobs move the same
    way: a lower ``threshold`` or a higher ``min_score`` refuses more. When
    some chunk passes the distance cut but the learned model
    (:class:`GateModel`, default the shipped ``rag/answer/gate/learned_gate.json``) scores P(answerable) under
    ``min_score`` (default the model's recommended cut), the question is refused with
    :func:`rag.answer.gate.score_refusal_text`. ``texts`` maps chunk id -> embedded
    text for at least the first ``max_sources`` hits; ``stats`` the index's
    :class:`rag.text.TermStats`. The features and score are the result's :class:`rag.answer.gate.Evidence`.
    Costs about 1 ms. Raises ``ValueError`` like :func:`apply_gate`, or for ``min_score`` outside [0, 1].
    """
    model = model or default_model()
    dist = apply_gate(query, hits, threshold, max_sources)
    cut = check_score_cut("min_score", model.default_min_score if min_score is None else min_score)
    f = gate_features(query, hits, texts, stats, top=max_sources)
    p = float(model.probability(f)) if hits else 0.0
    return replace(dist, kind=GateKind.LEARNED, why=_why(f, p, cut), evidence=Evidence(f, p),
                   **scored_verdict(query, p, cut, None, dist))


class LearnedGate:
    """The learned gate as a row of :data:`rag.answer.gate.gates.GATES`: :func:`apply_learned_gate` over the texts of
    the first ``max_sources`` hits and the index's term statistics (``model``: default the shipped one)."""

    kind: ClassVar[GateKind] = GateKind.LEARNED

    def __init__(self, model: GateModel | None = None):
        self._model = model

    def decide(self, query: str, hits: Sequence[Hit], knobs: GateKnobs, context: GateContext) -> GateResult:
        texts = context.texts([h.chunk_id for h in hits[:knobs.max_sources]]) if hits else {}
        return apply_learned_gate(query, hits, texts, context.term_stats(), knobs.threshold, knobs.max_sources,
                                  knobs.min_score, self._model)

    def regate(self, result: GateResult, knobs: GateKnobs) -> GateResult:
        """``result`` at ``knobs``, its ``why`` re-written at the new cut (issue 42: it named the old one)."""
        r = regate(result, knobs.threshold, knobs.max_sources, knobs.min_score)
        if r.evidence is None or r.score is None or r.min_score is None:
            return r
        return replace(r, why=_why(r.evidence.features, r.score, r.min_score))

    def default_min_score(self) -> float:
        return float((self._model or default_model()).default_min_score)

    def default_mention_score(self) -> None:
        """None: the learned gate has no "mentions" band."""
        return None
