"""The inputs of ``groove tune --retriever`` (the CLI, ``groove.tune(retriever=...)`` and
the tune explorer's ``retriever`` parameter share them): checked before any retrieval, so
a bad family, engine, window or golden file is an input error (exit 2) and nothing runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from groove.config import FUSION_FAMILIES, Config
from groove.errors import ConfigError, literal
from groove.evaluation.settings import golden_file
from groove.progress import Progress
from groove.resolve import resolve
from groove.retrievers.spec import RetrieverSpec
from groove.settings import TUNE
from groove.tuning.external import run_external
from groove.tuning.external_result import ExternalTune
from groove.tuning.grid import PRIMARY_K
from groove.tuning.recommend import ENGINES

DEFAULT_WINDOW = 100
DEFAULT_LIMIT = 10


#: The settings of groove's own index (and the tune explorer's saved result).
INDEX_ONLY = ("model", "model_path", "lexical", "db_path", "tune_json")


def refuse_index_settings(given: Mapping[str, Any]) -> None:
    """The settings of groove's own index (model, lexical, the database, a saved result)
    mean nothing for an engine's legs: given with a retriever, they are an input error
    (named as each face spells them)."""
    for name in INDEX_ONLY:
        if given.get(name) is not None:
            raise ConfigError(
                "{setting} does not apply with {retriever} (the engine has its own index)",
                "leave {setting} out, or tune groove's own engine without {retriever}",
                setting=name,
            )


def run_retriever(
    config: Config,
    spec: RetrieverSpec,
    *,
    progress: Callable[[Progress], None] | None = None,
    **given: Any,
) -> ExternalTune:
    """Resolve the TUNE settings ``given`` (by name, None: not given) over groove.toml over
    the declared defaults (groove.resolve), then tune ``spec``'s legs.

    ``engine`` defaults to the retriever's kind when it is an engine groove writes for
    (postgresql, lancedb), else groove; ``golden`` to ``[eval].golden``, else the golden
    file of ``kb_path`` (given or groove.toml's)."""
    values = resolve(TUNE, config, given)
    family = values["family"]
    if family not in FUSION_FAMILIES:
        raise ConfigError(
            "{setting} " + literal(repr(family)),
            f"use one of {', '.join(FUSION_FAMILIES)}",
            setting="family",
        )
    chosen = values["engine"] or (spec.kind if spec.kind in ENGINES else "groove")
    if chosen not in ENGINES:
        raise ConfigError(
            "{setting} " + literal(repr(chosen)),
            f"use one of {', '.join(ENGINES)}",
            setting="engine",
        )
    window = values["window"]
    if window is not None and window < 1:
        raise ConfigError(
            f"{{setting}} {window}", "give the deepest window swept, 1 or more", setting="window"
        )
    kb = values["kb_path"]
    golden_path = golden_file(values["golden"], kb)
    if golden_path is None:
        raise ConfigError(
            "{setting} is required with {retriever}",
            "pass {give:FILE} (or {give_kb_path:KB})",
            setting="golden",
        )
    ks = tuple(sorted({k for k in values["k_values"] if k > 0} | {PRIMARY_K}))
    return run_external(
        spec,
        golden_path,
        family=family,
        engine=chosen,
        limit=max(values["limit"] or DEFAULT_LIMIT, max(ks)),
        k_values=ks,
        depth=window or DEFAULT_WINDOW,
        progress=progress,
        kb_path=kb,
    )
