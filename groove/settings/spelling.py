"""How each face spells a setting: the flags, as declared in the tables, and the API's and
the notebooks' names (groove.errors asks the speller registered here when it words an error).
"""

from __future__ import annotations

from typing import Any

from groove import errors
from groove.settings.commands import COMMANDS
from groove.settings.engine import SEARCH
from groove.settings.evaluation import EVAL
from groove.settings.kinds import KINDS
from groove.settings.tuning import TUNE


def _flags() -> dict[str, str]:
    found: dict[str, str] = {"config": "--config"}
    for table in COMMANDS.values():  # one flag per name in all of them (tests/test_api.py)
        for s in table.values():
            if s.flag is not None:
                found.setdefault(s.name, s.flag)
    return found


_FLAGS = _flags()
_SWITCHES = frozenset(s.name for table in COMMANDS.values() for s in table.values() if s.switch)


class _Spelling:
    """How each face names a setting (groove.errors asks this when it words an error).

    The CLI says ``--kb-path`` (a ``--no-`` switch is given bare), the API ``keyword kb_path``
    / ``kb_path=``, a notebook ``parameter kb_path`` / ``-p kb_path``, ``serve`` the
    request's JSON key.
    """

    def name(self, setting: str, face: errors.Face) -> str:
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

    def give(self, setting: str, face: errors.Face, example: str) -> str:
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

    def here(self, face: errors.Face) -> str:
        return {
            "cli": "on the command line",
            "notebook": "to the run",
            "serve": "in the request",
        }.get(face, "to the call")

    def index_command(
        self, face: errors.Face, kb_path: str | None, force: bool, lexical: str | None = None
    ) -> str:
        if face == "api":
            where = repr(kb_path) if kb_path is not None else "kb_path"
            extra = (", force=True" if force else "") + (
                f", lexical={lexical!r}" if lexical else ""
            )
            return f"`groove.index({where}{extra})`"
        # the CLI's own command, which a notebook's user also runs to build an index
        kb = f" {_flag('kb_path')} {kb_path}" if kb_path is not None else ""
        extra = (" " + _flag("force") if force else "") + (
            f" {_flag('lexical')} {lexical}" if lexical else ""
        )
        return f"`groove index{kb}{extra}`"


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


errors.use_speller(_Spelling())
