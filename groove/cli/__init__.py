"""The ``groove`` command: thin click commands over the library.

Each command parses flags, calls one library function, renders the dataclass it returns
(results on stdout, diagnostics on stderr) and maps errors to exit codes. Heavy modules
are imported inside the commands so that ``groove --help`` stays fast.
"""

from __future__ import annotations

from typing import Any

import click

from groove import __version__
from groove.errors import GrooveError


def print_error(exc: GrooveError) -> None:
    click.echo(f"Error: {exc.message}", err=True)
    if exc.hint:
        click.echo(f"hint: {exc.hint}", err=True)


class _GrooveGroup(click.Group):
    """Catches GrooveError once for every command: message, hint, fixed exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GrooveError as exc:
            print_error(exc)
            ctx.exit(exc.exit_code)


@click.group(cls=_GrooveGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="groove")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=str),
    default=None,
    help="groove.toml to use (default: ./groove.toml, then the git root's).",
)
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """groove: a hybrid Markdown search engine that tells you whether retrieval got better."""
    ctx.obj = {"config_path": config_path}


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


_register()


def main() -> None:
    cli()
