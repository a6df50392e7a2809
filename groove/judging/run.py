"""One entry for every surface (CLI, API, notebook): declared settings in, a Pool out.

``resolve`` turns the pool settings (groove.settings.POOL, already parsed) into the eval
settings the sources need, the sources to read and the depth; ``pool`` runs them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from groove.config import Config
from groove.evaluation.settings import EvalSettings, resolve_reading
from groove.judging.collect import DEFAULT_DEPTH, PoolSources, collect
from groove.judging.pool import Pool
from groove.retrievers.spec import RetrieverSpec, spec_from_mapping
from groove.settings import at_most


@dataclass(frozen=True)
class PoolRequest:
    settings: EvalSettings
    sources: PoolSources
    depth: int


def resolve(
    config: Config,
    given: Mapping[str, Any],
    *,
    retriever: RetrieverSpec | None = None,
) -> PoolRequest:
    """``given``: the POOL settings by name (None = not given); ``retriever`` a spec built
    from CLI flags (else ``given["retriever"]`` with ``retriever_options``)."""
    if retriever is None:
        retriever = spec_from_mapping(
            given.get("retriever"),
            given.get("retriever_options"),
            name=given.get("retriever_name"),
        )
    # the retriever lets kb_path be absent when it is the only source
    settings = resolve_reading(config, given, "limit", "lexical", retriever=retriever)
    settings = replace(settings, retriever=None)  # the retriever is a source, not the eval
    runs: Sequence[str] = given.get("runs") or ()
    sources = PoolSources(
        history=given.get("history") is not False,
        runs=tuple(runs),
        current=given.get("current") is True,
        retriever=retriever,
        tune=given.get("tune") is True,
    )
    depth = at_most("depth", given.get("depth") or DEFAULT_DEPTH)  # the one limit rule
    return PoolRequest(settings, sources, depth)


def pool(request: PoolRequest) -> Pool:
    return collect(request.settings, request.sources, request.depth)
