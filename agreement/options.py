"""Options shared by several commands, as decorators (one definition each)."""
from __future__ import annotations

import click

out_option = click.option(
    "--out", "out", required=True, type=click.Path(file_okay=False, writable=True),
    help="Output directory (written atomically: it appears whole or not at all).")
seed_option = click.option(
    "--seed", type=int, default=1111, show_default=True,
    help="Random seed; the same seed gives byte-identical output.")
quiet_option = click.option(
    "--quiet", "-q", is_flag=True, help="No progress bars or log lines on stderr.")


def log(message: str, quiet: bool = False) -> None:
    """A line for people (stderr), silenced by --quiet."""
    if not quiet:
        click.echo(message, err=True)
