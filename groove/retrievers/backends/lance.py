"""LanceDB (embedded): export a groove index into a table, and a retriever over it.

``lancedb:///PATH/TO/DIR?table=groove_chunks&k=60&window=100`` names the database folder,
the table and the engine's own hybrid query: LanceDB's hybrid search with
``RRFReranker(K=k)`` over ``window`` candidates per leg (LanceDB's RRF is the paper's:
one-based ranks). The lexical leg is LanceDB's native full-text index (BM25) over one
``text`` column, heading, context and content joined (LanceDB weighs no fields); the vector
leg is cosine distance, reported as ``1 - distance``. lancedb comes with the
``groove-retrieval[lancedb]`` extra.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from groove.engine.embed import Embedder
from groove.errors import ConfigError, RetrieverError, literal
from groove.install import install_command
from groove.metrics import RankedHit
from groove.retrievers.backends.common import (
    BackendOptions,
    ExportMeta,
    ExportRow,
    engine_error,
    first_line,
    parse_options,
    whole_option,
)
from groove.retrievers.backends.embedding import embedder_for
from groove.retrievers.backends.measuring import MeasuringBackend
from groove.retrievers.base import ProgressFn, RetrieverQuery
from groove.retrievers.legs import QueryLegs
from groove.retrievers.provenance import EngineCopy
from groove.runs.latency import QueryTiming
from groove.settings import command_line

INSTALL_HINT = f"install the extra: {install_command('lancedb')}"
# `groove export` has no API form: the command to run, its flags as declared
SCHEMA_HINT = f"write the table with `{command_line('export', kb_path='KB', to='lancedb:///PATH')}`"
# raised by the export itself (setting ``to``)
WRITABLE_HINT = "pass {give:lancedb:///PATH} with PATH a folder you can create or write"
SCHEME = "lancedb://"
#: Table versions kept after an export: the new one (its rows, then its full-text index)
#: and the one before, which a reader that opened it mid-export may still be reading.
KEEP_VERSIONS = 4
TABLE_NAME = re.compile(r"[A-Za-z0-9_.\-]+\Z")  # what LanceDB accepts (else a ValueError)


def split_url(url: str) -> tuple[Path, BackendOptions]:
    """(the database folder, the options of the query string)."""
    if not url.startswith(SCHEME):
        raise ConfigError(f"{url!r} is not a lancedb:///PATH URL", SCHEMA_HINT)
    rest = url.removeprefix(SCHEME)
    path, _, query = rest.partition("?")
    if not path:
        raise ConfigError(f"{url!r} names no folder", "write it like lancedb:///srv/kb.lance")
    options = parse_options(query, "lancedb URL", ("nprobes", "refine_factor"))
    for key in ("nprobes", "refine_factor"):
        whole_option(options, key, "lancedb URL")
    if not TABLE_NAME.match(options.table):
        raise ConfigError(
            f"{options.table!r} is not a LanceDB table name",
            "use letters, digits, '_', '-' and '.', like ?table=groove_chunks",
        )
    if options.fusion.family != "rrf":
        raise ConfigError(
            "the lancedb retriever fuses with LanceDB's RRFReranker only (family=rrf)",
            "tune other families client-side: groove tune with this URL as its retriever and the "
            "convex family (docs/engines.md)",
        )
    return Path(path).expanduser(), options


def public_name(url: str) -> str:
    """The retriever's recorded name: the database folder (absolute) with groove's options
    (table, fusion), which decide what the retriever returns. Checks the URL."""
    folder, _ = split_url(url)
    query = url.partition("?")[2]
    ours = "&".join(sorted(part for part in query.split("&") if part))
    return f"{SCHEME}{folder.resolve()}" + (f"?{ours}" if ours else "")


def _lancedb() -> Any:
    # LanceDB's Rust core logs to stderr (a WARN for every new table): errors only, unless
    # the user asks for more (it reads LANCEDB_LOG once, at import)
    os.environ.setdefault("LANCEDB_LOG", "error")
    try:
        import lancedb
    except ImportError:
        raise ConfigError("LanceDB support is not installed", INSTALL_HINT) from None
    return lancedb


def _text(row: ExportRow) -> str:
    return "\n".join(part for part in (row.heading, row.context, row.content) if part)


def export(url: str, rows: Sequence[ExportRow], meta: ExportMeta, *, replace: bool = False) -> int:
    """(Re)write the table (a new version: readers see the old one until it is complete)
    and its full-text index, then drop all but the last ``KEEP_VERSIONS`` versions. A
    table groove did not write is refused unless ``replace``."""
    import pyarrow as pa

    lancedb = _lancedb()
    folder, options = split_url(url)
    try:
        db = lancedb.connect(str(folder))
        existing = _existing(db, options.table)
    except OSError as exc:  # under a file, or a folder groove may not create
        raise ConfigError(
            literal(f"cannot write the LanceDB database {folder} ({exc.strerror or exc})"),
            WRITABLE_HINT,
            setting="to",
        ) from None
    if existing is not None and not replace and "groove.model" not in _metadata(existing):
        raise ConfigError(
            literal(
                f"table {options.table!r} in {folder} exists and groove did not write it "
                "(no groove metadata)"
            ),
            "export to another table (?table=NAME), or pass {setting} to replace it with groove's",
            setting="replace",
        )
    dim = meta.dim
    matrix = (
        np.stack([r.embedding for r in rows]).astype(np.float32) if rows else np.zeros((0, dim))
    )
    table = pa.table(
        {
            "id": pa.array([r.id for r in rows], pa.int64()),
            "path": [r.path for r in rows],
            "heading": pa.array([r.heading for r in rows], pa.string()),
            "text": [_text(r) for r in rows],
            "vector": pa.FixedSizeListArray.from_arrays(
                pa.array(matrix.reshape(-1), pa.float32()), dim
            ),
        },
        metadata={f"groove.{key}": value for key, value in meta.items()},
    )
    from lancedb.index import FTS

    try:
        created = db.create_table(options.table, data=table, mode="overwrite")
        # English words, stemmed, stop words dropped: the counterpart of PostgreSQL's 'english'
        created.create_index("text", config=FTS(language="English", stem=True), replace=True)
        _keep_last_versions(created, KEEP_VERSIONS)
    except OSError as exc:
        raise ConfigError(
            literal(f"cannot write the LanceDB database {folder} ({exc.strerror or exc})"),
            WRITABLE_HINT,
            setting="to",
        ) from None
    return len(rows)


def _existing(db: Any, name: str) -> Any:
    """The table ``name`` of ``db``, None when there is none."""
    try:
        return db.open_table(name)
    except (ValueError, FileNotFoundError):  # LanceDB: "Table '...' was not found"
        return None


def _metadata(table: Any) -> dict[str, str]:
    raw = table.schema.metadata or {}
    return {k.decode(): v.decode() for k, v in raw.items()}


def _keep_last_versions(table: Any, keep: int) -> None:
    """Delete the table's versions but the last ``keep``. LanceDB cleans by age, so the
    age given falls between the last kept version and the one before it (LanceDB's
    timestamps are naive local times)."""
    versions = sorted(table.list_versions(), key=lambda v: v["version"])
    if len(versions) <= keep:
        return
    kept, dropped = versions[-keep]["timestamp"], versions[-keep - 1]["timestamp"]
    cutoff = dropped + (kept - dropped) / 2
    table.optimize(cleanup_older_than=max(datetime.now() - cutoff, timedelta(0)))


class LanceRetriever(MeasuringBackend):
    """Both legs and LanceDB's own hybrid query (RRFReranker) per golden query."""

    kind = "lancedb"

    def __init__(
        self, url: str, name: str, embedder: Embedder | None = None, *, ann_recall: bool = False
    ) -> None:
        super().__init__(url, name, embedder, ann_recall)
        self.folder, self.options = split_url(url)

    def retrieve(
        self, queries: Sequence[RetrieverQuery], progress: ProgressFn | None = None
    ) -> list[tuple[RankedHit, ...]]:
        from lancedb.rerankers import RRFReranker

        table = self._open()
        meta = _meta(table, self.name)
        self.copy = EngineCopy(meta.model, meta.corpus)
        embedder = embedder_for(meta, self._embedder)
        texts = [q.query for q in queries]
        vectors = embedder.embed(texts) if texts else np.zeros((0, meta.dim))
        out: list[tuple[RankedHit, ...]] = []
        k = self.options.fusion.k
        try:
            for done, (q, vector) in enumerate(zip(queries, vectors, strict=True), 1):
                window = max(self.options.window, q.limit)
                start = time.perf_counter()
                vec = self._vector_leg(table, vector, window).to_list()
                after_vector = time.perf_counter()
                fts = table.search(q.query, query_type="fts").limit(window).to_list()
                after_lexical = time.perf_counter()
                legs = QueryLegs(
                    lexical=tuple(_hit(i, r, float(r["_score"])) for i, r in enumerate(fts, 1)),
                    vector=tuple(
                        _hit(i, r, 1.0 - float(r["_distance"])) for i, r in enumerate(vec, 1)
                    ),
                    lexical_ids=tuple(str(r["id"]) for r in fts),
                    vector_ids=tuple(str(r["id"]) for r in vec),
                )
                fused = (
                    table.search(query_type="hybrid")
                    .vector(vector)
                    .text(q.query)
                    .distance_type("cosine")
                    .limit(self.options.window)
                    .rerank(RRFReranker(K=k))  # type: ignore[arg-type]  # a float K works
                    .to_list()
                )
                end = time.perf_counter()
                exact = self._exact_ids(table, vector, window) if self.ann_recall else None
                timing = {
                    "vector": after_vector - start,
                    "lexical": after_lexical - after_vector,
                    "hybrid": end - after_lexical,
                }
                self._measured(
                    q,
                    window,
                    legs,
                    QueryTiming(end - start, timing),
                    exact,
                )
                out.append(
                    tuple(
                        _hit(i, r, float(r["_relevance_score"]))
                        for i, r in enumerate(fused[: q.limit], 1)
                    )
                )
                if progress is not None:
                    progress(done, len(queries))
        except (OSError, ValueError, RuntimeError) as exc:
            raise engine_error(self.name, f"LanceDB failed: {first_line(exc)}") from None
        return out

    def close(self) -> None:
        """An embedded database holds nothing open between runs."""

    def _exact_ids(self, table: Any, vector: np.ndarray, window: int) -> list[str]:
        """The vector leg's ids by exact search (no vector index)."""
        exact = self._vector_leg(table, vector, window).bypass_vector_index()
        return [str(r["id"]) for r in exact.to_list()]

    def _vector_leg(self, table: Any, vector: np.ndarray, window: int) -> Any:
        """The vector leg's query; ``nprobes`` / ``refine_factor`` from the URL apply when
        the table has a vector index (without one LanceDB searches exactly)."""
        query = table.search(vector, query_type="vector").distance_type("cosine").limit(window)
        nprobes = whole_option(self.options, "nprobes", "lancedb URL")
        refine = whole_option(self.options, "refine_factor", "lancedb URL")
        if nprobes is not None:
            query = query.nprobes(nprobes)
        if refine is not None:
            query = query.refine_factor(refine)
        return query

    def _open(self) -> Any:
        lancedb = _lancedb()
        if not self.folder.is_dir():
            raise engine_error(self.name, f"no LanceDB database at {self.folder}", SCHEMA_HINT)
        try:
            table = lancedb.connect(str(self.folder)).open_table(self.options.table)
        except (OSError, ValueError, RuntimeError) as exc:
            raise engine_error(
                self.name,
                f"cannot open table {self.options.table!r} ({first_line(exc)})",
                SCHEMA_HINT,
            ) from None
        missing = {"id", "path", "heading", "text", "vector"} - set(table.schema.names)
        if missing:
            raise engine_error(
                self.name,
                f"table {self.options.table!r} is not a groove export (no {sorted(missing)[0]})",
                SCHEMA_HINT,
            )
        return table


def _hit(rank: int, row: dict[str, Any], score: float) -> RankedHit:
    return RankedHit(rank, str(row["path"]), row["heading"], score)


def _meta(table: Any, name: str) -> ExportMeta:
    values = {
        key.removeprefix("groove."): value
        for key, value in _metadata(table).items()
        if key.startswith("groove.")
    }
    try:
        return ExportMeta.from_items(values)
    except (KeyError, ValueError):
        raise RetrieverError(
            f"retriever {name}: the table does not say which model made its embeddings",
            SCHEMA_HINT,
        ) from None
