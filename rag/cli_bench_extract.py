"""CLI commands (stub; being implemented)."""

import click


@click.command()
def bench_extract_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")
