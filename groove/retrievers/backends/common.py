"""What the PostgreSQL and LanceDB backends share: the export rows, the URL options, the
embedder that matches the export and how a backend failure reads (what a retriever
measures beside its answers is backends/measuring.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import parse_qs

import numpy as np

from groove.config import FUSION_FAMILIES, FUSION_NORMALIZERS
from groove.errors import ConfigError, RetrieverError, literal
from groove.fusion import Fusion
from groove.runs.corpus import CorpusSnapshot

DEFAULT_TABLE = "groove_chunks"
DEFAULT_WINDOW = 100
URL_KEYS = ("table", "family", "k", "window", "vector_weight", "normalizer")
URL_HINT = (
    "write it like postgresql://user@127.0.0.1:5432/db?table=groove_chunks&k=60&window=100 "
    "or lancedb:///path/to/dir?table=groove_chunks (docs/engines.md)"
)


@dataclass(frozen=True)
class ExportRow:
    """One chunk of a groove index, as an engine stores it."""

    id: int
    path: str
    heading: str | None
    context: str | None
    content: str
    embedding: np.ndarray


@dataclass(frozen=True)
class ExportMeta:
    """What a retriever needs to embed queries as the export did, and which corpus the
    export held (None: written by a groove that did not record it)."""

    model: str
    model_path: str | None
    dim: int
    corpus: CorpusSnapshot | None = None

    def items(self) -> list[tuple[str, str]]:
        """The key/value pairs an engine stores (``from_items`` reads them back)."""
        out = [("model", self.model), ("model_path", self.model_path or ""), ("dim", str(self.dim))]
        if self.corpus is not None:
            c = self.corpus
            out += [
                ("corpus_documents", str(c.documents)),
                ("corpus_chunks", str(c.chunks)),
                ("corpus_digest", c.digest),
            ]
        return out

    @classmethod
    def from_items(cls, values: Mapping[str, str | None]) -> ExportMeta:
        """KeyError or ValueError when the model or the dimension is missing."""
        corpus = None
        if values.get("corpus_digest"):
            corpus = CorpusSnapshot(
                int(values["corpus_documents"] or 0),
                int(values["corpus_chunks"] or 0),
                str(values["corpus_digest"]),
            )
        model = values["model"]
        if not model:
            raise KeyError("model")
        return cls(model, values.get("model_path") or None, int(values["dim"] or ""), corpus)


@dataclass(frozen=True)
class BackendOptions:
    """The URL's query string: the table and the fusion of the engine's own hybrid query."""

    table: str = DEFAULT_TABLE
    fusion: Fusion = field(default_factory=lambda: Fusion("rrf", 60.0, window=DEFAULT_WINDOW))
    extra: Mapping[str, str] = field(default_factory=dict)  # the backend's own options

    @property
    def window(self) -> int:
        return self.fusion.window or DEFAULT_WINDOW


def parse_options(query: str, spec: str, extra: Sequence[str] = ()) -> BackendOptions:
    """``table``, ``family``, ``k``, ``window``, ``vector_weight``, ``normalizer`` and the
    backend's ``extra`` keys from a URL's query string; ConfigError for anything else."""
    values: Mapping[str, list[str]] = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(values) - set(URL_KEYS) - set(extra))
    if unknown:
        raise ConfigError(f"{spec}: unknown option {unknown[0]!r}", URL_HINT)
    one = {key: v[-1] for key, v in values.items()}
    try:
        family = one.get("family", "rrf")
        normalizer = one.get("normalizer", "minmax")
        if family not in FUSION_FAMILIES or normalizer not in FUSION_NORMALIZERS:
            raise ValueError(f"family {family!r} / normalizer {normalizer!r}")
        window = int(one.get("window", DEFAULT_WINDOW))
        k = float(one.get("k", 60))
        weight = float(one.get("vector_weight", 0.5))
        if window < 1 or k <= 0 or not 0 <= weight <= 1:
            raise ValueError("window >= 1, k > 0, 0 <= vector_weight <= 1")
    except ValueError as exc:
        raise ConfigError(f"{spec}: bad option ({exc})", URL_HINT) from None
    fusion = Fusion(family, k, window, weight, normalizer)  # type: ignore[arg-type]
    own = {key: value for key, value in one.items() if key in extra}
    return BackendOptions(one.get("table", DEFAULT_TABLE), fusion, own)


def whole_option(options: BackendOptions, key: str, spec: str, low: int = 1) -> int | None:
    """A backend option that is a whole number >= ``low``, None when absent."""
    text = options.extra.get(key)
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise ConfigError(f"{spec}: bad option ({key} must be a whole number >= {low})", URL_HINT)
    return value


def engine_error(
    name: str, what: str, hint: str | None = None, *, setting: str | None = None
) -> RetrieverError:
    """A one-line failure of an engine (server down, wrong schema, timeout); with
    ``setting``, ``hint`` is a template that names it (groove.errors)."""
    message = f"retriever {name}: {what}"
    return RetrieverError(
        literal(message) if setting is not None else message,
        hint or "check the engine (docs/engines.md)",
        setting=setting,
    )


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


T = TypeVar("T")


def batched(rows: Sequence[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(rows), size):
        yield list(rows[start : start + size])
