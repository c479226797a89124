"""CLI commands (stub; being implemented)."""

import click


@click.command()
def ask_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")


@click.command()
def bench_answers_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")
