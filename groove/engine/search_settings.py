"""The inputs of a search (``groove search``, ``groove.search``, ``groove serve``): the
values a face gives over groove.toml over the declared defaults (groove.resolve); and
``search_once``, the one search ``groove search`` and ``groove.search`` run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groove.config import Config
from groove.engine.query import compile_query
from groove.engine.rerank import load_reranker
from groove.engine.search import SearchOptions, SearchResult, build_options, search
from groove.engine.session import open_engine_for
from groove.resolve import resolve
from groove.settings import DEFAULT_LIMIT, PIPELINE, SEARCH, Setting


@dataclass(frozen=True)
class SearchSettings:
    """Where to search and how: the index, the model, the reranker, the pipeline."""

    kb_path: Path | None
    options: SearchOptions
    db_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    reranker: str | None = None


def resolve_settings(
    config: Config, /, table: Mapping[str, Setting] = SEARCH, **given: Any
) -> SearchSettings:
    """The settings of ``table`` (SEARCH, or SERVE, whose requests bring their own limit)
    ``given`` by a face over groove.toml over the declared defaults.

    A search keeps the model and its folder as given when either is (groove.toml's pair
    is the engine's fallback for neither, groove.engine.session), as it always did; serve
    takes each from groove.toml on its own, as eval does.
    """
    values = resolve(table, config, given)
    pair = given.get("model") is not None or given.get("model_path") is not None
    if table is SEARCH and pair:
        values["model"], values["model_path"] = given.get("model"), given.get("model_path")
    limit = values.get("limit", DEFAULT_LIMIT)
    options = build_options(config.search, limit, **{name: values[name] for name in PIPELINE})
    return SearchSettings(
        kb_path=values["kb_path"],
        options=options,
        db_path=values["db_path"],
        model=values["model"],
        model_path=values["model_path"],
        reranker=values["reranker"],
    )


def search_once(query: str, settings: SearchSettings, config: Config) -> SearchResult:
    """One search: the query checked before any model loads, then the whole pipeline on
    the index ``settings`` name (its ``-term`` exclusions are not embedded, so that they
    do not pull the vector leg)."""
    compiled = compile_query(query)
    with open_engine_for(settings, config=config) as engine:
        reranker = load_reranker(settings.reranker)
        vector = engine.embed_queries([compiled.positive_text])[0]
        return search(engine.conn, query, vector, settings.options, reranker, compiled)
