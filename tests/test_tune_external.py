"""``groove tune --retriever``: the family sweep over an engine's legs.

The legs here are made up (seeded) so that the lexical leg is good and the vector leg is
noise: a sweep can then find a better fusion than the baseline, and the gates can adopt
it. The central test: every cell of the swept table equals the metrics of a retriever that
fuses the same legs itself with that condition (tests/helpers/fusing_adapter.py, the
engines' formulas written out by hand), scored by groove eval's own rule.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from groove.cli import cli
from groove.evaluation.golden import load_golden
from groove.evaluation.metrics import query_metrics
from groove.evaluation.retrievers.base import RetrieverQuery
from groove.evaluation.retrievers.spec import open_retriever, parse_spec
from groove.fusion import Fusion
from groove.tuning.external import run_external, sweep_legs
from groove.tuning.families import family_grid, select, select_many
from groove.tuning.recommend import NotExpressible, recommend

HELPERS = Path(__file__).parent / "helpers"
N_QUERIES = 40
N_DOCS = 80


def _legs_for(rng: random.Random, qid: int) -> dict[str, list[dict[str, Any]]]:
    target = f"docs/d{qid}.md"
    others = [f"docs/d{i}.md" for i in range(N_DOCS) if i != qid]
    lexical_paths = rng.sample(others, 25)
    lexical_paths.insert(rng.randrange(0, 3), target)  # the lexical leg finds it near the top
    vector_paths = rng.sample(others, 30)
    if rng.random() < 0.5:
        vector_paths.insert(rng.randrange(5, 30), target)  # the vector leg, deep if at all
    lexical = [
        {"path": p, "heading": None, "score": round(30.0 - i + rng.random(), 3), "id": p}
        for i, p in enumerate(lexical_paths)
    ]
    vector = [
        {"path": p, "score": round(0.9 - 0.01 * i - 0.005 * rng.random(), 4), "id": p}
        for i, p in enumerate(vector_paths)
    ]
    return {"lexical": lexical, "vector": vector}


@pytest.fixture
def made_up(tmp_path: Path) -> tuple[Path, Path]:
    """(golden file, legs JSONL) for N_QUERIES queries."""
    rng = random.Random(7)
    golden = {
        "queries": [
            {"id": f"q{i}", "query": f"question {i}", "expected": [{"path": f"docs/d{i}.md"}]}
            for i in range(N_QUERIES)
        ]
    }
    golden_path = tmp_path / "golden.yml"
    golden_path.write_text(yaml.safe_dump(golden))
    legs_path = tmp_path / "legs.jsonl"
    lines = [json.dumps({"id": f"q{i}", "legs": _legs_for(rng, i)}) for i in range(N_QUERIES)]
    legs_path.write_text("\n".join(lines) + "\n")
    return golden_path, legs_path


def _adapter(legs: Path, f: Fusion) -> str:
    window = f.window if f.window is not None else 1000
    return (
        f"command:{sys.executable} {HELPERS / 'fusing_adapter.py'} {legs} {f.family} {f.k!r} "
        f"{window} {f.vector_weight!r} {f.normalizer}"
    )


def test_the_swept_table_equals_a_per_condition_refusion(made_up: tuple[Path, Path]) -> None:
    golden_path, legs_path = made_up
    queries = load_golden(golden_path).queries
    baseline = Fusion("rrf", 60.0, window=50)
    result = run_external(
        parse_spec(_adapter(legs_path, baseline)), golden_path, family="rrf", depth=50,
        calibrate=False,
    )  # fmt: skip
    legs = _legs(legs_path, queries)
    ks = (1, 5, 10)
    for family in ("rrf", "weighted_rrf", "convex"):
        grid = family_grid(family, 50)  # type: ignore[arg-type]
        table = sweep_legs(legs, queries, grid, 10, ks) if family != "rrf" else result.table
        assert table is not None
        columns = [
            j
            for j, c in enumerate(grid.conditions)
            if c.family != "convex" or c.normalizer in ("minmax", "l2")
        ]
        for j in columns:
            retriever = open_retriever(parse_spec(_adapter(legs_path, grid.conditions[j])))
            try:
                tops = retriever.retrieve([RetrieverQuery(q.id, q.query, 10) for q in queries])
            finally:
                retriever.close()
            for i, (q, hits) in enumerate(zip(queries, tops, strict=True)):
                m = query_metrics(q.expected, hits, ks)
                assert table.ndcg[5][i, j] == m.ndcg_at_k[5], (family, j, q.id)
                assert table.recall[10][i, j] == m.recall_at_k[10]
                assert table.rr[i, j] == m.reciprocal_rank


def _legs(path: Path, queries: Any) -> list[Any]:
    from groove.evaluation.retrievers.legs import parse_legs

    stored = {json.loads(line)["id"]: json.loads(line) for line in path.read_text().splitlines()}
    return [parse_legs(stored[q.id], q.id) for q in queries]


def test_a_clear_winner_is_adopted_and_written_in_the_engines_terms(
    made_up: tuple[Path, Path],
) -> None:
    golden_path, legs_path = made_up
    spec = _adapter(legs_path, Fusion("rrf", 60.0, window=50))
    out = CliRunner().invoke(
        cli,
        ["tune", "--golden", str(golden_path), "--retriever", spec, "--family", "weighted_rrf",
         "--engine", "elasticsearch", "--window", "50", "--format", "json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["family"] == "weighted_rrf" and doc["effective_query_count"] == N_QUERIES
    verdict = doc["verdict"]
    assert verdict["decision"] == "adopt", doc["gates"]
    # the lexical leg is the good one: the adopted weight leans away from the vector leg
    assert verdict["condition"]["vector_weight"] < 0.5
    body = json.loads(verdict["snippet"])
    weights = [r["weight"] for r in body["retriever"]["rrf"]["retrievers"]]
    assert weights[0] > weights[1] and body["retriever"]["rrf"]["rank_window_size"] == 50
    assert [g["passed"] for g in doc["gates"]] == [True] * 5


def test_a_retriever_without_legs_is_refused_with_exit_2(tmp_path: Path) -> None:
    golden = tmp_path / "golden.yml"
    golden.write_text(
        yaml.safe_dump({"queries": [{"id": "a", "query": "x", "expected": [{"path": "a.md"}]}]})
    )
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"id": "a", "hits": [{"path": "a.md"}]}) + "\n")
    out = CliRunner().invoke(cli, ["tune", "--golden", str(golden), "--retriever", f"run:{run}"])
    assert out.exit_code == 2
    assert "without `legs`" in out.output
    assert not (tmp_path / ".groove-eval-history.json").exists()


def test_flat_landscape_keeps_the_baseline_and_selection_rule() -> None:
    import numpy as np

    means = np.array([[0.5, 0.5, 0.4], [0.5, 0.6, 0.6], [0.5, 0.5 + 5e-10, 0.7]])
    assert select_many(means).tolist() == [0, 1, 2]
    assert select(np.array([0.3, 0.3, 0.3])) == 0


def test_recommendations_in_each_engines_terms() -> None:
    rrf = Fusion("rrf", 60.0, window=100)
    assert json.loads(recommend(rrf, "qdrant"))["query"] == {"rrf": {"k": 61}}
    es = json.loads(recommend(Fusion("weighted_rrf", 20.0, 50, 0.3), "elasticsearch"))
    assert es["retriever"]["rrf"]["rank_constant"] == 20
    assert [r["weight"] for r in es["retriever"]["rrf"]["retrievers"]] == [0.7, 0.3]
    linear = json.loads(recommend(Fusion("convex", window=100, vector_weight=0.6), "elasticsearch"))
    assert linear["retriever"]["linear"]["retrievers"][1]["normalizer"] == "minmax"
    pipeline = recommend(Fusion("convex", vector_weight=0.6, normalizer="zscore"), "opensearch")
    processor = json.loads(pipeline)["phase_results_processors"][0]["normalization-processor"]
    assert processor["normalization"] == {"technique": "z_score"}
    assert processor["combination"]["parameters"]["weights"] == [0.4, 0.6]
    score_ranker = json.loads(recommend(Fusion("weighted_rrf", 60.0, None, 0.25), "opensearch"))
    ranker = score_ranker["phase_results_processors"][0]["score-ranker-processor"]
    assert ranker["combination"]["parameters"]["weights"] == [0.75, 0.25]
    assert "RRFReranker(K=10)" in recommend(Fusion("rrf", 10.0, 20), "lancedb")
    assert "1.0::float8 / (10.0::float8 + vector.rank)" in recommend(
        Fusion("rrf", 10.0, 20), "postgresql"
    )
    assert 'family = "convex"' in recommend(Fusion("convex", vector_weight=0.3), "groove")
    for engine, fusion in (
        ("elasticsearch", Fusion("convex", normalizer="dbsf")),
        ("qdrant", Fusion("weighted_rrf", vector_weight=0.3)),
        ("lancedb", Fusion("convex")),
    ):
        with pytest.raises(NotExpressible):
            recommend(fusion, engine)
