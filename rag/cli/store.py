"""``python -m rag ingest | status | search | delete`` and ``python -m rag bench retrieval`` (issue 4).

JSON contracts (pinned by ``tests/test_cli_store.py``):

* ``search --json`` -> ``{"query", "mode", "retrieval", "hits": [{"rank", "chunk_id", "document_id",
  "document_name", "page", "start", "end", "section", "content", "cosine_distance"}]}``, best first
  (``page`` 1-based or null; ``start``/``end`` code points into the canonical text;
  ``section`` a list of heading titles; ``retrieval`` how the question was searched,
  :meth:`rag.types.QueryPlan.to_json`: ``{"query", "language", "bm25_weight", "rewritten_query"}``, issue 19).
* ``status --json`` -> ``{"store", "embed_model", "embed_dim", "chunks", "documents": [{"id", "name",
  "label", "media_type", "size_bytes", "status", "reason", "chunk_count", "pages", "embed_model",
  "embed_dim", "pipeline_version", "extractor", "extractor_version", "warnings", "created_at",
  "updated_at"}]}``.
* ``ingest --json`` -> one JSON object per line per file: ``{"path", "document_id", "name", "status",
  "reason", "chunk_count", "elapsed_ms"}``.

Exit status: ``ingest`` 1 if any file failed (the others are indexed anyway);
domain errors print ``error: ...`` and exit 1.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from rag.answer.cite import locator_label
from rag.answer.gate import apply_gate
from rag.answer.pipeline import search_and_gate
from rag.cli.doctor import machine_summary
from rag.errors import StoreError
from rag.index.bm25 import BM25Index
from rag.index.dense import DenseIndex
from rag.index.fusion import rrf
from rag.index.store import Store
from rag.settings import ROOT, get_settings
from rag.types import Hit

_store_option = click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None,
                             help="Store directory (default: settings, env RAG_STORE, else ./data).")


def _open(store_dir: str | None, *, must_exist: bool = False):

    s = get_settings(store=store_dir)
    if must_exist and not Path(s.store).is_dir():
        raise StoreError(f"no store at {s.store}; ingest documents first: python -m rag ingest --store {s.store} PATH")
    return Store(s.store, settings=s)


def expand_paths(paths: tuple[str, ...]) -> list[Path]:
    """Files given, plus every file under each folder (recursive, sorted; hidden files and folders skipped)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(f for f in sorted(p.rglob("*"))
                       if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts))
        else:
            out.append(p)
    return out


@click.command()
@_store_option
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--retry", "retry_ids", multiple=True, metavar="ID", help="Index a failed document again (id or prefix).")
@click.option("--retry-failed", is_flag=True, help="Index every failed document again.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file instead of status lines.")
def ingest_cmd(store_dir: str | None, paths: tuple[str, ...], retry_ids: tuple[str, ...], retry_failed: bool,
               as_json: bool) -> None:
    """Index PATHS (files, or folders recursively) into the store; print one status line per document.

    Exit status 1 if any file failed (the others are indexed anyway).
    """
    from tqdm import tqdm

    if not paths and not retry_ids and not retry_failed:
        raise click.UsageError("give PATH..., --retry ID or --retry-failed")
    store = _open(store_dir)
    files = expand_paths(paths)
    jobs: list[tuple[str, Any]] = [(str(f), f) for f in files]
    jobs += [(f"retry {i}", ("retry", i)) for i in retry_ids]
    if retry_failed:
        jobs += [(f"retry {d.name}", ("retry", d.id)) for d in store.documents() if d.status == "failed" and d.has_file]
    failed = 0
    bar = tqdm(total=len(jobs), unit="file", file=sys.stderr, disable=None, dynamic_ncols=True)

    def progress(stage: str, done: int, total: int) -> None:
        bar.set_postfix_str(f"{stage} {done}/{total}", refresh=True)

    for label, job in jobs:
        bar.set_description(Path(label).name[:30])
        r = store.retry(job[1], progress) if isinstance(job, tuple) else store.ingest_path(job, progress)
        failed += r.status == "failed"
        line = json.dumps({"path": label, "document_id": r.document_id, "name": r.name, "status": r.status,
                           "reason": r.reason, "chunk_count": r.chunk_count,
                           "elapsed_ms": round(r.elapsed_ms, 1)}, ensure_ascii=False) if as_json else r.message
        bar.write(line, file=sys.stdout)
        bar.update(1)
    bar.close()
    if not as_json:
        click.echo(f"{len(jobs) - failed} ok, {failed} failed; store {store.path}: {store.chunk_count} chunks")
    sys.exit(1 if failed else 0)


def _doc_json(d) -> dict[str, Any]:
    out = asdict(d)
    out["warnings"] = list(d.warnings)
    return out


@click.command()
@_store_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_cmd(store_dir: str | None, as_json: bool) -> None:
    """List the documents in the store with status, reason and chunk count."""
    store = _open(store_dir, must_exist=True)
    docs = store.documents()
    if as_json:
        click.echo(json.dumps({"store": str(store.path), "embed_model": store.model_name, "embed_dim": store.model_dim,
                               "chunks": store.chunk_count, "documents": [_doc_json(d) for d in docs]},
                              ensure_ascii=False, indent=2))
        return
    click.echo(f"store {store.path}  model {store.model_name} ({store.model_dim}-d)  "
               f"{len(docs)} documents, {store.chunk_count} chunks")
    for d in docs:
        extra = f"  {d.reason}" if d.reason else ""
        pages = f" {d.pages}p" if d.pages else ""
        click.echo(f"{d.id[:12]}  {d.status:<8} {d.chunk_count:>5} chunks{pages}  {d.label}{extra}")


@click.command()
@_store_option
@click.option("--k", "k", type=click.IntRange(1, 1000), default=20, show_default=True, help="Hits to return.")
@click.option("--mode", type=click.Choice(["hybrid", "dense", "bm25"]), default="hybrid", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.argument("query")
def search_cmd(store_dir: str | None, k: int, mode: str, as_json: bool, query: str) -> None:
    """Retrieve the top K chunks for QUERY (no gate, no generation), best first."""
    store = _open(store_dir, must_exist=True)
    hits, plan = store.search_planned(query, k=k, mode=mode)
    rows = store.chunks([h.chunk_id for h in hits])
    out = [{"rank": h.rank, "chunk_id": h.chunk_id, "document_id": r.document_id, "document_name": r.document_name,
            "page": r.page, "start": r.start, "end": r.end, "section": list(r.section), "content": r.content,
            "cosine_distance": round(h.cosine_distance, 6)} for h, r in zip(hits, rows)]
    if as_json:
        click.echo(json.dumps({"query": query, "mode": mode, "retrieval": plan.to_json(), "hits": out},
                              ensure_ascii=False, indent=2))
        return
    if plan.rewritten:
        click.echo(f"searched as: {plan.rewritten}")
    if not out:
        click.echo("no hits")

    for h, r in zip(hits, rows):
        snippet = " ".join(r.content.split())[:100]
        click.echo(f"{h.rank:>3}  d={h.cosine_distance:.3f}  {locator_label(r)}\n     {snippet}")


@click.command()
@_store_option
@click.argument("doc_ids", nargs=-1, required=True, metavar="ID...")
def delete_cmd(store_dir: str | None, doc_ids: tuple[str, ...]) -> None:
    """Delete documents (id or unique prefix): rows, vectors, BM25 entries and the stored file."""

    store = _open(store_dir, must_exist=True)
    missing = []
    for i in doc_ids:
        doc = store.find_document(i)
        if doc is not None and store.delete(doc.id):
            click.echo(f"deleted    {doc.name} ({doc.id[:8]})")
        else:
            missing.append(i)
    if missing:
        raise StoreError(f"no document with id {', '.join(missing)}")


@click.command()
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None,
              help="Store to (re)use for the corpus (default: a temporary folder).")
@click.option("--sizes", default="10000,100000", show_default=True, help="Replicated index sizes (chunks).")
@click.option("--repeat", type=click.IntRange(1, 100), default=1, show_default=True, help="Passes over the queries.")
def bench_retrieval_cmd(store_dir: str | None, sizes: str, repeat: int) -> None:
    """Time ingest and each retrieval stage on the shared corpus, then at ~10k and ~100k chunks (nothing enforced)."""
    bench_retrieval(store_dir=store_dir, sizes=[int(x) for x in sizes.split(",") if x.strip()], repeat=repeat,
                    echo=click.echo)


def _machine() -> str:

    return machine_summary()


def _rss_mib() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _pct(xs: list[float]) -> str:
    import numpy as np

    a = np.asarray(xs, dtype=float)
    return f"p50 {np.percentile(a, 50):8.3f}  p95 {np.percentile(a, 95):8.3f}"


def _time_queries(queries, qvecs, dense, bm25, settings, repeat: int) -> dict[str, list[float]]:
    """Per-query ms of each retrieval stage (embedding excluded; measured separately)."""
    import time


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


def bench_retrieval(store_dir: str | None, sizes: list[int], repeat: int, echo=print) -> None:
    """The retrieval benchmark (see :func:`bench_retrieval_cmd`): prints date, machine and per-stage figures."""
    import tempfile
    import time
    from datetime import datetime

    import numpy as np


    corpus = Path(__import__("os").environ.get("RAG_SHARED", ROOT.parent / "shared")) / "corpus"
    if not corpus.is_dir():
        raise StoreError(f"shared corpus not found at {corpus}")
    tmp = None if store_dir else tempfile.TemporaryDirectory(prefix="rag-bench-")
    s = get_settings(store=store_dir or tmp.name)
    store = Store(s.store, settings=s)
    echo(f"bench retrieval  {datetime.now().astimezone().isoformat(timespec='seconds')}")
    echo(f"machine          {_machine()}; torch threads {__import__('torch').get_num_threads()}")
    files = sorted((corpus / "docs").glob("*.md")) + [corpus / "pdfs" / "01-dpr-paper-two-column-13p.pdf"]
    _ = store.embedder  # load the model before timing
    t0, new_chunks = time.perf_counter(), 0
    for f in files:
        r = store.ingest_path(f)
        new_chunks += r.chunk_count if r.status == "ready" else 0
    ingest_s = time.perf_counter() - t0
    n = store.chunk_count
    if new_chunks:
        echo(f"ingest           {len(files)} files, {new_chunks} chunks in {ingest_s:.1f} s: "
             f"{ingest_s * 1000 / new_chunks:.1f} ms per chunk end to end (design 22)")
    else:
        echo(f"ingest           skipped: {n} chunks already in {store.path}")
    qs = [json.loads(x) for x in (corpus / "dev_questions.jsonl").read_text().splitlines() if x.strip()]
    queries = [q[k] for q in qs for k in ("query_course", "query_ticket")]
    emb_ms, qvecs = [], []
    for q in queries:
        t = time.perf_counter()
        qvecs.append(store.embedder.encode_query(q))
        emb_ms.append((time.perf_counter() - t) * 1000)
    idx = store.index_cache.current()
    found, total_ms = 0, []
    for q in queries:
        t = time.perf_counter()
        search_and_gate(store, q)
        total_ms.append((time.perf_counter() - t) * 1000)
    for i, q in enumerate(queries):
        hits = store.search(q, k=20)
        needle = " ".join(qs[i // 2]["needle"].split())
        found += any(needle in " ".join(r.content.split()) for r in store.chunks([h.chunk_id for h in hits]))
    echo(f"queries          {len(queries)} dev queries (both phrasings), {repeat} pass(es); times in ms")
    echo(f"[{n} chunks]  query embedding  {_pct(emb_ms)}   (design 13)")
    stages = _time_queries(queries, qvecs, idx.dense, idx.bm25, s, repeat)
    for k, v in stages.items():
        echo(f"[{n} chunks]  {k:<15}  {_pct(v)}   {dict(bm25='(design 1.14)', dense='(design 0.3)').get(k, '')}")
    echo(f"[{n} chunks]  whole retrieval  {_pct(total_ms)}   (search_and_gate: embed+dense+BM25+fusion+gate; target p50 25)")
    echo(f"[{n} chunks]  hybrid recall@20 {found}/{len(queries)} = {found / len(queries):.3f}")
    table = store.index_cache.rows()
    texts, vecs = table.texts, table.vectors
    emb_p50 = float(np.percentile(emb_ms, 50))
    for size in sizes:
        reps = -(-size // len(texts))
        big_ids = np.arange(reps * len(texts), dtype=np.int64)
        rss0 = _rss_mib()
        t = time.perf_counter()
        dense = DenseIndex.build(big_ids, np.tile(vecs, (reps, 1)))
        t_d = time.perf_counter() - t
        t = time.perf_counter()
        bm25 = BM25Index.build(texts * reps, big_ids)
        t_b = time.perf_counter() - t
        rss1 = _rss_mib()
        m = len(big_ids)
        echo(f"[{m} chunks]  build: dense {t_d * 1000:.0f} ms, BM25 {t_b * 1000:.0f} ms; "
             f"RSS +{rss1 - rss0:.0f} MiB (vectors alone {m * store.model_dim * 4 / 2**20:.0f} MiB), "
             f"process RSS {rss1:.0f} MiB")
        st = _time_queries(queries, qvecs, dense, bm25, s, repeat)
        for k, v in st.items():
            echo(f"[{m} chunks]  {k:<15}  {_pct(v)}")
        whole = [emb_p50 + a + b + c for a, b, c in zip(st["bm25"], st["dense"], st["fusion+gate"])]
        echo(f"[{m} chunks]  whole retrieval  {_pct(whole)}   (embed p50 + stages; target p50 150 at 100k)")
        del dense, bm25
    store.close()
    if tmp:
        tmp.cleanup()
