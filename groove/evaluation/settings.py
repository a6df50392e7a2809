"""The inputs of one ``groove eval``: flags over groove.toml over built-in defaults."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from groove.config import Config, SearchConfig
from groove.engine.search import SearchOptions, build_options
from groove.engine.session import check_kb_path
from groove.errors import ConfigError, GoldenError, literal
from groove.evaluation.result import DEFAULT_LIMIT
from groove.notes import Note
from groove.settings import LexicalMode, at_most

if TYPE_CHECKING:
    from groove.retrievers.spec import RetrieverSpec

GOLDEN_FILE_NAME = ".groove-eval.yml"


@dataclass(frozen=True)
class EvalSettings:
    """Every input of one eval, already resolved from flags, groove.toml and defaults.

    With an external ``retriever`` the KB is optional: when given (and indexed) it supplies
    the corpus snapshot and the golden-leak check, and holds the history.
    """

    kb_path: Path | None
    golden_path: Path
    k_values: tuple[int, ...] = (1, 5, 10)
    limit: int = DEFAULT_LIMIT
    search: SearchOptions = field(default_factory=SearchOptions)
    db_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    reranker: str | None = None
    history_size: int = 10
    regression_threshold: float = 0.05
    regression_gate: str = "threshold"
    alpha: float = 0.05
    history: bool = True
    save_history: bool = True
    diff: bool = True
    fail_on_regression: bool = False
    notes: tuple[Note, ...] = ()
    retriever: RetrieverSpec | None = None
    explain: bool = False  # attribute every miss to a cause (groove eval --explain)
    exclude_dirs: tuple[str, ...] | None = None  # the index's, to say why a path is absent
    baseline: str | None = None  # compare with the run pinned under this name
    require_baseline: bool = False  # "gate not applied" is a failure (exit 4)

    @property
    def depth(self) -> int:
        """How many hits each query retrieves: the larger of max(k) and the limit."""
        return max(max(self.k_values, default=DEFAULT_LIMIT), self.limit)


def golden_path_for(config: Config, kb: Path, golden: Path | None) -> Path:
    """``--golden``, else ``[eval].golden``, else ``<kb>/.groove-eval.yml`` (eval and tune)."""
    return golden or config.eval.golden or kb / GOLDEN_FILE_NAME


def resolve_settings(
    config: Config,
    *,
    kb_path: Path | None = None,
    golden: Path | None = None,
    k_values: Sequence[int] | None = None,
    limit: int | None = None,
    model: str | None = None,
    model_path: Path | None = None,
    reranker: str | None = None,
    db_path: Path | None = None,
    mmr: bool | None = None,
    mmr_lambda: float | None = None,
    mmr_same_doc_penalty: float | None = None,
    parent_retriever: bool | None = None,
    history: bool = True,
    diff: bool = True,
    fail_on_regression: bool = False,
    save_history: bool | None = None,
    retriever: RetrieverSpec | None = None,
    regression_gate: str | None = None,
    explain: bool = False,
    lexical: LexicalMode | None = None,
    baseline: str | None = None,
    require_baseline: bool | None = None,
) -> EvalSettings:
    """CLI values win over groove.toml, which wins over the built-in defaults.

    ``history`` reads the eval history (to diff against) and, unless ``save_history`` is
    False, appends the run to it; ``save_history`` defaults to ``history`` (the CLI's and
    the notebook's rule; the API passes False unless asked).
    """
    kb: Path | None
    if retriever is None:
        kb = check_kb_path(kb_path if kb_path is not None else config.kb_path)
        golden_path = golden_path_for(config, kb, golden)
    else:
        # --explain with a retriever reads the legs of its answers (explain/legs.py); a
        # retriever that sends none stops the run there, before anything is written.
        _refuse_engine_flags(
            model=model,
            model_path=model_path,
            reranker=reranker,
            mmr=mmr,
            mmr_lambda=mmr_lambda,
            mmr_same_doc_penalty=mmr_same_doc_penalty,
            parent_retriever=parent_retriever,
            lexical=lexical,
        )
        wanted_kb = kb_path if kb_path is not None else config.kb_path
        kb = check_kb_path(wanted_kb) if wanted_kb is not None else None
        if kb is not None:
            golden_path = golden_path_for(config, kb, golden)
        elif golden is not None or config.eval.golden is not None:
            golden_path = golden or config.eval.golden  # type: ignore[assignment]
        else:
            raise GoldenError(
                "with {retriever} and no {kb_path}, groove needs {golden}",
                "pass {give:FILE} (the history is kept beside it)",
                setting="golden",
            )
    raw_k = tuple(k_values) if k_values else config.eval.k_values
    wanted_limit = limit if limit is not None else max(raw_k, default=DEFAULT_LIMIT)
    ks = tuple(sorted({at_most("k_values", k) for k in raw_k}))  # first: the limit follows k
    used_limit = at_most("limit", wanted_limit)
    search_config: SearchConfig = config.search
    options = build_options(
        search_config, used_limit, mmr, mmr_lambda, mmr_same_doc_penalty, parent_retriever, lexical
    )
    chosen_reranker = reranker if reranker is not None else config.reranker
    return EvalSettings(
        kb_path=kb,
        golden_path=golden_path,
        k_values=ks,
        limit=used_limit,
        search=options,
        db_path=db_path,
        model=model or config.model,
        model_path=model_path or config.model_path,
        reranker=None if chosen_reranker in (None, "none") else chosen_reranker,
        history_size=config.eval.history_size,
        regression_threshold=config.eval.regression_threshold,
        regression_gate=regression_gate or config.eval.regression_gate,
        alpha=config.eval.alpha,
        history=history,
        save_history=history if save_history is None else history and save_history,
        diff=diff,
        fail_on_regression=fail_on_regression,
        retriever=retriever,
        explain=explain,
        exclude_dirs=config.exclude_dirs,
        baseline=_pin_name(baseline if baseline is not None else config.eval.baseline),
        require_baseline=(
            require_baseline if require_baseline is not None else config.eval.require_baseline
        ),
    )


def _pin_name(name: str | None) -> str | None:
    """A baseline name ``groove baseline set`` would accept: another can never be pinned."""
    from groove.history.baseline import NAME_PATTERN

    if name is not None and not NAME_PATTERN.match(name):
        raise ConfigError(
            "{setting} " + literal(f"{name!r} is not a plain name"),
            "use letters, digits, '.', '_' or '-' (up to 64), like main or release-2",
            setting="baseline",
        )
    return name


def _refuse_engine_flags(**given: object) -> None:
    """Options of groove's own engine mean nothing to an external retriever: refuse them."""
    for name, value in given.items():
        if value is not None:
            raise ConfigError(
                "{setting} configures groove's own engine and cannot be combined with {retriever}",
                "drop {setting}, or drop {retriever} to measure groove's engine",
                setting=name,
            )
