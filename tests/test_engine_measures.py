"""Engines measured in their own terms, live (PostgreSQL + pgvector started here, LanceDB):
a table groove did not write (other column names, a schema), libpq options, no password
in any output, latency in every run, and --ann-recall against a hand computation."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from helpers.pg import live_server, run_sql

from groove.cli import cli
from groove.engine.embed import DEFAULT_MODEL
from groove.golden.queries import load_golden
from groove.retrievers.backends.postgres import PostgresRetriever, vector_literal
from groove.retrievers.base import RetrieverQuery

pytest.importorskip("pgserver", reason="the groove[postgres] extra")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with live_server(tmp_path_factory.mktemp("pg")) as url:
        yield url


@pytest.fixture
def exported(server: str, indexed_kb: Callable[[str], Path]) -> tuple[Path, str]:
    kb = indexed_kb("kb_en")
    out = CliRunner().invoke(cli, ["export", "--kb-path", str(kb), "--to", server])
    assert out.exit_code == 0, out.output
    return kb, server


def _eval(golden: Path, url: str, *extra: str) -> dict[str, object]:
    out = CliRunner().invoke(
        cli, ["eval", "--golden", str(golden), "--format", "json", "--no-history",
              "--retriever", url, *extra],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def test_a_table_of_other_column_names_in_a_schema_is_measured(
    exported: tuple[Path, str], golden_en: Path, real_embedder: object
) -> None:
    _, url = exported
    run_sql(
        url,
        "DROP SCHEMA IF EXISTS search CASCADE",
        "CREATE SCHEMA search",
        "CREATE TABLE search.chunks (chunk_id bigint PRIMARY KEY, source text, title text, "
        "body text, vec vector(384))",
        "INSERT INTO search.chunks SELECT id, path, heading, content, embedding FROM groove_chunks",
    )
    mapped = (
        f"{url}&table=search.chunks&id=chunk_id&path=source&heading=title&text=body"
        f"&embedding=vec&model={DEFAULT_MODEL}"
    )
    doc = _eval(golden_en, mapped)
    assert doc["aggregate"]["recall_at_k"]["10"] >= 0.8  # type: ignore[index]
    queries = [RetrieverQuery(q.id, q.query, 10) for q in load_golden(golden_en).queries]
    theirs = PostgresRetriever(mapped, "mapped", embedder=real_embedder)  # type: ignore[arg-type]
    ours = PostgresRetriever(url, "ours", embedder=real_embedder)  # type: ignore[arg-type]
    theirs.retrieve(queries)
    ours.retrieve(queries)
    assert theirs.copy is None and ours.copy is not None  # no groove meta: no provenance
    for q in queries:  # the same embeddings: the same vector leg
        assert theirs.legs[q.id].vector == ours.legs[q.id].vector
        assert theirs.legs[q.id].lexical  # ts_rank over to_tsvector(body)
    # the schema reached through libpq's options instead of the table name, sslmode given
    via_options = (
        f"{url}&options=-csearch_path%3Dsearch%2Cpublic&sslmode=disable&table=chunks&id=chunk_id"
        f"&path=source&heading=title&text=body&embedding=vec&model={DEFAULT_MODEL}"
    )
    assert _eval(golden_en, via_options)["aggregate"] == doc["aggregate"]


def test_no_password_reaches_any_output(exported: tuple[Path, str], golden_en: Path) -> None:
    _, url = exported
    secret = url.replace("postgres@", "postgres:s3cr3t-pw@", 1)
    ok = CliRunner().invoke(
        cli, ["eval", "--golden", str(golden_en), "--format", "json", "--no-history",
              "--retriever", secret],
    )  # fmt: skip
    assert ok.exit_code == 0, ok.output
    bad = CliRunner().invoke(
        cli, ["eval", "--golden", str(golden_en), "--retriever", f"{secret}&table=missing"]
    )
    assert bad.exit_code == 2
    no_host = "postgresql://postgres:s3cr3t-pw@/postgres"
    refused = CliRunner().invoke(cli, ["eval", "--golden", str(golden_en), "--retriever", no_host])
    assert "postgresql://postgres:***@/postgres" in refused.output
    assert refused.exit_code == 2
    for out in (ok, bad, refused):
        assert "s3cr3t" not in out.output, out.output


def test_every_run_has_latency_and_the_text_line_only_where_asked(
    exported: tuple[Path, str], golden_en: Path
) -> None:
    kb, url = exported
    doc = _eval(golden_en, url)
    latency = doc["latency"]
    assert latency["queries"] == len(doc["per_query"])  # type: ignore[index, arg-type]
    assert set(latency["legs"]) == {"lexical", "vector", "fusion"}  # type: ignore[index]
    for spread in (latency, *latency["legs"].values()):  # type: ignore[index, union-attr]
        assert 0 < spread["p50_ms"] <= spread["p95_ms"] <= spread["max_ms"]
    assert all(q["latency_ms"] > 0 for q in doc["per_query"])  # type: ignore[union-attr, index]
    text = CliRunner().invoke(
        cli, ["eval", "--golden", str(golden_en), "--no-history", "--retriever", url]
    )
    assert text.exit_code == 0 and "  latency: p50 " in text.stdout, text.output
    args = ["eval", "--kb-path", str(kb), "--golden", str(golden_en), "--no-history"]
    own = CliRunner().invoke(cli, args)
    assert own.exit_code == 0 and "latency" not in own.stdout  # the seed's report as it was
    asked = CliRunner().invoke(cli, [*args, "--latency"])
    assert asked.exit_code == 0 and "\n  latency: p50 " in asked.stdout
    assert _body(asked.stdout) == _body(own.stdout)  # one line more, nothing else


def _body(text: str) -> list[str]:
    """The report without its first line (the timestamp) and the latency line."""
    return [line for line in text.splitlines()[1:] if not line.startswith("  latency: p50 ")]


def test_ann_recall_equals_a_hand_computation(
    server: str, golden_en: Path, real_embedder: object
) -> None:
    """5,000 random unit vectors under HNSW with ef_search 40: the index misses some of the
    exact top 10 and returns only 40 of the window's 100, which exact search does not."""
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(5000, 384)).astype(np.float32)
    rows = ", ".join(f"({i}, 'd{i}.md', '{vector_literal(v)}')" for i, v in enumerate(matrix))
    run_sql(
        server,
        "DROP TABLE IF EXISTS random_vectors",
        "CREATE TABLE random_vectors (id bigint PRIMARY KEY, path text, body text, "
        "embedding vector(384))",
        f"INSERT INTO random_vectors (id, path, embedding) VALUES {rows}",
        "UPDATE random_vectors SET body = 'document ' || id",
        "CREATE INDEX ON random_vectors USING hnsw (embedding vector_cosine_ops)",
        "ANALYZE random_vectors",
    )
    url = (
        f"{server}&table=random_vectors&heading=&text=body&ef_search=40&window=100"
        f"&model={DEFAULT_MODEL}"
    )
    doc = _eval(golden_en, url, "--ann-recall")
    queries = load_golden(golden_en).queries
    vectors = real_embedder.embed([q.query for q in queries])  # type: ignore[attr-defined]
    hand: dict[int, list[float]] = {10: [], 100: []}
    for v in vectors:
        sql = (
            f"SELECT id FROM random_vectors ORDER BY embedding <=> '{vector_literal(v)}'::vector,"
            " id LIMIT 100"
        )
        approximate = [r[0] for r in run_sql(server, "SET hnsw.ef_search = 40", sql)]
        exact = [r[0] for r in run_sql(server, "SET enable_indexscan = off", sql)]
        assert len(exact) == 100
        for k in hand:
            hand[k].append(len(set(approximate[:k]) & set(exact[:k])) / k)
    reported = doc["ann_recall"]
    assert reported["queries"] == len(queries)  # type: ignore[index]
    for k, values in hand.items():
        assert reported["vector"][f"recall@{k}"] == pytest.approx(sum(values) / len(values))  # type: ignore[index]
    assert reported["vector"]["recall@100"] <= 0.4  # type: ignore[index]
    text = CliRunner().invoke(
        cli, ["eval", "--golden", str(golden_en), "--no-history", "--retriever", url,
              "--ann-recall"],
    )  # fmt: skip
    assert "ANN vs exact search: vector leg recall@10 " in text.stdout


def test_tunes_baseline_is_the_urls_fusion(exported: tuple[Path, str], golden_en: Path) -> None:
    kb, url = exported
    out = CliRunner().invoke(
        cli, ["tune", "--kb-path", str(kb), "--golden", str(golden_en), "--retriever",
              f"{url}&k=5&window=20", "--family", "rrf", "--window", "50", "--format", "json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["grid"]["baseline"] == 0
    first = doc["grid"]["conditions"][0]
    assert (first["family"], first["k"], first["window"]) == ("rrf", 5.0, 20)
    text = CliRunner().invoke(
        cli, ["tune", "--kb-path", str(kb), "--golden", str(golden_en), "--retriever",
              f"{url}&k=5&window=20", "--family", "rrf", "--window", "50"],
    )  # fmt: skip
    assert "rrf k=60 window=50" not in text.stdout.split("\n\n")[0]
    assert "k=5 window=20" in text.stdout, text.stdout


def test_the_printed_sql_run_in_psql_gives_the_hits_of_the_url_form(
    exported: tuple[Path, str], golden_en: Path, real_embedder: object
) -> None:
    import subprocess
    from pathlib import Path as P

    import pgserver

    from groove.fusion import Fusion
    from groove.tuning.recommend import recommend

    _, url = exported
    psql = P(pgserver.__file__).parent / "pginstall" / "bin" / "psql"
    data = url.split("host=")[1]
    for fusion in (
        Fusion("weighted_rrf", 10.0, 100, 0.9),
        Fusion("convex", window=50, vector_weight=0.7, normalizer="minmax"),
        Fusion("rrf", 5.0, window=20),
    ):
        text = recommend(fusion, "postgresql", url, limit=10)
        first, _, sql = text.partition("\n\n")
        assert first.startswith("URL: postgresql://") and "%(" not in sql
        assert "FROM groove_chunks c" in sql and "0.09999999999999998" not in sql
        form = first.removeprefix("URL: ")
        retriever = PostgresRetriever(form, "form", embedder=real_embedder)  # type: ignore[arg-type]
        queries = load_golden(golden_en).queries[:5]
        hits = retriever.retrieve([RetrieverQuery(q.id, q.query, 10) for q in queries])
        vectors = real_embedder.embed([q.query for q in queries])  # type: ignore[attr-defined]
        for q, v, engine in zip(queries, vectors, hits, strict=True):
            done = subprocess.run(
                [str(psql), "-X", "-q", "-A", "-t", "-F", "\t", "-h", data, "-U", "postgres",
                 "-d", "postgres", "-v", f"query={q.query}", "-v", f"vector={vector_literal(v)}",
                 "-v", "ON_ERROR_STOP=1"],
                input=sql, capture_output=True, text=True, check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            rows = [line.split("\t") for line in done.stdout.splitlines() if line]
            assert [(r[1], r[2] or None) for r in rows] == [(h.path, h.heading) for h in engine], (
                fusion.label,
                q.id,
            )
