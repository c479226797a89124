"""``python -m rag bench speed`` (issue 41, Deliver 6): the bare encoder against the product's ingest, search idle
and while indexing, first words against a bare llama.cpp prefill, in one run on the same texts.

What each row measures: :mod:`rag.evaluation.bench.speed`. Printed, never enforced; ``--write`` puts the table in
``docs/performance.md``.
"""

from __future__ import annotations

from pathlib import Path

import click

from rag.cli import common
from rag.evaluation.bench.corpora import CORPORA
from rag.evaluation.bench.corpora import corpus as shared_corpus
from rag.evaluation.bench.speed import bench_speed, write_performance


@click.command()
@click.option("--corpus", "corpus_name", type=click.Choice(CORPORA), default="course", show_default=True,
              help="Shared corpus: the Markdown course chapters or the pdf-dev PDFs.")
@common.shared_option
@click.option("--files", type=click.IntRange(1, 1000), default=None,
              help="Only the first N documents (default all but the last, which is indexed during the search).")
@click.option("--questions", type=click.IntRange(0, 500), default=8, show_default=True,
              help="Questions answered for the first words (each twice: prefix cached and not); 0 skips the model.")
@click.option("--write", "write_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the table to this Markdown file (e.g. docs/performance.md).")
@click.option("--pdf", "pdfs", type=click.Path(exists=True, dir_okay=False, path_type=Path), multiple=True,
              help="A PDF timed alone from the drop to searchable through the worker's queue (repeatable).")
def bench_speed_cmd(corpus_name: str, shared: Path | None, files: int | None, questions: int,
                    write_path: str | None, pdfs: tuple[Path, ...]) -> None:
    """Time the bare encoder, the product's ingest (units on and off), search and the first words, side by side."""
    table = bench_speed(shared_corpus(corpus_name, shared), questions=questions, files=files, echo=click.echo,
                        generate=questions > 0, pdfs=pdfs)
    if write_path:
        write_performance(table, Path(write_path))
        click.echo(f"table written to {write_path}")
