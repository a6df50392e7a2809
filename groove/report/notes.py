"""Notes as the terminal shows them, and the sentence that explains a failed CI gate.

The library hands back ``groove.notes.Note`` values; this is the one place that turns them
into stderr lines (``groove eval: warning: eval history corrupted (...)``). Two of tune's
warnings are shouted (``WARNING``) because they change how every number below them reads,
and the per-query detail of the effective-query count is indented under it.
"""

from __future__ import annotations

from groove.evaluation.result import EvalRun
from groove.history.floor import fall_sentence
from groove.notes import Level, Note
from groove.progress import Progress
from groove.tuning.result import (
    NOTE_CONTEXT_AXIS_NOOP,
    NOTE_FEW_EFFECTIVE_QUERIES,
    NOTE_INSENSITIVE_QUERY,
)

_SHOUTED = {NOTE_CONTEXT_AXIS_NOOP, NOTE_FEW_EFFECTIVE_QUERIES}
_INDENTED = {NOTE_INSENSITIVE_QUERY}


def cli_line(command: str, note: Note) -> str:
    """The stderr line of ``note`` for ``groove <command>``."""
    if note.kind in _INDENTED:
        return f"  {note.message}"
    if note.level is Level.INFO:
        return f"groove {command}: {note.message}"
    label = str(note.level).upper() if note.kind in _SHOUTED else str(note.level)
    return f"groove {command}: {label}: {note.message}"


def progress_line(event: Progress) -> str:
    """The stderr line of one step of ``groove tune``."""
    if event.stage == "preflight":
        return "groove tune: pre-flight (measuring FTS candidates per query)..."
    if event.stage == "sweep":
        return "groove tune: sweeping 64 bm25 weight conditions x 6 rrf_k values..."
    if event.stage == "retrieve":
        return (
            f"groove tune: one retrieval per query from {event.data['retriever']} "
            f"(limit {event.data['window']}, with legs)..."
        )
    if event.stage == "sweep_legs":
        family = event.data["family"]
        return f"groove tune: sweeping the {family} grid over the legs client-side..."
    return f"  [{event.done}/{event.total}] sweeping 64 weight conditions for {event.item}"


def regression_message(run: EvalRun, *, switch: str = "fail_on_regression=True") -> str:
    """The line that explains exit code 1; ``switch`` is how the user asked for the gate, as
    the face spells it (the CLI passes ``--fail-on-regression``, the notebook runner
    ``-p fail_on_regression true``)."""
    note = ""
    change = run.corpus_change
    if change is not None:
        note = (
            " The indexed corpus also changed since the compared run "
            f"({change}), which shifts rankings on its own."
        )
    gate = run.gate
    if gate is not None and gate.mode == "significant":
        rule = (
            f"fell by more than {run.threshold:.3f} with adjusted p(drop) < {gate.alpha:g} on "
            "at least one of recall@k / MRR / nDCG@k"
        )
    else:
        rule = f"delta > {run.threshold:.3f} on at least one of recall@k / MRR / nDCG@k"
    details = ""
    if gate is not None and any(m.regressed for m in gate.metrics):
        listed = "; ".join(m.describe() for m in gate.metrics if m.regressed)
        details = f" Regressed: {listed}."
    if run.floor_fell and run.floor is not None:
        passed = gate is None or not gate.regressed
        sentence = fall_sentence(run.record, run.floor, run.floor_fell, passed_previous=passed)
        details += f" {sentence}."
    sliced = run.regressed_slices
    if sliced:
        rule += ", in the aggregate or in a slice" if run.regressed_metrics else ", in a slice"
        listed = " | ".join(s.describe() for s in sliced)
        details += f" Regressed {'slice' if len(sliced) == 1 else 'slices'}: {listed}."
    return (
        f"groove eval: retrieval-quality regression detected ({rule}).{note}{details} "
        f"Exiting with code 1 because {switch} was set."
    )


def not_applied_message(run: EvalRun, *, switch: str = "require_baseline=True") -> str:
    """The line that explains exit code 4; ``switch`` as in ``regression_message``."""
    status = run.gate_status
    reason = status.reason if status is not None else None
    beside = status.threshold_sentence() if status is not None else ""
    return (
        f"groove eval: the regression gate could not be applied ({reason}){beside}. "
        f"Exiting with code 4 because {switch} was set."
    )
