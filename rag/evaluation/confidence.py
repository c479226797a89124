"""Issue 39 offline: each feature's separation, the combiner fitted leave-one-corpus-out, its reliability tables.

Input: the JSONL written by ``scripts/verdict_features.py`` (one row per query as run: ``corpus``, ``key``,
``wording`` ``doc`` / ``user`` / ``ood``, ``features``, ``feature_ms``, ``shown_correct``, the answer's full JSON),
or the ``--json-out`` files of ``bench answers`` (:func:`load_bench`: every answer judged again by today's claim
check and verdict rules; the features the answer's record holds, no model probe).

* :func:`feature_table`: per feature, its cost (ms, median per answer of its group) and its AUC for "shown answer
  right" per corpus and wording (answered in-domain queries; an AUC under 0.5 means the feature points the
  other way);
* :func:`loco`: for each corpus, a logistic regression (:class:`rag.answer.check.confidence.Combiner`) fitted on the
  others' answered in-domain queries, its probabilities on the left-out corpus, and the verdicts they give there
  (:func:`rag.answer.check.confidence.verdict_from`, the vetoes read from the saved answer);
* :func:`reliability`: per verdict, corpus and wording, answers and right ones with Wilson 95 % intervals;
  :func:`curve`: the coverage-precision curve of the combiner (answers at or above each probability: share of
  the answerable questions, share right).

``python -m rag.evaluation.confidence FILE [--write]`` prints all of it as Markdown (``--write`` saves the
combiner fitted on every corpus to :data:`rag.answer.check.confidence.COMBINER_PATH`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median

import numpy as np

from rag.answer.check.confidence import (
    COMBINER_PATH,
    FEATURES,
    GROUPS,
    Combiner,
    feature_matrix,
    verdict_from,
    vetoes,
)
from rag.answer.record import Answer
from rag.evaluation.metrics import wilson_interval
from rag.types import AnswerVerdict

#: The combiner's features: one per group of the issue (a-e), chosen before the fit (few rows: no selection).
COMBINER_FEATURES = ("lp_mean", "yn_score", "key_score", "nearest", "passed_share")
#: The same without the two model probes (a, b), whose passes cost 1.0-1.4 s each on 2 cores (over the issue's
#: 300 ms budget): what is left costs no model pass (``--features free``).
FREE_FEATURES = ("key_score", "kp_span", "nearest", "gate_score", "passed_share")
#: L2 strength (scikit-learn's ``C``) of the logistic regression.
C = 0.5

Echo = Callable[[str], None]


@dataclass
class Row:
    """One saved query: ``corpus``, ``key``, ``wording``, ``right`` (shown answer holds the key), ``features``,
    ``ms`` per group, ``vetoes`` (why it could not be supported, :func:`rag.answer.check.confidence.vetoes`), ``refused``."""

    corpus: str
    key: str
    wording: str
    right: bool
    features: dict
    ms: dict
    vetoes: tuple[str, ...]
    refused: bool
    answer_ms: float = 0.0
    rules_verdict: str = ""

    @property
    def answerable(self) -> bool:
        return self.wording != "ood"


def load(path: Path) -> list[Row]:
    """The rows of a ``scripts/verdict_features.py`` file (the last row of a repeated ``(corpus, key)`` wins)."""
    rows: dict[tuple[str, str], Row] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        a = Answer.from_json(d["answer"])
        rows[(d["corpus"], d["key"])] = Row(d["corpus"], d["key"], d["wording"], bool(d["shown_correct"]),
                                             d["features"], d.get("feature_ms") or {},
                                             tuple(vetoes(a)), bool(a.refused), float(d.get("answer_ms") or 0.0),
                                             str(d.get("verdict") or ""))
    return list(rows.values())


def load_bench(paths: Sequence[Path]) -> list[Row]:
    """The rows of ``bench answers --json-out`` files (one file per corpus or several corpora in one; the corpus is
    a run title's first word). Each answer is judged again by today's claim check and verdict rules
    (:func:`rag.evaluation.bench.answers.rescore_file`, the saved key passage kept); its features are those
    :func:`rag.answer.check.confidence.answer_features` reads from the record (the probes'
    :data:`rag.answer.check.confidence.NEUTRAL` values:
    no model pass, ``ms`` empty); ``right``: the shown answer holds an answer key (an out-of-domain query never
    is); ``rules_verdict``: the verdict today's rules give it. Raises ``OSError`` / ``ValueError`` on an
    unreadable file."""
    from rag.answer.check.confidence import answer_features
    from rag.evaluation.bench.answers import rescore_file

    rows: list[Row] = []
    for path in paths:
        for title, runs in rescore_file(Path(path), {}).items():
            corpus = title.split(",")[0].split()[0]
            for r in runs:
                a = r.a
                j = a.judged
                rows.append(Row(corpus, f"{r.key}/{r.wording}", r.wording, bool(r.answer_key) and r.shown_correct,
                                answer_features(a) if not a.refused else {}, {}, tuple(vetoes(a)), bool(a.refused),
                                0.0, str(j.verdict.value)))
    return rows


def auc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Area under the ROC curve (ties count half); ``None`` when one class is absent."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=bool)
    pos, neg = s[y], s[~y]
    if not len(pos) or not len(neg):
        return None
    gt = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(gt / (len(pos) * len(neg)))


def _cells(rows: Sequence[Row]) -> list[tuple[str, list[Row]]]:
    """The answered in-domain rows per corpus and wording, then all of them pooled (``all``)."""
    corpora = list(dict.fromkeys(r.corpus for r in rows))
    out = []
    for c in corpora:
        for w in ("doc", "user"):
            sub = [r for r in rows if r.corpus == c and r.wording == w and not r.refused]
            if sub:
                out.append((f"{c} {w}", sub))
    out.append(("all", [r for r in rows if r.answerable and not r.refused]))
    return out


def feature_table(rows: Sequence[Row], echo: Echo = print) -> None:
    """The feature table: group, cost (median ms per answer of its group), AUC per corpus and wording; a feature
    with one value in every answered in-domain row (a probe that did not run, a field the saved record lacks) is
    left out and named under the table."""
    cells = _cells(rows)
    cost = {}
    for g in ("a", "b", "cde"):
        vals = [r.ms.get(g) for r in rows if r.ms.get(g) is not None]
        cost[g] = f"{median(vals):.0f}" if vals else "-"
    echo("| feature | group | ms per answer (median, group) | " + " | ".join(n for n, _ in cells) + " |")
    echo("|---|---|---:|" + "---:|" * len(cells))
    pooled = cells[-1][1] if cells else []
    constant = [f for f in FEATURES if len({r.features.get(f) for r in pooled}) <= 1]
    for f in FEATURES:
        if f in constant:
            continue
        g = GROUPS[f]
        vals = []
        for _, sub in cells:
            a = auc([r.features[f] for r in sub], [r.right for r in sub])
            vals.append("-" if a is None else f"{a:.2f}")
        echo(f"| {f} | {g} | {cost['a' if g == 'a' else 'b' if g == 'b' else 'cde']} | " + " | ".join(vals) + " |")
    n = {name: f"{sum(r.right for r in sub)}/{len(sub)}" for name, sub in cells}
    echo("| (right / answered) | | | " + " | ".join(n[name] for name, _ in cells) + " |")
    if constant:
        echo(f"\n(left out, one value in every row, so not measured here: {', '.join(constant)})")


def fit(rows: Sequence[Row], names: Sequence[str] = COMBINER_FEATURES, c: float = C, **kw) -> Combiner:
    """A :class:`rag.answer.check.confidence.Combiner` fitted on the answered in-domain ``rows`` (standardised features,
    L2 logistic regression, scikit-learn's lbfgs)."""
    from sklearn.linear_model import LogisticRegression

    train = [r for r in rows if r.answerable and not r.refused]
    x = np.asarray(feature_matrix([r.features for r in train], names), dtype=float)
    y = np.asarray([r.right for r in train], dtype=int)
    mu, sd = x.mean(axis=0), x.std(axis=0)
    sd[sd == 0] = 1.0
    lr = LogisticRegression(C=c, max_iter=1000).fit((x - mu) / sd, y)
    return Combiner(tuple(names), tuple(float(w) for w in lr.coef_[0]), tuple(float(m) for m in mu),
                    tuple(float(s) for s in sd), float(lr.intercept_[0]), **kw)


@dataclass
class Judged:
    """One row with the left-out combiner's probability and the verdict it gives."""

    row: Row
    p: float | None
    verdict: AnswerVerdict


def judge(rows: Sequence[Row], comb: Combiner) -> list[Judged]:
    """Every row judged by ``comb`` (:func:`rag.answer.check.confidence.verdict_from`)."""
    out = []
    for r in rows:
        if r.refused:
            out.append(Judged(r, None, AnswerVerdict.REFUSED))
            continue
        p = comb.probability(r.features)
        out.append(Judged(r, p, verdict_from(p, r.vetoes, comb)))
    return out


def loco(rows: Sequence[Row], names: Sequence[str] = COMBINER_FEATURES, **kw) -> list[Judged]:
    """Leave-one-corpus-out: each corpus's rows judged by the combiner fitted on the other corpora."""
    out = []
    for c in dict.fromkeys(r.corpus for r in rows):
        comb = fit([r for r in rows if r.corpus != c], names, **kw)
        out += judge([r for r in rows if r.corpus == c], comb)
    return out


def _ci(k: int, n: int) -> str:
    if not n:
        return "-"
    lo, hi = wilson_interval(k, n)
    return f"{k}/{n} ({k / n:.0%}, {lo:.0%}-{hi:.0%})"


def reliability(judged: Sequence[Judged], echo: Echo = print) -> None:
    """Per corpus and wording: per verdict, answers (right, share, Wilson 95 %); and the near out-of-domain
    queries shown as supported."""
    groups = list(dict.fromkeys((j.row.corpus, j.row.wording) for j in judged))
    verdicts = list(AnswerVerdict)
    echo("| corpus | wording | n | " + " | ".join(f"{v} (right)" for v in verdicts) + " | supported share of answerable |")
    echo("|---|---|---:|" + "---|" * len(verdicts) + "---|")
    for c, w in groups:
        sub = [j for j in judged if j.row.corpus == c and j.row.wording == w]
        cells = []
        for v in verdicts:
            got = [j for j in sub if j.verdict == v]
            cells.append(_ci(sum(j.row.right for j in got), len(got)) if got else "0")
        sup = sum(j.verdict == AnswerVerdict.SUPPORTED for j in sub)
        echo(f"| {c} | {w} | {len(sub)} | " + " | ".join(cells) + f" | {sup}/{len(sub)} |")


def curve(judged: Sequence[Judged], echo: Echo = print, cuts: Sequence[float] = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)) -> None:
    """The coverage-precision curve: for each cut, the answerable queries whose probability is at or above it
    (coverage: their share of all answerable queries) and the share of them that are right, per wording."""
    echo("| P(right) at least | " + " | ".join(f"{w}: coverage, precision" for w in ("doc", "user")) + " |")
    echo("|---:|---|---|")
    for t in cuts:
        cells = []
        for w in ("doc", "user"):
            sub = [j for j in judged if j.row.wording == w]
            got = [j for j in sub if j.p is not None and j.p >= t]
            right = sum(j.row.right for j in got)
            cells.append(f"{len(got)}/{len(sub)} ({len(got) / max(1, len(sub)):.0%}), {_ci(right, len(got))}")
        echo(f"| {t:.2f} | " + " | ".join(cells) + " |")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m rag.evaluation.confidence", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", type=Path, nargs="+",
                    help="a scripts/verdict_features.py JSONL, or bench answers --json-out files (.json)")
    ap.add_argument("--write", action="store_true", help=f"save the combiner fitted on every corpus to {COMBINER_PATH}")
    ap.add_argument("--features", default=None,
                    help="the combiner's features: 'probes' (COMBINER_FEATURES; the default for a JSONL), 'free' "
                         "(FREE_FEATURES: no model pass; the default for bench answers files) or names separated by commas")
    args = ap.parse_args(argv)
    bench = all(f.suffix == ".json" for f in args.files)
    chosen = args.features or ("free" if bench else "probes")
    names = {"probes": COMBINER_FEATURES, "free": FREE_FEATURES}.get(chosen) or tuple(f for f in chosen.split(",") if f)
    unknown = [f for f in names if f not in FEATURES]
    if unknown:
        ap.error(f"unknown features: {', '.join(unknown)}")
    rows = load_bench(args.files) if bench else load(args.files[0])
    print(f"{len(rows)} rows: " + ", ".join(f"{c} {sum(r.corpus == c for r in rows)}" for c in dict.fromkeys(r.corpus for r in rows)))
    print("\n## Features\n")
    feature_table(rows)
    judged = loco(rows, names)
    print(f"\n(combiner features: {', '.join(names)})")
    print("\n## Today's rules on the same answers (the verdict each was shown with)\n")
    reliability([Judged(r, None, AnswerVerdict(r.rules_verdict)) for r in rows if r.rules_verdict])
    print("\n## Left out in turn: verdicts\n")
    reliability(judged)
    print("\n## Left out in turn: coverage and precision\n")
    curve(judged)
    if args.write:
        comb = fit(rows, names, fitted_on="course + pdf-dev + real, answered in-domain queries, both wordings")
        COMBINER_PATH.write_text(json.dumps(comb.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {COMBINER_PATH}")


if __name__ == "__main__":
    main()
