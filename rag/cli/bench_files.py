"""``python -m rag bench files``: every file of the shared failure folders (``cases/wild/files``) and real
documents (``corpus/real``) through the whole indexing path, and how each ends: outcome, reason, seconds, peak
memory, the stage of a failure (issue 35, item 6b).

The figures and how they are taken: :mod:`rag.evaluation.bench.files`. Reported, never asserted. Without the
folders the command says where it looked and exits with status 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from rag.cli import common
from rag.evaluation.bench.corpora import shared_dir
from rag.evaluation.bench.files import default_folders, run_files


@click.command()
@click.option("--folder", "folders", multiple=True, type=click.Path(file_okay=False, path_type=Path),
              help="A folder of files to index (repeatable; default: the shared cases/wild/files and corpus/real).")
@common.shared_option
@click.option("--limit", "limit_s", type=click.IntRange(5, 86400), default=None, metavar="SECONDS",
              help="The ceiling per file (setting extract_seconds); default the settings'.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write every file's figures as JSON to this file.")
def bench_files_cmd(folders: tuple[Path, ...], shared: Path | None, limit_s: int | None,
                    json_path: Path | None) -> None:
    """Index every file of the failure and real-document folders in a fresh store: outcome, reason, seconds,
    peak memory and failing stage per file; hangs counted."""
    chosen = list(folders) or default_folders(shared_dir(shared))
    if not chosen:
        click.echo("skipped: no folders to index (set --shared or --folder)")
        return
    payload = run_files(chosen, click.echo, limit_s=limit_s)
    if json_path is not None:
        json_path.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
