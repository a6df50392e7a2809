"""Text that used to hold CLI flags reads as each face says it: the CLI's words are
unchanged, the API names keywords (and ``retriever_options`` keys), a notebook its ``-p``
parameters (tests/test_library_speaks_python.py keeps the flags out of the library)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import groove
from groove.cli import cli
from groove.errors import ConfigError, GrooveError, HistoryError
from groove.evaluation.gate_status import REASON_NO_DIFF, REASON_NO_HISTORY
from groove.golden.hit_paths import hit_path_findings
from groove.golden.qrels import golden_from_qrels
from groove.metrics import RankedHit
from groove.notebooks import kernel, lab, runner
from groove.retrievers.backends import lance, postgres
from groove.retrievers.backends.common import engine_error
from groove.retrievers.spec import RetrieverOptions, field_map, parse_spec
from groove.settings.spelling import spell, spelled
from groove.stats.compare import record_from_document
from groove.tuning.export import load_tune

ADAPTER = Path(__file__).parent / "helpers" / "adapter.py"


def faces(exc: GrooveError) -> dict[str, tuple[str, str | None]]:
    return {face: spelled(exc, face) for face in ("cli", "api", "notebook")}


def raised(call, *args, **kw) -> GrooveError:  # type: ignore[no-untyped-def]
    with pytest.raises(GrooveError) as info:
        call(*args, **kw)
    return info.value


# ---------------------------------------------------------------- retriever spec and options


def test_a_bad_retriever_spec_names_the_setting_per_face() -> None:
    got = faces(raised(parse_spec, "command:"))
    assert got["cli"][0] == "--retriever command: names no program"
    assert got["api"][0] == "keyword retriever command: names no program"
    assert got["notebook"][0] == "parameter retriever command: names no program"
    assert got["cli"][1] == got["api"][1]  # the spec's syntax is the same everywhere
    quoted = faces(raised(parse_spec, 'command:say "{x}'))  # braces of a value stay as given
    assert quoted["cli"][0] == "--retriever 'command:say \"{x}': No closing quotation"
    assert quoted["api"][0] == "keyword retriever 'command:say \"{x}': No closing quotation"
    assert faces(raised(parse_spec, "http://"))["cli"][0] == (
        "--retriever 'http://': the URL names no host"
    )
    assert faces(raised(parse_spec, "run:"))["api"][0] == "keyword retriever run: names no file"


def test_eval_and_tune_word_a_retriever_setting_without_a_retriever_alike(tmp_path: Path) -> None:
    """One rule for both tasks: the CLI's words as they were, the API and a notebook name
    the retriever as they name every input."""
    from groove.config import Config
    from groove.evaluation.settings import resolve_settings as eval_settings
    from groove.tuning.settings import resolve_settings as tune_settings

    golden = tmp_path / "g.yml"
    on_eval = faces(raised(eval_settings, Config(), golden=golden, retriever_name="bm25"))
    on_tune = faces(raised(tune_settings, Config(), golden=golden, retriever_name="bm25"))
    assert on_eval == on_tune
    assert on_eval == {
        "cli": ("--retriever-name needs --retriever", "pass --retriever SPEC as well"),
        "api": ("keyword retriever_name needs keyword retriever", "pass retriever=SPEC as well"),
        "notebook": (
            "parameter retriever_name needs parameter retriever",
            "pass -p retriever SPEC as well",
        ),
    }


def test_retriever_options_are_keys_of_retriever_options_outside_the_cli() -> None:
    header = faces(raised(parse_spec, "run:x", options=RetrieverOptions(headers=("nonsense",))))
    assert header["cli"] == (
        "retriever header 'nonsense' is not 'Name: value'",
        "pass --retriever-header 'Authorization: Bearer $TOKEN'",
    )
    assert header["api"][1] == (
        'pass retriever_options={"headers": ["Authorization: Bearer $TOKEN"]}'
    )
    assert header["notebook"][1] == (
        "pass -p retriever_options '{headers: [\"Authorization: Bearer $TOKEN\"]}'"
    )
    body = faces(raised(parse_spec, "http://h/s", options=RetrieverOptions(body="{")))
    assert body["cli"][0].startswith("--retriever-body is not JSON: Expecting property name")
    assert body["api"][0].startswith('retriever_options["body"] is not JSON: Expecting')
    example = 'write it like {"size": "{{limit}}", "query": {"match": {"body": "{{query}}"}}}'
    assert body["cli"][1] == body["api"][1] == example

    field = faces(raised(field_map, None, ["colour=_source.c"]))
    assert field["cli"] == (
        "--retriever-field 'colour': not one of path, heading, score",
        "write it like --retriever-field path=_source.path",
    )
    assert field["api"] == (
        "retriever_options[\"fields\"] 'colour': not one of path, heading, score",
        'write it like retriever_options={"fields": ["path=_source.path"]}',
    )
    assert faces(raised(field_map, None, ["path"]))["cli"][0] == (
        "--retriever-field 'path' is not NAME=PATH"
    )
    empty = faces(raised(field_map, None, {"path": ""}))
    assert (empty["cli"][0], empty["api"][0]) == (
        "--retriever-field path: empty path",
        'retriever_options["fields"] path: empty path',
    )


def test_groove_evaluate_words_a_bad_spec_for_the_api(golden_en: Path) -> None:
    with pytest.raises(ConfigError) as info:
        groove.evaluate(None, golden=golden_en, retriever="command:")
    assert str(info.value) == "keyword retriever command: names no program"


def test_an_engine_timeout_hint_names_the_option_per_face() -> None:
    error = engine_error(
        "pg", "a query ran longer than 1s", "raise {setting}, or check the table's indexes",
        setting="retriever_timeout",
    )  # fmt: skip
    assert faces(error)["cli"] == (
        "retriever pg: a query ran longer than 1s",
        "raise --retriever-timeout, or check the table's indexes",
    )
    assert faces(error)["api"][1] == (
        'raise retriever_options["timeout"], or check the table\'s indexes'
    )


# ---------------------------------------------------------------- retrievers at work


@pytest.fixture
def golden(tmp_path: Path, golden_en: Path) -> Path:
    path = tmp_path / "golden.yml"
    path.write_bytes(golden_en.read_bytes())
    return path


@pytest.fixture
def run_jsonl(tmp_path: Path, golden: Path) -> Path:
    lines = []
    for q in yaml.safe_load(golden.read_text())["queries"]:
        hits = [{"path": q["expected"][0]["path"], "score": 1.0}]
        lines.append(json.dumps({"id": q["id"], "hits": hits}))
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _command(run: Path, *extra: str) -> str:
    return f"command:{sys.executable} {ADAPTER} {run} {' '.join(extra)}".strip()


def test_a_command_that_hangs_names_the_timeout_per_face(golden: Path, run_jsonl: Path) -> None:
    spec = _command(run_jsonl, "--fault", "hang", "--at", "1")
    cli_run = CliRunner().invoke(cli, ["eval", "--retriever", spec, "--golden", str(golden),
                                       "--retriever-timeout", "0.5"])  # fmt: skip
    assert cli_run.exit_code == 2
    assert cli_run.stderr.splitlines()[1] == (
        "hint: raise --retriever-timeout, or check that the program answers every line "
        "(and flushes its output)"
    )
    with pytest.raises(GrooveError) as info:
        groove.evaluate(None, golden=golden, retriever=spec, retriever_options={"timeout": 0.5})
    assert info.value.hint == (
        'raise retriever_options["timeout"], or check that the program answers every line '
        "(and flushes its output)"
    )


def test_a_command_that_exits_says_to_rerun_it_in_a_terminal(golden: Path, run_jsonl: Path) -> None:
    """The advice is a groove command line on every face (a notebook hides stderr)."""
    spec = _command(run_jsonl, "--fault", "exit", "--at", "1")
    with pytest.raises(GrooveError) as info:
        groove.evaluate(None, golden=golden, retriever=spec)
    hint = "so run groove eval with the same --retriever in a terminal"
    assert info.value.hint is not None and info.value.hint.endswith(hint)
    assert spelled(info.value, "cli")[1] == info.value.hint
    # The notebook words it once at its boundary and keeps the terminal command as it is.
    result = golden.parent / "result.json"
    outcome = kernel.eval_report(golden=str(golden), retriever=spec, result_path=str(result))
    assert outcome.exit_code == 2 and outcome.error is not None
    assert outcome.error.hint == info.value.hint
    saved = json.loads(result.read_text(encoding="utf-8"))
    assert (saved["error"], saved["hint"]) == (outcome.error.message, outcome.error.hint)


def test_the_missing_index_note_names_the_settings_per_face(golden: Path, run_jsonl: Path) -> None:
    cli_run = CliRunner().invoke(
        cli, ["eval", "--retriever", f"run:{run_jsonl}", "--golden", str(golden), "--no-history"]
    )
    assert cli_run.exit_code == 0, cli_run.stderr
    assert (
        "groove eval: note: corpus drift and the golden-leak check are not available with "
        "--retriever (no --kb-path); pass --kb-path with an indexed copy of the same documents"
    ) in cli_run.stderr.splitlines()
    run = groove.evaluate(None, golden=golden, retriever=f"run:{run_jsonl}", history=False)
    [note] = [n for n in run.notes if n.kind == "retriever-index-checks-unavailable"]
    assert note.message == (
        "corpus drift and the golden-leak check are not available with keyword retriever "
        "(no keyword kb_path); pass kb_path= with an indexed copy of the same documents"
    )


def test_the_hit_path_advice_names_the_field_option_per_face() -> None:
    tops = [[RankedHit(1, "elsewhere/x.md", None, 1.0)], [RankedHit(1, "other/y.md", None, 1.0)]]
    [on_cli] = hit_path_findings(tops, ["ops/a.md"], ["ops/a.md"], "cli")
    [on_api] = hit_path_findings(tops, ["ops/a.md"], ["ops/a.md"])
    assert on_cli.hint.endswith("check the path field (--retriever-field path=...)")
    assert on_api.hint.endswith('check the path field (retriever_options={"fields": ["path=..."]})')


# ---------------------------------------------------------------- the gate's reasons


def test_the_gate_reasons_name_the_switch_per_face() -> None:
    assert spell(REASON_NO_HISTORY, "cli").startswith("--no-history: no history was read")
    assert spell(REASON_NO_DIFF, "cli") == "--no-diff: the comparison was switched off"
    assert spell(REASON_NO_HISTORY, "api").startswith("history=False: no history was read")
    assert spell(REASON_NO_DIFF, "api") == "diff=False: the comparison was switched off"
    assert spell(REASON_NO_HISTORY, "notebook").startswith("-p history false: no history was read")


@pytest.mark.slow
def test_evaluate_states_the_gate_reason_as_a_keyword(indexed_kb, golden_en: Path) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    off = groove.evaluate(kb, golden_en, history=False, fail_on_regression=True)
    assert off.gate_status is not None
    assert off.gate_status.reason == (
        "history=False: no history was read, so there is nothing to compare with"
    )
    assert any(
        n.message.startswith("regression gate not applied: history=False") for n in off.notes
    )
    no_diff = groove.evaluate(kb, golden_en, diff=False, fail_on_regression=True)
    assert no_diff.to_dict()["gate"]["reason"] == "diff=False: the comparison was switched off"


# ---------------------------------------------------------------- commands without an API


def test_commands_to_run_are_built_from_the_declared_flags() -> None:
    assert lance.SCHEMA_HINT == (
        "write the table with `groove export --kb-path KB --to lancedb:///PATH`"
    )
    assert postgres.SCHEMA_HINT == (
        "write the table with `groove export --kb-path KB --to postgresql://...`"
    )
    hint = "pass the output of `groove eval --format json` or an eval-report result.json"
    assert raised(record_from_document, {}, "x.json").hint == hint


def test_a_tune_file_of_the_wrong_kind_names_the_command_that_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text("{", encoding="utf-8")
    hint = raised(load_tune, path).hint or ""
    assert hint.endswith("`groove tune --format json` does not carry the metric table")


def test_a_run_file_that_is_no_json_is_a_history_error(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(HistoryError) as info:
        groove.compare([path])
    assert info.value.hint == "pass the output of `groove eval --format json`"


# ---------------------------------------------------------------- golden import, notebooks


def test_a_qrels_path_template_without_docid_names_the_option_per_face() -> None:
    got = faces(raised(golden_from_qrels, {}, {}, path_template="docs/x.md"))
    assert got["cli"] == (
        "--path 'docs/x.md' does not contain {docid}",
        "write it like --path 'docs/{docid}.md'",
    )
    assert got["api"] == (
        "keyword path 'docs/x.md' does not contain {docid}",
        "write it like path='docs/{docid}.md'",
    )


def test_the_runner_names_its_options_per_face(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = faces(raised(runner.prepare_out, blocker / "out"))
    assert out["cli"][0] == f"cannot write to --out {blocker / 'out'}: Not a directory"
    assert out["api"][0] == f"cannot write to keyword out {blocker / 'out'}: Not a directory"
    monkeypatch.setattr(runner, "notebook_dir", lambda: tmp_path)
    missing = faces(raised(runner.resolve_notebook, "eval-report", None))
    assert missing["cli"][0].endswith("; pass --notebook PATH")
    assert missing["api"][0].endswith("; pass notebook=PATH")
    assert runner.timeout_hint(2, "cli") == (
        "raise it with --cell-timeout SECONDS (now 2; 0: no limit)"
    )
    assert runner.timeout_hint(2, "api") == (
        "raise it with cell_timeout=SECONDS (now 2; 0: no limit)"
    )


def test_an_existing_lab_copy_names_overwrite_per_face(tmp_path: Path) -> None:
    lab.write_copy("eval-report", folder=tmp_path)
    got = faces(raised(lab.write_copy, "eval-report", folder=tmp_path))
    target = tmp_path / "eval-report.ipynb"
    assert got["cli"] == (
        f"{target} exists (an earlier copy, maybe with your edits)",
        f"open it with `jupyter lab {target}`, or pass --overwrite to start afresh",
    )
    assert got["api"][1] == (
        f"open it with `jupyter lab {target}`, or pass keyword overwrite to start afresh"
    )
