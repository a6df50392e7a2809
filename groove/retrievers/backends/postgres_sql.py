"""The SQL of groove's PostgreSQL + pgvector backend: the table, the legs, the hybrid query.

The table (``groove export --to postgresql://...`` writes it) holds one row per chunk of a
groove index: ``id`` (groove's chunk id), ``path``, ``heading``, ``context``, ``content``,
``embedding vector(dim)`` and ``tsv``, a stored ``tsvector`` that weights the heading A,
the context B and the content C, so that ``ts_rank``'s default weights (A 1.0, B 0.4,
C 0.2, D 0.1) play the part of groove's bm25 column weights. A GIN index serves the
lexical leg and an HNSW index (cosine) the vector leg.

Lexical leg: the query's words (``plainto_tsquery('english', ...)``, English stems) ORed,
ranked by ``ts_rank`` descending, ties to the lower id. Vector leg: cosine distance
ascending (``<=>``), score ``1 - distance``, ties to the lower id. Each is cut to the
window. The hybrid query fuses the two legs in SQL exactly as groove.fusion does
(one-based ranks, float8, the lexical-only rows after the vector rows on ties), so that
groove's client-side fusion of the legs and PostgreSQL's own fusion can be compared cell
for cell (tests/test_backend_postgres.py).
"""

from __future__ import annotations

import re

from groove.fusion import Fusion

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")


def check_table(name: str) -> str:
    """``name`` if it is a plain SQL identifier (it is written into the SQL), else ValueError."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"table name {name!r} is not a plain SQL identifier")
    return name


def create_sql(table: str, dim: int) -> list[str]:
    """Statements that (re)create the table and its two indexes."""
    t = check_table(table)
    return [
        "CREATE EXTENSION IF NOT EXISTS vector",
        f"DROP TABLE IF EXISTS {t}",
        f"""CREATE TABLE {t} (
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


def index_sql(table: str) -> list[str]:
    t = check_table(table)
    return [
        f"CREATE INDEX {t}_tsv ON {t} USING gin (tsv)",
        f"CREATE INDEX {t}_embedding ON {t} USING hnsw (embedding vector_cosine_ops)",
        f"ANALYZE {t}",
    ]


def _legs_cte(table: str) -> str:
    t = check_table(table)
    return f"""q AS (
    SELECT nullif(replace(plainto_tsquery('english', %(query)s)::text, '&', '|'), '')::tsquery
        AS tsq
), lexical AS (
    SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM (
        SELECT c.id, ts_rank(c.tsv, q.tsq)::float8 AS score
        FROM {t} c, q WHERE q.tsq IS NOT NULL AND c.tsv @@ q.tsq
        ORDER BY score DESC, c.id LIMIT %(window)s
    ) s
), vector AS (
    SELECT id, score, row_number() OVER (ORDER BY distance, id) AS rank
    FROM (
        SELECT c.id, c.embedding <=> %(vector)s::vector AS distance,
               1 - (c.embedding <=> %(vector)s::vector) AS score
        FROM {t} c ORDER BY distance, c.id LIMIT %(window)s
    ) s
)"""


def legs_sql(table: str) -> str:
    """Both legs, one row per (leg, rank): ``leg, rank, id, path, heading, score``."""
    t = check_table(table)
    return f"""WITH {_legs_cte(table)}
SELECT l.leg, l.rank, c.id, c.path, c.heading, l.score
FROM (
    SELECT 'lexical' AS leg, id, rank, score FROM lexical
    UNION ALL SELECT 'vector', id, rank, score FROM vector
) l JOIN {t} c ON c.id = l.id
ORDER BY l.leg, l.rank"""


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


def hybrid_sql(fusion: Fusion, table: str = "groove_chunks") -> str:
    """PostgreSQL's own fusion of the two legs: ``id, path, heading, score`` best first.

    Parameters: ``%(query)s`` (text), ``%(vector)s`` (a pgvector literal), ``%(window)s``
    (candidates per leg) and ``%(limit)s``."""
    t = check_table(table)
    if fusion.family == "convex":
        w_vec, w_lex = fusion.vector_weight, 1.0 - fusion.vector_weight
        v = _normalised("vector", fusion.normalizer, fusion.vector_lower_bound)
        lx = _normalised("lexical", fusion.normalizer, fusion.lexical_lower_bound)
        gain_v, gain_l = f"{w_vec!r}::float8 * ({v})", f"{w_lex!r}::float8 * ({lx})"
    else:
        w_vec, w_lex = (
            (fusion.vector_weight, 1.0 - fusion.vector_weight)
            if fusion.family == "weighted_rrf"
            else (1.0, 1.0)
        )
        k = f"{float(fusion.k)!r}::float8"
        gain_v = f"{w_vec!r}::float8 / ({k} + vector.rank)"
        gain_l = f"{w_lex!r}::float8 / ({k} + lexical.rank)"
    return f"""WITH {_legs_cte(table)}, joined AS (
    SELECT coalesce(vector.id, lexical.id) AS id,
           CASE WHEN vector.id IS NOT NULL THEN {gain_v} END AS gain_v,
           CASE WHEN lexical.id IS NOT NULL THEN {gain_l} END AS gain_l,
           coalesce(vector.rank, 1000000 + lexical.rank) AS seen
    FROM (SELECT *, true AS present FROM vector) vector
    FULL OUTER JOIN (SELECT *, true AS present FROM lexical) lexical USING (id)
)
SELECT j.id, c.path, c.heading,
       (0.0::float8 + coalesce(j.gain_v, 0.0::float8)) + coalesce(j.gain_l, 0.0::float8)
           AS score
FROM joined j JOIN {t} c ON c.id = j.id
ORDER BY score DESC, j.seen
LIMIT %(limit)s"""
