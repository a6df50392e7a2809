"""A fusion written in an engine's own terms: what ``groove tune --retriever`` prints.

Each function turns a ``Fusion`` (one-based ranks, vector leg weight ``w``, lexical
``1 - w``) into the configuration that makes that engine fuse the same way, or says why it
cannot (an engine without that normaliser). The ``LEXICAL`` / ``VECTOR`` placeholders are
the two sub-queries the user already has.

* groove: a ``[search.fusion]`` table.
* Elasticsearch: an ``rrf`` retriever (``rank_constant``, ``rank_window_size``, a
  ``weight`` per retriever, 9.2+) or a ``linear`` retriever (``minmax`` / ``l2_norm``).
* OpenSearch: a search pipeline with ``score-ranker-processor`` (RRF, weights summing to
  1) or ``normalization-processor`` (``min_max`` / ``l2`` / ``z_score``, arithmetic mean).
* Qdrant: a query with ``rrf`` (its k is groove's k + 1: zero-based ranks) or ``dbsf``.
* PostgreSQL: the SQL of groove's own PostgreSQL retriever (retrievers/backends/postgres_sql).
* LanceDB: a hybrid query with ``RRFReranker(K=k)``.

``retriever_legs`` puts the adopted fusion of a retriever's tune in its source, so
written (or why the engine cannot fuse so).
"""

from __future__ import annotations

import json

from groove.fusion import Fusion
from groove.retrievers.backends.postgres_sql import Layout, Table, hybrid_sql
from groove.tuning.result import Analysis, LegCounts, RetrieverLegs

ENGINES = ("groove", "elasticsearch", "opensearch", "qdrant", "postgresql", "lancedb")


class NotExpressible(ValueError):
    """The engine has no way to fuse like this (the message says what it lacks)."""


def recommend(fusion: Fusion, engine: str, target: str | None = None, limit: int = 10) -> str:
    """The snippet for ``engine``; NotExpressible when the engine cannot fuse so. With
    ``target``, the URL of groove's PostgreSQL or LanceDB retriever, the snippet starts
    with that URL's options changed to the fusion, and the SQL names its table."""
    if engine == "postgresql" and target is not None and target.startswith("postgres"):
        return postgresql_for(fusion, target, limit)
    if engine == "lancedb" and target is not None and target.startswith("lancedb://"):
        return f"{url_form(fusion, target)}\n\n{lancedb(fusion)}"
    writer = {
        "groove": groove_toml,
        "elasticsearch": elasticsearch,
        "opensearch": opensearch,
        "qdrant": qdrant,
        "postgresql": postgresql,
        "lancedb": lancedb,
    }[engine]
    return writer(fusion)


def _number(value: float) -> str:
    return f"{value:.1f}" if float(value).is_integer() else repr(value)


def _weights(f: Fusion) -> tuple[float, float]:
    """(lexical, vector) weights of a weighted family, rounded for print."""
    return round(1.0 - f.vector_weight, 6), round(f.vector_weight, 6)


def groove_toml(f: Fusion) -> str:
    lines = ["[search.fusion]", f'family = "{f.family}"']
    if f.family != "convex":
        lines.append(f"rrf_k = {_number(f.k)}")
    if f.family != "rrf":
        lines.append(f"vector_weight = {_number(f.vector_weight)}")
    if f.family == "convex":
        lines.append(f'normalizer = "{f.normalizer}"')
    if f.window is not None:
        lines.append(f"window = {f.window}")
    return "\n".join(lines) + "\n"


def _dump(data: object) -> str:
    return json.dumps(data, indent=2) + "\n"


def elasticsearch(f: Fusion) -> str:
    lexical, vector = {"standard": {"query": "LEXICAL"}}, {"knn": "VECTOR"}
    if f.family in ("rrf", "weighted_rrf"):
        w_lex, w_vec = _weights(f) if f.family == "weighted_rrf" else (1.0, 1.0)
        if not float(f.k).is_integer():
            raise NotExpressible("Elasticsearch's rank_constant is a whole number")
        body: dict[str, object] = {
            "rank_constant": int(f.k),
            "retrievers": [
                {"retriever": lexical, "weight": w_lex},
                {"retriever": vector, "weight": w_vec},
            ],
        }
        if f.window is not None:
            body["rank_window_size"] = f.window
        return _dump({"retriever": {"rrf": body}})
    normalizer = {"minmax": "minmax", "l2": "l2_norm", "none": "none"}.get(f.normalizer)
    if normalizer is None:
        raise NotExpressible(
            f"Elasticsearch's linear retriever has no {f.normalizer} normalizer "
            "(it has none, minmax and l2_norm)"
        )
    w_lex, w_vec = _weights(f)
    linear: dict[str, object] = {
        "retrievers": [
            {"retriever": lexical, "weight": w_lex, "normalizer": normalizer},
            {"retriever": vector, "weight": w_vec, "normalizer": normalizer},
        ]
    }
    if f.window is not None:
        linear["rank_window_size"] = f.window
    return _dump({"retriever": {"linear": linear}})


def opensearch(f: Fusion) -> str:
    """A search pipeline; the hybrid query lists the lexical clause first, then the vector."""
    w_lex, w_vec = _weights(f)
    if f.family in ("rrf", "weighted_rrf"):
        if not float(f.k).is_integer():
            raise NotExpressible("OpenSearch's rank_constant is a whole number")
        combination: dict[str, object] = {"technique": "rrf", "rank_constant": int(f.k)}
        if f.family == "weighted_rrf":
            combination["parameters"] = {"weights": [w_lex, w_vec]}
        pipeline = {
            "phase_results_processors": [{"score-ranker-processor": {"combination": combination}}]
        }
    else:
        technique = {"minmax": "min_max", "l2": "l2", "zscore": "z_score"}.get(f.normalizer)
        if technique is None:
            raise NotExpressible(
                f"OpenSearch's normalization-processor has no {f.normalizer} technique "
                "(it has min_max, l2 and z_score)"
            )
        pipeline = {
            "phase_results_processors": [
                {
                    "normalization-processor": {
                        "normalization": {"technique": technique},
                        "combination": {
                            "technique": "arithmetic_mean",
                            "parameters": {"weights": [w_lex, w_vec]},
                        },
                    }
                }
            ]
        }
    note = (
        f"# hybrid query: pagination_depth {f.window} (candidates per clause)\n"
        if f.window is not None
        else ""
    )
    return note + _dump(pipeline)


def qdrant(f: Fusion) -> str:
    limit = f.window if f.window is not None else 100
    prefetch = [{"query": "LEXICAL", "limit": limit}, {"query": "VECTOR", "limit": limit}]
    if f.family == "rrf":
        # zero-based ranks: groove's 1 / (k + rank) is Qdrant's 1 / ((k + 1) + position)
        return _dump({"prefetch": prefetch, "query": {"rrf": {"k": int(f.k) + 1}}})
    if f.family == "convex" and f.normalizer == "dbsf" and f.vector_weight == 0.5:
        return _dump({"prefetch": prefetch, "query": {"fusion": "dbsf"}})
    raise NotExpressible(
        "Qdrant's rrf weights stretch ranks (1 / (k + (r + 1) / w - 1)) rather than scale "
        "the gain, and its dbsf takes no weights: this fusion has no Qdrant spelling"
    )


def postgresql(f: Fusion) -> str:
    return hybrid_sql(f, Layout(Table("groove_chunks")), digits=PRINT_DIGITS) + "\n"


#: Decimal places of the numbers a recommendation prints (JSON keeps the exact fusion).
PRINT_DIGITS = 6


def _shown(value: float) -> str:
    """A number as a person would write it: 0.1, not 0.09999999999999998; 60, not 60.0."""
    rounded = round(float(value), PRINT_DIGITS)
    return str(int(rounded)) if rounded.is_integer() else repr(rounded)


def fusion_options(f: Fusion) -> list[tuple[str, str]]:
    """The URL options of groove's engine retrievers that make them fuse as ``f``."""
    out: list[tuple[str, str]] = [("family", str(f.family))]
    if f.family != "convex":
        out.append(("k", _shown(f.k)))
    if f.window is not None:
        out.append(("window", str(f.window)))
    if f.family != "rrf":
        out.append(("vector_weight", _shown(f.vector_weight)))
    if f.family == "convex":
        out.append(("normalizer", str(f.normalizer)))
    return out


def url_form(f: Fusion, target: str) -> str:
    """``target`` with its fusion options replaced by ``f``'s (its password left out)."""
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    parts = urlsplit(target)
    fusion_keys = {"family", "k", "window", "vector_weight", "normalizer"}
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
            if k not in fusion_keys]  # fmt: skip
    query = "&".join(f"{k}={v}" for k, v in [*kept, *fusion_options(f)])
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}@{host}"
    return "URL: " + urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def postgresql_for(f: Fusion, target: str, limit: int) -> str:
    """The URL form, then the SQL for psql over the URL's table: the fusion, the window
    and the limit as literals, the query and its embedding as psql variables."""
    from groove.retrievers.backends.postgres_url import parse_target

    layout = parse_target(target).layout
    window = f.window if f.window is not None else 100
    sql = hybrid_sql(
        f, layout, query=":'query'", vector=":'vector'", window=str(window), limit=str(limit),
        digits=PRINT_DIGITS,
    )  # fmt: skip
    return (
        f"{url_form(f, target)}\n\n"
        "-- psql: \\set query 'the question'  and  \\set vector '[...]' (its embedding)\n"
        f"{sql};\n"
    )


def lancedb(f: Fusion) -> str:
    if f.family != "rrf":
        raise NotExpressible(
            "LanceDB's LinearCombinationReranker combines its own normalised distances "
            "(deprecated upstream); groove reproduces only its RRFReranker"
        )
    k = int(f.k) if float(f.k).is_integer() else f.k
    limit = f.window if f.window is not None else 100
    return (
        "from lancedb.rerankers import RRFReranker\n\n"
        f'table.search(query_type="hybrid").vector(query_vector).text(query_text)'
        f".limit({limit}).rerank(RRFReranker(K={k}))\n"
    )


def retriever_legs(
    name: str,
    engine: str,
    counts: tuple[LegCounts, ...],
    analysis: Analysis | None,
    target: str | None = None,
    limit: int = 10,
) -> RetrieverLegs:
    """The source of a retriever's tune, with the adopted fusion in ``engine``'s terms (or
    why the engine cannot fuse so); ``target``: the engine's URL (recommend)."""
    snippet = why = None
    adopted = analysis.verdict.condition if analysis is not None else None
    if adopted is not None:
        try:
            snippet = recommend(adopted.fusion, engine, target, limit)
        except NotExpressible as exc:
            why = str(exc)
    return RetrieverLegs(name, engine, counts, snippet, why)
