"""The two regression gates on a real index: a 14-query golden set on the kb_en fixture,
documents edited between two ``groove eval`` runs (real model, real SQLite)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats as scipy_stats

from groove.cli import cli

# The fixture's ten queries plus four more, so one query moves a metric by 1/14 = 0.071.
EXTRA_QUERIES = """
  - id: postmortem-deadline
    query: "How many working days does the team have to write up an incident?"
    expected:
      - path: team/postmortem.md

  - id: postmortem-actions
    query: "Does every follow-up task from an incident review need an owner and a due date?"
    expected:
      - path: team/postmortem.md
        heading: Action items

  - id: canary-abort
    query: "When does the release bot abort a canary and send traffic back to the baseline?"
    expected:
      - path: ops/canary.md
        heading: Promotion and abort

  - id: backup-encryption
    query: "Where are the backup copies stored and how are they encrypted?"
    expected:
      - path: data/backup.md
        heading: Encryption and storage
"""

UNRELATED = (
    "# Sourdough\n\nFeed the starter with equal weights of flour and water, wait until it "
    "doubles, then mix the dough and let it rest before shaping the loaf.\n"
)


@pytest.fixture
def kb(indexed_kb) -> Path:  # type: ignore[no-untyped-def]
    return indexed_kb("kb_en")


@pytest.fixture
def golden14(golden_en: Path, tmp_path: Path) -> Path:
    path = tmp_path / "golden14.yml"
    path.write_text(golden_en.read_text(encoding="utf-8") + EXTRA_QUERIES, encoding="utf-8")
    return path


def _eval(kb: Path, golden: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["eval", "--kb-path", str(kb), "--golden", str(golden), *args])


def _reindex(kb: Path) -> None:
    result = CliRunner().invoke(cli, ["index", "--kb-path", str(kb), "--quiet"])
    assert result.exit_code == 0, result.stderr


def _per_query(doc: dict, metric: str, k: str | None) -> dict[str, float]:
    out = {}
    for q in doc["per_query"]:
        m = q["metrics"]
        out[q["id"]] = m["reciprocal_rank"] if k is None else m[metric][k]
    return out


def _check_against_scipy(doc: dict, previous: dict, metric: str, k: str | None) -> None:
    leaf = doc["significance"][metric] if k is None else doc["significance"][metric][k]
    now, before = _per_query(doc, metric, k), _per_query(previous, metric, k)
    ids = [i for i in now if i in before]
    a = np.array([now[i] for i in ids])
    b = np.array([before[i] for i in ids])
    diff = doc["diff"][metric] if k is None else doc["diff"][metric][k]
    assert leaf["delta"] == pytest.approx(float(np.mean(a - b))) == pytest.approx(diff)
    if np.count_nonzero(a - b) == 0:
        assert leaf == {"delta": 0.0, "ci": [0.0, 0.0], "p_value": 1.0, "p_drop": 1.0}
        return
    for key, alternative in (("p_value", "two-sided"), ("p_drop", "less")):
        exact = scipy_stats.permutation_test(
            (a, b),
            lambda x, y, axis: np.mean(x - y, axis=axis),
            permutation_type="samples",
            alternative=alternative,
            n_resamples=np.inf,
        )
        assert leaf[key] == pytest.approx(exact.pvalue, abs=1e-12)
    interval = scipy_stats.bootstrap(
        (a - b,), np.mean, n_resamples=50_000, method="percentile", random_state=1
    ).confidence_interval
    # Both intervals are Monte Carlo; per-query scores of a small golden set are coarse, so a
    # bootstrap mean lives on a lattice of step 1/N and a percentile near a lattice edge may
    # land on either neighbour: agreement within one query's weight.
    step = 1.0 / len(ids) + 1e-9
    assert leaf["ci"][0] == pytest.approx(interval.low, abs=step)
    assert leaf["ci"][1] == pytest.approx(interval.high, abs=step)


@pytest.mark.model
def test_one_query_drop_is_not_judged_by_the_significant_gate_and_fails_the_threshold_gate(
    kb: Path, golden14: Path
) -> None:
    first = _eval(kb, golden14, "--format", "json")
    assert first.exit_code == 0, first.stderr
    before = json.loads(first.stdout)
    actions = next(q for q in before["per_query"] if q["id"] == "postmortem-actions")
    assert actions["metrics"]["recall_at_k"]["10"] == 1.0  # the query the edit will break
    # Rename the one heading a single query expects: that query, and only it, loses its hit.
    note = kb / "team" / "postmortem.md"
    note.write_text(
        note.read_text(encoding="utf-8").replace("## Action items", "## Follow-up work"),
        encoding="utf-8",
    )
    _reindex(kb)
    history = kb / ".groove-eval-history.json"
    saved = history.read_bytes()

    significant = _eval(
        kb, golden14, "--fail-on-regression", "--regression-gate", "significant", "--no-color"
    )
    assert significant.exit_code == 0, significant.stderr  # not applied, not required
    assert (
        "Gate (significant: fell by more than 0.050 and adjusted p(drop) < 0.05)"
        in significant.stdout
    )
    # one query fell in every metric: p(drop) = 1/2, and seven metrics that fell together
    # are one piece of evidence, so the adjusted p is 1/2 as well (Holm made it 1.00). One
    # moved query can never reach alpha: the fall is not judged, and the gate says so.
    assert (
        "  recall@10 ↓ 0.071 [-0.21, +0.00] p(drop)=0.50 (adjusted 0.50): "
        "not judged: too few queries moved\n" in significant.stdout
    )
    assert (
        "warning: regression gate not applied: too few queries moved for the significant "
        "gate: 1 of 14 paired queries moved, so the smallest p(drop) is 1/2 = 0.5"
    ) in significant.stderr
    assert "; the threshold gate's verdict: regression (recall@1 down 0.071," in (
        significant.stderr
    )
    assert "recall@10  0.929  (↓ 0.071 [-0.21, +0.00] p=1.00)" in significant.stdout

    history.write_bytes(saved)  # the same pair of runs, judged by the seed's rule
    threshold = _eval(kb, golden14, "--fail-on-regression", "--format", "json")
    assert threshold.exit_code == 1
    assert "regression detected (delta > 0.050" in threshold.stderr
    assert (
        "Regressed: recall@1 down 0.071 [-0.21, +0.00] p(drop)=0.50 (adjusted 0.50); "
        in threshold.stderr
    )
    doc = json.loads(threshold.stdout)
    assert doc["gate"]["mode"] == "threshold" and doc["gate"]["regressed"] is True
    leaf = doc["significance"]["recall_at_k"]["10"]
    assert leaf["p_value"] == 1.0  # one non-zero delta: both signs are equally likely
    assert leaf["p_drop"] == 0.5  # and a fall is one of the two
    assert {m["p_adjusted"] for m in doc["gate"]["metrics"]} == {0.5}
    assert not any(m["real_drop_under_threshold"] for m in doc["gate"]["metrics"])
    for metric, k in [("recall_at_k", "1"), ("recall_at_k", "10"), ("mrr", None)]:
        _check_against_scipy(doc, before, metric, k)


@pytest.mark.model
def test_broad_drop_fails_the_significant_gate_and_significance_matches_scipy(
    kb: Path, golden14: Path
) -> None:
    first = _eval(kb, golden14, "--format", "json", "--fail-on-regression")
    assert first.exit_code == 0  # no previous run: the gate is a no-op, and says so
    assert "regression gate not applied: no previous run in the history" in first.stderr
    before = json.loads(first.stdout)
    assert before["significance"] is None and before["gate"]["applied"] is False
    for name in ("ops/rollback.md", "ops/canary.md", "data/backup.md", "data/restore.md"):
        (kb / name).write_text(UNRELATED, encoding="utf-8")
    for name in ("search/rrf.md", "search/chunking.md", "team/postmortem.md"):
        (kb / name).write_text(UNRELATED.replace("Sourdough", name), encoding="utf-8")
    _reindex(kb)
    saved = (kb / ".groove-eval-history.json").read_bytes()

    # The seed's no-op: --no-diff disables the gate in both modes.
    off = _eval(
        kb, golden14, "--fail-on-regression", "--regression-gate", "significant", "--no-diff"
    )
    assert off.exit_code == 0
    assert "warning: regression gate not applied: --no-diff" in off.stderr
    (kb / ".groove-eval-history.json").write_bytes(saved)

    result = _eval(
        kb, golden14, "--fail-on-regression", "--regression-gate", "significant", "--format", "json"
    )
    assert result.exit_code == 1, result.stdout
    assert "(fell by more than 0.050 with adjusted p(drop) < 0.05 on at least one" in result.stderr
    assert " Regressed: recall@" in result.stderr
    doc = json.loads(result.stdout)
    assert doc["gate"]["mode"] == "significant"
    for metric in doc["gate"]["metrics"]:
        if metric["regressed"]:
            assert metric["p_drop"] <= metric["p_adjusted"] < 0.05
    # significance has a leaf wherever diff has a number, and it matches scipy
    assert set(doc["significance"]) == set(doc["diff"])
    for metric in ("recall_at_k", "ndcg_at_k"):
        assert set(doc["significance"][metric]) == set(doc["diff"][metric])
        for k in doc["diff"][metric]:
            _check_against_scipy(doc, before, metric, k)
    _check_against_scipy(doc, before, "mrr", None)


def test_unknown_gate_mode_is_a_usage_error(kb: Path, golden14: Path) -> None:
    result = _eval(kb, golden14, "--regression-gate", "loose")
    assert result.exit_code == 2
    assert "'loose' is not one of 'threshold', 'significant'" in result.stderr
