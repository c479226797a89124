"""Issue 27, third pass: query-time candidates on top of the shipped pipeline (measurement code).

Same harness as ``scripts/issue27_experiments.py`` (both dev corpora chunked as the product chunks them, even
splits + carried lead, unit vectors max - .02; both wordings; correct = a returned chunk holds the whole needle,
judged by ``rag.evaluation.metrics.holds_needle``). Candidates:

* ``neighbours λ``: a chunk's fused score plus λ times the better of its two neighbours' (same document, adjacent
  in reading order): a question about the end of a story or the row of a table whose words sit in the chunk before.
* ``prf β m``: pseudo-relevance feedback on the dense leg (Rocchio): the query vector plus β times the mean of the
  first pass's top ``m`` chunk vectors, normalised, searched again (units included) and fused with BM25 as before.
* ``prf2 β m``: the same second dense list fused beside the first (three lists), not instead of it.
* ``unit bm25 ...``: BM25 over the units (sentences, list items, table rows), a chunk ranked by its best unit, as
  a third list or instead of the chunks' BM25.
* ``hyde ...`` (Gao et al. 2022): the local model writes a two-sentence passage that would answer the question
  (``retrieval_experiments.LLM_PROMPTS["hyde"]``); it is embedded and searched beside the question (see
  :func:`hyde`). Generate the passages first (cached, resumable): ``--gen-hyde [MODEL_FILE]``.

    nice -n 10 .venv/bin/python scripts/issue27_more.py [--only NAME ...] [--full] [--misses]
    .venv/bin/python scripts/issue27_more.py --gen-hyde [qwen2.5-coder-1.5b-instruct-q4_k_m.gguf]

Measurement code, not product code.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import issue27_experiments as ix  # noqa: E402
import retrieval_experiments as rx  # noqa: E402

from rag.index.fusion import bm25_weight, rrf  # noqa: E402

DEPTH = rx.DEPTH
MARGIN = 0.02


def fused_scores(c, q, dense_lists, dense_w=None):
    bm = ix.product_bm25(c)
    b = bm.search(q.text, DEPTH)[0].tolist()
    w = bm25_weight(q.text, bm, b[0] if b else None)
    dense_w = dense_w or [1.0] * len(dense_lists)
    return rrf([*dense_lists, b], weights=[*dense_w, w])


def shipped(c, q):
    return [i for i, _ in fused_scores(c, q, [ix.dense_with_units(c, q, "head", "max", margin=MARGIN)])][:20]


def neighbours(lam: float, span: int = 1):
    def fn(c, q):
        sc = dict(fused_scores(c, q, [ix.dense_with_units(c, q, "head", "max", margin=MARGIN)]))
        out = {}
        for i in set(sc) | {j for c_id in sc for j in range(c_id - span, c_id + span + 1)}:
            if not 0 <= i < len(c.chunks):
                continue
            nb = [sc.get(j, 0.0) for j in range(i - span, i + span + 1)
                  if j != i and 0 <= j < len(c.chunks) and c.doc_of[j] == c.doc_of[i]]
            out[i] = sc.get(i, 0.0) + lam * max(nb, default=0.0)
        return [i for i, _ in sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))][:20]
    return fn


def prf(beta: float, m: int, both: bool = False):
    def fn(c, q):
        first = shipped(c, q)
        v = q.vec + beta * c.vecs[first[:m]].mean(axis=0)
        v = (v / np.linalg.norm(v)).astype(np.float32)
        q2 = rx.Query(q.qid, q.wording, q.text, q.needle, v)
        d1 = ix.dense_with_units(c, q, "head", "max", margin=MARGIN)
        d2 = ix.dense_with_units(c, q2, "head", "max", margin=MARGIN)
        lists = [d1, d2] if both else [d2]
        return [i for i, _ in fused_scores(c, q, lists)][:20]
    return fn


def unit_bm25(c):
    """BM25 over the units (sentences, list items, table rows of 3+ words) of every chunk of more than one unit,
    and over the whole text of every other chunk; returns (owner chunk per row, index)."""
    def make():
        owner, texts = ix.unit_texts(c, "bare")
        have = set(owner.tolist())
        rest = [i for i in range(len(c.chunks)) if i not in have]
        own = np.concatenate([owner, np.asarray(rest, np.int64)])
        allt = list(texts) + [c.chunks[i].text for i in rest]
        groups = [c.doc_of[int(i)] for i in own]
        return own, ix.BM25Index.build(allt, np.arange(len(allt)), groups=groups)
    return rx._cached(c, "unit_bm25", make)


def unit_bm25_list(c, q, depth=80):
    own, idx = unit_bm25(c)
    ids, _ = idx.search(q.text, depth)
    return list(dict.fromkeys(int(own[int(u)]) for u in ids))[:DEPTH]


def ubm25(w: float, replace: bool = False):
    def fn(c, q):
        d = ix.dense_with_units(c, q, "head", "max", margin=MARGIN)
        bm = ix.product_bm25(c)
        b = bm.search(q.text, DEPTH)[0].tolist()
        bw = bm25_weight(q.text, bm, b[0] if b else None)
        u = unit_bm25_list(c, q)
        if replace:
            return [i for i, _ in rrf([d, u], weights=[1.0, bw])][:20]
        return [i for i, _ in rrf([d, b, u], weights=[1.0, bw, w * bw])][:20]
    return fn


def hyde_text(q, model: str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf") -> str | None:
    """The model's hypothetical two-sentence answer to ``q`` (``rx.LLM_PROMPTS["hyde"]``), from the cache that
    ``--gen`` fills; None when it is not there."""
    path = rx.CACHE / f"llm-hyde-{Path(model).stem}.json"
    cache = rx._HYDE.setdefault(path, __import__("json").loads(path.read_text()) if path.exists() else {})
    r = cache.get(q.text)
    return r["out"] if r else None


def _vec(text: str) -> np.ndarray:
    return rx.embed([text])[0]


def hyde(how: str, gate: float | None = None, w: float = 1.0, model: str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"):
    """HyDE (Gao et al. 2022): the model writes a short passage that would answer the question; it is embedded and
    searched. ``how``: ``list`` (its dense list, units included, fused beside the question's, weight ``w``),
    ``concat`` (question + passage embedded as one query instead of the question), ``bm25`` (``list`` and the
    passage's BM25 list too). ``gate``: only where BM25's best chunk covers under this share of the question."""
    def fn(c, q):
        bm = ix.product_bm25(c)
        b = bm.search(q.text, DEPTH)[0].tolist()
        bw = bm25_weight(q.text, bm, b[0] if b else None)
        d = ix.dense_with_units(c, q, "head", "max", margin=MARGIN)
        h = hyde_text(q, model)
        cov = bm.coverage(q.text, b[0]) if b else 0.0
        if h is None or (gate is not None and (cov or 0.0) >= gate):
            return [i for i, _ in rrf([d, b], weights=[1.0, bw])][:20]
        if how == "concat":
            v = _vec(q.text + "\n" + h)
            dq = ix.dense_with_units(c, rx.Query(q.qid, q.wording, q.text, q.needle, v), "head", "max", margin=MARGIN)
            return [i for i, _ in rrf([dq, b], weights=[1.0, bw])][:20]
        dh = ix.dense_with_units(c, rx.Query(q.qid, q.wording, q.text, q.needle, _vec(h)), "head", "max", margin=MARGIN)
        lists, weights = [d, b, dh], [1.0, bw, w]
        if how == "bm25":
            lists.append(bm.search(h, DEPTH)[0].tolist())
            weights.append(w * bw)
        return [i for i, _ in rrf(lists, weights=weights)][:20]
    return fn


rx._HYDE = {}
CANDIDATES = {"shipped": shipped}
for how in ("list", "concat", "bm25"):
    CANDIDATES[f"hyde {how}"] = hyde(how)
    CANDIDATES[f"hyde {how}, coverage < .5"] = hyde(how, gate=0.5)
CANDIDATES["hyde list w.5"] = hyde("list", w=0.5)
_15B = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
for how in ("list", "concat"):
    CANDIDATES[f"hyde 1.5B {how}"] = hyde(how, model=_15B)
    CANDIDATES[f"hyde 1.5B {how}, coverage < .5"] = hyde(how, gate=0.5, model=_15B)
CANDIDATES["hyde 1.5B list w.5"] = hyde("list", w=0.5, model=_15B)

for w in (0.5, 1.0):
    CANDIDATES[f"unit bm25 3rd list w{w}"] = ubm25(w)
CANDIDATES["unit bm25 instead of chunk bm25"] = ubm25(1.0, replace=True)
for lam in (0.1, 0.2, 0.3, 0.5):
    CANDIDATES[f"neighbours {lam}"] = neighbours(lam)
for beta in (0.3, 0.5, 1.0):
    for m in (3, 5):
        CANDIDATES[f"prf {beta} {m}"] = prf(beta, m)
        CANDIDATES[f"prf2 {beta} {m}"] = prf(beta, m, both=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--misses", action="store_true")
    ap.add_argument("--gen-hyde", nargs="?", const="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                    help="generate (cached) the model's HyDE passages for every dev question, then stop")
    a = ap.parse_args(argv)
    if a.gen_hyde:
        import json

        texts = []
        for qf, fields in ((rx.SHARED / "dev_questions.jsonl", ("query_course", "query_ticket")),
                           (rx.SHARED / "pdf-dev" / "questions.jsonl", ("query_doc", "query_user"))):
            for line in qf.read_text().splitlines():
                if line.strip():
                    r = json.loads(line)
                    texts += [r[fields[1]], r[fields[0]]]
        rx.llm_outputs("hyde", texts, model_file=a.gen_hyde)
        return 0
    rx.load_all()
    cs = ix.load_variant("balanced+lead")
    names = [c.name for c in cs]
    base = rx.run_candidate("shipped", shipped, cs)
    runs = [base] + [rx.run_candidate(n, fn, cs) for n, fn in CANDIDATES.items()
                     if n != "shipped" and (not a.only or n in a.only)]
    print(rx.summary(runs, base, names))
    if a.full:
        print(rx.report(runs, base, names))
    if a.misses:
        ix.print_misses(runs)
    print(os.popen("uptime").read().strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
