"""TREC / BEIR interop: ``--export-run``, ``groove golden import`` and ``export-qrels``.

The ranx check is the point of the exports: a run groove scored, written with
``--export-run``, and the golden set written with ``export-qrels``, read back by ranx from
those files, must give groove's metrics, per query and on average.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from groove.cli import cli


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, list(args))


def test_golden_import_reads_beir_and_trec_qrels(tmp_path: Path) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(
        '{"_id": "q1", "text": "how do rollbacks work"}\n'
        '{"_id": "q2", "text": "canary share"}\n'
        '{"_id": "q3", "text": "never judged"}\n'
    )
    beir = tmp_path / "test.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\trollback\t2\nq1\tcanary\t0\nq2\tcanary\t1\n")
    out = tmp_path / "golden.yml"
    result = invoke("golden", "import", "--qrels", str(beir), "--queries", str(queries),
                    "--path", "ops/{docid}.md", "--out", str(out))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "groove golden import: 2 queries with relevant documents\n"
    assert yaml.safe_load(out.read_text())["queries"] == [
        {"id": "q1", "query": "how do rollbacks work", "expected": [{"path": "ops/rollback.md"}]},
        {"id": "q2", "query": "canary share", "expected": [{"path": "ops/canary.md"}]},
    ]
    trec = tmp_path / "qrels.trec"
    trec.write_text("q1 0 ops/rollback.md#Database%20migrations 1\nq2 0 ops/canary.md 1\n")
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("q1\thow do rollbacks work\nq2\tcanary share\n")
    again = invoke("golden", "import", "--qrels", str(trec), "--queries", str(tsv))
    assert again.exit_code == 0, again.stderr
    assert yaml.safe_load(again.stdout)["queries"][0]["expected"] == [
        {"path": "ops/rollback.md", "heading": "Database migrations"}
    ]
    unknown = tmp_path / "unknown.trec"
    unknown.write_text("q9 0 x 1\n")
    missing = invoke("golden", "import", "--qrels", str(unknown), "--queries", str(tsv))
    assert missing.exit_code == 2
    assert "query 'q9' has judgments but no text in the queries file" in missing.stderr


def test_export_qrels_then_import_gives_back_the_golden_set(
    tmp_path: Path, golden_en: Path
) -> None:
    qrels, queries = tmp_path / "qrels.trec", tmp_path / "queries.tsv"
    result = invoke("golden", "export-qrels", "--golden", str(golden_en), "--out", str(qrels),
                    "--queries-out", str(queries))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "rollback-schema 0 ops/rollback.md#Database%20migrations 1\n" in qrels.read_text()
    back = invoke("golden", "import", "--qrels", str(qrels), "--queries", str(queries))
    assert back.exit_code == 0, back.stderr
    original = yaml.safe_load(golden_en.read_text())["queries"]
    imported = yaml.safe_load(back.stdout)["queries"]
    assert [(q["id"], q["expected"]) for q in imported] == [
        (q["id"], q["expected"]) for q in original
    ]
    assert [q["query"] for q in imported] == [" ".join(q["query"].split()) for q in original]


def random_golden_and_run(tmp_path: Path, seed: int, n: int) -> tuple[Path, Path]:
    """Path-only answers and unique paths per ranking (binary relevance, as ranx scores it);
    some paths hold spaces and '#', which the TREC ids must escape."""
    rng = random.Random(seed)
    queries, lines = [], []
    for i in range(n):
        pool = [f"docs/doc {j}{'#x' if j % 7 == 0 else ''}.md" for j in range(rng.randint(2, 40))]
        expected = rng.sample(pool, rng.randint(1, min(6, len(pool))))
        ranked = rng.sample(pool, rng.randint(1, min(20, len(pool))))
        queries.append({"id": f"q{i}", "query": f"query {i}",
                        "expected": [{"path": p} for p in expected]})  # fmt: skip
        hits = [{"path": p, "heading": "H", "score": 100.0 - j} for j, p in enumerate(ranked)]
        lines.append(json.dumps({"id": f"q{i}", "hits": hits}))
    golden = tmp_path / "golden.yml"
    golden.write_text(yaml.safe_dump({"queries": queries}, sort_keys=False))
    run = tmp_path / "run.jsonl"
    run.write_text("\n".join(lines) + "\n")
    return golden, run


@pytest.mark.slow  # ranx compiles its numba kernels on a cold cache
@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
def test_ranx_scores_an_exported_run_exactly_as_groove(tmp_path: Path) -> None:
    ranx = pytest.importorskip("ranx")
    golden, run = random_golden_and_run(tmp_path, seed=11, n=300)
    exported, qrels = tmp_path / "run.trec", tmp_path / "qrels.trec"
    result = invoke("eval", "--retriever", f"run:{run}", "--golden", str(golden), "--k",
                    "1,5,10", "--no-history", "--format", "json", "--export-run",
                    str(exported))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert (
        invoke("golden", "export-qrels", "--golden", str(golden), "--out", str(qrels)).exit_code
        == 0
    )
    ours = json.loads(result.stdout)
    ranx_run = ranx.Run.from_file(str(exported), kind="trec")
    names = ["recall@1", "recall@5", "recall@10", "ndcg@1", "ndcg@5", "ndcg@10", "mrr"]
    means = ranx.evaluate(ranx.Qrels.from_file(str(qrels), kind="trec"), ranx_run, names)
    agg = ours["aggregate"]
    for k in ("1", "5", "10"):
        assert agg["recall_at_k"][k] == pytest.approx(means[f"recall@{k}"], abs=1e-12)
        assert agg["ndcg_at_k"][k] == pytest.approx(means[f"ndcg@{k}"], abs=1e-12)
    assert agg["mrr"] == pytest.approx(means["mrr"], abs=1e-12)
    for q in ours["per_query"]:
        m = q["metrics"]
        assert m["reciprocal_rank"] == pytest.approx(ranx_run.scores["mrr"][q["id"]], abs=1e-12)
        assert m["ndcg_at_k"]["10"] == pytest.approx(ranx_run.scores["ndcg@10"][q["id"]], abs=1e-12)
    assert 0.1 < agg["mrr"] < 0.9  # a run that is neither empty nor perfect
