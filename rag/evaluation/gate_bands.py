"""What the gate decides against where the passage is (issue 40): the gate's bands by corpus, wording and rank.

For every question of a corpus in both wordings and its out-of-domain queries, :func:`collect` runs the product's
:func:`rag.answer.pipeline.search_and_gate` on a store holding the corpus (retrieval and the gate, no model) and
keeps a :class:`GateRecord`: the shipped gate's verdict (refused / mentions / answered) and score, the rank of the
answer's passage in the fused top 20, and the features the gate read (its evidence) beside candidate ones that
it does not read (:data:`CANDIDATE_FEATURES`: the best sentence unit's distance, the legs' agreement, margins to the
next document). Records are plain JSON (:func:`save` / :func:`load`), so the tables and the fits below are
re-run without a store.

* :func:`band_table` - per corpus and group (each wording, near, far) how many queries the gate refuses, gives
  "mentions" or answers, split by whether the passage is in the top 4 (the model's sources) or not;
* :func:`loco_compare` - a candidate feature set against the shipped one (relative distance + coverage), each
  fitted on ONE corpus with :mod:`rag.evaluation.loco`'s cut rule and applied unchanged to the others, with
  paired sign tests on the held-out answerable questions (passed to the model; answered outright);
* :func:`rescue_rule` / :func:`rescue_table` - a rule on top of the shipped gate: a question it would refuse is
  passed as "mentions" when one feature is past a cut; the cut chosen on one corpus (no near-OOD passed there
  that the gate refused), reported on the others.

``scripts/gate_bands.py`` prints them for the three corpora (``docs/evaluation.md``, issue 40).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from rag.evaluation import loco
from rag.evaluation.metrics import first_hit_rank, sign_test

#: Features a record carries beyond the gate's own evidence (none is read by the shipped gate).
CANDIDATE_FEATURES = ("unit_distance", "relative_unit_distance", "dense_first_fused_rank", "top_in_both_legs",
                      "rrf_margin", "distance_margin", "bm25_weight", "distance_gap_12")
#: The shipped calibrated gate's features (``rag/answer/gate/calibrated_gate.json``).
SHIPPED = ("relative_distance", "coverage")
#: Ranks at which a passage counts as among the model's sources.
TOP = 4
#: Rank given to a hit the dense leg did not return (its leg is 20 deep).
ABSENT_RANK = 21


@dataclass(frozen=True)
class GateRecord:
    """One query as the product gated it on one corpus's store.

    ``kind`` ``"in"`` (a dev question), ``"near"`` or ``"far"``; ``wording`` ``"doc"`` / ``"user"`` (in-domain)
    or ``"ood"``; ``rank`` the 1-based rank of the first fused hit whose content holds the needle (``None``: not in
    the top 20, or out of domain); ``verdict`` the shipped gate's (``answered`` / ``mentions`` / ``refused``),
    ``score`` its answerability score, ``nearest`` the nearest cosine distance (2.0 without hits); ``features``
    the gate's evidence and :data:`CANDIDATE_FEATURES`.
    """

    corpus: str
    key: str
    kind: str
    wording: str
    text: str
    rank: int | None
    verdict: str
    score: float
    nearest: float
    features: dict[str, float] = field(default_factory=dict)

    @property
    def top4(self) -> bool:
        """The passage is among the first :data:`TOP` fused hits (what the model would read, gate aside)."""
        return self.rank is not None and self.rank <= TOP

    @property
    def group(self) -> str:
        """Its column: the wording when in-domain, else ``near`` / ``far``."""
        return self.wording if self.kind == "in" else self.kind

    def as_gate_query(self) -> loco.GateQuery:
        """The record as :class:`rag.evaluation.loco.GateQuery` (feature set ``"cal"``)."""
        return loco.GateQuery(f"{self.corpus}:{self.key.split('/')[0]}", self.kind, self.wording, self.text,
                              self.kind == "in" and self.top4, self.nearest, {"cal": dict(self.features)})


# --------------------------------------------------------------------------- collecting (needs a store)


def candidate_features(hits: Sequence, doc_of: Mapping[int, str], unit_sim: Mapping[int, float], plan_weight: float,
                       relative) -> dict[str, float]:
    """:data:`CANDIDATE_FEATURES` of one query's fused ``hits`` (:class:`rag.types.Hit`, best first).

    ``doc_of`` chunk id -> document id; ``unit_sim`` chunk id -> its best sentence unit's cosine similarity to
    the question (chunks without units absent); ``plan_weight`` the BM25 list's weight in the fusion;
    ``relative`` the store's distance scale (:meth:`rag.answer.gate.calibration.Calibration.relative_distance`).
    ``unit_distance`` is the smallest of the top 4's own and unit distances; the margins compare the best hit
    with the best hit of another document (1.0 / the distance span when every hit is one document's).
    """
    head = list(hits[:TOP])
    if not head:
        return {"unit_distance": 2.0, "relative_unit_distance": relative(2.0), "dense_first_fused_rank": ABSENT_RANK,
                "top_in_both_legs": 0.0, "rrf_margin": 0.0, "distance_margin": 0.0, "bm25_weight": plan_weight,
                "distance_gap_12": 0.0}
    unit_d = min(min(h.cosine_distance, 1.0 - unit_sim.get(h.chunk_id, -1.0)) for h in head)
    dense_first = next((h.fused_rank for h in hits if h.dense_rank == 1), ABSENT_RANK)
    top = hits[0]
    both = float(top.dense_rank is not None and top.bm25_rank is not None and top.dense_rank <= 5
                 and top.bm25_rank <= 5)
    other = [h for h in hits if doc_of.get(h.chunk_id) != doc_of.get(top.chunk_id)]
    rrf_margin = (top.rrf_score - other[0].rrf_score) / top.rrf_score if other and top.rrf_score else 1.0
    dists = sorted(h.cosine_distance for h in hits if not math.isnan(h.cosine_distance))
    near_doc = min(hits, key=lambda h: h.cosine_distance)
    other_d = [h.cosine_distance for h in hits if doc_of.get(h.chunk_id) != doc_of.get(near_doc.chunk_id)]
    return {"unit_distance": float(unit_d), "relative_unit_distance": float(relative(unit_d)),
            "dense_first_fused_rank": float(dense_first), "top_in_both_legs": both, "rrf_margin": float(rrf_margin),
            "distance_margin": float(min(other_d) - dists[0]) if other_d else 1.0, "bm25_weight": float(plan_weight),
            "distance_gap_12": float(dists[1] - dists[0]) if len(dists) > 1 else 0.0}


def collect(store, corpus_name: str, questions: Path, ood: Path | None) -> list[GateRecord]:
    """Every query of one corpus through :func:`rag.answer.pipeline.search_and_gate` on ``store`` (which holds the
    corpus's documents): both wordings of each question, then the out-of-domain queries, as :class:`GateRecord`."""
    from rag.answer.gate.calibrated_gate import store_calibration
    from rag.answer.pipeline import search_and_gate
    from rag.evaluation.data import expand_queries, load_ood, load_questions

    cal = store_calibration(store)
    units = store.index_cache.units() if store.settings.unit_vectors else None
    items = [("in", str(q.wording), q.key, q.text, q.needle) for q in expand_queries(load_questions(questions))]
    if ood is not None and Path(ood).is_file():
        items += [(o.kind, "ood", o.id, o.query, None) for o in load_ood(ood)]
    out = []
    for kind, wording, key, text, needle in items:
        gate = search_and_gate(store, text)
        hits = list(gate.candidates)
        rows = store.chunks([h.chunk_id for h in hits])
        rank = first_hit_rank([r.content for r in rows], needle) if needle else None
        unit_sim = {}
        if units is not None and len(units) and hits:
            unit_sim = units.best(store.embedder.encode_query(text),
                                  allowed=np.asarray([h.chunk_id for h in hits[:TOP]], dtype=np.int64))
        feats = dict(gate.evidence.features) if gate.evidence is not None else {}
        feats |= candidate_features(hits, {r.chunk_id: r.document_id for r in rows}, unit_sim,
                                    gate.plan.bm25_weight if gate.plan else 1.0, cal.relative_distance)
        out.append(GateRecord(corpus_name, key, kind, wording, text, rank, str(gate.verdict),
                              float(gate.score or 0.0),
                              float(gate.nearest_distance) if gate.nearest_distance is not None else 2.0, feats))
    return out


def save(records: Iterable[GateRecord], path: Path) -> None:
    """One JSON object per record."""
    Path(path).write_text("".join(json.dumps(asdict(r)) + "\n" for r in records), encoding="utf-8")


def load(path: Path) -> list[GateRecord]:
    """The records :func:`save` wrote."""
    return [GateRecord(**json.loads(line)) for line in Path(path).read_text(encoding="utf-8").splitlines() if line]


# --------------------------------------------------------------------------- the bands


def band_counts(records: Sequence[GateRecord], verdicts: Sequence[str] | None = None) -> dict[str, int]:
    """``{"n", "refused", "mentions", "answered"}`` of ``records`` (``verdicts``: one per record, default each
    record's own)."""
    v = [r.verdict for r in records] if verdicts is None else list(verdicts)
    return {"n": len(v), **{k: sum(x == k for x in v) for k in ("refused", "mentions", "answered")}}


def band_table(records: Sequence[GateRecord], verdicts: Sequence[str] | None = None) -> list[str]:
    """Markdown rows: per corpus and group, the gate's refused / mentions / answered, for in-domain queries split
    into passage in the top 4 (answerable by the model) and not (the model cannot answer)."""
    v = [r.verdict for r in records] if verdicts is None else list(verdicts)
    lines = ["| corpus | group | passage | n | refused | mentions | answered |", "|---|---|---|---:|---:|---:|---:|"]
    for c in dict.fromkeys(r.corpus for r in records):
        for g in ("doc", "user", "near", "far"):
            idx = [i for i, r in enumerate(records) if r.corpus == c and r.group == g]
            if not idx:
                continue
            parts = ([("top 4", [i for i in idx if records[i].top4]), ("not in top 4", [i for i in idx if not records[i].top4])]
                     if g in ("doc", "user") else [("-", idx)])
            for name, ids in parts:
                b = band_counts([records[i] for i in ids], [v[i] for i in ids])
                lines.append(f"| {c} | {g} | {name} | {b['n']} | {b['refused']} | {b['mentions']} | {b['answered']} |")
    return lines


# --------------------------------------------------------------------------- candidates, leave one corpus out


@dataclass(frozen=True)
class HeldOut:
    """One feature set fitted on the corpora ``fit`` and applied unchanged to every other corpus: its cuts, and
    per held-out corpus the verdict of each of its records (in record order)."""

    fit: tuple[str, ...]
    names: tuple[str, ...]
    answer_cut: float
    mention_cut: float
    verdicts: dict[str, tuple[str, ...]]


def fit_and_apply(records: Sequence[GateRecord], fit: str | Sequence[str], names: Sequence[str],
                  c: float = loco.C) -> HeldOut:
    """``names`` fitted on the corpus (or corpora) ``fit`` (:func:`rag.evaluation.loco.run`: logistic regression,
    cuts from its leave-one-question-out probabilities) and applied unchanged to the other corpora's records."""
    fit = (fit,) if isinstance(fit, str) else tuple(fit)
    f = [r.as_gate_query() for r in records if r.corpus in fit]
    t = [r for r in records if r.corpus not in fit]
    run = loco.run(f, [r.as_gate_query() for r in t], "cal", names, c=c)
    v = loco.verdicts(run.test_probability, np.array([r.nearest for r in t]), run.answer_cut, run.mention_cut).tolist()
    per = {name: tuple(x for x, r in zip(v, t) if r.corpus == name) for name in dict.fromkeys(r.corpus for r in t)}
    return HeldOut(fit, tuple(names), run.answer_cut, run.mention_cut, per)


def outcome_cells(records: Sequence[GateRecord], verdicts: Sequence[str]) -> dict[str, str]:
    """Cells per group: in-domain with the passage in the top 4 as ``passed (answered) / n``; near and far as
    ``passed (answered) / n`` ("passed" = not refused: the model reads the sources)."""
    out = {}
    for g in ("doc", "user", "near", "far"):
        ids = [i for i, r in enumerate(records) if r.group == g and (r.kind != "in" or r.top4)]
        if ids:
            passed = sum(verdicts[i] != "refused" for i in ids)
            ans = sum(verdicts[i] == "answered" for i in ids)
            out[g] = f"{passed} ({ans}) / {len(ids)}"
    return out


def paired(records: Sequence[GateRecord], before: Sequence[str], after: Sequence[str], group: str,
           outcome: str) -> str:
    """Sign test of ``after`` against ``before`` on ``group``'s answerable records (passage in the top 4):
    ``outcome`` ``"passed"`` (not refused) or ``"answered"``; ``+wins/-losses p``."""
    ids = [i for i, r in enumerate(records) if r.group == group and r.top4]
    ok = (lambda v: v != "refused") if outcome == "passed" else (lambda v: v == "answered")
    t = sign_test([ok(after[i]) for i in ids], [ok(before[i]) for i in ids])
    return f"+{t.wins}/-{t.losses} p={t.p:.2f}"


def loco_compare(records: Sequence[GateRecord], candidates: Mapping[str, Sequence[str]],
                 fits: Sequence[str | Sequence[str]] | None = None, base: Sequence[str] = SHIPPED) -> list[str]:
    """Markdown rows: every candidate feature set against ``base``, each fitted on one corpus (or on the corpora of
    one entry of ``fits``; default each corpus alone) and applied to every other (cells :func:`outcome_cells`;
    sign tests :func:`paired` on both wordings, passed and answered)."""
    corpora = list(dict.fromkeys(r.corpus for r in records))
    lines = ["| features | fit -> test | cuts | doc top 4 passed (answered) | user top 4 passed (answered) | "
             "near passed (answered) | far passed | user passed vs base | user answered vs base | "
             "doc passed vs base | doc answered vs base |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for fit in fits if fits is not None else corpora:
        runs = {name: fit_and_apply(records, fit, names)
                for name, names in {"base: " + " + ".join(base): base, **candidates}.items()}
        b = next(iter(runs.values()))
        for test, before in b.verdicts.items():
            t = [r for r in records if r.corpus == test]
            for name, h in runs.items():
                after = h.verdicts[test]
                cells = outcome_cells(t, after)
                cmp = [paired(t, before, after, g, o) for g, o in
                       (("user", "passed"), ("user", "answered"), ("doc", "passed"), ("doc", "answered"))]
                lines.append(f"| {name} | {'+'.join(h.fit)} -> {test} | {h.mention_cut:.2f} / {h.answer_cut:.2f} | "
                             f"{cells.get('doc', '-')} | {cells.get('user', '-')} | {cells.get('near', '-')} | "
                             f"{cells.get('far', '-')} | " + " | ".join(cmp) + " |")
    return lines


# --------------------------------------------------------------------------- a rule on top of the shipped gate


#: What a rule on top of the shipped gate moves: a refused question (a chunk under the threshold) up to "mentions"
#: (it reaches the model), or a "mentions" up to "answered" (its answer may be shown as supported).
MOVES = {"refused": "mentions", "mentions": "answered"}


def rescue(records: Sequence[GateRecord], feature: str, cut: float, below: bool = True,
           band: str = "refused") -> list[str]:
    """The shipped verdicts, with each record in ``band`` (``refused``: only when a chunk is under the threshold,
    so a score refused it) moved one band up (:data:`MOVES`) when ``feature`` is under ``cut`` (``below``) or
    over it."""
    out = []
    for r in records:
        x = r.features.get(feature, math.nan)
        hit = (x < cut) if below else (x > cut)
        ok = r.verdict == band and (band != "refused" or r.nearest < loco.THRESHOLD)
        out.append(MOVES[band] if ok and hit else r.verdict)
    return out


def rescue_rule(records: Sequence[GateRecord], fit: str, feature: str, below: bool = True,
                band: str = "refused") -> float | None:
    """The cut of :func:`rescue` chosen on corpus ``fit``: the most permissive value that moves no out-of-domain
    query of ``fit`` (midway between the last in-domain value it moves and the first out-of-domain one, at most
    0.05 past the former); ``None`` when it would move no in-domain query either."""
    f = [r for r in records if r.corpus == fit and r.verdict == band and (band != "refused" or r.nearest < loco.THRESHOLD)]
    ood = [r.features[feature] for r in f if r.kind != "in"]
    ind = sorted(r.features[feature] for r in f if r.kind == "in")
    if below:
        cut = min(ood, default=math.inf)
        ok = [x for x in ind if x < cut]
        return (max(ok) + min(cut, max(ok) + 0.05)) / 2 if ok else None
    cut = max(ood, default=-math.inf)
    ok = [x for x in ind if x > cut]
    return (min(ok) + max(cut, min(ok) - 0.05)) / 2 if ok else None


def rescue_table(records: Sequence[GateRecord], features: Sequence[tuple[str, bool]], band: str = "refused") -> list[str]:
    """Markdown rows: each rule (feature, under / over), its cut chosen on one corpus, the shipped gate before /
    after on every corpus (the fit one marked), with sign tests on users' and documents' answerable questions
    (passed for ``band`` ``refused``, answered for ``mentions``)."""
    corpora = list(dict.fromkeys(r.corpus for r in records))
    outcome = "passed" if band == "refused" else "answered"
    lines = [f"| rule: {band} -> {MOVES[band]} when | fit | cut | corpus | doc top 4 passed (answered), before -> after | "
             "user top 4 passed (answered), before -> after | near passed (answered), before -> after | "
             f"far passed | user {outcome} vs before | doc {outcome} vs before |",
             "|---|---|---:|---|---|---|---|---|---|---|"]
    for feature, below in features:
        rule = f"{feature} {'<' if below else '>'} cut"
        for fit in corpora:
            cut = rescue_rule(records, fit, feature, below, band)
            if cut is None:
                lines.append(f"| {rule} | {fit} | - | | nothing to move | | | | | |")
                continue
            for test in corpora:
                t = [r for r in records if r.corpus == test]
                before, after = [r.verdict for r in t], rescue(t, feature, cut, below, band)
                cb, ca = outcome_cells(t, before), outcome_cells(t, after)
                mark = " (fit)" if test == fit else ""
                lines.append(f"| {rule} | {fit} | {cut:.3f} | {test}{mark} | "
                             f"{cb.get('doc')} -> {ca.get('doc')} | {cb.get('user')} -> {ca.get('user')} | "
                             f"{cb.get('near', '-')} -> {ca.get('near', '-')} | {ca.get('far', '-')} | "
                             f"{paired(t, before, after, 'user', outcome)} | {paired(t, before, after, 'doc', outcome)} |")
    return lines


# --------------------------------------------------------------------------- separation, threshold-free


def auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """P(a random ``pos`` scores over a random ``neg``), ties half (NaN when either is empty)."""
    p, n = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
    if not len(p) or not len(n):
        return math.nan
    return float((p[:, None] > n[None, :]).mean() + 0.5 * (p[:, None] == n[None, :]).mean())


def auc_table(records: Sequence[GateRecord], candidates: Mapping[str, Sequence[str]],
              fits: Sequence[str | Sequence[str]]) -> list[str]:
    """Markdown rows: per fit -> held-out corpus, each feature set's AUC of its held-out score for the answerable
    questions (passage in the top 4) of each wording against the near out-of-domain queries; the model fitted on
    the fit corpora's labelled queries (no cuts: what any cut can reach)."""
    from rag.answer.gate import learned_gate as lg

    names_of = {"base: " + " + ".join(SHIPPED): SHIPPED, **candidates}
    lines = ["| fit -> test | " + " | ".join(f"{k}: user / doc" for k in names_of) + " |",
             "|---|" + "---|" * len(names_of)]
    for fit in fits:
        fit = (fit,) if isinstance(fit, str) else tuple(fit)
        f = [r.as_gate_query() for r in records if r.corpus in fit]
        y = np.array([q.label for q in f])
        models = {k: lg.fit_gate_model(loco.matrix(f, "cal", v)[y >= 0], y[y >= 0], v, C=loco.C)
                  for k, v in names_of.items()}
        for test in dict.fromkeys(r.corpus for r in records if r.corpus not in fit):
            t = [r for r in records if r.corpus == test]
            cells = []
            for k, m in models.items():
                p = m.probability(loco.matrix([r.as_gate_query() for r in t], "cal", names_of[k]))
                near = [x for x, r in zip(p, t) if r.group == "near"]
                cells.append(" / ".join(f"{auc([x for x, r in zip(p, t) if r.group == w and r.top4], near):.2f}"
                                        for w in ("user", "doc")))
            lines.append(f"| {'+'.join(fit)} -> {test} | " + " | ".join(cells) + " |")
    return lines
