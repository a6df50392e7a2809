"""``groove notebook run``: execute a report notebook with papermill, exit with its code."""

from __future__ import annotations

from pathlib import Path

import click

from groove.cli.common import kb_option

NOTEBOOK_NAMES = ("eval-report", "tune-explorer")


@click.group("notebook")
def notebook_group() -> None:
    """Run the report notebooks (eval-report, tune-explorer) headless, e.g. in CI."""


@notebook_group.command("run")
@click.argument("name", required=False, type=click.Choice(NOTEBOOK_NAMES))
@kb_option
@click.option(
    "-p",
    "--parameter",
    "parameters",
    nargs=2,
    multiple=True,
    metavar="NAME VALUE",
    help="Notebook parameter; VALUE is read as YAML (20, false, [1,5,10]). Repeatable.",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for <name>.ipynb (executed), <name>.html and result.json.",
)
@click.option(
    "--notebook",
    "notebook_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Run this notebook file instead of a bundled one.",
)
@click.pass_context
def run_cmd(
    ctx: click.Context,
    name: str | None,
    kb_path: Path | None,
    parameters: tuple[tuple[str, str], ...],
    out_dir: Path,
    notebook_path: Path | None,
) -> None:
    """Execute NAME; exit 0 passed, 1 regression, 2 bad input, 3 the notebook failed."""
    from groove.errors import NotebookError
    from groove.notebooks import runner

    if name is None and notebook_path is None:
        raise NotebookError(f"name a notebook ({' or '.join(NOTEBOOK_NAMES)}) or pass --notebook")
    config_path = (ctx.obj or {}).get("config_path")
    report = runner.run_notebook(
        name,
        out_dir=out_dir,
        kb_path=kb_path,
        parameters=runner.parse_parameters(parameters),
        notebook=notebook_path,
        config=Path(config_path) if config_path else None,
    )
    click.echo(report.line, err=not report.ok)
    ctx.exit(report.exit_code)


def register(cli: click.Group) -> None:
    cli.add_command(notebook_group)
