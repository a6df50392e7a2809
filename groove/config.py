"""groove.toml: discovery, the sections groove reads, validation, and CLI overrides.

Discovery order: ``--config PATH`` (must exist), ``./groove.toml``, then ``groove.toml`` in
the nearest ancestor folder that holds ``.git`` (the working directory and up to 19
parents), else built-in defaults. Relative paths in the file (``kb_path``, ``model_path``,
``[eval].golden``) resolve against the file's folder. Every table rejects unknown keys so a
typo is an error, not a silently ignored setting.
"""

from __future__ import annotations

import json
import keyword
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from groove.errors import ConfigError, literal
from groove.fusion import FAMILIES, NORMALIZERS
from groove.settings import shared
from groove.settings.groove_toml import (
    BM25_CONTENT_WEIGHT,
    BM25_CONTEXT_WEIGHT,
    BM25_HEADING_WEIGHT,
    CONTEXTUAL,
    EXCLUDE_HEADINGS,
    FUSION_FAMILY,
    FUSION_WINDOW,
    GROOVE_TOML,
    MAX_EXPANDED_TOKENS_SETTING,
    NORMALIZER,
    RRF_K,
    VECTOR_WEIGHT,
    WHOLE_DOC_THRESHOLD_TOKENS,
)
from groove.settings.kinds import KINDS, TomlRule

CONFIG_FILE_NAME = "groove.toml"
MAX_ANCESTORS = 19
_FIX_HINT = "fix the value in groove.toml, or delete the line to use the default"
#: [search.fusion] family: how the two legs are fused (groove.fusion).
FUSION_FAMILIES: tuple[str, ...] = FAMILIES
#: [search.fusion] normalizer of the convex family.
FUSION_NORMALIZERS: tuple[str, ...] = NORMALIZERS
#: Keys whose value sits on another attribute than the key's path: ``[contextual].enabled``
#: is ``Config.contextual``.
_ATTRIBUTES = {"contextual.enabled": ("contextual",)}


@dataclass(frozen=True)
class FusionConfig:
    """RRF constant and bm25 column weights (heading, context, content); then, to reproduce
    another engine's fusion on groove's legs, the family (``rrf``, ``weighted_rrf``,
    ``convex``), a window (candidates per leg, as Elasticsearch's ``rank_window_size``;
    None: groove's pool), the vector leg's weight (the lexical leg gets 1 - that) and the
    convex family's normalizer."""

    rrf_k: float = RRF_K.default
    bm25_heading_weight: float = BM25_HEADING_WEIGHT.default
    bm25_context_weight: float = BM25_CONTEXT_WEIGHT.default
    bm25_content_weight: float = BM25_CONTENT_WEIGHT.default
    family: str = FUSION_FAMILY.default
    window: int | None = FUSION_WINDOW.default
    vector_weight: float = VECTOR_WEIGHT.default
    normalizer: str = NORMALIZER.default

    @property
    def weights(self) -> tuple[float, float, float]:
        return (self.bm25_heading_weight, self.bm25_context_weight, self.bm25_content_weight)

    @property
    def is_default(self) -> bool:
        return self == FusionConfig()

    @property
    def is_seed_rrf(self) -> bool:
        """Plain RRF over groove's pool: the seed's fusion, whatever its k and weights."""
        return self.family == "rrf" and self.window is None

    def to_dict(self) -> dict[str, float | int | str]:
        """The seed's four keys, then only the family keys that differ from the default
        (so a fingerprint written before the families existed reads the same)."""
        out: dict[str, float | int | str] = {
            "rrf_k": self.rrf_k,
            "bm25_heading_weight": self.bm25_heading_weight,
            "bm25_context_weight": self.bm25_context_weight,
            "bm25_content_weight": self.bm25_content_weight,
        }
        if self.family != "rrf":
            out["family"] = self.family
            out["vector_weight"] = self.vector_weight
        if self.family == "convex":
            out["normalizer"] = self.normalizer
        if self.window is not None:
            out["window"] = self.window
        return out


@dataclass(frozen=True)
class MmrConfig:
    enabled: bool = shared.MMR.default
    lambda_: float = shared.MMR_LAMBDA.default
    same_doc_penalty: float = shared.MMR_SAME_DOC_PENALTY.default


@dataclass(frozen=True)
class ParentRetrieverConfig:
    enabled: bool = shared.PARENT_RETRIEVER.default
    whole_doc_threshold_tokens: int = WHOLE_DOC_THRESHOLD_TOKENS.default
    max_expanded_tokens: int = MAX_EXPANDED_TOKENS_SETTING.default


@dataclass(frozen=True)
class SearchConfig:
    fusion: FusionConfig = field(default_factory=FusionConfig)
    mmr: MmrConfig = field(default_factory=MmrConfig)
    parent_retriever: ParentRetrieverConfig = field(default_factory=ParentRetrieverConfig)
    # [search] lexical: "auto", "trigram" or "porter"; None: the index's mode
    lexical: Literal["auto", "trigram", "porter"] | None = None


@dataclass(frozen=True)
class Config:
    """What groove.toml says. The sections below are typed views for the code that reads
    them by attribute (``config.search.fusion``); a key no section has a field for is
    kept in ``values``, by its dotted key, and read through ``value`` (groove.resolve
    does): so a new key needs its declaration, not a field here."""

    source: Path | None = None
    kb_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    reranker: str | None = None
    exclude_headings: tuple[str, ...] = EXCLUDE_HEADINGS.default
    exclude_dirs: tuple[str, ...] | None = None
    contextual: bool = CONTEXTUAL.default
    search: SearchConfig = field(default_factory=SearchConfig)
    #: The keys the file set that no section has a field for: (dotted key, value) pairs
    #: (a tuple, so that a Config stays hashable like its sections).
    values: tuple[tuple[str, Any], ...] = ()

    def value(self, key: str) -> Any:
        """The value of the groove.toml key ``key`` (``eval.k_values``): its section's
        field, else the file's value, else its declared default."""
        found: Any = self
        for part in attribute_path(key):
            if not hasattr(found, part):
                return dict(self.values).get(key, GROOVE_TOML[key].default)
            found = getattr(found, part)
        return found


def find_config(explicit: Path | None = None, cwd: Path | None = None) -> Path | None:
    """Return the groove.toml to use, or None for built-in defaults."""
    if explicit is not None:
        path = explicit.expanduser()
        if not path.is_file():
            raise ConfigError(
                literal(f"config file not found: {path}"),
                "pass an existing file to {give}",
                setting="config",
            )
        return path
    here = (cwd or Path.cwd()).resolve()
    if (here / CONFIG_FILE_NAME).is_file():
        return here / CONFIG_FILE_NAME
    for folder in [here, *list(here.parents)[:MAX_ANCESTORS]]:
        if (folder / ".git").exists():
            candidate = folder / CONFIG_FILE_NAME
            return candidate if candidate.is_file() else None
    return None


def load_config(explicit: Path | None = None, cwd: Path | None = None) -> Config:
    """The configuration in effect: the discovered groove.toml, or the built-in defaults."""
    path = find_config(explicit, cwd)
    if path is None:
        return Config()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"cannot read {path} ({exc.strerror or exc})", "check that groove may read the file"
        ) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text", "save groove.toml as UTF-8") from exc
    return parse_config(text, path)


def parse_config(text: str, source: Path) -> Config:
    import tomllib  # here: without a groove.toml nothing is parsed

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {source}: {exc}", "check the file's syntax") from exc
    return _Reader(source).config(data)


def attribute_path(key: str) -> tuple[str, ...]:
    """The attributes of Config that hold the groove.toml key ``key`` (``search.mmr.lambda``
    -> search, mmr, lambda_: a Python keyword ends in ``_``)."""
    if key in _ATTRIBUTES:
        return _ATTRIBUTES[key]
    return tuple(part + "_" if keyword.iskeyword(part) else part for part in key.split("."))


def _with(obj: Any, path: tuple[str, ...], value: Any) -> Any:
    """``obj`` (a frozen dataclass) with the attribute at ``path`` set to ``value``."""
    head, rest = path[0], path[1:]
    return replace(obj, **{head: _with(getattr(obj, head), rest, value) if rest else value})


def _has_field(obj: Any, path: tuple[str, ...]) -> bool:
    for part in path:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _sections() -> dict[str, set[str]]:
    """Each table of groove.toml ("" is the top) and the keys it allows: the last part of
    each declared key, and the subtables on the way to it."""
    allowed: dict[str, set[str]] = {"": set()}
    for key in GROOVE_TOML:
        parts = key.split(".")
        for depth in range(len(parts)):
            allowed.setdefault(".".join(parts[:depth]), set()).add(parts[depth])
    return allowed


_SECTIONS = _sections()


def _weights_not_all_zero(cfg: Config) -> str | None:
    if any(cfg.search.fusion.weights):
        return None
    return "the three bm25 weights cannot all be zero"


def _parent_widens(cfg: Config) -> str | None:
    parent = cfg.search.parent_retriever
    if parent.max_expanded_tokens > parent.whole_doc_threshold_tokens:
        return None
    return (
        f"max_expanded_tokens ({parent.max_expanded_tokens}) must be above "
        f"whole_doc_threshold_tokens ({parent.whole_doc_threshold_tokens})"
    )


#: Rules between the keys of one table, checked when the file has the table.
_TABLE_RULES = {
    "search.fusion": _weights_not_all_zero,
    "search.parent_retriever": _parent_widens,
}


def _has_table(data: Mapping[str, Any], name: str) -> bool:
    for part in name.split("."):
        if not isinstance(data, Mapping) or part not in data:
            return False
        data = data[part]
    return True


class _Reader:
    """Turns a parsed TOML mapping into Config through the declared keys (GROOVE_TOML):
    each value is read by its setting's kind; every error names the file and dotted key.

    Messages: ``invalid <file>: <key> = <value>: <rule>`` for a bad value,
    ``invalid <file>: unknown key <key>`` for a typo, ``invalid <file>: [<table>] <rule>`` for
    a rule between keys.
    """

    def __init__(self, source: Path) -> None:
        self.source = source
        self.base = source.parent

    def fail(self, what: str, hint: str = _FIX_HINT) -> ConfigError:
        return ConfigError(f"invalid {self.source}: {what}", hint)

    def bad_value(self, key: str, value: Any, rule: str) -> ConfigError:
        return self.fail(f"{key} = {_toml_repr(value)}: {rule}")

    def table(self, data: Any, name: str) -> Mapping[str, Any]:
        """``data`` checked to be a table with only the keys its section allows."""
        if not isinstance(data, Mapping):
            raise self.bad_value(name, data, "must be a table ([" + name + "])")
        allowed = _SECTIONS[name]
        unknown = sorted(set(data) - allowed)
        if unknown:
            where = f"{name}.{unknown[0]}" if name else unknown[0]
            raise self.fail(
                f"unknown key {where}",
                f"check the spelling; allowed here: {', '.join(sorted(allowed))}",
            )
        return data

    def values(self, data: Any, name: str = "") -> dict[str, Any]:
        """Every value of the table ``name`` and its subtables, by dotted key, each read
        by its declaration's kind."""
        found: dict[str, Any] = {}
        for part, value in self.table(data, name).items():
            key = f"{name}.{part}" if name else part
            setting = GROOVE_TOML.get(key)
            if setting is None:  # a subtable
                found.update(self.values(value, key))
                continue
            try:
                found[key] = KINDS[setting.kind].toml(value, setting, self.base)
            except TomlRule as bad:
                raise self.bad_value(key, value, bad.rule) from None
        return found

    def config(self, data: Mapping[str, Any]) -> Config:
        values = self.values(data)
        cfg = Config(source=self.source)
        extra: list[tuple[str, Any]] = []
        for key, value in values.items():
            if _has_field(cfg, attribute_path(key)):
                cfg = _with(cfg, attribute_path(key), value)
            else:
                extra.append((key, value))
        cfg = replace(cfg, values=tuple(extra))
        for section, rule in _TABLE_RULES.items():
            problem = rule(cfg) if _has_table(data, section) else None
            if problem is not None:
                raise self.fail(f"[{section}] {problem}")
        return cfg


def _toml_repr(value: Any) -> str:
    """A value written back the way TOML spells it (true, "text", [1, 2], a table as {...})."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # JSON's escapes are TOML's basic-string escapes; control characters stay on one line.
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_repr(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{...}"
    return repr(value)
