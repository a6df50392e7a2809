"""The committed baseline file: written by a decision, reviewed in a diff, read by the gate.

``groove baseline accept --file`` writes ``<golden stem>.baseline.json``; when it exists the
gate compares with it, with or without a history. The file follows the history file's
rules: guarded reads (symlinks, hard links, the cap), atomic writes, and a corrupted file
is a clear error, never a silent pass. Runs from a run file (tests/test_floor.py) keep the
metrics exact; the last test runs the real engine on kb_en.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from helpers.decline import NAME, as_json, write_golden, write_run

import groove
from groove.cli import cli
from groove.history import baseline_file
from groove.history.history import HISTORY_FILE_NAME


def eval_(golden: Path, broken: int, *options: str) -> Result:
    run = write_run(golden.parent, broken)
    args = ["eval", "--retriever", f"run:{run}", "--retriever-name", NAME, "--golden", str(golden)]
    return CliRunner().invoke(cli, [*args, *options])


def accept(golden: Path, *options: str) -> Result:
    return CliRunner().invoke(cli, ["baseline", "accept", "--golden", str(golden), *options])


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    return write_golden(tmp_path)


def test_accept_writes_a_small_sorted_file_with_one_query_per_line(golden: Path) -> None:
    first = eval_(golden, 5, "--format", "json")
    accepted = accept(golden, "--file")
    assert accepted.exit_code == 0, accepted.stderr
    path = golden.parent / "golden.baseline.json"
    run_id = as_json(first)["id"]
    assert accepted.stdout == (
        f"accepted {run_id} ({as_json(first)['timestamp']}) into {path}: run decline, limit 10\n"
    )
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    # 7 keys, sorted; the per-query list spans one line per scored query
    keys = [line.split('"')[1] for line in lines if line.startswith('  "')]
    assert keys == sorted(keys) == [
        "aggregate", "corpus", "fingerprint", "format", "golden_hash", "per_query", "run"
    ]  # fmt: skip
    queries = [line for line in lines if line.startswith('    {"id": ')]
    assert len(queries) == 50 and len(lines) == 2 + 6 + 2 + 50
    assert queries[0] == (
        '    {"id": "q00", "expected": [{"path": "doc00.md", "heading": null}], "metrics": '
        '{"recall_at_k": {"1": 0.0, "5": 0.0, "10": 0.0}, "reciprocal_rank": 0.0, '
        '"ndcg_at_k": {"1": 0.0, "5": 0.0, "10": 0.0}}},'
    )
    document = json.loads(text)
    assert document["run"] == {"id": run_id, "timestamp": as_json(first)["timestamp"]}
    assert document["golden_hash"] == document["fingerprint"]["golden_hash"]
    assert document["aggregate"]["ndcg_at_k"]["10"] == pytest.approx(0.9)
    # Deterministic: accepting the same run again writes the same bytes (and says so).
    before = path.read_bytes()
    again = accept(golden, "--file")
    assert again.exit_code == 0
    assert "(unchanged)" in again.stdout
    assert path.read_bytes() == before
    # The history was only read: no run is marked accepted there.
    history = json.loads((golden.parent / HISTORY_FILE_NAME).read_text(encoding="utf-8"))
    assert not any(run.get("accepted") for run in history["runs"])


def test_the_file_gates_with_and_without_a_history(golden: Path) -> None:
    eval_(golden, 0)
    assert accept(golden, "--file").exit_code == 0
    (golden.parent / HISTORY_FILE_NAME).unlink()  # an uncached CI job
    # --no-history: the file is the only comparison, and it is applied.
    passed = eval_(golden, 2, "--no-history", "--fail-on-regression", "--require-baseline")
    assert passed.exit_code == 0, passed.stderr
    assert f"baseline file {golden.parent / 'golden.baseline.json'})" in passed.stdout
    failed = eval_(golden, 3, "--no-history", "--fail-on-regression", "--format", "json")
    assert failed.exit_code == 1
    assert "Regressed: recall@1 down 0.060" in failed.stderr
    assert as_json(failed)["gate"]["applied"] is True
    # With a fresh history the first run is compared with the file, not "no baseline".
    fresh = eval_(golden, 1, "--fail-on-regression", "--require-baseline", "--format", "json")
    assert fresh.exit_code == 0
    assert (
        as_json(fresh)["baseline_id"]
        == json.loads((golden.parent / "golden.baseline.json").read_text(encoding="utf-8"))["run"][
            "id"
        ]
    )
    # A slow decline against the file: the history's runs each pass, the file catches it.
    assert eval_(golden, 2, "--fail-on-regression").exit_code == 0  # 0.04 below the file
    step = eval_(golden, 3, "--fail-on-regression")  # 0.02 below the run before, 0.06 below it
    assert step.exit_code == 1
    assert "over 3 runs that each passed" in step.stderr
    assert "baseline file " in step.stderr
    # A pin keeps working beside the file: compared with the pin, floored by the file.
    pin = CliRunner().invoke(cli, ["baseline", "set", "main", "--golden", str(golden)])
    assert pin.exit_code == 0
    pinned = eval_(golden, 3, "--baseline", "main", "--fail-on-regression", "--format", "json")
    assert as_json(pinned)["gate"]["baseline"]["name"] == "main"
    assert as_json(pinned)["gate"]["floor"]["file"] is not None


def test_an_accepted_drop_moves_the_file_and_its_diff_shows_the_metrics(golden: Path) -> None:
    eval_(golden, 0)
    accept(golden, "--file")
    path = golden.parent / "golden.baseline.json"
    before = path.read_text(encoding="utf-8").splitlines()
    drop = eval_(golden, 2, "--fail-on-regression")
    assert drop.exit_code == 0  # 0.04: under the threshold, but a drop someone intends
    assert accept(golden, "--file").exit_code == 0
    after = path.read_text(encoding="utf-8").splitlines()
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    # the aggregate, exactly the two queries that lost their answer, and the run
    assert [b.split('"')[1] for _, b in changed] == ["aggregate", "id", "id", "run"]
    assert [b[:20] for _, b in changed[1:3]] == ['    {"id": "q00", "e', '    {"id": "q01", "e']
    assert all('"reciprocal_rank": 0.0' in b for _, b in changed[1:3])


def _write(path: Path, data: Any) -> None:
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "Expecting property name enclosed in double quotes"),
        ({"format": 99}, "format 99, expected 1"),
        ({"format": 1}, "'fingerprint'"),
    ],
)
def test_a_corrupted_file_is_a_clear_error(golden: Path, content: Any, reason: str) -> None:
    path = golden.parent / "golden.baseline.json"
    _write(path, content)
    result = eval_(golden, 0, "--fail-on-regression")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: the baseline file {path} is corrupted ({reason}"), (
        result.stderr
    )
    assert "hint: restore it from version control, or write it again with groove baseline " in (
        result.stderr
    )
    assert not (golden.parent / HISTORY_FILE_NAME).exists()  # nothing half-written


def test_a_hard_linked_or_symlinked_file_is_refused(golden: Path, tmp_path: Path) -> None:
    eval_(golden, 0)
    accept(golden, "--file")
    path = golden.parent / "golden.baseline.json"
    outside = tmp_path / "elsewhere.json"
    os.link(path, outside)
    linked = eval_(golden, 0)
    assert linked.exit_code == 2
    assert linked.stderr.startswith(
        f"Error: refusing to read the baseline file: {path} has more than one name (hard link)"
    )
    # Accepting into it is refused too: the other name would change with it.
    refused = accept(golden, "--file")
    assert refused.exit_code == 2
    assert "refusing to replace the baseline file" in refused.stderr
    path.unlink()
    path.symlink_to(outside)
    assert "is not a regular file" in eval_(golden, 0).stderr


def test_a_file_over_the_cap_is_refused_on_read_and_write(
    golden: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    eval_(golden, 0)
    accept(golden, "--file")
    path = golden.parent / "golden.baseline.json"
    size = path.stat().st_size
    monkeypatch.setattr(baseline_file, "MAX_BASELINE_FILE_BYTES", size - 1)
    read = eval_(golden, 0)
    assert read.exit_code == 2
    assert f"{path} is {size} bytes, over the {size - 1} byte limit" in read.stderr
    path.unlink()
    written = accept(golden, "--file")
    assert written.exit_code == 2
    assert f"the run serialises to {size} bytes, over the {size - 1} byte cap" in written.stderr
    assert not path.exists()


def test_accept_never_overwrites_a_file_that_is_not_a_baseline(golden: Path) -> None:
    eval_(golden, 0)
    before = golden.read_bytes()
    result = accept(golden, "--file", str(golden))
    assert result.exit_code == 2
    assert f"Error: {golden} is not a groove baseline file; refusing to overwrite it" in (
        result.stderr
    )
    assert golden.read_bytes() == before


def test_a_file_of_another_configuration_is_not_applied(golden: Path) -> None:
    eval_(golden, 0)
    accept(golden, "--file")
    path = golden.parent / "golden.baseline.json"
    # the golden file changes (one more query): the file's golden hash no longer matches
    other = write_golden(golden.parent, count=51)
    result = eval_(other, 0, "--fail-on-regression", "--require-baseline")
    assert result.exit_code == 4
    assert (f"regression gate not applied: the baseline file {path} (") in result.stderr
    assert (
        "has another configuration (golden changed since the baseline file); accept a run of "
        "this one with `groove baseline accept --file`"
    ) in result.stderr


def test_the_baseline_file_setting_and_the_api(golden: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "ci" / "floor.json"
    elsewhere.parent.mkdir()
    config = tmp_path / "groove.toml"
    config.write_text(f'[eval]\nbaseline_file = "{elsewhere}"\n', encoding="utf-8")
    eval_(golden, 0)
    written = CliRunner().invoke(
        cli, ["--config", str(config), "baseline", "accept", "--golden", str(golden), "--file"]
    )
    assert written.exit_code == 0, written.stderr
    assert elsewhere.exists() and not (golden.parent / "golden.baseline.json").exists()
    gated = CliRunner().invoke(
        cli,
        ["--config", str(config), "eval", "--retriever", f"run:{write_run(tmp_path, 3)}",
         "--retriever-name", NAME, "--golden", str(golden), "--no-history",
         "--fail-on-regression"],
    )  # fmt: skip
    assert gated.exit_code == 1
    # The API: evaluate(baseline_file=...) and accept_baseline(file=...).
    api_file = tmp_path / "api.baseline.json"
    groove.accept_baseline(tmp_path, file=api_file)
    assert api_file.read_bytes() == elsewhere.read_bytes()
    run = groove.evaluate(
        None,
        golden,
        retriever=f"run:{write_run(tmp_path, 3)}",
        retriever_name=NAME,
        history=False,
        baseline_file=api_file,
        fail_on_regression=True,
    )
    assert run.verdict == "regression"
    assert run.floor is not None and run.floor.from_file


def test_a_file_in_a_missing_folder_is_a_one_line_error_and_nothing_is_written(
    golden: Path, tmp_path: Path
) -> None:
    """As eval's --junit and --export-run: a folder is never made for a mistyped path."""
    eval_(golden, 0)
    history = golden.parent / HISTORY_FILE_NAME
    before = history.read_bytes()
    target = tmp_path / "no-such-folder" / "floor.json"
    refused = accept(golden, "--file", str(target), "--name", "main")
    assert refused.exit_code == 2
    assert refused.stdout == ""
    assert refused.stderr == (
        f"Error: cannot write the baseline file {target}: No such file or directory\n"
        "hint: check the folder and its permissions\n"
    )
    assert not target.parent.exists()
    assert history.read_bytes() == before  # not pinned either
    with pytest.raises(groove.GrooveError, match="No such file or directory"):
        groove.accept_baseline(tmp_path, file=target)
    assert not target.parent.exists()


def test_a_folder_named_as_the_file_is_called_a_folder(golden: Path, tmp_path: Path) -> None:
    """--file DIR, or [eval].baseline_file naming a folder: said as such, not as a corpus
    note something else took the place of."""
    eval_(golden, 0)
    folder = tmp_path / "baselines"
    folder.mkdir()
    expected = (
        f"Error: the baseline file {folder} is a folder\n"
        f"hint: give the path of a file in it, e.g. {folder}/<golden stem>.baseline.json\n"
    )
    refused = accept(golden, "--file", str(folder))
    assert (refused.exit_code, refused.stderr) == (2, expected)
    assert list(folder.iterdir()) == []
    config = tmp_path / "groove.toml"
    config.write_text(f'[eval]\nbaseline_file = "{folder}"\n', encoding="utf-8")
    read = eval_(golden, 0, "--config", str(config))
    assert (read.exit_code, read.stderr) == (2, expected)


def test_the_real_engine_gates_against_the_file_without_a_history(
    indexed_kb: Any, golden_en: Path, tmp_path: Path
) -> None:
    kb = indexed_kb("kb_en")
    golden = tmp_path / "golden.yml"
    golden.write_bytes(golden_en.read_bytes())
    base = ["eval", "--kb-path", str(kb), "--golden", str(golden)]
    assert CliRunner().invoke(cli, base).exit_code == 0
    accepted = CliRunner().invoke(cli, ["baseline", "accept", "--kb-path", str(kb), "--golden",
                                        str(golden), "--file"])  # fmt: skip
    assert accepted.exit_code == 0, accepted.stderr
    (kb / HISTORY_FILE_NAME).unlink()
    same = CliRunner().invoke(cli, [*base, "--no-history", "--fail-on-regression",
                                    "--require-baseline"])  # fmt: skip
    assert same.exit_code == 0, same.stderr
    for name in ("ops/rollback.md", "data/backup.md"):
        (kb / name).unlink()
    assert CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "--quiet"]).exit_code == 0
    dropped = CliRunner().invoke(cli, [*base, "--no-history", "--fail-on-regression"])
    assert dropped.exit_code == 1
    assert "corpus changed since the baseline run" in dropped.stdout


def test_accepting_into_the_history_while_a_file_exists_says_the_file_rules(
    golden: Path,
) -> None:
    eval_(golden, 0)
    assert accept(golden, "--file", "--name", "main").exit_code == 0
    history = json.loads((golden.parent / HISTORY_FILE_NAME).read_text(encoding="utf-8"))
    assert history["baselines"] == {"main": history["runs"][0]["id"]}  # --name still pins
    eval_(golden, 1)
    plain = accept(golden)
    assert plain.exit_code == 0
    assert plain.stderr == (
        "groove baseline: warning: the gate compares with the baseline file "
        f"{golden.parent / 'golden.baseline.json'}, which this leaves as it is; "
        "groove baseline accept --file moves it\n"
    )
