"""Shared pieces of the commands: config loading, common options, progress bars."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from groove.config import Config, load_config

F = TypeVar("F", bound=Callable[..., Any])


def config_from(ctx: click.Context) -> Config:
    path = (ctx.obj or {}).get("config_path")
    return load_config(Path(path) if path else None)


def kb_option(f: F) -> F:
    return click.option(
        "--kb-path",
        type=click.Path(path_type=Path),
        default=None,
        help="Folder of the knowledge base (or kb_path in groove.toml).",
    )(f)


def db_option(f: F) -> F:
    return click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Index database (default: <parent of KB>/.groove.db).",
    )(f)


def model_options(f: F) -> F:
    f = click.option(
        "--model-path",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Local folder with model.onnx and tokenizer files.",
    )(f)
    return click.option(
        "--model", default=None, help="Embedding model name (default: the index's model)."
    )(f)


def resolve_kb(kb_path: Path | None, config: Config) -> Path | None:
    return kb_path if kb_path is not None else config.kb_path


def warn(message: str) -> None:
    click.echo(message, err=True)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def use_color(no_color: bool) -> bool:
    return not no_color and sys.stdout.isatty()


def pipeline_options(f: F) -> F:
    """--mmr / --mmr-lambda / --mmr-same-doc-penalty / --parent-retriever (search and eval)."""
    f = click.option(
        "--parent-retriever",
        type=click.BOOL,
        default=None,
        metavar="BOOL",
        help="Widen hits to their section (overrides [search.parent_retriever]).",
    )(f)
    f = click.option(
        "--mmr-same-doc-penalty",
        type=click.FloatRange(0, 1),
        default=None,
        help="MMR penalty for a second hit from one document, 0..1.",
    )(f)
    f = click.option(
        "--mmr-lambda", type=click.FloatRange(0, 1), default=None, help="MMR relevance weight."
    )(f)
    return click.option(
        "--mmr",
        type=click.BOOL,
        default=None,
        metavar="BOOL",
        help="Diversify results with MMR (overrides [search.mmr]).",
    )(f)
