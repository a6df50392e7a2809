"""``groove index``, ``groove search`` and ``groove model prepare``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from groove import settings
from groove.cli.bars import ProgressBar
from groove.cli.common import (
    cli_given,
    command_options,
    config_from,
    stderr_is_terminal,
    warn,
)
from groove.resolve import resolve
from groove.settings import LexicalMode


@click.command("index")
@command_options(settings.INDEX)
@click.option("--quiet", "-q", is_flag=True, help="No progress bar and no summary line.")
@click.pass_context
def index_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    db_path: Path | None,
    force: bool,
    model: str | None,
    model_path: Path | None,
    lexical: LexicalMode | None,
    quiet: bool,
) -> None:
    """Index (or update the index of) a Markdown knowledge base.

    Only new and changed files are embedded; renamed files keep their embeddings and
    deleted files leave the index. Prints one summary line at the end.
    """
    from groove.cli.words import index_line
    from groove.engine.index import build
    from groove.engine.session import check_kb_path, index_embedder

    config = config_from(ctx)
    chosen = resolve(settings.INDEX, config, cli_given(settings.INDEX, locals()))
    kb = check_kb_path(chosen["kb_path"])
    model_path = chosen["model_path"]
    embedder = index_embedder(
        kb, db_path=db_path, model=chosen["model"], model_path=model_path, config=config
    )
    bar = ProgressBar(enabled=not quiet and stderr_is_terminal())
    try:
        summary = build(
            kb,
            embedder,
            db_path=db_path,
            config=config,
            force=force,
            progress=bar,
            model_path=model_path,
            on_wait=lambda lock: warn(
                f"groove index: waiting for another groove index to finish ({lock})"
            ),
            lexical=lexical,
        )
    finally:
        bar.close()
    for skipped in summary.skipped:
        warn(f"groove index: warning: {skipped.reason}")
    for message in summary.warnings:
        warn(f"groove index: warning: {message}")
    for message in summary.notes_for("cli"):
        warn(f"groove index: note: {message}")
    if not quiet:
        click.echo(index_line(summary))


@click.command("search")
@click.argument("query")
@command_options(settings.SEARCH)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.pass_context
def search_cmd(
    ctx: click.Context,
    query: str,
    kb_path: Path | None,
    db_path: Path | None,
    model: str | None,
    model_path: Path | None,
    limit: int,
    fmt: str,
    reranker: str | None,
    **pipeline: Any,  # --mmr ... --lexical, by the names build_options takes
) -> None:
    """Search the index with the hybrid pipeline and print the ranked hits."""
    given = cli_given(settings.SEARCH, {**pipeline, **locals()})  # the options, by setting name
    from groove.engine.search_settings import resolve_settings, search_once
    from groove.labels import location_label

    config = config_from(ctx)
    result = search_once(query, resolve_settings(config, **given), config)
    for message in result.warnings:
        warn(f"groove search: warning: {message}")
    if fmt == "json":
        click.echo(json.dumps([hit.to_dict() for hit in result.hits], ensure_ascii=False, indent=2))
        return
    if not result.hits:
        warn("groove search: no results")
    for hit in result.hits:
        where = location_label(hit.path, hit.heading)
        click.echo(f"{hit.rank:>3}. {where}  ({hit.score:.4f})")
        snippet = " ".join(hit.content.split())
        click.echo(f"     {snippet[:160]}{'…' if len(snippet) > 160 else ''}")


@click.group("model")
def model_group() -> None:
    """Manage the offline embedding model."""


@model_group.command("prepare")
@command_options(settings.MODEL_PREPARE)
def model_prepare_cmd(force: bool, int8: bool) -> None:
    """Convert the bundled all-MiniLM-L6-v2 weights to ONNX (once; cached)."""
    from groove.engine.embed import INT8_MODEL, prepare_default_model, prepare_int8_model

    path = prepare_default_model(force=force)
    click.echo(f"model ready: {path}")
    if int8:
        click.echo(f"model ready: {prepare_int8_model(force=force)} ({INT8_MODEL})")


def register(cli: click.Group) -> None:
    cli.add_command(index_cmd)
    cli.add_command(search_cmd)
    cli.add_command(model_group)
