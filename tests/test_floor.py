"""The accepted baseline (the floor): a slow decline fails, only a decision moves it.

Sequences of runs over time, as CI makes them: each step costs less than the threshold,
their sum more. The runs come from a run file (``run:FILE`` with a fixed
``--retriever-name``, so every step is the same configuration) whose hits decide exactly
which golden queries find their answer: the metrics of each step are known in advance. The
same story is told through the CLI, the API and the notebook runner; the real engine and
model run it once more on the kb_en fixture (tests/test_baseline_file.py has the file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers.decline import NAME, as_json, cli_eval, write_golden, write_run

import groove
from groove.cli import cli
from groove.history.history import HISTORY_FILE_NAME, load_history


def test_a_slow_decline_fails_at_the_first_step_below_the_floor_on_the_cli(
    tmp_path: Path,
) -> None:
    golden = write_golden(tmp_path)
    first = cli_eval(golden, write_run(tmp_path, 0), "--fail-on-regression", "--format", "json")
    assert first.exit_code == 0, first.stderr
    floor_id = as_json(first)["id"]
    codes = []
    for broken in (1, 2, 3, 4):  # nDCG@10 1.00 -> 0.98 -> 0.96 -> 0.94: each step -0.02
        step = cli_eval(golden, write_run(tmp_path, broken), "--fail-on-regression")
        codes.append(step.exit_code)
        if step.exit_code:
            break
    # 0.02 and 0.04 below the floor pass; 0.06 is past the threshold: the third step fails
    assert codes == [0, 0, 1]
    assert step.stderr.splitlines()[-1].endswith(
        "recall@1 fell 0.060, recall@5 fell 0.060, recall@10 fell 0.060, MRR fell 0.060, "
        "nDCG@1 fell 0.060, nDCG@5 fell 0.060, nDCG@10 fell 0.060 since the accepted "
        f"baseline of {as_json(first)['timestamp']}, over 3 runs that each passed "
        f"({floor_id}, first run of this configuration). "
        "Exiting with code 1 because --fail-on-regression was set."
    )
    # The diff is still the seed's (against the previous run, -0.02), the floor named below.
    assert "Aggregate (previous run: " in step.stdout
    assert "  nDCG@10    0.940  (↓ 0.020" in step.stdout
    assert (
        f"Floor (accepted baseline: {as_json(first)['timestamp']} · {floor_id}, first run of "
        "this configuration; 2 runs since, each passed)"
    ) in step.stdout
    assert "  nDCG@10 ↓ 0.060 " in step.stdout
    assert ": regression since the accepted baseline" in step.stdout
    # The failed run is stored as regressed: a retry fails again, against the same floor.
    retry = cli_eval(golden, write_run(tmp_path, 3), "--fail-on-regression", "--format", "json")
    assert retry.exit_code == 1
    document = as_json(retry)
    assert document["gate"]["floor"]["id"] == floor_id
    assert document["gate"]["floor"]["regressed"] is True
    assert document["outcome"] == "regressed"


def test_accepting_moves_the_floor_and_an_improvement_leaves_it(tmp_path: Path) -> None:
    golden = write_golden(tmp_path)
    history = tmp_path / HISTORY_FILE_NAME
    start = cli_eval(golden, write_run(tmp_path, 5), "--format", "json")  # nDCG@10 0.90
    floor_id = as_json(start)["id"]
    # An improvement to 1.00 passes, and the report says how to keep it; the floor stays.
    better = cli_eval(golden, write_run(tmp_path, 0), "--fail-on-regression", "--format", "json")
    assert better.exit_code == 0
    assert "groove eval: above the accepted baseline of " in better.stderr
    assert "`groove baseline accept` keeps the gain" in better.stderr
    assert history.exists()
    # Back down in steps of 0.04: 0.96, 0.92 and 0.88 pass (the floor is still 0.90; had
    # the gain moved it to 1.00, 0.92 would have failed) ...
    for broken in (2, 4, 6):
        step = cli_eval(golden, write_run(tmp_path, broken), "--fail-on-regression")
        assert step.exit_code == 0, step.stderr
    # ... and 0.84 fails, 0.04 below the previous run but 0.06 below the floor of 0.90.
    low = cli_eval(golden, write_run(tmp_path, 8), "--fail-on-regression", "--format", "json")
    assert low.exit_code == 1
    assert as_json(low)["gate"]["floor"]["id"] == floor_id
    # Accepting that run moves the floor to it: the same run passes now, and the next
    # steps are measured from there (0.80 passes, 0.78 is 0.06 below 0.84).
    accepted = CliRunner().invoke(cli, ["baseline", "accept", "--golden", str(golden)])
    assert accepted.exit_code == 0, accepted.stderr
    again = cli_eval(golden, write_run(tmp_path, 8), "--fail-on-regression", "--format", "json")
    assert again.exit_code == 0, again.stderr
    assert as_json(again)["baseline_id"] == as_json(low)["id"]
    lower = cli_eval(golden, write_run(tmp_path, 10), "--fail-on-regression", "--format", "json")
    assert lower.exit_code == 0
    floor = as_json(lower)["gate"]["floor"]
    assert (floor["id"], floor["source"]) == (
        as_json(low)["id"],
        "accepted with groove baseline accept",
    )
    assert cli_eval(golden, write_run(tmp_path, 11), "--fail-on-regression").exit_code == 1
    ids = [r.id for r in load_history(history).runs]
    assert floor_id in ids and as_json(low)["id"] in ids


def test_a_history_that_never_falls_below_its_floor_reads_as_the_seed(tmp_path: Path) -> None:
    """No run below its first run: no floor line, no JSON key, the seed's messages."""
    golden = write_golden(tmp_path)
    outputs = []
    for broken in (2, 3, 1, 3):  # 0.96, 0.94, 0.98, 0.94: never 0.05 below the first run
        step = cli_eval(golden, write_run(tmp_path, broken), "--fail-on-regression", "--no-color")
        assert step.exit_code == 0
        outputs.append(step)
        assert "Floor" not in step.stdout
        assert "accepted baseline" not in step.stderr
    document = as_json(cli_eval(golden, write_run(tmp_path, 2), "--format", "json"))
    assert "floor" not in document["gate"]
    assert document["gate"]["baseline"]["newest"] is True  # the seed's only candidate
    assert "Aggregate (previous run: " in outputs[-1].stdout


def test_a_slow_decline_fails_through_the_api(tmp_path: Path) -> None:
    golden = write_golden(tmp_path)

    def step(broken: int) -> groove.EvalRun:
        return groove.evaluate(
            None,
            golden,
            retriever=f"run:{write_run(tmp_path, broken)}",
            retriever_name=NAME,
            fail_on_regression=True,
            save_history=True,
        )

    first = step(0)
    verdicts = [step(broken).verdict for broken in (1, 2, 3)]
    assert verdicts == ["passed", "passed", "regression"]
    failed = step(3)
    assert failed.exit_code == 1
    assert failed.floor is not None and failed.floor.run is not None
    assert failed.floor.run.id == first.record.id
    assert "nDCG@10" in failed.floor_fell
    assert failed.regressed_metrics == failed.floor_fell  # each step itself passed
    # The API also accepts the run as the floor: the same run passes afterwards.
    groove.accept_baseline(tmp_path, failed.record.id)
    assert step(3).verdict == "passed"


@pytest.mark.slow
def test_a_slow_decline_fails_through_the_notebook_runner(tmp_path: Path) -> None:
    from groove.notebooks import runner

    golden = write_golden(tmp_path)

    def step(broken: int, out: str) -> Any:
        parameters = {
            "golden": str(golden),
            "retriever": f"run:{write_run(tmp_path, broken)}",
            "retriever_name": NAME,
            "fail_on_regression": True,
        }
        return runner.run_notebook(
            "eval-report", kb_path=None, parameters=parameters, out_dir=tmp_path / out
        )

    reports = [step(broken, f"out{broken}") for broken in (0, 1, 2, 3)]
    assert [r.exit_code for r in reports] == [0, 0, 0, 1]
    last = reports[-1].result
    assert last["verdict"] == "regression"
    assert last["gate"]["floor"]["id"] == reports[0].result["id"]
    summary = (tmp_path / "out3" / "summary.md").read_text(encoding="utf-8")
    assert "Floor: accepted baseline: " in summary
    assert ": regression since the accepted baseline" in summary


def test_the_real_engine_catches_a_slow_decline(
    indexed_kb: Any, golden_en: Path, tmp_path: Path
) -> None:
    """The real index and model: two notes disappear one at a time (each costs one of ten
    queries its answer, 0.1, under a threshold of 0.15); the second step fails."""
    kb = indexed_kb("kb_en")
    config = tmp_path / "groove.toml"
    config.write_text("[eval]\nregression_threshold = 0.15\n", encoding="utf-8")
    run = ["--config", str(config), "eval", "--kb-path", str(kb), "--golden", str(golden_en)]
    first = CliRunner().invoke(cli, [*run, "--fail-on-regression", "--format", "json"])
    assert first.exit_code == 0, first.stderr
    codes = []
    for note in ("ops/canary.md", "team/oncall.md"):
        (kb / note).unlink()
        index = CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "--quiet"])
        assert index.exit_code == 0, index.stderr
        step = CliRunner().invoke(cli, [*run, "--fail-on-regression"])
        codes.append(step.exit_code)
    assert codes == [0, 1]
    assert "recall@10 fell 0.200" in step.stderr
    assert f"since the accepted baseline of {as_json(first)['timestamp']}" in step.stderr
    assert "over 2 runs that each passed" in step.stderr
