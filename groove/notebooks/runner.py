"""The notebook runner: execute a report notebook with papermill, give one exit code.

    groove notebook run eval-report --kb-path KB [-p NAME VALUE]... --out DIR
    python -m groove.notebooks.runner eval-report --kb-path KB --out DIR

writes ``DIR/<name>.ipynb`` (executed), ``DIR/<name>.html`` and ``DIR/result.json``, also
when the run fails (eval-report adds ``DIR/summary.md``, its Markdown report, and
tune-explorer its text report there, when it ran through). The exit code is read from
result.json, never from papermill:

    0  passed          the notebook ran and wrote exit_code 0
    1  regression      eval-report with fail_on_regression found one
    4  not applied     eval-report with require_baseline, and the regression gate could not
                       be applied (no comparable baseline, too few queries)
    2  bad input       refused before execution (unknown parameter, unwritable --out), or
                       the notebook caught a GrooveError (no golden file, no index...)
    3  failed          a cell raised anything else, ran longer than --cell-timeout, the
                       kernel died, or no valid result.json was written; result.json then
                       names the failing cell

This module is the runner's half, in the caller's process: parameters, kernel, papermill,
nbconvert, and the result.json contract. The kernel's half is ``groove.notebooks.kernel``:
the notebooks' run cell calls ``eval_report`` / ``tune_explorer`` there, which run groove,
turn a GrooveError into exit code 2 and write result.json with ``write_result``.
papermill, nbconvert and jupyter_client are imported inside functions: ``groove --help``
must not pay for them.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from groove.atomic import write_file
from groove.errors import (
    EXIT_BAD_INPUT,
    EXIT_NO_BASELINE,
    EXIT_NOTEBOOK_FAILED,
    EXIT_OK,
    EXIT_REGRESSION,
    Face,
    GrooveError,
    NotebookError,
    literal,
)
from groove.notebooks import cells, export
from groove.notebooks.pending import PENDING_ENV, pending_path
from groove.report.notebook.headless import HEADLESS_ENV
from groove.settings import NOTEBOOK_RUN
from groove.settings.spelling import spell, spelled

NOTEBOOKS = {
    "eval-report": "eval_report.ipynb",
    "tune-explorer": "tune_explorer.ipynb",
    "judge": "judge.ipynb",
}
RESULT_FILE = "result.json"
RESULT_SCHEMA = Path(__file__).with_name("result.schema.json")  # the result.json contract
SUMMARY_FILE = "summary.md"  # the Markdown summary beside result.json (for a CI page)
# A live copy (``groove notebook open``) names its outputs after its notebook, so two
# notebooks opened in one folder keep each other's results: eval-report.result.json, ...
NAMED_RESULT_SUFFIX = ".result.json"
NAMED_SUMMARY_SUFFIX = ".summary.md"
KERNEL_NAME = "python3"
PRIVATE_KERNEL_NAME = "groove"
RUNNER_PARAMETERS = ("result_path",)  # set by the runner, never by -p

_EXIT_CODES = (EXIT_OK, EXIT_REGRESSION, EXIT_BAD_INPUT, EXIT_NOTEBOOK_FAILED, EXIT_NO_BASELINE)


_QUIET_LOGGERS = ("papermill", "traitlets", "nbclient", "jupyter_client")


def notebook_dir() -> Path:
    """Where the notebooks are: the checkout's top-level ``notebooks/`` (editable installs)
    or ``<prefix>/share/groove/notebooks`` (where a wheel puts them)."""
    checkout = Path(__file__).resolve().parents[2] / "notebooks"  # <checkout>/groove/notebooks/
    installed = Path(sys.prefix) / "share" / "groove" / "notebooks"
    return checkout if checkout.is_dir() or not installed.is_dir() else installed


# ---------------------------------------------------------------- parameters


def parse_value(text: str) -> Any:
    """A ``-p`` value read like papermill reads it: a YAML scalar or flow list/mapping
    (``20`` -> 20, ``false`` -> False, ``[1,5,10]`` -> [1, 5, 10], ``null`` -> None); text
    YAML would turn into anything else (a date, say) stays the text it was."""
    import yaml

    if text == "":
        return ""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if _plain(value) else text


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def parse_parameters(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``-p NAME VALUE`` pairs as a dict (a later pair wins, as in papermill)."""
    return {name: parse_value(value) for name, value in pairs}


def allowed_parameters(notebook: Path, bundled: str | None = None) -> tuple[str, ...]:
    """The names the notebook's ``parameters`` cell assigns, in order; for the bundled
    notebook ``bundled``, then the settings of its table the cell lacks (notebooks.cells)."""
    import papermill

    with _quiet_logs():
        names = tuple(papermill.inspect_notebook(str(notebook)))
    return cells.allowed(bundled, names) if bundled is not None else names


def read_notebook(source: Path, bundled: str | None = None) -> Any:
    """The notebook at ``source`` (an nbformat node); for the bundled notebook ``bundled``,
    its parameters cell completed from its table (notebooks.cells)."""
    import nbformat

    notebook = nbformat.read(str(source), as_version=4)
    return cells.complete(notebook, bundled) if bundled is not None else notebook


def check_parameters(parameters: Mapping[str, Any], allowed: Sequence[str], name: str) -> None:
    for key in parameters:
        if key in RUNNER_PARAMETERS:
            raise NotebookError(f"{key} is set by the runner (<out>/{RESULT_FILE}); drop -p {key}")
        if key not in allowed:
            settable = [p for p in allowed if p not in RUNNER_PARAMETERS]
            names = ", ".join(settable)
            close = difflib.get_close_matches(key, settable, n=1)
            hint = (
                f"did you mean -p {close[0]}?"
                if close
                else "docs/notebooks.md says what each parameter does"
            )
            raise NotebookError(f"unknown parameter {key!r} for {name}; allowed: {names}", hint)


def own_values(source: Path, allowed: Sequence[str], given: Mapping[str, Any]) -> dict[str, Any]:
    """The values the notebook at ``source`` (a copy) injected for its parameters, which
    papermill's injection for this run would replace (notebooks.cells.copy_values); one
    ``-p`` sets anyway needs no value of the copy's."""
    declared = [p for p in allowed if p not in RUNNER_PARAMETERS and p not in given]
    try:
        return cells.copy_values(read_notebook(source), declared)
    except ValueError as exc:
        raise NotebookError(
            literal(f"{source}: {exc}"), "write the value there, or pass -p NAME VALUE"
        ) from None


# ---------------------------------------------------------------- kernel


def _runs_this_interpreter(argv: Sequence[str]) -> bool:
    # jupyter_client replaces a bare python / python3 / python3.X with sys.executable.
    bare = {"python", f"python{sys.version_info[0]}", "python{}.{}".format(*sys.version_info)}
    if not argv:
        return False
    same = argv[0] in bare or os.path.abspath(argv[0]) == os.path.abspath(sys.executable)
    return same and any("ipykernel" in part for part in argv[1:])


def kernel_name() -> str:
    """A kernel that runs this interpreter (so the notebook sees this environment's groove).

    ``python3`` when its kernelspec resolves to ``sys.executable`` (ipykernel's own spec, or
    one installed with ``--sys-prefix``); otherwise a ``groove`` kernelspec is installed into
    ``sys.prefix`` once, pointing at ``sys.executable``.
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    manager = KernelSpecManager()
    for name in (KERNEL_NAME, PRIVATE_KERNEL_NAME):
        try:
            if _runs_this_interpreter(manager.get_kernel_spec(name).argv):
                return name
        except NoSuchKernel:
            continue
    from ipykernel.kernelspec import install

    try:
        install(kernel_name=PRIVATE_KERNEL_NAME, display_name="Python (groove)", prefix=sys.prefix)
    except OSError as exc:
        raise NotebookError(
            f"no Jupyter kernel runs {sys.executable}, and one cannot be installed into "
            f"{sys.prefix} ({exc.strerror or exc})",
            f"run `{sys.executable} -m ipykernel install --sys-prefix` with the right permissions",
        ) from exc
    if not _runs_this_interpreter(KernelSpecManager().get_kernel_spec(PRIVATE_KERNEL_NAME).argv):
        raise NotebookError(
            f"no Jupyter kernel runs {sys.executable}: a kernelspec named "
            f"{PRIVATE_KERNEL_NAME!r} elsewhere shadows the one installed in {sys.prefix}"
        )
    return PRIVATE_KERNEL_NAME


def _kernel_manager(stderr: IO[bytes]) -> type:
    """A kernel manager on IPC sockets whose kernel writes its stderr to ``stderr``.

    IPC: a local run needs no TCP port, and ipykernel does not warn about unencrypted TCP.
    The kernel process's own stderr (its log, not the cells' output, which travels over
    the sockets) goes to a file so that the runner's stderr stays one line; its tail is
    kept in result.json when the kernel dies.
    """
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum

    class QuietIpcKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc")

        async def start_kernel(self, **kw: Any) -> None:  # type: ignore[override]
            kw.setdefault("stderr", stderr)
            kw["env"] = {**kw.get("env", os.environ), HEADLESS_ENV: "1", PENDING_ENV: "1"}
            await super().start_kernel(**kw)

    return QuietIpcKernelManager


@contextmanager
def _quiet_logs() -> Iterator[None]:
    """papermill and nbclient log progress and failures; the runner reports them itself."""
    loggers = [logging.getLogger(name) for name in _QUIET_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


# ---------------------------------------------------------------- running


@dataclass(frozen=True)
class RunReport:
    """What one runner call produced (the CLI words it: groove.cli.words.notebook_line)."""

    name: str
    exit_code: int
    notebook: Path
    html: Path | None
    result_path: Path
    result: Mapping[str, Any]
    seconds: Mapping[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.exit_code in (EXIT_OK, EXIT_REGRESSION, EXIT_NO_BASELINE)


@dataclass(frozen=True)
class _Failure:
    message: str
    cell: Mapping[str, Any] | None = None
    kernel_stderr: Sequence[str] = ()
    hint: str | None = None


def resolve_notebook(name: str | None, notebook: Path | None) -> tuple[str, Path]:
    """(output name, notebook file): ``--notebook PATH`` wins; else a registered name."""
    if notebook is not None:
        if not notebook.is_file():
            raise NotebookError(f"notebook not found: {notebook}")
        return name or notebook.stem, notebook
    if name not in NOTEBOOKS:
        raise NotebookError(f"unknown notebook {name!r}; choose one of {', '.join(NOTEBOOKS)}")
    path = notebook_dir() / NOTEBOOKS[name]
    if not path.is_file():
        raise NotebookError(
            literal(f"notebook {name} is missing at {path}; ") + "pass {give:PATH}",
            setting="notebook",
        )
    return name, path


def prepare_out(out_dir: Path) -> Path:
    """Create ``out_dir`` and prove it writable (exit 2 before any work if not)."""
    probe = out_dir / ".groove-write-test"
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise NotebookError(
            "cannot write to {setting} " + literal(f"{out_dir}: {exc.strerror or exc}"),
            setting="out",
        ) from exc
    return out_dir


def summary_path(result_path: Path) -> Path:
    """Where the Markdown summary goes beside ``result_path``: ``summary.md`` beside the
    runner's result.json, ``NAME.summary.md`` beside a live copy's ``NAME.result.json``."""
    name = result_path.name
    if name.endswith(NAMED_RESULT_SUFFIX):
        return result_path.with_name(name[: -len(NAMED_RESULT_SUFFIX)] + NAMED_SUMMARY_SUFFIX)
    return result_path.with_name(SUMMARY_FILE)


def refuse_other_notebooks_outputs(out: Path, label: str) -> None:
    """One --out folder holds one notebook's outputs: a second notebook run into it would
    replace the first one's result.json and summary.md, so it is refused before anything
    is removed."""
    earlier = read_result(out / RESULT_FILE)
    owner = earlier.get("notebook") if earlier else None
    if isinstance(owner, str) and owner != label:
        raise NotebookError(
            literal(f"{out} holds the outputs of {owner}, which this run would replace"),
            "give each notebook its own {setting} " + literal(f"(e.g. {out / label})"),
            setting="out",
        )


def refuse_replacing_the_notebook(executed: Path, source: Path) -> None:
    """The executed notebook goes to ``<out>/<name>.ipynb``: for a copy run from its own
    folder (``notebook open`` writes it there) that is the copy itself, which the run would
    first remove as an earlier output and then overwrite. Refused before anything is
    removed."""
    if executed.resolve() != source.resolve():
        return
    out = executed.parent
    raise NotebookError(
        literal(
            f"{out} would receive the executed {executed.name} over the notebook it runs ({source})"
        ),
        "give the run another {setting} " + literal(f"(e.g. {out / executed.stem})"),
        setting="out",
    )


def remove_earlier_outputs(*paths: Path) -> None:
    """Delete what an earlier run left in the output folder before anything runs: a run
    refused now must not leave the last run's page or notebook beside its own result.json
    (CI uploads the folder), and an old result must never pass for this run's."""
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except IsADirectoryError as exc:
            raise NotebookError(f"cannot replace {path}: it is a folder") from exc
        except OSError as exc:
            raise NotebookError(f"cannot remove {path}: {exc.strerror or exc}") from exc


def run_notebook(
    name: str | None,
    *,
    out_dir: Path,
    kb_path: Path | None = None,
    parameters: Mapping[str, Any] | None = None,
    notebook: Path | None = None,
    config: Path | None = None,
    cwd: Path | None = None,
    cell_timeout: int | None = None,
    face: Face = "api",
) -> RunReport:
    """Execute the notebook, export HTML, and read the exit code from result.json.

    Refusals before execution raise NotebookError (exit 2). Relative paths in parameters
    resolve against ``cwd`` (default: the current directory), where the kernel runs.
    ``cell_timeout``: seconds one cell may run (None: the declared default, 0: no limit);
    a cell that runs longer stops the run with exit code 3. ``face``: who runs it, as whose
    setting a hint names ``cell_timeout``.
    """
    started = time.perf_counter()
    label, source = resolve_notebook(name, notebook)
    out = prepare_out(out_dir)
    result_path = (out / RESULT_FILE).resolve()
    executed, html = out / f"{label}.ipynb", out / f"{label}.html"
    pending = pending_path(result_path)
    refuse_replacing_the_notebook(executed, source)
    refuse_other_notebooks_outputs(out, label)
    remove_earlier_outputs(executed, html, result_path, summary_path(result_path), pending)
    given = dict(parameters or {})
    bundled = label if notebook is None else None  # its parameters are its table's
    try:
        allowed = allowed_parameters(source, bundled)
        check_parameters(given, allowed, label)
        if notebook is not None:  # a copy's own values are the defaults -p overrides
            given = {**own_values(source, allowed, given), **given}
    except NotebookError as exc:
        document = error_document(EXIT_BAD_INPUT, *spelled(exc, face))
        write_result(result_path, {**document, "notebook": label})
        raise
    if kb_path is not None:
        given["kb_path"] = str(kb_path.resolve())
    if config is not None:
        given["config"] = str(config.resolve())
    given["result_path"] = str(result_path)
    timings = {"prepare": time.perf_counter() - started}
    exporter = _HtmlExporter()  # loads nbconvert while the kernel works
    if cell_timeout is None:
        cell_timeout = NOTEBOOK_RUN["cell_timeout"].default
    try:
        failure = _execute(
            (source, bundled), executed, given, cwd or Path.cwd(), timings, cell_timeout, face
        )
        document = _settle(result_path, failure)
        html_made = exporter.export(source, executed, html, timings)
        document = _commit(pending, result_path, document, html_made)
    except KeyboardInterrupt:
        _interrupted(result_path, label)
        raise
    if document.get("notebook") != label:  # whose outputs the folder holds (see above)
        document = {**document, "notebook": label}
        write_result(result_path, document)
    return RunReport(
        name=label,
        exit_code=int(document["exit_code"]),
        notebook=executed,
        html=html if html_made else None,
        result_path=result_path,
        result=document,
        seconds=timings,
    )


def _execute(
    notebook: tuple[Path, str | None],
    executed: Path,
    parameters: Mapping[str, Any],
    cwd: Path,
    timings: dict,
    cell_timeout: int,
    face: Face,
) -> _Failure | None:
    import papermill
    from nbclient.exceptions import CellTimeoutError
    from papermill.exceptions import PapermillExecutionError

    started = time.perf_counter()
    kernel = kernel_name()
    source, bundled = notebook
    with tempfile.TemporaryFile() as kernel_log:
        try:
            with _quiet_logs():
                papermill.execute_notebook(
                    read_notebook(source, bundled),
                    str(executed),
                    parameters=dict(parameters),
                    kernel_name=kernel,
                    cwd=str(cwd),
                    progress_bar=False,
                    log_output=False,
                    kernel_manager_class=_kernel_manager(kernel_log),
                    shutdown_kernel="immediate",  # the run is over: do not wait for a goodbye
                    execution_timeout=cell_timeout or None,  # None: nbclient waits forever
                )
        except PapermillExecutionError as exc:
            cell = _cell_info(source, exc.source, exc.exec_count, exc.ename, exc.evalue)
            return _Failure(_cell_message(cell), cell)
        except CellTimeoutError as exc:
            # nbclient raises this also when a finished cell's output stops arriving
            # (its iopub_timeout): only an execution past cell_timeout is reported as one.
            if not cell_timeout or _EXECUTION_TIMED_OUT not in str(exc):
                return _stopped(source, executed, exc, kernel_log)
            return _timed_out(source, executed, cell_timeout, face)
        except Exception as exc:  # the kernel died or never started: the interface is exit 3
            return _stopped(source, executed, exc, kernel_log)
        finally:
            timings["execute"] = time.perf_counter() - started
    return None


#: What nbclient's CellTimeoutError says when a cell ran past the execution timeout.
_EXECUTION_TIMED_OUT = "Cell execution timed out"


def _stopped(source: Path, executed: Path, exc: Exception, kernel_log: IO[bytes]) -> _Failure:
    running = _running_cell(source, executed)
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    where = f" in {_cell_name(running)}" if running else ""
    message = f"the kernel stopped{where}: {type(exc).__name__}: {detail}"
    return _Failure(message, running, _tail(kernel_log))


def _timed_out(source: Path, executed: Path, seconds: int, face: Face) -> _Failure:
    """The cell that was running when the timeout stopped it (papermill saved the notebook
    with that cell started and none after it)."""
    running = _running_cell(source, executed)
    cell = None
    if running is not None:
        evalue = f"no result after {seconds} s"
        cell = {**running, "ename": "CellTimeoutError", "evalue": evalue}
    what = _cell_name(cell) if cell is not None else "a cell"
    return _Failure(f"{what} timed out after {seconds} s", cell, hint=timeout_hint(seconds, face))


def timeout_hint(seconds: int, face: Face) -> str:
    """How to give a cell more time, as the face running the notebook names the setting
    (``groove notebook run``: ``--cell-timeout SECONDS``)."""
    return spell(f"raise it with {{give_cell_timeout:SECONDS}} (now {seconds}; 0: no limit)", face)


def _tail(log: IO[bytes], lines: int = 20) -> list[str]:
    log.seek(0)
    return log.read().decode("utf-8", "replace").splitlines()[-lines:]


def _cell_info(
    source: Path, text: str, exec_count: int | None, ename: str, evalue: str
) -> dict[str, Any]:
    import nbformat

    cells = nbformat.read(str(source), as_version=4).cells
    index = next((i for i, c in enumerate(cells) if c.source == text), None)
    first = next((line for line in text.splitlines() if line.strip()), "")
    return {
        "index": index,
        "execution_count": exec_count,
        "source": first[:80],
        "ename": ename,
        "evalue": evalue,
    }


def _running_cell(source: Path, executed: Path) -> dict[str, Any] | None:
    """The cell the kernel was running when it stopped, from the notebook papermill saved:
    the one marked as raising, else the last one that started (none after it did)."""
    import nbformat

    try:
        cells = nbformat.read(str(executed), as_version=4).cells
    except (OSError, ValueError):
        return None
    started = [c for c in cells if c.get("metadata", {}).get("papermill", {}).get("start_time")]
    marked = [c for c in started if c.metadata.papermill.get("exception")]
    cell = (marked or started or [None])[-1 if not marked else 0]
    if cell is None:
        return None
    return _cell_info(source, cell.source, cell.get("execution_count"), "", "")


def _cell_name(cell: Mapping[str, Any]) -> str:
    index = "?" if cell["index"] is None else cell["index"]
    count = cell["execution_count"]
    prompt = f" (In [{count}])" if count is not None else ""
    return f"cell {index}{prompt} `{cell['source']}`"


def _cell_message(cell: Mapping[str, Any]) -> str:
    evalue = str(cell["evalue"]).strip().splitlines()
    detail = f": {evalue[0]}" if evalue else ""
    return f"{_cell_name(cell)} raised {cell['ename']}{detail}"


def _settle(result_path: Path, failure: _Failure | None) -> dict[str, Any]:
    """The final result.json: the notebook's own when it ran through, else exit code 3."""
    written = read_result(result_path)
    if failure is None and written is not None:
        return written
    if failure is None:
        failure = _Failure(f"the notebook finished without writing a valid {RESULT_FILE}")
    document = error_document(EXIT_NOTEBOOK_FAILED, failure.message, failure.hint)
    if failure.cell is not None:
        document["cell"] = dict(failure.cell)
    if failure.kernel_stderr:
        document["kernel_stderr"] = list(failure.kernel_stderr)
    write_result(result_path, document)
    return document


def _commit(
    pending: Path, result_path: Path, document: dict[str, Any], html_made: bool
) -> dict[str, Any]:
    """Append the run eval-report left pending (groove.notebooks.pending) now that every
    output is written: only for exit 0 or 1 (exit 4: see evaluation.run.save) and only with
    the HTML page written; otherwise the history stays as it was."""
    from groove.notebooks.pending import append

    try:
        if not pending.exists() or document["exit_code"] not in (EXIT_OK, EXIT_REGRESSION):
            return document
        if not html_made:
            message = "the HTML page could not be written, so the run was not added to the history"
            document = error_document(EXIT_NOTEBOOK_FAILED, message)
        else:
            append(pending)
    except GrooveError as exc:  # the history's refusal, in the words result.json has used
        document = error_document(exc.exit_code, *spelled(exc, "api"))
    except (OSError, ValueError, KeyError) as exc:
        message = f"could not add the run to the history ({pending.name}): {exc}"
        document = error_document(EXIT_NOTEBOOK_FAILED, message)
    finally:
        pending.unlink(missing_ok=True)
    write_result(result_path, document)
    return document


def _interrupted(result_path: Path, label: str) -> None:
    """Ctrl-C during a run: the kernel may already have written its result.json and
    summary.md ("passed") though the page never was; neither may stand for the run."""
    message = "the run was interrupted before all its outputs were written"
    write_result(result_path, {**error_document(EXIT_NOTEBOOK_FAILED, message), "notebook": label})
    summary_path(result_path).unlink(missing_ok=True)


def read_result(path: Path) -> dict[str, Any] | None:
    """result.json as a dict, or None if absent, unreadable or without a valid exit_code."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(document, dict) or document.get("exit_code") not in _EXIT_CODES:
        return None
    return document


class _HtmlExporter:
    """nbconvert's HTML exporter, imported and warmed up (templates loaded) in a thread
    started before execution: the runner only waits on the kernel then, so on a machine
    with a spare core the import costs no wall time."""

    def __init__(self) -> None:
        self._exporter: Any = None
        self._thread = threading.Thread(target=self._load, name="groove-nbconvert", daemon=True)
        self._thread.start()

    def _load(self) -> None:
        try:
            import nbformat

            exporter = export.html_exporter()
            exporter.from_notebook_node(nbformat.v4.new_notebook())
            self._exporter = exporter
        except Exception:  # export() imports again and reports a real failure
            self._exporter = None

    def export(self, source: Path, executed: Path, html: Path, timings: dict) -> bool:
        """Write the executed notebook (the source one if the kernel never saved it) as HTML."""
        import nbformat

        started = time.perf_counter()
        self._thread.join()
        try:
            if self._exporter is None:
                self._exporter = export.html_exporter()
            notebook = nbformat.read(str(executed if executed.is_file() else source), 4)
            # set-up cells collapsed, so the notebook opens on its verdict too
            if export.collapse_setup(notebook) or not executed.is_file():
                write_file(executed, nbformat.writes(notebook) + "\n")
            body, _ = self._exporter.from_notebook_node(widgets_as_text(notebook))
            write_file(html, body)
        except (OSError, ValueError):
            return False
        finally:
            timings["html"] = time.perf_counter() - started
        return True


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def widgets_as_text(notebook: Any) -> Any:
    """A copy of ``notebook`` whose widget outputs keep only their plain text.

    A widget needs a live kernel to do anything; exported, it is at best a frozen box
    drawn by a script nbconvert loads from a CDN (so blank offline). Its text form (for the
    condition picker: what to install and where) says more, and without the saved widget
    state the page loads no script from the network.
    """
    import copy

    page = copy.deepcopy(notebook)
    page.metadata.pop("widgets", None)
    for cell in page.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data and "text/plain" in data:
                del data[WIDGET_VIEW]
    return page


# ---------------------------------------------------------------- result.json


def error_document(exit_code: int, message: str, hint: str | None = None) -> dict[str, Any]:
    """result.json of a run that produced no result: exit code 2 or 3 and what went wrong."""
    return {"verdict": "error", "exit_code": exit_code, "error": message, "hint": hint}


def write_result(path: Path, document: Mapping[str, Any]) -> None:
    """Write result.json (atomically): ``document`` as sorted, indented JSON."""
    write_file(path, json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    # ``python -m groove.notebooks.runner NAME ...`` is ``groove notebook run NAME ...``: the
    # script hands over to the CLI; the module groove.notebooks.runner never imports it.
    from groove.cli import main

    main(["notebook", "run", *sys.argv[1:]])
