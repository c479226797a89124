"""``python -m rag bench real``: every real document of ``<shared>/corpus/real`` read as an upload, and the
needles a person sees that the canonical text kept, per format and per placement (issue 37).

The figures and how they are taken: :mod:`rag.evaluation.bench.real`. Reported, never asserted. Without the
folder the command says where it looked and exits with status 0 (nothing to measure is not a failure).
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rag.cli import common
from rag.evaluation.bench.corpora import shared_dir
from rag.evaluation.bench.real import real_dir, run_real


@click.command()
@click.option("--folder", "folder", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder holding MANIFEST.jsonl and the documents (default: the shared folder's corpus/real).")
@common.shared_option
@click.option("--format", "formats", multiple=True,
              help="Only rows of this format (repeatable: --format odt --format html); default every format.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the figures (per format, placement, file, every miss) as JSON to this file.")
def bench_real_cmd(folder: Path | None, shared: Path | None, formats: tuple[str, ...], json_path: Path | None) -> None:
    """Extract every real document of the shared corpus/real folder: coverage, needles found by placement and
    format, warnings, seconds."""
    folder = folder or real_dir(shared_dir(shared))
    if not (folder / "MANIFEST.jsonl").is_file():
        click.echo(f"skipped: no real-document corpus at {folder} (no MANIFEST.jsonl; set --shared or --folder)")
        return
    payload = run_real(folder, click.echo, formats)
    if json_path is not None:
        json_path.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
