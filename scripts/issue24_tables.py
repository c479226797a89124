"""Issue 24's tables from saved ``bench answers --json-out`` runs (no model, no store): per corpus, wording and
model, the verdicts with the share of right answers each (calibration), the confident wrong answers (shown as
supported, not right by the keys), the answers with no warning at all before issue 24 (the gate's "mentions"
banner was the only warning) that are wrong, and first-token p50; then the confident wrong answers listed.

The answers are read as saved (:meth:`rag.answer.record.Answer.from_json`: the verdict they were shown with);
with ``--rejudge`` each saved answer gets today's verdict (:func:`rag.answer.check.verdict.judge`, a pure
function of the answer: no model, no store). Usage::

    python scripts/issue24_tables.py [--rejudge] data/bench/a05-course.json data/bench/a05-pdf.json [...]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

from rag.answer.record import Answer
from rag.evaluation.bench.answers import Row
from rag.evaluation.bench.machine import percentile
from rag.types import AnswerVerdict, Verdict


def load(paths: list[str], rejudge: bool = False) -> dict[tuple[str, str], list[Row]]:
    """``{(corpus, model): rows}`` of every run in ``paths`` (``rejudge``: today's verdicts, not the saved ones)."""
    out: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for p in paths:
        for run in json.loads(Path(p).read_text(encoding="utf-8")):
            corpus, _, model = run["title"].partition(", ")
            model = "1.5B" if "1.5b" in model else "0.5B" if "0.5b" in model else model
            for x in run["rows"]:
                ak = tuple(tuple(g) for g in x["answer_keys"]) if x.get("answer_keys") else None
                a = Answer.from_json(x)
                if rejudge:
                    a = replace(a, saved_verdict=None)
                out[(corpus, model)].append(Row(x["key"], x["wording"], x["query"], x.get("needle"), ak, a))
    return out


def f(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.0%})" if n else "-"


def column(rows: list[Row]) -> dict[str, str]:
    n = len(rows)
    ans = [r for r in rows if r.answered]
    c: dict[str, str] = {"questions": str(n), "refused by the gate": str(n - len(ans)),
                         "key passage alone right": f(sum(r.kp_correct for r in ans), n),
                         "shown answer right": f(sum(r.shown_correct for r in ans), n)}
    for v in AnswerVerdict:
        got = [r for r in rows if r.a.judged.verdict == v]
        c[f"{v}: answers (right)"] = f"{len(got)} ({sum(r.shown_correct for r in got)})"
    sup = [r for r in rows if r.supported]
    c["right among supported"] = f(sum(r.shown_correct for r in sup), len(sup))
    c["confident wrong (supported, not right)"] = f(sum(r.confident_wrong for r in rows), n)
    quiet = [r for r in ans if r.a.gate_verdict != Verdict.MENTIONS]
    c["before-style: no warning and wrong (gate banner only)"] = f(sum(not r.shown_correct for r in quiet), n)
    c["right among no-warning (gate banner only)"] = f(sum(r.shown_correct for r in quiet), len(quiet))
    tt = [r.a.ttft_ms for r in ans if r.a.ttft_ms is not None]
    c["first token p50 / p95 ms"] = f"{percentile(tt, 50):.0f} / {percentile(tt, 95):.0f}" if tt else "-"
    kp = [r.a.key_passage.ms for r in ans if r.a.key_passage is not None]
    c["key passage ms p50 / max"] = f"{percentile(kp, 50):.0f} / {max(kp):.0f}" if kp else "-"
    return c


def main(paths: list[str]) -> None:
    rejudge = "--rejudge" in paths
    runs = load([p for p in paths if p != "--rejudge"], rejudge)
    cols: dict[str, dict[str, str]] = {}
    for (corpus, model), rows in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        for w in ("doc", "user"):
            sub = [r for r in rows if r.wording == w]
            if sub:
                cols[f"{corpus} {w} {model}"] = column(sub)
        ood = [r for r in rows if r.wording == "ood"]
        if ood:
            cols[f"{corpus} ood {model}"] = column(ood)
    for model in sorted({m for _, m in runs}):
        for w in ("doc", "user"):
            sub = [r for (c, m), rows in runs.items() if m == model for r in rows if r.wording == w]
            if sub and len({c for c, m in runs if m == model}) > 1:
                cols[f"both {w} {model}"] = column(sub)
    names = list(cols)
    metrics = list(next(iter(cols.values())))
    print("| metric | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for k in metrics:
        print(f"| {k} | " + " | ".join(cols[n].get(k, "") for n in names) + " |")
    print()
    for (corpus, model), rows in runs.items():
        for r in rows:
            if r.confident_wrong:
                keys = " + ".join("/".join(g) for g in r.answer_key) if r.answer_key else "(out of domain)"
                text = " ".join((r.a.judged.text or "").split())[:200]
                print(f"- {corpus} {model} {r.key} ({r.wording}): {text!r}  keys: {keys}")


if __name__ == "__main__":
    main(sys.argv[1:])
