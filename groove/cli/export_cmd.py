"""``groove export --to URL``: write the index of a knowledge base into another engine."""

from __future__ import annotations

from pathlib import Path

import click

from groove.cli.common import command_options, config_from, resolve_kb, warn
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
    config = config_from(ctx)
    kb = resolve_kb(kb_path, config)
    written = export_index(kb, target, db_path, replace=replace)  # type: ignore[arg-type]
    warn(f"groove export: {written} chunks written")


def register(cli: click.Group) -> None:
    cli.add_command(export_cmd)
