"""groove as a library: one call per task, returning the dataclasses the CLI renders.

``import groove`` exposes these functions; docs/api.md shows each with real output. Paths
may be ``str`` or path-like, and ``~`` expands. Keywords are the settings declared in
groove.settings: each function writes out only what no setting declares (``progress``)
and what it takes by position, and its signature gains the rest from its task's table
(``offers``, groove.settings.signatures), so help() and Jupyter show every keyword with its
type and default, and a misspelt one is Python's TypeError. Each value is checked by its
declaration (a wrong value is a ConfigError, as on the command line); a keyword left as
None comes from groove.toml (found as the CLI finds it, or ``config=``), else from the
built-in default. Heavy modules are imported inside the functions, so that importing
groove stays cheap.

Unlike ``groove eval``, ``evaluate`` does not append the run to the eval history unless
``save_history=True``: an exploratory run in a notebook must not become the baseline the
CI gate compares against. It still reads the history, to diff against its baseline
(groove.history.baseline). With ``save_history=True`` the run is appended only after
the evaluation finished: a run that failed leaves the history as it was.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.progress import ProgressFn, Task, watched
from groove.settings import (
    BASELINE,
    BASELINE_ACCEPT,
    BASELINE_RUN,
    EVAL,
    GOLDEN_DOCTOR,
    INDEX,
    JUDGE,
    POOL,
    SEARCH,
    TUNE,
    Setting,
    boundary,
)
from groove.settings.signatures import offers

if TYPE_CHECKING:
    from typing import Unpack

    from groove.config import Config
    from groove.engine.index import IndexSummary
    from groove.engine.search import SearchResult
    from groove.evaluation.result import EvalRun
    from groove.golden.proposals import DoctorReport
    from groove.history.history import History
    from groove.judging.pool import Pool
    from groove.notebooks.judge import JudgeView
    from groove.notes import Note
    from groove.progress import Progress
    from groove.runs.record import RunRecord
    from groove.settings.keywords import (
        EvaluateKeywords,
        GoldenDoctorKeywords,
        IndexKeywords,
        JudgeKeywords,
        PoolKeywords,
        SearchKeywords,
        TuneKeywords,
    )
    from groove.tuning.result import TuneResult

PathArg = str | os.PathLike[str]
_PROGRESS = "a function (Progress), True, False or None"  # what progress= takes

# The API's boundary: a GrooveError leaves each public function worded once, as Python says
# its inputs (``keyword kb_path``, ``kb_path=PATH``), in its ``message``, ``hint`` and str().
_api = boundary("api")


@_api
@offers(INDEX, "api")
def index(
    kb_path: PathArg | None,
    *,
    config: PathArg | None = None,
    progress: Callable[[Progress], None] | bool | None = None,
    **keywords: Unpack[IndexKeywords],
) -> IndexSummary:
    """Index (or update the index of) the knowledge base at ``kb_path``, like ``groove index``.

    Only new and changed files are embedded. ``progress`` receives a ``Progress`` (task
    ``index``, stage ``embed``) as chunks are embedded (by default a bar is drawn where a
    person watches: in Jupyter, on a terminal; ``progress=False`` draws none). ``lexical``
    records that mode in the index (``--lexical``); without it the recorded mode is kept,
    ``force`` included. Returns what the build did: the counts, ``skipped`` and
    ``warnings``, and its ``notes`` (what the CLI prints on stderr); its repr is a card.
    """
    from groove.engine.index import build
    from groove.engine.session import check_kb_path, index_embedder
    from groove.resolve import resolve

    given = _keywords(INDEX, kb_path=kb_path, **keywords)
    _checked("progress", progress, _progress_value, _PROGRESS)
    loaded = _config(config)
    chosen = resolve(INDEX, loaded, given)
    kb = check_kb_path(chosen["kb_path"])
    chosen_model_path = chosen["model_path"]
    embedder = index_embedder(
        kb,
        db_path=chosen["db_path"],
        model=chosen["model"],
        model_path=chosen_model_path,
        config=loaded,
    )
    with _watching(progress, "index") as shown:
        return build(
            kb,
            embedder,
            db_path=chosen["db_path"],
            config=loaded,
            force=chosen["force"],
            progress=shown,
            model_path=chosen_model_path,
            lexical=chosen["lexical"],
        )


@_api
@offers(SEARCH, "api")
def search(
    query: str,
    kb_path: PathArg | None,
    *,
    config: PathArg | None = None,
    **keywords: Unpack[SearchKeywords],
) -> SearchResult:
    """Search the index of ``kb_path`` with the hybrid pipeline, like ``groove search``.

    Returns the ranked ``hits`` (rank, path, heading, score, content) and any warnings.
    ``limit`` runs from 1 to groove.settings.LIMIT_MAX. ``lexical`` ("auto", "trigram" or
    "porter") picks the full-text index of the bm25 leg, as ``--lexical`` does.
    """
    from groove.engine.search_settings import resolve_settings, search_once

    _checked("query", query, lambda v: isinstance(v, str), "text")
    given = _keywords(SEARCH, kb_path=kb_path, **keywords)
    loaded = _config(config)
    return search_once(query, resolve_settings(loaded, **given), loaded)


@_api
@offers(EVAL, "api")
def evaluate(
    kb_path: PathArg | None,
    golden: PathArg | None = None,
    *,
    config: PathArg | None = None,
    progress: Callable[[Progress], None] | bool | None = None,
    **keywords: Unpack[EvaluateKeywords],
) -> EvalRun:
    """Score the golden queries of ``golden`` (default: ``[eval].golden``, else
    ``<kb>/.groove-eval.yml``) against the index of ``kb_path``, like ``groove eval``.

    ``history=False`` neither reads nor writes the eval history; ``save_history=True``
    appends this run to it (what ``groove eval`` always does). ``explain=True`` attributes
    every miss to a cause (``groove eval --explain``); ``lexical`` picks the full-text index
    (``--lexical``) and, like every search setting, is part of the run's fingerprint. The
    result's ``per_query_frame()``, ``aggregate_frame()`` and ``attribution_frame()`` are
    pandas views of it.
    ``retriever_name`` is the fingerprint name of the ``retriever`` below (``--retriever-name``).
    ``retriever`` measures another system instead of groove's engine, as ``--retriever``
    does (``kb_path`` may then be None; docs/retrievers.md), read with
    ``retriever_options`` (name, headers, timeout, concurrency, retries, body, hits, fields).
    ``name`` labels the run wherever runs are listed (``--name``).
    ``baseline`` compares with the run pinned under that name (``set_baseline``);
    ``baseline_file`` is the committed accepted baseline the gate also compares with
    (default: ``[eval].baseline_file``, else ``<golden stem>.baseline.json`` beside the
    golden file, when it exists; ``accept_baseline(..., file=...)`` writes it);
    ``require_baseline=True`` makes the result's ``exit_code`` 4 when the regression gate
    could not be applied (its ``gate_status.reason`` says why). ``slice_by="folder"``
    adds a slice per top folder of the expected paths to the tag slices (``result.slices``);
    ``gate_slices=True`` also gates every slice of at least ``slice_min_queries`` queries
    (``result.slice_gate``; docs/eval.md, "Slices"). ``progress`` receives a
    ``Progress`` (task ``evaluate``) as each golden query is searched or answered.
    """
    from groove.evaluation import run as evaluation
    from groove.evaluation.settings import resolve_settings
    from groove.tuning.reach import PROBE

    given = _keywords(EVAL, kb_path=kb_path, golden=golden, **keywords)
    _checked("progress", progress, _progress_value, _PROGRESS)
    settings = resolve_settings(_config(config), **given)
    with _watching(progress, "evaluate") as shown:
        return evaluation.run(settings, grid=PROBE, progress=shown)


@_api
def set_baseline(kb_path: PathArg | None, name: str, run: str | None = None) -> RunRecord:
    """Pin the run ``run`` (a run's name, an id or an unambiguous prefix; default: the newest) of
    ``kb_path``'s history as the baseline ``name``, like ``groove baseline set``; returns it.
    ``evaluate(..., baseline=name)`` and ``groove eval --baseline NAME`` compare with it."""
    from groove.history import baseline

    _checked("name", name, _text, "text")
    _checked("run", run, _text_or_none, "text (a run name, id or id prefix) or None")
    path, size = _history_file(_baseline_settings(BASELINE_RUN, kb_path))
    return baseline.pin(path, name, run, size)


@_api
def accept_baseline(
    kb_path: PathArg | None,
    run: str | None = None,
    *,
    name: str | None = None,
    file: PathArg | bool | None = None,
) -> RunRecord:
    """Accept the run ``run`` (default: the newest) as the accepted baseline (the floor the
    gate compares with: an intended drop, or a gain to keep), like ``groove baseline
    accept``: the next runs of its configuration compare with it. With ``name``, pin it
    under that name too. With ``file`` (a path, or True: ``[eval].baseline_file``, else
    ``.groove-eval.baseline.json`` beside the KB's golden file), write it into that
    baseline file to commit instead, like ``groove baseline accept --file``. Returns the
    accepted run."""
    from groove.history import baseline

    _checked("run", run, _text_or_none, "text (a run name, id or id prefix) or None")
    _checked("name", name, _text_or_none, "text or None")
    values = _baseline_settings(BASELINE_ACCEPT, kb_path)
    path, size = _history_file(values)
    if file is None or file is False:
        accepted, _ = baseline.accept(path, run, name, size)
        return accepted
    if file is True:
        from groove.evaluation.settings import GOLDEN_FILE_NAME, baseline_file_for

        golden = values["golden"] or path.parent / GOLDEN_FILE_NAME
        target = baseline_file_for(values["baseline_file"], golden)
    else:
        target = _path(file, "file")
    accepted, _ = baseline.accept_into_file(path, run, target, name, size)
    return accepted


@_api
def unset_baseline(kb_path: PathArg | None, name: str) -> str:
    """Remove the pinned baseline ``name`` (``groove baseline unset``); returns its run id."""
    from groove.history import baseline

    _checked("name", name, _text, "text")
    path, size = _history_file(_baseline_settings(BASELINE, kb_path))
    return baseline.unpin(path, name, size)


def _baseline_settings(table: Mapping[str, Setting], kb_path: PathArg | None) -> dict[str, Any]:
    """A baseline command's settings: ``kb_path`` over groove.toml over the defaults."""
    from groove.resolve import resolve

    return resolve(table, _config(None), _keywords(table, kb_path=kb_path))


def _history_file(values: Mapping[str, Any]) -> tuple[Path, int]:
    from groove.engine.session import check_kb_path
    from groove.history.history import history_path

    return history_path(check_kb_path(values["kb_path"])), values["history_size"]


@_api
def load_history(kb_path: PathArg) -> History:
    """The eval history of ``kb_path`` (``<kb>/.groove-eval-history.json``), newest run
    first; empty when there is none yet. ``runs_frame()`` gives one row per run, oldest first."""
    from groove.engine.session import check_kb_path
    from groove.history.history import history_path
    from groove.history.history import load_history as read_history

    kb = check_kb_path(_keywords(EVAL, kb_path=kb_path)["kb_path"])
    return read_history(history_path(kb))


@_api
@offers(TUNE, "api")
def tune(
    kb_path: PathArg | None,
    golden: PathArg | None = None,
    *,
    config: PathArg | None = None,
    progress: Callable[[Progress], None] | bool | None = None,
    on_note: Callable[[Note], None] | None = None,
    **keywords: Unpack[TuneKeywords],
) -> TuneResult:
    """Sweep rrf_k and the bm25 weights on ``kb_path``'s index, like ``groove tune``.

    Applies nothing; ``lexical`` picks the full-text index swept (``--lexical``).
    ``progress`` receives a ``Progress`` (task ``tune``) at each step (pre-flight, sweep,
    each query) and ``on_note`` each ``Note`` as it arises (all of them are in the result
    too). The result's ``conditions_frame()``, ``table_frame()`` and ``folds_frame()`` are
    pandas views of it; ``save_tune`` writes it for ``load_tune``.

    With ``retriever`` (and ``retriever_options`` / ``retriever_name`` as ``evaluate``
    takes them) it tunes that engine's fusion over the legs it returns, like ``groove tune
    --retriever``: ``family`` (rrf, weighted_rrf, convex), ``engine`` (whose terms the
    recommendation is written in) and ``window`` (the deepest window swept) apply; the
    result is the same ``TuneResult``, its ``source`` the retriever's legs (docs/engines.md).
    """
    from groove.tuning import run as tune_run
    from groove.tuning.settings import resolve_settings

    given = _keywords(TUNE, kb_path=kb_path, golden=golden, **keywords)
    _checked("progress", progress, _progress_value, _PROGRESS)
    _checked("on_note", on_note, _callable_or_none, "a function (Note) or None")
    settings = resolve_settings(_config(config), **given)
    with _watching(progress, "tune") as shown:
        return tune_run.run(settings, progress=shown, on_note=on_note)


@_api
@offers(POOL, "api")
def pool(
    kb_path: PathArg | None,
    golden: PathArg | None = None,
    *,
    config: PathArg | None = None,
    **keywords: Unpack[PoolKeywords],
) -> Pool:
    """The hits of ``golden``'s queries that no ``expected`` entry and no judgement covers,
    like ``groove golden pool``: from the newest run of each configuration in the history
    (``history``), named ``runs``, a fresh run of groove's engine (``current``), another
    ``retriever``, the tune grid (``tune``); ``depth`` hits per source and query. The
    result's ``candidates`` are ordered most useful first; ``candidates_frame()`` is a
    pandas view."""
    from groove.judging.run import pool as run_pool
    from groove.judging.run import resolve

    given = _keywords(POOL, kb_path=kb_path, golden=golden, **keywords)
    return run_pool(resolve(_config(config), given))


@_api
@offers(GOLDEN_DOCTOR, "api")
def golden_doctor(
    kb_path: PathArg | None,
    golden: PathArg | None = None,
    *,
    config: PathArg | None = None,
    **keywords: Unpack[GoldenDoctorKeywords],
) -> DoctorReport:
    """The expected entries of ``golden`` that the index of ``kb_path`` cannot match, each
    with the most likely new target, its evidence and a confidence (certain, likely, none),
    plus the golden set's own problems, like ``groove golden doctor``. It reads the index
    and the eval history; with ``apply`` it rewrites the certain entries in the golden file
    (``accept_likely``: the likely ones too), every other byte kept."""
    from groove.evaluation.doctor import resolve_doctor, run_doctor

    given = _keywords(GOLDEN_DOCTOR, kb_path=kb_path, golden=golden, **keywords)
    return run_doctor(resolve_doctor(_config(config), given))


@_api
@offers(JUDGE, "api")
def judge(
    kb_path: PathArg | None,
    golden: PathArg | None = None,
    *,
    config: PathArg | None = None,
    **keywords: Unpack[JudgeKeywords],
) -> JudgeView:
    """The judging view for Jupyter over ``pool(...)``'s candidates: relevant / not
    relevant / skip with the keys r / n / s, each verdict saved at once beside the golden
    file, resuming where it stopped (docs/judgements.md). It takes ``pool``'s keywords
    and ``by``: who judges (default: $GROOVE_JUDGE, else ``[eval].judge``, else the login
    name)."""
    from groove.notebooks.judge import build_view

    return build_view(kb_path=kb_path, golden=golden, config=config, **keywords)


@_api
def save_tune(result: TuneResult, path: PathArg) -> Path:
    """Write ``result`` with its whole metric table to ``path`` (JSON); return the path."""
    from groove.tuning import export
    from groove.tuning.result import TuneResult

    _checked("result", result, lambda v: isinstance(v, TuneResult), "a TuneResult")
    return export.save_tune(result, _path(path, "path"))


@_api
def load_tune(path: PathArg) -> TuneResult:
    """A tune result saved by ``save_tune`` or by the tune-explorer notebook (its
    result.json). The selection and the gates are recomputed from the saved table."""
    from groove.tuning import export

    return export.load_tune(_path(path, "path"))


def _path(value: Any, name: str) -> Path:
    """A path keyword, or a ConfigError naming it."""
    _checked(name, value, lambda v: isinstance(v, str | os.PathLike) and str(v) != "", "a path")
    return Path(value).expanduser()


@contextmanager
def _watching(progress: Any, task: Task) -> Iterator[ProgressFn | None]:
    """The progress function a call passes down (``watched``); its bars close at the end."""
    shown, finished = watched(progress, task)
    try:
        yield shown
    finally:
        finished()


def _callable_or_none(value: Any) -> bool:
    return value is None or callable(value)


def _progress_value(value: Any) -> bool:
    return value is None or isinstance(value, bool) or callable(value)


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _checked(name: str, value: Any, ok: Callable[[Any], bool], wanted: str) -> None:
    """``value`` of keyword ``name`` if ``ok`` says so, else a ConfigError (as Setting.parse
    words it)."""
    from groove.errors import ConfigError, literal

    if not ok(value):
        raise ConfigError(
            f"{{setting}} must be {wanted}, got {literal(repr(value))}",
            f"pass {{give}} as {wanted}",
            setting=name,
        )


def _keywords(table: Mapping[str, Setting], **given: Any) -> dict[str, Any]:
    return {name: table[name].parse(value) for name, value in given.items()}


def _config(path: PathArg | None) -> Config:
    from groove.config import load_config

    return load_config(_path(path, "config") if path is not None else None)
