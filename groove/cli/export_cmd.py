"""``groove export --to URL``: write the index of a knowledge base into another engine."""

from __future__ import annotations

from pathlib import Path

import click

from groove.cli.common import cli_given, command_options, config_from, warn
from groove.resolve import resolve
from groove.settings import EXPORT


@click.command("export")
@command_options(EXPORT)
@click.pass_context
def export_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    db_path: Path | None,
    target: str | None,
    replace: bool,
) -> None:
    """Write the index (chunks, headings, context, embeddings) into PostgreSQL or LanceDB."""
    from groove.errors import ConfigError
    from groove.retrievers.backends.export import export_index

    if target is None:
        raise ConfigError("--to is required", "pass --to postgresql://... or lancedb:///PATH")
    chosen = resolve(EXPORT, config_from(ctx), cli_given(EXPORT, locals()))
    written = export_index(chosen["kb_path"], target, db_path, replace=replace)
    warn(f"groove export: {written} chunks written")


def register(cli: click.Group) -> None:
    cli.add_command(export_cmd)
