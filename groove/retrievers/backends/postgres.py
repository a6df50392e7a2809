"""PostgreSQL + pgvector: export a groove index into a table, and a retriever over it.

``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB?table=groove_chunks&family=rrf&k=60&window=100``
names the server, the table and the fusion of the engine's own hybrid query (defaults:
``groove_chunks``, RRF, k 60, window 100). The SQL is in postgres_sql.py. psycopg comes
with the ``groove-retrieval[postgres]`` extra.

Failures are one line and stop the run before anything is written: a server that does not
answer within the timeout (``--retriever-timeout``, also each statement's limit), a table
that is missing or not groove's export, a statement that runs out of time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from groove.engine.embed import Embedder
from groove.errors import ConfigError, RetrieverError
from groove.install import install_command
from groove.metrics import RankedHit
from groove.notes import Note
from groove.retrievers.backends import postgres_sql as sql
from groove.retrievers.backends.common import (
    BackendOptions,
    ExportMeta,
    ExportRow,
    batched,
    embedder_for,
    engine_error,
    first_line,
    parse_options,
)
from groove.retrievers.base import ProgressFn, RetrieverQuery
from groove.retrievers.legs import QueryLegs
from groove.settings import command_line

if TYPE_CHECKING:
    import psycopg

INSTALL_HINT = f"install the extra: {install_command('postgres')}"
# `groove export` has no API form: the command to run, its flags as declared
SCHEMA_HINT = (
    f"write the table with `{command_line('export', kb_path='KB', to='postgresql://...')}`"
)
_MAX_EF_SEARCH = 1000  # pgvector's upper bound of hnsw.ef_search


def split_url(url: str) -> tuple[str, BackendOptions]:
    """(the connection URL without its query string, the options the query string sets)."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ConfigError(f"{url!r} is not a postgresql://HOST/DB URL", sql_hint())
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    # libpq's own `host` (a Unix-socket folder, or a host name) goes to the connection
    libpq = [(key, value) for key, value in pairs if key == "host"]
    ours = urlencode([(key, value) for key, value in pairs if key != "host"])
    if not parts.hostname and not libpq:
        raise ConfigError(f"{url!r} names no host", sql_hint())
    options = parse_options(ours, "postgresql URL")
    try:
        sql.check_table(options.table)
    except ValueError as exc:
        raise ConfigError(str(exc), "use letters, digits and _ only") from None
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(libpq), "")), options


def sql_hint() -> str:
    return (
        "write it like postgresql://user@127.0.0.1:5432/db?table=groove_chunks "
        "(a Unix socket: postgresql://user@localhost/db?host=/socket/folder)"
    )


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigError("PostgreSQL support is not installed", INSTALL_HINT) from None
    return psycopg


def connect(url: str, timeout: float, name: str) -> psycopg.Connection[Any]:
    """A connection whose every statement is limited to ``timeout`` seconds."""
    psycopg = _psycopg()
    conninfo, _ = split_url(url)
    try:
        conn = psycopg.connect(
            conninfo,
            connect_timeout=max(1, int(timeout + 0.999)),
            options=f"-c statement_timeout={int(timeout * 1000)}",
        )
    except psycopg.OperationalError as exc:
        raise engine_error(
            name, f"cannot connect to PostgreSQL ({first_line(exc)})", "is the server up?"
        ) from None
    return conn


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form; float32 values written exactly."""
    return "[" + ",".join(repr(float(x)) for x in np.asarray(vector, dtype=np.float32)) + "]"


def export(url: str, rows: Sequence[ExportRow], meta: ExportMeta, timeout: float = 600.0) -> int:
    """(Re)create the table and fill it, in one transaction: all of it or none."""
    _, options = split_url(url)
    t = options.table
    conn = connect(url, timeout, public_name(url))
    with conn, conn.transaction(), conn.cursor() as cur:
        for statement in sql.create_sql(t, meta.dim):
            cur.execute(statement)
        cur.execute(f"DROP TABLE IF EXISTS {t}_meta")
        cur.execute(f"CREATE TABLE {t}_meta (key text PRIMARY KEY, value text)")
        cur.executemany(
            f"INSERT INTO {t}_meta (key, value) VALUES (%s, %s)",
            [("model", meta.model), ("model_path", meta.model_path), ("dim", str(meta.dim))],
        )
        for part in batched(list(rows), 500):
            cur.executemany(
                f"INSERT INTO {t} (id, path, heading, context, content, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s::vector)",
                [
                    (r.id, r.path, r.heading, r.context, r.content, vector_literal(r.embedding))
                    for r in part
                ],
            )
        for statement in sql.index_sql(t):
            cur.execute(statement)
    return len(rows)


def public_name(url: str) -> str:
    """The retriever's recorded name: the URL without password and libpq's ``host``, with
    groove's own options (table, fusion), which decide what the retriever returns. Checks
    the URL (ConfigError for a bad one)."""
    split_url(url)
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    host = parts.hostname or "localhost"
    ours = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "host")
    return urlunsplit((parts.scheme, f"{user}{host}{port}", parts.path, urlencode(ours), ""))


class PostgresRetriever:
    """Both legs and PostgreSQL's own fusion of them, one round trip each per query."""

    kind = "postgresql"

    def __init__(
        self, url: str, name: str, timeout: float = 30.0, embedder: Embedder | None = None
    ) -> None:
        self.url = url
        self.name = name
        self.timeout = timeout
        self.options = split_url(url)[1]
        self.legs: dict[str, QueryLegs] = {}
        self.notes: list[Note] = []
        self._embedder = embedder

    def retrieve(
        self, queries: Sequence[RetrieverQuery], progress: ProgressFn | None = None
    ) -> list[tuple[RankedHit, ...]]:
        psycopg = _psycopg()
        out: list[tuple[RankedHit, ...]] = []
        with connect(self.url, self.timeout, self.name) as conn:
            try:
                meta = self._meta(conn)
                embedder = embedder_for(meta, self._embedder)
                vectors = (
                    embedder.embed([q.query for q in queries])
                    if queries
                    else np.zeros((0, meta.dim))
                )
                hybrid = sql.hybrid_sql(self.options.fusion, self.options.table)
                legs_query = sql.legs_sql(self.options.table)
                with conn.cursor() as cur:
                    for done, (q, vector) in enumerate(zip(queries, vectors, strict=True), 1):
                        window = max(self.options.window, q.limit)
                        cur.execute(f"SET hnsw.ef_search = {min(window, _MAX_EF_SEARCH)}")
                        params = {
                            "query": q.query,
                            "vector": vector_literal(vector),
                            "window": window,
                            "limit": q.limit,
                        }
                        cur.execute(legs_query, params)
                        self.legs[q.id] = _legs(cur.fetchall())
                        cur.execute(hybrid, {**params, "window": self.options.window})
                        out.append(
                            tuple(
                                RankedHit(i, path, heading, float(score))
                                for i, (_, path, heading, score) in enumerate(cur.fetchall(), 1)
                            )
                        )
                        if progress is not None:
                            progress(done, len(queries))
            except psycopg.errors.QueryCanceled:
                raise engine_error(
                    self.name,
                    f"a query ran longer than {self.timeout:g}s",
                    "raise {setting}, or check the table's indexes",
                    setting="retriever_timeout",
                ) from None
            except (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn) as exc:
                raise engine_error(
                    self.name, f"the table is not a groove export ({first_line(exc)})", SCHEMA_HINT
                ) from None
            except psycopg.Error as exc:
                raise engine_error(self.name, f"PostgreSQL failed: {first_line(exc)}") from None
        return out

    def close(self) -> None:
        """Each ``retrieve`` opens and closes its own connection."""

    def _meta(self, conn: psycopg.Connection[Any]) -> ExportMeta:
        with conn.cursor() as cur:
            cur.execute(f"SELECT key, value FROM {self.options.table}_meta")
            values = dict(cur.fetchall())
        try:
            return ExportMeta(values["model"], values.get("model_path"), int(values["dim"]))
        except (KeyError, ValueError):
            raise RetrieverError(
                f"retriever {self.name}: {self.options.table}_meta does not say which model "
                "made the embeddings",
                SCHEMA_HINT,
            ) from None


def _legs(rows: Sequence[tuple[str, int, int, str, str | None, float]]) -> QueryLegs:
    by_leg: dict[str, list[tuple[RankedHit, str]]] = {"lexical": [], "vector": []}
    for leg, rank, chunk_id, path, heading, score in rows:
        by_leg[leg].append((RankedHit(int(rank), path, heading, float(score)), str(chunk_id)))
    return QueryLegs(
        lexical=tuple(h for h, _ in by_leg["lexical"]),
        vector=tuple(h for h, _ in by_leg["vector"]),
        lexical_ids=tuple(i for _, i in by_leg["lexical"]),
        vector_ids=tuple(i for _, i in by_leg["vector"]),
    )
