"""The inputs of ``groove tune --retriever`` (the CLI, ``groove.tune(retriever=...)`` and
the tune explorer's ``retriever`` parameter share them): checked before any retrieval, so
a bad family, engine, window or golden file is an input error (exit 2) and nothing runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from groove.config import FUSION_FAMILIES, Config
from groove.errors import ConfigError
from groove.evaluation.retrievers.spec import RetrieverSpec
from groove.evaluation.settings import golden_path_for
from groove.settings import cap
from groove.tuning.external import run_external
from groove.tuning.external_result import ExternalTune
from groove.tuning.grid import PRIMARY_K
from groove.tuning.recommend import ENGINES

DEFAULT_WINDOW = 100
DEFAULT_LIMIT = 10


def refuse_index_settings(surface: str, **given: object) -> None:
    """The settings of groove's own index (model, lexical, the database, a saved result)
    mean nothing for an engine's legs: given with a retriever, they are an input error."""
    for name, value in given.items():
        if value is not None:
            raise ConfigError(
                f"{surface} {name} does not apply with retriever (the engine has its own index)",
                f"leave {name} out, or tune groove's own engine without retriever",
            )


def run_retriever(
    config: Config,
    spec: RetrieverSpec,
    *,
    kb_path: Path | None = None,
    golden: Path | None = None,
    k_values: Sequence[int] | None = None,
    limit: int | None = None,
    family: str | None = None,
    engine: str | None = None,
    window: int | None = None,
    log: Callable[[str], None] | None = None,
) -> ExternalTune:
    """Resolve the inputs (flags over groove.toml over defaults), then tune ``spec``'s legs.

    ``engine`` defaults to the retriever's kind when it is an engine groove writes for
    (postgresql, lancedb), else groove; ``golden`` to ``[eval].golden``, else the golden
    file of ``kb_path`` (given or groove.toml's)."""
    chosen_family = family or "rrf"
    if chosen_family not in FUSION_FAMILIES:
        raise ConfigError(f"--family {chosen_family!r}", f"use one of {', '.join(FUSION_FAMILIES)}")
    chosen = engine or (spec.kind if spec.kind in ENGINES else "groove")
    if chosen not in ENGINES:
        raise ConfigError(f"--engine {chosen!r}", f"use one of {', '.join(ENGINES)}")
    if window is not None and window < 1:
        raise ConfigError(f"--window {window}", "give the deepest window swept, 1 or more")
    kb = kb_path if kb_path is not None else config.kb_path
    if golden is None and config.eval.golden is None and kb is None:
        raise ConfigError(
            "--golden is required with --retriever", "pass --golden FILE (or --kb-path KB)"
        )
    golden_path = golden_path_for(config, kb, golden) if kb is not None else (
        golden or config.eval.golden
    )  # fmt: skip
    assert golden_path is not None
    raw_k = tuple(k_values) if k_values else config.eval.k_values
    ks = tuple(sorted({cap(k) for k in raw_k if k > 0} | {PRIMARY_K}))
    return run_external(
        spec,
        golden_path,
        family=chosen_family,  # type: ignore[arg-type]  # checked above
        engine=chosen,
        limit=max(cap(limit) if limit else DEFAULT_LIMIT, max(ks)),
        k_values=ks,
        depth=window or DEFAULT_WINDOW,
        log=log,
        kb_path=kb,
    )
