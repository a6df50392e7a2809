"""The inputs of one ``groove tune``: flags over groove.toml over built-in defaults."""

from __future__ import annotations

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
from groove.settings import DEFAULT_LIMIT, TUNE
from groove.tuning.grid import with_primary_k
from groove.tuning.result import NOTE_FUSION_CUSTOMISED, NOTE_STAGE_SETTINGS_IGNORED

SMALL_N_WARN = 50


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


#: tune's rules after the bound (groove.resolve): k with the primary k, the limit at
#: least the largest k. Up to LIMIT_MAX, nothing is lowered.
TUNE_RULES: tuple[Rule, ...] = (with_primary_k, limit_covers_k)


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
