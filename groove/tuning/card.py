"""The card a tune result introduces itself with (groove/cards.py lays it out)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove.cards import INFO, OK, WARN, Card
from groove.tuning.gates import ADOPT_MIN_MEAN_DELTA, ADOPT_SE_MULTIPLIER, STABILITY_MIN, se_bound
from groove.tuning.grid import DEFAULT_CONDITION

if TYPE_CHECKING:
    from groove.tuning.external_result import ExternalTune
    from groove.tuning.result import TuneResult


def tune_card(result: TuneResult) -> Card:
    n, effective = len(result.queries), len(result.effective_rows)
    title = f"groove tune of {n} queries on {result.kb_path}"
    details = (
        ("result.conditions_frame()", "every grid condition"),
        ("result.folds_frame()", "the leave-one-query-out folds"),
        ("result.table_frame()", "the metric table, long form"),
    )
    analysis = result.analysis
    if analysis is None:
        verdict = "grid not run: no query has two FTS candidates, so fusion cannot move any"
        step = "add golden queries with distinctive terms (names, API or command names)"
        idle: tuple[tuple[str, str], ...] = (("queries", f"{n}, 0 effective"),)
        return Card("TuneResult", title, verdict, WARN, idle, next=step)
    verdict_ = analysis.verdict
    if verdict_.adopt and verdict_.condition is not None:
        verdict = f"adopt {verdict_.condition.label}: it passed all five gates"
        level = OK
        step = (
            "paste the [search.fusion] snippet of the verdict into groove.toml, then compare "
            "groove eval with your reranker before and after"
        )
    else:
        reason = verdict_.reasons[0] if verdict_.reasons else "a gate failed"
        verdict = f"keep the built-in defaults ({DEFAULT_CONDITION.label}): {reason}"
        level = INFO
        step = "change nothing in groove.toml; RRF rarely needs tuning (the gates say why here)"
    loo, impact = analysis.loo, analysis.impact
    rows = (
        ("queries", f"{n} total, {effective} effective (two or more FTS candidates)"),
        ("refit condition", loo.refit.label),
        (
            "held-out mean ΔnDCG@5",
            f"{loo.mean_delta:+.4f} (adopting needs > {ADOPT_MIN_MEAN_DELTA:.2f} and > "
            f"{ADOPT_SE_MULTIPLIER:g} × SE = {se_bound(loo):.4f})",
        ),
        ("fold stability", f"{loo.stability:.2f} chose the refit (needs > {STABILITY_MIN:.2f})"),
        ("per query", f"{impact.improved} improved, {impact.degraded} degraded"),
        ("gates failed", str(len(verdict_.reasons))),
    )
    return Card("TuneResult", title, verdict, level, rows, details, next=step)


def external_card(result: ExternalTune) -> Card:
    """The card of ``groove tune --retriever``: the same rows over the engine's legs."""
    n, effective = len(result.queries), len(result.effective_rows)
    grid = result.grid
    title = f"groove tune of {result.retriever}'s legs ({grid.family}, {n} queries)"
    details = (
        ("result.conditions_frame()", f"every condition of the {grid.family} grid"),
        ("result.folds_frame()", "the leave-one-query-out folds"),
        ("result.table_frame()", "the metric table, long form"),
    )
    loo, impact, decision = result.loo, result.impact, result.verdict
    if loo is None or impact is None or decision is None:
        verdict = "grid not run: no query has hits on both legs, so fusion cannot move any"
        step = "check that the retriever returns both legs (docs/retrievers.md)"
        idle: tuple[tuple[str, str], ...] = (("queries", f"{n}, 0 effective"),)
        return Card("ExternalTune", title, verdict, WARN, idle, next=step)
    baseline = grid.conditions[0].label
    if decision.adopt and decision.condition is not None:
        verdict = f"adopt {decision.condition.label}: it passed all five gates"
        level = OK
        step = (
            f"apply the recommendation in {result.engine}'s terms, then compare the "
            "retriever's eval before and after"
            if result.recommendation is not None
            else f"{result.engine} cannot fuse this way: {result.not_expressible}"
        )
    else:
        reason = decision.reasons[0] if decision.reasons else "a gate failed"
        verdict = f"keep the engine's fusion ({baseline}): {reason}"
        level = INFO
        step = "change nothing in the engine's fusion (the gates say why here)"
    rows = (
        ("queries", f"{n} total, {effective} effective (hits on both legs)"),
        ("engine / family", f"{result.engine} / {grid.family}, window up to {grid.window}"),
        ("refit condition", grid.conditions[loo.refit].label),
        (
            "held-out mean ΔnDCG@5",
            f"{loo.mean_delta:+.4f} (adopting needs > {ADOPT_MIN_MEAN_DELTA:.2f} and > "
            f"{ADOPT_SE_MULTIPLIER:g} × SE = {se_bound(loo):.4f})",
        ),
        ("fold stability", f"{loo.stability:.2f} chose the refit (needs > {STABILITY_MIN:.2f})"),
        ("per query", f"{impact.improved} improved, {impact.degraded} degraded"),
        ("gates failed", str(len(decision.reasons))),
    )
    return Card("ExternalTune", title, verdict, level, rows, details, next=step)
