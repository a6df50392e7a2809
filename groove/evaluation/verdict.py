"""A scored run meets its history: the baseline, the paired statistics, the gate.

``score`` turns the ranked hits of each golden query into a ``QueryResult``; ``compare``
chooses the baseline, runs the gate and returns the ``EvalRun`` (nothing written). Both
groove's own engine (``run.py``) and an external retriever (``external.py``) end here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypedDict

from groove.evaluation.gate_status import (
    NOTE_GATE_NOT_APPLIED,
    REASON_NO_DIFF,
    REASON_NO_HISTORY,
    GateStatus,
    setting_reason,
)
from groove.evaluation.result import EvalRun
from groove.evaluation.settings import EvalSettings
from groove.explain.attribution import Attributions
from groove.golden.queries import GoldenQuery, GoldenSet
from groove.history.baseline import Baseline, choose, difference
from groove.history.baseline_file import read_baseline_file
from groove.history.change import regressed_metrics
from groove.history.floor import (
    FLOOR_ACCEPTED,
    FLOOR_FILE,
    FLOOR_FIRST,
    FLOOR_PINNED,
    Floor,
    floor_note,
    history_floor,
    passed_since,
)
from groove.history.floor import (
    describe as describe_floor,
)
from groove.history.history import History, history_path, load_history
from groove.metrics import RankedHit, query_metrics
from groove.notes import Level, Note
from groove.runs.described import fingerprint_settings, gate_settings
from groove.runs.judged import judged_for
from groove.runs.record import (
    OUTCOME_NO_BASELINE,
    OUTCOME_PASSED,
    OUTCOME_REGRESSED,
    QueryResult,
    RunRecord,
    new_run_id,
)
from groove.settings.spelling import command_line
from groove.stats.gate import GateDecision, unreachable_reason
from groove.stats.gate import decide as decide_gate
from groove.stats.significance import Significance, compare_records
from groove.stats.slices import SliceGate, decide_slices, define_slices, measure_slices


def score(
    golden: GoldenSet,
    tops: Sequence[Sequence[Any]],
    k_values: Sequence[int],
    legs: Sequence[str | None],
) -> tuple[QueryResult, ...]:
    return tuple(
        score_one(q, hits, k_values, leg)
        for q, hits, leg in zip(golden.queries, tops, legs, strict=True)
    )


def score_one(
    q: GoldenQuery, hits: Sequence[Any], k_values: Sequence[int], leg: str | None
) -> QueryResult:
    """One golden query's result from its hits (``score``'s rule, query by query)."""
    ranked = tuple(RankedHit(h.rank, h.path, h.heading, h.score) for h in hits)
    metrics = query_metrics(q.expected, ranked, k_values)
    return QueryResult(q.id, q.query, q.expected, ranked, metrics, leg, q.tags)


def described(settings: EvalSettings, record: RunRecord) -> dict[str, str]:
    """The run's effective settings as it stores them (groove.runs.described)."""
    gate = gate_settings(settings.regression_gate, settings.regression_threshold, settings.alpha)
    return {**fingerprint_settings(record.fingerprint), **gate}


def compare(
    settings: EvalSettings, record: RunRecord, attribution: Attributions | None = None
) -> EvalRun:
    """Compare ``record`` with its baseline (groove.history.baseline) and with its accepted
    baseline (groove.history.floor). Nothing is written here: the caller writes its
    outputs first, then ``save`` (all or nothing)."""
    notes = list(settings.notes)
    record = replace(record, name=settings.name, settings=described(settings, record))
    path = history_file(settings) if settings.history else None
    # an eval that saves starts fresh over a corrupted history: its bytes are kept first
    saving = settings.save_history
    history = (
        load_history(path, keep_corrupt=saving, skippable=True) if path is not None else History()
    )
    notes += history.warnings
    chosen = choose(history, record.fingerprint, settings.baseline)
    file_run = read_baseline_file(settings.baseline_file) if settings.baseline_file else None
    floor = _floor(settings, history, record, chosen, file_run)
    if chosen.run is None and chosen.name is None and floor.from_file and floor.run is not None:
        # no run of this configuration in the history (an uncached CI job): the file alone
        chosen = Baseline(floor.run, floor.source, newest=False)
    base = chosen.run
    significance = None
    gate = floor_gate = None
    if base is not None:
        significance = compare_records(record, base)
        gate = _decide(settings, record, base, significance)
        if floor.run is not None and floor.run.id != base.id:
            floor_gate = _decide(settings, record, floor.run, compare_records(record, floor.run))
    slice_defs = define_slices(record.per_query, settings.slice_by)
    slice_gate: SliceGate | None = None
    if gate is not None and base is not None and settings.gate_slices and slice_defs:
        slice_gate = decide_slices(
            record, base, slice_defs, **_rule(settings), min_queries=settings.slice_min_queries
        )
    # The gate's view is stored with the run whatever the flags: a regressed run never
    # becomes a baseline by itself (the default rule skips it). A fall the significant
    # mode could not judge is stored as the threshold mode sees it: not as a pass.
    sliced_down = slice_gate is not None and slice_gate.regressed
    outcome = (
        OUTCOME_NO_BASELINE
        if gate is None
        else (
            OUTCOME_REGRESSED
            if gate.regressed
            or gate.unjudged
            or sliced_down
            or (floor_gate is not None and (floor_gate.regressed or floor_gate.unjudged))
            else OUTCOME_PASSED
        )
    )
    record = replace(
        record,
        run_id=new_run_id(record, {r.id for r in history.runs}),
        baseline_id=base.id if base is not None else None,
        outcome=outcome,
    )
    status = _status(settings, chosen.reason, record, base, gate, floor, floor_gate)
    if not settings.diff:
        gate = significance = floor_gate = slice_gate = None
    if status.wanted and not status.applied:
        data = {"reason": status.reason, "required": status.required}
        notes.append(Note(NOTE_GATE_NOT_APPLIED, status.message(), Level.WARNING, data))
    fell: tuple[str, ...] = ()
    floor_fell: tuple[str, ...] = ()
    if settings.fail_on_regression and status.applied and gate is not None and base is not None:
        fell = _fell(settings, record, base, gate)
        if floor_gate is not None and floor.run is not None:
            floor_fell = _fell(settings, record, floor.run, floor_gate)
    slice_fell = (
        settings.fail_on_regression
        and status.applied
        and slice_gate is not None
        and slice_gate.regressed
    )
    compared = base if settings.diff else None
    # judged@k needs the compared run's hits, which a baseline file does not keep
    hits_of = compared if compared is not None and compared is not file_run else None
    judged = judged_for(settings.golden_path, record, hits_of)
    if judged is not None and judged.drop is not None:
        notes.append(judged.drop.note())
    if settings.diff and status.wanted and status.applied and not floor_fell:
        kept = floor_note(record, floor, settings.regression_threshold)
        if kept is not None:
            notes.append(kept)
    return EvalRun(
        record=record,
        previous=compared or (history.newest if settings.diff else None),
        diff_enabled=compared is not None,
        regression=bool(fell or floor_fell) or slice_fell,
        threshold=settings.regression_threshold,
        kb_path=settings.kb_path,
        golden_path=settings.golden_path,
        history_path=path,
        notes=tuple(notes),
        history_saved=False,
        regressed_metrics=fell + tuple(m for m in floor_fell if m not in fell),
        significance=significance,
        gate=gate,
        attribution=attribution,
        baseline=chosen if compared is not None else None,
        gate_status=status,
        judged=judged,
        floor=floor if settings.diff else None,
        floor_gate=floor_gate,
        floor_fell=floor_fell,
        slices=measure_slices(record, compared, slice_defs, judged),
        slice_gate=slice_gate,
    )


def _decide(
    settings: EvalSettings, record: RunRecord, base: RunRecord, significance: Significance
) -> GateDecision:
    return decide_gate(record, base, significance, **_rule(settings))


class _Rule(TypedDict):
    """The gate's rule as the settings hold it, in the keywords the gates take."""

    mode: str
    threshold: float
    alpha: float


def _rule(settings: EvalSettings) -> _Rule:
    return _Rule(
        mode=settings.regression_gate,
        threshold=settings.regression_threshold,
        alpha=settings.alpha,
    )


def _fell(
    settings: EvalSettings, record: RunRecord, base: RunRecord, gate: GateDecision
) -> tuple[str, ...]:
    """The metrics the gate counts as regressed against ``base``, in the diff's order."""
    if settings.regression_gate == "threshold":
        return regressed_metrics(record.aggregate, base.aggregate, settings.regression_threshold)
    return tuple(m.label for m in gate.metrics if m.regressed)


def _floor(
    settings: EvalSettings,
    history: History,
    record: RunRecord,
    chosen: Baseline,
    file_run: RunRecord | None,
) -> Floor:
    """The accepted baseline of ``record``'s configuration (groove.history.floor's rule)."""
    fingerprint = record.fingerprint
    runs = history.runs if settings.history else None
    if file_run is not None and settings.baseline_file is not None:
        shown = FLOOR_FILE.format(path=settings.baseline_file)
        if not file_run.fingerprint.compatible_with(fingerprint):
            what = difference(file_run, fingerprint, since="the baseline file")
            return Floor(
                None,
                shown,
                path=settings.baseline_file,
                reason=f"the baseline file {settings.baseline_file} ({file_run.id}, "
                f"{file_run.timestamp}) has another configuration ({what}); accept a run of "
                f"this one with `{command_line('baseline accept', file=True)}`",
            )
        return Floor(file_run, shown, _since(runs, file_run), settings.baseline_file)
    if chosen.name is not None:
        if chosen.run is None:
            return Floor(None)
        return Floor(chosen.run, FLOOR_PINNED.format(name=chosen.name), _since(runs, chosen.run))
    found = history_floor(history.runs, fingerprint)
    if found is None:
        return Floor(None)
    return Floor(found, FLOOR_ACCEPTED if found.accepted else FLOOR_FIRST, _since(runs, found))


def _since(runs: Sequence[RunRecord] | None, floor: RunRecord) -> int | None:
    return passed_since(runs, floor) if runs is not None else None


def _status(
    settings: EvalSettings,
    no_baseline: str | None,
    record: RunRecord,
    base: RunRecord | None,
    gate: GateDecision | None,
    floor: Floor,
    floor_gate: GateDecision | None = None,
) -> GateStatus:
    reason = None
    threshold_fell = None
    if not settings.diff:
        reason = setting_reason(REASON_NO_DIFF, settings.face)
    elif floor.reason is not None:
        reason = floor.reason
    elif not settings.history and not floor.from_file:
        reason = setting_reason(REASON_NO_HISTORY, settings.face)
    elif base is None or gate is None:
        reason = no_baseline
    else:
        reason = _too_few(settings, record, base, gate)
        if gate.unjudged:  # what the threshold mode makes of the fall, reported beside
            threshold_fell = tuple((m.label, m.delta) for m in gate.fell)
        elif reason is None and not gate.regressed and floor_gate is not None:
            # the same rule against the accepted baseline: a slow decline on a few queries
            # the significant mode cannot judge is not a pass either
            unjudged = floor_gate.unjudged_reason()
            if unjudged is not None and not floor_gate.regressed:
                reason = f"since {describe_floor(floor)}: {unjudged}"
                threshold_fell = tuple((m.label, m.delta) for m in floor_gate.fell)
    return GateStatus(
        applied=reason is None,
        reason=reason,
        **_rule(settings),
        wanted=settings.fail_on_regression or settings.require_baseline,
        required=settings.require_baseline,
        threshold_fell=threshold_fell,
    )


def _too_few(
    settings: EvalSettings, record: RunRecord, base: RunRecord, gate: GateDecision
) -> str | None:
    """Why the chosen mode cannot flag a regression on this pair, if so: too few paired
    queries for the significant gate to reach alpha whatever happens, or a fall beyond
    the threshold on too few moved queries for it to call the fall significant."""
    before = {q.id for q in base.per_query}
    paired = len({q.id for q in record.per_query} & before)
    mode, alpha = settings.regression_gate, settings.alpha
    return unreachable_reason(paired, mode, alpha, len(gate.metrics)) or gate.unjudged_reason()


def history_file(settings: EvalSettings) -> Path:
    """The KB's history file; without a KB (an external retriever), the one beside the golden."""
    if settings.kb_path is not None:
        return history_path(settings.kb_path)
    return history_path(settings.golden_path.parent)
