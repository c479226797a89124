"""CLI commands (stub; being implemented)."""

import click


@click.command()
def ingest_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")


@click.command()
def status_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")


@click.command()
def search_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")


@click.command()
def delete_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")


@click.command()
def bench_retrieval_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")
