"""Leave-one-corpus-out validation of refusal gates (issue 15): fit on one corpus, count on another.

A gate fitted and tuned on one collection is a gate for that collection. So
every gate is fitted, and its two cuts chosen, on ONE corpus only (its
probabilities there cross-validated leave-one-question-out, both wordings
held out together), then applied unchanged to the other corpus. On that other
corpus each query gets one of three verdicts (:class:`rag.types.Verdict`), and
the counts are kept per wording and per out-of-domain kind (near, far).

Cut rule (:func:`choose_cuts`), on the fitting corpus:
* answer cut: the lowest with at most ``near_share`` (20 %) of near-topic
  queries answered and no far one answered;
* mention cut: the highest, at most the answer cut, with at most
  ``refuse_share`` (2.5 %) of in-domain queries refused.

``scripts/gate_dump.py`` + ``scripts/gate_loco.py`` run it over the two dev
corpora (``docs/evaluation.md``, issue 15).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rag.answer.gate import learned_gate as lg

#: L2 strength of the logistic regression (as issue 8's gate).
C = 0.1

#: The distance threshold every gate keeps (design stage 7): no chunk under it, refused.
THRESHOLD = 0.675

#: The cut grid, 0.00 to 1.00 by 0.01.
GRID = np.round(np.arange(0.0, 1.0001, 0.01), 2)


@dataclass
class GateQuery:
    """One query as the gate saw it on one store.

    ``kind`` ``"in"`` (a dev question), ``"near"`` or ``"far"`` (out of
    domain); ``wording`` the question's wording (``course``/``ticket``,
    ``doc``/``user``) or ``"ood"``; ``answerable`` the needle is in the ungated
    top 4; ``nearest_distance`` the smallest cosine distance among the hits
    (2.0 without hits); ``features`` feature-set name -> feature dict.
    """

    id: str
    kind: str
    wording: str
    text: str
    answerable: bool
    nearest_distance: float
    features: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def group(self) -> str:
        """The column it is counted in: its wording when in-domain, else its kind."""
        return self.wording if self.kind == "in" else self.kind

    @property
    def label(self) -> int:
        """1 answerable, 0 out of domain, -1 in-domain but not retrieved (scored, never fitted on)."""
        return 1 if self.answerable else (0 if self.kind != "in" else -1)


def matrix(qs: Sequence[GateQuery], key: str, names: Sequence[str]) -> np.ndarray:
    """``(len(qs), len(names))`` float64 matrix of feature set ``key``."""
    return lg.feature_matrix([q.features[key] for q in qs], names)


def verdicts(p: np.ndarray, nearest: np.ndarray, answer_cut: float, mention_cut: float,
             threshold: float = THRESHOLD) -> np.ndarray:
    """Per query ``"answered"`` (``p >= answer_cut``), ``"mentions"`` (``p >= mention_cut``) or ``"refused"``;
    ``"refused"`` too when no chunk is under ``threshold``."""
    v = np.where(p >= answer_cut, "answered", np.where(p >= mention_cut, "mentions", "refused"))
    return np.where(nearest < threshold, v, "refused")


def choose_cuts(p: np.ndarray, qs: Sequence[GateQuery], grid: np.ndarray = GRID, near_share: float = 0.2,
                refuse_share: float = 0.025, threshold: float = THRESHOLD) -> tuple[float, float]:
    """``(answer cut, mention cut)`` by the module's rule, from probabilities ``p`` of ``qs``."""
    g = np.array([q.group for q in qs])
    d1 = np.array([q.nearest_distance for q in qs])
    near, far, ind = g == "near", g == "far", np.array([q.kind == "in" for q in qs])
    passes = d1 < threshold
    answer = next((float(a) for a in grid if ((p >= a) & passes)[near].mean() <= near_share
                   and not ((p >= a) & passes)[far].any()), 1.0)
    mention = max([float(r) for r in grid if r <= answer and ((p < r) | ~passes)[ind].mean() <= refuse_share],
                  default=0.0)
    return answer, mention


def verdict_table(qs: Sequence[GateQuery], v: np.ndarray) -> dict[str, tuple[int, int, int, int]]:
    """Column -> ``(n, answered, mentions, refused)``: each wording, ``near``, ``far``, then each wording
    restricted to the queries whose needle the ungated top 4 holds (``"<wording> (needle in top 4)"``)."""
    g = np.array([q.group for q in qs])
    rows = {}
    for k in dict.fromkeys(g.tolist()):
        c = Counter(v[g == k].tolist())
        rows[k] = (int((g == k).sum()), c["answered"], c["mentions"], c["refused"])
    ans = np.array([q.answerable for q in qs])
    for k in [w for w in dict.fromkeys(g.tolist()) if w not in ("near", "far")]:
        m = (g == k) & ans
        c = Counter(v[m].tolist())
        rows[f"{k} (needle in top 4)"] = (int(m.sum()), c["answered"], c["mentions"], c["refused"])
    return rows


@dataclass(frozen=True)
class LocoRun:
    """One gate fitted on one corpus and applied to another: its cuts, its model, and both corpora's scores."""

    answer_cut: float
    mention_cut: float
    model: lg.GateModel
    fit_probability: np.ndarray
    test_probability: np.ndarray


def run(fit: Sequence[GateQuery], test: Sequence[GateQuery], key: str, names: Sequence[str], c: float = C) -> LocoRun:
    """Fit on ``fit`` (cuts from its leave-one-question-out probabilities), score ``test`` unchanged."""
    xf, xt = matrix(fit, key, names), matrix(test, key, names)
    yf = np.array([q.label for q in fit])
    pcv = lg.cross_val_probabilities(xf, yf, [q.id for q in fit], C=c)
    answer, mention = choose_cuts(pcv, fit)
    model = lg.fit_gate_model(xf[yf >= 0], yf[yf >= 0], names, C=c)
    return LocoRun(answer, mention, model, pcv, model.probability(xt))
