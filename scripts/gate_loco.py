"""Leave-one-corpus-out validation of refusal gates (issue 15), from dumps written by scripts/gate_dump.py.

Usage: PYTHONPATH=. python scripts/gate_loco.py course.pkl pdf.pkl

Every gate is fitted and its cuts chosen on one corpus (cross-validated
within it, leave-one-question-out), then applied unchanged to the other.
"""

from __future__ import annotations

import pickle
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from rag.answer import learned_gate as lg
from rag.answer.calibration import calibrate, distinct_indices, gate_term_stats
from rag.answer.language import detect

C = 0.1
THRESHOLD = 0.675


def ws(s: str) -> str:
    return re.sub(r"\s+", " ", s)


def load(path, emb=None):
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
    for q in d["queries"]:
        q["answerable"] = q["kind"] == "in" and any(ws(q["needle"]) in ws(content[h.chunk_id]) for h in q["hits"][:4])
        q["d1"] = min(h.cosine_distance for h in q["hits"]) if q["hits"] else 2.0
        q["raw"] = lg.gate_features(q["text"], q["hits"], text, stats)
        q["cal"] = lg.calibrated_features(q["text"], q["hits"], text, stats, cal)
    return dict(d, text=text, content=content, cal=cal, stats=stats, name=Path(path).stem)


def label(q):
    return 1 if q["answerable"] else (0 if q["kind"] != "in" else -1)


def cv_probs(X, y, groups, C=C):
    out = np.full(len(y), 0.5)
    train = y >= 0
    for g in dict.fromkeys(groups):
        test = groups == g
        fit = train & ~test
        out[test] = lg.fit_gate_model(X[fit], y[fit], C=C).probability(X[test])
    return out


def verdicts(p, d1, A, R, threshold=THRESHOLD):
    v = np.where(p >= A, "answered", np.where(p >= R, "mentions", "refused"))
    return np.where(d1 < threshold, v, "refused")


def groups_of(qs):
    return np.array([q["wording"] if q["kind"] == "in" else q["kind"] for q in qs])


GRID = np.round(np.arange(0.0, 1.0001, 0.01), 2)


def choose_cuts(p, qs, grid=GRID, near_share=0.2, refuse_share=0.025):
    g = groups_of(qs)
    d1 = np.array([q["d1"] for q in qs])
    near, far, ind = g == "near", g == "far", np.array([q["kind"] == "in" for q in qs])
    A = next((a for a in grid if ((p >= a) & (d1 < THRESHOLD))[near].mean() <= near_share
              and not ((p >= a) & (d1 < THRESHOLD))[far].any()), 1.0)
    R = max([r for r in grid if r <= A and ((p < r) | (d1 >= THRESHOLD))[ind].mean() <= refuse_share], default=0.0)
    return float(A), float(R)


def table(qs, v):
    g = groups_of(qs)
    rows = {}
    for k in dict.fromkeys(g.tolist()):
        c = Counter(v[g == k].tolist())
        n = int((g == k).sum())
        rows[k] = (n, c["answered"], c["mentions"], c["refused"])
    ans = np.array([q["answerable"] for q in qs])
    for k in [w for w in dict.fromkeys(g.tolist()) if w not in ("near", "far")]:
        m = (g == k) & ans
        c = Counter(v[m].tolist())
        rows[k + " (needle in top 4)"] = (int(m.sum()), c["answered"], c["mentions"], c["refused"])
    return rows


def fmt(rows):
    return "; ".join(f"{k} {a}/{m}/{r} of {n}" for k, (n, a, m, r) in rows.items())


def matrix(qs, key, names):
    return lg.feature_matrix([q[key] for q in qs], names)


def run_lr(fit, test, key, names, C=C):
    Xf, Xt = matrix(fit["queries"], key, names), matrix(test["queries"], key, names)
    yf = np.array([label(q) for q in fit["queries"]])
    gf = np.array([q["id"] for q in fit["queries"]])
    pcv = cv_probs(Xf, yf, gf, C)
    A, R = choose_cuts(pcv, fit["queries"])
    m = lg.fit_gate_model(Xf[yf >= 0], yf[yf >= 0], names, C=C)
    pt = m.probability(Xt)
    return A, R, m, pcv, pt


def report(fit, test, name, A, R, pcv, pt):
    d1f = np.array([q["d1"] for q in fit["queries"]])
    d1t = np.array([q["d1"] for q in test["queries"]])
    print(f"\n## {name}: fitted on {fit['name']}, cuts answer >= {A:.2f}, mentions >= {R:.2f}")
    print(f"  on {fit['name']} (cross-validated): {fmt(table(fit['queries'], verdicts(pcv, d1f, A, R)))}")
    print(f"  on {test['name']} (held out):       {fmt(table(test['queries'], verdicts(pt, d1t, A, R)))}")


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
        d1 = np.array([q["d1"] for q in test["queries"]])
        print(row("distance 0.675 (design)", "-", test, "d < 0.675", two_verdicts(d1 < THRESHOLD)))
        pt = shipped.probability(matrix(test["queries"], "raw", shipped.features))
        print(row("issue 8 learned gate as shipped", "course", test, f">= {shipped.default_cut:g}",
                  two_verdicts((d1 < THRESHOLD) & (pt >= shipped.default_cut))))
        for key, names, nm in [("raw", lg.FEATURES, "issue-8 features, refitted"),
                               ("cal", lg.CALIBRATED_FEATURES, "8 calibrated features"),
                               ("cal", ("relative_distance",), "relative distance alone"),
                               ("cal", CHOSEN, "**relative distance + coverage (chosen)**")]:
            A, R, m, pcv, pt = run_lr(fit, test, key, names)
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
        for q in both["queries"]:
            q.setdefault("corpus", None)
        X = matrix(both["queries"], "cal", CHOSEN)
        y = np.array([label(q) for q in both["queries"]])
        grp = np.array([f"{i}" for i in (q["id"] for q in both["queries"])])
        pcv = cv_probs(X, y, grp)
        A, R = choose_cuts(pcv, both["queries"])
        model = lg.fit_gate_model(X[y >= 0], y[y >= 0], CHOSEN, C=C)
        model.default_cut, model.default_mention_score = A, R
        model.info = {"fitted_on": "both dev corpora: 13 course chapters and 8 PDFs (pdf-dev), "
                                   f"{int((y == 1).sum())} answerable and {int((y == 0).sum())} out-of-domain queries",
                      "features": "rag.answer.learned_gate.calibrated_features (store-relative, issue 15)",
                      "C": C, "cut_rule": "answer cut: lowest with near-topic answered <= 20% and no far one "
                      "(leave-one-question-out over both corpora); mention cut: highest with in-domain refused "
                      "<= 2.5%", "loco": loco,
                      "cv_both": {k: list(x) for k, x in table(both["queries"], verdicts(
                          pcv, np.array([q["d1"] for q in both["queries"]]), A, R)).items()}}
        model.save(save)
        print(f"\nsaved {save}: cuts mention {R:.2f} / answer {A:.2f}; coef",
              dict(zip(CHOSEN, np.round(model.coef, 3))), "intercept", round(model.intercept, 3))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--save=")]
    out = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--save=")), None)
    main(args[:2], out)
