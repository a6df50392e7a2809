"""``groove serve``: the index behind the retriever HTTP contract (docs/retrievers.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from groove.cli.common import cli_given, command_options, config_from, warn
from groove.settings import SERVE


@click.command("serve")
@command_options(SERVE)
@click.pass_context
def serve_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    db_path: Path | None,
    model: str | None,
    model_path: Path | None,
    reranker: str | None,
    host: str,
    port: int,
    threads: int | None,
    **pipeline: Any,  # --mmr ... --lexical, by the names build_options takes
) -> None:
    """Serve the index at POST /search (JSON in, ranked hits out) until SIGINT or SIGTERM."""
    given = cli_given(SERVE, {**pipeline, **locals()})  # the options, by setting name
    from groove.engine.search_settings import resolve_settings
    from groove.engine.serve import ServeSettings, serve

    config = config_from(ctx)
    # each request's limit (a search's, groove.engine.serve) replaces the default one here
    chosen = resolve_settings(config, SERVE, **given)
    settings = ServeSettings(
        kb_path=chosen.kb_path,
        options=chosen.options,
        host=host,
        port=port,
        db_path=chosen.db_path,
        model=chosen.model,
        model_path=chosen.model_path,
        reranker=chosen.reranker,
        config=config,
        threads=threads or None,
    )
    serve(settings, on_ready=lambda url: warn(f"groove serve: listening on {url}"))
    warn("groove serve: stopped")


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
