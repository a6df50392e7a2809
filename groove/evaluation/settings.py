"""The inputs of one ``groove eval``: flags over groove.toml over built-in defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from groove.config import Config
from groove.engine.search import SearchOptions, build_options
from groove.engine.session import check_kb_path
from groove.errors import ConfigError, Face, GoldenError, literal
from groove.notes import Note
from groove.resolve import ByName, Rule, limit_from_k, resolve
from groove.settings import DEFAULT_LIMIT, EVAL, EVAL_RETRIEVAL_CAP, PIPELINE, Setting

if TYPE_CHECKING:
    from groove.retrievers.spec import RetrieverSpec

GOLDEN_FILE_NAME = ".groove-eval.yml"
NOTE_LIMIT_CAPPED = "limit-capped"


@dataclass(frozen=True)
class EvalSettings(ByName):
    """Every input of one eval, already resolved from flags, groove.toml and defaults.

    With an external ``retriever`` the KB is optional: when given (and indexed) it supplies
    the corpus snapshot and the golden-leak check, and holds the history.
    """

    kb_path: Path | None
    golden_path: Path
    k_values: tuple[int, ...] = EVAL["k_values"].default
    limit: int = DEFAULT_LIMIT
    search: SearchOptions = field(default_factory=SearchOptions)
    db_path: Path | None = None
    model: str | None = None
    model_path: Path | None = None
    reranker: str | None = None
    history_size: int = EVAL["history_size"].default
    regression_threshold: float = EVAL["regression_threshold"].default
    regression_gate: str = EVAL["regression_gate"].default
    alpha: float = EVAL["alpha"].default
    history: bool = True
    save_history: bool = True
    diff: bool = True
    fail_on_regression: bool = False
    notes: tuple[Note, ...] = ()
    retriever: RetrieverSpec | None = None
    explain: bool = False  # attribute every miss to a cause (groove eval --explain)
    latency: bool = False  # the text report's latency line for groove's engine (--latency)
    exclude_dirs: tuple[str, ...] | None = None  # the index's, to say why a path is absent
    baseline: str | None = None  # compare with the run pinned under this name
    # the committed accepted baseline (groove.history.baseline_file); used when it exists
    baseline_file: Path | None = None
    # "gate not applied" is a failure (exit 4)
    require_baseline: bool = EVAL["require_baseline"].default
    # the slices reported and whether the gate also judges each slice of at least
    # slice_min_queries queries (groove.stats.slices)
    slice_by: str = EVAL["slice_by"].default
    gate_slices: bool = EVAL["gate_slices"].default
    slice_min_queries: int = EVAL["slice_min_queries"].default
    name: str | None = None  # what the run is called wherever runs are listed
    junit: Path | None = None  # also write the run as a JUnit XML report (groove.report.junit)
    face: Face = "api"  # who runs it: the text it words (a note, the gate's reason) says so
    #: The resolved EVAL settings that have no field above, by name: a new setting needs
    #: its declaration only, and is read as ``settings["name"]``.
    values: Mapping[str, Any] = field(default_factory=dict, hash=False, repr=False)
    TABLE: ClassVar[Mapping[str, Setting]] = EVAL
    TABLE_NAME: ClassVar[str] = "EVAL"

    @property
    def depth(self) -> int:
        """How many hits each query retrieves: the larger of max(k) and the limit."""
        return max(max(self.k_values, default=DEFAULT_LIMIT), self.limit)


def golden_file(golden: Path | None, kb: Path | None) -> Path | None:
    """The resolved ``golden`` setting (given, else ``[eval].golden``), else the KB's
    ``.groove-eval.yml``; None with neither (a retriever measured without a KB)."""
    if golden is not None:
        return golden
    return kb / GOLDEN_FILE_NAME if kb is not None else None


def resolve_settings(
    config: Config,
    /,
    *,
    retriever: RetrieverSpec | str | None = None,
    face: Face = "api",
    **given: Any,
) -> EvalSettings:
    """The EVAL settings ``given`` by a face (by name, None: not given) over groove.toml
    over the declared defaults (groove.resolve), then eval's own rules.

    ``retriever`` is a spec the CLI built from its flags, or the text the API and the
    notebook take, read with ``retriever_options`` and ``retriever_name``. ``history``
    reads the eval history (to diff against) and, unless ``save_history`` is False,
    appends the run to it; ``save_history`` defaults to ``history`` (the CLI's and the
    notebook's rule; the API passes False unless asked).
    """
    from groove.retrievers.spec import spec_from_mapping

    notes: list[Note] = []
    values = resolve(EVAL, config, given, EVAL_RULES, notes)
    spec = retriever
    if spec is None or isinstance(spec, str):
        spec = spec_from_mapping(spec, values["retriever_options"], name=values["retriever_name"])
    kb: Path | None
    if spec is None:
        kb = check_kb_path(values["kb_path"])
    else:
        # --explain with a retriever reads the legs of its answers (explain/legs.py); a
        # retriever that sends none stops the run there, before anything is written.
        _refuse_engine_flags(**{name: given.get(name) for name in ENGINE_ONLY})
        kb = check_kb_path(values["kb_path"]) if values["kb_path"] is not None else None
    golden_path = golden_file(values["golden"], kb)
    if golden_path is None:  # a retriever without a KB
        raise GoldenError(
            "with {retriever} and no {kb_path}, groove needs {golden}",
            "pass {give:FILE} (the history is kept beside it)",
            setting="golden",
        )
    limit = values["limit"]
    search = build_options(config.search, limit, **{name: values[name] for name in PIPELINE})
    history = values["history"]
    save = given.get("save_history")  # the API's own keyword: absent on the other faces
    return EvalSettings(
        **{
            **EvalSettings.split(values),
            "kb_path": kb,
            "golden_path": golden_path,
            "search": search,
            "reranker": None if values["reranker"] in (None, "none") else values["reranker"],
            "save_history": history if save is None else history and save,
            "retriever": spec,
            "exclude_dirs": config.exclude_dirs,
            "baseline": _pin_name(values["baseline"]),
            "baseline_file": baseline_file_for(values["baseline_file"], golden_path),
            "notes": tuple(notes),
            "face": face,
        }
    )


#: The settings that say which index, model and golden file an eval reads.
SOURCE_SETTINGS = ("kb_path", "golden", "model", "model_path", "db_path")


def resolve_reading(
    config: Config,
    given: Mapping[str, Any],
    *more: str,
    retriever: RetrieverSpec | None = None,
) -> EvalSettings:
    """The settings of a task that reads an eval's index, golden file and history but
    stores no run (golden doctor, the judging pool): ``given``'s SOURCE_SETTINGS and the
    ``more`` it names, by name (None: not given)."""
    picked: dict[str, Any] = {name: given.get(name) for name in (*SOURCE_SETTINGS, *more)}
    return resolve_settings(config, retriever=retriever, **picked, history=True, save_history=False)


def baseline_file_for(given: Path | None, golden: Path) -> Path:
    """The ``baseline_file`` setting (given, else ``[eval].baseline_file``), else
    ``<golden stem>.baseline.json`` beside the golden file (eval and baseline accept)."""
    from groove.history.baseline_file import default_path

    return given.expanduser() if given is not None else default_path(golden)


def lower_to_the_retrieval_cap(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """The reference's ``normalize_eval_limit_and_k``: the limit and each k lowered to
    EVAL_RETRIEVAL_CAP, the k sorted without repeats (a k is not lowered to the limit);
    a note says when the limit changed."""
    wanted = values["limit"]
    values["limit"] = min(wanted, EVAL_RETRIEVAL_CAP)
    values["k_values"] = tuple(sorted({min(k, EVAL_RETRIEVAL_CAP) for k in values["k_values"]}))
    if values["limit"] == wanted:
        return []
    used = values["limit"]
    message = f"limit {wanted} exceeds the retrieval cap; using {used}"
    return [Note(NOTE_LIMIT_CAPPED, message, data={"requested": wanted, "used": used})]


#: eval's rules after the bound (groove.resolve): the limit from k, then the cap.
EVAL_RULES: tuple[Rule, ...] = (limit_from_k, lower_to_the_retrieval_cap)


#: The settings of groove's own engine, refused with an external retriever.
ENGINE_ONLY = ("model", "model_path", "reranker", *PIPELINE)


def _pin_name(name: str | None) -> str | None:
    """A baseline name ``groove baseline set`` would accept: another can never be pinned."""
    from groove.history.baseline import NAME_PATTERN

    if name is not None and not NAME_PATTERN.match(name):
        raise ConfigError(
            "{setting} " + literal(f"{name!r} is not a plain name"),
            "use letters, digits, '.', '_' or '-' (up to 64), like main or release-2",
            setting="baseline",
        )
    return name


def _refuse_engine_flags(**given: object) -> None:
    """Options of groove's own engine mean nothing to an external retriever: refuse them."""
    for name, value in given.items():
        if value is not None:
            raise ConfigError(
                "{setting} configures groove's own engine and cannot be combined with {retriever}",
                "drop {setting}, or drop {retriever} to measure groove's engine",
                setting=name,
            )
