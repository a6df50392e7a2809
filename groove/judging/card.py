"""The card a pool of unjudged hits introduces itself with (groove/cards.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove.cards import OK, WARN, Card, clip, rows_with_more

if TYPE_CHECKING:
    from groove.judging.pool import Pool


def pool_card(pool: Pool) -> Card:
    queries = len({c.query_id for c in pool.candidates})
    if pool.candidates:
        noun = "query" if queries == 1 else "queries"
        verdict = f"{len(pool.candidates)} unjudged hit(s) over {queries} {noun} to judge"
        level = WARN
        next_step = (
            "judge them: groove.judge(kb_path, golden), or export with candidates_frame().to_csv()"
        )
    else:
        verdict, level, next_step = "nothing left to judge: every pooled hit is covered", OK, ""
    rows = [
        (c.query_id, f"{c.path}" + (f" › {c.heading}" if c.heading else "") + f"  ({c.sources})")
        for c in pool.candidates
    ]
    shown, more = rows_with_more(rows, "candidates", limit=6)
    head = (
        ("sources", clip(", ".join(pool.sources) or "none")),
        ("depth", str(pool.depth)),
        ("covered", f"{pool.covered} hit(s) already expected or judged ({pool.judged} judged)"),
    )
    return Card(
        "Pool",
        f"unjudged hits of {pool.golden_path.name}",
        verdict,
        level,
        head + shown,
        (
            ("pool.candidates_frame()", "every candidate as a DataFrame"),
            ("pool.candidates", "the candidates with their text"),
        ),
        more,
        next_step,
    )
