"""Slices: the golden queries grouped by tag (and by folder), each measured on its own.

An average hides where quality moved: when every Japanese query loses its answer on a
set that is mostly English, the aggregate falls by a fraction and a fixed threshold can
let it pass. A slice is a named subset of the golden queries:

* each ``tags`` entry of a query is a slice (``ja``, ``howto``);
* with ``slice_by = "folder"``, also one slice per top folder of the expected paths
  (``ops/`` for ``ops/rollback.md``, ``./`` for a note at the KB's top); a query whose
  answers sit in two folders is in both.

Each slice has its query count and the aggregate metrics recomputed on its queries
(``groove.metrics.aggregate``, so a slice of every query equals the aggregate), and, when
the run is compared, the deltas with the same paired tests as the diff
(``groove.stats.significance.compare_records`` on the subset).

The slice gate (``decide_slices``) is opt-in: every slice with at least ``min_queries``
queries is gated; a smaller one is listed as not gated. Threshold mode applies the
threshold to each slice's aggregate; significant mode adjusts the one-sided p(drop) over
slices x metrics with the step-down max-T of groove.stats.familywise (a query sits in a
column of each slice it belongs to; outside a slice its delta is zero, which adds nothing
to that column's statistic), so the chance of any false alarm over the whole family stays
at alpha.

Pure functions over run records: no index, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from groove.metrics import AggregateMetrics, aggregate
from groove.runs.judged import JudgedSummary
from groove.runs.record import QueryResult, RunRecord, aggregate_to_dict, metric_pairs
from groove.settings import SLICE_BY
from groove.stats.familywise import max_t_drop, smallest_drop_p
from groove.stats.gate import GATE_MODES, GatedMetric
from groove.stats.significance import ZERO_EPS, PairedTest, compare_records, paired_values

DEFAULT_SLICE_BY = "tags"
DEFAULT_SLICE_MIN_QUERIES = 10
KIND_TAG = "tag"
KIND_FOLDER = "folder"
#: The folder slice of the notes at the top of the KB (no folder in their path).
TOP_FOLDER = "./"


@dataclass(frozen=True)
class SliceDef:
    """One slice: its name, where it came from (``tag`` or ``folder``) and its queries'
    ids, in golden order."""

    name: str
    kind: str
    query_ids: tuple[str, ...]


def top_folder(path: str) -> str:
    """``ops/`` for ``ops/deploy/rollback.md``; ``./`` for ``rollback.md``."""
    head, sep, _ = path.partition("/")
    return f"{head}/" if sep and head else TOP_FOLDER


def define_slices(
    per_query: Sequence[QueryResult], slice_by: str = DEFAULT_SLICE_BY
) -> tuple[SliceDef, ...]:
    """The slices of a run's queries: tags by name, then (``folder``) top folders by name.
    A repeated query id counts once (its first occurrence), as the paired tests do."""
    if slice_by not in SLICE_BY:
        raise ValueError(f"unknown slice_by {slice_by!r}")
    tags: dict[str, list[str]] = {}
    folders: dict[str, list[str]] = {}
    seen: set[str] = set()
    for q in per_query:
        if q.id in seen:
            continue
        seen.add(q.id)
        for tag in dict.fromkeys(q.tags):
            tags.setdefault(tag, []).append(q.id)
        if slice_by == "folder":
            for folder in dict.fromkeys(top_folder(e.path) for e in q.expected):
                folders.setdefault(folder, []).append(q.id)
    return tuple(SliceDef(n, KIND_TAG, tuple(tags[n])) for n in sorted(tags)) + tuple(
        SliceDef(n, KIND_FOLDER, tuple(folders[n])) for n in sorted(folders)
    )


def subset(record: RunRecord, ids: Iterable[str]) -> RunRecord:
    """``record`` restricted to the queries in ``ids`` (golden order kept), its aggregate
    recomputed over them with the run's k values."""
    wanted = set(ids)
    kept = tuple(q for q in record.per_query if q.id in wanted)
    ks = record.fingerprint.k_values
    return replace(
        record,
        per_query=kept,
        aggregate=aggregate([(q.expected, q.metrics) for q in kept], ks),
    )


@dataclass(frozen=True)
class SliceDelta:
    """One metric of one slice against the compared run: both aggregates and the paired
    test over the slice's paired queries (None when none is paired)."""

    label: str
    now: float
    previous: float
    test: PairedTest | None

    @property
    def delta(self) -> float:
        return self.now - self.previous

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"metric": self.label, "delta": self.delta}
        out["previous"] = self.previous
        out["ci"] = list(self.test.ci) if self.test is not None else None
        out["p_value"] = self.test.p_value if self.test is not None else None
        out["p_drop"] = self.test.p_drop if self.test is not None else None
        return out


@dataclass(frozen=True)
class Slice:
    """A slice measured: its aggregate and, when the run was compared, its deltas (None
    without a comparison)."""

    name: str
    kind: str
    query_count: int
    aggregate: AggregateMetrics
    deltas: tuple[SliceDelta, ...] | None = None
    paired_queries: int = 0
    query_ids: tuple[str, ...] = ()  # its queries, in golden order (not in the JSON)
    # judged@k over its queries (groove.runs.judged), when the golden file has judgements
    judged: Mapping[int, float] | None = None

    @property
    def judged_top(self) -> tuple[int, float] | None:
        """(the largest k, judged@k of its queries), or None without judgements."""
        if not self.judged:
            return None
        k = max(self.judged)
        return k, self.judged[k]

    def value(self, label: str) -> float:
        """The slice's aggregate of a diff label (``recall@10``, ``MRR``, ``nDCG@10``); 0 for
        a k the slice was not measured at."""
        value = self.aggregate.value(label)
        return 0.0 if value is None else value

    def delta(self, label: str) -> SliceDelta | None:
        for d in self.deltas or ():
            if d.label == label:
                return d
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "query_count": self.query_count,
            "aggregate": aggregate_to_dict(self.aggregate),
            "paired_queries": self.paired_queries,
            "deltas": [d.to_dict() for d in self.deltas] if self.deltas is not None else None,
            **({"judged_at_k": {str(k): v for k, v in self.judged.items()}} if self.judged else {}),
        }


def measure_slices(
    record: RunRecord,
    previous: RunRecord | None,
    defs: Sequence[SliceDef],
    judged: JudgedSummary | None = None,
) -> tuple[Slice, ...]:
    """Each slice of ``defs`` measured on ``record`` and, with ``previous``, compared with
    the same queries of ``previous`` (paired by id); with ``judged``, its judged@k (the
    mean over its queries of their judged@k)."""
    out = []
    for d in defs:
        now = subset(record, d.query_ids)
        deltas = None
        paired = 0
        if previous is not None:
            before = subset(previous, d.query_ids)
            significance = compare_records(now, before)
            paired = significance.paired_queries
            deltas = tuple(
                SliceDelta(label, value, prev, significance.get(label))
                for label, value, prev in metric_pairs(now.aggregate, before.aggregate)
            )
        count = now.aggregate.query_count
        share = _judged(judged, [q.id for q in now.per_query if q.expected])
        out.append(Slice(d.name, d.kind, count, now.aggregate, deltas, paired, d.query_ids, share))
    return tuple(out)


def _judged(judged: JudgedSummary | None, ids: Sequence[str]) -> dict[int, float] | None:
    if judged is None or not ids:
        return None
    rows = [judged.per_query.get(i, {}) for i in ids]
    return {k: sum(r.get(k, 0.0) for r in rows) / len(rows) for k in judged.k_values}


# ---------------------------------------------------------------- the slice gate


@dataclass(frozen=True)
class GatedSlice:
    """One gated slice: each metric as the gate saw it (groove.stats.gate.GatedMetric,
    ``p_adjusted`` over slices x metrics)."""

    name: str
    query_count: int
    metrics: tuple[GatedMetric, ...]
    # significant mode: a metric fell beyond the threshold, but too few of the slice's
    # queries moved for any p(drop) to get below alpha (reported, it cannot fail the gate)
    unjudged: bool = False
    moved: int = 0

    @property
    def regressed(self) -> bool:
        return any(m.regressed for m in self.metrics)

    def describe(self) -> str:
        """``slice ja (10 queries): recall@10, MRR fell; largest recall@10 ↓ 1.000 [...]
        p(drop)<0.001 (adjusted <0.001)``: the regressed metrics and the largest fall."""
        fallen = [m for m in self.metrics if m.regressed]
        if not fallen:
            return f"slice {self.name} ({_queries(self.query_count)}): no regression"
        largest = min(fallen, key=lambda m: m.delta)
        names = ", ".join(m.label for m in fallen)
        return (
            f"slice {self.name} ({_queries(self.query_count)}): {names} fell; "
            f"largest {largest.describe()}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "query_count": self.query_count,
            "moved": self.moved,
            "unjudged": self.unjudged,
            "regressed": self.regressed,
            "metrics": [m.to_dict() for m in self.metrics],
        }


@dataclass(frozen=True)
class SliceGate:
    """The gate applied to every slice of at least ``min_queries`` queries."""

    mode: str
    threshold: float
    alpha: float
    min_queries: int
    gated: tuple[GatedSlice, ...]
    not_gated: tuple[tuple[str, int], ...]  # (name, query count) of the smaller slices

    @property
    def regressed(self) -> bool:
        return any(s.regressed for s in self.gated)

    @property
    def regressed_slices(self) -> tuple[GatedSlice, ...]:
        return tuple(s for s in self.gated if s.regressed)

    def not_gated_text(self) -> str | None:
        """``2 slices under 10 queries reported, not gated: howto (3), faq (4)``."""
        if not self.not_gated:
            return None
        n = len(self.not_gated)
        listed = ", ".join(f"{name} ({count})" for name, count in self.not_gated)
        return (
            f"{n} slice{'' if n == 1 else 's'} under {self.min_queries} queries reported, "
            f"not gated: {listed}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "threshold": self.threshold,
            "alpha": self.alpha,
            "min_queries": self.min_queries,
            "regressed": self.regressed,
            "slices": [s.to_dict() for s in self.gated],
            "not_gated": [{"name": n, "query_count": c} for n, c in self.not_gated],
        }


def decide_slices(
    now: RunRecord,
    previous: RunRecord,
    defs: Sequence[SliceDef],
    *,
    mode: str,
    threshold: float,
    alpha: float,
    min_queries: int = DEFAULT_SLICE_MIN_QUERIES,
) -> SliceGate:
    """The gate's verdict on every metric of every slice of at least ``min_queries``
    queries of ``now``, against the same queries of ``previous``."""
    if mode not in GATE_MODES:
        raise ValueError(f"unknown regression gate {mode!r}")
    measured = []
    small = []
    for d in defs:
        sub_now, sub_before = subset(now, d.query_ids), subset(previous, d.query_ids)
        count = sub_now.aggregate.query_count
        if count < min_queries:
            small.append((d.name, count))
            continue
        measured.append((d, sub_now, sub_before, compare_records(sub_now, sub_before)))
    adjusted = _adjusted(now, previous, [(d, s) for d, _, _, s in measured])
    gated = []
    for d, sub_now, sub_before, significance in measured:
        metrics = []
        for label, value, before in metric_pairs(sub_now.aggregate, sub_before.aggregate):
            finite = math.isfinite(value) and math.isfinite(before)
            fell = finite and before - value > threshold
            p_adj = adjusted.get((d.name, label))
            significant = p_adj is not None and p_adj < alpha
            metrics.append(
                GatedMetric(
                    label=label,
                    delta=value - before if finite else math.nan,
                    test=significance.get(label),
                    p_holm=None,
                    fell=fell,
                    significant=significant,
                    regressed=fell and (mode == "threshold" or significant),
                    p_adjusted=p_adj,
                )
            )
        moved = _moved(sub_now, sub_before, [m.label for m in metrics])
        unjudged = (
            mode == "significant"
            and any(m.fell for m in metrics)
            and smallest_drop_p(moved) >= alpha
        )
        count = sub_now.aggregate.query_count
        gated.append(GatedSlice(d.name, count, tuple(metrics), unjudged, moved))
    return SliceGate(mode, threshold, alpha, min_queries, tuple(gated), tuple(small))


def _moved(now: RunRecord, previous: RunRecord, labels: Sequence[str]) -> int:
    """How many paired queries moved in at least one of ``labels``."""
    moved: set[str] = set()
    for label in labels:
        ids, a, b = paired_values(now.per_query, previous.per_query, label)
        moved.update(i for i, x in zip(ids, np.abs(a - b) > ZERO_EPS, strict=True) if x)
    return len(moved)


def _adjusted(
    now: RunRecord, previous: RunRecord, slices: Sequence[tuple[SliceDef, Any]]
) -> dict[tuple[str, str], float]:
    """The max-T adjusted p(drop) of every (slice, metric) with a paired test, as one
    family: one column per pair, each query's delta where it belongs to the slice, 0
    elsewhere (every query's signs flip together across its columns)."""
    columns: list[np.ndarray] = []
    keys: list[tuple[str, str]] = []
    cache: dict[str, tuple[list[str], np.ndarray]] = {}
    for d, significance in slices:
        members = set(d.query_ids)
        for label, test in significance.tests.items():
            if test is None:
                continue
            if label not in cache:
                ids, a, b = paired_values(now.per_query, previous.per_query, label)
                cache[label] = (ids, a - b)
            ids, diff = cache[label]
            mask = np.fromiter((i in members for i in ids), dtype=bool, count=len(ids))
            columns.append(np.where(mask, diff, 0.0))
            keys.append((d.name, label))
    if not columns:
        return {}
    p, _ = max_t_drop(np.stack(columns, axis=1))
    return dict(zip(keys, p, strict=True))


def _queries(n: int) -> str:
    return f"{n} quer{'y' if n == 1 else 'ies'}"
