"""``python -m rag bench retrieval``: ingest and per-stage retrieval speed, recall by wording, then at scale.

The figures and how they are taken: :mod:`rag.evaluation.bench.retrieval`. Printed, never enforced.
"""

from __future__ import annotations

from pathlib import Path

import click

from rag.cli import common
from rag.evaluation.bench.corpora import RETRIEVAL_CORPORA
from rag.evaluation.bench.retrieval import bench_retrieval


@click.command()
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None,
              help="Store to (re)use for the corpus (default: a temporary folder).")
@click.option("--corpus", "corpus_name", type=click.Choice(RETRIEVAL_CORPORA), default="course",
              show_default=True, help="Shared corpus: the Markdown course chapters (+ the DPR PDF), the pdf-dev PDFs, "
              "or the real documents (Markdown, DOCX, HTML, PPTX) of the answer benchmarks.")
@common.shared_option
@click.option("--sizes", default="10000,100000", show_default=True, help="Replicated index sizes (chunks).")
@click.option("--repeat", type=click.IntRange(1, 100), default=1, show_default=True, help="Passes over the queries.")
def bench_retrieval_cmd(store_dir: str | None, corpus_name: str, shared: Path | None, sizes: str, repeat: int) -> None:
    """Time ingest and each retrieval stage on a shared corpus, recall per wording, then at ~10k and ~100k chunks."""
    bench_retrieval(store_dir=store_dir, sizes=[int(x) for x in sizes.split(",") if x.strip()], repeat=repeat,
                    echo=click.echo, corpus_name=corpus_name, shared=shared)
