"""The gate's drop test: one-sided sign-flip p, max-T adjusted over the gated metrics,
checked by brute force over every sign vector; the smallest N each mode can flag at; and
"real, but under the threshold" in every report."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from groove.evaluation.result import EvalRun
from groove.metrics import Expected, QueryMetrics, aggregate
from groove.report import eval_json, eval_markdown, eval_text
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import QueryResult, RunRecord
from groove.stats.familywise import max_t_drop, smallest_drop_p
from groove.stats.gate import (
    REAL_UNDER_THRESHOLD,
    decide,
    smallest_flaggable_n,
    unreachable_reason,
)
from groove.stats.significance import compare_records, sign_flip_p

GATED = 7  # recall@1/5/10, MRR, nDCG@1/5/10


def brute_force_adjusted(d: np.ndarray) -> list[float]:
    """Westfall-Young step-down max-T over all 2^n sign vectors, written out plainly."""
    n, m = d.shape
    live = [j for j in range(m) if np.any(np.abs(d[:, j]) > 1e-12)]
    out = [1.0] * m
    if not live:
        return out

    def stats(signs: np.ndarray) -> list[float]:
        return [-(signs * d[:, j]).sum() / np.sqrt((d[:, j] ** 2).sum()) for j in live]

    observed = stats(np.ones(n))
    order = sorted(range(len(live)), key=lambda k: -observed[k])
    every = [stats(np.array(s)) for s in itertools.product((1.0, -1.0), repeat=n)]
    running = 0.0
    for position, k in enumerate(order):
        rest = order[position:]
        hits = sum(1 for t in every if max(t[r] for r in rest) >= observed[k] - 1e-9)
        running = max(running, hits / len(every))
        out[live[k]] = running
    return out


def test_max_t_matches_brute_force_over_every_sign_vector() -> None:
    rng = np.random.default_rng(2)
    for _ in range(60):
        n, m = int(rng.integers(1, 9)), int(rng.integers(1, 5))
        d = np.round(rng.normal(-0.1, 0.3, (n, m)), 1) * (rng.random((n, m)) < 0.7)
        adjusted, exact = max_t_drop(d)
        assert exact
        assert adjusted == pytest.approx(brute_force_adjusted(d), abs=1e-12)


def test_one_metric_is_the_one_sided_test_and_copies_of_a_metric_cost_nothing() -> None:
    rng = np.random.default_rng(4)
    d = np.round(rng.normal(-0.15, 0.3, 12), 2)
    single = sign_flip_p(d, alternative="less")[0]
    assert max_t_drop(d[:, np.newaxis])[0] == [pytest.approx(single, abs=1e-12)]
    # seven metrics that move together are one piece of evidence, not seven (Holm would
    # multiply the smallest p by seven)
    assert (
        max_t_drop(np.tile(d[:, np.newaxis], (1, GATED)))[0]
        == [pytest.approx(single, abs=1e-12)] * GATED
    )
    assert max_t_drop(np.zeros((5, 3))) == ([1.0, 1.0, 1.0], True)
    with pytest.raises(ValueError):
        max_t_drop(np.zeros(5))
    with pytest.raises(ValueError):
        max_t_drop(np.array([[np.nan]]))


def test_monte_carlo_max_t_is_close_to_the_exact_enumeration_and_never_zero() -> None:
    rng = np.random.default_rng(9)
    d = np.round(rng.normal(-0.08, 0.3, (18, 4)), 2)
    drawn, exact = max_t_drop(d)
    assert not exact
    full, exact = max_t_drop(d, exact_max=18)  # all 2^18 sign vectors
    assert exact
    assert drawn == pytest.approx(full, abs=0.01)
    assert max_t_drop(d) == (drawn, False)  # seeded
    everything_fell = -np.ones((40, 3))
    assert max_t_drop(everything_fell)[0] == [pytest.approx(1 / 10_001)] * 3


def _smallest_adjusted_p(n: int) -> float:
    """The smallest adjusted p the gate can reach with n paired queries, by brute force:
    every pattern of rises and falls over the n queries, with seven metrics that move
    together and with metrics that move by different amounts."""
    weights = np.array([[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.5, 1.0, 1.0, 0.7, 0.5, 0.8, 0.9]])
    best = 1.0
    for signs in itertools.product((1.0, -1.0), repeat=n):
        s = np.array(signs)[:, np.newaxis]
        for w in weights:
            best = min(best, *max_t_drop(s * w)[0])
    return best


@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.1, 0.2])
def test_smallest_flaggable_n_is_where_brute_force_first_gets_below_alpha(alpha: float) -> None:
    smallest = {n: _smallest_adjusted_p(n) for n in range(1, 9)}
    assert smallest == {n: pytest.approx(2.0**-n) for n in smallest}
    first = min(n for n, p in smallest.items() if p < alpha)
    assert smallest_flaggable_n("significant", alpha, GATED) == first
    assert smallest_flaggable_n("significant", alpha, 1) == first
    assert smallest_flaggable_n("threshold", alpha, GATED) == 1


def test_smallest_n_at_the_default_alpha_and_the_warning_below_it() -> None:
    assert smallest_flaggable_n("significant", 0.05, GATED) == 5
    assert unreachable_reason(5, "significant", 0.05, GATED) is None
    assert unreachable_reason(4, "significant", 0.05, GATED) == (
        "too few queries for the significant gate: with 4 paired queries the smallest "
        "p(drop) is 1/16 = 0.0625, never below alpha 0.05 (at least 5 are needed)"
    )
    assert unreachable_reason(3, "threshold", 0.05, GATED) is None
    assert unreachable_reason(0, "threshold", 0.05, GATED) == "no paired queries: nothing to gate"
    assert smallest_drop_p(20) == pytest.approx(1 / 10_001)
    with pytest.raises(ValueError, match="below the smallest p"):
        smallest_flaggable_n("significant", 1e-6, GATED)
    assert "no number of queries reaches it" in str(unreachable_reason(3, "significant", 1e-6, 7))
    with pytest.raises(ValueError):
        smallest_flaggable_n("loose", 0.05, GATED)


def make_run(stamp: str, scores: Sequence[float]) -> RunRecord:
    """A run whose every metric of query i equals scores[i] (ids q0, q1, ...)."""
    per_query = tuple(
        QueryResult(
            f"q{i}",
            f"query {i}",
            (Expected("a.md"),),
            (),
            QueryMetrics({1: s, 5: s, 10: s}, s, {1: s, 5: s, 10: s}),
        )
        for i, s in enumerate(scores)
    )
    return RunRecord(
        timestamp=stamp,
        fingerprint=Fingerprint("m", None, 10, (1, 5, 10), "g", 2, 3),
        corpus=None,
        per_query=per_query,
        aggregate=aggregate([(q.expected, q.metrics) for q in per_query], (1, 5, 10)),
        findings=(),
    )


def _eval_run(now: RunRecord, before: RunRecord, mode: str) -> EvalRun:
    stats = compare_records(now, before)
    gate = decide(now, before, stats, mode=mode, threshold=0.05, alpha=0.05)
    return EvalRun(
        record=now,
        previous=before,
        diff_enabled=True,
        regression=gate.regressed,
        threshold=0.05,
        kb_path=None,
        golden_path=Path("golden.yml"),
        history_path=None,
        regressed_metrics=tuple(m.label for m in gate.metrics if m.regressed),
        significance=stats,
        gate=gate,
    )


@pytest.mark.parametrize("n", [4, 5, 8])
def test_the_significant_gate_flags_from_the_smallest_n_on(n: int) -> None:
    before = make_run("2026-01-01T00:00:00+00:00", [1.0] * n)
    now = make_run("2026-01-02T00:00:00+00:00", [0.0] * n)  # every query lost its answer
    gate = decide(now, before, compare_records(now, before), mode="significant", alpha=0.05)
    assert gate.regressed is (n >= smallest_flaggable_n("significant", 0.05, GATED))
    assert all(m.p_adjusted == pytest.approx(2.0**-n) for m in gate.metrics)


def test_a_real_drop_under_the_threshold_is_named_in_text_markdown_and_json() -> None:
    # 200 queries, 6 lose their answer: every metric falls by 0.03 (under 0.05), and six
    # falls out of six moved queries give p(drop) = 1/64 in every metric.
    before = make_run("2026-01-01T00:00:00+00:00", [1.0] * 200)
    now = make_run("2026-01-02T00:00:00+00:00", [0.0] * 6 + [1.0] * 194)
    for mode in ("threshold", "significant"):
        run = _eval_run(now, before, mode)
        assert run.gate is not None and not run.gate.regressed
        assert [m.label for m in run.gate.real_under_threshold] == [
            m.label for m in run.gate.metrics
        ]
        line = "recall@1 ↓ 0.030 [-0.06, -0.01] p(drop)=0.02 (adjusted 0.02)"
        text = eval_text.render(run)
        assert f"  {line}: {REAL_UNDER_THRESHOLD}\n" in text
        header = {
            "threshold": "Gate (threshold: fell by more than 0.050; real drop: adjusted "
            "p(drop) < 0.05)",
            "significant": "Gate (significant: fell by more than 0.050 and adjusted "
            "p(drop) < 0.05)",
        }[mode]
        assert header in text
        markdown = eval_markdown.render(run)
        assert f"- {line}: {REAL_UNDER_THRESHOLD}\n" in markdown
        assert "**Regression**" not in markdown
        doc = json.loads(eval_json.render(run))
        assert doc["gate"]["test"] == "one-sided sign-flip, max-T step-down over the gated metrics"
        leaf = doc["gate"]["metrics"][0]
        assert leaf["real_drop_under_threshold"] is True and leaf["regressed"] is False
        assert leaf["p_drop"] == leaf["p_adjusted"] == pytest.approx(1 / 64)
        assert doc["significance"]["mrr"]["p_drop"] == pytest.approx(1 / 64)
        note = run.gate.under_threshold_note()
        assert note is not None and note.startswith(f"{REAL_UNDER_THRESHOLD} 0.050 (adjusted")


def test_a_within_noise_history_prints_exactly_as_without_the_gate() -> None:
    # One query moved (down by 1/14, over the threshold) and one up a little: the threshold
    # gate flags the fall, nothing is significant, and no report gains a line.
    base = [1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 0.5, 1.0, 1.0, 1.0, 0.5, 1.0, 1.0, 0.0]
    before = make_run("2026-01-01T00:00:00+00:00", base)
    for scores in ([0.0, *base[1:]], [*base[:13], 0.5], base):
        now = make_run("2026-01-02T00:00:00+00:00", scores)
        run = _eval_run(now, before, "threshold")
        assert run.gate is not None and not run.gate.real_under_threshold
        bare = replace(run, gate=None)
        assert eval_text.render(run) == eval_text.render(bare)
        assert eval_markdown.render(run) == eval_markdown.render(bare)
        assert "Gate" not in eval_text.render(run)


def test_false_alarms_stay_at_or_below_alpha_over_every_null_outcome() -> None:
    # Per-query changes of ten queries in the seven metrics (two configurations of a real
    # kind: a query lost its answer, another found it lower or higher, ties included).
    # Under "no drop" each query's row is as likely to have come out negated; every one of
    # the 2^10 outcomes is judged, so the rate below is exact, not simulated.
    v = np.array(
        [
            [1, 1, 1, 1.0, 1, 1.0, 1.0],
            [0, 1, 1, 0.5, 0, 0.63, 0.63],
            [0, 0, 1, 0.14, 0, 0, 0.29],
            [1, 0, 0, 0.5, 1, 0.37, 0.37],
            [0, 0, 0, 0.0, 0, 0, 0.0],
            [0, 1, 0, 0.2, 0, 0.43, 0.2],
            [1, 1, 1, 0.75, 1, 0.8, 0.8],
            [0, 0, 1, 0.1, 0, 0, 0.3],
            [0, 1, 1, 0.33, 0, 0.5, 0.5],
            [1, 1, 1, 1.0, 1, 1.0, 1.0],
        ]
    )
    for alpha in (0.05, 0.1):
        alarms = 0
        for signs in itertools.product((1.0, -1.0), repeat=v.shape[0]):
            adjusted, exact = max_t_drop(np.array(signs)[:, np.newaxis] * v)
            assert exact
            alarms += min(adjusted) < alpha
        assert 0 < alarms / 2 ** v.shape[0] <= alpha


def test_the_notebook_says_a_pass_hid_a_real_drop_under_the_threshold() -> None:
    from groove.report.notebook import eval_report as views
    from groove.report.notebook.outcome import Outcome

    before = make_run("2026-01-01T00:00:00+00:00", [1.0] * 200)
    real = _eval_run(
        make_run("2026-01-02T00:00:00+00:00", [0.0] * 6 + [1.0] * 194), before, "threshold"
    )
    status = views.status(Outcome(real, 0)).data
    assert "✔ passed" in status and f"{REAL_UNDER_THRESHOLD} 0.050" in status
    assert REAL_UNDER_THRESHOLD in views.aggregate_table(Outcome(real, 0)).data
    noise = _eval_run(
        make_run("2026-01-02T00:00:00+00:00", [0.0] + [1.0] * 199), before, "threshold"
    )
    assert REAL_UNDER_THRESHOLD not in views.status(Outcome(noise, 0)).data
    assert REAL_UNDER_THRESHOLD not in views.aggregate_table(Outcome(noise, 0)).data


def test_the_smallest_adjusted_p_is_scipys_permutation_test_of_the_largest_fall() -> None:
    # scipy swaps the two members of each pair; handing it row numbers into a stacked table
    # of (now, previous) rows swaps a query's seven metrics together, as the gate does.
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(21)
    previous = rng.choice([0.0, 0.5, 1.0], size=(11, GATED))
    now = np.clip(previous - rng.choice([0.0, 0.0, 0.5, 1.0], size=(11, GATED)), 0, 1)
    now[:, 3] = np.clip(previous[:, 3] + rng.choice([-0.25, 0.0, 0.25], size=11), 0, 1)
    table = np.vstack([now, previous])
    n = now.shape[0]
    scale = np.sqrt(((now - previous) ** 2).sum(axis=0))

    def largest_fall(x: np.ndarray, y: np.ndarray) -> float:
        deltas = table[x.astype(int)] - table[y.astype(int)]
        return float((-deltas.sum(axis=0) / scale).max())

    result = scipy_stats.permutation_test(
        (np.arange(n), np.arange(n) + n),
        largest_fall,
        permutation_type="samples",
        alternative="greater",
        n_resamples=np.inf,
        vectorized=False,
    )
    adjusted, exact = max_t_drop(now - previous)
    assert exact
    assert min(adjusted) == pytest.approx(result.pvalue, abs=1e-12)
