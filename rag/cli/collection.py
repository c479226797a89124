"""``--collection NAME`` for every store command, and ``python -m rag collections list|create|rename|delete`` (issue 16).

A collection is a store of its own under the data folder (:mod:`rag.collections`);
without ``--collection`` (or ``RAG_COLLECTION``) every command uses the data
folder's own store, the ``default`` collection, as before.
"""

from __future__ import annotations

import json
from typing import Any

import click

from rag.collections import DEFAULT, Collections
from rag.settings import Settings, get_settings

collection_option = click.option(
    "--collection", "collection", default=None, metavar="NAME",
    help="Named collection: a store of its own under the data folder (default: the data folder's store; "
         "env RAG_COLLECTION).")


def store_settings(store_dir: str | None, collection: str | None, *, create: bool = False, **overrides: Any) -> Settings:
    """Settings whose ``store`` is collection ``collection``'s folder under the data folder (``--store`` or settings).

    ``collection`` ``None`` falls back to settings ``collection`` (env ``RAG_COLLECTION``), then to the
    default collection (the data folder itself). ``create`` makes a missing
    collection (``ingest``); otherwise an unknown one raises
    :class:`rag.errors.StoreError`.
    """
    s = get_settings(store=store_dir, **overrides)
    name = collection or s.collection or None
    if name is None:
        return s
    cols = Collections(s.store)
    if create and not cols.path(name).is_dir():
        cols.create(name)
    return s.with_overrides(store=cols.get(name).path)


@click.group("collections")
def collections_cmd() -> None:
    """Named collections: each its own store under the data folder (--store or settings)."""


_data_option = click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None,
                            help="The data folder (default: settings, env RAG_STORE, else ./data).")


def _cols(store_dir: str | None) -> Collections:
    return Collections(get_settings(store=store_dir).store)


@collections_cmd.command("list")
@_data_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_cmd(store_dir: str | None, as_json: bool) -> None:
    """List the collections: the default one (the data folder's store) first."""
    cols = _cols(store_dir).list()
    if as_json:
        click.echo(json.dumps([{"name": c.name, "path": str(c.path), "default": c.is_default, "exists": c.exists}
                               for c in cols], ensure_ascii=False, indent=2))
        return
    for c in cols:
        click.echo(f"{c.name}{' (default)' if c.is_default and c.name == DEFAULT else ''}  {c.path}"
                   + ("" if c.exists else "  (empty)"))


@collections_cmd.command("create")
@_data_option
@click.argument("name")
def create_cmd(store_dir: str | None, name: str) -> None:
    """Create collection NAME (an empty store under the data folder)."""
    c = _cols(store_dir).create(name)
    click.echo(f"created    {c.name}  {c.path}")


@collections_cmd.command("rename")
@_data_option
@click.argument("old")
@click.argument("new")
def rename_cmd(store_dir: str | None, old: str, new: str) -> None:
    """Rename collection OLD to NEW."""
    c = _cols(store_dir).rename(old, new)
    click.echo(f"renamed    {old} -> {c.name}")


@collections_cmd.command("delete")
@_data_option
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def delete_cmd(store_dir: str | None, name: str, yes: bool) -> None:
    """Delete collection NAME with all its documents, indexes and chats."""
    cols = _cols(store_dir)
    c = cols.get(name)
    if not yes:
        click.confirm(f"Delete collection {c.name} at {c.path} with everything in it?", abort=True)
    cols.delete(name)
    click.echo(f"deleted    {c.name}")
