"""``python -m rag bench scale`` (issue 18): the encoder comparison, the scale curve to 1M chunks, the backends.

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
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import click
import numpy as np

from rag.answer.gate import apply_gate
from rag.answer.learned_gate import TermStats, apply_learned_gate
from rag.cli import common
from rag.errors import ExtractionError, StoreError
from rag.evaluation.cache import EmbeddingCache
from rag.evaluation.metrics import sign_test
from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex, choose_kind, ivf_lists
from rag.index.embed import encoder_spec, load_embedder
from rag.index.fusion import retrieve, rrf
from rag.ingest.chunk import chunk_document
from rag.ingest.extract import extract_bytes
from rag.settings import get_settings
from rag.store.backend import LocalBackend
from rag.store.backend import search as backend_search
from rag.store.milvus import MilvusBackend
from rag.store.store import Store
from rag.text import tokenize
from rag.tokens import count_tokens

Echo = Callable[[str], None]


# --------------------------------------------------------------------------- machine facts

def header(title: str, echo: Echo) -> None:
    """Print the title line with the date, the machine and the load (:func:`rag.cli.common.header`)."""
    echo(common.header(title))


# --------------------------------------------------------------------------- the shared corpora

@dataclass
class BenchQuery:
    """One query: ``key`` ``<question id>/<phrasing>``, ``text``, ``needle`` (whitespace collapsed)."""

    key: str
    text: str
    needle: str


@dataclass
class BenchCorpus:
    """A shared corpus chunked as the product does (strategy E): ``chunks`` (rag.types.Chunk), ``queries``,
    ``pages`` (physical PDF pages, 0 for Markdown), ``extract_s`` / ``chunk_s`` wall seconds."""

    name: str
    chunks: list
    queries: list[BenchQuery]
    pages: int = 0
    extract_s: float = 0.0
    chunk_s: float = 0.0
    contents: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.contents = [_squash(c.content) for c in self.chunks]

    @property
    def texts(self) -> list[str]:
        return [c.text for c in self.chunks]


def _squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


#: (name, documents folder, questions file, the two phrasing fields)
CORPORA = (
    ("markdown", "corpus/docs", "corpus/dev_questions.jsonl", ("query_course", "query_ticket")),
    ("pdf-dev", "corpus/pdf-dev/docs", "corpus/pdf-dev/questions.jsonl", ("query_doc", "query_user")),
)


def load_corpus(name: str, settings=None) -> BenchCorpus:
    """Extract and chunk one shared corpus (``markdown`` or ``pdf-dev``). Raises :class:`StoreError` if absent."""
    spec = next((c for c in CORPORA if c[0] == name), None)
    if spec is None:
        raise ValueError(f"unknown corpus {name!r}; allowed: {', '.join(c[0] for c in CORPORA)}")
    s = settings or get_settings()
    _, docs_dir, qfile, fields = spec
    root = common.shared_dir()
    if not (root / docs_dir).is_dir() or not (root / qfile).is_file():
        raise StoreError(f"shared corpus {name} not found under {root}")
    t0 = time.perf_counter()
    docs = []
    for f in sorted((root / docs_dir).iterdir()):
        if f.is_file() and not f.name.startswith("."):
            try:
                docs.append(extract_bytes(f.read_bytes(), f.name))
            except ExtractionError:
                continue
    t1 = time.perf_counter()
    chunks = [c for d in docs for c in chunk_document(d, "E", budget_chars=s.chunk_budget_chars,
                                                      overlap_chars=s.overlap_chars,
                                                      window_tokens=s.encoder_window_tokens,
                                                      count_tokens=count_tokens)]
    t2 = time.perf_counter()
    queries = []
    for line in (root / qfile).read_text(encoding="utf-8").splitlines():
        if line.strip():
            q = json.loads(line)
            queries += [BenchQuery(f"{q['id']}/{f}", q[f], _squash(q["needle"])) for f in fields]
    return BenchCorpus(name, chunks, queries, pages=sum(d.page_count or 0 for d in docs),
                       extract_s=t1 - t0, chunk_s=t2 - t1)


def first_rank(contents: Sequence[str], hit_ids: Sequence[int], needle: str, k: int = 20) -> int | None:
    """1-based rank of the first hit (among the top ``k``) whose content holds the whole needle."""
    for r, cid in enumerate(hit_ids[:k], start=1):
        if needle in contents[int(cid)]:
            return r
    return None


def ranks_for(corpus: BenchCorpus, vecs: np.ndarray, qvecs: np.ndarray, mode: str, *,
              k: int = 20, settings=None) -> list[int | None]:
    """First-correct ranks of every query of ``corpus`` with throwaway local indexes over ``vecs`` (chunk order)."""
    s = settings or get_settings()
    ids = np.arange(len(corpus.chunks), dtype=np.int64)
    dense = DenseIndex.build(ids, vecs)
    bm25 = BM25Index.build(corpus.texts, ids, k1=s.bm25_k1, b=s.bm25_b)
    out = []
    for q, qv in zip(corpus.queries, qvecs):
        hits = retrieve(q.text, qv, dense, bm25, k=k, mode=mode, depth=max(k, s.candidates_k), rrf_k=s.rrf_k)
        out.append(first_rank(corpus.contents, [h.chunk_id for h in hits], q.needle, k))
    return out


def at(ranks: Sequence[int | None], k: int) -> list[bool]:
    """Per query: first correct rank ``<= k``."""
    return [r is not None and r <= k for r in ranks]


def sign_test_line(a: Sequence[bool], b: Sequence[bool]) -> str:
    """``+wins / -losses, p = ...`` of ``a`` against ``b`` (exact two-sided sign test on discordant pairs)."""

    return str(sign_test(a, b))


# --------------------------------------------------------------------------- part 0: ingest

def bench_ingest(echo: Echo = print, *, encoder: str | None = None, backend: str = "local") -> dict:
    """Part ``ingest``: each shared corpus ingested with one batch (:meth:`rag.store.store.Store.ingest_paths`)
    into a new temporary store: ms per chunk end to end, pages per second (PDF), the final index update's
    share, and the process's peak resident memory (model loading included)."""
    import tempfile


    header("bench scale: ingest", echo)
    out: dict = {}
    root = common.shared_dir()
    for name, docs_dir, *_ in CORPORA:
        files = sorted(f for f in (root / docs_dir).iterdir() if f.is_file() and not f.name.startswith("."))
        with tempfile.TemporaryDirectory(prefix="rag-ingest-") as tmp:
            s = get_settings(store=tmp, encoder=encoder, backend=backend)
            store = Store(tmp, settings=s)
            _ = store.embedder  # load the model before timing
            t0 = time.perf_counter()
            results = store.ingest_paths(files)
            took = time.perf_counter() - t0
            chunks = sum(r.chunk_count for r in results if r.status == "ready")
            pages = sum(d.pages for d in store.documents())
            row = {"files": len(files), "chunks": chunks, "pages": pages, "seconds": took,
                   "ms_per_chunk": took * 1000 / max(1, chunks), "pages_per_s": pages / took if pages else None,
                   "peak_rss_mib": common.peak_rss_mib(), "encoder": store.encoder.key if store.encoder else None,
                   "load": common.load_average()}
            store.close()
        out[name] = row
        pps = f", {row['pages_per_s']:.2f} pages/s" if pages else ""
        echo(f"{name}: {len(files)} files, {chunks} chunks in {took:.1f} s: {row['ms_per_chunk']:.1f} ms per chunk"
             f"{pps}; encoder {row['encoder']}, backend {backend}; peak RSS {row['peak_rss_mib']:.0f} MiB ({common.load_average()})")
    return out


# --------------------------------------------------------------------------- part 1: encoders

def _set_threads(embedder, threads: int, batch: int):
    """The same encoder with ``threads`` and ``batch``: torch's global thread count, or a new ONNX session."""
    import torch

    embedder.batch_size = batch
    if embedder.key == "minilm":
        torch.set_num_threads(threads)
        return embedder
    if getattr(embedder, "threads", None) != threads:
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
            echo(f"  {embedder.key:<12} threads {t} batch {b:>3}: {ms:6.2f} ms/chunk   ({common.load_average()})")
        qms = []
        for q in queries:
            t0 = time.perf_counter()
            embedder.encode_query(q)
            qms.append((time.perf_counter() - t0) * 1000)
        out["query_ms"][f"t{t}"] = (common.percentile(qms, 50), common.percentile(qms, 95))
        echo(f"  {embedder.key:<12} threads {t} query: p50 {common.percentile(qms, 50):.2f} ms  p95 {common.percentile(qms, 95):.2f} ms")
    return out


def bench_encoder_speed(corpora: Sequence[BenchCorpus], echo: Echo = print, *, sample: int = 128,
                        batches=(1, 16, 32, 64), threads=(1, 2), encoders=("minilm", "minilm-int8"),
                        whole: bool = False) -> dict:
    """Encoder speed (part ``encoder-speed``): load time, ms per chunk for each (threads, batch) over a fixed
    sample of chunk texts, ms per query; with ``whole``, both corpora embedded whole with the settings' batch
    and threads. Timings: read them with the load printed beside each."""
    header("bench scale: encoder speed", echo)
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
        echo(f"{key}: loaded in {load_s:.2f} s, process RSS {common.rss_mib():.0f} MiB")
        result[key] = {"load_s": load_s, **encoder_speed(emb, sample_texts, all_queries, batches=batches,
                                                          threads=threads, echo=echo)}
        emb = _set_threads(emb, s.threads, s.embed_batch_size or encoder_spec(key).batch)
        for c in corpora if whole else ():
            t0 = time.perf_counter()
            emb.encode(c.texts)
            ms = (time.perf_counter() - t0) * 1000 / max(1, len(c.chunks))
            result[key][f"embed_{c.name}_ms_per_chunk"] = ms
            echo(f"  {key:<12} {c.name}: {len(c.chunks)} chunks at {ms:.2f} ms/chunk "
                 f"(threads {s.threads}, batch {emb.batch_size}; {common.load_average()})")
        del emb
        gc.collect()
    return result


def bench_encoders(corpora: Sequence[BenchCorpus], echo: Echo = print) -> dict:
    """Part ``encoders``: cosine between the float and int8 vectors of every chunk and query, needle
    recall@1/4/20 (hybrid and dense) with each, and exact paired sign tests int8 vs float. Counts only."""

    header("bench scale: encoders (quality)", echo)
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
                    "cos_min": float(cos.min()), "cos_p01": common.percentile(cos, 1), "query_cos_min": float(qcos.min())}
        echo(f"{c.name}: {len(c.chunks)} chunks, {len(c.queries)} queries; cosine int8 vs float: mean "
             f"{cos.mean():.5f}, 1st percentile {common.percentile(cos, 1):.5f}, min {cos.min():.5f}; queries min {qcos.min():.5f}")
        for mode in ("hybrid", "dense"):
            rf = ranks_for(c, a, qa, mode, settings=s)
            ri = ranks_for(c, b, qb, mode, settings=s)
            same = sum(x == y for x, y in zip(rf, ri))
            row = {"same_rank": same, "float_ranks": rf, "int8_ranks": ri}
            for k in (1, 4, 20):
                row[f"float@{k}"] = sum(at(rf, k))
                row[f"int8@{k}"] = sum(at(ri, k))
                row[f"sign@{k}"] = sign_test_line(at(ri, k), at(rf, k))
            cr[mode] = row
            echo(f"  {mode:<6} recall@1/4/20  float {row['float@1']}/{row['float@4']}/{row['float@20']}  "
                 f"int8 {row['int8@1']}/{row['int8@4']}/{row['int8@20']}  of {len(c.queries)};  "
                 f"int8 vs float @1 {row['sign@1']}; @4 {row['sign@4']}; @20 {row['sign@20']}; "
                 f"same first-correct rank on {same}/{len(c.queries)}")
        result[c.name] = cr
    return result


# --------------------------------------------------------------------------- part 2: the scale curve

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
    return f"p50 {common.percentile(ms, 50):7.2f}  p95 {common.percentile(ms, 95):7.2f}"


def curve_base(corpora: Sequence[BenchCorpus], encoder: str | None = None):
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


def bench_curve(corpora: Sequence[BenchCorpus], sizes: Sequence[int], echo: Echo = print, *,
                nprobes=(8, 16, 32, 64, 128, 256), hnsw_max: int = 100_000, ef_searches=(16, 32, 64, 128),
                k: int = 20) -> dict:
    """Part 2 (see the module docstring): per size, build time and memory of each dense index, per-stage query
    times (depth ``k``, as the store searches), recall@``k`` of the approximate indexes against exact search,
    BM25 build/query, and the whole retrieval with the index ``kind="auto"`` picks. Returns the figures."""
    import faiss


    header("bench scale: curve", echo)
    s = get_settings()
    enc = encoder_spec(s.encoder).key
    base, tokens, queries, qvecs, emb_ms = curve_base(corpora, enc)
    d = base.shape[1]
    echo(f"base: {len(base)} real chunks ({', '.join(c.name for c in corpora)}), {len(queries)} real queries; "
         f"replicas perturbed (sigma {REPLICA_SIGMA[0]}..{REPLICA_SIGMA[1]} per dimension), ids i -> chunk i % "
         f"{len(base)}; depth {k}; encoder {enc}; faiss threads {faiss.omp_get_max_threads()}")
    echo(f"query embedding ({enc}): {_fmt(emb_ms)} ms")
    out: dict = {"base_chunks": len(base), "queries": len(queries), "encoder": enc,
                 "embed_ms": (common.percentile(emb_ms, 50), common.percentile(emb_ms, 95)), "sizes": {}}
    for n in sizes:
        gc.collect()
        row: dict = {"load": common.load_average()}
        echo(f"[{n:>8}] {common.load_average()}; process RSS {common.rss_mib():.0f} MiB before")
        # BM25
        reps = -(-n // len(tokens))
        r0, t0 = common.rss_mib(), time.perf_counter()
        bm25 = BM25Index.from_tokens((tokens * reps)[:n], np.arange(n, dtype=np.int64), k1=s.bm25_k1, b=s.bm25_b)
        row["bm25_build_s"], row["bm25_mib"] = time.perf_counter() - t0, common.rss_mib() - r0
        bm_ms, bm_hits = _times(lambda q, ix=bm25: ix.search(q, k)[0], queries)
        row["bm25_ms"] = (common.percentile(bm_ms, 50), common.percentile(bm_ms, 95))
        echo(f"[{n:>8}] bm25   build {row['bm25_build_s']:7.1f} s  +{row['bm25_mib']:6.0f} MiB   query {_fmt(bm_ms)}")
        # flat (exact): the ground truth
        r0, t0 = common.rss_mib(), time.perf_counter()
        flat = DenseIndex(d)
        for ids, v in replicated_blocks(base, n):
            flat.add(ids, v)
        row["flat_build_s"], row["flat_mib"] = time.perf_counter() - t0, common.rss_mib() - r0
        fl_ms, exact = _times(lambda qv, ix=flat: ix.search(qv, k)[0], qvecs)
        row["flat_ms"] = (common.percentile(fl_ms, 50), common.percentile(fl_ms, 95))
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
            r0, t0 = common.rss_mib(), time.perf_counter()
            ivf = DenseIndex.empty_ivf(d, nlist)
            ivf.train(replicated_sample(base, n, min(n, 40 * nlist)))
            t_train = time.perf_counter() - t0
            for ids, v in replicated_blocks(base, n):
                ivf.add(ids, v)
            row["ivf_build_s"], row["ivf_train_s"], row["ivf_mib"] = time.perf_counter() - t0, t_train, common.rss_mib() - r0
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
                row["ivf"][p] = {"ms": (common.percentile(ms, 50), common.percentile(ms, 95)), "recall": rec}
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
            r0, t0 = common.rss_mib(), time.perf_counter()
            h = faiss.IndexHNSWFlat(d, 32, faiss.METRIC_INNER_PRODUCT)
            h.hnsw.efConstruction = 40
            for _, v in replicated_blocks(base, n):
                h.add(v)
            row["hnsw_build_s"], row["hnsw_mib"] = time.perf_counter() - t0, common.rss_mib() - r0
            echo(f"[{n:>8}] hnsw   build {row['hnsw_build_s']:7.1f} s  +{row['hnsw_mib']:6.0f} MiB   (M 32, efConstruction 40)")
            row["hnsw"] = {}
            for ef in ef_searches:
                h.hnsw.efSearch = max(ef, k)
                ms, got = _times(lambda qv, ix=h: ix.search(qv.reshape(1, -1), k)[1][0], qvecs)
                rec = _recall_vs(exact, got, k)
                row["hnsw"][ef] = {"ms": (common.percentile(ms, 50), common.percentile(ms, 95)), "recall": rec}
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
        row.update(auto=auto, fusion_ms=(common.percentile(fu_ms, 50), common.percentile(fu_ms, 95)), whole_ms=(common.percentile(whole, 50), common.percentile(whole, 95)),
                   rss_mib=common.rss_mib(), peak_rss_mib=common.peak_rss_mib())
        echo(f"[{n:>8}] fusion (rrf + distances of the top {k}): {_fmt(fu_ms)}")
        echo(f"[{n:>8}] whole retrieval with {auto}: embed + dense + bm25 + fusion {_fmt(whole)} ms; process RSS "
             f"{row['rss_mib']:.0f} MiB (encoder + {auto} + bm25), peak so far {row['peak_rss_mib']:.0f} MiB")
        out["sizes"][n] = row
        dense = bm25 = stages = None
        gc.collect()
    return out


# --------------------------------------------------------------------------- part 3: backends

def bench_backends(corpora: Sequence[BenchCorpus], echo: Echo = print, *, k: int = 20) -> dict:
    """Part ``backends``: the local FAISS + bm25s leg against Milvus (milvus-lite, a temporary file) on both
    corpora, same vectors (settings ``encoder``): build time, needle recall@1/4/20 (hybrid) with paired sign
    tests, identical top-``k`` lists, identical sources after the distance and the learned gate (what gets
    cited), the server-side RRF (``hybrid_search``) against the client-side one, and search latency."""
    import tempfile


    header("bench scale: backends (local FAISS + bm25s vs Milvus through milvus-lite)", echo)
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
            kw = dict(k=k, mode="hybrid", depth=max(k, s.candidates_k), rrf_k=s.rrf_k)
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
                    ranks[name].append(first_rank(c.contents, [h.chunk_id for h in got[name]], q.needle, k))
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
                   "bm25_top_score_ratio": (common.percentile(score_ratio, 5), common.percentile(score_ratio, 50), common.percentile(score_ratio, 95)),
                   "ms": {kk: (common.percentile(v, 50), common.percentile(v, 95)) for kk, v in ms.items()}}
            for kk in (1, 4, 20):
                row[f"local@{kk}"] = sum(at(ranks["local"], kk))
                row[f"milvus@{kk}"] = sum(at(ranks["milvus"], kk))
                row[f"sign@{kk}"] = sign_test_line(at(ranks["milvus"], kk), at(ranks["local"], kk))
            out[c.name] = row
            echo(f"{c.name}: {len(c.chunks)} chunks, {n} queries ({common.load_average()})")
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


# --------------------------------------------------------------------------- CLI

@click.command()
@click.option("--part", "parts", type=click.Choice(["ingest", "encoders", "encoder-speed", "curve", "backends"]),
              multiple=True,
              help="Which parts to run (repeatable; default all).")
@click.option("--sizes", default="1000,10000,100000,1000000", show_default=True,
              help="Scale curve: index sizes in chunks.")
@click.option("--hnsw-max", type=int, default=100_000, show_default=True,
              help="Scale curve: measure HNSW (for comparison) up to this size.")
@click.option("--encoder", "encoders", type=click.Choice(["minilm", "minilm-int8"]), multiple=True,
              help="encoder-speed: which encoders (repeatable; default both).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Also write every figure to this JSON file.")
def bench_scale_cmd(parts: tuple[str, ...], sizes: str, hnsw_max: int, encoders: tuple[str, ...],
                    json_path: str | None) -> None:
    """Encoder comparison, scale curve to 1M chunks, local vs Milvus backend (issue 18; nothing enforced)."""
    parts = parts or ("ingest", "encoders", "encoder-speed", "curve", "backends")
    out: dict = {"date": datetime.now().astimezone().isoformat(timespec="seconds"), "machine": common.machine_summary()}
    if "ingest" in parts:
        out["ingest"] = bench_ingest(click.echo)
    corpora = [load_corpus(name) for name, *_ in CORPORA] if set(parts) - {"ingest"} else []
    for c in corpora:
        click.echo(f"{c.name}: {len(c.chunks)} chunks, {c.pages} pages; extract {c.extract_s:.1f} s, "
                   f"chunk {c.chunk_s:.1f} s")
    if "encoders" in parts:
        out["encoders"] = bench_encoders(corpora, click.echo)
    if "encoder-speed" in parts:
        out["encoder_speed"] = bench_encoder_speed(corpora, click.echo,
                                                   encoders=encoders or ("minilm", "minilm-int8"))
    if "curve" in parts:
        out["curve"] = bench_curve(corpora, [int(x) for x in sizes.split(",") if x.strip()], click.echo,
                                   hnsw_max=hnsw_max)
    if "backends" in parts:
        out["backends"] = bench_backends(corpora, click.echo)
    if json_path:
        Path(json_path).write_text(json.dumps(out, indent=2, default=str))
