"""The keywords of the API's functions, for type checkers and IDEs (generated).

Written by ``make keywords`` (groove.settings.signatures.write_keywords) from the tables
in groove.settings; do not edit. At run time the signatures come from ``offers``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

__all__ = [
    "EvaluateKeywords",
    "GoldenDoctorKeywords",
    "IndexKeywords",
    "JudgeKeywords",
    "PipelineKeywords",
    "PoolKeywords",
    "SearchKeywords",
    "TuneKeywords",
]


class PipelineKeywords(TypedDict, total=False):
    mmr: bool | None
    mmr_lambda: float | None
    mmr_same_doc_penalty: float | None
    parent_retriever: bool | None
    lexical: Literal["auto", "trigram", "porter"] | None


class IndexKeywords(TypedDict, total=False):
    db_path: str | os.PathLike[str] | None
    force: bool
    model: str | None
    model_path: str | os.PathLike[str] | None
    lexical: Literal["auto", "trigram", "porter"] | None


class SearchKeywords(PipelineKeywords, total=False):
    limit: int
    reranker: str | None
    db_path: str | os.PathLike[str] | None
    model: str | None
    model_path: str | os.PathLike[str] | None


class EvaluateKeywords(PipelineKeywords, total=False):
    k_values: Sequence[int] | None
    model: str | None
    model_path: str | os.PathLike[str] | None
    reranker: str | None
    limit: int | None
    history: bool
    name: str | None
    save_history: bool
    diff: bool
    fail_on_regression: bool
    baseline: str | None
    baseline_file: str | os.PathLike[str] | None
    require_baseline: bool | None
    regression_gate: Literal["threshold", "significant"] | None
    slice_by: Literal["tags", "folder"] | None
    gate_slices: bool | None
    slice_min_queries: int | None
    explain: bool
    db_path: str | os.PathLike[str] | None
    retriever: str | None
    retriever_options: Mapping[str, Any] | None
    retriever_name: str | None


class TuneKeywords(TypedDict, total=False):
    model: str | None
    model_path: str | os.PathLike[str] | None
    k_values: Sequence[int] | None
    limit: int | None
    lexical: Literal["auto", "trigram", "porter"] | None
    db_path: str | os.PathLike[str] | None
    retriever: str | None
    retriever_options: Mapping[str, Any] | None
    retriever_name: str | None
    family: str
    engine: str | None
    window: int | None


class PoolKeywords(TypedDict, total=False):
    depth: int
    history: bool
    runs: Sequence[str] | None
    current: bool
    tune: bool
    retriever: str | None
    retriever_options: Mapping[str, Any] | None
    retriever_name: str | None
    model: str | None
    model_path: str | os.PathLike[str] | None
    limit: int | None
    lexical: Literal["auto", "trigram", "porter"] | None
    db_path: str | os.PathLike[str] | None


class GoldenDoctorKeywords(TypedDict, total=False):
    apply: bool
    accept_likely: bool
    model: str | None
    model_path: str | os.PathLike[str] | None
    db_path: str | os.PathLike[str] | None


class JudgeKeywords(PoolKeywords, total=False):
    by: str | None
