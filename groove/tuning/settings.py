"""The inputs of one ``groove tune``: flags over groove.toml over built-in defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from groove.config import Config
from groove.engine.lexical import LexicalMode
from groove.engine.search import candidate_pool
from groove.engine.session import check_kb_path
from groove.evaluation.settings import GOLDEN_FILE_NAME
from groove.notes import Note
from groove.resolve import Rule, limit_covers_k, resolve
from groove.settings import DEFAULT_LIMIT, TUNE, Setting
from groove.tuning.grid import PRIMARY_K
from groove.tuning.result import NOTE_FUSION_CUSTOMISED, NOTE_STAGE_SETTINGS_IGNORED

SMALL_N_WARN = 50
#: The deepest window tune --retriever sweeps when none is given (the retrieval's limit).
DEFAULT_WINDOW = 100


@dataclass(frozen=True)
class TuneSettings:
    kb_path: Path
    golden_path: Path
    k_values: tuple[int, ...] = TUNE["k_values"].default
    limit: int = DEFAULT_LIMIT
    db_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    notes: tuple[Note, ...] = ()
    # [search] lexical: which FTS table each query's bm25 leg reads; None: the index's mode
    lexical: LexicalMode | None = None

    @property
    def candidate_pool(self) -> int:
        return candidate_pool(self.limit)


def with_primary_k(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """k always includes the primary k (5), sorted, without repeats (the reference's
    normalisation: ``--k 1,10`` is 1, 5, 10)."""
    values["k_values"] = tuple(sorted({k for k in values["k_values"] if k > 0} | {PRIMARY_K}))
    return []


def limit_from_the_default(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """tune --retriever: a limit not given is DEFAULT_LIMIT (its retrieval is the window's,
    so the limit only cuts the fused list), and at least the largest k."""
    values["limit"] = max(values["limit"] or DEFAULT_LIMIT, max(values["k_values"], default=0))
    return []


def window_from_the_default(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """tune --retriever: a window not given is DEFAULT_WINDOW."""
    values["window"] = values["window"] or DEFAULT_WINDOW
    return []


#: tune's rules after the bound (groove.resolve): k with the primary k, the limit at
#: least the largest k. Up to LIMIT_MAX, nothing is lowered.
TUNE_RULES: tuple[Rule, ...] = (with_primary_k, limit_covers_k)
#: tune --retriever's: k with the primary k, the limit from DEFAULT_LIMIT and the k, the
#: window from its default.
RETRIEVER_RULES: tuple[Rule, ...] = (
    with_primary_k,
    limit_from_the_default,
    window_from_the_default,
)


def resolve_settings(config: Config, /, **given: Any) -> TuneSettings:
    """The TUNE settings ``given`` by a face (by name, None: not given) over groove.toml
    over the declared defaults (groove.resolve), with tune's rules (TUNE_RULES)."""
    values = resolve(TUNE, config, given, TUNE_RULES)
    kb = check_kb_path(values["kb_path"])
    notes: list[Note] = []
    search = config.search
    if search.mmr.enabled or search.parent_retriever.enabled:
        notes.append(
            Note(
                NOTE_STAGE_SETTINGS_IGNORED,
                "[search.mmr] / [search.parent_retriever] are enabled in groove.toml but tune "
                "measures the plain RRF stage only.",
            )
        )
    if not search.fusion.is_default:
        notes.append(
            Note(
                NOTE_FUSION_CUSTOMISED,
                "[search.fusion] is already customised in groove.toml; tune still measures "
                "deltas against the BUILT-IN defaults, not your values.",
                data={"fusion": search.fusion.to_dict()},
            )
        )
    same = {f.name: values[f.name] for f in fields(TuneSettings) if f.name in values}
    return TuneSettings(
        **{
            **same,
            "kb_path": kb,
            "golden_path": values["golden"] or kb / GOLDEN_FILE_NAME,
            "notes": tuple(notes),
        }
    )
