"""groove.toml: discovery, the sections groove reads, validation, and CLI overrides.

Discovery order: ``--config PATH`` (must exist), ``./groove.toml``, then ``groove.toml`` in
the nearest ancestor folder that holds ``.git`` (the working directory and up to 19
parents), else built-in defaults. Relative paths in the file (``kb_path``, ``model_path``,
``[eval].golden``) resolve against the file's folder. Every table rejects unknown keys so a
typo is an error, not a silently ignored setting.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from groove.errors import ConfigError, literal
from groove.settings import LIMIT_MAX
from groove.settings import parse_k_list as parse_k_list  # re-exported for the commands

CONFIG_FILE_NAME = "groove.toml"
MAX_ANCESTORS = 19
_FIX_HINT = "fix the value in groove.toml, or delete the line to use the default"
#: Upper bound of [search.parent_retriever].max_expanded_tokens.
MAX_EXPANDED_TOKENS = 8192
_TOP_KEYS = {
    "kb_path", "model", "model_path", "reranker", "exclude_headings", "exclude_dirs",
    "contextual", "search", "eval",
}  # fmt: skip


#: [search.fusion] family: how the two legs are fused (groove.fusion).
FUSION_FAMILIES = ("rrf", "weighted_rrf", "convex")
#: [search.fusion] normalizer of the convex family.
FUSION_NORMALIZERS = ("none", "minmax", "zscore", "dbsf", "l2", "tmm")
#: The largest [search.fusion] window (candidates per leg).
FUSION_WINDOW_MAX = 10_000


@dataclass(frozen=True)
class FusionConfig:
    """RRF constant and bm25 column weights (heading, context, content); then, to reproduce
    another engine's fusion on groove's legs, the family (``rrf``, ``weighted_rrf``,
    ``convex``), a window (candidates per leg, as Elasticsearch's ``rank_window_size``;
    None: groove's pool), the vector leg's weight (the lexical leg gets 1 - that) and the
    convex family's normalizer."""

    rrf_k: float = 60.0
    bm25_heading_weight: float = 2.0
    bm25_context_weight: float = 1.0
    bm25_content_weight: float = 1.0
    family: str = "rrf"
    window: int | None = None
    vector_weight: float = 0.5
    normalizer: str = "minmax"

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
    enabled: bool = False
    lambda_: float = 0.7
    same_doc_penalty: float = 0.0


@dataclass(frozen=True)
class ParentRetrieverConfig:
    enabled: bool = False
    whole_doc_threshold_tokens: int = 100
    max_expanded_tokens: int = 2000


@dataclass(frozen=True)
class SearchConfig:
    fusion: FusionConfig = field(default_factory=FusionConfig)
    mmr: MmrConfig = field(default_factory=MmrConfig)
    parent_retriever: ParentRetrieverConfig = field(default_factory=ParentRetrieverConfig)
    # [search] lexical: "auto", "trigram" or "porter"; None: the index's mode
    lexical: Literal["auto", "trigram", "porter"] | None = None


@dataclass(frozen=True)
class EvalConfig:
    golden: Path | None = None
    history_size: int = 10
    k_values: tuple[int, ...] = (1, 5, 10)
    regression_threshold: float = 0.05
    regression_gate: str = "threshold"
    alpha: float = 0.05
    baseline: str | None = None  # compare with the run pinned under this name
    baseline_file: Path | None = None  # the committed accepted baseline (history/baseline_file)
    require_baseline: bool = False  # exit 4 when the gate cannot be applied
    judge: str | None = None  # who judges hits (docs/judgements.md)


@dataclass(frozen=True)
class Config:
    source: Path | None = None
    kb_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    reranker: str | None = None
    exclude_headings: tuple[str, ...] = ()
    exclude_dirs: tuple[str, ...] | None = None
    contextual: bool = False
    search: SearchConfig = field(default_factory=SearchConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)


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
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {source}: {exc}", "check the file's syntax") from exc
    return _Reader(source).config(data)


def _show(value: float) -> str:
    """A bound as a person writes it: 1000000, 0.5."""
    return str(int(value)) if float(value).is_integer() else repr(value)


class _Reader:
    """Turns a parsed TOML mapping into Config; every error names the file and dotted key.

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

    def table(self, data: Any, name: str, allowed: set[str]) -> Mapping[str, Any]:
        """``data`` checked to be a table with only ``allowed`` keys; ``name`` is dotted."""
        if not isinstance(data, Mapping):
            raise self.bad_value(name, data, "must be a table ([" + name + "])")
        unknown = sorted(set(data) - allowed)
        if unknown:
            where = f"{name}.{unknown[0]}" if name else unknown[0]
            raise self.fail(
                f"unknown key {where}",
                f"check the spelling; allowed here: {', '.join(sorted(allowed))}",
            )
        return data

    def number(self, data: Mapping[str, Any], key: str, lo: float, hi: float) -> float:
        value = data[key.rpartition(".")[2]]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.bad_value(key, value, "must be a number")
        # Compare before converting: TOML integers are unbounded and float() would overflow.
        if not lo <= value <= hi or not math.isfinite(float(value)):
            raise self.bad_value(key, value, f"must be between {_show(lo)} and {_show(hi)}")
        return float(value)

    def integer(self, data: Mapping[str, Any], key: str, lo: int, hi: int) -> int:
        value = data[key.rpartition(".")[2]]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.bad_value(key, value, f"must be a whole number from {lo} to {hi}")
        return value

    def boolean(self, data: Mapping[str, Any], key: str) -> bool:
        value = data[key.rpartition(".")[2]]
        if not isinstance(value, bool):
            raise self.bad_value(key, value, "must be true or false")
        return value

    def string(self, data: Mapping[str, Any], key: str) -> str:
        value = data[key.rpartition(".")[2]]
        if not isinstance(value, str) or not value.strip():
            raise self.bad_value(key, value, "must be a non-empty string")
        return value

    def strings(self, data: Mapping[str, Any], key: str) -> tuple[str, ...]:
        value = data[key.rpartition(".")[2]]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.bad_value(key, value, "must be a list of non-empty strings")
        return tuple(value)

    def path(self, data: Mapping[str, Any], key: str) -> Path:
        text = self.string(data, key)
        try:
            return self.base / Path(text).expanduser()
        except (RuntimeError, ValueError) as exc:  # unknown ~user, or a NUL byte
            raise self.bad_value(key, text, f"is not a usable path ({exc})") from exc

    def config(self, data: Mapping[str, Any]) -> Config:
        top = self.table(data, "", _TOP_KEYS)
        cfg = Config(source=self.source)
        if "kb_path" in top:
            cfg = replace(cfg, kb_path=self.path(top, "kb_path"))
        if "model" in top:
            cfg = replace(cfg, model=self.string(top, "model"))
        if "model_path" in top:
            cfg = replace(cfg, model_path=self.path(top, "model_path"))
        if "reranker" in top:
            cfg = replace(cfg, reranker=self.string(top, "reranker"))
        if "exclude_headings" in top:
            cfg = replace(cfg, exclude_headings=self.strings(top, "exclude_headings"))
        if "exclude_dirs" in top:
            cfg = replace(cfg, exclude_dirs=self.strings(top, "exclude_dirs"))
        if "contextual" in top:
            ctx = self.table(top["contextual"], "contextual", {"enabled"})
            if "enabled" in ctx:
                cfg = replace(cfg, contextual=self.boolean(ctx, "contextual.enabled"))
        if "search" in top:
            cfg = replace(cfg, search=self.search(top["search"]))
        if "eval" in top:
            cfg = replace(cfg, eval=self.eval(top["eval"]))
        return cfg

    def search(self, data: Any) -> SearchConfig:
        allowed = {"fusion", "mmr", "parent_retriever", "lexical"}
        table = self.table(data, "search", allowed)
        search = SearchConfig()
        if "lexical" in table:
            search = replace(search, lexical=self.lexical(table["lexical"]))
        if "fusion" in table:
            search = replace(search, fusion=self.fusion(table["fusion"]))
        if "mmr" in table:
            search = replace(search, mmr=self.mmr(table["mmr"]))
        if "parent_retriever" in table:
            search = replace(search, parent_retriever=self.parent(table["parent_retriever"]))
        return search

    def lexical(self, value: Any) -> Literal["auto", "trigram", "porter"]:
        if value == "auto" or value == "trigram" or value == "porter":
            return value
        raise self.bad_value("search.lexical", value, 'must be "auto", "trigram" or "porter"')

    def fusion(self, data: Any) -> FusionConfig:
        weights = ("bm25_heading_weight", "bm25_context_weight", "bm25_content_weight")
        family_keys = {"family", "window", "vector_weight", "normalizer"}
        table = self.table(data, "search.fusion", {"rrf_k", *weights, *family_keys})
        values: dict[str, Any] = {}
        if "rrf_k" in table:
            values["rrf_k"] = self.number(table, "search.fusion.rrf_k", 1.0, 1e6)
        for key in weights:
            if key in table:
                values[key] = self.number(table, f"search.fusion.{key}", 0.0, 1e6)
        for key, allowed in (("family", FUSION_FAMILIES), ("normalizer", FUSION_NORMALIZERS)):
            if key in table:
                if table[key] not in allowed:
                    raise self.bad_value(
                        f"search.fusion.{key}", table[key], "must be " + " / ".join(allowed)
                    )
                values[key] = table[key]
        if "window" in table:
            values["window"] = self.integer(table, "search.fusion.window", 1, FUSION_WINDOW_MAX)
        if "vector_weight" in table:
            values["vector_weight"] = self.number(table, "search.fusion.vector_weight", 0.0, 1.0)
        fusion = FusionConfig(**values)
        if not any(fusion.weights):
            raise self.fail("[search.fusion] the three bm25 weights cannot all be zero")
        return fusion

    def mmr(self, data: Any) -> MmrConfig:
        table = self.table(data, "search.mmr", {"enabled", "lambda", "same_doc_penalty"})
        mmr = MmrConfig()
        if "enabled" in table:
            mmr = replace(mmr, enabled=self.boolean(table, "search.mmr.enabled"))
        if "lambda" in table:
            mmr = replace(mmr, lambda_=self.number(table, "search.mmr.lambda", 0.0, 1.0))
        if "same_doc_penalty" in table:
            penalty = self.number(table, "search.mmr.same_doc_penalty", 0.0, 1.0)
            mmr = replace(mmr, same_doc_penalty=penalty)
        return mmr

    def parent(self, data: Any) -> ParentRetrieverConfig:
        name = "search.parent_retriever"
        keys = {"enabled", "whole_doc_threshold_tokens", "max_expanded_tokens"}
        table = self.table(data, name, keys)
        parent = ParentRetrieverConfig()
        if "enabled" in table:
            parent = replace(parent, enabled=self.boolean(table, f"{name}.enabled"))
        if "whole_doc_threshold_tokens" in table:
            key = f"{name}.whole_doc_threshold_tokens"
            threshold = self.integer(table, key, 0, MAX_EXPANDED_TOKENS - 1)
            parent = replace(parent, whole_doc_threshold_tokens=threshold)
        if "max_expanded_tokens" in table:
            key = f"{name}.max_expanded_tokens"
            cap = self.integer(table, key, 1, MAX_EXPANDED_TOKENS)
            parent = replace(parent, max_expanded_tokens=cap)
        if parent.max_expanded_tokens <= parent.whole_doc_threshold_tokens:
            raise self.fail(
                f"[{name}] max_expanded_tokens ({parent.max_expanded_tokens}) must be above "
                f"whole_doc_threshold_tokens ({parent.whole_doc_threshold_tokens})"
            )
        return parent

    def eval(self, data: Any) -> EvalConfig:
        keys = {
            "golden", "history_size", "k_values", "regression_threshold", "regression_gate",
            "alpha", "baseline", "baseline_file", "require_baseline", "judge",
        }  # fmt: skip
        table = self.table(data, "eval", keys)
        cfg = EvalConfig()
        if "golden" in table:
            cfg = replace(cfg, golden=self.path(table, "eval.golden"))
        if "judge" in table:
            cfg = replace(cfg, judge=self.string(table, "eval.judge"))
        if "history_size" in table:
            size = self.integer(table, "eval.history_size", 1, 10_000)
            cfg = replace(cfg, history_size=size)
        if "k_values" in table:
            cfg = replace(cfg, k_values=self.k_values(table["k_values"]))
        if "regression_threshold" in table:
            threshold = self.number(table, "eval.regression_threshold", 0.0, 1.0)
            cfg = replace(cfg, regression_threshold=threshold)
        if "regression_gate" in table:
            gate = table["regression_gate"]
            if gate not in ("threshold", "significant"):
                raise self.bad_value(
                    "eval.regression_gate", gate, 'must be "threshold" or "significant"'
                )
            cfg = replace(cfg, regression_gate=gate)
        if "alpha" in table:
            alpha = self.number(table, "eval.alpha", 0.0, 1.0)
            if not 0.0 < alpha < 1.0:
                raise self.bad_value("eval.alpha", table["alpha"], "must be above 0 and below 1")
            cfg = replace(cfg, alpha=alpha)
        if "baseline" in table:
            name = table["baseline"]
            if not isinstance(name, str) or not name:
                raise self.bad_value("eval.baseline", name, "must be the name of a pinned run")
            cfg = replace(cfg, baseline=name)
        if "baseline_file" in table:
            cfg = replace(cfg, baseline_file=self.path(table, "eval.baseline_file"))
        if "require_baseline" in table:
            required = table["require_baseline"]
            if not isinstance(required, bool):
                raise self.bad_value("eval.require_baseline", required, "must be true or false")
            cfg = replace(cfg, require_baseline=required)
        return cfg

    def k_values(self, value: Any) -> tuple[int, ...]:
        ok = isinstance(value, list) and all(
            isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= LIMIT_MAX for k in value
        )
        if not ok or not value:
            rule = f"must be a non-empty list of whole numbers from 1 to {LIMIT_MAX}"
            raise self.bad_value("eval.k_values", value, rule)
        return tuple(value)


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
