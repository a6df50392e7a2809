"""Every ``--flag`` a printed hint names is one the command that printed it takes.

A hint is filled in from the setting its error is about (groove.settings.spelling), so the
same refusal raised under another command can name a flag that command does not have
(``groove baseline list`` said "pass --no-history", which only ``groove eval`` and
``groove golden pool`` take): a user who follows it gets "No such option". No list of
errors is kept here: every command of the click tree runs against each broken input below
(a history a newer groove wrote, a corrupt one, one that is a symlink or a folder, an empty
one, a missing golden file or knowledge base, a broken golden file or groove.toml, always
without an index), with the inputs it takes as flags, and every ``hint:`` it prints is read.
A flag after ``groove CMD`` in the same clause (``run `groove index --force` first``) is
checked against CMD instead; short flags (``-p``) are checked too. Every command must
print a hint for at least one of these inputs (else a new command would be checked by
nothing). The API's public functions get the same inputs as keywords, and every keyword
their hints name (``history=False``, ``keyword kb_path``) must be one they take.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from helpers.history_jobs import make_record

import groove
from groove.cli import cli
from groove.errors import GrooveError, HistoryError
from groove.history.history import HISTORY_FILE_NAME, append_run

ADAPTER = Path(__file__).parent / "helpers" / "adapter.py"
GOLDEN = 'queries:\n  - id: q1\n    query: "alpha"\n    expected: [{path: a.md}]\n'
# Commands no input below can make refuse with a hint: they take no file groove reads.
# Checked both ways: one that starts printing a hint must leave this set.
NO_HINT = {("model", "prepare")}

Breakage = Callable[[Path], None]


def _history_files(case: Path) -> list[Path]:
    """Where the history lives: in the KB, and beside the golden file (--retriever runs)."""
    return [case / "kb" / HISTORY_FILE_NAME, case / HISTORY_FILE_NAME]


def _newer(case: Path) -> None:
    for path in _history_files(case):
        append_run(path, make_record(1), history_size=10)
        data = json.loads(path.read_text(encoding="utf-8"))
        data["runs"][0]["scores"] = "f16"  # a format only a newer groove writes
        path.write_text(json.dumps(data), encoding="utf-8")


def _corrupt(case: Path) -> None:
    for path in _history_files(case):
        path.write_bytes(b'{"runs": [}')


def _symlink(case: Path) -> None:
    target = case / "elsewhere.json"
    append_run(target, make_record(1), history_size=10)
    for path in _history_files(case):
        path.symlink_to(target)


def _folder(case: Path) -> None:
    for path in _history_files(case):
        path.mkdir()


def _empty(case: Path) -> None:
    for path in _history_files(case):
        path.write_text('{"runs": []}', encoding="utf-8")


def _no_golden(case: Path) -> None:
    (case / "g.yml").unlink()


def _no_kb(case: Path) -> None:
    for file in (case / "kb").iterdir():
        file.unlink()
    (case / "kb").rmdir()


def _bad_golden(case: Path) -> None:
    (case / "g.yml").write_text("queries:\n  - query: [\n", encoding="utf-8")


def _notebook_copy(case: Path) -> None:
    """An earlier copy in the notebooks folder (``_inputs``) of the notebook ``_argv`` picks."""
    (case / "notebooks").mkdir()
    (case / "notebooks" / "eval-report.ipynb").write_text("{}", encoding="utf-8")


def _bad_lexical(case: Path) -> None:
    (case / "groove.toml").write_text('[search]\nlexical = "nope"\n', encoding="utf-8")


def _bad_k_values(case: Path) -> None:
    (case / "groove.toml").write_text('[eval]\nk_values = "x"\n', encoding="utf-8")


BREAKAGES: dict[str, Breakage] = {
    "newer history": _newer,
    "corrupt history": _corrupt,
    "history is a symlink": _symlink,
    "history is a folder": _folder,
    "empty history": _empty,
    "no golden file": _no_golden,
    "no knowledge base": _no_kb,
    "broken golden file": _bad_golden,
    "an earlier notebook copy": _notebook_copy,
    "groove.toml: a lexical mode groove lacks": _bad_lexical,
    "groove.toml: k values that are not numbers": _bad_k_values,
}


def _commands(
    group: click.Group, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))
        else:
            yield (*prefix, name), command


COMMANDS = dict(_commands(cli))


def _case(root: Path, breakage: Breakage) -> Path:
    case = root
    (case / "kb").mkdir(parents=True)
    (case / "kb" / "a.md").write_text("# Alpha\n\nalpha text\n", encoding="utf-8")
    (case / "g.yml").write_text(GOLDEN, encoding="utf-8")
    (case / "run.jsonl").write_text(
        json.dumps({"id": "q1", "hits": [{"path": "a.md"}]}) + "\n", encoding="utf-8"
    )
    breakage(case)
    return case


def _inputs(case: Path, external: bool) -> dict[str, object]:
    """What each setting is given, wherever a command takes it as a flag; nothing that
    would start a server or a browser (--no-start)."""
    given: dict[str, object] = {
        "kb_path": case / "kb",
        "golden": case / "g.yml",
        "out": case / "out.csv",
        "out_dir": case / "out",
        "folder": case / "notebooks",
        "no_start": True,
        "no_browser": True,
    }
    if external:  # past the missing index: the history is read beside the golden file
        given["retriever"] = f"command:{sys.executable} {ADAPTER} {case / 'run.jsonl'}"
    return given


def _argv(command: click.Command, given: dict[str, object], case: Path) -> list[str]:
    argv: list[str] = []
    for param in command.params:
        if isinstance(param, click.Argument):
            if isinstance(param.type, click.Choice):  # e.g. the notebook to run
                argv.append(str(param.type.choices[0]))
            elif not param.required:
                continue
            elif isinstance(param.type, click.Path):
                argv.append(str(case / "g.yml"))
            else:
                argv.append("main")
        elif isinstance(param, click.Option) and param.name in given:
            value = given[param.name]
            if param.is_flag:
                argv.append(param.opts[0])
            else:
                argv += [param.opts[0], str(value)]
        elif isinstance(param, click.Option) and param.required:  # e.g. golden import --qrels
            argv += [param.opts[0], str(case / "g.yml")]
    return argv


def _options(command: click.Command) -> set[str]:
    return {
        o
        for p in command.get_params(click.Context(command))
        if isinstance(p, click.Option)
        for o in (*p.opts, *p.secondary_opts)
    }


HINT = re.compile(r"hint: (.*)")
FLAG = re.compile(r"(?<![\w-])(?:--[a-z][a-z0-9-]*|-[a-zA-Z](?![\w-]))")
MENTION = re.compile(r"groove ((?:[a-z][a-z-]* ?){1,2})")


def _named_command(text: str) -> tuple[str, ...] | None:
    """The command ``groove CMD`` in ``text`` names, if any (the longest path that is one)."""
    for match in MENTION.finditer(text):
        words = tuple(match.group(1).split())
        for n in (2, 1):
            if words[:n] in COMMANDS:
                return words[:n]
    return None


def _flags_by_command(hint: str, printer: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str]]:
    """Each flag ``hint`` names and the command it is a flag of: the one a backquoted
    `groove CMD ...` or a clause's ``groove CMD`` names, else the printing command."""
    for quoted in re.findall(r"`([^`]*)`", hint):
        owner = _named_command(quoted) or printer
        for flag in FLAG.findall(quoted):
            yield owner, flag
    rest = re.sub(r"`[^`]*`", "", hint)
    for clause in re.split(r"[;,]", rest):
        owner = _named_command(clause) or printer
        for flag in FLAG.findall(clause):
            yield owner, flag


def _hints(output: str) -> list[str]:
    return HINT.findall(output)


@pytest.mark.slow  # the notebook runner starts a kernel for each input
@pytest.mark.model
def test_every_flag_a_hint_names_is_one_its_command_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong: list[str] = []
    hinted: set[tuple[str, ...]] = set()
    runs = [(name, external) for name in BREAKAGES for external in (False, True)]
    for n, (name, external) in enumerate(runs):
        for path, command in COMMANDS.items():
            if external and "retriever" not in {p.name for p in command.params}:
                continue  # the same run as without
            case = _case(tmp_path / f"{n}-{'-'.join(path)}", BREAKAGES[name])
            monkeypatch.chdir(case)  # its groove.toml, if any, and no other
            argv = [*path, *_argv(command, _inputs(case, external), case)]
            result = CliRunner().invoke(cli, argv, catch_exceptions=False)
            for hint in _hints(result.stderr + result.stdout):
                hinted.add(path)
                for owner, flag in _flags_by_command(hint, path):
                    if flag not in _options(COMMANDS[owner]):
                        via = " (external retriever)" if external else ""
                        wrong.append(
                            f"{name}{via}: groove {' '.join(path)} hints {flag!r}, which "
                            f"groove {' '.join(owner)} does not take: {hint}"
                        )
    assert wrong == [], "\n".join(wrong)
    assert set(COMMANDS) - hinted == NO_HINT


def test_a_flag_is_read_as_the_named_command_s() -> None:
    """The reading above: a flag belongs to the command the hint tells the user to run."""
    printer = ("baseline", "list")
    hint = "run `groove index --kb-path KB --force` first, or pass --golden FILE"
    assert list(_flags_by_command(hint, printer)) == [
        (("index",), "--kb-path"),
        (("index",), "--force"),
        (printer, "--golden"),
    ]
    assert list(_flags_by_command("run groove eval (without --no-history) first", printer)) == [
        (("eval",), "--no-history")
    ]
    assert list(_flags_by_command("upgrade groove, or pass --no-history", printer)) == [
        (printer, "--no-history")
    ]
    assert list(_flags_by_command("pass -p golden PATH (see a-b/c.html)", printer)) == [
        (printer, "-p")
    ]
    assert "--no-history" not in _options(COMMANDS[printer])


def test_only_a_command_that_can_leave_the_history_off_is_told_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A history a newer groove wrote: eval (and its API) can skip it, the baseline and
    compare commands only read it and are told what to do with the file, in every face."""
    case = _case(tmp_path, _newer)
    monkeypatch.chdir(case)
    kb, retriever = str(case / "kb"), str(_inputs(case, True)["retriever"])
    move = "upgrade groove, or move it aside to start a new history"
    for argv in (["baseline", "list"], ["baseline", "set", "main"], ["compare"]):
        result = CliRunner().invoke(cli, [*argv, "--kb-path", kb])
        assert result.exit_code == 2
        assert result.stderr.splitlines()[-1] == f"hint: {move}"
    golden = ["--golden", str(case / "g.yml"), "--retriever", retriever]
    result = CliRunner().invoke(cli, ["eval", "--kb-path", kb, *golden])
    assert result.stderr.splitlines()[-1] == (
        "hint: upgrade groove, or pass --no-history to skip the history"
    )
    assert (
        CliRunner().invoke(cli, ["eval", "--kb-path", kb, *golden, "--no-history"]).exit_code == 0
    )
    with pytest.raises(HistoryError) as info:
        groove.set_baseline(kb, "main")
    assert info.value.hint == move
    with pytest.raises(HistoryError) as info:
        groove.evaluate(kb, case / "g.yml", retriever=retriever, progress=False)
    assert info.value.hint == "upgrade groove, or pass history=False to skip the history"


@pytest.mark.slow  # a notebook kernel
def test_the_eval_notebook_is_told_its_own_parameter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _case(tmp_path, _newer)
    monkeypatch.chdir(case)
    parameters = [
        "-p",
        "golden",
        str(case / "g.yml"),
        "-p",
        "retriever",
        _inputs(case, True)["retriever"],
    ]
    argv = [
        "notebook",
        "run",
        "eval-report",
        "--kb-path",
        str(case / "kb"),
        "--out",
        str(case / "out"),
    ]
    result = CliRunner().invoke(cli, [*argv, *map(str, parameters)])
    assert result.exit_code == 2
    assert "hint: upgrade groove, or pass -p history false to skip the history" in result.stderr


def test_an_empty_history_is_told_how_each_face_makes_an_eval_that_saves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not "without history=False" to groove.set_baseline, which takes no history."""
    case = _case(tmp_path, _empty)
    monkeypatch.chdir(case)
    result = CliRunner().invoke(cli, ["baseline", "set", "main", "--kb-path", str(case / "kb")])
    assert result.stderr.splitlines()[-1] == "hint: run groove eval (without --no-history) first"
    with pytest.raises(HistoryError) as info:
        groove.set_baseline(case / "kb", "main")
    assert info.value.hint == "run `groove.evaluate(kb_path, golden, save_history=True)` first"


# ---------------------------------------------------------------- the API's words

#: The public functions that take a knowledge base: each hint they raise may name only
#: keywords they take (``history=False``, ``keyword kb_path``), or those of the function a
#: backquoted call names (`groove.index('kb')`).
API = {
    name: function
    for name in groove.__all__
    if inspect.isfunction(function := getattr(groove, name))
    and "kb_path" in inspect.signature(function).parameters
}
KEYWORD = re.compile(r"\bkeyword (\w+)|(?<![\w.])(\w+)=")
CALL = re.compile(r"groove\.(\w+)\(")


def _keywords_by_function(hint: str, printer: str) -> Iterator[tuple[str, str]]:
    for quoted in re.findall(r"`([^`]*)`", hint):
        call = CALL.search(quoted)
        owner = call.group(1) if call else printer
        for match in KEYWORD.finditer(re.sub(r'"[^"]*"', "", quoted)):
            yield owner, match.group(1) or match.group(2)
    rest = re.sub(r'"[^"]*"', "", re.sub(r"`[^`]*`", "", hint))
    for match in KEYWORD.finditer(rest):
        yield printer, match.group(1) or match.group(2)


def _call(function: Callable[..., object], case: Path, external: bool) -> str | None:
    """The hint ``function`` raises on ``case``'s inputs (None: no GrooveError)."""
    given = {**_inputs(case, external), "progress": False}
    kwargs: dict[str, object] = {}
    for param in inspect.signature(function).parameters.values():
        if param.name in given:
            kwargs[param.name] = given[param.name]
        elif param.default is inspect.Parameter.empty and param.kind != param.VAR_KEYWORD:
            kwargs[param.name] = "main"  # a baseline's name, a query
    try:
        function(**kwargs)
    except GrooveError as exc:
        return exc.hint
    return None


@pytest.mark.model
def test_every_keyword_an_api_hint_names_is_one_its_function_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong: list[str] = []
    hinted: set[str] = set()
    for n, (name, external) in enumerate((b, e) for b in BREAKAGES for e in (False, True)):
        for printer, function in API.items():
            takes = inspect.signature(function).parameters
            if external and "retriever" not in takes:
                continue
            case = _case(tmp_path / f"{n}-{printer}", BREAKAGES[name])
            monkeypatch.chdir(case)
            hint = _call(function, case, external)
            if hint is None:
                continue
            hinted.add(printer)
            for owner, keyword in _keywords_by_function(hint, printer):
                if (
                    keyword
                    not in inspect.signature(API.get(owner) or getattr(groove, owner)).parameters
                ):
                    wrong.append(
                        f"{name}: groove.{printer} hints {keyword}=, which "
                        f"groove.{owner} does not take: {hint}"
                    )
    assert wrong == [], "\n".join(wrong)
    assert hinted == set(API)


def test_a_keyword_is_read_as_the_called_function_s() -> None:
    hint = "run `groove.evaluate(kb_path, golden, save_history=True)` first"
    assert list(_keywords_by_function(hint, "set_baseline")) == [("evaluate", "save_history")]
    # what groove.set_baseline was told before: a keyword it does not take
    old = "run groove eval first (without history=False)"
    assert list(_keywords_by_function(old, "set_baseline")) == [("set_baseline", "history")]
    assert "history" not in inspect.signature(groove.set_baseline).parameters
    options = 'pass retriever_options={"fields": "path=_source.path"} or keyword kb_path'
    assert list(_keywords_by_function(options, "pool")) == [
        ("pool", "retriever_options"),
        ("pool", "kb_path"),
    ]
