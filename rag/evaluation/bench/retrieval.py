"""The retrieval benchmark (``python -m rag bench retrieval``): ingest and per-stage retrieval speed, recall by
wording, then at scale.

On a shared corpus (``--corpus course``: the 13 Markdown chapters and the
13-page DPR PDF; ``--corpus pdf-dev``: the 8 real PDFs; ``--corpus real``: the
8 real documents of the answer benchmarks, issue 40) it prints, under the
common header (date, machine, load):

* ingest time per chunk (design 22), query embedding and each stage's ms
  (BM25, dense, fusion + gate) at p50 / p95, the whole ``store.gate`` call;
* R@1/4/8/20 and MRR of the store's own search in each mode (dense, bm25,
  hybrid), over all queries and per wording (documents' / users', issue 19),
  and paired sign tests of hybrid against the other modes per wording;
* both wordings side by side (issue 40): the product's hybrid R@k and MRR, and
  the share of questions whose passage reaches the model's sources (what
  :func:`rag.answer.pipeline.search_and_gate` keeps: at most 4, none when it
  refuses), with its Wilson interval;
* build time, memory and stage times on the corpus's vectors replicated to
  ``--sizes`` chunks.

Figures are printed, never enforced; timings are only comparable on a quiet machine.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from rag.answer.gate import apply_gate
from rag.answer.pipeline import search_and_gate
from rag.evaluation.bench.corpora import corpus as shared_corpus
from rag.evaluation.bench.corpora import ingest_missing
from rag.evaluation.bench.machine import header, p50_p95, percentile, rss_mib
from rag.evaluation.data import EvalQuery, by_wording, expand_queries, load_questions
from rag.evaluation.metrics import RECALL_KS, first_hit_rank, hits_at, sign_test, summarize_ranks, wilson_interval
from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.index.fusion import rrf
from rag.settings import get_settings
from rag.store.results import IngestStatus
from rag.store.store import Store
from rag.types import Hit, RetrievalMode

#: Modes whose recall is measured through ``Store.search``; the first is compared with the others.
RECALL_MODES = (RetrievalMode.HYBRID, RetrievalMode.DENSE, RetrievalMode.BM25)
#: The DPR paper the course corpus is timed with beside its Markdown chapters.
DPR_PDF = "01-dpr-paper-two-column-13p.pdf"


def _time_queries(queries, qvecs, dense, bm25, settings, repeat: int) -> dict[str, list[float]]:
    """Per-query ms of each retrieval stage (embedding excluded; measured separately)."""
    t: dict[str, list[float]] = {"bm25": [], "dense": [], "fusion+gate": []}
    depth = 100
    for _ in range(repeat):
        for q, qv in zip(queries, qvecs):
            t0 = time.perf_counter()
            b_ids, _ = bm25.search(q, depth)
            t1 = time.perf_counter()
            d_ids, _ = dense.search(qv, depth)
            t2 = time.perf_counter()
            fused = rrf([d_ids.tolist(), b_ids.tolist()], k=settings.rrf_k)[:20]
            dist = dense.distances(qv, [c for c, _ in fused])
            hits = [Hit(c, i, i, s, float(d)) for i, ((c, s), d) in enumerate(zip(fused, dist), start=1)]
            apply_gate(q, hits, settings.threshold, settings.max_sources)
            t3 = time.perf_counter()
            t["bm25"].append((t1 - t0) * 1000)
            t["dense"].append((t2 - t1) * 1000)
            t["fusion+gate"].append((t3 - t2) * 1000)
    return t


def search_ranks(store, queries: Sequence[EvalQuery], mode: str, k: int = 20) -> dict[str, int | None]:
    """Per query key: 1-based rank of the first chunk of ``store.search(text, k, mode)`` holding the needle."""
    out = {}
    for q in queries:
        hits = store.search(q.text, k=k, mode=mode)
        out[q.key] = first_hit_rank([r.content for r in store.chunks([h.chunk_id for h in hits])], q.needle)
    return out


def recall_lines(queries: Sequence[EvalQuery], ranks: dict[str, dict[str, int | None]]) -> list[str]:
    """Text table: R@1/4/8/20 and MRR per mode, over all queries and each wording (``ranks``: mode -> key -> rank)."""
    groups = {"all": list(queries)} | {str(w): qs for w, qs in by_wording(queries).items()}
    lines = ["mode     wording    n  " + "  ".join(f"R@{k:<4}" for k in RECALL_KS) + "  MRR"]
    for mode, r in ranks.items():
        for g, qs in groups.items():
            s = summarize_ranks([r[q.key] for q in qs], g)
            lines.append(f"{mode:<8} {g:<7} {s.n_queries:>4}  " + "  ".join(f"{s.recall[k].value:.3f}" for k in RECALL_KS)
                         + f"  {s.mrr:.3f}")
    return lines


def passage_in_sources(store, gate, needle: str) -> bool:
    """Whether the model would read the passage: ``gate`` (a :class:`rag.answer.gate.GateResult` of ``store``) did
    not refuse and one of its ``sources`` has a content holding the whole ``needle``."""
    if gate.refused or not gate.sources:
        return False
    return first_hit_rank([r.content for r in store.chunks([h.chunk_id for h in gate.sources])], needle) is not None


def wording_lines(queries: Sequence[EvalQuery], ranks: dict[str, int | None], in_sources: dict[str, bool]) -> list[str]:
    """Text table, one row per wording (issue 40): R@1/4/8/20 and MRR of ``ranks`` (key -> rank, the product's
    hybrid search), then how many of the wording's questions have their passage among the model's sources
    (``in_sources``: key -> bool), that share and its 95 % Wilson interval."""
    lines = ["wording    n  " + "  ".join(f"R@{k:<4}" for k in RECALL_KS) + "  MRR    passage in the model's sources"]
    for w, qs in by_wording(queries).items():
        s = summarize_ranks([ranks[q.key] for q in qs], str(w))
        held = sum(bool(in_sources.get(q.key)) for q in qs)
        lo, hi = wilson_interval(held, len(qs))
        share = held / len(qs) if qs else 0.0
        lines.append(f"{str(w):<7} {s.n_queries:>4}  " + "  ".join(f"{s.recall[k].value:.3f}" for k in RECALL_KS)
                     + f"  {s.mrr:.3f}  {held:>3} of {len(qs):<3} {share:.3f} [{lo:.3f}, {hi:.3f}]")
    return lines


def sign_test_lines(queries: Sequence[EvalQuery], ranks: dict[str, dict[str, int | None]], ks=(4, 20)) -> list[str]:
    """Text table: the first mode of ``ranks`` against each other, paired sign tests at R@k per wording."""
    groups = {"all": list(queries)} | {str(w): qs for w, qs in by_wording(queries).items()}
    modes = list(ranks)
    first = modes[0]
    lines = []
    for other in modes[1:]:
        for k in ks:
            cells = []
            for g, qs in groups.items():
                t = sign_test(hits_at([ranks[first][q.key] for q in qs], k), hits_at([ranks[other][q.key] for q in qs], k))
                cells.append(f"{g} {t}")
            lines.append(f"{first} vs {other} R@{k:<3} " + ";  ".join(cells))
    return lines


def bench_retrieval(store_dir: str | None, sizes: list[int], repeat: int, echo: Callable[[str], None] = print,
                    corpus_name: str = "course", shared: Path | None = None) -> None:
    """The retrieval benchmark (see :func:`bench_retrieval_cmd`): prints date, machine and the figures."""
    import torch  # heavy: only when the benchmark runs

    corpus = shared_corpus(corpus_name, shared)
    tmp = None if store_dir else tempfile.TemporaryDirectory(prefix="rag-bench-")
    s = get_settings(store=store_dir or tmp.name)
    files = corpus.files()
    if corpus_name == "course":
        files = [f for f in files if f.suffix == ".md"] + [corpus.docs.parent / "pdfs" / DPR_PDF]
    echo(header(f"bench retrieval --corpus {corpus_name}"))
    echo(f"torch threads    {torch.get_num_threads()}")
    store = Store(s.store, settings=s)
    _ = store.embedder  # load the model before timing
    t0 = time.perf_counter()
    done = ingest_missing(store, files)
    ingest_s = time.perf_counter() - t0
    n, new_chunks = store.chunk_count, sum(r.chunk_count for r in done if r.status == IngestStatus.READY)
    if new_chunks:
        echo(f"ingest           {len(done)} files, {new_chunks} chunks in {ingest_s:.1f} s: "
             f"{ingest_s * 1000 / new_chunks:.1f} ms per chunk end to end (design 22)")
    else:
        echo(f"ingest           skipped: {n} chunks already in {store.path}")
    queries = expand_queries(load_questions(corpus.questions))
    texts = [q.text for q in queries]
    emb_ms, qvecs = [], []
    for q in texts:
        t = time.perf_counter()
        qvecs.append(store.embedder.encode_query(q))
        emb_ms.append((time.perf_counter() - t) * 1000)
    idx = store.index_cache.current()
    total_ms, gates = [], {}
    for q in queries:
        t = time.perf_counter()
        gates[q.key] = search_and_gate(store, q.text)
        total_ms.append((time.perf_counter() - t) * 1000)
    in_sources = {q.key: passage_in_sources(store, gates[q.key], q.needle) for q in queries}
    n_w = {str(w): len(v) for w, v in by_wording(queries).items()}
    echo(f"queries          {len(queries)} ({', '.join(f'{v} {w}' for w, v in n_w.items())} wording), "
         f"{repeat} pass(es); times in ms")
    echo(f"[{n} chunks]  query embedding  {p50_p95(emb_ms)}   (design 13)")
    stages = _time_queries(texts, qvecs, idx.dense, idx.bm25, s, repeat)
    for k, v in stages.items():
        echo(f"[{n} chunks]  {k:<15}  {p50_p95(v)}   {dict(bm25='(design 1.14)', dense='(design 0.3)').get(k, '')}")
    echo(f"[{n} chunks]  whole retrieval  {p50_p95(total_ms)}   (search_and_gate: embed+dense+BM25+fusion+gate; target p50 25)")
    ranks = {m: search_ranks(store, queries, m) for m in RECALL_MODES}
    echo(f"\n[{n} chunks]  recall of store.search (top 20; a chunk's content holds the whole needle)")
    for line in recall_lines(queries, ranks) + ["", "paired sign tests (+first wins / -losses, p)"] + sign_test_lines(queries, ranks):
        echo(f"  {line}")
    echo(f"\n[{n} chunks]  both wordings side by side (hybrid, the product's search; sources: search_and_gate, "
         f"gate {s.gate}, at most {s.max_sources})")
    for line in wording_lines(queries, ranks[RetrievalMode.HYBRID], in_sources):
        echo(f"  {line}")
    echo("")
    _at_scale(store, texts, qvecs, emb_ms, sizes, s, repeat, echo)
    store.close()
    if tmp:
        tmp.cleanup()


def _at_scale(store, texts: list[str], qvecs: list, emb_ms: list[float], sizes: list[int], s, repeat: int,
              echo: Callable[[str], None]) -> None:
    """Build and time the indexes on the store's vectors replicated to each of ``sizes`` chunks."""
    table = store.index_cache.rows()
    chunk_texts, vecs = list(table.texts), table.vectors
    emb_p50 = percentile(emb_ms, 50)
    for size in sizes:
        reps = -(-size // len(chunk_texts))
        big_ids = np.arange(reps * len(chunk_texts), dtype=np.int64)
        rss0 = rss_mib()
        t = time.perf_counter()
        dense = DenseIndex.build(big_ids, np.tile(vecs, (reps, 1)))
        t_d = time.perf_counter() - t
        t = time.perf_counter()
        bm25 = BM25Index.build(chunk_texts * reps, big_ids)
        t_b = time.perf_counter() - t
        rss1 = rss_mib()
        m = len(big_ids)
        echo(f"[{m} chunks]  build: dense {t_d * 1000:.0f} ms, BM25 {t_b * 1000:.0f} ms; "
             f"RSS +{rss1 - rss0:.0f} MiB (vectors alone {m * store.model_dim * 4 / 2**20:.0f} MiB), "
             f"process RSS {rss1:.0f} MiB")
        st = _time_queries(texts, qvecs, dense, bm25, s, repeat)
        for k, v in st.items():
            echo(f"[{m} chunks]  {k:<15}  {p50_p95(v)}")
        whole = [emb_p50 + a + b + c for a, b, c in zip(st["bm25"], st["dense"], st["fusion+gate"])]
        echo(f"[{m} chunks]  whole retrieval  {p50_p95(whole)}   (embed p50 + stages; target p50 150 at 100k)")
        del dense, bm25
