"""The report of ``groove tune --retriever``: the family sweep over an engine's legs.

Same sections as the report of groove's own tune (the verdict first, then the grid,
leave-one-query-out and the gates), with the family's conditions in place of the seed's
grid and the recommendation written in the engine's own terms.
"""

from __future__ import annotations

import json
import math

from groove.tuning.external_result import ExternalTune
from groove.tuning.gates import ADOPT_MIN_MEAN_DELTA, ADOPT_SE_MULTIPLIER, STABILITY_MIN

TOP = 8


def _means(result: ExternalTune) -> list[float]:
    assert result.table is not None
    rows = list(result.effective_rows)
    primary = result.table.primary
    return [float(primary[rows, j].mean()) if rows else 0.0 for j in range(result.grid.width)]


def render_text(result: ExternalTune) -> str:
    grid = result.grid
    lines = [
        f"groove tune — retriever {result.retriever} (its legs, re-fused client-side)",
        f"  golden: {result.golden_path}   family: {grid.family}   engine: {result.engine}",
        f"  limit: {result.limit}   window swept up to: {grid.window}   conditions: {grid.width}"
        "   primary metric: nDCG@5",
        f"  queries: {len(result.queries)} total / {len(result.effective_rows)} effective "
        "(both legs found something)",
    ]
    if result.table is None or result.loo is None or result.verdict is None:
        lines.append("  no effective query: nothing to sweep")
        return "\n".join(lines) + "\n"
    lines += _verdict_lines(result)
    means = _means(result)
    order = sorted(range(1, grid.width), key=lambda j: (-means[j], j))[:TOP]
    lines += ["", "## Best conditions (mean nDCG@5 over the effective queries)"]
    lines.append(f"    {'baseline ' + grid.conditions[0].label:<46} nDCG@5 {means[0]:.4f}")
    for j in order:
        lines.append(f"    {grid.conditions[j].label:<46} nDCG@5 {means[j]:.4f}")
    loo = result.loo
    se = f"{loo.paired_se:.4f}" if math.isfinite(loo.paired_se) else "n/a"
    lines += [
        "",
        "## Nested leave-one-query-out",
        f"  refit (all effective queries): {grid.conditions[loo.refit].label}",
        f"  held-out mean delta vs baseline: {loo.mean_delta:+.4f}   paired SE: {se}"
        + (
            f"   calibrated SE: {result.calibrated.se:.4f}"
            if result.calibrated is not None and math.isfinite(result.calibrated.se)
            else ""
        ),
        f"  selection stability: {loo.stability:.2f}   sign test: "
        f"{loo.sign_test.improved} up / {loo.sign_test.degraded} down / {loo.sign_test.tied} "
        f"tied, p = {loo.sign_test.p_value:.3f}",
        "",
        "## Gates",
    ]
    lines += [f"  {'PASS' if g.passed else 'FAIL'}  {g.detail}" for g in result.verdict.gates]
    return "\n".join(lines) + "\n"


def _verdict_lines(result: ExternalTune) -> list[str]:
    """The verdict section, first under the header as in groove's own tune report."""
    assert result.verdict is not None
    grid, verdict = result.grid, result.verdict
    lines = ["", "## Verdict"]
    if not verdict.adopt or verdict.condition is None:
        lines.append(f"  Recommendation: keep the engine's fusion ({grid.conditions[0].label}).")
        lines += [f"    - {reason}" for reason in verdict.reasons]
    else:
        lines.append(f"  Recommendation: {verdict.condition.label}")
        if result.recommendation is not None:
            lines.append(f"  In {result.engine}'s terms:")
            lines += ["    " + line for line in result.recommendation.splitlines()]
        else:
            lines.append(f"  {result.engine} cannot fuse this way: {result.not_expressible}")
    lines.append(
        f"  (gates: mean > {ADOPT_MIN_MEAN_DELTA}, mean > {ADOPT_SE_MULTIPLIER:g} x paired SE, "
        f"stability > {STABILITY_MIN}, secondary metrics not degraded)"
    )
    return lines


NO_EFFECTIVE_HINT = (
    "answer each query with both legs, lexical and vector "
    "(docs/retrievers.md#per-leg-results-legs), and check that the engine's indexes hold the "
    "knowledge base the golden file points into"
)


def no_effective_message(result: ExternalTune) -> str:
    """Why the sweep did not run, in one line (the hint is NO_EFFECTIVE_HINT)."""
    return (
        f"groove tune: none of the {len(result.queries)} golden queries has hits on both legs "
        f"of {result.retriever} (two or more in all), so fusion cannot move any and the grid "
        "was not run."
    )


def render_no_effective(result: ExternalTune) -> str:
    """The stderr diagnostic (exit 2), as groove's own tune writes it."""
    lines = [no_effective_message(result), f"  {NO_EFFECTIVE_HINT}"]
    lines += [f"    {d.id}: lexical {d.lexical}, vector {d.vector}" for d in result.legs]
    return "\n".join(lines)


def render_json(result: ExternalTune) -> str:
    """``--format json``: groove tune's document with the engine's keys added
    (groove.tuning.external_document)."""
    return json.dumps(result.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
