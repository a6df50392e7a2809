"""One API vocabulary (docs/api.md, "One vocabulary"): every public result follows the same
five rules, checked here on real results (real SQLite, FTS5, sqlite-vec and the real model
on the indexed English fixture) rather than on a list written beside the code:

- every DataFrame view is a ``<what>_frame()`` method, and the old names warn;
- every result has ``to_dict()``, a dict ``json.dumps`` takes as it is;
- notes and warnings are ``Note`` values;
- index, evaluate, tune and compare hand ``Progress`` events to ``progress=``;
- an eval's outcome is ``EvalRun.verdict``, from which the exit code derives.
"""

from __future__ import annotations

import inspect
import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import groove
from groove.fusion import Fusion
from groove.judging.pool import Pool
from groove.notes import Note
from groove.progress import Progress
from groove.stats.compare import Comparison, LabelledRun, compare_runs

ROOT = Path(__file__).resolve().parent.parent
API_PAGE = ROOT / "docs" / "api.md"

# Results the API returns whose class is not in groove.__all__ (reached through a result).
RETURNED = {"Comparison": Comparison, "Pool": Pool}
# Public classes that are not results: the errors and the progress event itself.
NOT_RESULTS = {"Progress"}


def _public_result_classes() -> dict[str, type]:
    found = {}
    for name in groove.__all__:
        value = getattr(groove, name)
        if not isinstance(value, type) or issubclass(value, Exception) or name in NOT_RESULTS:
            continue
        found[name] = value
    return found | RETURNED


def _vocabulary_section() -> str:
    text = API_PAGE.read_text(encoding="utf-8")
    return text.split("## One vocabulary", 1)[1].split("\n## ", 1)[0]


def test_the_vocabulary_section_names_every_public_result() -> None:
    """The rules' table in docs/api.md names each public result class, and nothing else."""
    named = set(re.findall(r"`([A-Z][A-Za-z]+)(?:[.(`])", _vocabulary_section()))
    named -= NOT_RESULTS | {"Note"}
    assert named == set(_public_result_classes())


def test_no_frame_view_outside_the_naming_rule() -> None:
    for cls in _public_result_classes().values():
        for name, _ in inspect.getmembers(cls, inspect.isfunction):
            if name.startswith("_") or "frame" not in name:
                continue
            assert name.endswith("_frame"), (cls, name)


# ---------------------------------------------------------------- real results


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One real instance of every public result, and the progress each entry point sent."""
    from helpers.made_up_legs import adapter, write_made_up

    root = tmp_path_factory.mktemp("vocabulary")
    kb = root / "kb"
    shutil.copytree(Path(__file__).parent / "fixtures" / "kb_en", kb)
    golden = Path(__file__).parent / "fixtures" / "golden_en.yml"
    events: dict[str, list[Progress]] = {"index": [], "evaluate": [], "tune": [], "compare": []}
    summary = groove.index(kb, progress=events["index"].append)
    first = groove.evaluate(kb, golden, save_history=True)
    (kb / "ops" / "rollback.md").unlink()  # the answers of three golden queries
    (kb / "ops" / "canary.md").unlink()
    groove.index(kb)
    second = groove.evaluate(
        kb, golden, save_history=True, fail_on_regression=True, progress=events["evaluate"].append
    )
    history = groove.load_history(kb)
    groove.compare([first, second], progress=events["compare"].append)
    comparison = compare_runs([LabelledRun("#2", first.record), LabelledRun("#1", second.record)])
    tuned = groove.tune(kb, golden, progress=events["tune"].append)
    (root / "legs").mkdir()
    golden_legs, legs = write_made_up(root / "legs")
    engine_events: list[Progress] = []
    external = groove.tune(
        None,
        golden_legs,
        retriever=adapter(legs, Fusion("rrf", 60.0, window=50)),
        window=50,
        progress=engine_events.append,
    )
    found = groove.search("revert a bad deploy", kb, limit=3)
    pool = groove.pool(kb, golden)
    return {
        "instances": {
            "IndexSummary": summary,
            "SearchResult": found,
            "Hit": found.hits[0],
            "EvalRun": second,
            "RunRecord": second.record,
            "QueryResult": second.per_query[0],
            "History": history,
            "TuneResult": tuned,
            "Comparison": comparison,
            "Pool": pool,
        },
        "events": events,
        "engine_events": engine_events,
        "external": external,  # a TuneResult too, its legs a retriever's
        "first": first,
        "second": second,
        "kb": kb,
        "golden": golden,
    }


def _checked(results: dict[str, Any]) -> dict[str, Any]:
    """Every instance the rules are checked on: one of each public result type, and the
    tune of a retriever's legs (the same TuneResult type, its other source)."""
    return {**results["instances"], "TuneResult of a retriever": results["external"]}


def test_every_public_result_is_checked(results: dict[str, Any]) -> None:
    instances = results["instances"]
    assert set(instances) == set(_public_result_classes())
    for name, cls in _public_result_classes().items():
        assert isinstance(instances[name], cls), name


def test_every_frame_view_is_a_dataframe(results: dict[str, Any]) -> None:
    checked = 0
    for value in _checked(results).values():
        for name, _ in inspect.getmembers(type(value), inspect.isfunction):
            if name.endswith("_frame") and not name.startswith("_"):
                assert isinstance(getattr(value, name)(), pd.DataFrame), (value, name)
                checked += 1
    assert checked >= 10


def test_every_result_has_a_json_ready_to_dict(results: dict[str, Any]) -> None:
    for name, value in _checked(results).items():
        document = value.to_dict()
        assert isinstance(document, dict) and document, name
        assert json.loads(json.dumps(document)) is not None, name


def test_to_dict_is_the_json_document_of_its_command(results: dict[str, Any]) -> None:
    """The methods are the documents the faces print (same keys, same values)."""
    from groove.report import eval_json, tune_json

    run, tuned = results["instances"]["EvalRun"], results["instances"]["TuneResult"]
    assert json.loads(eval_json.render(run)) == json.loads(json.dumps(run.to_dict()))
    assert json.loads(tune_json.render(tuned)) == json.loads(json.dumps(tuned.to_dict()))
    external = results["external"]
    assert type(external) is type(tuned)  # one result type for every source of legs
    assert json.loads(tune_json.render(external)) == json.loads(json.dumps(external.to_dict()))
    found = results["instances"]["SearchResult"]
    assert found.to_dict()["hits"] == [h.to_dict() for h in found.hits]


def test_notes_are_notes(results: dict[str, Any]) -> None:
    carrying = 0
    for name, value in _checked(results).items():
        if not hasattr(value, "notes"):
            continue
        carrying += 1
        assert all(isinstance(note, Note) for note in value.notes), name
    assert carrying >= 7
    found = results["instances"]["SearchResult"]
    assert found.warnings == tuple(n.message for n in found.notes)


def test_a_query_part_not_searched_is_a_note(results: dict[str, Any]) -> None:
    query = " ".join(f'"phrase number {i}"' for i in range(40))
    found = groove.search(query, results["kb"], limit=1)
    (note,) = found.notes
    assert note.kind == "query-part-ignored" and "were not searched" in note.message
    assert found.warnings == (note.message,)


def test_the_four_entry_points_send_progress(results: dict[str, Any]) -> None:
    events = results["events"]
    for task, sent in events.items():
        assert sent, task
        assert all(isinstance(e, Progress) and e.task == task for e in sent), task
        assert all(0 <= e.done <= e.total for e in sent), task
    queries = [q.id for q in results["second"].per_query]
    searched = [e for e in events["evaluate"] if e.stage == "search"]
    # one event per golden query, in the order the model's batches were done
    assert sorted(e.item for e in searched) == sorted(queries)
    assert [e.done for e in searched] == list(range(1, len(queries) + 1))
    tune_stages = [e.stage for e in events["tune"]]
    assert tune_stages[:2] == ["preflight", "sweep"] and set(tune_stages[2:]) == {"query"}
    runs = [results["first"].record.id, results["second"].record.id]  # named by name, else id
    assert [e.item for e in events["compare"]] == runs
    assert [e.stage for e in results["engine_events"]] == ["retrieve", "sweep_legs"]
    assert all(e.message for sent in events.values() for e in sent)


def test_the_verdict_is_the_one_field_every_face_reads(results: dict[str, Any]) -> None:
    from groove.notebooks.kernel import verdict

    first, second = results["first"], results["second"]
    assert (first.verdict, first.exit_code) == ("passed", 0)
    assert (second.verdict, second.exit_code) == ("regression", 1) and second.regression
    assert verdict(second) == second.verdict
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecated name on the way
        refused = groove.evaluate(
            results["kb"], results["golden"], history=False, require_baseline=True
        )
    assert (refused.verdict, refused.exit_code) == ("not-applied", 4)
    assert verdict(refused) == "not-applied"


def test_every_frame_and_json_document_spells_a_metric_the_same_way(
    results: dict[str, Any],
) -> None:
    """``recall@10``, ``mrr``, ``ndcg@10`` in every frame's columns and ``metric`` values and
    in compare's JSON keys, so filters and joins between them line up (the text reports
    and cards keep the display labels MRR and nDCG@10)."""
    run = results["second"]
    names = list(run.aggregate_frame()["metric"])
    assert names == [c for c in run.per_query_frame().columns if c in names]
    comparison = results["instances"]["Comparison"]
    compared = comparison.metrics_frame()
    assert set(compared["metric"]) == set(names)
    for document_run in comparison.to_dict()["runs"]:
        assert list(document_run["metrics"]) == names
    joined = compared.merge(run.aggregate_frame(), on="metric", suffixes=("", "_eval"))
    assert len(joined) == len(compared)
    newest = joined[~joined["baseline"]]
    assert (newest["value"] - newest["value_eval"]).abs().max() < 1e-12
    assert set(names) <= set(results["instances"]["History"].runs_frame().columns)
