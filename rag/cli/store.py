"""``python -m rag ingest | status | search | delete`` (issue 4); ``bench retrieval`` is :mod:`rag.cli.bench_retrieval`.

JSON contracts (pinned by ``tests/test_cli_store.py``):

* ``search --json`` -> ``{"query", "mode", "retrieval", "hits": [{"rank", "chunk_id", "document_id",
  "document_name", "page", "start", "end", "section", "content", "cosine_distance"}]}``, best first
  (``page`` 1-based or null: the page holding the chunk's sentence that best matches the query; ``start``/``end``
  code points into the canonical text; ``section`` a list of heading titles; ``retrieval`` how the question was
  searched, :meth:`rag.types.QueryPlan.to_json`: ``{"query", "language", "bm25_weight", "rewritten_query", "translated_from", "reranked"}``, issues 19 and 27).
* ``status --json`` -> ``{"store", "embed_model", "embed_dim", "chunks", "documents": [{"id", "name",
  "label", "media_type", "size_bytes", "status", "reason", "chunk_count", "pages", "embed_model",
  "embed_dim", "pipeline_version", "extractor", "extractor_version", "warnings", "created_at",
  "updated_at", ..., "coverage"}]}`` (``coverage``: the share, 0..1, of the words a person sees that the stored
  text holds, by the format's independent audit, issue 37; ``null`` when not audited).
* ``ingest --json`` -> one JSON object per line per file: ``{"path", "document_id", "name", "status",
  "reason", "chunk_count", "elapsed_ms", "warnings", "replaced_id", "existing_name"}`` (``warnings``: the
  extractor's, e.g. pages under 99 % text coverage or read by OCR, issue 13; the last two: issue 16, ``null``
  when nothing was replaced / no other document holds the same text); with ``--sync`` a removed document is
  ``{"path", "document_id", "name", "status": "removed", ...}``. Issue 25 added ``job_id`` (the job that indexed
  it, ``null`` when nothing was queued) and, with ``--no-wait``, the status ``queued``; issue 37 ``coverage``
  (the share of the words a person sees that the stored text holds, ``null`` when not audited).

Every command takes ``--collection NAME`` (:mod:`rag.cli.collection`); ``search``
takes ``--doc ID`` (repeatable) to search only those documents.

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

from rag.answer.cite import evidence_pages, locator_label
from rag.cli.collection import collection_option, store_settings
from rag.cli.jobs import wait_for_jobs
from rag.errors import StoreError
from rag.store.results import IngestResult, IngestStatus, OnConflict
from rag.store.store import Store
from rag.store.sync import conflict_policies, expand_paths, removed_by_sync
from rag.text import counted
from rag.types import DocStatus, RetrievalMode

_store_option = click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None,
                             help="Store directory (default: settings, env RAG_STORE, else ./data).")


def _open(store_dir: str | None, *, must_exist: bool = False, collection: str | None = None):

    s = store_settings(store_dir, collection, create=not must_exist)
    if must_exist and not Path(s.store).is_dir():
        raise StoreError(f"no store at {s.store}; ingest documents first: python -m rag ingest --store {s.store} PATH")
    return Store(s.store, settings=s)


def resolve_docs(store: Store, ids: tuple[str, ...]) -> list[str] | None:
    """Full document ids for ``--doc`` values (ids or unique prefixes); ``None`` when none was given.

    Raises :class:`rag.errors.StoreError` naming the values that match no document.
    """
    if not ids:
        return None
    found = {i: store.find_document(i) for i in ids}
    missing = [i for i, d in found.items() if d is None]
    if missing:
        raise StoreError(f"no document with id {', '.join(missing)} (ids or unique prefixes, as status prints them)")
    return list(dict.fromkeys(d.id for d in found.values()))


@click.command()
@_store_option
@collection_option
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--retry", "retry_ids", multiple=True, metavar="ID", help="Index a failed document again (id or prefix).")
@click.option("--retry-failed", is_flag=True,
              help="Index again every failed document a retry can help (not the damaged or refused ones).")
@click.option("--replace", "policy", flag_value=OnConflict.REPLACE.value, default=None,
              help="Other bytes under a name already indexed replace that version (the default, with a notice).")
@click.option("--keep-both", "policy", flag_value=OnConflict.KEEP_BOTH.value,
              help="Other bytes under a name already indexed become a second document.")
@click.option("--sync", is_flag=True,
              help="For each folder given: also remove the documents read from files no longer in it "
                   "(changed files are re-indexed as new versions either way).")
@click.option("--no-wait", is_flag=True,
              help="Queue the files and return at once (a worker indexes them: the app's, or `rag worker`).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file instead of status lines.")
def ingest_cmd(store_dir: str | None, collection: str | None, paths: tuple[str, ...], retry_ids: tuple[str, ...],
               retry_failed: bool, policy: str | None, sync: bool, no_wait: bool, as_json: bool) -> None:
    """Index PATHS (files, or folders recursively) into the store; print one status line per document.

    The files are queued first (kept in the store with a job each, issue 25), then indexed by the worker
    serving the store, or by this command when none does, with one progress bar; --no-wait returns once
    they are queued. A file whose name is already indexed with other bytes is a new version of that
    document: it replaces the old one (--replace, the default) or is kept beside it (--keep-both). Exit
    status 1 if any file failed (the others are indexed anyway).
    """
    if not paths and not retry_ids and not retry_failed:
        raise click.UsageError("give PATH..., --retry ID or --retry-failed")
    folders = [Path(p) for p in paths if Path(p).is_dir()]
    if sync and not folders:
        raise click.UsageError("--sync needs at least one folder among PATHS")
    store = _open(store_dir, collection=collection)
    files = expand_paths(paths)
    policies = conflict_policies(files, policy or OnConflict.REPLACE)
    for d in removed_by_sync(store, folders, files) if sync else []:
        store.delete(d.id)
        line = (json.dumps({"path": d.source, "document_id": d.id, "name": d.name, "status": "removed", "reason": None,
                            "chunk_count": 0, "elapsed_ms": 0.0, "warnings": [], "replaced_id": None,
                            "existing_name": None},
                           ensure_ascii=False)
                if as_json else f"removed    {d.name} ({d.id[:8]}): {d.source} is no longer there")
        click.echo(line)
    entries = [(str(f), store.enqueue_path(f, on_conflict=policies[f])) for f in files]
    retries = [(f"retry {i}", i) for i in retry_ids]
    if retry_failed:
        retries += [(f"retry {d.name}", d.id) for d in store.documents() if d.status == DocStatus.FAILED and d.has_file]
    for label, doc_id in retries:
        doc = store.find_document(doc_id)
        if doc is not None and retry_failed and doc_id == doc.id and doc.retryable is False:
            entries.append((label, IngestResult(doc.id, doc.name, IngestStatus.FAILED, retryable=False,
                                                reason=f"{doc.reason} (not retried: a retry cannot help)")))
            continue
        entries.append((label, store.enqueue_retry(doc_id)))
    _report(store, entries, wait=not no_wait, as_json=as_json, policy=policy)


def _line(label: str, r: IngestResult, as_json: bool) -> str:
    """What ``ingest`` prints for one file (the JSON contract of the module docstring)."""
    if as_json:
        return json.dumps({"path": label, "document_id": r.document_id, "name": r.name, "status": r.status,
                           "reason": r.reason, "chunk_count": r.chunk_count, "elapsed_ms": round(r.elapsed_ms, 1),
                           "warnings": list(r.warnings), "replaced_id": r.replaced_id,
                           "existing_name": r.existing_name, "job_id": r.job_id, "coverage": r.coverage},
                          ensure_ascii=False)
    line = r.message
    if r.warnings:  # coverage, OCR'd pages, encodings (issue 13)
        line += "".join(f"\n           warning: {w}" for w in r.warnings)
    return line


def _report(store: Store, entries: list[tuple[str, IngestResult]], *, wait: bool, as_json: bool,
            policy: str | None) -> None:
    """Print one line per file, in order, as each is known; with ``wait`` follow the queued ones to the end
    under ONE progress bar (bytes, so its ETA weighs a 300-page PDF as such, issue 18). Exits 1 on a failure."""
    from tqdm import tqdm

    t0 = time.perf_counter()
    sizes = [max(1, _size(store, r)) for _, r in entries]
    final: dict[int, IngestResult] = {}
    queued = [r.job_id for _, r in entries if r.status == IngestStatus.QUEUED and r.job_id]
    bar = tqdm(total=sum(sizes), unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr,
               disable=None if wait and queued else True, dynamic_ncols=True,
               bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {postfix}]")
    shown = {"next": 0}
    outcome = {"failed": 0, "replaced": 0, "chunks": 0, "jobs": 0}

    def flush() -> None:
        while shown["next"] < len(entries):
            label, r = entries[shown["next"]]
            if wait and r.status == IngestStatus.QUEUED and r.job_id:
                if r.job_id not in final:
                    return
                r = final[r.job_id]
            outcome["failed"] += r.status == IngestStatus.FAILED
            outcome["replaced"] += bool(r.replaced_id)
            outcome["chunks"] += r.chunk_count if r.status == IngestStatus.READY else 0
            bar.write(_line(label, r, as_json), file=sys.stdout)
            bar.update(sizes[shown["next"]])
            shown["next"] += 1

    def progress(job, stage: str, done: int, total: int) -> None:
        bar.set_description(job.name[:30])
        bar.set_postfix_str(job.stage_text() if stage and job.state == "running" and not total else
                            f"{stage} {done}/{total}", refresh=True)

    def done(job_id: int, r: IngestResult) -> None:
        final[job_id] = r
        flush()

    flush()
    if wait and queued:
        wait_for_jobs(store, queued, on_progress=progress, on_done=done)
        bar.set_postfix_str("done", refresh=True)
    flush()
    bar.close()
    _summary(store, outcome, n_files=len(entries), n_queued=len(queued), took=time.perf_counter() - t0, wait=wait,
             as_json=as_json, policy=policy)
    sys.exit(1 if outcome["failed"] else 0)


def _summary(store: Store, outcome: dict[str, int], *, n_files: int, n_queued: int, took: float, wait: bool,
             as_json: bool, policy: str | None) -> None:
    """The lines after the files': the replacement note (stderr), then what was queued or how it went."""
    if outcome["replaced"] and policy is None:
        click.echo(f"note: {outcome['replaced']} document(s) replaced by a new version under the same name (the "
                   "default); --keep-both keeps both versions as documents", err=True)
    if not as_json:
        if not wait:
            click.echo(f"{n_queued} queued; a worker indexes them (rag jobs shows the progress)")
        else:
            rate = f", {took * 1000 / outcome['chunks']:.0f} ms per new chunk" if outcome["chunks"] else ""
            click.echo(f"{n_files - outcome['failed']} ok, {outcome['failed']} failed in {took:.1f} s{rate}; "
                       f"store {store.path}: {counted(store.chunk_count, 'chunk')}")


def _size(store: Store, r: IngestResult) -> int:
    """Bytes of a file's original (for the bar), 1 when unknown."""
    try:
        return store.original_path(r.document_id).stat().st_size if r.document_id else 1
    except (OSError, StoreError):
        return 1


def _doc_json(d) -> dict[str, Any]:
    out = asdict(d)
    out["warnings"] = list(d.warnings)
    return out


@click.command()
@_store_option
@collection_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_cmd(store_dir: str | None, collection: str | None, as_json: bool) -> None:
    """List the documents in the store with status, reason, chunk count and earlier versions."""
    store = _open(store_dir, must_exist=True, collection=collection)
    docs = store.documents()
    if as_json:
        click.echo(json.dumps({"store": str(store.path), "embed_model": store.model_name, "embed_dim": store.model_dim,
                               "chunks": store.chunk_count, "documents": [_doc_json(d) for d in docs]},
                              ensure_ascii=False, indent=2))
        return
    click.echo(f"store {store.path}  model {store.model_name} ({store.model_dim}-d)  "
               f"{counted(len(docs), 'document')}, {counted(store.chunk_count, 'chunk')}")
    for d in docs:
        extra = f"  {d.reason}" if d.reason else ""
        pages = f" {d.pages}p" if d.pages else ""
        pages += f"  coverage {100 * d.coverage:.1f} %" if d.coverage is not None else ""
        versions = f"  (version {d.versions + 1}, added {d.created_at})" if d.versions else ""
        click.echo(f"{d.id[:12]}  {d.status:<8} {counted(d.chunk_count, 'chunk'):>10}{pages}  {d.label}{extra}{versions}")
        for w in d.warnings:  # text coverage, OCR'd pages, encodings (issue 13)
            click.echo(f"{'':14}warning: {w}")
        for v in store.versions(d.id) if d.versions else []:
            click.echo(f"{'':14}previous version {v.id[:12]} added {v.added_at}, replaced {v.replaced_at}")


@click.command()
@_store_option
@collection_option
@click.option("--k", "k", type=click.IntRange(1, 1000), default=20, show_default=True, help="Hits to return.")
@click.option("--mode", type=click.Choice([m.value for m in RetrievalMode]), default=RetrievalMode.HYBRID.value,
              show_default=True, help="Retrieval legs: both fused (hybrid), dense or bm25 alone.")
@click.option("--doc", "doc_ids", multiple=True, metavar="ID",
              help="Search only this document (id or unique prefix); repeat for several.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.argument("query")
def search_cmd(store_dir: str | None, collection: str | None, k: int, mode: str, doc_ids: tuple[str, ...],
               as_json: bool, query: str) -> None:
    """Retrieve the top K chunks for QUERY (no gate, no generation), best first."""
    store = _open(store_dir, must_exist=True, collection=collection)
    scope = resolve_docs(store, doc_ids)
    hits, plan = (store.search_planned(query, k=k, mode=mode) if scope is None
                  else store.search_planned(query, k=k, mode=mode, doc_ids=scope))
    from rag.api.records import hits_json

    if as_json:  # the HTTP API's search object: the same fields, scores and locators
        click.echo(json.dumps(hits_json(store, query, hits, plan, mode), ensure_ascii=False, indent=2))
        return
    rows = store.chunks([h.chunk_id for h in hits])
    pages = evidence_pages(rows, query, store)  # issue 13: the page holding the sentence that matches
    if plan.rewritten:
        click.echo(f"searched as: {plan.rewritten}")
    if not hits:
        click.echo("no hits")

    for h, r, p in zip(hits, rows, pages):
        snippet = " ".join(r.content.split())[:100]
        click.echo(f"{h.rank:>3}  d={h.cosine_distance:.3f}  {locator_label(r, p)}\n     {snippet}")


@click.command()
@_store_option
@collection_option
@click.argument("doc_ids", nargs=-1, required=True, metavar="ID...")
def delete_cmd(store_dir: str | None, collection: str | None, doc_ids: tuple[str, ...]) -> None:
    """Delete documents (id or unique prefix): rows, vectors, BM25 entries, the stored file and earlier versions."""

    store = _open(store_dir, must_exist=True, collection=collection)
    missing = []
    for i in doc_ids:
        doc = store.find_document(i)
        if doc is not None and store.delete(doc.id):
            click.echo(f"deleted    {doc.name} ({doc.id[:8]})")
        else:
            missing.append(i)
    if missing:
        raise StoreError(f"no document with id {', '.join(missing)}")
