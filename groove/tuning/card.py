"""The card a tune result introduces itself with (groove/cards.py lays it out; groove.views
finds it by the result's type): the recommendation and the evidence for it, for groove's
own engine and a retriever's legs alike (only the words for the source differ)."""

from __future__ import annotations

from groove.cards import INFO, OK, WARN, Card
from groove.tuning.families import FamilyGrid
from groove.tuning.gates import ADOPT_MIN_MEAN_DELTA, ADOPT_SE_MULTIPLIER, STABILITY_MIN, se_bound
from groove.tuning.result import RetrieverLegs, TuneResult


def tune_card(result: TuneResult) -> Card:
    n, effective = len(result.queries), len(result.effective_rows)
    grid, source = result.grid, result.source
    engine = source if isinstance(source, RetrieverLegs) else None
    conditions = "every grid condition"
    if engine is not None:
        title = f"groove tune of {engine.retriever}'s legs ({grid.family}, {n} queries)"
        conditions = f"every condition of the {grid.family} grid"
    else:
        title = f"groove tune of {n} queries on {result.kb_path}"
    details = (
        ("result.conditions_frame()", conditions),
        ("result.folds_frame()", "the leave-one-query-out folds"),
        ("result.table_frame()", "the metric table, long form"),
    )
    analysis = result.analysis
    if analysis is None:
        if engine is not None:
            verdict = "grid not run: no query has hits on both legs, so fusion cannot move any"
            step = "check that the retriever returns both legs (docs/retrievers.md)"
        else:
            verdict = "grid not run: no query has two FTS candidates, so fusion cannot move any"
            step = "add golden queries with distinctive terms (names, API or command names)"
        idle: tuple[tuple[str, str], ...] = (("queries", f"{n}, 0 effective"),)
        return Card("TuneResult", title, verdict, WARN, idle, next=step)
    decision, loo, impact = analysis.verdict, analysis.loo, analysis.impact
    if decision.adopt and decision.condition is not None:
        verdict = f"adopt {decision.condition.label}: it passed all five gates"
        level = OK
        if engine is None:
            step = (
                "paste the [search.fusion] snippet of the verdict into groove.toml, then "
                "compare groove eval with your reranker before and after"
            )
        elif engine.recommendation is not None:
            step = (
                f"apply the recommendation in {engine.engine}'s terms, then compare the "
                "retriever's eval before and after"
            )
        else:
            step = f"{engine.engine} cannot fuse this way: {engine.not_expressible}"
    else:
        reason = decision.reasons[0] if decision.reasons else "a gate failed"
        kept = "the engine's fusion" if engine is not None else "the built-in defaults"
        verdict = f"keep {kept} ({grid.default.label}): {reason}"
        level = INFO
        step = (
            "change nothing in the engine's fusion (the gates say why here)"
            if engine is not None
            else "change nothing in groove.toml; RRF rarely needs tuning (the gates say why here)"
        )
    rule = "hits on both legs" if engine is not None else "two or more FTS candidates"
    rows: list[tuple[str, str]] = [("queries", f"{n} total, {effective} effective ({rule})")]
    if engine is not None and isinstance(grid, FamilyGrid):
        rows.append(
            ("engine / family", f"{engine.engine} / {grid.family}, window up to {grid.window}")
        )
    rows += [
        ("refit condition", loo.refit.label),
        (
            "held-out mean ΔnDCG@5",
            f"{loo.mean_delta:+.4f} (adopting needs > {ADOPT_MIN_MEAN_DELTA:.2f} and > "
            f"{ADOPT_SE_MULTIPLIER:g} × SE = {se_bound(loo):.4f})",
        ),
        ("fold stability", f"{loo.stability:.2f} chose the refit (needs > {STABILITY_MIN:.2f})"),
        ("per query", f"{impact.improved} improved, {impact.degraded} degraded"),
        ("gates failed", str(len(decision.reasons))),
    ]
    return Card("TuneResult", title, verdict, level, tuple(rows), details, next=step)
