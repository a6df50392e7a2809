"""groove.toml: discovery, the sections groove reads, validation, and CLI overrides.

Discovery order: ``--config PATH`` (must exist), ``./groove.toml``, then ``groove.toml`` in
the nearest ancestor folder that holds ``.git`` (the working directory and up to 19
parents), else built-in defaults. Relative paths in the file (``kb_path``, ``model_path``,
``[eval].golden``) resolve against the file's folder. Every table rejects unknown keys so a
typo is an error, not a silently ignored setting.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from groove.errors import ConfigError

CONFIG_FILE_NAME = "groove.toml"
MAX_ANCESTORS = 19
_FIX_HINT = "fix the value in groove.toml, or delete the line to use the default"


@dataclass(frozen=True)
class FusionConfig:
    """RRF constant and bm25 column weights (heading, context, content)."""

    rrf_k: float = 60.0
    bm25_heading_weight: float = 2.0
    bm25_context_weight: float = 1.0
    bm25_content_weight: float = 1.0

    @property
    def weights(self) -> tuple[float, float, float]:
        return (self.bm25_heading_weight, self.bm25_context_weight, self.bm25_content_weight)

    @property
    def is_default(self) -> bool:
        return self == FusionConfig()

    def to_dict(self) -> dict[str, float]:
        return {
            "rrf_k": self.rrf_k,
            "bm25_heading_weight": self.bm25_heading_weight,
            "bm25_context_weight": self.bm25_context_weight,
            "bm25_content_weight": self.bm25_content_weight,
        }


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


@dataclass(frozen=True)
class EvalConfig:
    golden: Path | None = None
    history_size: int = 10
    k_values: tuple[int, ...] = (1, 5, 10)
    regression_threshold: float = 0.05


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
            raise ConfigError(f"config file not found: {path}", "pass an existing file to --config")
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
    path = find_config(explicit, cwd)
    if path is None:
        return Config()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", "make it a readable UTF-8 file") from exc
    return parse_config(text, path)


def parse_config(text: str, source: Path) -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {source}: {exc}", "check the file's syntax") from exc
    return _Reader(source).config(data)


class _Reader:
    """Turns a parsed TOML mapping into Config, naming file and key in every error."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.base = source.parent

    def fail(self, where: str, what: str) -> ConfigError:
        return ConfigError(f"invalid {self.source}: {where}: {what}", _FIX_HINT)

    def table(self, data: Any, name: str, allowed: set[str]) -> Mapping[str, Any]:
        if not isinstance(data, Mapping):
            raise self.fail(name, "must be a table")
        unknown = sorted(set(data) - allowed)
        if unknown:
            raise self.fail(
                f"{name}.{unknown[0]}" if name != "top level" else unknown[0],
                f"unknown key (allowed: {', '.join(sorted(allowed))})",
            )
        return data

    def number(self, data: Mapping[str, Any], key: str, where: str, lo: float, hi: float) -> float:
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(f"{where}.{key}", f"expected a number, got {value!r}")
        if not math.isfinite(value) or not lo <= value <= hi:
            raise self.fail(f"{where}.{key} = {value!r}", f"must be between {lo:g} and {hi:g}")
        return float(value)

    def integer(self, data: Mapping[str, Any], key: str, where: str, lo: int, hi: int) -> int:
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(
                f"{where}.{key} = {value!r}", f"must be a whole number from {lo} to {hi}"
            )
        return value

    def boolean(self, data: Mapping[str, Any], key: str, where: str) -> bool:
        value = data[key]
        if not isinstance(value, bool):
            raise self.fail(f"{where}.{key} = {value!r}", "must be true or false")
        return value

    def string(self, data: Mapping[str, Any], key: str, where: str) -> str:
        value = data[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{where}.{key} = {value!r}", "must be a non-empty string")
        return value

    def strings(self, data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        value = data[key]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(f"{where}.{key}", "must be a list of non-empty strings")
        return tuple(value)

    def path(self, data: Mapping[str, Any], key: str, where: str) -> Path:
        return self.base / Path(self.string(data, key, where)).expanduser()

    def config(self, data: Mapping[str, Any]) -> Config:
        top = self.table(
            data,
            "top level",
            {
                "kb_path", "model", "model_path", "reranker", "exclude_headings",
                "exclude_dirs", "contextual", "search", "eval",
            },
        )  # fmt: skip
        cfg = Config(source=self.source)
        if "kb_path" in top:
            cfg = replace(cfg, kb_path=self.path(top, "kb_path", "top level"))
        if "model" in top:
            cfg = replace(cfg, model=self.string(top, "model", "top level"))
        if "model_path" in top:
            cfg = replace(cfg, model_path=self.path(top, "model_path", "top level"))
        if "reranker" in top:
            cfg = replace(cfg, reranker=self.string(top, "reranker", "top level"))
        if "exclude_headings" in top:
            headings = self.strings(top, "exclude_headings", "top level")
            cfg = replace(cfg, exclude_headings=headings)
        if "exclude_dirs" in top:
            cfg = replace(cfg, exclude_dirs=self.strings(top, "exclude_dirs", "top level"))
        if "contextual" in top:
            ctx = self.table(top["contextual"], "[contextual]", {"enabled"})
            if "enabled" in ctx:
                cfg = replace(cfg, contextual=self.boolean(ctx, "enabled", "[contextual]"))
        if "search" in top:
            cfg = replace(cfg, search=self.search(top["search"]))
        if "eval" in top:
            cfg = replace(cfg, eval=self.eval(top["eval"]))
        return cfg

    def search(self, data: Any) -> SearchConfig:
        allowed = {"fusion", "mmr", "parent_retriever", "min_confidence_ratio"}
        table = self.table(data, "[search]", allowed)
        search = SearchConfig()
        if "fusion" in table:
            search = replace(search, fusion=self.fusion(table["fusion"]))
        if "mmr" in table:
            search = replace(search, mmr=self.mmr(table["mmr"]))
        if "parent_retriever" in table:
            search = replace(search, parent_retriever=self.parent(table["parent_retriever"]))
        return search

    def fusion(self, data: Any) -> FusionConfig:
        where = "[search.fusion]"
        keys = {"rrf_k", "bm25_heading_weight", "bm25_context_weight", "bm25_content_weight"}
        table = self.table(data, where, keys)
        values: dict[str, float] = {}
        if "rrf_k" in table:
            values["rrf_k"] = self.number(table, "rrf_k", where, 1.0, 1e6)
        for key in sorted(keys - {"rrf_k"}):
            if key in table:
                values[key] = self.number(table, key, where, 0.0, 1e6)
        fusion = FusionConfig(**values)
        if not any(fusion.weights):
            raise self.fail(where, "the three bm25 weights cannot all be zero")
        return fusion

    def mmr(self, data: Any) -> MmrConfig:
        where = "[search.mmr]"
        table = self.table(data, where, {"enabled", "lambda", "same_doc_penalty"})
        mmr = MmrConfig()
        if "enabled" in table:
            mmr = replace(mmr, enabled=self.boolean(table, "enabled", where))
        if "lambda" in table:
            mmr = replace(mmr, lambda_=self.number(table, "lambda", where, 0.0, 1.0))
        if "same_doc_penalty" in table:
            penalty = self.number(table, "same_doc_penalty", where, 0.0, 1.0)
            mmr = replace(mmr, same_doc_penalty=penalty)
        return mmr

    def parent(self, data: Any) -> ParentRetrieverConfig:
        where = "[search.parent_retriever]"
        keys = {"enabled", "whole_doc_threshold_tokens", "max_expanded_tokens"}
        table = self.table(data, where, keys)
        parent = ParentRetrieverConfig()
        if "enabled" in table:
            parent = replace(parent, enabled=self.boolean(table, "enabled", where))
        if "whole_doc_threshold_tokens" in table:
            threshold = self.integer(table, "whole_doc_threshold_tokens", where, 0, 8191)
            parent = replace(parent, whole_doc_threshold_tokens=threshold)
        if "max_expanded_tokens" in table:
            cap = self.integer(table, "max_expanded_tokens", where, 1, 8192)
            parent = replace(parent, max_expanded_tokens=cap)
        if parent.max_expanded_tokens <= parent.whole_doc_threshold_tokens:
            raise self.fail(where, "max_expanded_tokens must be above whole_doc_threshold_tokens")
        return parent

    def eval(self, data: Any) -> EvalConfig:
        where = "[eval]"
        keys = {"golden", "history_size", "k_values", "regression_threshold"}
        table = self.table(data, where, keys)
        cfg = EvalConfig()
        if "golden" in table:
            cfg = replace(cfg, golden=self.path(table, "golden", where))
        if "history_size" in table:
            cfg = replace(cfg, history_size=self.integer(table, "history_size", where, 1, 10_000))
        if "k_values" in table:
            cfg = replace(cfg, k_values=self.k_values(table["k_values"]))
        if "regression_threshold" in table:
            threshold = self.number(table, "regression_threshold", where, 0.0, 1.0)
            cfg = replace(cfg, regression_threshold=threshold)
        return cfg

    def k_values(self, value: Any) -> tuple[int, ...]:
        ok = isinstance(value, list) and all(
            isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= 10_000 for k in value
        )
        if not ok or not value:
            raise self.fail("[eval].k_values", "must be a non-empty list of whole numbers >= 1")
        return tuple(value)


def parse_k_list(text: str) -> tuple[int, ...]:
    """Parse the ``--k 1,5,10`` flag."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or any(k < 1 for k in values):
        raise ConfigError(
            f"--k {text!r} is not a list of whole numbers >= 1", "write it like --k 1,5,10"
        )
    return values
