"""``python -m rag eval``: the design's retrieval evaluation from the command line.

Reads the questions / out-of-domain JSONL files, extracts the documents given
with ``--docs`` (files or folders) or, without ``--docs``, takes the documents
of the store, evaluates every strategy x mode (``rag.evaluation.runner.run_evaluation``)
and writes ``report.md``, ``report.json`` and the PNG plots into ``--out``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from rag.errors import ExtractionError, StoreError
from rag.evaluation.bench.machine import header, machine_summary
from rag.evaluation.cache import EmbeddingCache
from rag.evaluation.data import load_ood, load_questions, store_documents
from rag.evaluation.report import headline, write_report
from rag.evaluation.runner import run_evaluation
from rag.index.rerank import load_reranker
from rag.ingest.extract import extract_path
from rag.settings import get_settings
from rag.store.store import Store

#: File types the evaluation extracts from a folder given with --docs.
DOC_SUFFIXES = (".md", ".markdown", ".txt", ".pdf")


def expand_doc_paths(paths) -> list[Path]:
    """Files named directly, plus the ``.md``/``.txt``/``.pdf`` files of named folders (sorted, not recursive).

    Raises ``click.BadParameter`` for a path that does not exist.
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in DOC_SUFFIXES))
        elif p.is_file():
            out.append(p)
        else:
            raise click.BadParameter(f"{p}: no such file or folder", param_hint="--docs")
    return out


def load_documents(paths: list[Path]) -> tuple[list, dict[str, str]]:
    """Extract every file; a file that fails is reported in the second value (name -> reason), never fatal."""
    docs, failed = [], {}
    for p in paths:
        try:
            docs.append(extract_path(p))
        except ExtractionError as e:
            failed[p.name] = e.reason
    return docs, failed


def documents_from_store(settings) -> tuple[list, dict[str, str]]:
    """The ready documents of the store at ``settings.store`` (see ``rag.evaluation.data.store_documents``)."""
    with Store(settings.store, settings=settings) as store:
        docs, failed = store_documents(store)
    if not docs:
        raise StoreError(f"the store at {settings.store} has no ready documents: ingest some or pass --docs")
    return docs, failed


def _split(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


@click.command()
@click.option("--questions", "questions_path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Questions JSONL: id, doc, needle and query_doc + query_user (or query_course + query_ticket).")
@click.option("--ood", "ood_path", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Out-of-domain JSONL: id, query, kind (near/far).")
@click.option("--docs", "doc_paths", multiple=True, type=click.Path(path_type=Path),
              help="Document files or folders (repeatable). Default: the documents of the store.")
@click.option("--strategies", default="A,B,C,D,E,F", show_default=True, help="Chunking strategies, comma-separated.")
@click.option("--modes", default="dense,bm25,hybrid", show_default=True,
              help="Retrieval modes, comma-separated: dense, bm25, hybrid, rerank (rerank needs a cross-encoder in models/).")
@click.option("--out", "out_dir", default=Path("eval-out"), show_default=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for report.md, report.json and the PNG plots.")
@click.option("--cache", "cache_path", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Embedding cache (SQLite). Default: ~/.cache/rag/embeddings.sqlite or $RAG_EMBED_CACHE.")
@click.option("--report", "report_path", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Write the Markdown report here instead of OUT/report.md (plots linked relative to it).")
@click.option("--save-gate", "save_gate", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the learned gate fitted on these queries (JSON coefficients, e.g. rag/answer/gate/learned_gate.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON on stdout instead of the summary.")
def eval_cmd(questions_path: Path, ood_path: Path, doc_paths: tuple[Path, ...], strategies: str, modes: str,
             out_dir: Path, cache_path: Path | None, report_path: Path | None,
             save_gate: Path | None, as_json: bool) -> None:
    """Evaluate retrieval: Recall@k with Wilson intervals, MRR, sign tests and the refusal sweep."""
    from tqdm import tqdm

    click.echo(header("eval"), err=True)
    settings = get_settings()
    questions = load_questions(questions_path)
    ood = load_ood(ood_path)
    if doc_paths:
        docs, failed = load_documents(expand_doc_paths(doc_paths))
    else:
        docs, failed = documents_from_store(settings)
    for name, reason in failed.items():
        click.echo(f"skipped {name}: {reason}", err=True)
    reranker = None
    mode_list = _split(modes)
    if "rerank" in mode_list:
        reranker = load_reranker(settings.models_dir)
    bar = tqdm(total=1000, desc="eval", file=sys.stderr, leave=False,
               bar_format="{desc} {percentage:3.0f}%|{bar}| {elapsed} {postfix}")

    def progress(fraction: float, message: str) -> None:
        bar.n = int(1000 * fraction)
        bar.set_postfix_str(message, refresh=True)

    cache = EmbeddingCache(cache_path)
    try:
        result = run_evaluation(docs, questions, ood, strategies=_split(strategies), modes=mode_list,
                                   cache=cache, settings=settings, reranker=reranker, failed_documents=failed,
                                   progress=progress)
    except ValueError as e:
        raise click.BadParameter(str(e)) from e
    finally:
        bar.close()
        cache.close()
    result.machine = machine_summary()
    md = write_report(result, out_dir, report_path=report_path)
    if save_gate is not None:
        if result.gate_run is None:
            raise click.UsageError("no learned gate was fitted (needs out-of-domain queries and answerable questions)")
        result.gate_run.model.save(save_gate)
        click.echo(f"learned gate written to {save_gate}", err=True)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=1))
        return
    for line in headline(result).values():
        click.echo(f"- {line}")
    click.echo(f"report: {md}  (plots and report.json beside it; {result.timings_s['total']:.1f} s)")
