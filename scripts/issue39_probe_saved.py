"""Issue 39, feature (b) on saved answers: the yes/no probe over every answered query of ``bench answers --json-out``
files, and its separation per corpus, wording and verdict (measurement code, not product code).

For each answer that was not refused and has a key passage, judged again by today's rules
(:func:`rag.evaluation.bench.answers.rescore_file`), runs :func:`rag.answer.check.probes.yes_no` with the shipped
model: P("yes") that the key passage answers the question, debiased by the question-free baseline (``score``), and
P("yes") that the shown answer is right according to the key passage (``p_answer``). Prints the AUC of each for
"the shown answer holds an answer key" per corpus and wording, per verdict, the cost, and the split of the "may not
answer" answers at several cuts of ``p_answer``.

    .venv/bin/python scripts/issue39_probe_saved.py course.json pdf-dev.json real.json [--out rows.json]
    .venv/bin/python scripts/issue39_probe_saved.py --tables rows.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.evaluation.confidence import auc  # noqa: E402


def probe_rows(paths: list[Path]) -> list[dict]:
    """One dict per answered query with a key passage: corpus, key, wording, right, verdict, the probe's values."""
    from rag.answer.check.probes import probe_generator, yes_no
    from rag.evaluation.bench.answers import rescore_file
    from rag.settings import get_settings

    gen = probe_generator(get_settings())
    out = []
    for path in paths:
        for title, rows in rescore_file(path, {}).items():
            corpus = title.split(",")[0].split()[0]
            for r in rows:
                a = r.a
                kp = a.key_passage
                if a.refused or kp is None or not kp.sentences:
                    continue
                yn = yes_no(gen, a.query, kp.body or kp.text, a.judged.text)
                out.append(dict(corpus=corpus, key=r.key, wording=r.wording,
                                right=bool(r.answer_key) and r.shown_correct, verdict=str(a.judged.verdict.value),
                                score=yn.score, p_yes=yn.p_yes, p_answer=yn.p_answer, ms=yn.ms, tokens=yn.tokens))
                print(corpus, r.key, r.wording, out[-1]["verdict"], out[-1]["right"], f"{yn.score:.2f}",
                      f"{yn.p_answer or 0:.3f}", f"{yn.ms:.0f} ms", file=sys.stderr, flush=True)
    return out


def tables(rows: list[dict]) -> None:
    """The AUC table (markdown), the cost and the "may not answer" split."""
    def fmt(v):
        return "-" if v is None else f"{v:.2f}"

    ind = [r for r in rows if r["wording"] != "ood"]
    cells = [(f"{c} {w}", [r for r in ind if r["corpus"] == c and r["wording"] == w])
             for c in dict.fromkeys(r["corpus"] for r in ind) for w in ("doc", "user")]
    cells += [("all", ind)] + [(f"verdict {v}", [r for r in ind if r["verdict"] == v])
                                for v in ("supported", "partly_supported", "may_not_answer")]
    cells += [("may not answer, users' words", [r for r in ind if r["verdict"] == "may_not_answer" and r["wording"] == "user"])]
    print("| answers | n | right | AUC `yn_score` | AUC `p_yes` | AUC `p_answer` |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, rs in cells:
        if not rs:
            continue
        y = [r["right"] for r in rs]
        print(f"| {name} | {len(rs)} | {sum(y)} | {fmt(auc([r['score'] for r in rs], y))} "
              f"| {fmt(auc([r['p_yes'] for r in rs], y))} | {fmt(auc([r['p_answer'] for r in rs], y))} |")
    print(f"\ncost: {statistics.median(r['ms'] for r in rows):.0f} ms p50, {max(r['ms'] for r in rows):.0f} ms max, "
          f"{statistics.median(r['tokens'] for r in rows):.0f} tokens evaluated p50 ({len(rows)} answers)")
    mna = [r for r in ind if r["verdict"] == "may_not_answer"]
    for cut in (0.2, 0.25, 0.3):
        hi = [r for r in mna if r["p_answer"] >= cut]
        lo = [r for r in mna if r["p_answer"] < cut]
        print(f"may not answer, p_answer >= {cut}: {len(hi)} ({sum(r['right'] for r in hi)} right); "
              f"under: {len(lo)} ({sum(r['right'] for r in lo)} right)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="*", type=Path, help="bench answers --json-out files")
    ap.add_argument("--out", type=Path, help="save the rows here")
    ap.add_argument("--tables", type=Path, help="print the tables of saved rows (no model)")
    a = ap.parse_args()
    rows = json.loads(a.tables.read_text()) if a.tables else probe_rows(a.runs)
    if a.out:
        a.out.write_text(json.dumps(rows))
    tables(rows)


if __name__ == "__main__":
    main()
