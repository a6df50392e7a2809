"""The inputs of ``groove tune --retriever`` (the CLI, ``groove.tune(retriever=...)`` and
the tune explorer's ``retriever`` parameter share them): checked before any retrieval, so
a bad family, engine, window or golden file is an input error (exit 2) and nothing runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from groove.config import FUSION_FAMILIES, Config
from groove.errors import ConfigError, literal
from groove.evaluation.settings import golden_path_for
from groove.progress import Progress
from groove.retrievers.spec import RetrieverSpec
from groove.settings import at_most
from groove.tuning.external import run_external
from groove.tuning.external_result import ExternalTune
from groove.tuning.grid import PRIMARY_K
from groove.tuning.recommend import ENGINES

DEFAULT_WINDOW = 100
DEFAULT_LIMIT = 10


def refuse_index_settings(**given: object) -> None:
    """The settings of groove's own index (model, lexical, the database, a saved result)
    mean nothing for an engine's legs: given with a retriever, they are an input error
    (named as each face spells them)."""
    for name, value in given.items():
        if value is not None:
            raise ConfigError(
                "{setting} does not apply with {retriever} (the engine has its own index)",
                "leave {setting} out, or tune groove's own engine without {retriever}",
                setting=name,
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
    progress: Callable[[Progress], None] | None = None,
) -> ExternalTune:
    """Resolve the inputs (flags over groove.toml over defaults), then tune ``spec``'s legs.

    ``engine`` defaults to the retriever's kind when it is an engine groove writes for
    (postgresql, lancedb), else groove; ``golden`` to ``[eval].golden``, else the golden
    file of ``kb_path`` (given or groove.toml's)."""
    chosen_family = family or "rrf"
    if chosen_family not in FUSION_FAMILIES:
        raise ConfigError(
            "{setting} " + literal(repr(chosen_family)),
            f"use one of {', '.join(FUSION_FAMILIES)}",
            setting="family",
        )
    chosen = engine or (spec.kind if spec.kind in ENGINES else "groove")
    if chosen not in ENGINES:
        raise ConfigError(
            "{setting} " + literal(repr(chosen)),
            f"use one of {', '.join(ENGINES)}",
            setting="engine",
        )
    if window is not None and window < 1:
        raise ConfigError(
            f"{{setting}} {window}", "give the deepest window swept, 1 or more", setting="window"
        )
    if window is not None:
        at_most("window", window)
    kb = kb_path if kb_path is not None else config.kb_path
    if golden is None and config.eval.golden is None and kb is None:
        raise ConfigError(
            "{setting} is required with {retriever}",
            "pass {give:FILE} (or {give_kb_path:KB})",
            setting="golden",
        )
    golden_path = golden_path_for(config, kb, golden) if kb is not None else (
        golden or config.eval.golden
    )  # fmt: skip
    assert golden_path is not None
    raw_k = tuple(k_values) if k_values else config.eval.k_values
    ks = tuple(sorted({at_most("k_values", k) for k in raw_k if k > 0} | {PRIMARY_K}))
    return run_external(
        spec,
        golden_path,
        family=chosen_family,  # type: ignore[arg-type]  # checked above
        engine=chosen,
        limit=max(at_most("limit", limit) if limit else DEFAULT_LIMIT, max(ks)),
        k_values=ks,
        depth=window or DEFAULT_WINDOW,
        progress=progress,
        kb_path=kb,
    )
