"""PostgreSQL + pgvector: export a groove index into a table, and a retriever over it.

The URL (postgres_url.py) names the server, the table (and, for a table groove did not
write, its columns and model), the fusion of the engine's own hybrid query and pgvector's
``ef_search``. The SQL is in postgres_sql.py. psycopg comes with the
``groove-retrieval[postgres]`` extra.

The export never replaces a table it did not write: a table (or its ``_meta`` table)
without groove's meta row is refused unless ``replace``. It records the model and the
index's corpus snapshot in the meta table (groove.retrievers.provenance).

Failures are one line and stop the run before anything is written: a server that does not
answer within the timeout (``--retriever-timeout``, also each statement's limit), pgvector
missing, a permission refused, a table that is missing or not groove's export, a statement
that runs out of time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from groove.engine.embed import Embedder
from groove.errors import ConfigError, RetrieverError, literal
from groove.install import install_command
from groove.metrics import RankedHit
from groove.retrievers.backends import postgres_sql as sql
from groove.retrievers.backends.common import (
    ExportMeta,
    ExportRow,
    batched,
    engine_error,
    first_line,
)
from groove.retrievers.backends.embedding import embedder_for
from groove.retrievers.backends.measuring import MeasuringBackend
from groove.retrievers.backends.postgres_url import (
    MAX_EF_SEARCH,
    Target,
    parse_target,
    public_name,
    redacted,
)
from groove.retrievers.base import ProgressFn, RetrieverQuery
from groove.retrievers.legs import QueryLegs
from groove.retrievers.provenance import EngineCopy
from groove.runs.latency import QueryTiming
from groove.settings import command_line

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresRetriever", "connect", "export", "split_url"]

INSTALL_HINT = f"install the extra: {install_command('postgres')}"
# `groove export` has no API form: the command to run, its flags as declared
SCHEMA_HINT = (
    f"write the table with `{command_line('export', kb_path='KB', to='postgresql://...')}`"
)
MAPPING_HINT = (
    f"{SCHEMA_HINT}, or map a table of your own with ?id=&path=&text=&embedding=&model= "
    "(docs/engines.md)"
)
VECTOR_HINT = (
    "a superuser runs `CREATE EXTENSION vector;` once in this database "
    "(docs/engines.md#a-postgresql-server)"
)
PERMISSION_HINT = "grant the user the rights on the database or schema (docs/engines.md)"
FOREIGN_HINT = (
    "export to another table (?table=NAME), or pass {setting} to drop it and write groove's"
)


def split_url(url: str) -> tuple[str, Target]:
    """(the connection URL with libpq's keywords only, the target the URL names)."""
    target = parse_target(url)
    return target.conninfo, target


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError("PostgreSQL support is not installed", INSTALL_HINT) from None
    return psycopg


def connect(url: str, timeout: float, name: str) -> psycopg.Connection[Any]:
    """A connection whose every statement is limited to ``timeout`` seconds (libpq's own
    ``options`` from the URL kept)."""
    psycopg = _psycopg()
    target = parse_target(url)
    limit = f"-c statement_timeout={max(1, round(timeout * 1000))}"
    options = f"{target.libpq_options} {limit}" if target.libpq_options else limit
    try:
        conn = psycopg.connect(
            target.conninfo, connect_timeout=max(1, int(timeout + 0.999)), options=options
        )
    except psycopg.OperationalError as exc:
        raise engine_error(
            name, f"cannot connect to PostgreSQL ({_clean(exc, url)})", "is the server up?"
        ) from None
    return conn


def _clean(exc: BaseException, url: str) -> str:
    """The error's first line, with the URL's password (if libpq echoed it) masked."""
    from urllib.parse import urlsplit

    text = first_line(exc)
    password = urlsplit(url).password
    return text.replace(password, "***") if password else text


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form; float32 values written exactly."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


@contextmanager
def _failures(name: str, url: str, timeout: float) -> Iterator[None]:
    """Every psycopg error as one line (exit 2)."""
    psycopg = _psycopg()
    try:
        yield
    except psycopg.errors.QueryCanceled:
        raise engine_error(
            name,
            f"a query ran longer than {timeout:g}s",
            "raise {setting}, or check the table's indexes",
            setting="retriever_timeout",
        ) from None
    except psycopg.errors.InsufficientPrivilege as exc:
        raise engine_error(
            name, f"permission denied ({_clean(exc, url)})", PERMISSION_HINT
        ) from None
    except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn) as exc:
        raise engine_error(
            name, f"the table is not a groove export ({_clean(exc, url)})", MAPPING_HINT
        ) from None
    except psycopg.errors.UndefinedObject as exc:  # type "vector" does not exist
        raise engine_error(name, f"pgvector is missing ({_clean(exc, url)})", VECTOR_HINT) from None
    except psycopg.Error as exc:
        raise engine_error(name, f"PostgreSQL failed: {_clean(exc, url)}") from None


def export(
    url: str,
    rows: Sequence[ExportRow],
    meta: ExportMeta,
    timeout: float = 600.0,
    *,
    replace: bool = False,
) -> int:
    """(Re)create groove's table and fill it, in one transaction: all of it or none. A
    table groove did not write is refused unless ``replace``."""
    target = parse_target(url)
    if target.mapped:
        raise ConfigError(
            "{setting} " + literal("maps a table of your own: groove export writes its own"),
            "drop the column options and model= from the URL to export",
            setting="to",
        )
    table = target.layout.table
    name = public_name(url)
    conn = connect(url, timeout, name)
    with conn, _failures(name, url, timeout), conn.transaction(), conn.cursor() as cur:
        _ensure_vector(conn, cur, name, url)
        _refuse_foreign(conn, cur, table, replace, redacted(url))
        for statement in sql.create_sql(table, meta.dim):
            cur.execute(statement)
        cur.execute(f"DROP TABLE IF EXISTS {table.meta.sql}")
        cur.execute(f"CREATE TABLE {table.meta.sql} (key text PRIMARY KEY, value text)")
        cur.executemany(f"INSERT INTO {table.meta.sql} (key, value) VALUES (%s, %s)", meta.items())
        for part in batched(list(rows), 500):
            cur.executemany(
                f"INSERT INTO {table.sql} (id, path, heading, context, content, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s::vector)",
                [
                    (r.id, r.path, r.heading, r.context, r.content, vector_literal(r.embedding))
                    for r in part
                ],
            )
        for statement in sql.index_sql(table):
            cur.execute(statement)
    return len(rows)


def _ensure_vector(conn: Any, cur: Any, name: str, url: str) -> None:
    """pgvector in this database: there already, or created now (needs the right to)."""
    psycopg = _psycopg()
    cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
    if cur.fetchone() is not None:
        return
    try:
        with conn.transaction():
            cur.execute("CREATE EXTENSION vector")
    except psycopg.Error as exc:
        raise engine_error(
            name, f"pgvector is not installed in this database ({_clean(exc, url)})", VECTOR_HINT
        ) from None


def _refuse_foreign(conn: Any, cur: Any, table: sql.Table, replace: bool, shown: str) -> None:
    """ConfigError when ``table`` or its meta table exists and groove's meta row does not."""
    cur.execute(
        "SELECT to_regclass(%s) IS NOT NULL, to_regclass(%s) IS NOT NULL",
        (table.sql, table.meta.sql),
    )
    has_table, has_meta = cur.fetchone()
    if replace or not (has_table or has_meta) or _groove_meta(conn, cur, table) is not None:
        return
    which = table.sql if has_table else table.meta.sql
    raise ConfigError(
        literal(
            f"{shown}: table {which} exists and groove did not write it "
            f"(no groove meta row in {table.meta.sql})"
        ),
        FOREIGN_HINT,
        setting="replace",
    )


def _groove_meta(conn: Any, cur: Any, table: sql.Table) -> ExportMeta | None:
    """The meta rows of groove's export of ``table``; None when there are none."""
    psycopg = _psycopg()
    cur.execute("SELECT to_regclass(%s) IS NOT NULL", (table.meta.sql,))
    if not cur.fetchone()[0]:
        return None
    try:
        with conn.transaction():  # a savepoint: a table of other columns is no error
            cur.execute(f"SELECT key, value FROM {table.meta.sql}")
            values = dict(cur.fetchall())
    except (psycopg.errors.UndefinedColumn, psycopg.errors.UndefinedTable):
        return None
    try:
        return ExportMeta.from_items(values)
    except (KeyError, ValueError, TypeError):
        return None


class PostgresRetriever(MeasuringBackend):
    """Both legs, each run once, and PostgreSQL's own fusion of them, per query."""

    kind = "postgresql"

    def __init__(
        self,
        url: str,
        name: str,
        timeout: float = 30.0,
        embedder: Embedder | None = None,
        *,
        ann_recall: bool = False,
    ) -> None:
        super().__init__(url, name, embedder, ann_recall)  # the vector leg: HNSW
        self.timeout = timeout
        self.target = parse_target(url)
        self.options = self.target.options

    def retrieve(
        self, queries: Sequence[RetrieverQuery], progress: ProgressFn | None = None
    ) -> list[tuple[RankedHit, ...]]:
        out: list[tuple[RankedHit, ...]] = []
        layout = self.target.layout
        with (
            connect(self.url, self.timeout, self.name) as conn,
            _failures(self.name, self.url, self.timeout),
            conn.cursor() as cur,
        ):
            meta = self._meta(conn, cur)
            embedder = embedder_for(meta, self._embedder)
            texts = [q.query for q in queries]
            vectors = embedder.embed(texts) if texts else np.zeros((0, meta.dim))
            lexical, vector = sql.lexical_sql(layout), sql.vector_sql(layout)
            fusion = sql.fusion_sql(self.options.fusion)
            for done, (q, v) in enumerate(zip(queries, vectors, strict=True), 1):
                window = max(self.options.window, q.limit)
                ef = self.target.ef_search or min(window, MAX_EF_SEARCH)
                cur.execute(f"SET hnsw.ef_search = {int(ef)}")
                params = {"query": q.query, "vector": vector_literal(v), "window": window}
                start = time.perf_counter()
                lex_rows = cur.execute(lexical, params).fetchall()
                after_lexical = time.perf_counter()
                vec_rows = [r[:4] for r in cur.execute(vector, params).fetchall()]
                after_vector = time.perf_counter()
                legs = _legs(lex_rows, vec_rows)
                fused = cur.execute(fusion, _fusion_params(legs, self.options.window, q.limit))
                labels = {key: label for key, label in legs.labels().items()}
                hits = tuple(
                    RankedHit(i, *labels[("id", str(chunk_id))], float(score))
                    for i, (chunk_id, score) in enumerate(fused.fetchall(), 1)
                )
                end = time.perf_counter()
                exact = _exact_ids(cur, vector, params) if self.ann_recall else None
                timing = {
                    "lexical": after_lexical - start,
                    "vector": after_vector - after_lexical,
                    "fusion": end - after_vector,
                }
                self._measured(
                    q,
                    window,
                    legs,
                    QueryTiming(end - start, timing),
                    exact,
                )
                out.append(hits)
                if progress is not None:
                    progress(done, len(queries))
        return out

    def close(self) -> None:
        """Each ``retrieve`` opens and closes its own connection."""

    def _meta(self, conn: Any, cur: Any) -> ExportMeta:
        """groove's meta rows; for a mapped table without them, the URL's ``model=``."""
        table = self.target.layout.table
        found = _groove_meta(conn, cur, table)
        if found is not None:
            self.copy = EngineCopy(found.model, found.corpus)
            return found
        cur.execute("SELECT to_regclass(%s) IS NOT NULL", (table.meta.sql,))
        has_meta = cur.fetchone()[0]
        if self.target.model is None:
            what = "does not say which model made the embeddings" if has_meta else "is missing"
            raise RetrieverError(
                f"retriever {self.name}: table {table.sql} is not a groove export "
                f"({table.meta.sql} {what})",
                MAPPING_HINT,
            )
        e = self.target.layout.embedding
        cur.execute(f"SELECT vector_dims({e}) FROM {table.sql} WHERE {e} IS NOT NULL LIMIT 1")
        row = cur.fetchone()
        return ExportMeta(self.target.model, None, int(row[0]) if row else 0)


def _exact_ids(cur: Any, vector: str, params: dict[str, Any]) -> list[str]:
    """The vector leg's ids by exact search: no index scan, every distance computed (the
    planner's settings put back after, since SET LOCAL would last the whole transaction)."""
    cur.execute("SET enable_indexscan = off")
    try:
        return [str(row[0]) for row in cur.execute(vector, params).fetchall()]
    finally:
        cur.execute("RESET enable_indexscan")


def _legs(lexical: Sequence[tuple[Any, ...]], vector: Sequence[tuple[Any, ...]]) -> QueryLegs:
    """The rows ``id, path, heading, score`` of each leg, best first."""

    def hits(rows: Sequence[tuple[Any, ...]]) -> tuple[RankedHit, ...]:
        return tuple(
            RankedHit(rank, str(path), heading, float(score))
            for rank, (_, path, heading, score) in enumerate(rows, 1)
        )

    return QueryLegs(
        lexical=hits(lexical),
        vector=hits(vector),
        lexical_ids=tuple(str(r[0]) for r in lexical),
        vector_ids=tuple(str(r[0]) for r in vector),
    )


def _fusion_params(legs: QueryLegs, window: int, limit: int) -> dict[str, Any]:
    return {
        "lexical_ids": list(legs.lexical_ids),
        "lexical_scores": [h.score for h in legs.lexical],
        "vector_ids": list(legs.vector_ids),
        "vector_scores": [h.score for h in legs.vector],
        "window": window,
        "limit": limit,
    }
