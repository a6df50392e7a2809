"""How each face words an error or a note: the one place a template is filled in.

An error (groove.errors) carries a template and the inputs it is about; a face words it once,
at its boundary, with ``spelled(error, face)``: the CLI says ``--kb-path`` (the flags as
declared in the tables), the API ``keyword kb_path`` / ``kb_path=``, a notebook ``parameter
kb_path`` / ``-p kb_path``, ``serve`` the request's JSON key. The API's boundary is
``boundary("api")`` on its public functions. Text the library words while a face runs it (a
note, the gate's reason) is a template that ``spell(template, face)`` fills in for the face
the library was given. Every function here is pure: no face is installed or remembered.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from groove.errors import Face, GrooveError
from groove.settings.commands import COMMANDS
from groove.settings.engine import SEARCH
from groove.settings.evaluation import EVAL
from groove.settings.kinds import KINDS
from groove.settings.tuning import TUNE

P = ParamSpec("P")
R = TypeVar("R")


def spelled(error: GrooveError, face: Face) -> tuple[str, str | None]:
    """(message, hint) of ``error`` with its inputs named as ``face`` names them."""
    if not error.templated:
        return error.template, error.hint_template  # no input to name: the words as given
    fill = _Fill(error.setting, face, error.kb_path)
    hint = error.hint_template
    return error.template.format_map(fill), None if hint is None else hint.format_map(fill)


def spell(template: str, face: Face, *, kb_path: object = None) -> str:
    """A template that names settings (as a GrooveError's is) spelled for ``face``: text the
    library words while a face runs it (a note, the gate's reason) names settings as the
    face it was given says them (``EvalSettings.face``, ``run_notebook(face=)``)."""
    return template.format_map(_Fill(None, face, None if kb_path is None else str(kb_path)))


def boundary(face: Face) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A public function of ``face`` (the API's): a GrooveError leaving it is worded once,
    as ``face`` says it, so its ``message``, ``hint`` and ``str()`` are that face's words."""

    def wrap(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            try:
                return function(*args, **kwargs)
            except GrooveError as exc:
                exc.worded(*spelled(exc, face))
                raise

        return call

    return wrap


def _flags() -> dict[str, str]:
    found: dict[str, str] = {"config": "--config"}
    for table in COMMANDS.values():  # one flag per name in all of them (tests/test_api.py)
        for s in table.values():
            if s.flag is not None:
                found.setdefault(s.name, s.flag)
    return found


_FLAGS = _flags()
_SWITCHES = frozenset(s.name for table in COMMANDS.values() for s in table.values() if s.switch)


# What a face calls its inputs, for "the same model {options}".
_OPTIONS: dict[Face, str] = {
    "cli": "flags",
    "api": "keywords",
    "notebook": "parameters",
    "serve": "fields",
}


def _name(setting: str, face: Face) -> str:
    """``kb_path`` as ``face`` names it: ``--kb-path``, ``keyword kb_path``, ``parameter
    kb_path``, ``"kb_path"``."""
    if face == "cli":
        return _flag(setting)
    key = _option_key(setting)
    if key is not None and face in ("api", "notebook"):
        return f'retriever_options["{key}"]'
    if face == "notebook":
        return f"parameter {setting}"
    if face == "serve":
        return f'"{setting}"'
    return f"keyword {setting}"


def _give(setting: str, face: Face, example: str) -> str:
    """How ``face`` gives ``setting`` the value ``example``: ``--kb-path PATH`` (a ``--no-``
    switch bare), ``kb_path=PATH``, ``-p kb_path PATH``, ``"kb_path": PATH``."""
    off = _FLAGS.get(setting, "").startswith("--no-")  # a switch turns the setting off
    if face == "cli":  # a switch flag takes no value
        bare = off or setting in _SWITCHES
        return _flag(setting) + (f" {example}" if example and not bare else "")
    key = _option_key(setting)
    if key is not None and face in ("api", "notebook"):
        value = _option_value(setting, example)
        if face == "api":
            return f'retriever_options={{"{key}": {value}}}'
        return f"-p retriever_options '{{{key}: {value}}}'"
    value = "false" if off else example
    if face == "notebook":  # the runner's syntax always shows a value
        return f"-p {setting} {value or _placeholder(setting)}"
    if face == "serve":
        return f'"{setting}": {value}' if value else f'"{setting}"'
    return f"{setting}={'False' if off else example}"


def _here(face: Face) -> str:
    return {
        "cli": "on the command line",
        "notebook": "to the run",
        "serve": "in the request",
    }.get(face, "to the call")


def _index_command(face: Face, kb_path: str | None, force: bool, lexical: str | None) -> str:
    if face == "api":
        where = repr(kb_path) if kb_path is not None else "kb_path"
        extra = (", force=True" if force else "") + (f", lexical={lexical!r}" if lexical else "")
        return f"`groove.index({where}{extra})`"
    # the CLI's own command, which a notebook's user also runs to build an index
    kb = f" {_flag('kb_path')} {kb_path}" if kb_path is not None else ""
    extra = (" " + _flag("force") if force else "") + (
        f" {_flag('lexical')} {lexical}" if lexical else ""
    )
    return f"`groove index{kb}{extra}`"


def _eval_command(face: Face) -> str:
    """How ``face`` makes an eval that saves its run to the history (the CLI and a
    notebook's user run the CLI's own command, as for ``_index_command``)."""
    if face == "api":
        return "`groove.evaluate(kb_path, golden, save_history=True)`"
    return f"groove eval (without {_give('history', 'cli', '')})"


class _Give:
    """``{give:EXAMPLE}``: how ``face`` gives ``setting`` the value EXAMPLE."""

    def __init__(self, setting: str, face: Face) -> None:
        self.setting, self.face = setting, face

    def __format__(self, example: str) -> str:
        return _give(self.setting, self.face, example)


class _PassValue:
    """``{pass_value:WANTED}``: how ``face`` passes a value of ``setting``, which takes
    WANTED (``pass limit= as WANTED, or leave it out``, ``pass it like -p limit VALUE``)."""

    def __init__(self, setting: str, face: Face) -> None:
        self.setting, self.face = setting, face

    def __format__(self, wanted: str) -> str:
        if self.face == "api":
            return f"pass {self.setting}= as {wanted}, or leave it out"
        if self.face == "notebook":
            return f"pass it like -p {self.setting} VALUE"
        if self.face == "serve":
            return f'pass "{self.setting}" as {wanted}'
        return f"pass it like {_flag(self.setting)} VALUE"


class _IndexCommand:
    """``{index_command}`` / ``{index_command:force}`` / ``{index_command:lexical=MODE}``: how
    ``face`` builds the index (with those options)."""

    def __init__(self, face: Face, kb_path: str | None) -> None:
        self.face, self.kb_path = face, kb_path

    def __format__(self, spec: str) -> str:
        words = spec.split()
        lexical = next(
            (w.removeprefix("lexical=") for w in words if w.startswith("lexical=")), None
        )
        return _index_command(self.face, self.kb_path, "force" in words, lexical)


class _Fill(dict[str, Any]):
    """``{kb_path}`` -> the setting as ``face`` names it; ``{give_kb_path:PATH}`` -> how to
    give it (``--kb-path PATH``, ``kb_path=PATH``, ``-p kb_path PATH``); ``{setting}`` /
    ``{give}`` / ``{pass_value:WANTED}`` -> the error's own setting; ``{here}`` -> where
    the face takes its inputs; ``{index_command}`` (``:force``) -> how the face builds the
    index of ``kb_path``; ``{eval_command}`` -> how it makes an eval that saves its run."""

    def __init__(self, setting: str | None, face: Face, kb_path: str | None = None) -> None:
        super().__init__(
            here=_here(face),
            index_command=_IndexCommand(face, kb_path),
            eval_command=_eval_command(face),
            options=_OPTIONS[face],
        )
        if setting is not None:
            self.update(
                setting=_name(setting, face),
                give=_Give(setting, face),
                pass_value=_PassValue(setting, face),
            )
        self.face = face

    def __missing__(self, key: str) -> Any:
        if key.startswith("give_"):
            return _Give(key.removeprefix("give_"), self.face)
        return _name(key, self.face)


def _option_key(setting: str) -> str | None:
    """``retriever_timeout`` -> ``timeout``: an option of an external retriever that the CLI
    takes as a flag of its own and the API and the notebooks as a key of
    ``retriever_options`` (groove.retrievers.spec.options_from_mapping)."""
    declared = EVAL.get(setting) or TUNE.get(setting)
    if declared is None or declared.surfaces != frozenset({"cli"}):
        return None
    key = setting.removeprefix("retriever_")
    return key if key != setting else None


def _option_value(setting: str, example: str) -> str:
    """An example written as the command line takes it (``'Authorization: Bearer $T'``,
    ``path=_source.path``, ``N``) as the value of a ``retriever_options`` key."""
    import json
    import shlex

    as_json = KINDS[(EVAL.get(setting) or TUNE[setting]).kind].as_json
    try:
        words = shlex.split(example)
    except ValueError:
        words = [example]
    value = None if as_json is None else as_json(words)
    return example if value is None else json.dumps(value)


def cli_flag(setting: str) -> str:
    """The flag of ``setting``, for a groove command line (``command_line``)."""
    return _flag(setting)


def command_line(command: str, **values: Any) -> str:
    """``groove COMMAND --flag VALUE ...`` with the flags as declared here (True: a switch).

    For a hint that tells the user to run a groove command in a terminal whatever the face
    they use, because the command has no API form (``groove export``, ``groove model
    prepare``) or names the file it writes (``groove eval --format json``)."""
    words = ["groove", command]
    for name, value in values.items():
        words.append(_flag(name))
        if value is not True:
            words.append(str(value))
    return " ".join(words)


def _placeholder(setting: str) -> str:
    for table in (EVAL, TUNE, SEARCH):
        if setting in table:
            return KINDS[table[setting].kind].placeholder
    return "VALUE"


def _flag(setting: str) -> str:
    return _FLAGS.get(setting, "--" + setting.replace("_", "-"))
