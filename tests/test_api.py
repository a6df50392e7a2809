"""The public API: its names (kept equal to docs/api.md), its keywords (kept equal to the
settings declaration), the light import, and the pandas views of eval, history and tune.

The views are checked on runs made with the deterministic hashing embedder (real SQLite,
FTS5 and sqlite-vec); the API calls themselves run with the real model on the session's
indexed fixture KB.
"""

from __future__ import annotations

import inspect
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers.hashing import HashingEmbedder

import groove
from groove import errors
from groove.config import Config
from groove.engine.index import build
from groove.evaluation.frames import worst_first
from groove.evaluation.run import run as eval_run
from groove.evaluation.settings import resolve_settings as eval_settings
from groove.history.change import direction
from groove.history.history import History, history_path, load_history
from groove.metrics import best_ranks
from groove.runs.record import RunRecord
from groove.settings import (
    EVAL,
    GOLDEN_DOCTOR,
    INDEX,
    JUDGE,
    POOL,
    SEARCH,
    TUNE,
    on,
)
from groove.tuning.analysis import table_aggregate
from groove.tuning.grid import DEFAULT_CONDITION
from groove.tuning.run import run as tune_run
from groove.tuning.settings import resolve_settings as tune_settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
API_PAGE = ROOT / "docs" / "api.md"


# ---------------------------------------------------------------- names and imports


def _documented_names() -> set[str]:
    text = API_PAGE.read_text(encoding="utf-8")
    section = text.split("## Public names", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Za-z_]+)` \|", section, flags=re.M))


def test_public_names_and_docs_api_md_agree() -> None:
    assert len(groove.__all__) == len(set(groove.__all__))
    assert set(groove.__all__) == _documented_names()
    for name in groove.__all__:
        assert getattr(groove, name) is not None


def test_every_error_class_is_public() -> None:
    classes = {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.GrooveError)
    }
    assert classes <= set(groove.__all__)
    assert groove.GoldenError is errors.GoldenError


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'evaluat'"):
        groove.evaluat  # type: ignore[attr-defined]  # noqa: B018


def test_import_groove_and_groove_help_load_nothing_heavy() -> None:
    code = (
        "import sys\nimport groove\nfrom groove.cli import cli\n"
        "for args in (['--help'], ['eval', '--help'], ['tune', '--help']):\n"
        "    try:\n        cli(args)\n    except SystemExit:\n        pass\n"
        "heavy = ('numpy', 'pandas', 'matplotlib', 'papermill', 'sqlite_vec', 'fastembed')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]"


# ---------------------------------------------------------------- one declaration


def _keywords(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("function", "table", "extra"),
    [
        (groove.evaluate, EVAL, ("progress",)),
        (groove.tune, TUNE, ("progress", "on_note")),
        (groove.search, SEARCH, ("query",)),
        (groove.index, INDEX, ("progress",)),
        (groove.pool, POOL, ()),
        (groove.judge, JUDGE, ()),
        (groove.golden_doctor, GOLDEN_DOCTOR, ()),
    ],
)
def test_api_keywords_are_the_declared_settings(function, table, extra) -> None:  # type: ignore[no-untyped-def]
    keywords = _keywords(function)
    assert sorted(k for k in keywords if k not in extra) == sorted(on(table, "api"))
    signature = inspect.signature(function)
    for name in on(table, "api"):
        default = signature.parameters[name].default
        if default is not inspect.Parameter.empty:
            assert default == table[name].face_default, name


def test_judge_signature_is_pools_and_by() -> None:
    """groove.judge takes pool's keywords without repeating them: its signature (what
    help(), Jupyter's tooltip and inspect show) is pool's, every keyword, plus ``by``."""
    pool, judge = inspect.signature(groove.pool), inspect.signature(groove.judge)
    by = inspect.Parameter(
        "by", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="str | None"
    )
    assert [p for p in judge.parameters.values() if p.name != "by"] == [*pool.parameters.values()]
    assert judge.parameters["by"] == by
    assert judge.return_annotation == "JudgeView"
    assert inspect.signature(groove.judge).bind("kb", depth=3, by="ann")  # the keywords bind


@pytest.mark.parametrize("function", [groove.evaluate, groove.tune, groove.search, groove.index])
def test_a_keyword_no_setting_declares_is_refused_as_python_refuses_it(function) -> None:  # type: ignore[no-untyped-def]
    """The keywords come from the table (groove.settings.signatures): a misspelt one is the
    TypeError Python raises for any function, before anything runs."""
    name = function.__name__
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument 'limt'$"):
        function("q", "kb", limt=5) if name == "search" else function("kb", limt=5)
    annotations = {p.name: p.annotation for p in inspect.signature(function).parameters.values()}
    assert annotations["model"] == "str | None"
    assert annotations["lexical"] == 'Literal["auto", "trigram", "porter"] | None'


def test_the_typed_keywords_are_the_tables() -> None:
    """groove/settings/keywords.py (what a type checker and an IDE read) is what the tables
    generate (``make keywords`` writes it), and each TypedDict holds exactly the keywords
    its function gathers in ``**keywords``."""
    from groove.settings import keywords
    from groove.settings.signatures import API_KEYWORDS, KEYWORDS_MODULE, keywords_module

    assert KEYWORDS_MODULE.read_text(encoding="utf-8") == keywords_module(), "run make keywords"
    for name, (typed, table, written) in API_KEYWORDS.items():
        function = getattr(groove, name)
        own = inspect.signature(inspect.unwrap(function)).parameters
        assert [p for p in own if p in table] == list(written), name
        offered = [p for p in inspect.signature(function).parameters if p in table]
        gathered = [p for p in offered if p not in written]
        assert sorted(getattr(keywords, typed).__annotations__) == sorted(gathered), name


def test_judge_refuses_what_pool_refuses(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="judge\\(\\) got an unexpected keyword argument 'deep'"):
        groove.judge(tmp_path, deep=3)
    with pytest.raises(TypeError, match="pool\\(\\) got an unexpected keyword argument 'deep'"):
        groove.pool(tmp_path, deep=3)
    with pytest.raises(groove.ConfigError, match="keyword depth must be a whole number >= 1"):
        groove.judge(tmp_path, depth=0)  # a pool keyword reaches the declaration's check
    with pytest.raises(groove.ConfigError, match="keyword by must be text, got 3"):
        groove.judge(tmp_path, by=3)


def _parameters_cell(notebook: Path) -> dict[str, object]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    (cell,) = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    return _assignments("".join(cell["source"]))


def _assignments(source: str) -> dict[str, object]:
    import ast

    return {
        node.targets[0].id: ast.literal_eval(node.value)  # type: ignore[attr-defined]
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
    }


@pytest.mark.parametrize(
    ("notebook", "table", "function"),
    [("eval_report.ipynb", EVAL, "eval_report"), ("tune_explorer.ipynb", TUNE, "tune_explorer")],
)
def test_notebook_parameters_are_the_declared_settings(notebook, table, function) -> None:  # type: ignore[no-untyped-def]
    """The parameters cell assigns declared settings, each its face default; groove adds
    the ones it lacks when it writes or runs the notebook, and the run cell's function
    takes exactly the declared ones."""
    from groove.notebooks import kernel, runner

    cell = _parameters_cell(ROOT / "notebooks" / notebook)
    cell.pop("result_path")  # set by the runner
    assert set(cell) <= set(on(table, "notebook"))
    for name, value in cell.items():
        assert value == table[name].face_default, name
    label = notebook.removesuffix(".ipynb").replace("_", "-")
    completed = runner.read_notebook(ROOT / "notebooks" / notebook, label)
    (source,) = [c.source for c in completed.cells if "parameters" in c.metadata.get("tags", [])]
    assigned = {name for name in _assignments(source) if name != "result_path"}
    assert assigned == set(on(table, "notebook"))
    run_cell = _keywords(getattr(kernel, function))
    assert sorted(run_cell) == sorted([*on(table, "notebook"), "result_path"])


def test_groove_tune_stays_the_function_after_the_tuning_package_is_imported() -> None:
    import groove.api
    import groove.tuning.grid  # binds groove.tuning, never groove.tune

    assert groove.tune is groove.api.tune
    assert "kb_path" in inspect.signature(groove.tune).parameters


def test_a_bad_keyword_is_a_config_error_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(groove.ConfigError) as info:
        groove.evaluate(tmp_path / "nowhere", limit=0)
    assert info.value.message == "keyword limit must be a whole number >= 1, got 0"
    assert info.value.hint == "pass limit= as a whole number >= 1, or leave it out"
    with pytest.raises(groove.ConfigError, match="keyword mmr_lambda must be a number from 0"):
        groove.evaluate(tmp_path, mmr_lambda=1.5)
    with pytest.raises(groove.ConfigError, match="keyword k_values must be a whole number"):
        groove.tune(tmp_path, k_values=[5, 0])
    with pytest.raises(groove.ConfigError, match="keyword limit 10001 exceeds the supported maxi"):
        groove.search("rollback", tmp_path, limit=10001)


def test_a_kb_path_may_be_text_with_a_tilde(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(groove.KnowledgeBaseError, match=f"not found: {tmp_path / 'kb'}"):
        groove.load_history("~/kb")
    (tmp_path / "kb").mkdir()
    assert groove.load_history("~/kb").runs == ()


# ---------------------------------------------------------------- the API end to end


def test_evaluate_writes_the_history_only_when_asked(indexed_kb, golden_en: Path) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    first = groove.evaluate(str(kb), str(golden_en))
    assert isinstance(first, groove.EvalRun)
    assert not history_path(kb).exists() and not first.history_saved
    saved = groove.evaluate(kb, golden_en, save_history=True)
    assert saved.history_saved and saved.previous is None
    assert len(groove.load_history(str(kb)).runs) == 1
    again = groove.evaluate(kb, golden_en)
    assert again.diff_enabled and again.previous == saved.record
    assert len(groove.load_history(kb).runs) == 1
    frame = again.per_query_frame()
    assert (frame["ndcg@10_delta"] == 0.0).all()
    assert list(frame["ndcg@10_previous"]) == list(frame["ndcg@10"])
    off = groove.evaluate(kb, golden_en, history=False, save_history=True)
    assert off.previous is None and not off.history_saved
    assert len(groove.load_history(kb).runs) == 1


def test_search_and_index_through_the_api(indexed_kb) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    summary = groove.index(str(kb))
    assert isinstance(summary, groove.IndexSummary)
    assert summary.indexed == 0 and summary.unchanged == summary.files > 0
    result = groove.search("revert a bad deploy", str(kb), limit=2)
    assert isinstance(result, groove.SearchResult)
    assert [h.rank for h in result.hits] == [1, 2]
    assert result.hits[0].path == "ops/rollback.md"


# ---------------------------------------------------------------- eval and history frames


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    build(kb, HashingEmbedder())
    return kb


def _evaluate(kb: Path, **kw):  # type: ignore[no-untyped-def]
    settings = eval_settings(Config(), kb_path=kb, golden=FIXTURES / "golden_en.yml", **kw)
    return eval_run(settings, embedder=HashingEmbedder())


METRICS = ["recall@1", "recall@5", "recall@10", "mrr", "ndcg@1", "ndcg@5", "ndcg@10"]
LATENCY = ["latency_p50_ms", "latency_p95_ms", "latency_max_ms"]


def test_per_query_frame_without_a_previous_run(kb: Path) -> None:
    run = _evaluate(kb)
    frame = run.per_query_frame()
    # a first run: no empty _previous / _delta columns in front of the useful ones
    assert list(frame.columns) == [
        "id", "query", *METRICS, "miss", "regressed", "answers", "found", "latency_ms"
    ]  # fmt: skip
    assert (frame["latency_ms"] > 0).all()
    assert list(frame["id"]) == [q.id for q in run.per_query]
    assert not frame["regressed"].any()  # nothing to have fallen from
    assert list(frame["answers"]) == [len(q.expected) for q in run.per_query]
    found = [sum(r is not None for r in best_ranks(q.expected, q.top_k)) for q in run.per_query]
    assert list(frame["found"]) == found
    assert list(frame.loc[frame["found"] == 0, "id"]) == [q.id for q in run.per_query if q.is_miss]
    first = run.per_query[0]
    assert frame.loc[0, "mrr"] == first.metrics.reciprocal_rank
    assert frame.loc[0, "recall@5"] == first.metrics.recall_at_k[5]
    assert frame.loc[0, "ndcg@10"] == first.metrics.ndcg_at_k[10]
    assert list(frame["miss"]) == [q.is_miss for q in run.per_query]
    # The columns' means are the aggregate the reports show.
    aggregate = run.aggregate_frame().set_index("metric")["value"]
    for metric in METRICS:
        assert math.isclose(frame[metric].mean(), aggregate[metric], rel_tol=1e-12)
    assert aggregate["mrr"] == run.record.aggregate.mrr


def test_frames_after_a_change_show_previous_values_and_deltas(kb: Path) -> None:
    first = _evaluate(kb)
    (kb / "ops" / "rollback.md").unlink()  # the answer of two golden queries
    build(kb, HashingEmbedder())
    second = _evaluate(kb)
    frame = second.per_query_frame().set_index("id")
    before = {q.id: q.metrics.recall_at_k[10] for q in first.per_query}
    for q in second.per_query:
        now = q.metrics.recall_at_k[10]
        assert frame.loc[q.id, "recall@10_previous"] == before[q.id]
        assert frame.loc[q.id, "recall@10_delta"] == now - before[q.id]
    assert frame.loc["rollback-when", "recall@10_delta"] < 0
    # regressed: recall@10 fell by more than the threshold (the change rule), never a rise
    fell = frame["recall@10_delta"] < -second.threshold
    assert frame["regressed"].tolist() == fell.tolist() and fell["rollback-when"]
    # worst first: misses, then regressions, then ascending recall@10 and nDCG@10
    worst = worst_first(second)
    assert sorted(worst.index) == list(range(len(second.per_query)))  # golden positions
    group = [
        0 if m else 1 if r else 2 for m, r in zip(worst["miss"], worst["regressed"], strict=True)
    ]
    keys = list(zip(group, worst["recall@10"], worst["ndcg@10"], worst.index, strict=True))
    assert keys == sorted(keys) and group[0] < 2
    aggregate = second.aggregate_frame().set_index("metric")
    assert aggregate.loc["mrr", "previous"] == first.record.aggregate.mrr
    assert aggregate.loc["mrr", "delta"] == second.record.aggregate.mrr - first.record.aggregate.mrr
    assert [d.label.lower() for d in second.deltas()] == list(aggregate.index)

    history = load_history(history_path(kb)).runs_frame()
    assert list(history.columns) == [
        "id",
        "name",
        "timestamp",
        "outcome",
        "baseline_id",
        "model",
        "queries",
        *METRICS,
        *LATENCY,
        "fingerprint_changed",
        "changed",
        "corpus_changed",
    ]
    assert str(history["timestamp"].dtype).startswith("datetime64")
    assert list(history["mrr"]) == [first.record.aggregate.mrr, second.record.aggregate.mrr]
    assert history["corpus_changed"].isna()[0] and history["corpus_changed"][1]
    assert not history["fingerprint_changed"][1]


def test_history_frame_marks_a_fingerprint_change_and_merges_k(kb: Path) -> None:
    _evaluate(kb)
    _evaluate(kb, k_values=[3])
    frame = load_history(history_path(kb)).runs_frame()
    assert list(frame["fingerprint_changed"].isna()) == [True, False]
    assert frame["fingerprint_changed"][1]
    assert not frame["corpus_changed"][1]
    assert math.isnan(frame["recall@3"][0]) and not math.isnan(frame["recall@3"][1])
    assert math.isnan(frame["recall@5"][1])
    # each setting that differs has a column (the limit follows the largest k)
    assert list(frame["k"]) == ["1,5,10", "3"] and list(frame["limit"]) == ["10", "3"]
    assert frame["changed"][1] == "limit 10 -> 3; k 1,5,10 -> 3"
    assert list(frame.columns[9 : -3 - len(LATENCY)]) == [
        "recall@1",
        "recall@3",
        "recall@5",
        "recall@10",
        "mrr",
        "ndcg@1",
        "ndcg@3",
        "ndcg@5",
        "ndcg@10",
    ]


def test_history_frame_shows_each_runs_latency_and_nan_for_a_run_stored_before(
    kb: Path,
) -> None:
    _evaluate(kb)
    _evaluate(kb)
    newest, oldest = load_history(history_path(kb)).runs
    assert newest.latency is not None
    # a run stored before groove timed retrieval: its record has no latency
    older = RunRecord.from_dict({k: v for k, v in oldest.to_dict().items() if k != "latency"})
    assert older.latency is None
    frame = History(runs=(newest, older)).runs_frame()
    assert frame[LATENCY].iloc[0].isna().all()
    total = newest.latency.total
    assert frame[LATENCY].iloc[1].tolist() == [total.p50_ms, total.p95_ms, total.max_ms]
    assert all(str(frame[name].dtype) == "float64" for name in LATENCY)


def test_an_empty_history_has_an_empty_frame(tmp_path: Path) -> None:
    frame = load_history(tmp_path / "none.json").runs_frame()
    assert frame.empty and "timestamp" in frame.columns


# ---------------------------------------------------------------- tune frames


@pytest.fixture
def tuned(kb: Path):  # type: ignore[no-untyped-def]
    settings = tune_settings(Config(), kb_path=kb, golden=FIXTURES / "golden_en.yml")
    return tune_run(settings, embedder=HashingEmbedder())


def test_conditions_frame(tuned) -> None:  # type: ignore[no-untyped-def]
    analysis = tuned.analysis
    assert analysis is not None
    frame = tuned.conditions_frame()
    assert frame.shape == (384, 19)
    assert list(frame["condition"]) == list(range(384))
    default = frame[frame["default"]]
    assert list(default["condition"]) == [DEFAULT_CONDITION.index]
    assert default[["rrf_k", "bm25_heading_weight", "bm25_context_weight"]].values.tolist() == [
        [60.0, 2.0, 1.0]
    ]
    assert list(frame.loc[frame["refit"], "condition"]) == [analysis.loo.refit.index]
    assert frame["folds"].sum() == len(analysis.loo.folds) == len(tuned.effective_rows)
    for c in set(analysis.loo.folds):
        assert frame.loc[c.index, "folds"] == analysis.loo.folds.count(c)
    # The means are the secondary metrics the report shows for the default and the refit.
    rows = range(analysis.table.n_queries)
    for condition in (DEFAULT_CONDITION, analysis.loo.refit):
        expected = table_aggregate(analysis.table, rows, condition)
        assert frame.loc[condition.index, "mrr"] == expected.mrr
        assert frame.loc[condition.index, "ndcg@10"] == expected.ndcg_at_k[10]
        assert frame.loc[condition.index, "recall@1"] == expected.recall_at_k[1]
    assert frame.loc[DEFAULT_CONDITION.index, "ndcg@5_delta"] == 0.0
    assert frame.loc[DEFAULT_CONDITION.index, "ndcg@5_delta_se"] == 0.0
    effective = list(tuned.effective_rows)
    primary = analysis.table.primary
    gains = primary[effective, 0] - primary[effective, DEFAULT_CONDITION.index]
    assert math.isclose(frame.loc[0, "ndcg@5_delta"], gains.mean(), abs_tol=1e-12)
    se = gains.std(ddof=1) / math.sqrt(len(gains))
    assert math.isclose(frame.loc[0, "ndcg@5_delta_se"], se, abs_tol=1e-12)
    # improved / degraded: the effective queries condition 0 moved past the change rule's
    # tolerance (groove.history.change.direction), and none for the default itself
    assert frame.loc[0, "ndcg@5_improved"] == sum(direction(g) > 0 for g in gains)
    assert frame.loc[0, "ndcg@5_degraded"] == sum(direction(g) < 0 for g in gains)
    assert frame.loc[DEFAULT_CONDITION.index, ["ndcg@5_improved", "ndcg@5_degraded"]].tolist() == [
        0,
        0,
    ]
    moved = frame["ndcg@5_improved"] + frame["ndcg@5_degraded"]
    assert moved.max() <= len(effective) and moved.max() > 0


def test_table_and_folds_frames(tuned) -> None:  # type: ignore[no-untyped-def]
    analysis = tuned.analysis
    table = tuned.table_frame()
    n = analysis.table.n_queries
    assert list(table.columns) == ["query", "condition", "metric", "value"]
    assert len(table) == n * 384 * len(METRICS)
    assert list(table["metric"].unique()) == METRICS
    cell = table[
        (table["query"] == tuned.queries[2].id)
        & (table["condition"] == 97)
        & (table["metric"] == "ndcg@5")
    ]
    assert cell["value"].tolist() == [analysis.table.ndcg[5][2, 97]]
    rr = table[table["metric"] == "mrr"]["value"].to_numpy().reshape(n, 384)
    assert np.array_equal(rr, analysis.table.rr)

    folds = tuned.folds_frame()
    assert list(folds.columns) == [
        "query",
        "condition",
        "rrf_k",
        "bm25_heading_weight",
        "bm25_context_weight",
        "bm25_content_weight",
        "held_out_delta",
        "refit",
    ]
    assert list(folds["query"]) == [tuned.queries[i].id for i in analysis.loo.rows]
    assert list(folds["condition"]) == [c.index for c in analysis.loo.folds]
    assert list(folds["held_out_delta"]) == list(analysis.loo.held_out_diffs)
    assert folds["refit"].mean() == analysis.loo.stability


def test_save_and_load_tune_keep_the_frames(tuned, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(tmp_path))
    path = groove.save_tune(tuned, "~/tune.json")
    assert path == tmp_path / "tune.json"
    loaded = groove.load_tune("~/tune.json")
    assert loaded.conditions_frame().equals(tuned.conditions_frame())
    assert loaded.folds_frame().equals(tuned.folds_frame())
    with pytest.raises(groove.ConfigError, match="cannot read the tune JSON"):
        groove.load_tune(tmp_path / "missing.json")


def test_frames_of_a_tune_that_did_not_run_the_grid(tuned) -> None:  # type: ignore[no-untyped-def]
    from dataclasses import replace

    empty = replace(tuned, analysis=None)
    for frame in (empty.conditions_frame(), empty.table_frame(), empty.folds_frame()):
        assert frame.empty and len(frame.columns) > 0
    assert list(empty.conditions_frame().columns) == list(tuned.conditions_frame().columns)


# ---------------------------------------------------------------- docs/api.md


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


@pytest.mark.slow
def test_docs_api_md_code_blocks_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs every python block of docs/api.md in order, on a copy of docs/ and examples/."""
    shutil.copytree(
        ROOT / "docs",
        tmp_path / "docs",
        ignore=shutil.ignore_patterns(".groove-eval-history.json*"),
    )
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    blocks = python_blocks(API_PAGE.read_text(encoding="utf-8"))
    assert len(blocks) >= 8
    namespace: dict[str, object] = {}
    for number, block in enumerate(blocks, 1):
        exec(compile(block, f"docs/api.md block {number}", "exec"), namespace)
    assert (tmp_path / "docs" / ".groove-eval-history.json").is_file()
    assert (tmp_path / "tune-result.json").is_file()
    assert not (ROOT / "tune-result.json").exists()
