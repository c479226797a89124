"""Issue 27 on the product itself: stores built with ``rag ingest``, searched and gated through ``rag.answer``.

    nice -n 10 .venv/bin/python scripts/issue27_product.py recall COURSE_STORE PDF_STORE
    nice -n 10 .venv/bin/python scripts/issue27_product.py rerank COURSE_STORE PDF_STORE [--limit N]
    nice -n 10 .venv/bin/python scripts/issue27_product.py crosslang COURSE_STORE [--check N]

``recall`` prints today's figures per corpus and wording (R@1/4/8/20, MRR, the misses at R@4): ``Store.search``
as the app and the CLI search. ``rerank`` runs the model re-rank (:mod:`rag.answer.rerank`, the listwise
selector of :mod:`rag.answer.listwise`) on every question the gate passes and keeps the model's scores
(``~/.cache/rag/issue27/rerank-<corpus>.json``, resumable), then reports every condition and weight against
today with sign tests, the leave-one-corpus-out choice, and the cost. ``crosslang`` searches the 40
German/French course questions as asked and as translated by :mod:`rag.answer.translate` (``--check N``: the
first N translations are made by the product's generator and compared with the cached ones). Correct = a
returned chunk's ``content`` holds the whole needle (whitespace collapsed). Measurement code, not product code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rag.answer.pipeline import search_and_gate  # noqa: E402
from rag.answer.rerank import (  # noqa: E402
    RERANK_ITEM_TOKENS,
    eligible,
    reorder,
    rerank_items,
)
from rag.evaluation.metrics import sign_test  # noqa: E402
from rag.store.store import Store  # noqa: E402
from rag.types import Hit  # noqa: E402

SHARED = HERE.parent.parent / "shared"
CACHE = Path(os.environ.get("RAG_ISSUE27_CACHE", Path.home() / ".cache" / "rag" / "issue27"))
QUESTIONS = {"course": (SHARED / "corpus" / "dev_questions.jsonl", ("query_course", "query_ticket")),
             "pdf": (SHARED / "corpus" / "pdf-dev" / "questions.jsonl", ("query_doc", "query_user"))}
WORDING = {"query_course": "doc", "query_ticket": "user", "query_doc": "doc", "query_user": "user"}


def ws(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def load_questions(corpus: str) -> list[dict]:
    path, keys = QUESTIONS[corpus]
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            for k in keys:
                out.append({"id": q["id"], "wording": WORDING[k], "text": q[k], "needle": ws(q["needle"])})
    return out


def rank_of(ids: list[int], contents: dict[int, str], needle: str) -> int | None:
    for i, c in enumerate(ids, start=1):
        if needle in contents[c]:
            return i
    return None


def contents_of(store: Store, ids) -> dict[int, str]:
    return {r.chunk_id: ws(r.content) for r in store.chunks(sorted(set(ids)))}


def metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    at = lambda k: sum(1 for r in ranks if r is not None and r <= k) / n  # noqa: E731
    return {"R@1": at(1), "R@4": at(4), "R@8": at(8), "R@20": at(20), "MRR": sum(1 / r for r in ranks if r) / n}


def hits_at(ranks, k):
    return [r is not None and r <= k for r in ranks]


def sign(a, b, k) -> str:
    t = sign_test(hits_at(a, k), hits_at(b, k))
    return f"+{t.wins}/-{t.losses} p={t.p:.2f}" if t.wins + t.losses else "+0/-0"


def load_avg() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


# --------------------------------------------------------------------------- today


def search_all(store: Store, corpus: str) -> list[dict]:
    """Every question of ``corpus`` searched (``Store.search``, k 20) and gated as the product does."""
    qs = load_questions(corpus)
    for q in qs:
        t0 = time.perf_counter()
        gate = search_and_gate(store, q["text"])
        q["gate_ms"] = (time.perf_counter() - t0) * 1000
        q["search"] = [h.chunk_id for h in store.search(q["text"], k=20)]
        q["refused"], q["verdict"] = gate.refused, str(gate.verdict)
        q["bm25_weight"] = gate.plan.bm25_weight if gate.plan else 1.0
        q["pool"] = [h.chunk_id for h in eligible(gate)]
        q["_gate"] = gate
    cont = contents_of(store, [c for q in qs for c in q["search"]])
    for q in qs:
        q["rank"] = rank_of(q["search"], cont, q["needle"])
    return qs


def recall(stores: dict[str, str]) -> dict[str, list[dict]]:
    out = {}
    print(f"load {load_avg()}")
    for corpus, path in stores.items():
        qs = search_all(Store(path), corpus)
        out[corpus] = qs
        for w in ("doc", "user"):
            rs = [q["rank"] for q in qs if q["wording"] == w]
            m = metrics(rs)
            miss = [f"{q['id']}={q['rank']}" for q in qs if q["wording"] == w and not (q["rank"] and q["rank"] <= 4)]
            print(f"| {corpus} | {w} | " + " | ".join(f"{m[k]:.3f}" for k in ("R@1", "R@4", "R@8", "R@20", "MRR"))
                  + f" | {' '.join(miss)} |")
        verdicts = {}
        for q in qs:
            verdicts.setdefault(q["wording"], []).append(q["verdict"])
        print(f"  {corpus} gate verdicts: " + "; ".join(
            f"{w}: {v.count('answered')}/{v.count('mentions')}/{v.count('refused')}" for w, v in verdicts.items()))
    return out


# --------------------------------------------------------------------------- model re-rank (item 2)


def run_rerank(stores: dict[str, str], limit: int | None, max_weight: float = 1.0) -> None:
    """Score with the model the questions the gate passes whose BM25 weight is under ``max_weight`` (1.0: every
    question BM25 did not fully cover; 1.01: all), then :func:`report_rerank`."""
    from rag.answer.listwise import listwise_scores, selector_generator
    from rag.settings import get_settings

    CACHE.mkdir(parents=True, exist_ok=True)
    gen = selector_generator(get_settings())
    data = recall(stores)
    for corpus, qs in data.items():
        store = Store(stores[corpus])
        path = CACHE / f"rerank-{corpus}.json"
        done = json.loads(path.read_text()) if path.exists() else {}
        todo = [q for q in qs if not q["refused"] and len(q["pool"]) > 1 and q["bm25_weight"] < max_weight
                and f"{q['id']}|{q['wording']}" not in done]
        for i, q in enumerate(todo[:limit] if limit else todo):
            pool_hits = eligible(q["_gate"])
            items = rerank_items(store, q["text"], pool_hits)
            t0 = time.perf_counter()
            res = listwise_scores(q["text"], items, gen, orders=2, max_item_tokens=RERANK_ITEM_TOKENS)
            done[f"{q['id']}|{q['wording']}"] = {
                "pool": q["pool"], "per_order": res.per_order.tolist(), "ms": res.ms,
                "wall_ms": (time.perf_counter() - t0) * 1000, "prompt_tokens": list(res.prompt_tokens),
                "load": os.getloadavg()[0]}
            path.write_text(json.dumps(done))
            print(f"[{corpus} {i + 1}/{len(todo)}] {q['id']} {q['wording']} {res.ms:.0f} ms "
                  f"tokens {res.prompt_tokens} load {os.getloadavg()[0]:.1f}", file=sys.stderr)
    report_rerank(stores, data)


def reranked_rank(q: dict, scores: np.ndarray, weight: float, cont: dict[int, str]) -> int | None:
    pool = q["pool"]
    hits = [Hit(c, i + 1, i + 1, 0.0, 0.0) for i, c in enumerate(pool)]
    order = [h.chunk_id for h in reorder(hits, scores, weight)]
    ids = order + [c for c in q["search"] if c not in set(pool)]
    return rank_of(ids, cont, q["needle"])


WEIGHTS = (0.25, 0.5, 1.0, 2.0, 4.0, 1000.0)
BELOW = (1.0, 0.75, 0.5, 0.25, 0.01)  # bm25 weight under this: re-rank (1.0 = every question BM25 did not cover)


def candidate_ranks(data, scored, weight, below, orders) -> dict[tuple, int | None]:
    out = {}
    for corpus, qs in data.items():
        cont = scored[corpus]["contents"]
        for q in qs:
            key = f"{q['id']}|{q['wording']}"
            s = scored[corpus]["done"].get(key)
            if s is None or q["bm25_weight"] >= below:
                out[(corpus, q["id"], q["wording"])] = q["rank"]
                continue
            per = np.asarray(s["per_order"], dtype=np.float64)
            sc = per[0] if orders == 1 else per.mean(axis=0)
            out[(corpus, q["id"], q["wording"])] = reranked_rank(q, sc, weight, cont)
    return out


def report_rerank(stores: dict[str, str], data: dict[str, list[dict]]) -> None:
    scored = {}
    for corpus, qs in data.items():
        path = CACHE / f"rerank-{corpus}.json"
        done = json.loads(path.read_text()) if path.exists() else {}
        store = Store(stores[corpus])
        scored[corpus] = {"done": done, "contents": contents_of(store, [c for q in qs for c in q["search"]])}
    today = {(c, q["id"], q["wording"]): q["rank"] for c, qs in data.items() for q in qs}
    keys = sorted(today)
    n_run = {c: sum(1 for q in qs if f"{q['id']}|{q['wording']}" in scored[c]["done"]) for c, qs in data.items()}
    print(f"\nquestions scored by the model: {n_run}")
    print("\n| condition (BM25 weight <) | orders | weight | runs on | users' R@4 course/pdf | docs' R@4 course/pdf "
          "| users' R@1 | MRR all | users' R@4 vs today | docs' R@4 vs today | R@1 vs today (all) |")
    print("|---|---:|---:|---:|---|---|---:|---:|---|---|---|")
    results = {}
    for below in BELOW:
        for orders in (1, 2):
            for w in WEIGHTS:
                cand = candidate_ranks(data, scored, w, below, orders)
                results[(below, orders, w)] = cand
                runs = sum(1 for c, qs in data.items() for q in qs
                           if f"{q['id']}|{q['wording']}" in scored[c]["done"] and q["bm25_weight"] < below)

                def sel(corpus=None, wording=None, src=cand):
                    return [src[k] for k in keys if (corpus is None or k[0] == corpus)
                            and (wording is None or k[2] == wording)]
                u4 = "/".join(f"{metrics(sel(c, 'user'))['R@4']:.3f}" for c in ("course", "pdf"))
                d4 = "/".join(f"{metrics(sel(c, 'doc'))['R@4']:.3f}" for c in ("course", "pdf"))
                tu = [today[k] for k in keys if k[2] == "user"]
                td = [today[k] for k in keys if k[2] == "doc"]
                ta = [today[k] for k in keys]
                print(f"| {below:g} | {orders} | {w:g} | {runs} | {u4} | {d4} | {metrics(sel(None, 'user'))['R@1']:.3f} "
                      f"| {metrics(sel())['MRR']:.3f} | {sign(sel(None, 'user'), tu, 4)} | {sign(sel(None, 'doc'), td, 4)} "
                      f"| {sign(sel(), ta, 1)} |")
    tu = [today[k] for k in keys if k[2] == "user"]
    print("\ntoday: users' R@4 course/pdf " + "/".join(
        f"{metrics([today[k] for k in keys if k[0] == c and k[2] == 'user'])['R@4']:.3f}" for c in ("course", "pdf"))
          + f", users' R@1 {metrics(tu)['R@1']:.3f}, MRR all {metrics([today[k] for k in keys])['MRR']:.3f}")
    # leave one corpus out: choose (below, orders, weight) on one corpus by users' R@4, then R@1, then MRR
    for fit, test in (("course", "pdf"), ("pdf", "course")):
        def score(cfg, corpus):
            cand = results[cfg]
            u = [cand[k] for k in keys if k[0] == corpus and k[2] == "user"]
            a = [cand[k] for k in keys if k[0] == corpus]
            m, ma = metrics(u), metrics(a)
            return (round(m["R@4"], 4), round(ma["R@1"], 4), round(ma["MRR"], 4))
        best = max(results, key=lambda cfg: (score(cfg, fit), -cfg[2]))
        cand = results[best]
        for w in ("user", "doc"):
            t = [today[k] for k in keys if k[0] == test and k[2] == w]
            c = [cand[k] for k in keys if k[0] == test and k[2] == w]
            mt, mc = metrics(t), metrics(c)
            print(f"LOCO fit {fit} -> {test} {w}: chosen below {best[0]:g} orders {best[1]} weight {best[2]:g}: "
                  f"R@1 {mt['R@1']:.3f}->{mc['R@1']:.3f} R@4 {mt['R@4']:.3f}->{mc['R@4']:.3f} "
                  f"MRR {mt['MRR']:.3f}->{mc['MRR']:.3f}; R@4 {sign(c, t, 4)}, R@1 {sign(c, t, 1)}")
    ms = [s["ms"] for c in scored.values() for s in c["done"].values()]
    toks = [sum(s["prompt_tokens"]) for c in scored.values() for s in c["done"].values()]
    loads = [s["load"] for c in scored.values() for s in c["done"].values()]
    if ms:
        print(f"\ncost per re-ranked question (2 orders): {statistics.median(ms):.0f} ms p50, {max(ms):.0f} max; "
              f"prompt tokens read (both orders, prefix excluded) p50 {statistics.median(toks):.0f}, max {max(toks)}; "
              f"load {min(loads):.1f}-{max(loads):.1f}")


# --------------------------------------------------------------------------- other-language questions (item 5)


def crosslang(store_path: str, check: int) -> None:
    from rag.answer import translate as tr
    from rag.answer.calibrated_gate import store_calibration
    from rag.answer.pipeline import gated_sources
    from rag.settings import get_settings

    store = Store(store_path)
    needles = {q["id"]: q["needle"] for q in load_questions("course")}
    rows = [json.loads(x) for x in (HERE.parent / "tests/evaluation/fixtures/crosslang_course.jsonl").read_text()
            .splitlines() if x.strip()]
    cached = Path.home() / ".cache" / "rag" / "issue19" / "llm-translate-qwen2.5-coder-0.5b-instruct-q4_k_m.json"
    done = json.loads(cached.read_text()) if cached.exists() else {}
    langs = store_calibration(store).languages
    print(f"load {load_avg()}; documents' languages {langs}")
    prod_path = CACHE / "translate-product.json"
    prod = json.loads(prod_path.read_text()) if prod_path.exists() else {}
    if check:
        gen = tr.translation_generator(get_settings())
        for r in rows[:check]:
            if r["query"] not in prod:
                t0 = time.perf_counter()
                out = gen.complete(tr.translation_messages(r["query"], "en"), tr.TRANSLATE_MAX_TOKENS)
                prod[r["query"]] = {"out": out, "ms": (time.perf_counter() - t0) * 1000, "load": os.getloadavg()[0],
                                    "prompt_tokens": len(gen.prompt_tokens(tr.translation_messages(r["query"]))[1]),
                                    "generated": gen.count_tokens(out)}
                CACHE.mkdir(parents=True, exist_ok=True)
                prod_path.write_text(json.dumps(prod, ensure_ascii=False, indent=1))
            p, same = prod[r["query"]], done.get(r["query"], {}).get("out")
            print(f"check {r['id']} {r['lang']}: {p['ms']:.0f} ms (load {p['load']:.1f}) product {p['out']!r} | "
                  f"cached {same!r} | {'identical' if same == p['out'] else 'DIFFERENT'}")
        done = {**done, **prod}  # the product's own translations where it made them
        ms = [prod[r["query"]]["ms"] for r in rows[:check]]
        print(f"product translations: {len(ms)}, {statistics.median(ms):.0f} ms p50, prompt tokens p50 "
              f"{statistics.median(prod[r['query']]['prompt_tokens'] for r in rows[:check])}, written p50 "
              f"{statistics.median(prod[r['query']]['generated'] for r in rows[:check])}")

    class Cached:
        def complete(self, messages, max_tokens):
            return done[messages[-1]["content"]]["out"]

    asked, translated, plans = [], [], []
    for r in rows:
        if r["query"] not in done:
            print(f"no cached translation for {r['id']} {r['lang']}; skipped")
            continue
        needle = needles[r["id"]]
        hits = store.search(r["query"], k=20)
        cont = contents_of(store, [h.chunk_id for h in hits])
        asked.append(rank_of([h.chunk_id for h in hits], cont, needle))
        gate, _, _ = gated_sources(store, r["query"], get_translator=lambda: Cached())
        plans.append(gate.plan)
        hits = store.search(gate.query, k=20)
        cont = contents_of(store, [h.chunk_id for h in hits])
        translated.append(rank_of([h.chunk_id for h in hits], cont, needle))
        r["verdict"] = str(gate.verdict)
    m0, m1 = metrics(asked), metrics(translated)
    print(f"| as asked | {m0['R@1']:.3f} | {m0['R@4']:.3f} | {m0['R@20']:.3f} | {m0['MRR']:.3f} | | |")
    print(f"| translated (product) | {m1['R@1']:.3f} | {m1['R@4']:.3f} | {m1['R@20']:.3f} | {m1['MRR']:.3f} "
          f"| {sign(translated, asked, 4)} | {sign(translated, asked, 20)} |")
    print("translated:", sum(1 for p in plans if p and p.translated_from), "of", len(plans),
          "; verdicts", {v: sum(1 for r in rows if r.get("verdict") == v) for v in ("answered", "mentions", "refused")})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=("recall", "rerank", "crosslang", "report"))
    ap.add_argument("stores", nargs="+")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--check", type=int, default=0)
    a = ap.parse_args()
    stores = dict(zip(("course", "pdf"), a.stores))
    if a.what == "recall":
        recall(stores)
    elif a.what == "rerank":
        run_rerank(stores, a.limit)
    elif a.what == "report":
        report_rerank(stores, recall(stores))
    else:
        crosslang(a.stores[0], a.check)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
