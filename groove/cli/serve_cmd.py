"""``groove serve``: the index behind the retriever HTTP contract (docs/retrievers.md)."""

from __future__ import annotations

from pathlib import Path

import click

from groove.cli.common import (
    config_from,
    db_option,
    kb_option,
    lexical_option,
    model_options,
    pipeline_options,
    resolve_kb,
    setting_option,
    warn,
)
from groove.settings import DEFAULT_LIMIT, SERVE, LexicalMode


@click.command("serve")
@kb_option
@db_option
@model_options
@setting_option(SERVE["reranker"])
@pipeline_options
@lexical_option
@setting_option(SERVE["host"], show_default=True)
@setting_option(SERVE["port"], show_default=True)
@setting_option(SERVE["threads"], show_default=True)
@click.pass_context
def serve_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    db_path: Path | None,
    model: str | None,
    model_path: Path | None,
    reranker: str | None,
    mmr: bool | None,
    mmr_lambda: float | None,
    mmr_same_doc_penalty: float | None,
    parent_retriever: bool | None,
    lexical: LexicalMode | None,
    host: str,
    port: int,
    threads: int | None,
) -> None:
    """Serve the index at POST /search (JSON in, ranked hits out) until SIGINT or SIGTERM."""
    from groove.engine.search import build_options
    from groove.engine.serve import ServeSettings, serve

    config = config_from(ctx)
    options = build_options(
        config.search,
        DEFAULT_LIMIT,
        mmr,
        mmr_lambda,
        mmr_same_doc_penalty,
        parent_retriever,
        lexical,
    )
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
