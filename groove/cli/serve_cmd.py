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
    warn,
)
from groove.settings import DEFAULT_LIMIT, LexicalMode


@click.command("serve")
@kb_option
@db_option
@model_options
@click.option("--reranker", default=None, help="Cross-encoder model name, or none.")
@pipeline_options
@lexical_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0 picks a free one).",
)
@click.option(
    "--threads",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="onnxruntime threads for embedding queries (0: one per core). Requests in flight "
    "are embedded in small batches, which one thread runs best (docs/performance.md).",
)
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
