"""``rag serve`` (the HTTP API), ``rag mcp`` (the MCP server over stdio) and the API's tokens
(``rag access create-token | tokens | revoke-token``), issue 38; the server itself is :mod:`rag.api`.
"""

from __future__ import annotations

import json
import sys

import click

from rag.settings import get_settings

_store_option = click.option("--store", "store_dir", type=click.Path(file_okay=False), default=None,
                             help="The data folder (default: settings, env RAG_STORE, else ./data).")
_app_url_option = click.option("--app-url", default="http://localhost:8501", show_default=True,
                               help="Where the app serves its viewer (the passages' viewer_url).")


@click.command("serve")
@_store_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but loopback needs a token (rag access create-token NAME).")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--model", default=None, help="GGUF file in models/ (or a path) to answer with.")
@click.option("--max-waiting", type=click.IntRange(0, 1000), default=8, show_default=True,
              help="Questions that may wait for the model; one more is answered 429.")
@_app_url_option
@click.option("--no-mcp", is_flag=True, help="Do not mount the MCP transport at /mcp.")
@click.option("--require-token", is_flag=True,
              help="Ask every request for a token on 127.0.0.1 too (behind a reverse proxy; settings require_login).")
@click.option("--log-level", type=click.Choice(["critical", "error", "warning", "info", "debug"]), default="info",
              show_default=True)
def serve_cmd(store_dir: str | None, host: str, port: int, model: str | None, max_waiting: int, app_url: str,
              no_mcp: bool, require_token: bool, log_level: str) -> None:
    """Serve the HTTP API (REST, OpenAI-compatible /v1/chat/completions, MCP at /mcp; OpenAPI at /docs)."""
    from rag.api.server import build, run

    s = get_settings(store=store_dir, **({"model_file": model} if model else {}),
                     **({"require_login": True} if require_token else {}))
    try:
        app = build(s, host, max_waiting=max_waiting, app_url=app_url, mcp=not no_mcp)
    except ValueError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(2)
    click.echo(f"serving {s.store} on http://{host}:{port} (OpenAPI at /docs)", err=True)
    run(app, host, port, log_level=log_level)


@click.command("mcp")
@_store_option
@click.option("--model", default=None, help="GGUF file in models/ (or a path) to answer with.")
@_app_url_option
def mcp_cmd(store_dir: str | None, model: str | None, app_url: str) -> None:
    """Serve the MCP tools (search_documents, ask, list_documents, get_passage) over stdio, for an AI assistant."""
    from rag.api.mcp_server import run_stdio
    from rag.api.service import ApiService

    s = get_settings(store=store_dir, **({"model_file": model} if model else {}))
    run_stdio(ApiService(s), app_url=app_url)


@click.command("create-token")
@_store_option
@click.argument("name")
def create_token_cmd(store_dir: str | None, name: str) -> None:
    """Create an API token NAME (needed to serve beyond this machine); printed once, kept only as a hash."""
    from rag.api import auth

    root = get_settings(store=store_dir).store
    try:
        token = auth.create_token(root, name)
    except ValueError as e:
        raise click.UsageError(str(e)) from e
    click.echo(token)
    click.echo(f"token {name!r} created for {root}; send it as 'Authorization: Bearer <token>'. It is not shown "
               "again.", err=True)


@click.command("tokens")
@_store_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def tokens_cmd(store_dir: str | None, as_json: bool) -> None:
    """List the API tokens (names, creation dates and first characters; never the tokens)."""
    from rag.api import auth

    toks = auth.list_tokens(get_settings(store=store_dir).store)
    if as_json:
        click.echo(json.dumps([t.__dict__ for t in toks], indent=2))
        return
    for t in toks:
        click.echo(f"{t.name}\tcreated {t.created}\t{t.hint}...")
    if not toks:
        click.echo("no tokens (the API serves only on this machine)")


@click.command("revoke-token")
@_store_option
@click.argument("name")
def revoke_token_cmd(store_dir: str | None, name: str) -> None:
    """Revoke the API token NAME (refused from the next request on)."""
    from rag.api import auth

    if not auth.revoke_token(get_settings(store=store_dir).store, name):
        raise click.UsageError(f"no token named {name!r} (rag access tokens lists them)")
    click.echo(f"token {name!r} revoked")
