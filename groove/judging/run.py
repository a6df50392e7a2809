"""One entry for every surface (CLI, API, notebook): settings in, a Pool out.

``pool_settings`` turns the declared pool settings (groove.settings.POOL) into the eval
settings the sources need and the sources to read; ``pool`` runs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from groove.config import Config
from groove.evaluation.retrievers.spec import RetrieverSpec
from groove.evaluation.settings import EvalSettings, resolve_settings
from groove.judging.collect import PoolSources, collect
from groove.judging.pool import Pool
from groove.settings import LexicalMode


def pool_settings(
    config: Config,
    *,
    kb_path: Path | None,
    golden: Path | None,
    history: bool = True,
    runs: Sequence[str] = (),
    current: bool = False,
    tune: bool = False,
    retriever: RetrieverSpec | None = None,
    model: str | None = None,
    model_path: Path | None = None,
    limit: int | None = None,
    lexical: LexicalMode | None = None,
    db_path: Path | None = None,
) -> tuple[EvalSettings, PoolSources]:
    settings = resolve_settings(
        config,
        kb_path=kb_path,
        golden=golden,
        model=model,
        model_path=model_path,
        limit=limit,
        lexical=lexical,
        db_path=db_path,
        retriever=retriever,
        history=True,
        save_history=False,
    )
    from dataclasses import replace

    settings = replace(settings, retriever=None)  # the retriever is a source, not the eval
    return settings, PoolSources(history, tuple(runs), current, retriever, tune)


def pool(settings: EvalSettings, sources: PoolSources, depth: int) -> Pool:
    return collect(settings, sources, depth)
