"""``groove notebook run``: execute a report notebook with papermill, exit with its code."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from groove.cli.common import command_options, warn
from groove.settings import NOTEBOOK_OPEN, NOTEBOOK_RUN

NOTEBOOK_NAMES = ("eval-report", "tune-explorer")
# The judging view is interactive: it opens in JupyterLab and has nothing to run headless.
OPEN_NAMES = (*NOTEBOOK_NAMES, "judge")


# `-p NAME VALUE`, the same for a headless run and a live JupyterLab copy.
parameter_option = click.option(
    "-p",
    "--parameter",
    "parameters",
    nargs=2,
    multiple=True,
    metavar="NAME VALUE",
    help="Notebook parameter; VALUE is read as YAML (20, false, [1,5,10]). Repeatable.",
)


@click.group("notebook")
def notebook_group() -> None:
    """Run the report notebooks (eval-report, tune-explorer) headless, e.g. in CI, or open
    one in JupyterLab."""


@notebook_group.command("run")
@click.argument("name", required=False, type=click.Choice(NOTEBOOK_NAMES))
@command_options(NOTEBOOK_RUN)
@parameter_option
@click.pass_context
def run_cmd(
    ctx: click.Context,
    name: str | None,
    kb_path: Path | None,
    parameters: tuple[tuple[str, str], ...],
    out_dir: Path,
    notebook_path: Path | None,
    cell_timeout: int | None,
) -> None:
    """Execute NAME; exit 0 passed, 1 regression, 2 bad input, 3 the notebook failed."""
    from groove.cli.words import notebook_line
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
        cell_timeout=cell_timeout,
        face="cli",
    )
    line = notebook_line(report)
    if report.ok:
        click.echo(line)
    else:
        warn(line)  # a failure is a diagnostic: stderr, in ASCII
    ctx.exit(report.exit_code)


@notebook_group.command("open")
@click.argument("name", type=click.Choice(OPEN_NAMES))
@click.argument("lab_args", nargs=-1, type=click.UNPROCESSED, metavar="[-- LAB_OPTION...]")
@command_options(NOTEBOOK_OPEN)
@parameter_option
@click.pass_context
def open_cmd(
    ctx: click.Context,
    name: str,
    lab_args: tuple[str, ...],
    kb_path: Path | None,
    parameters: tuple[tuple[str, str], ...],
    folder: Path | None,
    overwrite: bool,
    no_browser: bool,
    port: int | None,
    no_start: bool,
) -> None:
    """Write NAME with its parameters into a working folder and open it in JupyterLab.

    Options after `--` go to JupyterLab as they are (e.g. `-- --allow-root`).
    """
    import shlex

    from groove.errors import NotebookError
    from groove.notebooks import lab, runner

    config_path = (ctx.obj or {}).get("config_path")
    copy = lab.write_copy(
        name,
        folder=folder or lab.DEFAULT_FOLDER,
        kb_path=kb_path.resolve() if kb_path else None,
        parameters=runner.parse_parameters(parameters),
        config=Path(config_path).resolve() if config_path else None,
        overwrite=overwrite,
    )
    setup = lab.lab_setup()
    command = lab.lab_command(copy, browser=not no_browser, port=port, extra=lab_args)
    warn(f"{name}: wrote {copy}")
    if not setup.jupyterlab:
        raise NotebookError(
            f"JupyterLab is not installed in {sys.prefix}; {copy} is ready for any Jupyter "
            "that runs this environment's kernel",
            lab.INSTALL_HINT,
        )
    if not setup.widgets:
        warn(
            "groove notebook: jupyterlab_widgets is missing: the condition picker will show a "
            f"hint instead of the widget; {lab.INSTALL_HINT}"
        )
    shown = f"cd {shlex.quote(str(copy.parent))} && {shlex.join(command)}"
    if no_start:
        click.echo(shown)
        return
    warn(f"starting JupyterLab: {shown}")
    ctx.exit(lab.start_lab(copy, command))


def register(cli: click.Group) -> None:
    cli.add_command(notebook_group)
