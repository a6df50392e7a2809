"""groove.tuning.export: a saved tune result loads back bit for bit, analysis included."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from groove.errors import ConfigError, GrooveError
from groove.golden.queries import GoldenQuery
from groove.metrics import Expected
from groove.notes import Note
from groove.tuning.analysis import analyse
from groove.tuning.export import dumps, from_document, load_tune, save_tune, to_document
from groove.tuning.grid import N_CONDITIONS, Condition
from groove.tuning.result import EngineLegs, QueryDiagnostics, TuneResult
from groove.tuning.table import MetricTable

WINNER = Condition(3, 1, 1, 4)


def _queries(n: int) -> tuple[GoldenQuery, ...]:
    return tuple(
        GoldenQuery(
            id=f"質問-{i}",
            query=f"バックアップは何日保持する？ {i}",
            expected=(Expected("data/backup.md", "Retention" if i % 2 else None),),
            tags=("ja",) if i % 3 == 0 else (),
            line=3 + 4 * i,
        )
        for i in range(n)
    )


def _result(n: int = 12, effective: bool = True) -> TuneResult:
    rng = np.random.default_rng(7)
    primary = np.full((n, N_CONDITIONS), 0.2)
    primary[:, WINNER.index] = [0.5 + 0.01 * (i % 3) for i in range(n)]
    noise = {k: rng.random((n, N_CONDITIONS)) for k in (1, 5, 10, 0)}
    for values in noise.values():
        values[:, WINNER.index] = 1.0  # the winner degrades no secondary metric: it adopts
    table = MetricTable(
        k_values=(1, 5, 10),
        ndcg={1: noise[1], 5: primary, 10: noise[10]},
        recall={k: noise[k] for k in (1, 5, 10)},
        rr=noise[0],
    )
    candidates = 7 if effective else 1
    diagnostics = tuple(
        QueryDiagnostics(f"質問-{i}", candidates, 12, 3, i == 0, i % 2 == 0, i % 4)
        for i in range(n)
    )
    rows = [i for i, d in enumerate(diagnostics) if d.effective]
    return TuneResult(
        golden_path=Path("/kb/.groove-eval.yml"),
        limit=10,
        k_values=(1, 5, 10),
        queries=_queries(n),
        source=EngineLegs(
            model="sentence-transformers/all-MiniLM-L6-v2",
            candidate_pool=50,
            chunk_total=33,
            context_axis_noop=True,
            diagnostics=diagnostics,
        ),
        analysis=analyse(table, rows) if rows else None,
        kb_path=Path("/kb"),
        notes=(Note("fusion-customised", "something", data={"fusion": {"rrf_k": 20.0}}),),
    )


def _same_table(a: MetricTable, b: MetricTable) -> None:
    assert a.k_values == b.k_values
    assert np.array_equal(a.rr, b.rr)
    for k in a.k_values:
        assert np.array_equal(a.ndcg[k], b.ndcg[k])
        assert np.array_equal(a.recall[k], b.recall[k])


def test_round_trip_keeps_every_field_and_the_table_bit_for_bit(tmp_path: Path) -> None:
    result = _result()
    loaded = load_tune(save_tune(result, tmp_path / "tune.json"))
    assert loaded.analysis is not None and result.analysis is not None
    _same_table(loaded.analysis.table, result.analysis.table)
    assert loaded.analysis.loo == result.analysis.loo
    assert loaded.analysis.verdict == result.analysis.verdict
    assert loaded.analysis.verdict.adopt is True
    assert loaded.analysis.impact == result.analysis.impact
    assert loaded.analysis.secondary == result.analysis.secondary
    assert replace(loaded, analysis=None) == replace(result, analysis=None)


def test_saved_document_is_the_json_report_plus_queries_table_and_notes() -> None:
    result = _result()
    document = json.loads(dumps(to_document(result)))
    report = json.loads(json.dumps(result.to_dict()))
    decision = report.pop("verdict")  # result.json's "verdict" is the run's outcome
    assert document["decision"] == decision
    assert {k: v for k, v in document.items() if k in report} == report
    assert set(document) - set(report) == {"queries", "table", "notes", "decision"}
    assert document["queries"][1] == {
        "id": "質問-1",
        "query": "バックアップは何日保持する？ 1",
        "expected": [{"path": "data/backup.md", "heading": "Retention"}],
        "tags": [],
        "line": 7,
    }
    assert document["table"]["shape"] == [12, N_CONDITIONS]
    assert document["table"]["encoding"] == "float64-le-zlib-base64"


def _legacy_document(result: TuneResult) -> dict:
    """The saved form before result.json 2: the decision under "verdict", the table as
    nested lists of floats."""
    assert result.analysis is not None
    document = to_document(result)
    document["verdict"] = document.pop("decision")
    table = result.analysis.table
    document["table"] = {
        "k_values": list(table.k_values),
        "ndcg": {str(k): table.ndcg[k].tolist() for k in table.k_values},
        "recall": {str(k): table.recall[k].tolist() for k in table.k_values},
        "rr": table.rr.tolist(),
    }
    return document


def test_files_written_before_the_compact_table_still_load_bit_for_bit(tmp_path: Path) -> None:
    result = _result()
    path = tmp_path / "old.json"
    path.write_text(json.dumps(_legacy_document(result)), encoding="utf-8")
    loaded = load_tune(path)
    assert loaded.analysis is not None and result.analysis is not None
    _same_table(loaded.analysis.table, result.analysis.table)
    assert loaded.analysis.verdict == result.analysis.verdict


def test_compact_table_is_a_fraction_of_the_list_form() -> None:
    result = _result(n=60)
    compact = len(dumps(to_document(result)))
    lists = len(json.dumps(_legacy_document(result)))
    assert compact < lists / 2  # random noise compresses worst; real tables far better


def test_unknown_table_encoding_is_refused(tmp_path: Path) -> None:
    document = to_document(_result())
    document["table"]["encoding"] = "float16"
    path = tmp_path / "odd.json"
    path.write_text(dumps(document), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_tune(path)
    assert "unknown table encoding 'float16'" in caught.value.message


def test_table_is_one_compact_line() -> None:
    text = dumps(to_document(_result()))
    table_lines = [line for line in text.splitlines() if line.startswith('  "table": ')]
    assert len(table_lines) == 1
    assert text.endswith("}\n}\n")


def test_result_without_grid_round_trips_without_a_table(tmp_path: Path) -> None:
    result = _result(n=3, effective=False)
    path = save_tune(result, tmp_path / "tune.json")
    assert "table" not in json.loads(path.read_text(encoding="utf-8"))
    assert load_tune(path) == result


def test_extra_keys_such_as_exit_code_are_ignored() -> None:
    document = to_document(_result())
    document["exit_code"] = 0
    loaded = from_document(json.loads(dumps(document)))
    assert loaded.analysis is not None
    assert loaded.analysis.loo.refit == WINNER


def test_report_without_table_is_refused_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(_result().to_dict()), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_tune(path)
    assert caught.value.message == (
        f"the tune JSON {path} is not a saved tune result (missing key 'table')"
    )
    assert "does not carry the metric table" in (caught.value.hint or "")


def test_edited_refit_is_refused(tmp_path: Path) -> None:
    document = to_document(_result())
    document["loo"]["refit"] = Condition(0, 0, 0, 0).as_fusion_dict()
    path = tmp_path / "edited.json"
    path.write_text(dumps(document), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_tune(path)
    assert "differs from the one its table gives" in caught.value.message


def test_unreadable_or_invalid_files_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as missing:
        load_tune(tmp_path / "absent.json")
    assert missing.value.message.startswith(f"cannot read the tune JSON {tmp_path / 'absent.json'}")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError) as invalid:
        load_tune(bad)
    assert invalid.value.message.startswith(f"the tune JSON {bad} is not valid JSON")


def test_notes_are_saved_as_data_and_old_plain_text_notes_still_load(tmp_path: Path) -> None:
    result = _result()
    document = json.loads(dumps(to_document(result)))
    assert document["notes"] == [
        {
            "kind": "fusion-customised",
            "level": "note",
            "message": "something",
            "data": {"fusion": {"rrf_k": 20.0}},
        }
    ]
    document["notes"] = ["groove tune: note: written before notes were typed"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(document), encoding="utf-8")
    assert load_tune(old).notes == (
        Note("text", "groove tune: note: written before notes were typed"),
    )


def test_the_adopt_verdict_ends_with_the_reference_line_and_a_flush_left_snippet() -> None:
    """As the reference prints it: "All adoption conditions passed." and a snippet that can
    be pasted into groove.toml as it is (no indentation)."""
    from groove.report import tune_text

    text = tune_text.render(_result())
    start = text.index("## Verdict")
    verdict = text[start : text.index("\n## ", start)]  # the verdict now comes before the CV
    assert verdict == (
        "## Verdict\n"
        f"  Recommendation: {WINNER.label}\n"
        "  All adoption conditions passed. Paste this into groove.toml, then re-run "
        "`groove eval` WITH your reranker (and [contextual]) against the same run without it; "
        "keep the change only if it helps there.\n"
        "\n"
        "[search.fusion]\n"
        "rrf_k = 60.0\n"
        "bm25_heading_weight = 4.0\n"
        "bm25_context_weight = 1.0\n"
        "bm25_content_weight = 1.0\n"
    )


def test_the_text_report_says_where_the_left_out_diagnostics_are_as_its_face_words_it() -> None:
    from groove.cli.words import TUNE_WHERE
    from groove.report import tune_text

    result = _result(n=tune_text.DIAGNOSTIC_ROWS + 5)
    on_cli = tune_text.render(result, where=TUNE_WHERE).splitlines()
    assert on_cli[-2] == (
        "  … and 5 more queries (0 of them not effective): every row is under `diagnostics` "
        "in `groove tune --format json` and in the tune-explorer notebook"
    )
    neutral = tune_text.render(result).splitlines()  # the notebook's and the library's words
    assert neutral[-2].endswith(f"every row is {tune_text.DIAGNOSTICS_WHERE}")
    assert "--format" not in tune_text.DIAGNOSTICS_WHERE


def test_a_missing_folder_is_a_one_line_error_and_nothing_is_left(tmp_path: Path) -> None:
    """Bad input, not an OSError naming the temporary file groove writes first."""
    target = tmp_path / "no-such-folder" / "tune.json"
    with pytest.raises(GrooveError) as refused:
        save_tune(_result(), target)
    assert str(refused.value.message) == f"cannot write {target}: No such file or directory"
    assert refused.value.hint == "check the folder and its permissions"
    assert not target.parent.exists()
