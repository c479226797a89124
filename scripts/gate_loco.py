"""Leave-one-corpus-out validation of refusal gates (issue 15, :mod:`rag.evaluation.loco`), from dumps of scripts/gate_dump.py.

Usage: PYTHONPATH=. python scripts/gate_loco.py course.pkl pdf.pkl

Every gate is fitted and its cuts chosen on one corpus (cross-validated
within it, leave-one-question-out), then applied unchanged to the other.
"""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

import numpy as np

from rag.answer.gate import learned_gate as lg
from rag.answer.gate.calibrated_gate import calibrated_model
from rag.answer.gate.calibration import calibrate, distinct_indices, gate_term_stats
from rag.evaluation.loco import (
    THRESHOLD,
    C,
    GateQuery,
    choose_cuts,
    matrix,
    run,
    verdict_table,
    verdicts,
)
from rag.language import detect


def ws(s: str) -> str:
    return re.sub(r"\s+", " ", s)


def load(path, emb=None):
    """A dump of scripts/gate_dump.py as GateQuery records, with the raw (issue 8) and calibrated features."""
    d = pickle.load(open(path, "rb"))
    text = {r[0]: r[2] for r in d["chunks"]}
    content = {r[0]: r[3] for r in d["chunks"]}
    calp = Path(str(path) + ".cal")
    if calp.exists():
        cal = pickle.load(open(calp, "rb"))
    else:
        cal = calibrate([r[3] for r in d["chunks"]], d["vectors"], emb.encode, encoder_key=emb.name, detect=detect)
        pickle.dump(cal, open(calp, "wb"))
    keep = distinct_indices([r[3] for r in d["chunks"]])
    stats = gate_term_stats([d["chunks"][i][2] for i in keep])  # identical contents once + the bank, as the store does
    qs = []
    for q in d["queries"]:
        hits = q["hits"]
        qs.append(GateQuery(
            id=q["id"], kind=q["kind"], wording=q["wording"], text=q["text"],
            answerable=q["kind"] == "in" and any(ws(q["needle"]) in ws(content[h.chunk_id]) for h in hits[:4]),
            nearest_distance=min(h.cosine_distance for h in hits) if hits else 2.0,
            features={"raw": lg.gate_features(q["text"], hits, text, stats),
                      "cal": lg.calibrated_features(q["text"], hits, text, stats, cal)}))
    return {"queries": qs, "cal": cal, "name": Path(path).stem}


def table(qs, v):
    return verdict_table(qs, v)


CHOSEN = ("relative_distance", "coverage")


def row(name, fit, test, cuts, v):
    t = table(test["queries"], v)
    w = [k for k in t if k not in ("near", "far") and "needle" not in k]
    cells = [f"{t[k][1]}/{t[k][2]}/{t[k][3]}" for k in (*w, "near", "far")]
    return f"| {name} | {fit} -> {test['name']} | {cuts} | " + " | ".join(cells) + " |"


def two_verdicts(keep):
    return np.where(keep, "answered", "refused")


def main(paths, save=None):
    from rag.index.embed import get_embedder

    emb = get_embedder()
    corpora = [load(p, emb) for p in paths]
    print("| corpus | chunks | distinct | pseudo-queries | self distance (raw) | far distance (10th pct) | languages |")
    print("|---|---:|---:|---:|---|---|---|")
    for c in corpora:
        k = c["cal"]
        print(f"| {c['name']} | {k.n_chunks} | {k.n_distinct} | {k.n_pseudo} | {k.self_distance:.3f} ({k.self_distance_raw:.3f}) "
              f"| {k.far_distance:.3f} ({k.far_low:.3f}) | {k.languages} |")
    print("\nCells: answered / mentions / refused. Columns: the two wordings (all in-domain queries), near, far.\n")
    shipped = lg.default_model()
    loco = {}
    for fit, test in (corpora, corpora[::-1]):
        print(f"\n### fitted on {fit['name']}, tested on {test['name']}\n")
        print("| gate | fit -> test | cuts | " + " | ".join(
            k for k in table(test["queries"], np.array(["answered"] * len(test["queries"])))
            if "needle" not in k) + " |")
        print("|---|---|---|---|---|---|---|")
        d1 = np.array([q.nearest_distance for q in test["queries"]])
        print(row("distance 0.675 (design)", "-", test, "d < 0.675", two_verdicts(d1 < THRESHOLD)))
        pt = shipped.probability(matrix(test["queries"], "raw", shipped.features))
        print(row("issue 8 learned gate as shipped", "course", test, f">= {shipped.default_min_score:g}",
                  two_verdicts((d1 < THRESHOLD) & (pt >= shipped.default_min_score))))
        cg = calibrated_model()
        pc = cg.probability(matrix(test["queries"], "cal", cg.features))
        print(row("calibrated gate as shipped (default)", "both", test,
                  f"{cg.default_mention_score:.2f} / {cg.default_min_score:.2f}",
                  verdicts(pc, d1, cg.default_min_score, cg.default_mention_score)))
        for key, names, nm in [("raw", lg.FEATURES, "issue-8 features, refitted"),
                               ("cal", lg.CALIBRATED_FEATURES, "8 calibrated features"),
                               ("cal", ("relative_distance",), "relative distance alone"),
                               ("cal", CHOSEN, "**relative distance + coverage (chosen)**")]:
            r = run(fit["queries"], test["queries"], key, names)
            A, R, m, pt = r.answer_cut, r.mention_cut, r.model, r.test_probability
            v = verdicts(pt, d1, A, R)
            print(row(nm, fit["name"], test, f"{R:.2f} / {A:.2f}", v))
            if names == CHOSEN:
                loco[f"{fit['name']}->{test['name']}"] = {k: list(x) for k, x in table(test["queries"], v).items()}
                chosen = (fit, test, A, R, m, pt, d1)
        fit_, test_, A, R, m, pt, d1 = chosen
        print(f"\nSweep of the answer cut for the chosen gate (mention cut {R:.2f} fixed), held out on {test_['name']}:\n")
        t0 = table(test_["queries"], verdicts(pt, d1, A, R))
        w = [k for k in t0 if k not in ("near", "far") and "needle" not in k]
        print("| answer cut | " + " | ".join(f"{k} answered / refused (of {t0[k][0]})" for k in w)
              + f" | near answered (of {t0['near'][0]}) | far answered (of {t0['far'][0]}) |")
        print("|---:|" + "---|" * (len(w) + 2))
        for a in sorted({*np.round(np.arange(0.30, 0.801, 0.05), 2).tolist(), round(A, 2)}):
            t = table(test_["queries"], verdicts(pt, d1, max(a, R), R))
            mark = " **<- chosen on " + fit_["name"] + "**" if abs(a - A) < 1e-9 else ""
            print(f"| {a:.2f}{mark} | " + " | ".join(f"{t[k][1]} / {t[k][3]}" for k in w)
                  + f" | {t['near'][1]} | {t['far'][1]} |")
    if save:
        both = {"queries": corpora[0]["queries"] + corpora[1]["queries"], "name": "both"}
        X = matrix(both["queries"], "cal", CHOSEN)
        y = np.array([q.label for q in both["queries"]])
        grp = np.array([q.id for q in both["queries"]])
        pcv = lg.cross_val_probabilities(X, y, grp, C=C)
        A, R = choose_cuts(pcv, both["queries"])
        model = lg.fit_gate_model(X[y >= 0], y[y >= 0], CHOSEN, C=C)
        model.default_min_score, model.default_mention_score = A, R
        model.info = {"fitted_on": "both dev corpora: 13 course chapters and 8 PDFs (pdf-dev), "
                                   f"{int((y == 1).sum())} answerable and {int((y == 0).sum())} out-of-domain queries",
                      "features": "rag.answer.gate.learned_gate.calibrated_features (store-relative, issue 15)",
                      "C": C, "cut_rule": "answer cut: lowest with near-topic answered <= 20% and no far one "
                      "(leave-one-question-out over both corpora); mention cut: highest with in-domain refused "
                      "<= 2.5%", "loco": loco,
                      "cv_both": {k: list(x) for k, x in table(both["queries"], verdicts(
                          pcv, np.array([q.nearest_distance for q in both["queries"]]), A, R)).items()}}
        model.save(save)
        print(f"\nsaved {save}: cuts mention {R:.2f} / answer {A:.2f}; coef",
              dict(zip(CHOSEN, np.round(model.coef, 3))), "intercept", round(model.intercept, 3))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--save=")]
    out = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--save=")), None)
    main(args[:2], out)
