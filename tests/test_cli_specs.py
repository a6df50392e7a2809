"""Every ``groove`` command takes its options from one declared table.

groove.settings.COMMANDS maps each command to its table; the command's options are
generated from it (groove.cli.common.command_options). A command without a table, an
option written by hand (presentation options aside, named here per command), or a flag
whose name, help, type, default or requiredness differs from its declaration fails here.
"""

from __future__ import annotations

from typing import Any

import click
import pytest

from groove.errors import ConfigError
from groove.settings import COMMANDS, Setting, on
from groove.settings.spelling import spelled

# Options and arguments that are not settings: how a result is shown, the positional
# arguments, and notebook parameters (-p, whose names are EVAL's and TUNE's).
PRESENTATION = {
    "index": {"quiet"},
    "search": {"query", "fmt"},
    "eval": {"fmt", "no_color"},
    "tune": {"fmt", "no_color"},
    "compare": {"refs", "fmt"},
    "baseline set": {"name"},
    "baseline unset": {"name"},
    "golden import-judgements": {"file"},
    "golden doctor": {"fmt"},
    "notebook run": {"name", "parameters"},
    "notebook open": {"name", "lab_args", "parameters"},
}


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found.update(_commands(command, f"{prefix}{name} "))
        else:
            found[f"{prefix}{name}"] = command
    return found


def _cli_commands() -> dict[str, click.Command]:
    from groove.cli import cli

    cli.list_commands(click.Context(cli))  # commands register on first use: all of them now
    return _commands(cli)


def test_every_command_has_a_declared_table() -> None:
    assert sorted(_cli_commands()) == sorted(COMMANDS)
    assert set(PRESENTATION) <= set(COMMANDS)


def _click_default(setting: Setting) -> Any:
    if setting.switch:
        return False
    if setting.kind == "texts":
        return ()
    return setting.default if setting.show_default else None


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_cli_options_are_the_declared_settings(command: str) -> None:
    found = _cli_commands()[command]
    table = COMMANDS[command]
    params = {p.name: p for p in found.params}
    declared = {table[name].param: table[name] for name in on(table, "cli")}
    assert set(params) - PRESENTATION.get(command, set()) == set(declared)
    for name, setting in declared.items():
        option = params[name]
        assert isinstance(option, click.Option), name
        assert option.opts == [setting.flag], name
        assert option.help == setting.help, name
        assert option.is_flag == setting.switch, name
        assert option.required == setting.required, name
        if not setting.required:  # a required option has no default (common.setting_option)
            assert option.default == _click_default(setting), name


REQUIRED = sorted(
    (command, setting.flag)
    for command, table in COMMANDS.items()
    for setting in table.values()
    if setting.required
)


@pytest.mark.parametrize(("command", "flag"), REQUIRED)
def test_a_required_option_left_out_is_refused_before_the_command_runs(
    command: str, flag: str
) -> None:
    """Bad input, not a traceback: click takes an explicit default of None as a value
    given, so a required option must declare none."""
    from click.testing import CliRunner

    from groove.cli import cli

    others = [s.flag for s in COMMANDS[command].values() if s.required and s.flag != flag]
    given = [word for other in others for word in (other, "x")]
    result = CliRunner().invoke(cli, [*command.split(), *given])
    assert result.exit_code == 2, result.output
    assert f"Missing option '{flag}'" in result.output


def test_a_setting_name_has_one_flag_in_every_command() -> None:
    """Errors name a setting by its flag (groove.settings.spelling): one name, one flag."""
    flags: dict[str, set[str]] = {}
    for table in COMMANDS.values():
        for setting in table.values():
            if setting.flag is not None:
                flags.setdefault(setting.name, set()).add(setting.flag)
    assert {name: found for name, found in flags.items() if len(found) > 1} == {}


# A value on each side of every numeric kind's bounds: the command line (click's type)
# and the API / notebook (Setting.parse) accept and refuse the same ones.
SAMPLES: dict[str, tuple[int | float, ...]] = {
    "whole": (-1, 0, 1, 2),
    "count": (-1, 0, 1),
    "integer": (-3, 0, 1),
    "several": (0, 1, 2, 3),
    "port": (-1, 0, 65535, 65536),
    "fraction": (-0.1, 0, 0.5, 1, 1.1),
    "level": (0, 0.05, 1),
    "seconds": (0, 0.5, 30),
}


def _numeric_options() -> list[tuple[str, str]]:
    return sorted(
        {
            (command, name)
            for command, table in COMMANDS.items()
            for name in on(table, "cli")
            if table[name].kind in SAMPLES
        }
    )


@pytest.mark.parametrize(("command", "name"), _numeric_options())
def test_the_cli_and_the_api_take_the_same_values(command: str, name: str) -> None:
    setting = COMMANDS[command][name]
    option = {p.name: p for p in _cli_commands()[command].params}[setting.param]
    for value in SAMPLES[setting.kind]:
        try:
            option.type.convert(str(value), option, None)
            cli_takes = True
        except click.BadParameter:
            cli_takes = False
        try:
            setting.parse(value)
            api_takes = True
        except ConfigError:
            api_takes = False
        assert cli_takes == api_takes, (name, value)


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("integer", (-2, 0, 7), (1.5, "3", True)),
        ("level", (0.05, 0.5), (0, 1, True, "0.1")),
        ("several", (2, 10), (1, 0, 2.0, False)),
    ],
)
def test_the_new_kinds_parse(kind: Any, good: tuple[Any, ...], bad: tuple[Any, ...]) -> None:
    setting = Setting("x", kind, "A test setting.")
    for value in good:
        assert setting.parse(value) == value
    for value in bad:
        with pytest.raises(ConfigError) as info:
            setting.parse(value)
        assert (info.value.setting, info.value.given) == ("x", value)
        assert spelled(info.value, "notebook")[0].startswith("parameter x must be")
