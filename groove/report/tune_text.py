"""The terminal report of ``groove tune``: the verdict first, then the evidence (LOO, the
secondary metrics, the per-query impact, the grid) and the query diagnostics, the longest
part, last and capped at :data:`DIAGNOSTIC_ROWS` rows (every row is in ``--format json``).

A retriever's tune (its legs, re-fused client-side) has the same order: the verdict with
the recommendation in the engine's own terms, the family's best conditions, the
leave-one-query-out and the gates."""

from __future__ import annotations

import math

from groove.tuning.document import effective_means
from groove.tuning.families import FamilyGrid
from groove.tuning.gates import ADOPT_MIN_MEAN_DELTA, ADOPT_SE_MULTIPLIER, STABILITY_MIN
from groove.tuning.grid import DEFAULT_CONDITION, PRIMARY_K, Condition, toml_snippet
from groove.tuning.result import Analysis, EngineLegs, RetrieverLegs, TuneResult

DIAGNOSTIC_ROWS = 20  # query diagnostics listed in text; the rest are counted
BOLD = "\x1b[1m"
DIM = "\x1b[90m"
RESET = "\x1b[0m"


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def bold(self, text: str) -> str:
        return f"{BOLD}{text}{RESET}" if self.color else text

    def dim(self, text: str) -> str:
        return f"{DIM}{text}{RESET}" if self.color else text


#: where every diagnostics row is, by default (the CLI names its own JSON report)
DIAGNOSTICS_WHERE = "under `diagnostics` in the JSON report and in the tune-explorer notebook"


def render(result: TuneResult, *, color: bool = False, where: str = DIAGNOSTICS_WHERE) -> str:
    """The text report; ``where`` says where the diagnostics rows left out are."""
    if isinstance(result.source, RetrieverLegs):
        return _retriever_report(result, result.source)
    style = _Style(color)
    lines = _header(result, result.source, style)
    if result.analysis is not None:
        analysis = result.analysis
        lines += _verdict(analysis, style)
        lines += _loo(result, analysis, style)
        lines += _secondary(result, analysis, style)
        lines += _impact(result, analysis, style)
        lines += _grid(result, analysis, style)
    lines += _diagnostics(result.source, style, where)
    return "\n".join(lines) + "\n"


def _header(result: TuneResult, source: EngineLegs, style: _Style) -> list[str]:
    lines = [
        style.bold(f"groove tune — {result.kb_path}"),
        f"  golden: {result.golden_path}   model: {source.model}   reranker: none "
        "(tune always measures the plain RRF stage)",
        f"  limit: {result.limit}   candidate pool: {source.candidate_pool} (floor, not a cap)"
        f"   chunks in index: {source.chunk_total}",
        f"  queries: {len(result.queries)} total / {len(result.effective_rows)} effective "
        "(FTS candidates >= 2)   primary metric: nDCG@5",
    ]
    if source.context_axis_noop:
        lines.append(
            "  WARNING: every chunk has an empty context column, so the bm25_context_weight "
            "axis is a no-op here (contextual retrieval is off) — read its rows as "
            '"not measured".'
        )
    return lines


def _diagnostics(source: EngineLegs, style: _Style, where: str) -> list[str]:
    lines = ["", style.bold("## Query diagnostics")]
    lines.append(
        f"  {'query':<28} {'fts':>5} {'docfreq':>8} {'overlap':>8} {'bm25?':>6} "
        f"{'idf':>5} {'ties':>5}"
    )
    shown = source.diagnostics[:DIAGNOSTIC_ROWS]
    for d in shown:
        lines.append(
            f"  {d.id[:28]:<28} {d.fts_candidates:>5} {d.fts_total_matches:>8} "
            f"{d.vec_fts_overlap:>8} {'yes' if d.bm25_sensitive else 'no':>6} "
            f"{'CLMP' if d.idf_clamped else 'ok':>5} {d.rrf_ties:>5}"
        )
    rest = source.diagnostics[DIAGNOSTIC_ROWS:]
    if rest:
        idle = sum(1 for d in rest if not d.effective)
        lines.append(
            f"  … and {len(rest)} more queries ({idle} of them not effective): every row is {where}"
        )
    lines.append(
        style.dim(
            "  fts = FTS candidates in the pool; docfreq = chunks matching the query; overlap = "
            "FTS candidates also found by the vector leg; bm25? = heading-heavy and "
            "content-heavy weights rank differently; idf CLMP = the query matches half the "
            "chunks or more, so bm25 idf is near zero; ties = equal fused scores at the default."
        )
    )
    return lines


def _grid(result: TuneResult, analysis: Analysis, style: _Style) -> list[str]:
    n = len(result.effective_rows)
    lines = ["", style.bold(f"## Grid (coordinate descent over {n} effective queries)")]
    phases = analysis.phases
    assert phases is not None  # the built-in grid's
    lines.append("  Phase W — top 5 bm25 weight sets at k=60:")
    for condition, value in phases.top_weight_sets(5):
        lines.append(f"    {condition.label:<34} nDCG@5 {value:.4f}")
    lines.append("  Phase K — rrf_k sweep at the winning weights:")
    for condition, value in phases.rrf_k_rows():
        lines.append(f"    {condition.label:<34} nDCG@5 {value:.4f}")
    return lines


def _loo(result: TuneResult, analysis: Analysis, style: _Style) -> list[str]:
    loo = analysis.loo
    sign = loo.sign_test
    se = loo.paired_se
    return [
        "",
        style.bold("## Nested leave-one-query-out CV"),
        f"  refit (all {len(result.effective_rows)} queries): {loo.refit.label}",
        f"  folds: {len(loo.folds)}",
        f"  held-out mean delta vs default: {loo.mean_delta:+.4f}   "
        f"(threshold {ADOPT_MIN_MEAN_DELTA:.4f})",
        f"  paired SE (SD/sqrt(N)): {se:.4f}   {ADOPT_SE_MULTIPLIER:.1f} x SE: "
        f"{ADOPT_SE_MULTIPLIER * se:.4f}",
        f"  sign test: {sign.improved} improved / {sign.degraded} degraded / {sign.tied} tied"
        f"   two-sided p = {sign.p_value:.4f}",
        f"  selection stability: {loo.stability:.2f} of folds picked the refit condition "
        f"(threshold > {STABILITY_MIN:.2f})",
    ]


def _secondary(result: TuneResult, analysis: Analysis, style: _Style) -> list[str]:
    base, refit = analysis.secondary.baseline, analysis.secondary.refit
    lines = ["", style.bold(f"## Secondary metrics (all {len(result.queries)} golden queries)")]
    for k in result.k_values:
        b, c = base.recall_at_k[k], refit.recall_at_k[k]
        lines.append(f"  recall@{k:<3} default {b:.4f} -> refit {c:.4f} ({c - b:+.4f})")
    lines.append(
        f"  MRR      default {base.mrr:.4f} -> refit {refit.mrr:.4f} ({refit.mrr - base.mrr:+.4f})"
    )
    if analysis.secondary.violations:
        lines += [f"  DEGRADED: {v}" for v in analysis.secondary.violations]
    else:
        lines.append("  no secondary metric degraded")
    return lines


def _impact(result: TuneResult, analysis: Analysis, style: _Style) -> list[str]:
    impact = analysis.impact
    worst = ""
    if impact.worst_row is not None:
        worst = f" ({result.queries[impact.worst_row].id})"
    return [
        "",
        style.bold("## Per-query impact (refit vs default)"),
        f"  improved: {impact.improved}   degraded: {impact.degraded}   "
        f"worst delta: {impact.worst_delta:+.4f}{worst}",
        style.dim(
            "  A better mean can hide queries that got worse (rank fusion often trades one "
            "query for another; Benham & Culpepper); read the degraded count before adopting."
        ),
        *_slice_impact(result),
    ]


def _slice_impact(result: TuneResult) -> list[str]:
    """``  by slice: ja hurts (mean -0.083; 1 improved / 4 degraded of 10)``, with tags."""
    sliced = result.slice_impact
    if not sliced:
        return []
    lines = [f"  by slice (nDCG@{PRIMARY_K}, refit vs default):"]
    width = max(len(s.name) for s in sliced) + 2
    for s in sliced:
        lines.append(
            f"    {s.name:<{width}}{s.verdict:<8} mean {s.mean_delta:+.4f}; {s.improved} improved "
            f"/ {s.degraded} degraded of {s.queries}"
        )
    return lines


def _verdict(analysis: Analysis, style: _Style) -> list[str]:
    verdict = analysis.verdict
    lines = ["", style.bold("## Verdict")]
    if not verdict.adopt or verdict.condition is None:
        lines.append(f"  Recommendation: keep the built-in defaults ({DEFAULT_CONDITION.label}).")
        lines += [f"    - {reason}" for reason in verdict.reasons]
        lines.append(
            style.dim(
                "  This is the normal outcome: RRF is known to need little tuning, and "
                "constants tuned on a small golden set rarely carry over to new queries."
            )
        )
        return lines
    assert isinstance(verdict.condition, Condition)
    lines.append(f"  Recommendation: {verdict.condition.label}")
    lines.append(
        "  All adoption conditions passed. Paste this into groove.toml, then re-run "
        "`groove eval` WITH your reranker (and [contextual]) against the same run without it; "
        "keep the change only if it helps there."
    )
    lines.append("")
    lines += toml_snippet(verdict.condition).splitlines()  # flush left: pasted as it is
    return lines


RETRIEVER_TOP = 8  # a family grid's best conditions listed


def _retriever_report(result: TuneResult, source: RetrieverLegs) -> str:
    grid = result.grid
    assert isinstance(grid, FamilyGrid)
    lines = [
        f"groove tune — retriever {source.retriever} (its legs, re-fused client-side)",
        f"  golden: {result.golden_path}   family: {grid.family}   engine: {source.engine}",
        f"  limit: {result.limit}   window swept up to: {grid.window}   conditions: {grid.width}"
        "   primary metric: nDCG@5",
        f"  queries: {len(result.queries)} total / {len(result.effective_rows)} effective "
        "(both legs found something)",
    ]
    analysis = result.analysis
    if analysis is None:
        lines.append("  no effective query: nothing to sweep")
        return "\n".join(lines) + "\n"
    lines += _retriever_verdict(analysis, grid, source)
    means = effective_means(result, analysis)
    order = sorted(range(1, grid.width), key=lambda j: (-means[j], j))[:RETRIEVER_TOP]
    lines += ["", "## Best conditions (mean nDCG@5 over the effective queries)"]
    lines.append(f"    {'baseline ' + grid.default.label:<46} nDCG@5 {means[0]:.4f}")
    for j in order:
        lines.append(f"    {grid.conditions[j].label:<46} nDCG@5 {means[j]:.4f}")
    loo = analysis.loo
    se = f"{loo.paired_se:.4f}" if math.isfinite(loo.paired_se) else "n/a"
    lines += [
        "",
        "## Nested leave-one-query-out",
        f"  refit (all effective queries): {loo.refit.label}",
        f"  held-out mean delta vs baseline: {loo.mean_delta:+.4f}   paired SE: {se}",
        f"  selection stability: {loo.stability:.2f}   sign test: "
        f"{loo.sign_test.improved} up / {loo.sign_test.degraded} down / {loo.sign_test.tied} "
        f"tied, p = {loo.sign_test.p_value:.3f}",
        "",
        "## Gates",
    ]
    lines += [f"  {'PASS' if g.passed else 'FAIL'}  {g.detail}" for g in analysis.verdict.gates]
    return "\n".join(lines) + "\n"


def _retriever_verdict(analysis: Analysis, grid: FamilyGrid, source: RetrieverLegs) -> list[str]:
    """The verdict section, first under the header as in groove's own tune report."""
    verdict = analysis.verdict
    lines = ["", "## Verdict"]
    if not verdict.adopt or verdict.condition is None:
        lines.append(f"  Recommendation: keep the engine's fusion ({grid.default.label}).")
        lines += [f"    - {reason}" for reason in verdict.reasons]
    else:
        lines.append(f"  Recommendation: {verdict.condition.label}")
        if source.recommendation is not None:
            lines.append(f"  In {source.engine}'s terms:")
            lines += ["    " + line for line in source.recommendation.splitlines()]
        else:
            lines.append(f"  {source.engine} cannot fuse this way: {source.not_expressible}")
    lines.append(
        f"  (gates: mean > {ADOPT_MIN_MEAN_DELTA}, mean > {ADOPT_SE_MULTIPLIER:g} x paired SE, "
        f"stability > {STABILITY_MIN}, secondary metrics not degraded)"
    )
    return lines


NO_EFFECTIVE_HINT = (
    "groove splits each query into per-token phrases joined by OR over a trigram "
    "tokenizer, so a query reaches FTS when any of its tokens occurs in the text. Queries "
    "whose tokens are all shorter than three characters fall back to matching the query "
    "verbatim. Add queries with distinctive terms (proper nouns, API names, command names) "
    "to the golden set and re-run."
)
NO_EFFECTIVE_LEGS_HINT = (
    "answer each query with both legs, lexical and vector "
    "(docs/retrievers.md#per-leg-results-legs), and check that the engine's indexes hold the "
    "knowledge base the golden file points into"
)


def no_effective(result: TuneResult) -> tuple[str, str]:
    """Why the grid did not run, in one line, and the hint."""
    n = len(result.queries)
    source = result.source
    if isinstance(source, RetrieverLegs):
        return (
            f"groove tune: none of the {n} golden queries has hits on both legs "
            f"of {source.retriever} (two or more in all), so fusion cannot move any and the "
            "grid was not run.",
            NO_EFFECTIVE_LEGS_HINT,
        )
    return (
        f"groove tune: none of the {n} golden queries is sensitive to the "
        "fusion parameters (every query has fewer than 2 FTS candidates), so the grid was "
        "not run.",
        NO_EFFECTIVE_HINT,
    )


def render_no_effective(result: TuneResult) -> str:
    """The stderr diagnostic (exit 2) when no query can be moved by the fusion parameters."""
    message, hint = no_effective(result)
    lines = [message, f"  {hint}"]
    source = result.source
    if isinstance(source, RetrieverLegs):
        lines += [f"    {d.id}: lexical {d.lexical}, vector {d.vector}" for d in source.legs]
    else:
        lines += [f"    {d.id}: FTS candidates = {d.fts_candidates}" for d in source.diagnostics]
    return "\n".join(lines)
