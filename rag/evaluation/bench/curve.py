"""The scale curve of ``python -m rag bench scale --part curve`` (issue 18): the corpus vectors replicated to each
size (1k .. 1M) with a small perturbation per copy (so that copies are distinct vectors and recall against exact
search means something), searched with the real query vectors: per-stage p50/p95 (query embedding, dense, BM25,
fusion), build time, process memory, and recall@20 of each approximate FAISS index against the exact flat one.

Units: ms (wall clock), MiB (resident set size), chunks. Printed with the load average; nothing enforced.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence

import numpy as np

from rag.evaluation.bench.corpora import ChunkedCorpus
from rag.evaluation.bench.machine import header, load_average, peak_rss_mib, percentile, rss_mib
from rag.evaluation.cache import EmbeddingCache
from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex, choose_kind, ivf_lists
from rag.index.embed import encoder_spec, load_embedder
from rag.index.fusion import rrf
from rag.settings import get_settings
from rag.text import tokenize

Echo = Callable[[str], None]


#: Perturbation of each replica (per-dimension sigma, uniform in this range): cosine ~0.93 .. 0.65 to its original.
REPLICA_SIGMA = (0.02, 0.06)


def replicated_blocks(base: np.ndarray, n: int, *, block: int = 65_536, seed: int = 0):
    """Yield ``(ids, vectors)`` blocks of a corpus of ``n`` unit vectors grown from ``base`` ((B, d) float32).

    Row ``i`` is ``base[i % B]``: unchanged for the first ``B`` rows (the real
    corpus), perturbed by Gaussian noise (sigma per :data:`REPLICA_SIGMA`) and
    re-normalised for the replicas, so that no two rows are equal and recall
    against exact search is well defined. Deterministic in ``seed``.
    """
    b, d = base.shape
    for start in range(0, n, block):
        ids = np.arange(start, min(n, start + block), dtype=np.int64)
        v = base[ids % b].copy()
        rep = ids >= b
        m = int(rep.sum())
        if m:
            rng = np.random.default_rng([seed, start])
            sigma = rng.uniform(*REPLICA_SIGMA, size=(m, 1)).astype(np.float32)
            v[rep] += sigma * rng.standard_normal((m, d), dtype=np.float32)
            v[rep] /= np.linalg.norm(v[rep], axis=1, keepdims=True)
        yield ids, v


def replicated_sample(base: np.ndarray, n: int, m: int, *, seed: int = 0) -> np.ndarray:
    """``m`` rows of the replicated corpus of size ``n`` (the same rows :func:`replicated_blocks` yields)."""
    if m >= n:
        return np.concatenate([v for _, v in replicated_blocks(base, n, seed=seed)])
    want = np.sort(np.random.default_rng(seed + 1).choice(n, m, replace=False))
    out = []
    for ids, v in replicated_blocks(base, n, seed=seed):
        sel = (want >= ids[0]) & (want <= ids[-1])
        if sel.any():
            out.append(v[want[sel] - ids[0]])
    return np.concatenate(out)


def _times(fn, items) -> tuple[list[float], list]:
    ms, out = [], []
    for it in items:
        t0 = time.perf_counter()
        out.append(fn(it))
        ms.append((time.perf_counter() - t0) * 1000)
    return ms, out


def _recall_vs(exact: Sequence[np.ndarray], got: Sequence[np.ndarray], k: int = 20) -> float:
    """Mean over queries of |approximate top k  &  exact top k| / |exact top k|."""
    return float(np.mean([len(set(g[:k].tolist()) & set(e[:k].tolist())) / max(1, len(e[:k]))
                          for e, g in zip(exact, got)]))


def _fmt(ms: Sequence[float]) -> str:
    return f"p50 {percentile(ms, 50):7.2f}  p95 {percentile(ms, 95):7.2f}"


def curve_base(corpora: Sequence[ChunkedCorpus], encoder: str | None = None):
    """The real corpus vectors (both corpora, through the evaluation's embedding cache), their BM25 token lists,
    the query texts and vectors, and the query-embedding times (ms). Encoder: settings ``encoder`` by default."""

    s = get_settings()
    emb = load_embedder(encoder or encoder_spec(s.encoder).key, batch_size=s.embed_batch_size, threads=s.threads)
    cache = EmbeddingCache()
    try:
        base = np.concatenate([cache.encode(c.texts, emb) for c in corpora])
    finally:
        cache.close()
    tokens = [tokenize(t) or [""] for c in corpora for t in c.texts]
    queries = [q.text for c in corpora for q in c.queries]
    emb.encode_query(queries[0])
    emb_ms, qv = _times(emb.encode_query, queries)
    return base, tokens, queries, np.stack(qv), emb_ms


def bench_curve(corpora: Sequence[ChunkedCorpus], sizes: Sequence[int], echo: Echo = print, *,
                nprobes=(8, 16, 32, 64, 128, 256), hnsw_max: int = 100_000, ef_searches=(16, 32, 64, 128),
                k: int = 20) -> dict:
    """Part 2 (see the module docstring): per size, build time and memory of each dense index, per-stage query
    times (depth ``k``, as the store searches), recall@``k`` of the approximate indexes against exact search,
    BM25 build/query, and the whole retrieval with the index ``kind="auto"`` picks. Returns the figures."""
    import faiss

    echo(header("bench scale: curve"))
    s = get_settings()
    enc = encoder_spec(s.encoder).key
    base, tokens, queries, qvecs, emb_ms = curve_base(corpora, enc)
    d = base.shape[1]
    echo(f"base: {len(base)} real chunks ({', '.join(c.name for c in corpora)}), {len(queries)} real queries; "
         f"replicas perturbed (sigma {REPLICA_SIGMA[0]}..{REPLICA_SIGMA[1]} per dimension), ids i -> chunk i % "
         f"{len(base)}; depth {k}; encoder {enc}; faiss threads {faiss.omp_get_max_threads()}")
    echo(f"query embedding ({enc}): {_fmt(emb_ms)} ms")
    out: dict = {"base_chunks": len(base), "queries": len(queries), "encoder": enc,
                 "embed_ms": (percentile(emb_ms, 50), percentile(emb_ms, 95)), "sizes": {}}
    for n in sizes:
        gc.collect()
        row: dict = {"load": load_average()}
        echo(f"[{n:>8}] {load_average()}; process RSS {rss_mib():.0f} MiB before")
        # BM25
        reps = -(-n // len(tokens))
        r0, t0 = rss_mib(), time.perf_counter()
        bm25 = BM25Index.from_tokens((tokens * reps)[:n], np.arange(n, dtype=np.int64), k1=s.bm25_k1, b=s.bm25_b)
        row["bm25_build_s"], row["bm25_mib"] = time.perf_counter() - t0, rss_mib() - r0
        bm_ms, bm_hits = _times(lambda q, ix=bm25: ix.search(q, k)[0], queries)
        row["bm25_ms"] = (percentile(bm_ms, 50), percentile(bm_ms, 95))
        echo(f"[{n:>8}] bm25   build {row['bm25_build_s']:7.1f} s  +{row['bm25_mib']:6.0f} MiB   query {_fmt(bm_ms)}")
        # flat (exact): the ground truth
        r0, t0 = rss_mib(), time.perf_counter()
        flat = DenseIndex(d)
        for ids, v in replicated_blocks(base, n):
            flat.add(ids, v)
        row["flat_build_s"], row["flat_mib"] = time.perf_counter() - t0, rss_mib() - r0
        fl_ms, exact = _times(lambda qv, ix=flat: ix.search(qv, k)[0], qvecs)
        row["flat_ms"] = (percentile(fl_ms, 50), percentile(fl_ms, 95))
        echo(f"[{n:>8}] flat   build {row['flat_build_s']:7.1f} s  +{row['flat_mib']:6.0f} MiB   query {_fmt(fl_ms)}"
             f"   recall 1.000 (exact)")
        auto = choose_kind(n)
        stages = {"flat": (flat, fl_ms, exact)}
        if auto != "flat":
            flat = None
            del stages["flat"]
            gc.collect()
        # IVF-Flat
        nlist = ivf_lists(n)
        if n >= 16 * 40:
            r0, t0 = rss_mib(), time.perf_counter()
            ivf = DenseIndex.empty_ivf(d, nlist)
            ivf.train(replicated_sample(base, n, min(n, 40 * nlist)))
            t_train = time.perf_counter() - t0
            for ids, v in replicated_blocks(base, n):
                ivf.add(ids, v)
            row["ivf_build_s"], row["ivf_train_s"], row["ivf_mib"] = time.perf_counter() - t0, t_train, rss_mib() - r0
            echo(f"[{n:>8}] ivf    build {row['ivf_build_s']:7.1f} s  +{row['ivf_mib']:6.0f} MiB   "
                 f"({nlist} lists, training {t_train:.1f} s)")
            default_probe = ivf.nprobe
            row["ivf"] = {}
            for p in sorted(set(nprobes) | {default_probe}):
                if p > nlist:
                    continue
                ivf.nprobe = p
                ms, got = _times(lambda qv, ix=ivf: ix.search(qv, k)[0], qvecs)
                rec = _recall_vs(exact, got, k)
                row["ivf"][p] = {"ms": (percentile(ms, 50), percentile(ms, 95)), "recall": rec}
                mark = "  <- default" if p == default_probe else ""
                echo(f"[{n:>8}] ivf    nprobe {p:>4}: query {_fmt(ms)}   recall@{k} vs exact {rec:.4f}{mark}")
                if p == default_probe:
                    stages["ivf"] = (ivf, ms, got)
            ivf.nprobe = default_probe
            if auto != "ivf":
                ivf = None
                stages.pop("ivf", None)
                gc.collect()
        # HNSW (measured for comparison only, up to hnsw_max)
        if n <= hnsw_max:
            r0, t0 = rss_mib(), time.perf_counter()
            h = faiss.IndexHNSWFlat(d, 32, faiss.METRIC_INNER_PRODUCT)
            h.hnsw.efConstruction = 40
            for _, v in replicated_blocks(base, n):
                h.add(v)
            row["hnsw_build_s"], row["hnsw_mib"] = time.perf_counter() - t0, rss_mib() - r0
            echo(f"[{n:>8}] hnsw   build {row['hnsw_build_s']:7.1f} s  +{row['hnsw_mib']:6.0f} MiB   (M 32, efConstruction 40)")
            row["hnsw"] = {}
            for ef in ef_searches:
                h.hnsw.efSearch = max(ef, k)
                ms, got = _times(lambda qv, ix=h: ix.search(qv.reshape(1, -1), k)[1][0], qvecs)
                rec = _recall_vs(exact, got, k)
                row["hnsw"][ef] = {"ms": (percentile(ms, 50), percentile(ms, 95)), "recall": rec}
                echo(f"[{n:>8}] hnsw   efSearch {ef:>4}: query {_fmt(ms)}   recall@{k} vs exact {rec:.4f}")
            h = None
            gc.collect()
        # the whole retrieval with the automatic choice
        dense, d_ms, d_hits = stages[auto]
        fu_ms = []
        for qv, a, b in zip(qvecs, d_hits, bm_hits):
            t0 = time.perf_counter()
            fused = rrf([a.tolist(), b.tolist()], k=s.rrf_k)[:k]
            dense.distances(qv, [c for c, _ in fused])
            fu_ms.append((time.perf_counter() - t0) * 1000)
        whole = [e + a + b + c for e, a, b, c in zip(emb_ms, d_ms, bm_ms, fu_ms)]
        row.update(auto=auto, fusion_ms=(percentile(fu_ms, 50), percentile(fu_ms, 95)), whole_ms=(percentile(whole, 50), percentile(whole, 95)),
                   rss_mib=rss_mib(), peak_rss_mib=peak_rss_mib())
        echo(f"[{n:>8}] fusion (rrf + distances of the top {k}): {_fmt(fu_ms)}")
        echo(f"[{n:>8}] whole retrieval with {auto}: embed + dense + bm25 + fusion {_fmt(whole)} ms; process RSS "
             f"{row['rss_mib']:.0f} MiB (encoder + {auto} + bm25), peak so far {row['peak_rss_mib']:.0f} MiB")
        out["sizes"][n] = row
        dense = bm25 = stages = None
        gc.collect()
    return out
