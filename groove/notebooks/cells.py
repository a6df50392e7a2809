"""The bundled notebooks' parameters, taken from their tasks' tables.

A bundled notebook's ``parameters`` cell assigns the settings its run cell takes (each
with a comment that says what it does), and its run cell hands over whatever the cells
assigned (``assigned``: the parameters cell, then the runner's injected one) to the
kernel's function, whose keywords are the table's (groove.settings.signatures). A
setting the cell does not assign yet is added to it, with its face default and its help,
wherever groove writes or runs the notebook (``complete``), and ``-p NAME VALUE`` accepts
it (``allowed``): a new setting needs its declaration, not an edit of the notebook.

A copy of a notebook (``groove notebook open`` writes one; ``groove notebook run --notebook
COPY`` runs it) keeps its own values in its injected-parameters cell, which a run's own
injection replaces: ``copy_values`` reads them, so that they stay the defaults ``-p`` overrides.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from groove.settings import EVAL, JUDGE, TUNE, Setting, on

#: Each bundled notebook and the table its parameters are declared in.
TABLES: Mapping[str, Mapping[str, Setting]] = {
    "eval-report": EVAL,
    "tune-explorer": TUNE,
    "judge": JUDGE,
}
PARAMETERS_TAG = "parameters"
INJECTED_TAG = "injected-parameters"  # papermill's cell after the parameters cell


def assigned(run_cell: Callable[..., Any], namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of ``run_cell`` the notebook's cells assigned (``globals()``), by
    name: what the run cell passes on (one not assigned keeps its default)."""
    names = inspect.signature(run_cell).parameters
    return {name: namespace[name] for name in names if name in namespace}


def missing(label: str, names: Sequence[str]) -> list[Setting]:
    """The settings of bundled notebook ``label`` its parameters cell (``names``) lacks."""
    table = TABLES.get(label, {})
    return [table[name] for name in on(table, "notebook") if name not in names]


def allowed(label: str, names: Sequence[str]) -> tuple[str, ...]:
    """The parameters ``-p`` may set: the cell's ``names``, then the declared ones it lacks."""
    return (*names, *(s.name for s in missing(label, names)))


def line(setting: Setting) -> str:
    """``name = default  # help`` (the help's first sentence) for the parameters cell."""
    words = setting.help.split(". ")[0].rstrip(".")
    return f"{setting.name} = {setting.face_default!r}  # {words}"


def complete(notebook: Any, label: str) -> Any:
    """``notebook`` (an nbformat node of bundled notebook ``label``) with a line for each
    setting its parameters cell lacks appended to that cell."""
    for cell in notebook.cells:
        if PARAMETERS_TAG in cell.metadata.get("tags", []):
            lacking = missing(label, _assigned_names(cell.source))
            cell.source = "\n".join([cell.source.rstrip("\n"), *(line(s) for s in lacking)])
            break
    return notebook


def copy_values(notebook: Any, declared: Sequence[str]) -> dict[str, Any]:
    """The values ``notebook`` (an nbformat node) assigns its ``declared`` parameters in its
    injected-parameters cell (``groove notebook open -p``, or the user's edit there): the
    copy's own values, as it runs them in JupyterLab (that cell runs after the parameters
    cell, which a run keeps as it is). A declared name set to anything but a literal value
    is a ValueError naming it: the runner could not carry it over."""
    values: dict[str, Any] = {}
    for cell in notebook.cells:
        if INJECTED_TAG not in cell.metadata.get("tags", []):
            continue
        try:
            body = ast.parse(cell.source).body
        except SyntaxError as exc:
            raise ValueError(f"its {INJECTED_TAG} cell is not Python ({exc.msg})") from None
        for node in body:
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in declared:
                    values[target.id] = _literal(target.id, node.value)
    return values


def _literal(name: str, node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(f"{name} = {ast.unparse(node)} is not a value") from None


def _assigned_names(source: str) -> list[str]:
    return [
        target.id
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    ]
