"""The scale benchmark (``python -m rag bench scale``, issue 18): the encoder comparison, the backends; the
scale curve to 1M chunks is :mod:`rag.evaluation.bench.curve`.

Five parts, each printed with the date, the machine and its load (``uptime``),
since on a shared 2-core machine timings taken under load are inflated; counts
(recall, sign tests) do not depend on load. Nothing here is enforced.

* ``ingest``: each shared corpus ingested in one batch into a new store: ms per
  chunk, pages per second, peak memory.
* ``encoders`` (counts) and ``encoder-speed`` (times): the float all-MiniLM-L6-v2 against its int8 ONNX build on both
  shared corpora (``corpus/`` and ``corpus/pdf-dev/``, both phrasings of every
  question): cosine between their vectors, ms per chunk at several batch sizes
  and thread counts, ms per query, needle recall@1/4/20 in hybrid and dense
  mode, and exact paired sign tests (int8 against float, same queries).
* ``curve``: the corpus vectors replicated to each size (1k .. 1M) with a
  small perturbation per copy (so that copies are distinct vectors and
  recall against exact search means something), searched with the real
  query vectors: per-stage p50/p95 (query embedding, dense, BM25, fusion),
  build time, process memory, and recall@20 of each approximate FAISS index
  against the exact flat one.
* ``backends``: the local FAISS + bm25s leg against Milvus (milvus-lite) on
  both corpora: recall, paired sign tests, identical top-k, latency.

Units: ms (wall clock), MiB (resident set size), chunks; ranks 1-based.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag.answer.gate import apply_gate
from rag.answer.gate.learned_gate import apply_learned_gate
from rag.evaluation.bench.corpora import CORPORA, ChunkedCorpus, corpus
from rag.evaluation.bench.machine import header, load_average, peak_rss_mib, percentile, rss_mib
from rag.evaluation.cache import EmbeddingCache
from rag.evaluation.metrics import hits_at, sign_test
from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.index.embed import Embedder, OnnxEmbedder, encoder_spec, load_embedder
from rag.index.fusion import retrieve
from rag.settings import get_settings
from rag.store.backend import LocalBackend
from rag.store.backend import search as backend_search
from rag.store.milvus import MilvusBackend
from rag.store.results import IngestStatus
from rag.store.store import Store
from rag.text import TermStats
from rag.types import RetrievalMode

Echo = Callable[[str], None]


def _fmt(ms: Sequence[float]) -> str:
    return f"p50 {percentile(ms, 50):7.2f}  p95 {percentile(ms, 95):7.2f}"


def ranks_for(corpus: ChunkedCorpus, vecs: np.ndarray, qvecs: np.ndarray, mode: str, *,
              k: int = 20, settings=None) -> list[int | None]:
    """First-correct ranks of every query of ``corpus`` with throwaway local indexes over ``vecs`` (chunk order)."""
    s = settings or get_settings()
    ids = np.arange(len(corpus.chunks), dtype=np.int64)
    dense = DenseIndex.build(ids, vecs)
    bm25 = BM25Index.build(corpus.texts, ids, k1=s.bm25_k1, b=s.bm25_b)
    out = []
    for q, qv in zip(corpus.queries, qvecs):
        hits = retrieve(q.text, qv, dense, bm25, k=k, mode=mode, depth=max(k, s.candidates_k), rrf_k=s.rrf_k)
        out.append(corpus.first_rank([h.chunk_id for h in hits], q.needle, k))
    return out


def _sign(a: Sequence[bool], b: Sequence[bool]) -> str:
    """``+wins / -losses, p = ...`` of ``a`` against ``b`` (:func:`rag.evaluation.metrics.sign_test`)."""
    return str(sign_test(a, b))


# --------------------------------------------------------------------------- part 0: ingest

def bench_ingest(echo: Echo = print, *, encoder: str | None = None, backend: str = "local") -> dict:
    """Part ``ingest``: each shared corpus ingested with one batch (:meth:`rag.store.store.Store.ingest_paths`)
    into a new temporary store: ms per chunk end to end, pages per second (PDF), the final index update's
    share, and the process's peak resident memory (model loading included)."""
    import tempfile

    echo(header("bench scale: ingest"))
    out: dict = {}
    for name in CORPORA:
        files = corpus(name).files()
        with tempfile.TemporaryDirectory(prefix="rag-ingest-") as tmp:
            s = get_settings(store=tmp, encoder=encoder, backend=backend)
            store = Store(tmp, settings=s)
            _ = store.embedder  # load the model before timing
            t0 = time.perf_counter()
            results = store.ingest_paths(files)
            took = time.perf_counter() - t0
            chunks = sum(r.chunk_count for r in results if r.status == IngestStatus.READY)
            pages = sum(d.pages for d in store.documents())
            row = {"files": len(files), "chunks": chunks, "pages": pages, "seconds": took,
                   "ms_per_chunk": took * 1000 / max(1, chunks), "pages_per_s": pages / took if pages else None,
                   "peak_rss_mib": peak_rss_mib(), "encoder": store.encoder.key if store.encoder else None,
                   "load": load_average()}
            store.close()
        out[name] = row
        pps = f", {row['pages_per_s']:.2f} pages/s" if pages else ""
        echo(f"{name}: {len(files)} files, {chunks} chunks in {took:.1f} s: {row['ms_per_chunk']:.1f} ms per chunk"
             f"{pps}; encoder {row['encoder']}, backend {backend}; peak RSS {row['peak_rss_mib']:.0f} MiB ({load_average()})")
    return out


# --------------------------------------------------------------------------- part 1: encoders

def _set_threads(embedder: Embedder | OnnxEmbedder, threads: int, batch: int) -> Embedder | OnnxEmbedder:
    """The same encoder with ``threads`` and ``batch``: torch's global thread count, or a new ONNX session."""
    import torch

    embedder.batch_size = batch
    if isinstance(embedder, Embedder):
        torch.set_num_threads(threads)
        return embedder
    if embedder.threads != threads:
        embedder = load_embedder("minilm-int8", batch_size=batch, threads=threads)
    return embedder


def encoder_speed(embedder, texts: Sequence[str], queries: Sequence[str], *, batches=(1, 8, 16, 32, 64),
                  threads=(1, 2), echo: Echo = print) -> dict:
    """ms per chunk for each (threads, batch) over ``texts``, and ms per query (p50/p95) per thread count."""
    out: dict = {"chunk_ms": {}, "query_ms": {}}
    for t in threads:
        embedder = _set_threads(embedder, t, batches[0])
        embedder.encode(list(texts[:8]))  # warm-up
        for b in batches:
            embedder.batch_size = b
            t0 = time.perf_counter()
            embedder.encode(list(texts))
            ms = (time.perf_counter() - t0) * 1000 / len(texts)
            out["chunk_ms"][f"t{t}/b{b}"] = ms
            echo(f"  {embedder.key:<12} threads {t} batch {b:>3}: {ms:6.2f} ms/chunk   ({load_average()})")
        qms = []
        for q in queries:
            t0 = time.perf_counter()
            embedder.encode_query(q)
            qms.append((time.perf_counter() - t0) * 1000)
        out["query_ms"][f"t{t}"] = (percentile(qms, 50), percentile(qms, 95))
        echo(f"  {embedder.key:<12} threads {t} query: p50 {percentile(qms, 50):.2f} ms  p95 {percentile(qms, 95):.2f} ms")
    return out


def bench_encoder_speed(corpora: Sequence[ChunkedCorpus], echo: Echo = print, *, sample: int = 128,
                        batches=(1, 16, 32, 64), threads=(1, 2), encoders=("minilm", "minilm-int8"),
                        whole: bool = False) -> dict:
    """Encoder speed (part ``encoder-speed``): load time, ms per chunk for each (threads, batch) over a fixed
    sample of chunk texts, ms per query; with ``whole``, both corpora embedded whole with the settings' batch
    and threads. Timings: read them with the load printed beside each."""
    echo(header("bench scale: encoder speed"))
    s = get_settings()
    rng = np.random.default_rng(0)
    pool = [t for c in corpora for t in c.texts]
    sample_texts = [pool[i] for i in rng.choice(len(pool), size=min(sample, len(pool)), replace=False)]
    all_queries = [q.text for c in corpora for q in c.queries]
    result: dict = {}
    for key in encoders:
        t0 = time.perf_counter()
        emb = load_embedder(key, batch_size=s.embed_batch_size, threads=s.threads)
        load_s = time.perf_counter() - t0
        echo(f"{key}: loaded in {load_s:.2f} s, process RSS {rss_mib():.0f} MiB")
        result[key] = {"load_s": load_s, **encoder_speed(emb, sample_texts, all_queries, batches=batches,
                                                          threads=threads, echo=echo)}
        emb = _set_threads(emb, s.threads, s.embed_batch_size or encoder_spec(key).batch)
        for c in corpora if whole else ():
            t0 = time.perf_counter()
            emb.encode(c.texts)
            ms = (time.perf_counter() - t0) * 1000 / max(1, len(c.chunks))
            result[key][f"embed_{c.name}_ms_per_chunk"] = ms
            echo(f"  {key:<12} {c.name}: {len(c.chunks)} chunks at {ms:.2f} ms/chunk "
                 f"(threads {s.threads}, batch {emb.batch_size}; {load_average()})")
        del emb
        gc.collect()
    return result


def bench_encoders(corpora: Sequence[ChunkedCorpus], echo: Echo = print) -> dict:
    """Part ``encoders``: cosine between the float and int8 vectors of every chunk and query, needle
    recall@1/4/20 (hybrid and dense) with each, and exact paired sign tests int8 vs float. Counts only."""

    echo(header("bench scale: encoders (quality)"))
    s = get_settings()
    result: dict = {}
    vecs: dict[str, dict[str, np.ndarray]] = {}
    cache = EmbeddingCache()
    try:
        for key in ("minilm", "minilm-int8"):
            emb = load_embedder(key, batch_size=s.embed_batch_size, threads=s.threads)
            vecs[key] = {}
            for c in corpora:
                vecs[key][c.name] = cache.encode(c.texts, emb)
                vecs[key][c.name + "/q"] = emb.encode([q.text for q in c.queries])
            del emb
            gc.collect()
    finally:
        cache.close()
    for c in corpora:
        a, b = vecs["minilm"][c.name], vecs["minilm-int8"][c.name]
        cos = np.sum(a * b, axis=1)
        qa, qb = vecs["minilm"][c.name + "/q"], vecs["minilm-int8"][c.name + "/q"]
        qcos = np.sum(qa * qb, axis=1)
        cr: dict = {"chunks": len(c.chunks), "queries": len(c.queries), "cos_mean": float(cos.mean()),
                    "cos_min": float(cos.min()), "cos_p01": percentile(cos, 1), "query_cos_min": float(qcos.min())}
        echo(f"{c.name}: {len(c.chunks)} chunks, {len(c.queries)} queries; cosine int8 vs float: mean "
             f"{cos.mean():.5f}, 1st percentile {percentile(cos, 1):.5f}, min {cos.min():.5f}; queries min {qcos.min():.5f}")
        for mode in (RetrievalMode.HYBRID, RetrievalMode.DENSE):
            rf = ranks_for(c, a, qa, mode, settings=s)
            ri = ranks_for(c, b, qb, mode, settings=s)
            same = sum(x == y for x, y in zip(rf, ri))
            row = {"same_rank": same, "float_ranks": rf, "int8_ranks": ri}
            for k in (1, 4, 20):
                row[f"float@{k}"] = sum(hits_at(rf, k))
                row[f"int8@{k}"] = sum(hits_at(ri, k))
                row[f"sign@{k}"] = _sign(hits_at(ri, k), hits_at(rf, k))
            cr[mode] = row
            echo(f"  {mode:<6} recall@1/4/20  float {row['float@1']}/{row['float@4']}/{row['float@20']}  "
                 f"int8 {row['int8@1']}/{row['int8@4']}/{row['int8@20']}  of {len(c.queries)};  "
                 f"int8 vs float @1 {row['sign@1']}; @4 {row['sign@4']}; @20 {row['sign@20']}; "
                 f"same first-correct rank on {same}/{len(c.queries)}")
        result[c.name] = cr
    return result


# --------------------------------------------------------------------------- part 3: backends

def bench_backends(corpora: Sequence[ChunkedCorpus], echo: Echo = print, *, k: int = 20) -> dict:
    """Part ``backends``: the local FAISS + bm25s leg against Milvus (milvus-lite, a temporary file) on both
    corpora, same vectors (settings ``encoder``): build time, needle recall@1/4/20 (hybrid) with paired sign
    tests, identical top-``k`` lists, identical sources after the distance and the learned gate (what gets
    cited), the server-side RRF (``hybrid_search``) against the client-side one, and search latency."""
    import tempfile

    echo(header("bench scale: backends (local FAISS + bm25s vs Milvus through milvus-lite)"))
    s = get_settings()
    enc = encoder_spec(s.encoder)
    emb = load_embedder(enc.key, batch_size=s.embed_batch_size, threads=s.threads)
    out: dict = {"encoder": enc.key}
    tmp = tempfile.TemporaryDirectory(prefix="rag-milvus-")
    try:
        for c in corpora:
            cache = EmbeddingCache()
            try:
                vecs = cache.encode(c.texts, emb)
            finally:
                cache.close()
            qvecs = emb.encode([q.text for q in c.queries])
            ids = np.arange(len(c.chunks), dtype=np.int64)
            t0 = time.perf_counter()
            local = LocalBackend(vecs.shape[1], k1=s.bm25_k1, b=s.bm25_b)
            local.rebuild(ids, vecs, c.texts)
            t_local = time.perf_counter() - t0
            t0 = time.perf_counter()
            mil = MilvusBackend(str(Path(tmp.name) / f"{c.name}.db"), encoder=enc.name,
                                dim=vecs.shape[1], k1=s.bm25_k1, b=s.bm25_b)
            t_open = time.perf_counter() - t0
            t0 = time.perf_counter()
            mil.rebuild(ids, vecs, c.texts)
            t_mil = time.perf_counter() - t0
            stats = TermStats.from_texts(c.texts)
            kw = dict(k=k, mode=RetrievalMode.HYBRID, depth=max(k, s.candidates_k), rrf_k=s.rrf_k)
            ranks = {"local": [], "milvus": []}
            ms = {"local": [], "milvus": [], "milvus-server-rrf": []}
            same_top, same_gate, same_learned, server_same = 0, 0, 0, 0
            score_ratio = []
            for q, qv in zip(c.queries, qvecs):
                got = {}
                for name, be in (("local", local), ("milvus", mil)):
                    t0 = time.perf_counter()
                    got[name] = backend_search(be, q.text, qv, **kw)
                    ms[name].append((time.perf_counter() - t0) * 1000)
                    ranks[name].append(c.first_rank([h.chunk_id for h in got[name]], q.needle, k))
                t0 = time.perf_counter()
                server = mil.hybrid(q.text, qv, k=k, depth=kw["depth"], rrf_k=s.rrf_k)
                ms["milvus-server-rrf"].append((time.perf_counter() - t0) * 1000)
                la, mi = got["local"], got["milvus"]
                same_top += [h.chunk_id for h in la] == [h.chunk_id for h in mi]
                server_same += set(server) == {h.chunk_id for h in mi}
                ga = apply_gate(q.text, la, s.threshold, s.max_sources)
                gb = apply_gate(q.text, mi, s.threshold, s.max_sources)
                same_gate += [h.chunk_id for h in ga.sources] == [h.chunk_id for h in gb.sources]
                texts = {i: c.texts[i] for i in {h.chunk_id for h in la[:s.max_sources] + mi[:s.max_sources]}}
                la_l = apply_learned_gate(q.text, la, texts, stats, s.threshold, s.max_sources, s.min_score)
                mi_l = apply_learned_gate(q.text, mi, texts, stats, s.threshold, s.max_sources, s.min_score)
                same_learned += (la_l.refused == mi_l.refused
                                 and [h.chunk_id for h in la_l.sources] == [h.chunk_id for h in mi_l.sources])
                lb = local.bm25.search(q.text, 1)
                mb = mil.bm25.search(q.text, 1)
                if len(lb[1]) and len(mb[1]):
                    score_ratio.append(float(mb[1][0] / lb[1][0]))
            n = len(c.queries)
            row = {"chunks": len(c.chunks), "queries": n, "local_build_s": t_local, "milvus_open_s": t_open,
                   "milvus_build_s": t_mil, "same_top": same_top, "same_distance_gate_sources": same_gate,
                   "same_learned_gate": same_learned, "server_rrf_same_set": server_same,
                   "bm25_top_score_ratio": (percentile(score_ratio, 5), percentile(score_ratio, 50), percentile(score_ratio, 95)),
                   "ms": {kk: (percentile(v, 50), percentile(v, 95)) for kk, v in ms.items()}}
            for kk in (1, 4, 20):
                row[f"local@{kk}"] = sum(hits_at(ranks["local"], kk))
                row[f"milvus@{kk}"] = sum(hits_at(ranks["milvus"], kk))
                row[f"sign@{kk}"] = _sign(hits_at(ranks["milvus"], kk), hits_at(ranks["local"], kk))
            out[c.name] = row
            echo(f"{c.name}: {len(c.chunks)} chunks, {n} queries ({load_average()})")
            echo(f"  build: local {t_local:.2f} s; milvus-lite open {t_open:.2f} s + insert {t_mil:.2f} s")
            echo(f"  hybrid recall@1/4/20: local {row['local@1']}/{row['local@4']}/{row['local@20']}, milvus "
                 f"{row['milvus@1']}/{row['milvus@4']}/{row['milvus@20']} of {n}; milvus vs local @1 {row['sign@1']}; "
                 f"@4 {row['sign@4']}; @20 {row['sign@20']}")
            echo(f"  identical top {k}: {same_top}/{n}; identical distance-gate sources (cited): {same_gate}/{n}; "
                 f"identical learned-gate decision and sources: {same_learned}/{n}; server RRF same set as client "
                 f"RRF: {server_same}/{n}")
            echo(f"  BM25 top score milvus / local: p5 {row['bm25_top_score_ratio'][0]:.3f}, median "
                 f"{row['bm25_top_score_ratio'][1]:.3f}, p95 {row['bm25_top_score_ratio'][2]:.3f}")
            echo("  search ms (embedding excluded): " + "; ".join(f"{kk} {_fmt(v)}" for kk, v in ms.items()))
            mil.close()
    finally:
        tmp.cleanup()
    return out
