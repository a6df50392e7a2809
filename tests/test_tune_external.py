"""``groove tune --retriever``: the family sweep over an engine's legs.

The legs here are made up (seeded) so that the lexical leg is good and the vector leg is
noise: a sweep can then find a better fusion than the baseline, and the gates can adopt
it. The central test: every cell of the swept table equals the metrics of a retriever that
fuses the same legs itself with that condition (tests/helpers/fusing_adapter.py, the
engines' formulas written out by hand), scored by groove eval's own rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from helpers.made_up_legs import N_QUERIES, adapter, write_made_up

from groove.cli import cli
from groove.fusion import Fusion
from groove.golden.queries import load_golden
from groove.metrics import query_metrics
from groove.notes import Note
from groove.progress import Progress
from groove.retrievers.base import RetrieverQuery
from groove.retrievers.opener import open_retriever
from groove.retrievers.spec import parse_spec
from groove.tuning.families import family_grid, select, select_many
from groove.tuning.recommend import NotExpressible, recommend
from groove.tuning.retriever import run, sweep_legs


@pytest.fixture
def made_up(tmp_path: Path) -> tuple[Path, Path]:
    """(golden file, legs JSONL) for N_QUERIES queries (tests/helpers/made_up_legs.py)."""
    return write_made_up(tmp_path)


_adapter = adapter


def test_the_swept_table_equals_a_per_condition_refusion(made_up: tuple[Path, Path]) -> None:
    golden_path, legs_path = made_up
    queries = load_golden(golden_path).queries
    baseline = Fusion("rrf", 60.0, window=50)
    result = run(
        parse_spec(_adapter(legs_path, baseline)), golden_path, family="rrf", depth=50,
    )  # fmt: skip
    assert result.analysis is not None
    legs = _legs(legs_path, queries)
    ks = (1, 5, 10)
    for family in ("rrf", "weighted_rrf", "convex"):
        grid = family_grid(family, 50)  # type: ignore[arg-type]
        table = (
            sweep_legs(legs, queries, grid, 10, ks) if family != "rrf" else result.analysis.table
        )
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
    from groove.retrievers.legs import parse_legs

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
    body = json.loads(verdict["recommendation"])
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


# ---------------------------------------------------------------- the document of groove tune

# What tune --retriever adds to the keys of groove's own tune (docs/tune.md), per object.
ADDED = {
    "": {"retriever", "engine", "family", "window"},
    "grid": {"conditions", "baseline", "condition_means"},
    "diagnostics": {"vector_candidates"},
    "verdict": {"engine", "recommendation", "not_expressible"},
}


def _builtin_document() -> dict[str, Any]:
    """groove tune's own --format json document, of a small adopting table (no index)."""
    import numpy as np

    from groove.golden.queries import GoldenQuery
    from groove.metrics import Expected
    from groove.tuning.analysis import analyse
    from groove.tuning.document import to_dict
    from groove.tuning.grid import N_CONDITIONS, Condition
    from groove.tuning.result import EngineLegs, QueryDiagnostics, TuneResult
    from groove.tuning.table import MetricTable

    n, winner = 12, Condition(3, 1, 1, 4).index
    primary = np.full((n, N_CONDITIONS), 0.2)
    primary[:, winner] = [0.5 + 0.01 * (i % 3) for i in range(n)]
    table = MetricTable((1, 5, 10), {k: primary for k in (1, 5, 10)},
                        {k: primary for k in (1, 5, 10)}, primary)  # fmt: skip
    result = TuneResult(
        Path("/kb/g.yml"), 10, (1, 5, 10),
        tuple(GoldenQuery(f"q{i}", "x", (Expected("a.md"),), (), None) for i in range(n)),
        EngineLegs("m", 50, 3, False, tuple(QueryDiagnostics(f"q{i}", 7, 9, 2, False)
                                            for i in range(n))),
        analyse(table, range(n)), kb_path=Path("/kb"),
    )  # fmt: skip
    document = to_dict(result)
    assert document["verdict"]["decision"] == "adopt"
    return document


def _keys(document: dict[str, Any]) -> dict[str, set[str]]:
    return {
        "": set(document),
        "grid": set(document["grid"]),
        "loo": set(document["loo"]),
        "secondary_metrics": set(document["secondary_metrics"]),
        "per_query_impact": set(document["per_query_impact"]),
        "diagnostics": set(document["diagnostics"][0]),
        "verdict": set(document["verdict"]),
    }


def test_json_is_groove_tunes_document_plus_the_documented_engine_keys(
    made_up: tuple[Path, Path],
) -> None:
    golden_path, legs_path = made_up
    out = CliRunner().invoke(
        cli,
        ["tune", "--golden", str(golden_path), "--retriever",
         _adapter(legs_path, Fusion("rrf", 60.0, window=50)), "--family", "weighted_rrf",
         "--window", "50", "--format", "json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    engine_doc = json.loads(out.stdout)
    ours, theirs = _keys(engine_doc), _keys(_builtin_document())
    for part, keys in theirs.items():
        assert ours[part] == keys | ADDED.get(part, set()), part
    assert engine_doc["verdict"]["decision"] == "adopt"
    # the conditions are fusions in groove's terms; what an engine has not is null
    assert engine_doc["loo"]["refit"]["family"] == "weighted_rrf"
    assert engine_doc["model"] is None and engine_doc["candidate_pool"] == 50
    assert len(engine_doc["grid"]["condition_means"]) == len(engine_doc["grid"]["conditions"])
    assert 'family = "weighted_rrf"' in engine_doc["verdict"]["toml_snippet"]
    first = engine_doc["diagnostics"][0]
    assert first["fts_candidates"] == 26 and first["vector_candidates"] in (30, 31)


def test_saved_form_is_the_tune_explorers_plus_the_engine_keys(
    made_up: tuple[Path, Path],
) -> None:
    from groove.config import Config
    from groove.tuning.export import to_document as engine_document
    from groove.tuning.retriever import resolve_retriever, tune_retriever

    golden_path, legs_path = made_up
    spec = parse_spec(_adapter(legs_path, Fusion("rrf", 60.0, window=50)))
    settings = resolve_retriever(Config(), spec, golden=golden_path, family="convex", window=50)
    result = tune_retriever(settings)
    assert result.ran_grid
    doc = engine_document(result)
    builtin = _builtin_document()
    expected = set(builtin) - {"verdict"} | {"decision", "queries", "notes", "table"}
    assert set(doc) == expected | ADDED[""]
    assert doc["table"]["shape"] == [N_QUERIES, result.grid.width]


def test_api_tune_with_a_retriever_has_the_card_and_the_frames(
    made_up: tuple[Path, Path],
) -> None:
    import groove
    from groove.tuning.result import RetrieverLegs, TuneResult

    golden_path, legs_path = made_up
    events: list[Progress] = []
    notes: list[Note] = []
    result = groove.tune(
        None, golden_path, retriever=_adapter(legs_path, Fusion("rrf", 60.0, window=50)),
        family="weighted_rrf", engine="lancedb", window=50, progress=events.append,
        on_note=notes.append,
    )  # fmt: skip
    assert isinstance(result, TuneResult) and result.exit_code == 0
    assert isinstance(result.source, RetrieverLegs) and result.analysis is not None
    assert [e.stage for e in events] == ["retrieve", "sweep_legs"]
    assert {e.task for e in events} == {"tune"}
    assert (events[0].data["window"], events[1].data["family"]) == (50, "weighted_rrf")
    assert any("effective" in note.message for note in notes)
    width = result.grid.width
    conditions = result.conditions_frame()
    assert len(conditions) == width and conditions["refit"].sum() == 1
    assert conditions.loc[0, "default"] and conditions.loc[0, "label"] == "rrf k=60 window=50"
    assert int(conditions["folds"].sum()) == len(result.effective_rows)
    folds = result.folds_frame()
    assert len(folds) == N_QUERIES and folds["held_out_delta"].mean() == pytest.approx(
        result.analysis.loo.mean_delta
    )
    long = result.table_frame()
    assert len(long) == N_QUERIES * width * (2 * len(result.k_values) + 1)
    card = repr(result)
    assert card.startswith("<TuneResult: groove tune of") and "adopt" in card
    assert len(card) < 2048 and "lancedb" in result.card().html()


def test_api_and_cli_refuse_bad_engine_inputs_before_any_retrieval(
    made_up: tuple[Path, Path],
) -> None:
    import groove
    from groove.errors import ConfigError

    golden_path, legs_path = made_up
    spec = _adapter(legs_path, Fusion("rrf", 60.0, window=50))
    for keywords, words in (
        ({"family": "bogus"}, "keyword family 'bogus' is not a fusion family"),
        ({"engine": "vespa"}, "keyword engine 'vespa' is not an engine groove tunes for"),
        ({"window": 0}, "keyword window must be a whole number >= 1"),
    ):
        with pytest.raises(ConfigError, match=words):
            groove.tune(None, golden_path, retriever=spec, **keywords)  # type: ignore[arg-type]
    for keywords in ({"engine": "qdrant"}, {"family": "convex"}, {"window": 20}):
        with pytest.raises(ConfigError, match="needs keyword retriever"):
            groove.tune(golden_path.parent, golden_path, **keywords)  # type: ignore[arg-type]
    out = CliRunner().invoke(
        cli, ["tune", "--golden", str(golden_path), "--retriever", spec, "--family", "bogus"]
    )
    assert out.exit_code == 2 and "Error: --family 'bogus' is not a fusion family" in out.output
    out = CliRunner().invoke(
        cli, ["tune", "--golden", str(golden_path), "--retriever", spec, "--lexical", "porter"]
    )
    assert out.exit_code == 2 and "--lexical does not apply with --retriever" in out.output
    with pytest.raises(ConfigError, match="keyword model does not apply with keyword retriever"):
        groove.tune(None, golden_path, retriever=spec, model="m")


def test_kb_path_gives_the_golden_file_and_is_reported(tmp_path: Path) -> None:
    golden_path, legs_path = write_made_up(tmp_path, ".groove-eval.yml")
    out = CliRunner().invoke(
        cli,
        ["tune", "--kb-path", str(tmp_path), "--retriever",
         _adapter(legs_path, Fusion("rrf", 60.0, window=20)), "--window", "20",
         "--format", "json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    document = json.loads(out.stdout)
    assert document["kb_path"] == str(tmp_path)
    assert document["golden_path"] == str(golden_path)


def test_the_text_report_puts_the_verdict_before_the_sweep(made_up: tuple[Path, Path]) -> None:
    """`groove tune --retriever` printed its verdict last, under the grid, the
    leave-one-query-out block and the gates, where groove's own tune puts it first."""
    golden_path, legs_path = made_up
    spec = _adapter(legs_path, Fusion("rrf", 60.0, window=50))
    out = CliRunner().invoke(
        cli,
        ["tune", "--golden", str(golden_path), "--retriever", spec, "--family", "weighted_rrf",
         "--engine", "elasticsearch", "--window", "50"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    verdict = lines.index("## Verdict")
    assert verdict < 10  # right under the header
    assert lines[verdict + 1].startswith("  Recommendation: weighted_rrf ")
    assert "  In elasticsearch's terms:" in lines[verdict:]
    assert verdict < lines.index("## Best conditions (mean nDCG@5 over the effective queries)")
    assert verdict < lines.index("## Gates")


def test_no_effective_query_is_exit_2_on_stderr_with_nothing_on_stdout(tmp_path: Path) -> None:
    golden = tmp_path / "golden.yml"
    golden.write_text(
        yaml.safe_dump({"queries": [{"id": "a", "query": "x", "expected": [{"path": "a.md"}]}]})
    )
    run = tmp_path / "run.jsonl"
    legs = {"lexical": [{"path": "a.md", "score": 1.0}], "vector": []}
    run.write_text(json.dumps({"id": "a", "hits": [{"path": "a.md"}], "legs": legs}) + "\n")
    out = CliRunner().invoke(
        cli, ["tune", "--golden", str(golden), "--retriever", f"run:{run}", "--format", "json"]
    )
    assert out.exit_code == 2
    assert out.stdout == ""
    assert "has hits on both legs" in out.stderr and "a: lexical 1, vector 0" in out.stderr


def test_saved_engine_result_reloads_with_the_same_analysis(
    made_up: tuple[Path, Path], tmp_path: Path
) -> None:
    import numpy as np

    from groove.config import Config
    from groove.errors import ConfigError
    from groove.tuning.export import dumps, load_tune, to_document
    from groove.tuning.result import RetrieverLegs
    from groove.tuning.retriever import resolve_retriever, tune_retriever

    golden_path, legs_path = made_up
    spec = parse_spec(_adapter(legs_path, Fusion("rrf", 60.0, window=50)))
    settings = resolve_retriever(Config(), spec, golden=golden_path, family="rrf", window=50)
    result = tune_retriever(settings)
    path = tmp_path / "saved.json"
    path.write_text(dumps(to_document(result)))
    loaded = load_tune(path)
    assert isinstance(loaded.source, RetrieverLegs) and loaded.grid == result.grid
    assert loaded.analysis is not None and result.analysis is not None
    assert np.array_equal(loaded.analysis.table.primary, result.analysis.table.primary)
    assert loaded.analysis.loo == result.analysis.loo
    assert loaded.analysis.verdict == result.analysis.verdict
    assert loaded.source == result.source
    assert to_document(loaded) == to_document(result)
    edited = json.loads(path.read_text())
    edited["loo"]["refit"] = {"family": "rrf", "k": 1.0, "window": 10}
    path.write_text(json.dumps(edited))
    with pytest.raises(ConfigError, match="not a saved tune result"):
        load_tune(path)
