"""Does the model read the answer? The needle in the excerpts the model reads, today and with each source's
closest sentence followed by the next one (measurement code, no model run; the 0.5B's tokenizer counts).

A newcomer's question (2026-12-02, the anthology: "Where did the wind leave Medio Pollito at the end of The
Half-Chick?") had its answering passage among the sources, but the model read only the sentence of that source
closest to the question ("'Ah! Medio Pollito,' replied the wind ...") and not the next one, which holds the
answer ("... there he left him fastened to the top of the steeple"). Variant ``next``: every unit read first
(the key passage's units and each source's best) brings the unit after it when that fits the shared budget.

    .venv/bin/python scripts/excerpt_next_unit.py STORE_COURSE STORE_PDF [--budget 160]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rag.answer import excerpt as ex_mod  # noqa: E402
from rag.evaluation.metrics import holds_needle, sign_test  # noqa: E402

SHARED = HERE.parent.parent / "shared" / "corpus"
ORIGINAL = ex_mod.excerpts


def with_next(query_terms, contents, budget, count, weights=None, must=None):
    """:func:`rag.answer.excerpt.excerpts`, with the unit after each first-read unit added when it fits."""
    whole = [ex_mod.Excerpt(c, ((0, len(c)),), True) for c in contents]
    if budget <= 0 or sum(count(c) for c in contents) <= budget:
        return whole
    all_spans = [ex_mod.units(c) for c in contents]
    flat = [(i, a, b) for i, spans in enumerate(all_spans) for a, b in spans]
    pieces = [contents[i][a:b] for i, a, b in flat]
    scores = [ex_mod.lexical_overlap(query_terms, p, weights) for p in pieces]
    costs = [count(p) + 1 for p in pieces]
    by_score = sorted(range(len(flat)), key=lambda k: (-scores[k], k))
    chosen, used = set(), 0
    firsts = sorted((k for k, (i, a, b) in enumerate(flat)
                     if must and i < len(must) and any(a < y and x < b for x, y in must[i])), key=lambda k: (-scores[k], k))
    for i in range(len(contents)):
        ks = [k for k in by_score if flat[k][0] == i]
        if ks:
            firsts.append(ks[0])
    first_set = set(firsts)
    for k in firsts + by_score:
        if k not in chosen and used + costs[k] <= budget:
            chosen.add(k)
            used += costs[k]
            nxt = k + 1
            follows = pieces[k].rstrip().endswith(":") or k in first_set
            if (follows and nxt < len(flat) and flat[nxt][0] == flat[k][0] and nxt not in chosen
                    and used + costs[nxt] <= budget):
                chosen.add(nxt)
                used += costs[nxt]
    return ex_mod.assemble(contents, flat, chosen, by_score, budget, count)


def queries(corpus: str):
    path, fields = ((SHARED / "dev_questions.jsonl", ("query_course", "query_ticket")) if corpus == "course"
                    else (SHARED / "pdf-dev" / "questions.jsonl", ("query_doc", "query_user")))
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            yield r["id"], "doc", r[fields[0]], r["needle"]
            yield r["id"], "user", r[fields[1]], r["needle"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("course_store")
    ap.add_argument("pdf_store")
    ap.add_argument("--budget", type=int, default=None)
    a = ap.parse_args(argv)
    from llama_cpp import Llama

    from rag.answer.pipeline import ask
    from rag.settings import get_settings
    from rag.store.store import Store

    vocab = Llama(model_path=str(HERE.parent / "models" / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"), vocab_only=True,
                  verbose=False)

    def count(text: str) -> int:
        return len(vocab.tokenize(text.encode("utf-8"), add_bos=False))

    res: dict[str, dict] = {"today": {}, "next": {}}
    tokens: dict[str, list[int]] = {"today": [], "next": []}
    for corpus, folder in (("course", a.course_store), ("pdf", a.pdf_store)):
        s = get_settings(store=Path(folder))
        if a.budget is not None:
            s = s.with_overrides(source_tokens=a.budget)
        store = Store(Path(folder), settings=s)
        for qid, wording, text, needle in queries(corpus):
            stream = ask(store, text, s)
            if stream.gate.refused:
                continue
            in_sources = any(holds_needle(c.quote, needle) for c in stream.cites)
            for name, fn in (("today", ORIGINAL), ("next", with_next)):
                ex_mod.excerpts = fn
                try:
                    read = stream.prompt_sources(count)
                finally:
                    ex_mod.excerpts = ORIGINAL
                hit = any(holds_needle(c.quote, needle) for c in read)
                res[name][(corpus, qid, wording)] = (in_sources, hit)
                tokens[name].append(sum(count(c.quote) for c in read))
        store.close()
    keys = sorted(res["today"])
    for corpus in ("course", "pdf"):
        for wording in ("doc", "user"):
            ks = [k for k in keys if k[0] == corpus and k[2] == wording]
            src = sum(res["today"][k][0] for k in ks)
            t = sum(res["today"][k][1] for k in ks)
            n = sum(res["next"][k][1] for k in ks)
            print(f"{corpus:6s} {wording:4s}: needle among the sources {src}/{len(ks)}; read by the model: today {t}, "
                  f"next {n}")
    st = sign_test([res["next"][k][1] for k in keys], [res["today"][k][1] for k in keys])
    wins, losses = st.wins, st.losses
    print(f"all: today {sum(v[1] for v in res['today'].values())}, next {sum(v[1] for v in res['next'].values())} "
          f"of {len(keys)} answered (+{wins}/-{losses}, p = {st.p:.3f}); tokens read p50 today "
          f"{statistics.median(tokens['today'])}, next {statistics.median(tokens['next'])}")
    for k in keys:
        if res["next"][k][1] != res["today"][k][1]:
            print("  changed:", k, res["today"][k][1], "->", res["next"][k][1])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
