"""The ``groove`` command: thin click commands over the library.

Each command parses flags, calls one library function, renders the dataclass it returns
(results on stdout, diagnostics on stderr) and maps errors to exit codes. Heavy modules
are imported inside the commands so that ``groove --help`` stays fast.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import click

from groove import __version__, settings
from groove.errors import GrooveError


def print_error(exc: GrooveError) -> None:
    """The CLI's boundary: ``Error: ...`` / ``hint: ...`` on stderr, worded once with the
    setting spelled as its flag."""
    from groove.cli.common import warn

    message, hint = settings.spelled(exc, "cli")
    warn(f"Error: {message}")
    if hint:
        warn(f"hint: {hint}")


class _StderrNotices(logging.Handler):
    """The library's logged notices (e.g. a model being prepared) as ``groove: ...`` lines."""

    def emit(self, record: logging.LogRecord) -> None:
        from groove.cli.common import warn

        warn(f"groove: {record.getMessage()}")


class _Interrupted(Exception):
    """Ctrl-C during a command, carried past click to ``main``."""


class _GrooveGroup(click.Group):
    """Catches GrooveError once for every command: message, hint, fixed exit code. A
    command's module is imported when the command is looked up (``_MODULES``), so that a
    one-shot ``groove search`` does not build every other command first; listing the
    commands (help, completion) loads them all."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        _load([cmd_name])
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        _load(_MODULES)
        return super().list_commands(ctx)

    def invoke(self, ctx: click.Context) -> Any:
        logger = logging.getLogger("groove")
        notices, level = _StderrNotices(logging.INFO), logger.level
        logger.addHandler(notices)  # for this command only: the library itself prints nothing
        logger.setLevel(logging.INFO)
        try:
            return super().invoke(ctx)
        except GrooveError as exc:
            print_error(exc)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            raise _Interrupted from None  # past click, which would exit 1 (main)
        finally:
            logger.removeHandler(notices)
            logger.setLevel(level)


CONFIG_HELP = settings.CONFIG.help


@click.group(cls=_GrooveGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="groove")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help=CONFIG_HELP,
)
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """groove: a hybrid Markdown search engine that tells you whether retrieval got better."""
    ctx.obj = {"config_path": config_path}


def _config_after_command(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    # ``--config`` is global: ``groove --config X index`` and ``groove index --config X``
    # mean the same; given in both places with different files, neither silently wins.
    if value is None:
        return
    obj = ctx.find_root().obj
    if obj is None:
        ctx.find_root().obj = obj = {"config_path": None}
    given = obj.get("config_path")
    if given is not None and given != value:
        raise click.UsageError(f"--config given twice ({given} and {value}); give it once")
    obj["config_path"] = value


def _add_config_option(command: click.Command) -> None:
    """Every subcommand (and sub-subcommand) accepts ``--config PATH`` too."""
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _add_config_option(sub)
        return
    command.params.append(
        click.Option(
            [settings.CONFIG.flag or "--config", "config"],
            type=click.Path(dir_okay=False, path_type=str),
            default=None,
            expose_value=False,
            is_eager=True,
            callback=_config_after_command,
            help=CONFIG_HELP,
        )
    )


#: The commands registered on first use, and the modules of groove.cli that add them
#: (``register``); ``engine_cmds`` (index, search, model) is registered at once.
_MODULES: dict[str, tuple[str, ...]] = {
    "eval": ("eval_cmd",),
    "baseline": ("baseline_cmd",),
    "tune": ("tune_cmd",),
    "notebook": ("notebook_cmd",),
    "compare": ("compare_cmd",),
    "serve": ("serve_cmd",),
    "golden": ("golden_cmd", "judge_cmds"),  # judge_cmds adds pool, import-judgements...
    "export": ("export_cmd",),
}
_LOADED: set[str] = set()


def _load(commands: Iterable[str]) -> None:
    """Register these commands (names in ``_MODULES``; others are ignored), once each."""
    for command in commands:
        if command not in _MODULES or command in _LOADED:
            continue
        _LOADED.add(command)
        before = set(cli.commands)
        for name in _MODULES[command]:
            try:
                module = __import__(f"groove.cli.{name}", fromlist=["register"])
            except ModuleNotFoundError as exc:
                if exc.name != f"groove.cli.{name}":
                    raise
                continue
            module.register(cli)
        for added in set(cli.commands) - before:
            _add_config_option(cli.commands[added])


def _register() -> None:
    from groove.cli import engine_cmds

    engine_cmds.register(cli)
    for command in cli.commands.values():
        _add_config_option(command)


_register()


def main(args: list[str] | None = None) -> None:
    """The ``groove`` program: ``args`` (default: the command line) through the commands."""
    try:
        cli(args, prog_name="groove")
    except _Interrupted:
        _die_by_sigint()
    except SystemExit:
        _ignore_late_ctrl_c()
        raise


def _ignore_late_ctrl_c() -> None:
    """The command is done (click ends every one with SystemExit): a Ctrl-C while Python
    tears down would print a traceback under a finished run and change nothing."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _die_by_sigint() -> None:
    """End as a Ctrl-C'd program ends: by SIGINT (the shell sees 130), never with an exit
    code of groove's own (click's 1 is eval's regression: a script read it as one)."""
    import os
    import signal
    import sys

    click.echo("\nAborted!", err=True)
    sys.stderr.flush()
    if hasattr(signal, "SIGINT") and os.name == "posix":
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    sys.exit(130)
