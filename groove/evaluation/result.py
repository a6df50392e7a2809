"""What one ``groove eval`` returns: the run, the run it is compared with, and their diff.

Renderers (text, Markdown, JSON, notebooks) import this module, never the one that opens
the index: a result type carries data and answers questions about it, nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from groove.cards import Introduces, view
from groove.errors import EXIT_NO_BASELINE, EXIT_OK, EXIT_REGRESSION
from groove.evaluation.gate_status import GateStatus
from groove.explain.attribution import Attributions, misses_by_cause
from groove.golden.answers import AnswerUpdate
from groove.golden.findings import AnyFinding
from groove.golden.proposals import Proposal
from groove.history.baseline import Baseline
from groove.history.change import Change, classify
from groove.history.floor import Floor
from groove.notes import Level, Note
from groove.retrievers.ann import AnnRecall
from groove.retrievers.identity import retriever_change_note
from groove.runs.corpus import CorpusSnapshot, describe_change
from groove.runs.fingerprint import Fingerprint
from groove.runs.judged import JudgedSummary
from groove.runs.latency import Latency, QueryTiming
from groove.runs.record import QueryResult, RunRecord, metric_pairs
from groove.settings import DEFAULT_LIMIT
from groove.stats.gate import GateDecision, GatedMetric
from groove.stats.significance import Significance
from groove.stats.slices import GatedSlice, Slice, SliceGate

if TYPE_CHECKING:
    import pandas as pd

NOTE_DIFF_DISABLED = "diff-disabled"
NOTE_CORPUS_CHANGED = "corpus-changed"

#: The verdict of an eval run, the one field every face reads (``EvalRun.verdict``): the
#: gate failed it, the gate was required and could not be applied, or neither.
Verdict = Literal["passed", "regression", "not-applied"]
VERDICT_PASSED: Verdict = "passed"
VERDICT_REGRESSION: Verdict = "regression"
VERDICT_NOT_APPLIED: Verdict = "not-applied"
#: The process exit code of each verdict (groove.errors): the CLI and the runner exit with it.
VERDICT_EXIT_CODES: dict[str, int] = {
    VERDICT_PASSED: EXIT_OK,
    VERDICT_REGRESSION: EXIT_REGRESSION,
    VERDICT_NOT_APPLIED: EXIT_NO_BASELINE,
}


@dataclass(frozen=True)
class MetricDelta:
    label: str
    now: float
    previous: float

    @property
    def delta(self) -> float:
        return self.now - self.previous


@dataclass(frozen=True, repr=False)
class EvalRun(Introduces):
    """One evaluation and everything needed to judge it against its baseline.

    ``previous`` is the run the diff compares with (the baseline) when there is one, else
    the newest stored run (whose difference the diff-disabled note names), else None.
    """

    record: RunRecord
    previous: RunRecord | None
    diff_enabled: bool
    regression: bool  # the gate failed the run (asked to): read ``verdict``, which says it
    threshold: float
    kb_path: Path | None
    golden_path: Path
    history_path: Path | None  # the history read (None: history off)
    notes: tuple[Note, ...] = ()
    history_saved: bool = False  # whether this run was appended to that history
    # the aggregate metrics that fell beyond the threshold (set with --fail-on-regression)
    regressed_metrics: tuple[str, ...] = ()
    significance: Significance | None = None
    gate: GateDecision | None = None
    attribution: Attributions | None = None  # set by --explain: query id -> its answers
    baseline: Baseline | None = None  # how ``previous`` was chosen, when the diff uses it
    gate_status: GateStatus | None = None  # whether the gate could judge this run
    # judged@k, when the golden file has a judgements file beside it (docs/judgements.md)
    judged: JudgedSummary | None = None
    # The expected files as this run saw them, for the history (groove.golden.answers).
    answers: AnswerUpdate | None = field(default=None, repr=False, compare=False)
    # The doctor's proposal for each expected entry the index cannot match (golden rot).
    rot: tuple[Proposal, ...] = ()
    # the accepted baseline (groove.history.floor), the gate's view against it when it is
    # another run than ``previous``, and the metrics that fell beyond the threshold below it
    floor: Floor | None = None
    floor_gate: GateDecision | None = None
    floor_fell: tuple[str, ...] = ()
    # the golden queries' tags (and folders) measured on their own (groove.stats.slices):
    # empty without tags; ``slice_gate`` when --gate-slices asked for it
    slices: tuple[Slice, ...] = ()
    slice_gate: SliceGate | None = None
    # how long each query's retrieval took (groove.runs.latency); None: nothing timed (a
    # run file). ``show_latency``: the text report says it (a retriever's run, --latency)
    latency: Latency | None = None
    query_timings: Mapping[str, QueryTiming] = field(default_factory=dict, repr=False)
    show_latency: bool = False
    ann_recall: AnnRecall | None = None  # --ann-recall: each ANN leg against exact search

    @property
    def regressed_slices(self) -> tuple[GatedSlice, ...]:
        """The slices the slice gate failed (empty without --gate-slices)."""
        return self.slice_gate.regressed_slices if self.slice_gate is not None else ()

    @property
    def baseline_stated(self) -> bool:
        """Must the reports name the compared run? When it is not the newest stored run
        (the seed's only candidate) or was pinned by name."""
        return self.baseline is not None and self.baseline.stated

    @property
    def since(self) -> str:
        """How the reports name the compared run: the seed's "last run", or "the baseline
        run" when it is an older one."""
        return "the baseline run" if self.baseline_stated else "last run"

    @property
    def fingerprint(self) -> Fingerprint:
        return self.record.fingerprint

    @property
    def corpus(self) -> CorpusSnapshot | None:
        return self.record.corpus

    @property
    def per_query(self) -> tuple[QueryResult, ...]:
        return self.record.per_query

    @property
    def findings(self) -> tuple[AnyFinding, ...]:
        return self.record.findings

    @property
    def golden_changed(self) -> bool:
        previous = self.previous
        return previous is not None and previous.fingerprint.golden_hash != (
            self.fingerprint.golden_hash
        )

    @property
    def corpus_change(self) -> str | None:
        """How the corpus changed since the previous run (compatible or not), if it did."""
        return describe_change(self.corpus, self.previous.corpus if self.previous else None)

    @property
    def diff_note(self) -> str | None:
        """Why there is no diff although a previous run exists (None when there is one)."""
        if self.diff_enabled or self.previous is None:
            return None
        if self.golden_changed:
            return "golden changed since last run, diff disabled"
        if self.previous.fingerprint.retriever != self.fingerprint.retriever:
            return retriever_change_note(
                self.previous.fingerprint.retriever, self.fingerprint.retriever
            )
        before, now = self.previous.fingerprint.lexical, self.fingerprint.lexical
        if before != now:
            return f"lexical mode changed since last run ({before} -> {now}), diff disabled"
        reason = self.gate_status.reason if self.gate_status is not None else None
        if reason is not None and self.previous.fingerprint.compatible_with(self.fingerprint):
            # nothing changed: the baseline rule found no run (a pin not set yet, ...)
            return f"{reason}, diff disabled"
        return "config or metric version changed since last run, diff disabled"

    def comparison_notes(self) -> tuple[Note, ...]:
        """What to keep in mind when reading the diff: why it is off (``diff-disabled``)
        and whether the corpus changed since the previous run (``corpus-changed``)."""
        notes = []
        if self.diff_note is not None:
            data = {"golden_changed": self.golden_changed}
            notes.append(Note(NOTE_DIFF_DISABLED, self.diff_note, Level.WARNING, data))
        change = self.corpus_change
        if change is not None:
            message = f"corpus changed since {self.since} ({change})"
            notes.append(Note(NOTE_CORPUS_CHANGED, message, Level.WARNING, {"change": change}))
        return tuple(notes)

    @property
    def corpus_changed(self) -> bool | None:
        """None when there is nothing to compare (distinct from False: unchanged)."""
        if self.corpus is None or self.previous is None or self.previous.corpus is None:
            return None
        return self.corpus != self.previous.corpus

    @property
    def verdict(self) -> Verdict:
        """``"regression"`` (the gate failed the run: ``regression``), ``"not-applied"``
        (the gate was required and could not be applied) or ``"passed"``: what the CLI's
        exit code, result.json's ``verdict``, the card and the reports say."""
        if self.regression:
            return VERDICT_REGRESSION
        if self.gate_status is not None and self.gate_status.refused:
            return VERDICT_NOT_APPLIED
        return VERDICT_PASSED

    @property
    def exit_code(self) -> int:
        """The verdict as a process exit code: 0 passed, 1 regression, 4 not-applied."""
        return VERDICT_EXIT_CODES[self.verdict]

    def deltas(self) -> list[MetricDelta]:
        """Aggregate metric changes since the previous run; empty when the diff is off."""
        if not self.diff_enabled or self.previous is None:
            return []
        pairs = metric_pairs(self.record.aggregate, self.previous.aggregate)
        return [MetricDelta(label, now, prev) for label, now, prev in pairs]

    def previous_recall(self, query_id: str) -> float | None:
        if not self.diff_enabled or self.previous is None:
            return None
        k_max = max(self.fingerprint.k_values, default=DEFAULT_LIMIT)
        for q in self.previous.per_query:
            if q.id == query_id:
                return q.metrics.recall_at_k.get(k_max, 0.0)
        return None

    def falling_queries(self) -> list[str]:
        """The ids of the queries whose recall@max(k) fell since the compared run."""
        k_max = max(self.fingerprint.k_values, default=DEFAULT_LIMIT)
        out = []
        for q in self.per_query:
            prev = self.previous_recall(q.id)
            now = q.metrics.recall_at_k.get(k_max, 0.0)
            if prev is not None and classify(now - prev, self.threshold) is Change.DOWN:
                out.append(q.id)
        return out

    def rot_falls(self) -> list[tuple[str, tuple[Proposal, ...]]]:
        """The queries that fell since the compared run while an expected answer of theirs
        is missing from the index, each with the doctor's proposals: golden rot, not
        retrieval."""
        out = []
        for query_id in self.falling_queries():
            found = tuple(p for p in self.rot if p.query_id == query_id)
            if found:
                out.append((query_id, found))
        return out

    def flagged_queries(self) -> list[tuple[QueryResult, float | None]]:
        """Misses and regressions (with the previous recall@max(k)), in golden order."""
        k_max = max(self.fingerprint.k_values, default=DEFAULT_LIMIT)
        flagged = []
        for q in self.per_query:
            now = q.metrics.recall_at_k.get(k_max, 0.0)
            prev = self.previous_recall(q.id)
            regressed = prev is not None and classify(now - prev, self.threshold) is Change.DOWN
            if q.is_miss or regressed:
                flagged.append((q, prev))
        return flagged

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document (the caller sorts keys when it serialises)."""
        out = self.record.to_dict()
        out["corpus"] = self.corpus.to_dict() if self.corpus else None
        out["corpus_changed"] = self.corpus_changed
        out["previous"] = self.previous.to_dict() if self.previous else None
        if self.attribution is not None:
            for query in out["per_query"]:
                found = self.attribution.get(query["id"])
                query["attribution"] = [a.to_dict() for a in found] if found else None
            out["misses_by_cause"] = dict(misses_by_cause(self.attribution.values()))
        out["diff"] = None
        if self.diff_enabled and self.previous is not None:
            now, prev = self.record.aggregate, self.previous.aggregate
            out["diff"] = {
                "mrr": now.mrr - prev.mrr,
                "recall_at_k": {
                    str(k): v - prev.recall_at_k.get(k, 0.0) for k, v in now.recall_at_k.items()
                },
                "ndcg_at_k": {
                    str(k): v - prev.ndcg_at_k.get(k, 0.0) for k, v in now.ndcg_at_k.items()
                },
            }
        out["significance"] = (
            self.significance.to_dict()
            if out["diff"] is not None and self.significance is not None
            else None
        )
        out["gate"] = self.gate_dict()
        if self.latency is not None:
            out["latency"] = self.latency.to_dict()
            for query in out["per_query"]:
                timing = self.query_timings.get(query["id"])
                query["latency_ms"] = timing.total * 1000.0 if timing is not None else None
        if self.ann_recall is not None:
            out["ann_recall"] = self.ann_recall.to_dict()
        if self.judged is not None:  # absent, not null, without judgements: seed output kept
            out["judged"] = self.judged.to_dict()
        if self.slices:  # absent without tags (or folders): the seed's document unchanged
            out["slices"] = [s.to_dict() for s in self.slices]
        return out

    def gate_dict(self) -> dict[str, Any] | None:
        """The JSON ``gate``: the decision (mode, threshold, alpha, metrics) and whether it
        was applied, why not, and which baseline it compared with."""
        status = self.gate_status
        if status is None:  # an EvalRun built by hand, without a status
            return self.gate.to_dict() if self.gate is not None else None
        if self.gate is not None:
            out = self.gate.to_dict()
        else:
            out = {
                "mode": status.mode,
                "threshold": status.threshold,
                "alpha": status.alpha,
                "regressed": False,
                "metrics": [],
            }
        out["applied"] = status.applied
        out["reason"] = status.reason
        out["required"] = status.required
        threshold_gate = status.threshold_dict()
        if threshold_gate is not None:  # beside a significant gate that could not judge
            out["threshold_gate"] = threshold_gate
        out["baseline"] = self.baseline.to_dict() if self.baseline is not None else None
        if self.floor_stated and self.floor is not None:
            floor = self.floor.to_dict() or {"reason": self.floor.reason}
            gate = self.floor_gate
            floor["regressed"] = bool(self.floor_fell)
            floor["metrics"] = [m.to_dict() for m in gate.metrics] if gate is not None else []
            out["floor"] = floor
        if self.slice_gate is not None:
            out["slices"] = self.slice_gate.to_dict()
        return out

    @property
    def floor_falls(self) -> tuple[GatedMetric, ...]:
        """The metrics that fell beyond the threshold below the accepted baseline (whether
        the gate was asked for or not; ``floor_fell`` are those it failed the run for)."""
        return self.floor_gate.fell if self.floor_gate is not None else ()

    @property
    def floor_stated(self) -> bool:
        """Must the reports name the accepted baseline? When it was chosen by a decision (a
        file, an accept, a pin) and is not simply the compared run, or when the run fell
        below it; a history where no run fell below its first run reads as the seed's."""
        floor = self.floor
        if floor is None:
            return False
        if self.floor_falls or floor.reason is not None:
            return True
        compared = self.previous.id if self.diff_enabled and self.previous else None
        return floor.explicit and floor.run is not None and floor.run.id != compared

    def per_query_frame(self) -> pd.DataFrame:
        """One row per golden query: ``id``, ``query``, ``recall@k`` / ``mrr`` / ``ndcg@k``,
        the compared run's values (``<metric>_previous``) and ``<metric>_delta`` (left out
        without a compatible previous run), ``miss``. Columns: docs/api.md."""
        return view(self, "per_query_frame")

    def aggregate_frame(self) -> pd.DataFrame:
        """One row per aggregate metric: ``metric``, ``value``, ``previous``, ``delta``."""
        return view(self, "aggregate_frame")

    def slice_frame(self) -> pd.DataFrame:
        """One row per slice (tag or folder) and aggregate metric, with its delta, interval
        and p(drop) against the compared run; empty without slices. Columns: docs/api.md."""
        return view(self, "slice_frame")

    def attribution_frame(self) -> pd.DataFrame:
        """One row per expected answer of each query not fully found within the largest k:
        the cause and the ranks behind it (empty unless the run was made with --explain)."""
        import pandas as pd

        columns = [
            "id", "query", "path", "heading", "cause", "indexed", "fts_rank", "fts_matches",
            "vector_rank", "vector_candidates", "fused_rank", "final_rank", "grid_found_in",
            "explanation",
        ]  # fmt: skip
        rows = []
        queries = {q.id: q for q in reversed(self.per_query)}
        for query_id, answers in (self.attribution or {}).items():
            for a in answers:
                d = a.to_dict()
                row = {key: d.get(key) for key in columns}
                row["id"], row["query"] = query_id, queries[query_id].query
                row["grid_found_in"] = a.grid.found_in if a.grid is not None else None
                rows.append(row)
        ints = ["fts_rank", "fts_matches", "vector_rank", "vector_candidates", "fused_rank"]
        ints += ["final_rank", "grid_found_in"]
        return pd.DataFrame(rows, columns=columns).astype({c: "Int64" for c in ints})
