"""``python -m rag ingest | status | search | delete`` (issue 4); ``bench retrieval`` is :mod:`rag.cli.bench_retrieval`.

JSON contracts (pinned by ``tests/test_cli_store.py``):

* ``search --json`` -> ``{"query", "mode", "retrieval", "hits": [{"rank", "chunk_id", "document_id",
  "document_name", "page", "start", "end", "section", "content", "cosine_distance"}]}``, best first
  (``page`` 1-based or null: the page holding the chunk's sentence that best matches the query; ``start``/``end``
  code points into the canonical text; ``section`` a list of heading titles; ``retrieval`` how the question was
  searched, :meth:`rag.types.QueryPlan.to_json`: ``{"query", "language", "bm25_weight", "rewritten_query"}``, issue 19).
* ``status --json`` -> ``{"store", "embed_model", "embed_dim", "chunks", "documents": [{"id", "name",
  "label", "media_type", "size_bytes", "status", "reason", "chunk_count", "pages", "embed_model",
  "embed_dim", "pipeline_version", "extractor", "extractor_version", "warnings", "created_at",
  "updated_at"}]}``.
* ``ingest --json`` -> one JSON object per line per file: ``{"path", "document_id", "name", "status",
  "reason", "chunk_count", "elapsed_ms", "warnings"}`` (``warnings``: the extractor's, e.g. pages
  under 99 % text coverage or read by OCR; issue 13).

Exit status: ``ingest`` 1 if any file failed (the others are indexed anyway);
domain errors print ``error: ...`` and exit 1.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from rag.answer.calibrated_gate import store_calibration
from rag.answer.cite import evidence_pages, fragment, locator_label, row_locator
from rag.errors import StoreError
from rag.index.store import Store
from rag.settings import get_settings
from rag.types import DocStatus, RetrievalMode

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
        jobs += [(f"retry {d.name}", ("retry", d.id)) for d in store.documents() if d.status == DocStatus.FAILED and d.has_file]
    failed = 0
    sizes = [_job_bytes(store, job) for _, job in jobs]
    # the bar counts bytes, so its ETA weighs a 300-page PDF as such, not as one file among many (issue 18)
    bar = tqdm(total=sum(sizes), unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr, disable=None,
               dynamic_ncols=True, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {postfix}]")

    def progress(stage: str, done: int, total: int) -> None:
        bar.set_postfix_str(f"{stage} {done}/{total}", refresh=True)

    t0, chunks = time.perf_counter(), 0
    with store.batch():  # FAISS and BM25 updated once for the whole run, not per document
        for (label, job), size in zip(jobs, sizes):
            bar.set_description(Path(label).name[:30])
            r = store.retry(job[1], progress) if isinstance(job, tuple) else store.ingest_path(job, progress)
            failed += r.status == "failed"
            chunks += r.chunk_count if r.status == "ready" else 0
            line = json.dumps({"path": label, "document_id": r.document_id, "name": r.name, "status": r.status,
                               "reason": r.reason, "chunk_count": r.chunk_count,
                               "elapsed_ms": round(r.elapsed_ms, 1), "warnings": list(r.warnings)},
                              ensure_ascii=False) if as_json else r.message
            if not as_json and r.warnings:  # coverage, OCR'd pages, encodings (issue 13)
                line += "".join(f"\n           warning: {w}" for w in r.warnings)
            bar.write(line, file=sys.stdout)
            bar.update(size)
        bar.set_postfix_str("updating the indexes", refresh=True)
    bar.close()
    took = time.perf_counter() - t0
    if len(jobs) > failed and not store.is_empty:
        store_calibration(store)  # the gate's references for the new contents (issue 15), once per batch, not per file
    if not as_json:
        rate = f", {took * 1000 / chunks:.0f} ms per new chunk" if chunks else ""
        click.echo(f"{len(jobs) - failed} ok, {failed} failed in {took:.1f} s{rate}; store {store.path}: "
                   f"{store.chunk_count} chunks")
    sys.exit(1 if failed else 0)


def _job_bytes(store: Store, job) -> int:
    """Bytes a job will read: the file's size, or the stored original's for a retry (1 when unknown)."""
    try:
        if isinstance(job, tuple):
            doc = store.find_document(job[1])
            return max(1, doc.size_bytes) if doc else 1
        return max(1, Path(job).stat().st_size)
    except OSError:
        return 1


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
        for w in d.warnings:  # text coverage, OCR'd pages, encodings (issue 13)
            click.echo(f"{'':14}warning: {w}")


@click.command()
@_store_option
@click.option("--k", "k", type=click.IntRange(1, 1000), default=20, show_default=True, help="Hits to return.")
@click.option("--mode", type=click.Choice([m.value for m in RetrievalMode]), default=RetrievalMode.HYBRID.value,
              show_default=True, help="Retrieval legs: both fused (hybrid), dense or bm25 alone.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.argument("query")
def search_cmd(store_dir: str | None, k: int, mode: str, as_json: bool, query: str) -> None:
    """Retrieve the top K chunks for QUERY (no gate, no generation), best first."""
    store = _open(store_dir, must_exist=True)
    hits, plan = store.search_planned(query, k=k, mode=mode)
    rows = store.chunks([h.chunk_id for h in hits])
    pages = evidence_pages(rows, query, store)  # issue 13: the page holding the sentence that matches
    out = [{"rank": h.rank, "chunk_id": h.chunk_id, "document_id": r.document_id, "document_name": r.document_name,
            "page": p, "start": r.start, "end": r.end, "section": list(r.section), "content": r.content,
            "cosine_distance": round(h.cosine_distance, 6), "media_type": r.media_type,
            "locator_label": locator_label(r, p), "fragment": fragment(r, p), "locator": row_locator(r).to_json()}
           for h, r, p in zip(hits, rows, pages)]
    if as_json:
        click.echo(json.dumps({"query": query, "mode": mode, "retrieval": plan.to_json(), "hits": out},
                              ensure_ascii=False, indent=2))
        return
    if plan.rewritten:
        click.echo(f"searched as: {plan.rewritten}")
    if not out:
        click.echo("no hits")

    for h, r, p in zip(hits, rows, pages):
        snippet = " ".join(r.content.split())[:100]
        click.echo(f"{h.rank:>3}  d={h.cosine_distance:.3f}  {locator_label(r, p)}\n     {snippet}")


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
