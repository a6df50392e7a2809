"""Compare many eval runs against one baseline, with paired statistics per metric.

Each run is compared with the baseline over the queries both scored (matched by id): the
mean delta, its 95% paired bootstrap interval and the sign-flip p-value, as for the diff
(groove.stats.significance), plus the Holm-corrected p over the run's metrics and a
mark when that is below ``alpha``. Runs come from the history (by position, 1 = newest,
or by timestamp), from saved files (``groove eval --format json`` output or a notebook's
result.json), or as RunRecord / EvalRun objects.

Runs with another fingerprint are compared too (that is what comparing a config change
means); ``same_config`` says whether a run's fingerprint matches the baseline's. A metric
one of the two runs did not measure (another ``k_values``) is not compared: its change is
n/a, never a delta against 0. ``unpaired`` counts the queries that could not be paired, by
reason (``UNPAIRED_REASONS``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.cards import Introduces
from groove.errors import ConfigError, HistoryError, literal
from groove.golden.judgements import Judgements
from groove.metrics import metric_name
from groove.progress import Progress, ProgressFn, reporter
from groove.runs.described import label as run_label
from groove.runs.described import record_changes
from groove.runs.judged import JudgedSummary, summarise
from groove.runs.record import RunRecord
from groove.settings import COMPARE, command_line
from groove.stats.gate import DEFAULT_ALPHA
from groove.stats.significance import (
    PairedTest,
    holm,
    metric_labels,
    paired_test,
    paired_values,
)
from groove.stats.slices import DEFAULT_SLICE_BY, Slice, define_slices, measure_slices

if TYPE_CHECKING:
    import pandas as pd

MAX_RESULT_FILE_BYTES = 64 * 1024 * 1024

#: Why a query of either run has no partner, in report order (groove.stats.significance
#: pairs by id the scored queries of both runs, the first of a repeated id only).
UNPAIRED_REASONS = {
    "duplicate_id": "with a repeated query id",
    "only_in_run": "only in this run",
    "only_in_baseline": "only in the baseline",
    "not_scored": "with no expected answer",
}


@dataclass(frozen=True)
class LabelledRun:
    """A run and where it came from (``#2`` = second newest in the history, or a file)."""

    label: str
    record: RunRecord


@dataclass(frozen=True)
class MetricComparison:
    """One metric of one run against the baseline (test is None for the baseline itself,
    when no query is paired, or when either run did not measure the metric)."""

    label: str
    value: float | None
    test: PairedTest | None
    p_holm: float | None
    significant: bool
    baseline_measured: bool = True  # False: the baseline has no value for this metric

    @property
    def mark(self) -> str:
        """▲ / ▼ when the Holm-corrected p is below alpha, else empty."""
        if not self.significant or self.test is None:
            return ""
        return "▲" if self.test.delta > 0 else "▼"


@dataclass(frozen=True)
class RunComparison:
    run: LabelledRun
    is_baseline: bool
    same_config: bool
    paired_queries: int
    metrics: tuple[MetricComparison, ...]
    unpaired: Mapping[str, int] | None = None  # reason -> queries (UNPAIRED_REASONS)
    # judged@k under the current judgements, and the unjudged newcomers of the queries that
    # fell against the baseline (only when a judgements file is given; docs/judgements.md)
    judged: JudgedSummary | None = None
    # each slice of the run's queries (their tags, and folders with slice_by "folder")
    # against the same queries of the baseline (groove.stats.slices); empty without tags
    slices: tuple[Slice, ...] = ()
    # the settings that differ from the baseline's, worded as the CLI words them
    # (``mmr off -> on``); empty for the baseline and for a run of the same configuration
    changed: tuple[str, ...] = ()

    @property
    def unpaired_note(self) -> str | None:
        """``28 queries not paired: 24 with a repeated query id, 4 only in the baseline``:
        the run's queries left out, and the baseline's ids the run does not have."""
        counts = {k: n for k, n in (self.unpaired or {}).items() if n}
        if not counts:
            return None
        total = sum(counts.values())
        parts = ", ".join(f"{n} {UNPAIRED_REASONS[k]}" for k, n in counts.items())
        return f"{total} quer{'y' if total == 1 else 'ies'} not paired: {parts}"


@dataclass(frozen=True, repr=False)
class Comparison(Introduces):
    baseline: LabelledRun
    alpha: float
    runs: tuple[RunComparison, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline.label,
            "alpha": self.alpha,
            "runs": [
                {
                    "label": r.run.label,
                    "timestamp": r.run.record.timestamp,
                    "baseline": r.is_baseline,
                    "same_config": r.same_config,
                    "changed": list(r.changed),
                    "paired_queries": r.paired_queries,
                    "unpaired": dict(r.unpaired or {}),
                    **({"judged": r.judged.to_dict()} if r.judged is not None else {}),
                    **({"slices": [x.to_dict() for x in r.slices]} if r.slices else {}),
                    "metrics": {
                        metric_name(m.label): {
                            "value": m.value,
                            "delta": m.test.delta if m.test else None,
                            "ci": list(m.test.ci) if m.test else None,
                            "p_value": m.test.p_value if m.test else None,
                            "p_holm": m.p_holm,
                            "significant": m.significant,
                            "baseline_measured": m.baseline_measured,
                        }
                        for m in r.metrics
                    },
                }
                for r in self.runs
            ],
        }

    def metrics_frame(self) -> pd.DataFrame:
        """One row per (run, metric): value, delta, ci_low, ci_high, p, p_holm, mark."""
        import pandas as pd

        rows = []
        for r in self.runs:
            for m in r.metrics:
                t = m.test
                rows.append(
                    {
                        "run": r.run.label,
                        "timestamp": r.run.record.timestamp,
                        "baseline": r.is_baseline,
                        "same config": r.same_config,
                        "changed": "; ".join(r.changed),
                        "metric": metric_name(m.label),
                        "value": m.value,
                        "delta": t.delta if t else None,
                        "ci_low": t.ci_low if t else None,
                        "ci_high": t.ci_high if t else None,
                        "p": t.p_value if t else None,
                        "p_holm": m.p_holm,
                        "mark": m.mark,
                    }
                )
        return pd.DataFrame(rows)


def _labels(runs: Sequence[LabelledRun]) -> list[str]:
    recall = sorted({k for r in runs for k in r.record.aggregate.recall_at_k})
    ndcg = sorted({k for r in runs for k in r.record.aggregate.ndcg_at_k})
    return metric_labels(recall, ndcg)


def compare_runs(
    runs: Sequence[LabelledRun],
    baseline: int = 0,
    *,
    alpha: float = DEFAULT_ALPHA,
    judgements: Judgements | None = None,
    progress: ProgressFn | None = None,
    slice_by: str = DEFAULT_SLICE_BY,
) -> Comparison:
    """Every run against ``runs[baseline]``; Holm over each run's metrics; with
    ``judgements``, each run's judged@k and unjudged newcomers against the baseline; each
    slice of a run's queries (``slice_by``: groove.stats.slices) against the baseline.
    ``progress`` receives a ``Progress`` (task ``compare``, stage ``run``) per run."""
    if not runs:
        raise ConfigError("nothing to compare", _RUNS_HINT, setting="runs")
    say = reporter(progress)
    base = runs[baseline]
    labels = _labels(runs)
    out = []
    for i, run in enumerate(runs):
        tests: list[PairedTest | None] = []
        paired = 0
        for label in labels:
            if i == baseline or run.record.aggregate.value(label) is None:
                tests.append(None)
                continue
            if base.record.aggregate.value(label) is None:
                tests.append(None)  # the baseline never measured it: n/a, not a fall from 0
                continue
            ids, now, before = paired_values(run.record.per_query, base.record.per_query, label)
            paired = max(paired, len(ids))
            tests.append(paired_test(now - before) if ids else None)
        present = [t.p_value for t in tests if t is not None]
        adjusted = iter(holm(present))
        metrics = []
        for label, test in zip(labels, tests, strict=True):
            p_holm = next(adjusted) if test is not None else None
            metrics.append(
                MetricComparison(
                    label=label,
                    value=run.record.aggregate.value(label),
                    test=test,
                    p_holm=p_holm,
                    significant=p_holm is not None and p_holm < alpha,
                    baseline_measured=base.record.aggregate.value(label) is not None,
                )
            )
        same_config = run.record.fingerprint.compatible_with(base.record.fingerprint)
        out.append(
            RunComparison(
                run=run,
                is_baseline=i == baseline,
                same_config=same_config,
                changed=() if same_config else record_changes(base.record, run.record),
                paired_queries=len(run.record.per_query) if i == baseline else paired,
                metrics=tuple(metrics),
                unpaired=None if i == baseline else unpaired(run.record, base.record),
                judged=None
                if judgements is None
                else summarise(run.record, judgements, None if i == baseline else base.record),
                slices=measure_slices(
                    run.record,
                    None if i == baseline else base.record,
                    define_slices(run.record.per_query, slice_by),
                ),
            )
        )
        message = f"compared {run.label} with the baseline {base.label}"
        say(Progress("compare", "run", i + 1, len(runs), message, run.label))
    return Comparison(baseline=base, alpha=alpha, runs=tuple(out))


def unpaired(run: RunRecord, base: RunRecord) -> dict[str, int]:
    """How many queries of ``run`` have no partner in ``base``, by reason (the pairing rule
    of ``paired_values``: by id, scored in both, the first of a repeated id), and how many
    ids of ``base`` the run does not have. The run's queries: paired + the first three."""
    counts = dict.fromkeys(UNPAIRED_REASONS, 0)
    first_base: dict[str, bool] = {}
    for q in base.per_query:
        first_base.setdefault(q.id, bool(q.expected))
    seen: set[str] = set()
    for q in run.per_query:
        if q.id in seen:
            counts["duplicate_id"] += 1
            continue
        seen.add(q.id)
        if q.id not in first_base:
            counts["only_in_run"] += 1
        elif not q.expected or not first_base[q.id]:
            counts["not_scored"] += 1
    counts["only_in_baseline"] = sum(1 for qid in first_base if qid not in seen)
    return counts


# ---------------------------------------------------------------- where runs come from


def record_from_document(data: Any, source: str) -> RunRecord:
    """A RunRecord from a ``groove eval --format json`` document or a notebook result.json."""
    if not isinstance(data, Mapping) or "per_query" not in data or "fingerprint" not in data:
        raise HistoryError(
            f"{source} is not a saved eval run",
            _RUN_FILE_HINT,
        )
    try:
        return RunRecord.from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise HistoryError(
            f"{source} holds an eval run groove cannot read ({type(exc).__name__}: {exc})",
            _RUN_FILE_HINT,
        ) from exc


def load_run_file(path: Path) -> RunRecord:
    try:
        if path.stat().st_size > MAX_RESULT_FILE_BYTES:
            raise HistoryError(
                f"{path} is larger than {MAX_RESULT_FILE_BYTES} bytes",
                "pass a single saved eval run",
            )
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HistoryError(
            f"cannot read {path} ({exc.strerror or exc})", "check the path and its permissions"
        ) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HistoryError(f"{path} is not JSON", f"pass the output of `{EVAL_JSON}`") from exc
    return record_from_document(data, str(path))


def resolve_refs(refs: Sequence[str], history: Sequence[RunRecord]) -> list[LabelledRun]:
    """Each ref: an existing file, a run name (``groove eval --name``: the newest run of
    that name), a history position (1 = newest), a timestamp (prefix) or a run id (prefix
    of at least 4 characters).
    A file is labelled by its name, with as many parent folders as tell it apart from the
    other files (``main/result.json``, ``pr/result.json``)."""
    files = [Path(ref).expanduser() for ref in refs if Path(ref).expanduser().is_file()]
    names = dict(zip(files, file_labels(files), strict=True))
    out = []
    for ref in refs:
        path = Path(ref).expanduser()
        if path.is_file():
            out.append(LabelledRun(names[path], load_run_file(path)))
            continue
        named = next((r for r in history if r.name == ref), None)
        if named is not None:
            out.append(LabelledRun(run_label(named), named))
        elif ref.isdigit() and not _id_matches(ref, history):
            position = int(ref)
            if not 1 <= position <= len(history):
                raise HistoryError(
                    f"no run #{position} in the eval history ({len(history)} stored)",
                    "positions count from 1 = the newest run",
                )
            out.append(LabelledRun(run_label(history[position - 1]), history[position - 1]))
        else:
            matches = [i for i, r in enumerate(history) if r.timestamp.startswith(ref)]
            matches = matches or _id_matches(ref, history)
            if len(matches) != 1:
                found = "no" if not matches else f"{len(matches)}"
                raise HistoryError(
                    f"{found} run(s) in the eval history match {ref!r} "
                    "(as a run name, timestamp or run id)",
                    "pass a run name, a history position (1 = newest), a unique timestamp, "
                    "a run id (groove baseline list) or a saved file",
                )
            out.append(LabelledRun(run_label(history[matches[0]]), history[matches[0]]))
    return out


def _id_matches(ref: str, history: Sequence[RunRecord]) -> list[int]:
    """Positions of the runs whose short id (eval's report, `groove baseline list`) starts
    with ``ref``; an id of digits only is read as an id when one matches."""
    wanted = ref.strip().lower()
    if len(wanted) < 4:  # shorter prefixes are positions or timestamps, not ids
        return []
    return [i for i, r in enumerate(history) if r.id.startswith(wanted)]


def file_labels(paths: Sequence[Path]) -> list[str]:
    """The shortest trailing part of each path that no other path of ``paths`` shares."""
    parts = [path.resolve().parts for path in paths]
    depth = [1] * len(paths)

    def label(i: int) -> str:
        return "/".join(parts[i][-depth[i] :])

    while True:
        seen: dict[str, list[int]] = {}
        for i in range(len(paths)):
            seen.setdefault(label(i), []).append(i)
        clashes = [i for group in seen.values() if len(group) > 1 for i in group]
        grown = [i for i in clashes if depth[i] < len(parts[i])]
        if not grown:
            return [label(i) for i in range(len(paths))]
        for i in grown:
            depth[i] += 1


def comparable_chain(
    runs: Sequence[RunRecord], current: RunRecord, last: int = 5
) -> list[RunRecord]:
    """The newest runs (newest first, up to ``last``) comparable with ``current``: the
    history read back from its newest entry until the first run of another fingerprint."""
    chain: list[RunRecord] = []
    for record in runs:
        if not record.fingerprint.compatible_with(current.fingerprint):
            break
        chain.append(record)
        if len(chain) == last:
            break
    return chain


def default_runs(history: Sequence[RunRecord], last: int = 5) -> list[LabelledRun]:
    """No refs given: the last comparable runs of the history, oldest first."""
    if not history:
        return []
    chain = comparable_chain(history, history[0], last)
    return [LabelledRun(run_label(r), r) for r in reversed(chain)]


def _coerce(run: Any, index: int) -> LabelledRun:
    if isinstance(run, LabelledRun):
        return run
    # An EvalRun, known by its record: this layer sits below the run that makes one.
    record = getattr(run, "record", None)
    if isinstance(record, RunRecord):
        return LabelledRun(run_label(record), record)
    if isinstance(run, RunRecord):
        return LabelledRun(run_label(run), run)
    if isinstance(run, str | Path):
        record = load_run_file(Path(run).expanduser())
        return LabelledRun(Path(run).name, record)
    if isinstance(run, Mapping):
        record = record_from_document(run, f"runs[{index}]")
        return LabelledRun(run_label(record), record)
    raise ConfigError(
        f"runs[{index}] is a {type(run).__name__}, not an eval run",
        _RUNS_HINT,
        setting="runs",
    )


# the file kind, named by the command that writes it (as the eval-report notebook's is)
EVAL_JSON = command_line("eval", format="json")
_RUN_FILE_HINT = f"pass the output of `{EVAL_JSON}` or an eval-report result.json"
_RUNS_HINT = (
    "pass {give} as a list of EvalRun, RunRecord, saved eval JSON documents (dicts) or paths "
    "to them"
)


def _labelled(runs: Any) -> list[LabelledRun]:
    """The runs of ``compare``, each made a LabelledRun; anything else a ConfigError."""
    if isinstance(runs, str | Path | Mapping) or not isinstance(runs, Sequence):
        raise ConfigError(
            f"{{setting}} must be a list of runs, got {type(runs).__name__}",
            _RUNS_HINT,
            setting="runs",
        )
    if not runs:
        raise ConfigError("nothing to compare", _RUNS_HINT, setting="runs")
    return _coerce_all(runs)


def _coerce_all(runs: Sequence[Any]) -> list[LabelledRun]:
    """Every run coerced; saved files labelled apart (two result.json files would not be)."""
    labelled = [_coerce(r, i) for i, r in enumerate(runs)]
    files = [i for i, r in enumerate(runs) if isinstance(r, str | Path)]
    names = file_labels([Path(runs[i]).expanduser() for i in files])
    for i, name in zip(files, names, strict=True):
        labelled[i] = LabelledRun(name, labelled[i].record)
    return labelled


def compare_frame(runs: Sequence[Any], baseline: int = 0) -> pd.DataFrame:
    """``compare`` over runs of any accepted kind, baseline given by position."""
    return compare(runs, baseline)


def compare(
    runs: Sequence[Any],
    baseline: int | str = 0,
    *,
    alpha: float = DEFAULT_ALPHA,
    progress: ProgressFn | None = None,
) -> pd.DataFrame:
    """Compare eval runs against a baseline; one row per (run, metric).

    ``runs``: EvalRun, RunRecord, a saved eval JSON document (dict) or a path to one.
    ``baseline``: a position in ``runs`` or the timestamp (or label) of one of them.
    Columns: run, timestamp, baseline, same config, changed (the settings that differ from
    the baseline's, as the CLI words them), metric, value, delta, ci_low, ci_high,
    p (sign-flip), p_holm (over the run's metrics) and mark (▲ / ▼ when p_holm < alpha).
    ``progress`` receives a ``Progress`` (task ``compare``) as each run is compared.
    """
    labelled = _labelled(runs)
    alpha = COMPARE["alpha"].parse(alpha)  # checked by its declaration
    if alpha is None:  # not given: the declared default
        alpha = COMPARE["alpha"].default
    if isinstance(baseline, str):
        found = [
            i
            for i, r in enumerate(labelled)
            if baseline in (r.label, r.record.timestamp) or r.record.timestamp.startswith(baseline)
        ]
        if len(found) != 1:
            raise ConfigError(
                literal(f"baseline {baseline!r} matches {len(found)} of the runs"),
                "pass {give} as a position in runs, or a timestamp only one run has",
                setting="baseline",
            )
        index = found[0]
    elif isinstance(baseline, int) and not isinstance(baseline, bool):
        index = baseline
    else:
        raise ConfigError(
            f"{{setting}} must be a position in runs or a timestamp, got {baseline!r}",
            "pass {give:0} for the first run, or its timestamp",
            setting="baseline",
        )
    if not -len(labelled) <= index < len(labelled):
        raise ConfigError(
            f"{{setting}} {baseline} is not a position in runs (there are {len(labelled)})",
            "pass {give:0} for the first run, or its timestamp",
            setting="baseline",
        )
    if progress is not None and not callable(progress):
        raise ConfigError(
            f"{{setting}} must be a function (Progress) or None, got {literal(repr(progress))}",
            "pass {give} as a function (Progress) or None",
            setting="progress",
        )
    comparison = compare_runs(labelled, index % len(labelled), alpha=alpha, progress=progress)
    return comparison.metrics_frame()
