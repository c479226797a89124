"""``python -m rag chats list|show|export|rename|delete`` and ``python -m rag bench followup`` (issue 16).

Chats are kept with each store (:mod:`rag.store.chats`); ``ask --chat ID|new``
adds to them. ``chats export`` writes one as Markdown with its citations and
locators (:func:`rag.answer.history.chat_markdown`), the same file as the
app's download button.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

import click

from rag.answer.asked_with import default_knobs
from rag.answer.followup import rewrite_generator
from rag.answer.history import Turn, chat_markdown
from rag.cli import common
from rag.cli.collection import collection_option, store_settings
from rag.errors import StoreError
from rag.evaluation.bench.corpora import shared_dir
from rag.evaluation.bench.machine import header
from rag.evaluation.followup import (
    METHODS,
    USER_QUESTIONS,
    load_dialogues,
    run_followup,
    run_standalone,
    standalone_lines,
    standalone_questions,
    summary_lines,
)
from rag.settings import get_settings
from rag.store.store import Store

#: The dialogues written for issue 16 (two turns each, over both shared corpora), in the repository's tests/data
#: (relative to the working directory, like every default path).
DIALOGUES = Path("tests") / "data" / "followup_dialogues.jsonl"


@click.command()
@click.option("--course-store", type=click.Path(file_okay=False), required=True,
              help="A store holding ../shared/corpus/docs (the Markdown course).")
@click.option("--pdf-store", type=click.Path(file_okay=False), required=True,
              help="A store holding ../shared/corpus/pdf-dev/docs.")
@click.option("--dialogues", type=click.Path(dir_okay=False, exists=True), default=str(DIALOGUES), show_default=True)
@click.option("--methods", default=",".join(METHODS), show_default=True, help="Comma-separated rewrite methods.")
@click.option("--model", default=None, help="GGUF in models/ for the model rewrite (default: settings).")
@common.shared_option
def bench_followup_cmd(course_store: str, pdf_store: str, dialogues: str, methods: str, model: str | None,
                       shared: Path | None) -> None:
    """Recall@4 of each dialogue's second turn as typed and as each rewrite method makes it standalone; then the
    false follow-ups: standalone questions (the dev questions in both wordings, the out-of-domain ones and
    tests/data/standalone_user_questions.jsonl) searched with the previous question's words."""
    shared = shared_dir(shared)
    s = get_settings(model_file=model)
    stores = {}
    for corpus, path in (("course", course_store), ("pdf-dev", pdf_store)):
        if not Path(path).is_dir():
            raise StoreError(f"no store at {path}; ingest the {corpus} corpus into it first")
        stores[corpus] = Store(path, settings=get_settings(store=path))
    ds = load_dialogues(Path(dialogues), shared / "corpus")
    click.echo(header("bench followup"))
    run = run_followup(ds, stores, [m.strip() for m in methods.split(",") if m.strip()],
                       get_generator=lambda: rewrite_generator(s), log=lambda x: click.echo(x, err=True))
    click.echo("\n".join(summary_lines(run)))
    extra = Path(dialogues).with_name(USER_QUESTIONS)
    questions = standalone_questions(shared / "corpus", extra if extra.is_file() else None)
    click.echo("")
    click.echo("\n".join(standalone_lines(run_standalone(questions, stores, log=lambda x: click.echo(x, err=True)))))


_store_option = click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None,
                             help="Store directory (default: settings, env RAG_STORE, else ./data).")


def _store(store_dir: str | None, collection: str | None) -> Store:
    s = store_settings(store_dir, collection)
    if not Path(s.store).is_dir():
        raise StoreError(f"no store at {s.store}")
    return Store(s.store, settings=s)


def _turns(store: Store, chat_id: int):
    if store.chats.get(chat_id) is None:
        raise StoreError(f"no chat with id {chat_id} in {store.path}")
    return [Turn.from_json(t.record, t.created_at) for t in store.chats.turns(chat_id)]


@click.group("chats")
def chats_cmd() -> None:
    """The chats kept with a store: list, show, export as Markdown, rename, delete."""


@chats_cmd.command("list")
@_store_option
@collection_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def chats_list_cmd(store_dir: str | None, collection: str | None, as_json: bool) -> None:
    """List the saved chats, the most recently used first."""
    rows = _store(store_dir, collection).chats.list()
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], ensure_ascii=False, indent=2))
        return
    for r in rows:
        click.echo(f"{r.id:>4}  {r.updated_at}  {r.turns:>3} turn(s)  {r.title}")
    if not rows:
        click.echo("no chats")


@chats_cmd.command("show")
@_store_option
@collection_option
@click.argument("chat_id", type=int)
@click.option("--json", "as_json", is_flag=True, help="The stored turns as JSON (usable as ask --history FILE).")
def chats_show_cmd(store_dir: str | None, collection: str | None, chat_id: int, as_json: bool) -> None:
    """Print chat CHAT_ID as Markdown (or its turns as JSON)."""
    store = _store(store_dir, collection)
    if as_json:
        _turns(store, chat_id)
        click.echo(json.dumps([t.record for t in store.chats.turns(chat_id)], ensure_ascii=False, indent=2))
        return
    click.echo(chat_markdown(store.chats.get(chat_id).title if store.chats.get(chat_id) else "", _turns(store, chat_id)),
               nl=False)


@chats_cmd.command("export")
@_store_option
@collection_option
@click.argument("chat_id", type=int)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write here (default: chat-<ID>.md in the current folder; '-' for stdout).")
def chats_export_cmd(store_dir: str | None, collection: str | None, chat_id: int, output: str | None) -> None:
    """Export chat CHAT_ID as Markdown: every question, answer, citation, locator and quoted source."""
    store = _store(store_dir, collection)
    turns = _turns(store, chat_id)
    name = collection or get_settings().collection or None
    md = chat_markdown(store.chats.get(chat_id).title, turns, collection=name,
                       exported_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       defaults=default_knobs(get_settings()))
    if output == "-":
        click.echo(md, nl=False)
        return
    path = Path(output or f"chat-{chat_id}.md")
    path.write_text(md, encoding="utf-8")
    click.echo(f"exported   chat {chat_id} ({len(turns)} turn(s)) to {path}")


@chats_cmd.command("rename")
@_store_option
@collection_option
@click.argument("chat_id", type=int)
@click.argument("title")
def chats_rename_cmd(store_dir: str | None, collection: str | None, chat_id: int, title: str) -> None:
    """Give chat CHAT_ID a new TITLE."""
    _store(store_dir, collection).chats.rename(chat_id, title)
    click.echo(f"renamed    chat {chat_id}")


@chats_cmd.command("delete")
@_store_option
@collection_option
@click.argument("chat_id", type=int)
def chats_delete_cmd(store_dir: str | None, collection: str | None, chat_id: int) -> None:
    """Delete chat CHAT_ID and its turns."""
    if not _store(store_dir, collection).chats.delete(chat_id):
        raise StoreError(f"no chat with id {chat_id}")
    click.echo(f"deleted    chat {chat_id}")
