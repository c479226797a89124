"""CLI commands (stub; being implemented)."""

import click


@click.command()
def eval_cmd() -> None:
    """Not implemented yet."""
    raise click.ClickException("not implemented yet")
