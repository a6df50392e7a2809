"""The ``groove`` command: thin click commands over the library.

Each command parses flags, calls one library function, renders the dataclass it returns
(results on stdout, diagnostics on stderr) and maps errors to exit codes. Heavy modules
are imported inside the commands so that ``groove --help`` stays fast.
"""

from __future__ import annotations

import logging
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


class _GrooveGroup(click.Group):
    """Catches GrooveError once for every command: message, hint, fixed exit code."""

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


def _register() -> None:
    from groove.cli import engine_cmds

    engine_cmds.register(cli)
    for name in (
        "eval_cmd",
        "baseline_cmd",
        "tune_cmd",
        "notebook_cmd",
        "compare_cmd",
        "serve_cmd",
        "golden_cmd",
        "export_cmd",
        "judge_cmds",
    ):
        try:
            module = __import__(f"groove.cli.{name}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"groove.cli.{name}":
                raise
            continue
        module.register(cli)
    for command in cli.commands.values():
        _add_config_option(command)


_register()


def main() -> None:
    cli()
