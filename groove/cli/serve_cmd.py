"""``groove serve``: the index behind the retriever HTTP contract (docs/retrievers.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from groove.cli.common import command_options, config_from, resolve_kb, warn
from groove.settings import DEFAULT_LIMIT, SERVE


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
    from groove.engine.search import build_options
    from groove.engine.serve import ServeSettings, serve

    config = config_from(ctx)
    # each request's limit (default DEFAULT_LIMIT) replaces this one, checked as a search's
    options = build_options(config.search, DEFAULT_LIMIT, **pipeline)
    settings = ServeSettings(
        kb_path=resolve_kb(kb_path, config),
        options=options,
        host=host,
        port=port,
        db_path=db_path,
        model=model,
        model_path=model_path or config.model_path,
        reranker=reranker or config.reranker,
        config=config,
        threads=threads or None,
    )
    serve(settings, on_ready=lambda url: warn(f"groove serve: listening on {url}"))
    warn("groove serve: stopped")


def register(cli: click.Group) -> None:
    cli.add_command(serve_cmd)
