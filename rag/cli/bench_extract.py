"""``python -m rag bench extract``: what stage 1 keeps, how fast, and where citations open (issue 13).

The figures and how they are taken: :mod:`rag.evaluation.bench.extract`. Reported, never asserted.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rag.cli import common
from rag.evaluation.bench.corpora import corpus as shared_corpus
from rag.evaluation.bench.extract import run_extract


@click.command()
@click.option("--corpus", "corpus", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder holding docs/*.md, pdfs/*.pdf and pdf-dev/ (default: the shared folder's corpus/).")
@common.shared_option
@click.option("--repeat", type=click.IntRange(1, 20), default=3, show_default=True, help="Runs per timing (best kept).")
@click.option("--joins", "show_joins", is_flag=True, help="List every line-end hyphen join per PDF.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the figures as JSON to this file.")
def bench_extract_cmd(corpus: Path | None, shared: Path | None, repeat: int, show_joins: bool,
                      json_path: Path | None) -> None:
    """Benchmark extraction on the PDF corpora (coverage, OCR, tables, joins, pages/s, needle pages)
    and extraction + strategy-E chunking on the Markdown corpus."""
    corpus = corpus or shared_corpus("course", shared).docs.parent
    payload = run_extract(corpus, repeat, show_joins, click.echo)
    if json_path is not None:
        json_path.write_text(json.dumps(payload, indent=1, default=list), encoding="utf-8")
