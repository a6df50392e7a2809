"""``groove notebook open``: a parameterised copy of a report notebook, opened in JupyterLab.

The headless runner (groove.notebooks.runner) executes a notebook and exports it; a person
exploring a tune result wants the live notebook instead: the condition picker redraws only
in a running kernel, and only where the Jupyter server has the widget front end
(jupyterlab_widgets). ``open_notebook`` writes the bundled notebook with the parameters
injected (papermill's "Parameters" cell, as the runner does) into a working folder and
starts JupyterLab on it; when JupyterLab is missing it says what to install instead of
failing later in the browser.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groove.atomic import write_file
from groove.errors import NotebookError, literal
from groove.install import install_command
from groove.notebooks import export, runner

INSTALL_HINT = f"{install_command('lab')} (JupyterLab and the widget front end jupyterlab_widgets)"
PATH_PARAMETERS = ("kb_path", "golden", "config", "tune_json")
DEFAULT_FOLDER = Path("groove-notebooks")


@dataclass(frozen=True)
class LabSetup:
    """What the environment has: JupyterLab, and the widget front end the picker needs."""

    jupyterlab: bool
    widgets: bool

    def missing(self) -> tuple[str, ...]:
        return tuple(
            name
            for name, present in (
                ("jupyterlab", self.jupyterlab),
                ("jupyterlab_widgets", self.widgets),
            )
            if not present
        )


def lab_setup() -> LabSetup:
    def found(module: str) -> bool:
        return importlib.util.find_spec(module) is not None

    return LabSetup(jupyterlab=found("jupyterlab"), widgets=found("jupyterlab_widgets"))


def _absolute(parameters: Mapping[str, Any], cwd: Path) -> dict[str, Any]:
    """Relative paths resolved against ``cwd``: the kernel runs in the working folder."""
    out = dict(parameters)
    for name in PATH_PARAMETERS:
        value = out.get(name)
        if isinstance(value, str) and value and not Path(value).expanduser().is_absolute():
            out[name] = str((cwd / value).resolve())
    return out


def write_copy(
    name: str,
    *,
    folder: Path,
    kb_path: Path | None = None,
    parameters: Mapping[str, Any] | None = None,
    config: Path | None = None,
    overwrite: bool = False,
    cwd: Path | None = None,
) -> Path:
    """Write notebook ``name`` with ``parameters`` injected into ``folder``; return its path.

    An existing copy (the user's edits, saved outputs) is refused unless ``overwrite``.
    """
    import nbformat
    from papermill.parameterize import parameterize_notebook

    label, source = runner.resolve_notebook(name, None)
    given = dict(parameters or {})
    runner.check_parameters(given, runner.allowed_parameters(source, label), label)
    if kb_path is not None:
        given["kb_path"] = str(kb_path)
    if config is not None:
        given["config"] = str(config)
    given = _absolute(given, cwd or Path.cwd())
    target = folder / f"{label}.ipynb"  # spelt as `groove notebook run` writes it
    if target.exists() and not overwrite:
        raise NotebookError(
            literal(f"{target} exists (an earlier copy, maybe with your edits)"),
            literal(f"open it with `jupyter lab {target}`, ") + "or pass {setting} to start afresh",
            setting="overwrite",
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotebookError(f"cannot create {folder}: {exc.strerror or exc}") from exc
    notebook = runner.read_notebook(source, label)
    kernel = runner.kernel_name()
    notebook.metadata["kernelspec"] = {
        "name": kernel,
        "display_name": "Python (groove)" if kernel != runner.KERNEL_NAME else "Python 3",
        "language": "python",
    }
    if given:
        notebook.metadata.setdefault("papermill", {})  # where papermill records them
        for cell in notebook.cells:  # papermill reads every cell's tags
            cell.metadata.setdefault("tags", [])
        notebook = parameterize_notebook(notebook, given, kernel_name=kernel, language="python")
        for cell in notebook.cells:
            if not cell.metadata.get("tags"):
                cell.metadata.pop("tags", None)
    export.collapse_setup(notebook)  # the injected parameters too: the verdict comes first
    write_file(target, nbformat.writes(notebook) + "\n")
    return target


def lab_command(
    notebook: Path,
    *,
    browser: bool = True,
    port: int | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The JupyterLab command for ``notebook`` (run from its folder), this interpreter's;
    ``extra`` options are passed on as they are."""
    command = [sys.executable, "-m", "jupyterlab", notebook.name, *extra]
    if not browser:
        command.append("--no-browser")
    if port is not None:
        command.append(f"--ServerApp.port={port}")
    return command


def start_lab(notebook: Path, command: Sequence[str]) -> int:
    """Run JupyterLab in the notebook's folder until it stops; its exit code."""
    try:
        return subprocess.run(list(command), cwd=notebook.parent).returncode
    except KeyboardInterrupt:  # Ctrl-C stops the server: a normal end
        return 0
