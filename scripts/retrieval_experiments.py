"""Issue 19 experiment harness: retrieval candidates measured per corpus and per wording.

Ingests both shared development corpora once (strategy E chunks as the product
cuts them; vectors through the evaluation's embedding cache; the chunk lists
pickled under ``$XDG_CACHE_HOME/rag/issue19``), runs each candidate retrieval
and prints R@1/4/8/20 and MRR per corpus x wording, with paired exact sign
tests against the product's retrieval at R@4 and R@20.

Wordings: ``doc`` = the documents' words (``query_course`` / ``query_doc``),
``user`` = a user's words (``query_ticket`` / ``query_user``). Correct = a
returned chunk's ``content`` holds the whole needle, whitespace collapsed.

    nice -n 10 .venv/bin/python scripts/retrieval_experiments.py [--only NAME ...] [--llm]

Model outputs (rewrites, hypothetical answers) are cached in
``$XDG_CACHE_HOME/rag/issue19/llm.json`` so a rerun costs nothing.
This is a measurement script, not product code: it stays out of ``rag/``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.evaluation.evaluate import EmbeddingCache, sign_test  # noqa: E402
from rag.index.bm25 import BM25Index  # noqa: E402
from rag.index.dense import DenseIndex  # noqa: E402
from rag.index.fusion import rrf  # noqa: E402
from rag.ingest.chunk import chunk_document  # noqa: E402
from rag.ingest.extract import extract_path  # noqa: E402

SHARED = ROOT.parent / "shared" / "corpus"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rag" / "issue19"
KS = (1, 4, 8, 20)
DEPTH = 20  # the product's candidates_k: hits per leg before fusion
WS = re.compile(r"\s+")


def norm(s: str) -> str:
    return WS.sub(" ", s).strip()


@dataclass
class Query:
    qid: str
    wording: str  # "doc" | "user"
    text: str
    needle: str
    vec: np.ndarray | None = None


@dataclass
class Corpus:
    name: str
    chunks: list
    doc_of: list[str]          # document name per chunk
    vecs: np.ndarray
    queries: list[Query]
    dense: DenseIndex = None
    bm25: BM25Index = None
    contents: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)

    def rank(self, ids, needle: str) -> int | None:
        n = norm(needle)
        for r, cid in enumerate(ids, 1):
            if n in self.contents[cid]:
                return r
        return None


def load_corpus(name: str, docs_dir: Path, qfile: Path, fields: tuple[str, str], embedder, cache: EmbeddingCache) -> Corpus:
    pk = CACHE / f"{name}.chunks.pkl"
    if pk.exists():
        chunks, doc_of, docs = pickle.loads(pk.read_bytes())
    else:
        chunks, doc_of, docs = [], [], {}
        for p in sorted(docs_dir.iterdir()):
            if p.suffix.lower() not in (".md", ".pdf", ".txt"):
                continue
            d = extract_path(p)
            docs[p.name] = d.canonical
            for c in chunk_document(d, "E"):
                chunks.append(c)
                doc_of.append(p.name)
        CACHE.mkdir(parents=True, exist_ok=True)
        pk.write_bytes(pickle.dumps((chunks, doc_of, docs)))
    vecs = cache.encode([c.text for c in chunks], embedder)
    qs = []
    for line in qfile.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            qs.append(Query(r["id"], "doc", r[fields[0]], r["needle"]))
            qs.append(Query(r["id"], "user", r[fields[1]], r["needle"]))
    qv = cache.encode([q.text for q in qs], embedder)
    for q, v in zip(qs, qv):
        q.vec = v
    ids = np.arange(len(chunks), dtype=np.int64)
    c = Corpus(name, chunks, doc_of, vecs, qs)
    c.dense = DenseIndex.build(ids, vecs)
    c.bm25 = BM25Index.build([ch.text for ch in chunks], ids)
    c.contents = [norm(ch.content) for ch in chunks]
    c.extra["docs"] = docs
    return c


# --------------------------------------------------------------------------- candidates
# Each candidate: (corpus, query) -> fused chunk ids, best first (at least 20 when available).

def legs(c: Corpus, q: Query, depth: int = DEPTH, bm25=None, text: str | None = None, vec=None):
    d_ids, _ = c.dense.search(q.vec if vec is None else vec, depth)
    b_ids, _ = (bm25 or c.bm25).search(q.text if text is None else text, depth)
    return d_ids.tolist(), b_ids.tolist()


def baseline(c: Corpus, q: Query) -> list[int]:
    return [i for i, _ in rrf(legs(c, q))][:20]


def dense_only(c: Corpus, q: Query) -> list[int]:
    return c.dense.search(q.vec, 20)[0].tolist()


def bm25_only(c: Corpus, q: Query) -> list[int]:
    return c.bm25.search(q.text, 20)[0].tolist()


def depth100(c: Corpus, q: Query) -> list[int]:
    return [i for i, _ in rrf(legs(c, q, depth=100))][:20]


CANDIDATES = {
    "baseline": baseline,
    "dense only": dense_only,
    "bm25 only": bm25_only,
    "legs depth 100": depth100,
}


# --------------------------------------------------------------------------- report

@dataclass
class Run:
    name: str
    ranks: dict[tuple[str, str, str], int | None]  # (corpus, qid, wording) -> rank
    ms: list[float]


def run_candidate(name, fn, corpora) -> Run:
    ranks, ms = {}, []
    for c in corpora:
        for q in c.queries:
            t0 = time.perf_counter()
            ids = fn(c, q)
            ms.append((time.perf_counter() - t0) * 1000)
            ranks[(c.name, q.qid, q.wording)] = c.rank(ids[:20], q.needle)
    return Run(name, ranks, ms)


def cell(ranks: list[int | None]) -> dict:
    n = len(ranks)
    out = {f"R@{k}": sum(1 for r in ranks if r and r <= k) / n for k in KS}
    out["MRR"] = sum(1 / r for r in ranks if r) / n
    return out


def select(run: Run, corpus: str | None, wording: str | None):
    keys = sorted(k for k in run.ranks if (corpus is None or k[0] == corpus) and (wording is None or k[2] == wording))
    return keys, [run.ranks[k] for k in keys]


def hits(ranks, k):
    return [r is not None and r <= k for r in ranks]


def report(runs: list[Run], base: Run, corpora_names: list[str]) -> str:
    lines = ["| candidate | corpus | wording | R@1 | R@4 | R@8 | R@20 | MRR | R@4 vs base | R@20 vs base | ms p50 |",
             "|---|---|---|---:|---:|---:|---:|---:|---|---|---:|"]
    groups = [(cn, w) for cn in corpora_names for w in ("doc", "user")] + [(None, "doc"), (None, "user"), (None, None)]
    for run in runs:
        for cn, w in groups:
            keys, r = select(run, cn, w)
            _, rb = select(base, cn, w)
            m = cell(r)
            t4, t20 = sign_test(hits(r, 4), hits(rb, 4)), sign_test(hits(r, 20), hits(rb, 20))
            lines.append(f"| {run.name} | {cn or 'both'} | {w or 'all'} | {m['R@1']:.3f} | {m['R@4']:.3f} | {m['R@8']:.3f} | "
                         f"{m['R@20']:.3f} | {m['MRR']:.3f} | +{t4.wins}/-{t4.losses} p={t4.p:.3f} | "
                         f"+{t20.wins}/-{t20.losses} p={t20.p:.3f} | {statistics.median(run.ms):.1f} |")
    return "\n".join(lines)


def summary(runs: list[Run], base: Run, corpora_names) -> str:
    """One line per candidate: user/doc R@4, R@20 pooled over both corpora, per-corpus user R@4, MRR all."""
    lines = ["| candidate | user R@4 | user R@20 | doc R@4 | doc R@20 | MRR all | user R@4 md/pdf | doc R@4 md/pdf | "
             "user R@4 vs base | doc R@4 vs base | user R@20 vs base | doc R@20 vs base | ms p50 |",
             "|---|---:|---:|---:|---:|---:|---|---|---|---|---|---|---:|"]
    for run in runs:
        f = {}
        for w in ("user", "doc"):
            _, r = select(run, None, w)
            _, rb = select(base, None, w)
            f[w] = (cell(r), sign_test(hits(r, 4), hits(rb, 4)), sign_test(hits(r, 20), hits(rb, 20)))
        per = {w: "/".join(f"{cell(select(run, cn, w)[1])['R@4']:.3f}" for cn in corpora_names) for w in ("user", "doc")}
        allm = cell(select(run, None, None)[1])["MRR"]

        def st(t):
            return f"+{t.wins}/-{t.losses} p={t.p:.3f}"
        lines.append(f"| {run.name} | {f['user'][0]['R@4']:.3f} | {f['user'][0]['R@20']:.3f} | {f['doc'][0]['R@4']:.3f} | "
                     f"{f['doc'][0]['R@20']:.3f} | {allm:.3f} | {per['user']} | {per['doc']} | {st(f['user'][1])} | "
                     f"{st(f['doc'][1])} | {st(f['user'][2])} | {st(f['doc'][2])} | {statistics.median(run.ms):.1f} |")
    return "\n".join(lines)


def load_all():
    from rag.index.embed import get_embedder

    emb = get_embedder()
    cache = EmbeddingCache()
    md = load_corpus("md", SHARED / "docs", SHARED / "dev_questions.jsonl", ("query_course", "query_ticket"), emb, cache)
    pdf = load_corpus("pdf", SHARED / "pdf-dev" / "docs", SHARED / "pdf-dev" / "questions.jsonl", ("query_doc", "query_user"), emb, cache)
    return emb, cache, [md, pdf]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--full", action="store_true", help="per corpus x wording table too")
    ap.add_argument("--misses", action="store_true")
    a = ap.parse_args(argv)
    t0 = time.time()
    emb, cache, corpora = load_all()
    print(f"loaded {[ (c.name, len(c.chunks), len(c.queries)) for c in corpora]} in {time.time() - t0:.1f} s", file=sys.stderr)
    names = [c.name for c in corpora]
    base = run_candidate("baseline", baseline, corpora)
    runs = [base]
    for n, fn in CANDIDATES.items():
        if n == "baseline" or (a.only and n not in a.only):
            continue
        runs.append(run_candidate(n, fn, corpora))
    print(summary(runs, base, names))
    if a.full:
        print()
        print(report(runs, base, names))
    if a.misses:
        for run in runs:
            miss = [k for k, r in run.ranks.items() if not r or r > 4]
            print(run.name, "misses@4:", " ".join(f"{k[0]}:{k[1]}:{k[2]}={run.ranks[k]}" for k in sorted(miss)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
