"""The inputs of one ``groove tune``: flags over groove.toml over built-in defaults."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from groove.config import Config
from groove.engine.lexical import LexicalMode
from groove.engine.search import candidate_pool
from groove.engine.session import check_kb_path
from groove.evaluation.settings import golden_path_for
from groove.notes import Note
from groove.settings import DEFAULT_LIMIT, at_most
from groove.tuning.grid import PRIMARY_K
from groove.tuning.result import NOTE_FUSION_CUSTOMISED, NOTE_STAGE_SETTINGS_IGNORED

SMALL_N_WARN = 50


@dataclass(frozen=True)
class TuneSettings:
    kb_path: Path
    golden_path: Path
    k_values: tuple[int, ...] = (1, 5, 10)
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


def resolve_settings(
    config: Config,
    *,
    kb_path: Path | None = None,
    golden: Path | None = None,
    k_values: Sequence[int] | None = None,
    limit: int | None = None,
    model: str | None = None,
    model_path: Path | None = None,
    db_path: Path | None = None,
    lexical: LexicalMode | None = None,
) -> TuneSettings:
    """Flags over groove.toml over defaults; k always includes the primary k (5)."""
    kb = check_kb_path(kb_path if kb_path is not None else config.kb_path)
    raw_k = tuple(k_values) if k_values else config.eval.k_values
    # The same rule as eval (groove.settings): a k or a limit above LIMIT_MAX is refused.
    ks = tuple(sorted({at_most("k_values", k) for k in raw_k if k > 0} | {PRIMARY_K}))
    if limit is not None:
        at_most("limit", limit)
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
    return TuneSettings(
        kb_path=kb,
        golden_path=golden_path_for(config, kb, golden),
        k_values=ks,
        limit=max(limit or 0, max(ks)),
        db_path=db_path,
        model=model or config.model,
        model_path=model_path or config.model_path,
        notes=tuple(notes),
        lexical=lexical if lexical is not None else search.lexical,
    )
