"""Issue 40: retrieval candidates for users' wording, measured through the product's own search (measurement code).

Opens the stores ``bench retrieval --store DIR --corpus NAME`` left (one per corpus: ``DIR`` = ``PREFIX-NAME``),
runs every question of the corpus in both wordings through ``Store.search`` (top 20, hybrid) and
``search_and_gate`` (the model's sources) with each candidate swapped into ``rag.store.store.retrieve_planned``,
and prints, per corpus and wording, R@1/4/8/20, MRR, the share whose passage reaches the sources, sign tests
against the shipped pipeline at R@4 / R@20 / in sources, how often the candidate ran and its ms p50 per question.

    PYTHONPATH=. nice -n 19 .venv/bin/python scripts/issue40_experiments.py --prefix /tmp/i40/store \\
        --corpus course [--corpus pdf-dev ...] [--only NAME ...] [--misses]

Candidates (docs/evaluation.md, issue 40; none kept): ``prf m e beta w [replace] [always]`` (pseudo-relevance
feedback on the BM25 leg, :func:`feedback_list`, run only when BM25's weight is under 1 unless ``always``);
``content terms`` (the BM25 query and its coverage read without function words, :data:`rag.text.CLAIM_STOPWORDS`:
query term weighting at its simplest); ``depth N`` (each leg N deep); ``band lo hi`` (the coverage band of the
BM25 weight); ``clauses wW [always]`` (the question's clauses searched beside it); ``units off`` / ``unit margin M`` (issue
27's unit vectors left out, or their margin changed); ``rewrite wW`` / ``hyde wW`` [``+bm25``] [``always``] (the local
model's rewrite of the question into a document's words, or its hypothetical answer, HyDE: embedded and searched
beside the question, weight W, and with ``+bm25`` by BM25 too; only when BM25's weight is under 1 unless
``always``; generated beforehand by ``retrieval_experiments.llm_outputs``). :func:`retrieve_variant` is
the product's hybrid fusion (no rerank) with the candidate applied. Measurement code, not product code.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import rag.store.store as store_mod  # noqa: E402
from rag.answer.pipeline import search_and_gate  # noqa: E402
from rag.evaluation.bench.corpora import corpus as shared_corpus  # noqa: E402
from rag.evaluation.bench.retrieval import passage_in_sources, search_ranks  # noqa: E402
from rag.evaluation.data import by_wording, expand_queries, load_questions  # noqa: E402
from rag.evaluation.metrics import hits_at, sign_test, summarize_ranks  # noqa: E402
from rag.index.analyzer import Analyzer, _stemmer  # noqa: E402
from rag.index.bm25 import BM25Index  # noqa: E402
from rag.index.fusion import COVERAGE_BAND, bm25_weight, retrieve_planned, rrf  # noqa: E402
from rag.index.units import UNIT_MARGIN, dense_leg  # noqa: E402
from rag.settings import get_settings  # noqa: E402
from rag.store.store import Store  # noqa: E402
from rag.text import CLAIM_STOPWORDS, sentence_spans, tokenize  # noqa: E402
from rag.types import Hit, QueryPlan  # noqa: E402

ORIGINAL = retrieve_planned


# --------------------------------------------------------------------------- BM25 helpers (bm25s internals)


def df(bm25: BM25Index, term: str) -> int:
    """How many chunks hold the analysed ``term`` (0 when unknown)."""
    if bm25._bm25 is None or term not in bm25._bm25.vocab_dict:
        return 0
    j = bm25._bm25.vocab_dict[term]
    ptr = bm25._bm25.scores["indptr"]
    return int(ptr[j + 1] - ptr[j])


def idf(bm25: BM25Index, term: str) -> float | None:
    """BM25's (Lucene) IDF of ``term``, ``None`` when no chunk holds it."""
    d = df(bm25, term)
    if d == 0:
        return None
    n = int(bm25._bm25.scores["num_docs"])
    return float(np.log(1.0 + (n - d + 0.5) / (d + 0.5)))


def search_weighted(bm25: BM25Index, weights: dict[str, float], k: int, allowed=None):
    """BM25 for analysed terms each with its weight: a chunk scores ``sum_t w_t * bm25(t, d)``."""
    empty = (np.zeros(0, np.int64), np.zeros(0, np.float32))
    terms = [(t, float(w)) for t, w in weights.items() if w > 0 and t in bm25._bm25.vocab_dict]
    if bm25._bm25 is None or k <= 0 or not terms:
        return empty
    scores = np.zeros(len(bm25._ids), dtype=np.float32)
    for t, w in terms:
        scores += w * np.asarray(bm25._bm25.get_scores([t]), dtype=np.float32)
    if allowed is not None:
        scores = np.where(np.isin(bm25._ids, np.asarray(allowed, dtype=np.int64)), scores, 0.0).astype(np.float32)
    k = min(int(k), int((scores > 0).sum()))
    if k <= 0:
        return empty
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.lexsort((top, -scores[top]))]
    return bm25._ids[top], scores[top]


# --------------------------------------------------------------------------- pseudo-relevance feedback (candidate b)


@dataclass(frozen=True)
class Feedback:
    """``m`` feedback chunks, ``e`` expansion terms, ``beta`` their top weight (the question's terms weigh 1),
    ``weight`` the feedback list's RRF weight, ``replace`` True to put it instead of the BM25 list."""

    m: int = 3
    e: int = 10
    beta: float = 0.5
    weight: float = 1.0
    replace: bool = False
    when: str = "doubt"

    def doubts(self, bm25_weight: float) -> bool:
        """Whether feedback runs for a first pass whose BM25 list weighed ``bm25_weight``: ``when`` ``doubt``
        (under 1: BM25's best chunk covers less than the band's top), else always."""
        return bm25_weight < 1.0 if self.when == "doubt" else True


def expansion_terms(query_terms: Sequence[str], texts: Sequence[str], doc_weights: Sequence[float],
                    bm25: BM25Index, e: int, beta: float) -> dict[str, float]:
    """The ``e`` expansion terms of the feedback chunk ``texts`` (weights ``doc_weights``) with their query
    weights in ``(0, beta]``; terms of ``query_terms``, unknown to the index or in fewer than two chunks are
    left out."""
    known = set(query_terms)
    score: Counter[str] = Counter()
    total = float(sum(doc_weights)) or 1.0
    for text, w in zip(texts, doc_weights):
        terms = bm25.analyzer.terms(text)
        if not terms:
            continue
        tf = Counter(terms)
        for t, c in tf.items():
            if t in known:
                continue
            w_idf = idf(bm25, t)
            if w_idf is None or df(bm25, t) < 2:
                continue
            score[t] += (w / total) * (c / len(terms)) * w_idf
    best = score.most_common(e)
    if not best or best[0][1] <= 0:
        return {}
    top = best[0][1]
    return {t: beta * s / top for t, s in best}


def feedback_list(query: str, fused: Sequence[tuple[int, float]], bm25: BM25Index,
                  texts: Callable[[list[int]], list[str]], fb: Feedback, depth: int,
                  allowed: np.ndarray | None = None) -> list[int]:
    """The feedback BM25 list (ids, best first) for ``query`` from the first pass ``fused`` (``[(id, score)]``);
    ``[]`` when no expansion term is found."""
    top = list(fused[: fb.m])
    if not top:
        return []
    q_terms = [t for t in dict.fromkeys(bm25.analyzer.terms(query)) if df(bm25, t) > 0]
    exp = expansion_terms(q_terms, texts([c for c, _ in top]), [s for _, s in top], bm25, fb.e, fb.beta)
    if not exp:
        return []
    weights = {t: 1.0 for t in q_terms} | exp
    ids, _ = search_weighted(bm25, weights, depth, allowed)
    return ids.tolist()


# --------------------------------------------------------------------------- the product's fusion, with the candidates


def retrieve_variant(query, q_vec, dense, bm25, *, spec: dict, ran: set, embed, k=20, mode="hybrid", depth=None,
                     rrf_k=60, texts=None, allowed=None, units=None, **_ignored):
    """:func:`rag.index.fusion.retrieve_planned` (no rerank) with the candidate ``spec`` applied; adds ``query``
    to ``ran`` when its expensive step ran."""
    if mode != "hybrid" or not len(dense):
        return ORIGINAL(query, q_vec, dense, bm25, k=k, mode=mode, depth=depth, rrf_k=rrf_k, texts=texts,
                        allowed=allowed, units=units)
    depth = max(k, spec.get("depth") or depth or 100)
    if spec.get("q_encoder") is not None:  # issue40_genq.py: an adapted encoder, its own chunk and unit vectors
        q_vec = spec["q_encoder"](query)
        dense = spec["dense_override"]
    if spec.get("units_off"):
        units = None
    if spec.get("units_override") is not None:  # issue40_doc2query.py: the units plus the generated questions
        units = spec["units_override"]
    margin = spec.get("margin", UNIT_MARGIN)
    d_ids, d_dist = dense_leg(q_vec, dense, units, depth, allowed, margin)
    b_ids, b_scores = bm25.search(query, depth) if allowed is None else bm25.search(query, depth, allowed)
    legs = [d_ids.tolist(), b_ids.tolist()]
    weights = [1.0, bm25_weight(query, bm25, legs[1][0] if legs[1] else None, spec.get("band", COVERAGE_BAND))]
    doubt = weights[1] < 1.0
    if spec.get("clauses") and (doubt or spec.get("clauses_always")):
        parts = clauses(query)
        if len(parts) > 1:
            ran.add(query)
            for p in parts:
                legs.append(dense_leg(embed(p), dense, units, depth, allowed, margin)[0].tolist())
                weights.append(spec["clauses"])
    if spec.get("llm") and (doubt or spec.get("llm_always")):
        text = model_text(spec["llm"], query)
        if text:
            ran.add(query)
            legs.append(dense_leg(embed(text), dense, units, depth, allowed, margin)[0].tolist())
            weights.append(spec.get("llm_w", 1.0))
            if spec.get("llm_bm25"):
                extra = bm25.search(text, depth) if allowed is None else bm25.search(text, depth, allowed)
                legs.append(extra[0].tolist())
                weights.append(spec.get("llm_w", 1.0))
    fused = rrf(legs, k=spec.get("rrf_k", rrf_k), weights=weights)
    if spec.get("convex") is not None:
        fused = convex_fusion(d_ids, d_dist, b_ids, b_scores, spec["convex"], weights[1])
    if spec.get("standout") is not None and fused and len(d_dist) > 1:
        gap = (float(d_dist[1]) - float(d_dist[0])) / max(1e-6, float(d_dist[min(4, len(d_dist) - 1)]) - float(d_dist[0]) + 1e-6) \
            if spec.get("standout_relative") else float(d_dist[1]) - float(d_dist[0])
        if gap > spec["standout"]:
            ran.add(query)
            top = int(d_ids[0])
            fused = [(top, fused[0][1] + 1e-9)] + [(c, sc) for c, sc in fused if c != top]
    fb = spec.get("feedback")
    if fb is not None and fused and fb.doubts(weights[1]):
        extra = feedback_list(query, fused, bm25, texts, fb, depth, allowed)
        if extra:
            ran.add(query)
            if fb.replace:
                legs[1], weights[1] = extra, fb.weight
            else:
                legs.append(extra)
                weights.append(fb.weight)
            fused = rrf(legs, k=rrf_k, weights=weights)
    fused = fused[:k]
    d_rank = {int(c): r for r, c in enumerate(d_ids, start=1)}
    b_rank = {int(c): (r, float(s)) for r, (c, s) in enumerate(zip(b_ids, b_scores), start=1)}
    ids = [c for c, _ in fused]
    dist = dense.distances(q_vec, ids) if ids else []
    hits = [Hit(chunk_id=c, rank=i, fused_rank=i, rrf_score=sc, cosine_distance=float(dist[i - 1]),
                dense_rank=d_rank.get(c), bm25_rank=b_rank.get(c, (None, None))[0],
                bm25_score=b_rank.get(c, (None, None))[1]) for i, (c, sc) in enumerate(fused, start=1)]
    lang = bm25.analyzer.query_language(query)
    return hits, QueryPlan(query=query, language=lang, bm25_weight=weights[1])


_MODEL_TEXTS: dict[str, dict] = {}


def model_text(kind: str, query: str) -> str | None:
    """The local model's text for ``query`` (``kind``: ``rewrite`` or ``hyde``, the prompts of
    ``scripts/retrieval_experiments.py``'s ``LLM_PROMPTS``), from the cache its ``llm_outputs`` writes; ``None``
    when it was not generated."""
    if kind not in _MODEL_TEXTS:
        import json
        import os

        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rag" / "issue19"
        path = cache / f"llm-{kind}-qwen2.5-coder-0.5b-instruct-q4_k_m.json"
        _MODEL_TEXTS[kind] = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    got = _MODEL_TEXTS[kind].get(query)
    return got["out"] if got and got.get("out") else None


def convex_fusion(d_ids, d_dist, b_ids, b_scores, alpha: float, bm25_w: float) -> list[tuple[int, float]]:
    """Convex combination of the two legs' scores (Bruch et al. 2023, "An analysis of fusion functions for hybrid
    retrieval"): ``alpha * sim + (1 - alpha) * w * bm25 / max bm25``, the dense similarity ``1 - distance`` as it is
    (already on [0, 1] for these vectors' neighbourhood), BM25 scaled by the list's best score and by the product's
    coverage weight ``w``; a chunk missing from a leg scores that leg's lowest."""
    sim = {int(c): 1.0 - float(d) for c, d in zip(d_ids, d_dist)}
    top = float(b_scores[0]) if len(b_scores) else 1.0
    lex = {int(c): float(s) / top for c, s in zip(b_ids, b_scores)} if top > 0 else {}
    s_min = min(sim.values()) if sim else 0.0
    l_min = min(lex.values()) if lex else 0.0
    ids = list(dict.fromkeys([*sim, *lex]))
    score = {c: alpha * sim.get(c, s_min) + (1 - alpha) * bm25_w * lex.get(c, l_min) for c in ids}
    return sorted(score.items(), key=lambda kv: (-kv[1], ids.index(kv[0])))


def clauses(question: str) -> list[str]:
    """The question's sentences, each cut again at " - ", "; " and ", " where both sides keep 3+ terms."""
    out = []
    for a, b in sentence_spans(question):
        pieces = [question[a:b]]
        for sep in (" - ", "; ", ", "):
            nxt = []
            for p in pieces:
                bits = p.split(sep)
                if len(bits) > 1 and all(len(tokenize(x)) >= 3 for x in bits):
                    nxt += bits
                else:
                    nxt.append(p)
            pieces = nxt
        out += [p.strip() for p in pieces if p.strip()]
    return out


@dataclass(frozen=True)
class ContentAnalyzer(Analyzer):
    """Query side only: tokens without :data:`CLAIM_STOPWORDS`, stemmed like the index (falls back to the plain
    analyzer when nothing is left)."""

    def terms(self, text: str, lang: str | None = None) -> list[str]:
        tokens = tokenize(text, stopwords=CLAIM_STOPWORDS)
        if not tokens:
            return super().terms(text, lang)
        if not self.stem:
            return tokens
        st = _stemmer(lang or self.query_language(text))
        return st.stemWords(tokens) if st else tokens


def candidates() -> dict[str, dict]:
    out: dict[str, dict] = {"shipped": {}}
    for m in (3, 5):
        for e in (5, 10):
            for beta in (0.3, 0.6):
                for w in (0.5, 1.0):
                    out[f"prf {m} {e} {beta} {w}"] = {"feedback": Feedback(m, e, beta, w)}
    out["prf 3 10 0.6 1.0 replace"] = {"feedback": Feedback(3, 10, 0.6, 1.0, replace=True)}
    out["prf 3 10 0.6 1.0 always"] = {"feedback": Feedback(3, 10, 0.6, 1.0, when="always")}
    out["prf 5 10 0.3 0.5 always"] = {"feedback": Feedback(5, 10, 0.3, 0.5, when="always")}
    out["content terms"] = {"content": True}
    for d in (30, 50, 100):
        out[f"depth {d}"] = {"depth": d}
    out["depth 100 + prf 3 10 0.6 0.5"] = {"depth": 100, "feedback": Feedback(3, 10, 0.6, 0.5)}
    for band in ((0.3, 0.9), (0.4, 0.8), (0.4, 1.0), (0.5, 0.9), (0.5, 1.0), (0.6, 1.0)):
        out[f"band {band[0]} {band[1]}"] = {"band": band}
    out["units off"] = {"units_off": True}
    for mg in (0.04, 0.06, 0.1):
        out[f"unit margin {mg}"] = {"margin": mg}
    for w in (0.25, 0.5, 1.0):
        out[f"clauses w{w}"] = {"clauses": w}
        out[f"clauses w{w} always"] = {"clauses": w, "clauses_always": True}
    for k in (10, 20, 30, 100):
        out[f"rrf k {k}"] = {"rrf_k": k}
    for g in (0.05, 0.1, 0.15, 0.2):
        out[f"dense standout {g}"] = {"standout": g}
    for g in (0.3, 0.4, 0.5):
        out[f"dense standout rel {g}"] = {"standout": g, "standout_relative": True}
    for a in (0.5, 0.6, 0.7, 0.8, 0.9):
        out[f"convex {a}"] = {"convex": a}
    for kind in ("rewrite", "hyde"):
        for w in (0.5, 1.0):
            out[f"{kind} w{w}"] = {"llm": kind, "llm_w": w}
            out[f"{kind} w{w} +bm25"] = {"llm": kind, "llm_w": w, "llm_bm25": True}
            out[f"{kind} w{w} always"] = {"llm": kind, "llm_w": w, "llm_always": True}
    return out


class Runner:
    def __init__(self, store: Store):
        self.store = store
        self.ran: set[str] = set()

    def install(self, spec: dict) -> None:
        runner = self
        tweaks = {k: v for k, v in spec.items() if k != "content"}

        def wrapped(*a, **kw):
            return retrieve_variant(*a, **kw, spec=tweaks, ran=runner.ran, embed=runner.store.embedder.encode_query)

        store_mod.retrieve_planned = wrapped if tweaks else ORIGINAL
        bm = self.store.index_cache.current().bm25
        base = Analyzer(stem=bm.analyzer.stem, languages=bm.analyzer.languages)
        bm.analyzer = ContentAnalyzer(base.stem, base.languages) if spec.get("content") else base


def measure(store: Store, queries, spec: dict, runner: Runner):
    runner.install(spec)
    runner.ran = set()
    t0 = time.perf_counter()
    ranks = search_ranks(store, queries, "hybrid")
    ms = (time.perf_counter() - t0) * 1000 / max(1, len(queries))
    ran = set(runner.ran)
    held, per_q = {}, []
    for q in queries:
        t = time.perf_counter()
        g = search_and_gate(store, q.text)
        per_q.append((time.perf_counter() - t) * 1000)
        held[q.key] = passage_in_sources(store, g, q.needle)
    runner.install({})
    return ranks, held, ran, ms, statistics.median(per_q)


def print_table(res: dict[str, tuple], queries, base: str, extra: Callable | None = None, moved: bool = True) -> None:
    """The rows of a candidates' table (``res``: name -> ``(ranks, held, ...)`` of :func:`measure`), per candidate and
    wording: R@1, R@4, R@20, MRR, passages in the sources and sign tests of R@4, R@20 and the sources against
    ``res[base]``; ``extra(name, rest, qs)`` adds columns (a string starting with "| "). Then, with ``moved``, each
    question whose rank differs between candidates. The header is the caller's."""
    base_r, base_h = res[base][0], res[base][1]
    for name, (ranks, held, *rest) in res.items():
        for g, qs in by_wording(queries).items():
            sm = summarize_ranks([ranks[q.key] for q in qs], str(g))
            r4 = sign_test(hits_at([ranks[q.key] for q in qs], 4), hits_at([base_r[q.key] for q in qs], 4))
            r20 = sign_test(hits_at([ranks[q.key] for q in qs], 20), hits_at([base_r[q.key] for q in qs], 20))
            src = sign_test([held[q.key] for q in qs], [base_h[q.key] for q in qs])
            print(f"| {name} | {g} | {sm.recall[1].value:.3f} | {sm.recall[4].value:.3f} | {sm.recall[20].value:.3f}"
                  f" | {sm.mrr:.3f} | {sum(held[q.key] for q in qs)}/{len(qs)} | {r4} | {r20} | {src} "
                  f"{extra(name, rest, qs) if extra else ''}|")
    for q in queries if moved else ():
        ranks = [res[n][0][q.key] for n in res]
        if len(set(ranks)) > 1:
            print(f"- {q.key}: ranks {' / '.join(str(r) for r in ranks)} - {q.text[:90]}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="/tmp/i40/store")
    ap.add_argument("--corpus", action="append", required=True)
    ap.add_argument("--only", action="append")
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args()
    cands = candidates()
    names = ["shipped"] + [n for n in cands if n != "shipped" and (not args.only or any(o in n for o in args.only))]
    for cname in args.corpus:
        c = shared_corpus(cname)
        path = f"{args.prefix}-{cname}"
        s = get_settings(store=path)
        store = Store(path, settings=s)
        queries = expand_queries(load_questions(c.questions))
        groups = {str(w): qs for w, qs in by_wording(queries).items()}
        runner = Runner(store)
        base = None
        print(f"\n## {cname} ({store.chunk_count} chunks, {len(queries)} queries)")
        print("| candidate | wording | R@1 | R@4 | R@8 | R@20 | MRR | in sources | R@4 vs shipped | R@20 vs shipped "
              "| sources vs shipped | ran | ms p50 (search_and_gate) |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|")
        for name in names:
            ranks, held, ran, _ms, p50 = measure(store, queries, cands[name], runner)
            if base is None:
                base = (ranks, held)
            for g, qs in groups.items():
                sm = summarize_ranks([ranks[q.key] for q in qs], g)
                r4 = sign_test(hits_at([ranks[q.key] for q in qs], 4), hits_at([base[0][q.key] for q in qs], 4))
                r20 = sign_test(hits_at([ranks[q.key] for q in qs], 20), hits_at([base[0][q.key] for q in qs], 20))
                src = sign_test([held[q.key] for q in qs], [base[1][q.key] for q in qs])
                nh = sum(held[q.key] for q in qs)
                ran_g = (f"{sum(q.text in ran for q in qs)}/{len(qs)}"
                         if cands[name].get("feedback") or cands[name].get("clauses") or cands[name].get("llm") else "")
                print(f"| {name} | {g} | {sm.recall[1].value:.3f} | {sm.recall[4].value:.3f} | {sm.recall[8].value:.3f} "
                      f"| {sm.recall[20].value:.3f} | {sm.mrr:.3f} | {nh}/{len(qs)} | {r4} | {r20} | {src} "
                      f"| {ran_g} | {p50:.0f} |")
            if args.misses:
                for q in queries:
                    if q.wording == "user" and (ranks[q.key] is None or ranks[q.key] > 4):
                        print(f"   miss {q.key} rank {ranks[q.key]} (shipped {base[0][q.key]})")
            sys.stdout.flush()
        store.close()


if __name__ == "__main__":
    main()
