"""The inputs of one ``groove tune``: flags over groove.toml over built-in defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from groove.config import Config, SearchConfig
from groove.engine.search import candidate_pool
from groove.engine.session import check_kb_path
from groove.evaluation.settings import GOLDEN_FILE_NAME
from groove.notes import Note
from groove.resolve import ByName, Rule, limit_covers_k, resolve
from groove.retrievers.spec import RetrieverSpec, spec_from_mapping
from groove.settings import DEFAULT_LIMIT, TUNE, LexicalMode, Setting
from groove.tuning.grid import with_primary_k
from groove.tuning.result import NOTE_FUSION_CUSTOMISED, NOTE_STAGE_SETTINGS_IGNORED
from groove.tuning.retriever import (
    RetrieverTuneSettings,
    refuse_index_settings,
    refuse_tune_settings_without_retriever,
    resolve_retriever,
)

SMALL_N_WARN = 50


@dataclass(frozen=True)
class TuneSettings(ByName):
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
    #: The resolved TUNE settings that have no field above, by name: a new setting needs
    #: its declaration only, and is read as ``settings["name"]``.
    values: Mapping[str, Any] = field(default_factory=dict, hash=False, repr=False)
    TABLE: ClassVar[Mapping[str, Setting]] = TUNE
    TABLE_NAME: ClassVar[str] = "TUNE"

    @property
    def candidate_pool(self) -> int:
        return candidate_pool(self.limit)


#: tune's rules after the bound (groove.resolve): k with the primary k, the limit at
#: least the largest k. Up to LIMIT_MAX, nothing is lowered.
TUNE_RULES: tuple[Rule, ...] = (with_primary_k, limit_covers_k)


def resolve_settings(config: Config, /, **given: Any) -> TuneSettings | RetrieverTuneSettings:
    """The TUNE settings ``given`` by a face (by name, None: not given) over groove.toml
    over the declared defaults (groove.resolve), with tune's rules: with ``retriever``
    (or ``retriever_options``) the settings of a retriever's legs (groove.tuning.retriever,
    groove's index settings refused), else groove's own engine's (TUNE_RULES), a
    retriever's settings refused."""
    if given.get("retriever") is not None or given.get("retriever_options"):
        refuse_index_settings(given)
        rest = {name: value for name, value in given.items() if name not in _SPEC_PARTS}
        return resolve_retriever(config, retriever_spec(given), **rest)
    refuse_tune_settings_without_retriever(given)
    values = resolve(TUNE, config, given, TUNE_RULES)
    kb = check_kb_path(values["kb_path"])
    return TuneSettings(
        **{
            **TuneSettings.split(values),
            "kb_path": kb,
            "golden_path": values["golden"] or kb / GOLDEN_FILE_NAME,
            "notes": _stage_notes(config.search),
        }
    )


def refuse_for_saved(given: Mapping[str, Any], saved: Path) -> None:
    """A saved result (the tune explorer's ``tune_json``) is shown, not measured: with a
    retriever it is refused as groove's index settings are, without one a retriever's
    settings are refused as when measuring."""
    if given.get("retriever") is not None or given.get("retriever_options"):
        refuse_index_settings({**given, "tune_json": saved})
    refuse_tune_settings_without_retriever(given)


#: What names the retriever and how to reach it: its spec, not a setting of the sweep.
_SPEC_PARTS = frozenset(
    {"retriever", "retriever_options", "retriever_name", "retriever_timeout",
     "retriever_allow_stale_copy"}
)  # fmt: skip


def retriever_spec(given: Mapping[str, Any]) -> RetrieverSpec:
    """The retriever ``given`` names: the text of ``retriever`` read with the API's and
    the notebook's ``retriever_options`` or the command line's own retriever flags."""
    options = dict(given.get("retriever_options") or {})
    if given.get("retriever_timeout") is not None:
        options["timeout"] = given["retriever_timeout"]
    if given.get("retriever_allow_stale_copy"):
        options["allow_stale_copy"] = True
    spec = spec_from_mapping(given.get("retriever"), options, name=given.get("retriever_name"))
    assert spec is not None  # retriever_options without retriever is refused there
    return spec


def _stage_notes(search: SearchConfig) -> tuple[Note, ...]:
    """What tune leaves out of groove.toml's [search]: it measures the plain RRF stage
    against the built-in defaults."""
    notes: list[Note] = []
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
    return tuple(notes)
