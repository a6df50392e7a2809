"""Shared pieces of the commands: config loading, common options, progress bars."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from groove import settings
from groove.config import Config, load_config
from groove.settings import Setting
from groove.settings.kinds import KINDS

F = TypeVar("F", bound=Callable[..., Any])


def config_from(ctx: click.Context) -> Config:
    path = (ctx.obj or {}).get("config_path")
    return load_config(Path(path) if path else None)


def setting_option(setting: Setting, *, show_default: bool = False) -> Callable[[F], F]:
    """The click option of a declared setting (groove.settings): its flag, type and help.

    The default is None (groove.toml, else the built-in default, decides), unless the
    setting (or the caller) says ``show_default``: then it is the declared default, shown
    in ``--help``.
    """
    assert setting.flag is not None, setting.name
    kw: dict[str, Any] = {"default": None, "help": setting.help}
    if show_default or setting.show_default:
        kw.update(default=setting.default, show_default=True)
    if setting.required:
        # no default at all: click takes an explicit None as a value given, and would never
        # find a required option missing
        del kw["default"]
        kw["required"] = True
    if setting.switch:
        kw.update(is_flag=True, default=False)
    elif setting.bare is not None:  # the value may be left out: the command reads the text
        kw.update(is_flag=False, flag_value=setting.bare, type=str)
    else:
        kw.update(KINDS[setting.kind].option())  # the kind's click type (groove.settings.kinds)
    if setting.metavar is not None:
        kw["metavar"] = setting.metavar
    return click.option(setting.flag, setting.param, **kw)


def command_options(
    table: Mapping[str, Setting], after: Mapping[str, Sequence[Callable[[Any], Any]]] | None = None
) -> Callable[[F], F]:
    """Every command-line option ``table`` declares, in its order, but ``--config`` (the
    ``groove`` group gives that one to every command, groove.cli), with the command's own
    presentation options (``--format``) placed after the setting each key of ``after`` names."""
    decorators: list[Callable[[Any], Any]] = []
    for name in settings.on(table, "cli"):
        if name != "config":
            decorators += [setting_option(table[name]), *(after or {}).get(name, ())]

    def apply(f: F) -> F:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


# groove's own symbols as ASCII: every stderr line is ASCII, as in the reference, so that a
# Japanese Windows console (CP932) never shows mojibake or stops on an encoding error. Text
# the user wrote (a path, a query id) is theirs and passes unchanged; stdout keeps the arrows.
_ASCII = str.maketrans(
    {
        "↓": "down",
        "↑": "up",
        "→": "->",
        "—": "-",
        "–": "-",
        "…": "...",
        "×": "x",
        "≤": "<=",
        "≥": ">=",
        "±": "+/-",
        "·": "|",
        "Δ": "delta ",
        "⚠": "!",
        "✗": "x",
        "✓": "ok",
    }
)


def ascii_text(text: str) -> str:
    """``text`` with groove's own non-ASCII symbols spelled in ASCII (for stderr)."""
    return text.translate(_ASCII)


def warn(message: str) -> None:
    """One diagnostic on stderr, in ASCII (see ``ascii_text``)."""
    click.echo(ascii_text(message), err=True)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def use_color(no_color: bool) -> bool:
    return not no_color and sys.stdout.isatty()


def cli_given(table: Mapping[str, Setting], params: Mapping[str, Any]) -> dict[str, Any]:
    """The command's click values (by parameter name) as given values (by setting name).

    A switch left off is not given (groove.toml or the default decides), and a ``--no-``
    switch turned on gives False; ``--k 1,5,10`` is read as the list it stands for.
    """
    given: dict[str, Any] = {}
    for name, setting in table.items():
        if "cli" not in setting.surfaces or setting.param not in params:
            continue
        value = params[setting.param]
        if setting.switch:
            value = (not str(setting.flag).startswith("--no-")) if value else None
        elif isinstance(value, str):
            value = KINDS[setting.kind].from_flag(value)
        given[name] = value
    return given
