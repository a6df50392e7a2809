"""The SQL of groove's PostgreSQL + pgvector backend: the table, the legs, the fusion.

The table (``groove export --to postgresql://...`` writes it) holds one row per chunk of a
groove index: ``id`` (groove's chunk id), ``path``, ``heading``, ``context``, ``content``,
``embedding vector(dim)`` and ``tsv``, a stored ``tsvector`` that weights the heading A,
the context B and the content C, so that ``ts_rank``'s default weights (A 1.0, B 0.4,
C 0.2, D 0.1) play the part of groove's bm25 column weights. A GIN index serves the
lexical leg and an HNSW index (cosine) the vector leg. A table groove did not write is
read through a ``Layout``: its own column names, and either a stored ``tsvector`` or a
text column that is turned into one per query.

Lexical leg: the query's words (``plainto_tsquery('english', ...)``, English stems) ORed,
ranked by ``ts_rank`` descending, ties to the lower id. Vector leg: cosine distance
ascending (``<=>``), score ``1 - distance``, ties to the lower id. Each is cut to the
window. The fusion (``fusion_sql``) fuses the two legs in SQL exactly as groove.fusion does
(one-based ranks, float8, the lexical-only rows after the vector rows on ties), so that
groove's client-side fusion of the legs and PostgreSQL's own can be compared cell for cell
(tests/test_backend_postgres.py). The retriever runs each leg once and hands their rows to
the fusion; ``hybrid_sql`` is the same fusion over the legs read from the table, in one
statement, as an application would run it (tune prints it with literal values).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groove.fusion import Fusion

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def check_name(name: str, what: str = "table name") -> str:
    """``name`` if it is a plain SQL identifier (it is written into the SQL), else ValueError."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"{what} {name!r} is not a plain SQL identifier")
    return name


@dataclass(frozen=True)
class Table:
    """A table name, optionally schema-qualified (``search.chunks``)."""

    name: str
    schema: str | None = None

    @classmethod
    def parse(cls, text: str) -> Table:
        """``name`` or ``schema.name``, each part a plain identifier (else ValueError)."""
        parts = text.split(".")
        if len(parts) > 2:
            raise ValueError(f"table name {text!r} has more than a schema and a name")
        if len(parts) == 2:
            return cls(check_name(parts[1]), check_name(parts[0], "schema name"))
        return cls(check_name(text))

    @property
    def sql(self) -> str:
        return f"{self.schema}.{self.name}" if self.schema else self.name

    @property
    def meta(self) -> Table:
        """The table beside it that holds groove's key/value meta rows."""
        return Table(check_name(f"{self.name}_meta"), self.schema)

    def index(self, suffix: str) -> str:
        """An index name (an index lives in its table's schema)."""
        return check_name(f"{self.name}_{suffix}")


@dataclass(frozen=True)
class Layout:
    """Where the legs read from: the table and its columns. Exactly one of ``tsvector``
    (a stored tsvector column) and ``text`` (a text column) feeds the lexical leg;
    ``heading`` None: the table has none."""

    table: Table
    id: str = "id"
    path: str = "path"
    heading: str | None = "heading"
    tsvector: str | None = "tsv"
    text: str | None = None
    embedding: str = "embedding"

    def __post_init__(self) -> None:
        for column in (self.id, self.path, self.heading, self.tsvector, self.text):
            if column is not None:
                check_name(column, "column name")
        check_name(self.embedding, "column name")
        if (self.tsvector is None) == (self.text is None):
            raise ValueError("give one of tsvector= and text= for the lexical leg")

    @property
    def lexical_source(self) -> str:
        if self.tsvector is not None:
            return f"c.{self.tsvector}"
        return f"to_tsvector('english', coalesce(c.{self.text}, ''))"

    @property
    def heading_sql(self) -> str:
        return f"c.{self.heading}" if self.heading is not None else "NULL::text"


def create_sql(table: Table, dim: int) -> list[str]:
    """Statements that create groove's table (the extension is checked beforehand)."""
    return [
        f"DROP TABLE IF EXISTS {table.sql}",
        f"""CREATE TABLE {table.sql} (
            id bigint PRIMARY KEY,
            path text NOT NULL,
            heading text,
            context text,
            content text NOT NULL,
            embedding vector({int(dim)}) NOT NULL,
            tsv tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english', coalesce(heading, '')), 'A') ||
                setweight(to_tsvector('english', coalesce(context, '')), 'B') ||
                setweight(to_tsvector('english', content), 'C')
            ) STORED
        )""",
    ]


def index_sql(table: Table) -> list[str]:
    return [
        f"CREATE INDEX {table.index('tsv')} ON {table.sql} USING gin (tsv)",
        f"CREATE INDEX {table.index('embedding')} ON {table.sql} "
        "USING hnsw (embedding vector_cosine_ops)",
        f"ANALYZE {table.sql}",
    ]


_TSQUERY = "nullif(replace(plainto_tsquery('english', {query})::text, '&', '|'), '')::tsquery"


def lexical_sql(layout: Layout, query: str = "%(query)s", window: str = "%(window)s") -> str:
    """The lexical leg: ``id, path, heading, score`` best first (``query``, ``window``:
    placeholders by default, or SQL literals)."""
    t = layout.table.sql
    tsq = _TSQUERY.format(query=query)
    return f"""SELECT c.{layout.id} AS id, c.{layout.path} AS path,
       {layout.heading_sql} AS heading, ts_rank({layout.lexical_source}, q.tsq)::float8 AS score
FROM {t} c, (SELECT {tsq} AS tsq) q
WHERE q.tsq IS NOT NULL AND {layout.lexical_source} @@ q.tsq
ORDER BY score DESC, c.{layout.id} LIMIT {window}"""


def vector_sql(layout: Layout, vector: str = "%(vector)s", window: str = "%(window)s") -> str:
    """The vector leg: ``id, path, heading, score, distance`` best first (score: 1 - the
    cosine distance)."""
    t = layout.table.sql
    d = f"(c.{layout.embedding} <=> {vector}::vector)"
    return f"""SELECT c.{layout.id} AS id, c.{layout.path} AS path,
       {layout.heading_sql} AS heading, (1 - {d})::float8 AS score, {d} AS distance
FROM {t} c ORDER BY distance, c.{layout.id} LIMIT {window}"""


def _normalised(leg: str, normalizer: str, lower: float) -> str:
    """A leg's score normalised over the leg (window functions), as fusion.normalize does."""
    s = f"{leg}.score"
    over = f"OVER (PARTITION BY {leg}.present)"
    mx, mn = f"max({s}) {over}", f"min({s}) {over}"
    mean = f"avg({s}) {over}"
    sd = f"stddev_pop({s}) {over}"
    if normalizer == "none":
        return s
    if normalizer == "minmax":
        return f"CASE WHEN {mx} <= {mn} THEN 1.0::float8 ELSE ({s} - {mn}) / ({mx} - {mn}) END"
    if normalizer == "tmm":
        low = f"({float(lower)!r})::float8"
        return (
            f"CASE WHEN {mx} <= {low} THEN (CASE WHEN {mx} = {low} OR {s} > {low} "
            f"THEN 1.0::float8 ELSE 0.0::float8 END) ELSE ({s} - {low}) / ({mx} - {low}) END"
        )
    if normalizer == "l2":
        norm = f"sqrt(sum({s} * {s}) {over})"
        return f"CASE WHEN {norm} > 0 THEN {s} / {norm} ELSE 0.0::float8 END"
    if normalizer == "zscore":
        return f"CASE WHEN {sd} = 0 THEN 0.0::float8 ELSE ({s} - {mean}) / {sd} END"
    if normalizer == "dbsf":
        z = f"({s} - ({mean} - 3 * {sd})) / (6 * {sd})"
        return f"CASE WHEN {sd} = 0 THEN 0.0::float8 ELSE least(greatest({z}, 0.0), 1.0) END"
    raise ValueError(f"unknown normalizer {normalizer!r}")


def _joined(fusion: Fusion, digits: int | None = None) -> str:
    """The ``joined`` CTE: each id of either leg with its two gains (over CTEs ``lexical``
    and ``vector`` of ``id, score, rank``); ``digits``: the weights and k rounded to that
    many decimals, for a person to read (else exact)."""

    def n(x: float) -> str:
        return repr(round(float(x), digits) if digits is not None else float(x))

    if fusion.family == "convex":
        w_vec, w_lex = fusion.vector_weight, 1.0 - fusion.vector_weight
        v = _normalised("vector", fusion.normalizer, fusion.vector_lower_bound)
        lx = _normalised("lexical", fusion.normalizer, fusion.lexical_lower_bound)
        gain_v, gain_l = f"{n(w_vec)}::float8 * ({v})", f"{n(w_lex)}::float8 * ({lx})"
    else:
        w_vec, w_lex = (
            (fusion.vector_weight, 1.0 - fusion.vector_weight)
            if fusion.family == "weighted_rrf"
            else (1.0, 1.0)
        )
        k = f"{n(fusion.k)}::float8"
        gain_v = f"{n(w_vec)}::float8 / ({k} + vector.rank)"
        gain_l = f"{n(w_lex)}::float8 / ({k} + lexical.rank)"
    return f"""joined AS (
    SELECT coalesce(vector.id, lexical.id) AS id,
           CASE WHEN vector.id IS NOT NULL THEN {gain_v} END AS gain_v,
           CASE WHEN lexical.id IS NOT NULL THEN {gain_l} END AS gain_l,
           coalesce(vector.rank, 1000000 + lexical.rank) AS seen
    FROM (SELECT *, true AS present FROM vector) vector
    FULL OUTER JOIN (SELECT *, true AS present FROM lexical) lexical USING (id)
)"""


_SCORE = (
    "(0.0::float8 + coalesce(j.gain_v, 0.0::float8)) + coalesce(j.gain_l, 0.0::float8) AS score"
)


def fusion_sql(fusion: Fusion) -> str:
    """PostgreSQL's fusion of two legs handed over as arrays: ``id, score`` best first
    (``id`` as text: the legs' ids are only compared).

    Parameters: ``%(lexical_ids)s`` / ``%(vector_ids)s`` (text[], best first),
    ``%(lexical_scores)s`` / ``%(vector_scores)s`` (float8[]), ``%(window)s`` (the ranks
    fused per leg) and ``%(limit)s``."""
    legs = ",\n".join(
        f"""{leg} AS (
    SELECT id, score, rank FROM unnest(%({leg}_ids)s::text[], %({leg}_scores)s::float8[])
        WITH ORDINALITY AS l(id, score, rank)
    WHERE rank <= %(window)s
)"""
        for leg in ("lexical", "vector")
    )
    return f"""WITH {legs}, {_joined(fusion)}
SELECT j.id, {_SCORE}
FROM joined j
ORDER BY score DESC, j.seen
LIMIT %(limit)s"""


def hybrid_sql(
    fusion: Fusion,
    layout: Layout,
    *,
    query: str = "%(query)s",
    vector: str = "%(vector)s",
    window: str = "%(window)s",
    limit: str = "%(limit)s",
    digits: int | None = None,
) -> str:
    """The legs read from the table and fused in one statement: ``id, path, heading,
    score`` best first; the values are placeholders unless given as SQL (psql's
    ``:'query'``, or literals)."""
    ranked = {
        "lexical": lexical_sql(layout, query, window),
        "vector": vector_sql(layout, vector, window),
    }
    order = {"lexical": "score DESC, id", "vector": "distance, id"}
    legs = ",\n".join(
        f"""{leg} AS (
    SELECT id, path, heading, score, row_number() OVER (ORDER BY {order[leg]}) AS rank
    FROM ({_indent(sql)}) s
)"""
        for leg, sql in ranked.items()
    )
    return f"""WITH {legs}, {_joined(fusion, digits)}
SELECT j.id, coalesce(vector.path, lexical.path) AS path,
       coalesce(vector.heading, lexical.heading) AS heading, {_SCORE}
FROM joined j LEFT JOIN vector USING (id) LEFT JOIN lexical USING (id)
ORDER BY score DESC, j.seen
LIMIT {limit}"""


def _indent(sql: str) -> str:
    return "\n        ".join(sql.splitlines())
