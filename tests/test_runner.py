"""groove.notebooks.runner: parameters, refusals before execution, exit codes from result.json.

The kernel tests run small notebooks written here (raise, kernel death, no result, a
result with exit code 1); the bundled notebooks run in test_notebooks.py.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.cli.words import notebook_line, summary_line
from groove.errors import NotebookError
from groove.notebooks import cells, runner

EVAL_PARAMETERS = (
    "kb_path",
    "golden",
    "model",
    "k_values",
    "limit",
    "reranker",
    "mmr",
    "mmr_lambda",
    "mmr_same_doc_penalty",
    "parent_retriever",
    "lexical",
    "history",
    "fail_on_regression",
    "baseline",
    "baseline_file",
    "require_baseline",
    "regression_gate",
    "slice_by",
    "gate_slices",
    "slice_min_queries",
    "explain",
    "name",
    "config",
    "retriever",
    "retriever_options",
    "retriever_name",
    "junit",
    "result_path",
)
TUNE_PARAMETERS = (
    "kb_path",
    "golden",
    "model",
    "k_values",
    "limit",
    "lexical",
    "tune_json",
    "config",
    "retriever",
    "retriever_options",
    "retriever_name",
    "family",
    "engine",
    "window",
    "result_path",
)


def _notebook(path: Path, *cells: str) -> Path:
    """A notebook whose parameters cell holds result_path and mode, then ``cells``."""
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("result_path = 'result.json'\nmode = 'ok'")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, *(nbformat.v4.new_code_cell(c) for c in cells)]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, str(path))
    return path


# ---------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("20", 20),
        ("0.5", 0.5),
        ("false", False),
        ("True", True),
        ("null", None),
        ("[1,5,10]", [1, 5, 10]),
        ("{a: 1}", {"a": 1}),
        ("golden.yml", "golden.yml"),
        ("2024-01-01", "2024-01-01"),  # YAML would make a date: keep the text
        ("a: b: c", "a: b: c"),  # not YAML at all: keep the text
        ("", ""),
        ("バックアップ", "バックアップ"),
    ],
)
def test_parse_value_reads_yaml_scalars_like_papermill(text: str, value: object) -> None:
    parsed = runner.parse_value(text)
    assert parsed == value
    assert type(parsed) is type(value)


def test_parse_parameters_later_pair_wins() -> None:
    pairs = (("limit", "5"), ("history", "false"), ("limit", "20"))
    assert runner.parse_parameters(pairs) == {"limit": 20, "history": False}


def test_allowed_parameters_are_read_from_the_parameters_cell() -> None:
    folder = runner.notebook_dir()
    assert runner.allowed_parameters(folder / "eval_report.ipynb") == EVAL_PARAMETERS
    assert runner.allowed_parameters(folder / "tune_explorer.ipynb") == TUNE_PARAMETERS


def test_unknown_and_runner_owned_parameters_are_refused() -> None:
    with pytest.raises(NotebookError) as unknown:
        runner.check_parameters({"limt": 5}, ("limit", "result_path"), "eval-report")
    assert unknown.value.message == "unknown parameter 'limt' for eval-report; allowed: limit"
    assert unknown.value.hint == "did you mean -p limit?"
    with pytest.raises(NotebookError) as owned:
        runner.check_parameters({"result_path": "x"}, ("result_path",), "eval-report")
    assert owned.value.message == (
        "result_path is set by the runner (<out>/result.json); drop -p result_path"
    )


# ---------------------------------------------------------------- refusals (exit 2, no kernel)


def test_unknown_parameter_exits_2_with_one_line_and_a_result(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli, ["notebook", "run", "eval-report", "--out", str(out), "-p", "bogus", "1"]
    )
    lacking = [s.name for s in cells.missing("eval-report", EVAL_PARAMETERS)]  # none today
    allowed = ", ".join([*EVAL_PARAMETERS[:-1], *lacking])
    line = f"Error: unknown parameter 'bogus' for eval-report; allowed: {allowed}\n"
    hint = "docs/notebooks.md says what each parameter does"
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"{line}hint: {hint}\n")
    document = json.loads((out / "result.json").read_text(encoding="utf-8"))
    error = {"verdict": "error", "exit_code": 2, "error": line[7:-1], "hint": hint}
    assert document == {**error, "notebook": "eval-report"}  # whose outputs the folder holds
    assert sorted(p.name for p in out.iterdir()) == ["result.json"]  # nothing was executed


def test_unwritable_out_exits_2(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    out = blocker / "out"
    result = CliRunner().invoke(cli, ["notebook", "run", "eval-report", "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr == f"Error: cannot write to --out {out}: Not a directory\n"


def test_a_notebook_must_be_named(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["notebook", "run", "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr == (
        "Error: name a notebook (eval-report or tune-explorer) or pass --notebook\n"
    )
    missing = tmp_path / "nope.ipynb"
    result = CliRunner().invoke(
        cli, ["notebook", "run", "--notebook", str(missing), "--out", str(tmp_path)]
    )
    assert (result.exit_code, result.stderr) == (2, f"Error: notebook not found: {missing}\n")


def test_groove_help_imports_no_notebook_stack() -> None:
    code = (
        "import sys\nfrom groove.cli import cli\n"
        "try:\n    cli(['notebook', 'run', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('matplotlib', 'papermill', 'pandas', 'nbconvert', 'jupyter_client')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]"
    help_text = " ".join(out.stdout.split())
    assert "exit 0 passed, 1 regression, 2 bad input, 3 the notebook failed" in help_text


# ---------------------------------------------------------------- kernel and result.json


@pytest.mark.parametrize(
    ("argv", "ok"),
    [
        (["python", "-m", "ipykernel_launcher", "-f", "{connection_file}"], True),
        ([sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"], True),
        (["/usr/bin/python3.9", "-m", "ipykernel_launcher", "-f", "{connection_file}"], False),
        (["python", "-m", "other_kernel"], False),
        ([], False),
    ],
)
def test_kernel_must_run_this_interpreter(argv: list[str], ok: bool) -> None:
    assert runner._runs_this_interpreter(argv) is ok


def test_kernel_name_resolves_to_this_interpreter() -> None:
    from jupyter_client.kernelspec import KernelSpecManager

    name = runner.kernel_name()
    assert name in ("python3", "groove")
    assert runner._runs_this_interpreter(KernelSpecManager().get_kernel_spec(name).argv)


def test_read_result_needs_a_known_exit_code(tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    assert runner.read_result(path) is None
    for text in ("[]", '{"exit_code": 7}', '{"exit_code": "0"}', "{"):
        path.write_text(text, encoding="utf-8")
        assert runner.read_result(path) is None
    path.write_text('{"exit_code": 1, "verdict": "regression"}', encoding="utf-8")
    assert runner.read_result(path) == {"exit_code": 1, "verdict": "regression"}


def test_summary_lines() -> None:
    page = Path("out/eval-report.html")
    passed = {"exit_code": 0, "verdict": "passed"}
    assert summary_line("eval-report", passed, page) == (
        "eval-report: passed (exit 0) -> out/eval-report.html"
    )
    regression = {"exit_code": 1, "verdict": "regression"}
    assert summary_line("eval-report", regression, page) == (
        "eval-report: regression detected (exit 1) -> out/eval-report.html"
    )
    keep = {"exit_code": 0, "verdict": {"decision": "keep_default", "reasons": []}}
    assert summary_line("tune-explorer", keep, page) == (
        "tune-explorer: tune recommends keeping the built-in defaults (exit 0) -> "
        "out/eval-report.html"
    )
    refused = {"exit_code": 2, "error": "no golden file at x", "hint": "pass --golden"}
    assert summary_line("eval-report", refused, page) == (
        "groove notebook: eval-report: no golden file at x; hint: pass --golden "
        "(see out/eval-report.html)"
    )


@pytest.mark.slow
def test_exit_code_comes_from_result_json_and_values_arrive_typed(tmp_path: Path) -> None:
    source = _notebook(
        tmp_path / "typed.ipynb",
        "code = 1 if mode == 'fail' else 0",
        "import json, pathlib\n"
        "pathlib.Path(result_path).write_text(json.dumps({'exit_code': code,"
        " 'types': [type(v).__name__ for v in (limit, history, k_values)]}))",
    )
    nb = nbformat.read(str(source), as_version=4)
    nb.cells[0].source += "\nlimit = None\nhistory = True\nk_values = None"
    nbformat.write(nb, str(source))
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "groove.notebooks.runner",
        "--notebook",
        str(source),
        "--out",
        str(out),
    ]
    params = ["-p", "mode", "fail", "-p", "limit", "20", "-p", "history", "false"]
    params += ["-p", "k_values", "[1,5,10]"]
    done = subprocess.run(command + params, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 1  # papermill itself succeeded: the code is the notebook's
    assert done.stderr == ""  # no ipykernel TCP warning, no papermill log
    assert done.stdout == f"typed: regression detected (exit 1) -> {out / 'typed.html'}\n"
    document = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert document == {"exit_code": 1, "types": ["int", "bool", "list"], "notebook": "typed"}
    assert (out / "typed.ipynb").is_file()
    assert (out / "typed.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.slow
def test_a_raising_cell_exits_3_naming_the_cell(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "boom.ipynb", "x = 1", "raise ValueError('boom')", "y = 2")
    report = runner.run_notebook(None, notebook=source, out_dir=tmp_path / "out")
    assert report.exit_code == 3
    assert report.result == {
        "verdict": "error",
        "exit_code": 3,
        "error": "cell 2 (In [4]) `raise ValueError('boom')` raised ValueError: boom",
        "hint": None,
        "cell": {
            "index": 2,
            "execution_count": 4,
            "source": "raise ValueError('boom')",
            "ename": "ValueError",
            "evalue": "boom",
        },
        "notebook": "boom",
    }
    on_disk = json.loads(report.result_path.read_text(encoding="utf-8"))
    assert on_disk == report.result
    assert notebook_line(report) == (
        "groove notebook: boom: cell 2 (In [4]) `raise ValueError('boom')` raised "
        f"ValueError: boom (see {tmp_path / 'out' / 'boom.html'})"
    )
    executed = nbformat.read(str(report.notebook), as_version=4)
    errors = [o for c in executed.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert [e.ename for e in errors] == ["ValueError"]
    assert report.html is not None and "boom" in report.html.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_dead_kernel_exits_3_naming_the_cell(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "die.ipynb", "x = 1", "import os\nos._exit(1)")
    report = runner.run_notebook(None, notebook=source, out_dir=tmp_path / "out")
    assert report.exit_code == 3
    # the execution count may or may not have reached the notebook before the kernel died
    assert re.fullmatch(
        r"the kernel stopped in cell 2( \(In \[4\]\))? `import os`: DeadKernelError: Kernel died",
        report.result["error"],
    )
    assert report.result["cell"]["index"] == 2
    assert report.notebook.is_file() and report.html is not None and report.html.is_file()


@pytest.mark.slow
def test_a_cell_past_the_cell_timeout_exits_3_naming_the_cell(tmp_path: Path) -> None:
    source = _notebook(
        tmp_path / "hang.ipynb", "import time", "time.sleep(120)  # hangs", "after = 1"
    )
    out = tmp_path / "out"
    args = ["notebook", "run", "--notebook", str(source), "--out", str(out)]
    result = CliRunner().invoke(cli, [*args, "--cell-timeout", "2"])
    assert (result.exit_code, result.stdout) == (3, "")
    hint = "raise it with --cell-timeout SECONDS (now 2; 0: no limit)"
    assert result.stderr == (
        "groove notebook: hang: cell 2 (In [4]) `time.sleep(120)  # hangs` timed out after "
        f"2 s; hint: {hint} (see {out / 'hang.html'})\n"
    )
    document = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert document == {
        "verdict": "error",
        "exit_code": 3,
        "error": "cell 2 (In [4]) `time.sleep(120)  # hangs` timed out after 2 s",
        "hint": hint,
        "cell": {
            "index": 2,
            "execution_count": 4,
            "source": "time.sleep(120)  # hangs",
            "ename": "CellTimeoutError",
            "evalue": "no result after 2 s",
        },
        "notebook": "hang",
    }
    executed = nbformat.read(str(out / "hang.ipynb"), as_version=4)
    assert executed.cells[-1].get("execution_count") is None  # the run stopped there
    assert (out / "hang.html").is_file()


def test_the_cell_timeout_is_a_whole_number_of_seconds(tmp_path: Path) -> None:
    from groove.settings import NOTEBOOK_RUN

    assert NOTEBOOK_RUN["cell_timeout"].default == 1800
    args = ["notebook", "run", "eval-report", "--out", str(tmp_path), "--cell-timeout"]
    for bad in ("-1", "1.5", "never"):
        result = CliRunner().invoke(cli, [*args, bad])
        assert result.exit_code == 2 and "--cell-timeout" in result.stderr, bad
    assert not list(tmp_path.iterdir())  # refused before the runner started


@pytest.mark.slow
def test_no_result_json_exits_3_and_a_stale_one_is_never_read(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "result.json").write_text('{"exit_code": 0}', encoding="utf-8")
    source = _notebook(tmp_path / "silent.ipynb", "x = 1")
    report = runner.run_notebook(None, notebook=source, out_dir=out)
    assert report.exit_code == 3
    assert report.result["error"] == "the notebook finished without writing a valid result.json"


# ---------------------------------------------------------------- earlier outputs


@pytest.mark.slow
def test_a_refused_run_leaves_no_file_of_an_earlier_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    source = _notebook(
        tmp_path / "report.ipynb",
        "import json, pathlib\n"
        "pathlib.Path(result_path).write_text(json.dumps({'exit_code': 0, 'verdict': 'passed'}))\n"
        "pathlib.Path(result_path).with_name('summary.md').write_text('## earlier run')",
    )
    earlier = runner.run_notebook(None, notebook=source, out_dir=out)
    assert earlier.exit_code == 0
    names = ["report.html", "report.ipynb", "result.json", "summary.md"]
    assert sorted(p.name for p in out.iterdir()) == names
    with pytest.raises(NotebookError, match="unknown parameter 'limt'"):
        runner.run_notebook(None, notebook=source, out_dir=out, parameters={"limt": 5})
    assert sorted(p.name for p in out.iterdir()) == ["result.json"]
    document = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert (document["verdict"], document["exit_code"]) == ("error", 2)


def test_an_output_that_cannot_be_replaced_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    (out / "eval-report.html").mkdir(parents=True)  # a folder where the page goes
    result = CliRunner().invoke(cli, ["notebook", "run", "eval-report", "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr == f"Error: cannot replace {out / 'eval-report.html'}: it is a folder\n"


def test_a_copy_run_into_its_own_folder_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    """notebook open writes NAME.ipynb into its folder; a run with --out that folder would
    write the executed NAME.ipynb over the copy it runs (and first removed it as an
    earlier run's output): refused before anything is removed, the copy untouched."""
    folder = tmp_path / "work"
    folder.mkdir()
    copy = _notebook(folder / "eval-report.ipynb")
    before = copy.read_bytes()
    args = ["notebook", "run", "--notebook", str(copy), "--out", str(folder)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: {folder} would receive the executed eval-report.ipynb over the notebook "
        f"it runs ({copy})\nhint: give the run another --out (e.g. {folder / 'eval-report'})\n"
    )
    assert copy.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["eval-report.ipynb"]


def test_widget_outputs_export_as_their_text(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("picker")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                runner.WIDGET_VIEW: {"model_id": "abc", "version_major": 2, "version_minor": 0},
                "text/plain": "the hint",
            },
        )
    ]
    nb.cells = [cell]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    page = runner.widgets_as_text(nb)
    assert page.cells[0].outputs[0]["data"] == {"text/plain": "the hint"}
    assert "widgets" not in page.metadata  # no CDN script to render a saved state
    assert "widgets" in nb.metadata
    assert runner.WIDGET_VIEW in nb.cells[0].outputs[0]["data"]  # the notebook keeps it


# ---------------------------------------------------------------- messages and result.json


def test_result_schema_accepts_each_kind_and_refuses_the_old_tune_verdict() -> None:
    from helpers.result_schema import problems

    assert problems({"verdict": "passed", "exit_code": 0}) == []
    assert problems({"verdict": "error", "exit_code": 2, "error": "x", "hint": None}) == []
    assert problems({"exit_code": 1, "types": []}) == []  # your own notebook: exit_code only
    old = {"exit_code": 0, "verdict": {"decision": "keep_default", "reasons": []}}
    assert problems(old)
    assert problems({"verdict": "passed", "exit_code": 2, "error": "x"})
    previous = {"timestamp": "t", "fingerprint": {}, "aggregate": {}, "per_query": []}
    assert problems({"verdict": "passed", "exit_code": 0, "previous": previous})


# ---------------------------------------------------------------- groove notebook open


def test_open_writes_a_parameterised_copy_and_prints_the_lab_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groove.notebooks import lab

    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.yml").write_text("queries: []\n", encoding="utf-8")
    monkeypatch.setattr(lab, "lab_setup", lambda: lab.LabSetup(jupyterlab=True, widgets=True))
    args = ["notebook", "open", "tune-explorer", "--kb-path", "kb", "-p", "golden", "g.yml",
            "-p", "limit", "20", "--dir", "work", "--no-start", "--", "--allow-root"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    copy = tmp_path / "work" / "tune-explorer.ipynb"
    assert result.stderr == f"tune-explorer: wrote {Path('work') / 'tune-explorer.ipynb'}\n"
    assert result.stdout == (
        f"cd work && {sys.executable} -m jupyterlab tune-explorer.ipynb --allow-root\n"
    )
    notebook = nbformat.read(str(copy), as_version=4)
    injected = [c for c in notebook.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1
    assert injected[0].metadata["jupyter"]["source_hidden"] is True  # the verdict comes first
    headline = next(c for c in notebook.cells if "view.headline(outcome)" in c.source)
    setup = notebook.cells[: notebook.cells.index(headline) + 1]
    assert all(c.metadata.get("jupyter", {}).get("source_hidden") for c in setup[1:])
    namespace: dict[str, object] = {}
    exec(injected[0].source, namespace)  # the values the kernel will see
    assert namespace["golden"] == str(tmp_path / "g.yml")  # absolute: the kernel runs in work/
    assert namespace["kb_path"] == str(tmp_path / "kb")
    assert namespace["limit"] == 20
    assert notebook.metadata.kernelspec.name == runner.kernel_name()
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 2
    assert again.stderr.startswith(f"Error: {Path('work') / 'tune-explorer.ipynb'} exists")
    assert CliRunner().invoke(cli, [*args[:-2], "--overwrite"]).exit_code == 0


def test_open_without_jupyterlab_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groove.notebooks import lab

    monkeypatch.setattr(lab, "lab_setup", lambda: lab.LabSetup(jupyterlab=False, widgets=False))
    result = CliRunner().invoke(
        cli, ["notebook", "open", "eval-report", "--dir", str(tmp_path / "w")]
    )
    assert result.exit_code == 2
    error, hint = result.stderr.splitlines()[-2:]
    assert error.startswith(f"Error: JupyterLab is not installed in {sys.prefix}")
    assert hint == f"hint: {lab.INSTALL_HINT}"
    assert (tmp_path / "w" / "eval-report.ipynb").is_file()  # ready for the Jupyter you have


def test_open_without_the_widget_front_end_warns_and_still_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from groove.notebooks import lab

    monkeypatch.setattr(lab, "lab_setup", lambda: lab.LabSetup(jupyterlab=True, widgets=False))
    started: list[list[str]] = []
    monkeypatch.setattr(lab, "start_lab", lambda copy, command: started.append(command) or 0)
    result = CliRunner().invoke(
        cli, ["notebook", "open", "tune-explorer", "--dir", str(tmp_path), "--no-browser"]
    )
    assert result.exit_code == 0
    assert "jupyterlab_widgets is missing: the condition picker will show a hint" in result.stderr
    assert started == [[sys.executable, "-m", "jupyterlab", "tune-explorer.ipynb", "--no-browser"]]


def test_open_refuses_an_unknown_parameter_before_writing(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["notebook", "open", "eval-report", "--dir", str(tmp_path / "w"), "-p", "limt", "5"]
    )
    assert result.exit_code == 2
    assert "unknown parameter 'limt' for eval-report" in result.stderr
    assert "hint: did you mean -p limit?" in result.stderr
    assert not (tmp_path / "w").exists()


def _edited_copy(tmp_path: Path, golden: Path, edited: Path) -> Path:
    """A copy ``groove notebook open`` wrote (its golden file injected), then edited on disk
    the way a user edits it in JupyterLab: the injected golden replaced by ``edited``."""
    from groove.notebooks import lab

    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n", encoding="utf-8")
    copy = lab.write_copy(
        "eval-report", folder=tmp_path / "work", kb_path=kb, parameters={"golden": str(golden)}
    )
    notebook = nbformat.read(str(copy), as_version=4)
    [injected] = [c for c in notebook.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert str(golden) in injected.source
    injected.source = injected.source.replace(str(golden), str(edited))
    nbformat.write(notebook, str(copy))
    return copy


@pytest.mark.slow
def test_a_copy_runs_with_its_own_parameter_values_and_p_still_wins(tmp_path: Path) -> None:
    """papermill replaces a copy's injected cell with the run's: its values stay defaults."""
    edited, given = tmp_path / "edited.yml", tmp_path / "given.yml"
    copy = _edited_copy(tmp_path, tmp_path / "opened.yml", edited)
    own = runner.run_notebook(None, notebook=copy, out_dir=tmp_path / "own")
    # the copy's kb_path and its edited golden arrived: the first thing missing is that file
    assert (own.exit_code, own.result["error"]) == (2, f"no golden file at {edited}")
    overridden = runner.run_notebook(
        None, notebook=copy, out_dir=tmp_path / "p", parameters={"golden": str(given)}
    )
    assert (overridden.exit_code, overridden.result["error"]) == (2, f"no golden file at {given}")


def test_a_copys_own_values_are_read_for_its_declared_parameters_only(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "mine.ipynb")
    notebook = nbformat.read(str(source), as_version=4)
    injected = nbformat.v4.new_code_cell(
        "# Parameters\nmode = 'edited'\nresult_path = 'elsewhere.json'\nother = 1\n"
    )
    injected.metadata["tags"] = [cells.INJECTED_TAG]
    notebook.cells.insert(1, injected)
    nbformat.write(notebook, str(source))
    allowed = runner.allowed_parameters(source)
    assert runner.own_values(source, allowed, {}) == {"mode": "edited"}  # not the runner's
    assert runner.own_values(source, allowed, {"mode": "given"}) == {}  # -p wins
    injected.source = "mode = 'a' + 'b'"
    nbformat.write(notebook, str(source))
    with pytest.raises(NotebookError) as refused:
        runner.own_values(source, allowed, {})
    assert refused.value.message == f"{source}: mode = 'a' + 'b' is not a value"
    assert refused.value.hint == "write the value there, or pass -p NAME VALUE"


def test_the_html_export_loads_nothing_and_leaves_the_set_up_code_out() -> None:
    import nbformat

    from groove.notebooks import export

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("secret_setup = 1", metadata={"tags": ["hide-input"]}),
        nbformat.v4.new_code_cell("x = 2", metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("shown_code = 3"),
    ]
    body, _ = export.html_exporter().from_notebook_node(notebook)
    assert "require.min.js" not in body and "mathjax" not in body.lower()
    assert "secret_setup" not in body and "shown_code" in body
    assert export.collapse_setup(notebook) is True
    assert [c.metadata.get("jupyter", {}).get("source_hidden") for c in notebook.cells] == [
        None,
        True,
        None,
    ]
    assert export.collapse_setup(notebook) is False
