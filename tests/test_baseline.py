"""The regression gate's baseline only moves on purpose, and the gate never passes silently.

Scenarios a CI user or an analyst runs, with the real model on the kb_en fixture (issue
"A gate you can trust"): re-running a failed CI job, an experiment between two gated runs,
an output that fails, an uncached history, a significant gate that cannot fire, pinned and
accepted baselines. Every failure path must leave the history byte for byte as it was.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from groove.cli import cli
from groove.cli.words import notebook_line
from groove.errors import EXIT_NO_BASELINE
from groove.history.history import HISTORY_FILE_NAME, load_history
from groove.notebooks.pending import PENDING_FILE
from groove.stats.gate import smallest_flaggable_n, unreachable_reason

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")
ADAPTER = Path(__file__).parent / "helpers" / "adapter.py"
NOT_APPLIED = "groove eval: warning: regression gate not applied: "


def groove(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def kb(indexed_kb) -> Path:  # type: ignore[no-untyped-def]
    return indexed_kb("kb_en")


def evaluate(kb: Path, golden: Path, *options: str) -> Result:
    return groove("eval", "--kb-path", str(kb), "--golden", str(golden), *options)


def history_bytes(kb: Path) -> bytes:
    return (kb / HISTORY_FILE_NAME).read_bytes()


def drop_documents(kb: Path, *names: str) -> None:
    for name in names:
        (kb / name).unlink()
    index = groove("index", "--kb-path", str(kb), "--quiet")
    assert index.exit_code == 0, index.stderr


def run_file(tmp_path: Path, golden: Path) -> Path:
    """A run file whose hits put every expected answer at rank 1."""
    lines = []
    for q in yaml.safe_load(golden.read_text(encoding="utf-8"))["queries"]:
        hit = {"path": q["expected"][0]["path"], "heading": q["expected"][0].get("heading")}
        lines.append(json.dumps({"id": q["id"], "hits": [hit]}))
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def as_json(result: Result) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(result.stdout)
    return document


# ---------------------------------------------------------------- (a) re-running a failed job


def test_rerunning_a_failed_ci_job_fails_again_until_the_drop_is_accepted(
    kb: Path, golden_en: Path
) -> None:
    first = evaluate(kb, golden_en, "--fail-on-regression", "--format", "json")
    assert first.exit_code == 0
    first_id = as_json(first)["id"]
    drop_documents(kb, "ops/rollback.md", "data/backup.md")
    failed = evaluate(kb, golden_en, "--fail-on-regression", "--format", "json")
    assert failed.exit_code == 1
    assert as_json(failed)["outcome"] == "regressed"
    # The retry is compared with the last run that passed, not with the failed one.
    retry = evaluate(kb, golden_en, "--fail-on-regression", "--no-color")
    assert retry.exit_code == 1, retry.stdout
    assert f"Aggregate (baseline: <T> · {first_id}, newest passing run of this configuration)" in (
        STAMP.sub("<T>", retry.stdout)
    )
    assert "retrieval-quality regression detected" in retry.stderr
    # A regressed run made without --fail-on-regression cannot become the baseline either.
    local = evaluate(kb, golden_en, "--format", "json")
    assert local.exit_code == 0
    assert as_json(local)["outcome"] == "regressed"
    assert as_json(local)["baseline_id"] == first_id
    # Accepting the drop on purpose moves the baseline; the next gated run passes.
    accepted = groove("baseline", "accept", "--kb-path", str(kb))
    assert accepted.exit_code == 0, accepted.stderr
    assert accepted.stdout == (
        f"accepted {as_json(local)['id']} ({as_json(local)['timestamp']}): "
        "sentence-transformers/all-MiniLM-L6-v2, lexical auto, limit 10\n"
    )
    after = evaluate(kb, golden_en, "--fail-on-regression", "--format", "json")
    assert after.exit_code == 0
    assert as_json(after)["baseline_id"] == as_json(local)["id"]
    assert as_json(after)["gate"]["applied"] is True


# ---------------------------------------------------------------- (b) an experiment


def test_experiments_neither_displace_nor_switch_off_the_gate(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    first = evaluate(kb, golden_en, "--format", "json")
    assert first.exit_code == 0
    base_id = as_json(first)["id"]
    spec = f"command:{sys.executable} {ADAPTER} {run_file(tmp_path, golden_en)}"
    experiment = evaluate(kb, golden_en, "--retriever", spec)
    assert experiment.exit_code == 0, experiment.stderr
    other_mode = evaluate(kb, golden_en, "--lexical", "porter", "--format", "json")
    assert other_mode.exit_code == 0, other_mode.stderr
    assert as_json(other_mode)["fingerprint"]["lexical"] == "porter"
    wide = evaluate(kb, golden_en, "--limit", "20")  # another setting of the fingerprint
    assert wide.exit_code == 0
    drop_documents(kb, "ops/rollback.md", "data/backup.md", "data/restore.md")
    gated = evaluate(kb, golden_en, "--fail-on-regression", "--no-color")
    assert gated.exit_code == 1, gated.stdout
    text = STAMP.sub("<T>", gated.stdout)
    assert (
        f"Aggregate (baseline: <T> · {base_id}, newest passing run of this configuration)" in text
    )
    assert "diff disabled" not in text
    assert "⚠️ corpus changed since the baseline run (9 -> 6 documents" in text
    # The experiments are still in the history; the baseline was not trimmed away.
    assert base_id in {r.id for r in load_history(kb / HISTORY_FILE_NAME).runs}


def test_a_trimmed_history_keeps_the_baseline_and_the_pins(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    config = tmp_path / "groove.toml"
    config.write_text("[eval]\nhistory_size = 2\n", encoding="utf-8")
    first = groove("--config", str(config), "eval", "--kb-path", str(kb), "--golden",
                   str(golden_en), "--format", "json")  # fmt: skip
    base_id = as_json(first)["id"]
    assert (
        groove("--config", str(config), "baseline", "set", "main", "--kb-path", str(kb)).exit_code
        == 0
    )
    for limit in ("11", "12", "13"):  # three experiments, more than history_size
        again = groove("--config", str(config), "eval", "--kb-path", str(kb), "--golden",
                       str(golden_en), "--limit", limit)  # fmt: skip
        assert again.exit_code == 0
    history = load_history(kb / HISTORY_FILE_NAME)
    assert [r.fingerprint.limit for r in history.runs] == [13, 12, 10]
    assert history.pins == {"main": base_id}


# ---------------------------------------------------------------- (c) an output that fails


def test_a_failed_export_leaves_the_history_and_the_retry_sees_the_change(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    assert evaluate(kb, golden_en).exit_code == 0
    before = history_bytes(kb)
    drop_documents(kb, "ops/rollback.md", "data/backup.md", "data/restore.md")
    missing = tmp_path / "no-such-folder" / "run.txt"
    failed = evaluate(kb, golden_en, "--export-run", str(missing), "--fail-on-regression")
    assert failed.exit_code == 2
    assert failed.stderr.startswith("Error: ")
    assert history_bytes(kb) == before
    retry = evaluate(kb, golden_en, "--fail-on-regression")
    assert retry.exit_code == 1
    assert "  ✗ rollback-when            recall@10: 1.00 → 0.00\n" in retry.stdout


def test_a_failing_retriever_leaves_the_history(kb: Path, golden_en: Path, tmp_path: Path) -> None:
    spec = f"command:{sys.executable} {ADAPTER} {run_file(tmp_path, golden_en)}"
    assert evaluate(kb, golden_en, "--retriever", spec).exit_code == 0
    before = history_bytes(kb)
    failed = evaluate(kb, golden_en, "--retriever", spec + " --fault exit --at 4")
    assert failed.exit_code == 2
    assert history_bytes(kb) == before


# ---------------------------------------------------------------- (d) nothing to compare with


def test_an_uncached_history_says_the_gate_was_not_applied(kb: Path, golden_en: Path) -> None:
    plain = evaluate(kb, golden_en, "--no-history")
    assert plain.exit_code == 0 and plain.stderr == ""  # no gate asked for: nothing to say
    first = evaluate(kb, golden_en, "--fail-on-regression", "--format", "json")
    assert first.exit_code == 0
    assert first.stderr == f"{NOT_APPLIED}no previous run in the history\n"
    gate = as_json(first)["gate"]
    assert (gate["applied"], gate["reason"], gate["baseline"]) == (
        False,
        "no previous run in the history",
        None,
    )
    (kb / HISTORY_FILE_NAME).unlink()  # a CI cache that was not restored
    required = evaluate(kb, golden_en, "--fail-on-regression", "--require-baseline")
    assert required.exit_code == EXIT_NO_BASELINE == 4
    assert required.stderr == (
        f"{NOT_APPLIED}no previous run in the history\n"
        "groove eval: the regression gate could not be applied (no previous run in the "
        "history). Exiting with code 4 because --require-baseline was set.\n"
    )
    # A run nothing judged does not become the baseline: the retry fails the same way.
    assert not (kb / HISTORY_FILE_NAME).exists()
    assert evaluate(kb, golden_en, "--require-baseline").exit_code == 4


def test_require_baseline_from_groove_toml_and_a_missing_pin(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    config = tmp_path / "groove.toml"
    config.write_text('[eval]\nrequire_baseline = true\nbaseline = "main"\n', encoding="utf-8")
    assert evaluate(kb, golden_en).exit_code == 0  # seeds the history (no gate asked for)
    args = ["--config", str(config), "eval", "--kb-path", str(kb), "--golden", str(golden_en)]
    missing = groove(*args)
    assert missing.exit_code == 4
    assert f"{NOT_APPLIED}no run is pinned as 'main'\n" in missing.stderr
    pinned = groove("baseline", "set", "main", "--kb-path", str(kb))
    assert pinned.exit_code == 0
    again = groove(*args, "--format", "json")
    assert again.exit_code == 0, again.stderr
    baseline = as_json(again)["gate"]["baseline"]
    assert (baseline["why"], baseline["name"]) == ("pinned as 'main'", "main")


def test_a_pinned_run_of_another_configuration_is_not_applied(kb: Path, golden_en: Path) -> None:
    assert evaluate(kb, golden_en, "--limit", "20").exit_code == 0
    assert groove("baseline", "set", "main", "--kb-path", str(kb)).exit_code == 0
    result = evaluate(kb, golden_en, "--baseline", "main", "--fail-on-regression", "--no-color")
    assert result.exit_code == 0
    assert NOT_APPLIED + "the run pinned as 'main' (" in result.stderr
    assert "has another configuration (config or metric version changed since the pinned run)" in (
        result.stderr
    )


def test_no_diff_and_no_history_are_reported_as_not_applied(kb: Path, golden_en: Path) -> None:
    assert evaluate(kb, golden_en).exit_code == 0
    off = evaluate(kb, golden_en, "--no-diff", "--fail-on-regression")
    assert off.exit_code == 0
    assert off.stderr == f"{NOT_APPLIED}--no-diff: the comparison was switched off\n"
    none = evaluate(kb, golden_en, "--no-history", "--fail-on-regression", "--require-baseline")
    assert none.exit_code == 4
    assert "--no-history: no history was read" in none.stderr


def test_a_significant_gate_that_cannot_fire_is_not_applied(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    needed = smallest_flaggable_n("significant", 0.05, 7)  # recall@1,5,10, MRR, nDCG@1,5,10
    assert needed > 1
    data = yaml.safe_load(golden_en.read_text(encoding="utf-8"))
    small = tmp_path / "small.yml"
    queries = (data["queries"] * 2)[: needed - 1]
    queries = [{**q, "id": f"{q['id']}-{i}"} for i, q in enumerate(queries)]
    small.write_text(yaml.safe_dump({"queries": queries}), encoding="utf-8")
    assert evaluate(kb, small).exit_code == 0
    args = ("--regression-gate", "significant", "--fail-on-regression", "--format", "json")
    result = evaluate(kb, small, *args)
    assert result.exit_code == 0
    reason = unreachable_reason(needed - 1, "significant", 0.05, 7)
    assert reason is not None and f"with {needed - 1} paired queries" in reason
    assert result.stderr == f"{NOT_APPLIED}{reason}\n"
    assert as_json(result)["gate"]["applied"] is False
    assert as_json(result)["gate"]["reason"] == reason
    assert evaluate(kb, small, *args, "--require-baseline").exit_code == 4


# ---------------------------------------------------------------- groove baseline


def test_baseline_commands_and_their_errors(kb: Path, golden_en: Path) -> None:
    empty = groove("baseline", "set", "main", "--kb-path", str(kb))
    assert empty.exit_code == 2
    assert empty.stderr.startswith("Error: the eval history ")
    assert empty.stderr.splitlines()[0].endswith(" holds no runs")
    first = as_json(evaluate(kb, golden_en, "--format", "json"))
    second = as_json(evaluate(kb, golden_en, "--limit", "20", "--format", "json"))
    unknown = groove("baseline", "set", "main", "--run", "zzzz", "--kb-path", str(kb))
    assert (unknown.exit_code, unknown.stderr) == (
        2,
        "Error: no run in the eval history has the name or id 'zzzz'\n"
        "hint: groove baseline list shows the ids and names\n",
    )
    ambiguous = groove("baseline", "set", "main", "--run", "", "--kb-path", str(kb))
    assert ambiguous.exit_code == 2
    pinned = groove("baseline", "set", "main", "--run", first["id"][:6], "--kb-path", str(kb))
    assert pinned.stdout == (
        f"baseline 'main' -> {first['id']} ({first['timestamp']}): "
        "sentence-transformers/all-MiniLM-L6-v2, lexical auto, limit 10\n"
    )
    bad = groove("baseline", "set", "no spaces", "--kb-path", str(kb))
    assert bad.exit_code == 2 and "is not a plain name" in bad.stderr
    listing = groove("baseline", "list", "--kb-path", str(kb))
    assert listing.exit_code == 0
    lines = listing.stdout.splitlines()
    assert lines[0].split() == ["id", "name", "timestamp", "outcome", "against", "configuration"]
    assert lines[1].startswith(f"{second['id']}  -     {second['timestamp']}  no-baseline  -  ")
    assert lines[2].startswith(f"{first['id']}  -     {first['timestamp']}  no-baseline  -  ")
    assert lines[2].endswith("limit 10  [main]")
    gone = groove("baseline", "unset", "main", "--kb-path", str(kb))
    assert gone.stdout == f"baseline 'main' removed (was {first['id']})\n"
    again = groove("baseline", "unset", "main", "--kb-path", str(kb))
    assert (again.exit_code, again.stderr) == (
        2,
        "Error: no baseline is named 'main'\nhint: pinned names: none\n",
    )


def test_two_identical_runs_in_one_second_get_ids_that_can_be_pinned(
    kb: Path, golden_en: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run file evaluated twice within a second measured the same thing at the same
    timestamp: both runs got one id, and `baseline set --run ID` said "ambiguous: X, X"."""
    import groove.evaluation.run as run_module

    class Frozen(run_module.datetime):  # type: ignore[misc,name-defined]
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return run_module.datetime(2026, 1, 2, 3, 4, 5, tzinfo=tz)

    monkeypatch.setattr(run_module, "datetime", Frozen)
    spec = f"run:{run_file(tmp_path, golden_en)}"
    first = as_json(evaluate(kb, golden_en, "--retriever", spec, "--format", "json"))
    second = as_json(evaluate(kb, golden_en, "--retriever", spec, "--format", "json"))
    assert first["timestamp"] == second["timestamp"] and first["aggregate"] == second["aggregate"]
    assert first["id"] != second["id"]
    assert [r.id for r in load_history(kb / HISTORY_FILE_NAME).runs] == [second["id"], first["id"]]
    pinned = groove("baseline", "set", "main", "--run", first["id"], "--kb-path", str(kb))
    assert pinned.exit_code == 0, pinned.stderr


def test_a_missing_pin_is_not_reported_as_a_configuration_change(kb: Path, golden_en: Path) -> None:
    """`--baseline main` before `groove baseline set main`: the report said "config or
    metric version changed since last run" although nothing changed; it names the cause."""
    assert evaluate(kb, golden_en).exit_code == 0
    result = evaluate(kb, golden_en, "--baseline", "main", "--fail-on-regression")
    assert result.exit_code == 0, result.stderr
    assert "config or metric version changed" not in result.stdout
    assert "⚠️ no run is pinned as 'main', diff disabled\n" in result.stdout
    assert NOT_APPLIED + "no run is pinned as 'main'" in result.stderr
    markdown = evaluate(kb, golden_en, "--baseline", "main", "--format", "markdown")
    assert "config or metric version changed" not in markdown.stdout
    assert "no run is pinned as 'main', diff disabled" in markdown.stdout


def test_pinning_the_newest_run_says_which_configuration_it_pinned(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    """The first CI run exits 4 and is not stored, so `groove baseline set main` pinned the
    newest stored run, an experiment with another retriever, and said only its id: every
    later gated run then exited 4 with no clue why the pin was that run."""
    assert evaluate(kb, golden_en).exit_code == 0
    spec = f"run:{run_file(tmp_path, golden_en)}"
    experiment = as_json(
        evaluate(kb, golden_en, "--retriever", spec, "--retriever-name", "exp", "--format", "json")
    )
    refused = evaluate(kb, golden_en, "--fail-on-regression", "--baseline", "main",
                       "--require-baseline")  # fmt: skip
    assert refused.exit_code == EXIT_NO_BASELINE
    pinned = groove("baseline", "set", "main", "--kb-path", str(kb))
    assert pinned.stdout == (
        f"baseline 'main' -> {experiment['id']} ({experiment['timestamp']}): run exp, limit 10\n"
    )
    accepted = groove("baseline", "accept", "--kb-path", str(kb))
    assert accepted.stdout == (
        f"accepted {experiment['id']} ({experiment['timestamp']}): run exp, limit 10\n"
    )


def test_a_baseline_name_no_pin_can_have_is_bad_input(kb: Path, golden_en: Path) -> None:
    """`groove eval --baseline "bad name"` exited 0 (4 with --require-baseline) on a name
    `groove baseline set` refuses, so no run could ever be pinned under it."""
    import groove

    assert evaluate(kb, golden_en).exit_code == 0
    before = history_bytes(kb)
    result = evaluate(kb, golden_en, "--baseline", "bad name", "--fail-on-regression")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("Error: --baseline 'bad name' is not a plain name\nhint: ")
    assert history_bytes(kb) == before
    with pytest.raises(groove.ConfigError, match="keyword baseline 'bad name' is not a plain"):
        groove.evaluate(kb, golden_en, baseline="bad name")


def test_a_history_written_before_run_ids_still_gates(kb: Path, golden_en: Path) -> None:
    assert evaluate(kb, golden_en).exit_code == 0
    path = kb / HISTORY_FILE_NAME
    data = json.loads(path.read_text(encoding="utf-8"))
    for run in data["runs"]:  # the seed's layout: no id, no outcome
        for key in ("id", "baseline_id", "outcome"):
            run.pop(key)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    old = load_history(path).runs[0]
    assert old.run_id is None and len(old.id) == 10
    drop_documents(kb, "ops/rollback.md", "data/backup.md")
    result = evaluate(kb, golden_en, "--fail-on-regression", "--format", "json")
    assert result.exit_code == 1
    assert as_json(result)["baseline_id"] == old.id
    assert load_history(path).runs[1].run_id == old.id  # the derived id is now stored


# ---------------------------------------------------------------- notebooks and the runner


def test_the_eval_cell_saves_only_after_its_files(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    from groove.notebooks import kernel

    first = kernel.eval_report(kb_path=kb, golden=golden_en, result_path=tmp_path / "result.json")
    assert first.exit_code == 0
    before = history_bytes(kb)
    with pytest.raises(OSError):  # result.json cannot be written: no run is added
        kernel.eval_report(kb_path=kb, golden=golden_en, result_path=tmp_path / "no" / "r.json")
    assert history_bytes(kb) == before
    required = kernel.eval_report(
        kb_path=kb,
        golden=golden_en,
        baseline="main",
        require_baseline=True,
        result_path=tmp_path / "required.json",
    )
    assert required.exit_code == 4
    written = json.loads((tmp_path / "required.json").read_text(encoding="utf-8"))
    assert (written["verdict"], written["exit_code"]) == ("not-applied", 4)
    assert written["gate"]["reason"] == "no run is pinned as 'main'"
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "> ⚠️ warning: regression gate not applied: no run is pinned as 'main'\n" in summary
    assert history_bytes(kb) == before


@pytest.mark.slow
def test_a_runner_failure_after_the_eval_cell_leaves_the_history(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    import nbformat

    from groove.notebooks import runner

    assert evaluate(kb, golden_en).exit_code == 0
    before = history_bytes(kb)
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("result_path = 'result.json'\nkb_path = None")
    params.metadata["tags"] = ["parameters"]
    run_cell = (
        "from groove.notebooks import kernel\n"
        f"outcome = kernel.eval_report(kb_path=kb_path, golden={str(golden_en)!r}, "
        "result_path=result_path)"
    )
    nb.cells = [params, nbformat.v4.new_code_cell(run_cell)]
    nb.cells.append(nbformat.v4.new_code_cell("raise RuntimeError('a later cell broke')"))
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    source = tmp_path / "broken.ipynb"
    nbformat.write(nb, str(source))
    report = runner.run_notebook(None, notebook=source, kb_path=kb, out_dir=tmp_path / "out")
    assert report.exit_code == 3
    assert "a later cell broke" in report.result["error"]
    assert history_bytes(kb) == before
    assert not (tmp_path / "out" / PENDING_FILE).exists()
    # The same notebook without the broken cell: the runner adds the run after its files.
    nb.cells.pop()
    nbformat.write(nb, str(source))
    report = runner.run_notebook(None, notebook=source, kb_path=kb, out_dir=tmp_path / "out")
    assert report.exit_code == 0, report.result
    assert len(load_history(kb / HISTORY_FILE_NAME).runs) == 2
    assert not (tmp_path / "out" / PENDING_FILE).exists()


@pytest.mark.slow
def test_the_runner_exits_4_when_the_gate_cannot_be_applied(
    kb: Path, golden_en: Path, tmp_path: Path
) -> None:
    from groove.notebooks import runner

    out = tmp_path / "out"
    parameters = {"golden": str(golden_en), "fail_on_regression": True, "require_baseline": True}
    report = runner.run_notebook("eval-report", kb_path=kb, parameters=parameters, out_dir=out)
    assert (report.exit_code, report.result["verdict"]) == (4, "not-applied")
    assert notebook_line(report) == (
        "eval-report: regression gate not applied (no previous run in the history) (exit 4) "
        f"-> {out / 'eval-report.html'}"
    )
    assert not (kb / HISTORY_FILE_NAME).exists()
    result = CliRunner().invoke(
        cli, ["notebook", "run", "eval-report", "--kb-path", str(kb), "--out", str(out),
              "-p", "golden", str(golden_en), "-p", "require_baseline", "true"]
    )  # fmt: skip
    assert result.exit_code == 4


# ---------------------------------------------------------------- the API


def test_the_runs_the_baseline_api_returns_introduce_themselves_briefly(
    kb: Path, golden_en: Path
) -> None:
    """`groove.accept_baseline(kb)` in a REPL printed the dataclass repr of the run: every
    hit of every query (20 KB for 10 queries, megabytes for a large golden set)."""
    import groove
    from groove.cards import MAX_REPR_CHARS

    first = groove.evaluate(kb, golden_en, save_history=True)
    pinned = groove.set_baseline(kb, "main")
    drop_documents(kb, "ops/rollback.md")
    groove.evaluate(kb, golden_en, baseline="main", fail_on_regression=True, save_history=True)
    accepted = groove.accept_baseline(kb)
    for run, verdict in ((pinned, "no baseline to compare with"), (accepted, "fell")):
        text = repr(run)
        assert len(text) <= MAX_REPR_CHARS, len(text)
        assert text.startswith(f"<RunRecord: eval run {run.id} ({run.timestamp})")
        assert verdict in text.splitlines()[1]
        assert "RankedHit(" not in text and "recall@10" in text
        assert run._repr_html_().startswith('<div class="groove-card"')
    assert "accepted" in repr(accepted).splitlines()[1]
    assert pinned == first.record  # equality still compares the fields


def test_the_api_reports_the_gate_and_edits_the_baselines(kb: Path, golden_en: Path) -> None:
    import groove

    lone = groove.evaluate(
        kb, golden_en, fail_on_regression=True, require_baseline=True, save_history=True
    )
    assert lone.exit_code == 4 and lone.gate_status is not None
    assert lone.gate_status.reason == "no previous run in the history"
    assert [n.message for n in lone.notes] == [
        "regression gate not applied: no previous run in the history"
    ]
    assert not (kb / HISTORY_FILE_NAME).exists() and not lone.history_saved
    first = groove.evaluate(kb, golden_en, save_history=True)
    assert first.history_saved and first.record.outcome == "no-baseline"
    assert groove.set_baseline(kb, "main").id == first.record.id
    drop_documents(kb, "ops/rollback.md")
    fell = groove.evaluate(kb, golden_en, baseline="main", fail_on_regression=True)
    assert fell.exit_code == 1 and fell.baseline is not None
    assert fell.baseline.why == "pinned as 'main'"
    # the card (what typing the run in Jupyter shows) names the pinned baseline too
    assert f"{first.record.id}, pinned as 'main'" in repr(fell)
    assert not fell.history_saved  # the API's default: an exploratory run is not kept
    saved = groove.evaluate(kb, golden_en, save_history=True)
    assert saved.record.outcome == "regressed"
    accepted = groove.accept_baseline(kb, saved.record.id[:4], name="main")
    assert accepted.accepted and accepted.id == saved.record.id
    assert groove.load_history(kb).pins == {"main": saved.record.id}
    again = groove.evaluate(kb, golden_en, fail_on_regression=True)
    assert again.exit_code == 0 and again.previous is not None
    assert again.previous.id == saved.record.id  # the accepted run is the newest passing one
    assert groove.unset_baseline(kb, "main") == saved.record.id
    with pytest.raises(groove.HistoryError, match="no baseline is named 'main'"):
        groove.unset_baseline(kb, "main")


def test_the_runner_appends_a_pending_run_only_with_every_file_written(tmp_path: Path) -> None:
    from helpers.history_jobs import make_record

    from groove.history.history import append_run, history_path
    from groove.notebooks import pending, runner

    history = history_path(tmp_path)
    append_run(history, make_record(0), 10)
    before = history.read_bytes()
    result = tmp_path / "out" / "result.json"
    result.parent.mkdir()
    ran = {"verdict": "passed", "exit_code": 0}
    pending.leave(result, make_record(1), history, 10)
    document = runner._commit(pending.pending_path(result), result, dict(ran), html_made=False)
    assert (document["exit_code"], document["error"]) == (
        3,
        "the HTML page could not be written, so the run was not added to the history",
    )
    assert history.read_bytes() == before and not pending.pending_path(result).exists()
    pending.leave(result, make_record(1), history, 10)
    refused = {"verdict": "not-applied", "exit_code": 4}
    assert runner._commit(pending.pending_path(result), result, refused, html_made=True) == refused
    assert history.read_bytes() == before
    pending.leave(result, make_record(1), history, 10)
    assert runner._commit(pending.pending_path(result), result, dict(ran), html_made=True) == ran
    assert load_history(history).runs == (make_record(1), make_record(0))
