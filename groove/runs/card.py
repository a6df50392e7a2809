"""The card a stored run introduces itself with (groove/cards.py lays it out)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove.cards import BAD, INFO, OK, WARN, Card, clip

if TYPE_CHECKING:
    from groove.runs.record import RunRecord


def run_record_card(record: RunRecord) -> Card:
    """A stored run (what ``set_baseline`` / ``accept_baseline`` return): its id, what the
    gate said of it, its configuration and its metrics."""
    against = f" against {record.baseline_id}" if record.baseline_id else ""
    if record.outcome == "regressed":
        verdict = f"fell{against}" + (", accepted as a baseline" if record.accepted else "")
        level = WARN if record.accepted else BAD
    elif record.outcome == "no-baseline":
        verdict, level = "no baseline to compare with when it ran", INFO
    else:
        verdict = f"passed the gate{against}" if record.outcome else "stored before run ids"
        level = OK if record.outcome else INFO
        if record.accepted:
            verdict += ", accepted as a baseline"
    fp = record.fingerprint
    system = f"{fp.retriever['kind']} {fp.model}" if fp.retriever else fp.model
    rows = [("system", clip(str(system))), ("queries", str(record.aggregate.query_count))]
    agg = record.aggregate
    rows += [(f"recall@{k}", f"{v:.3f}") for k, v in agg.recall_at_k.items()]
    rows.append(("MRR", f"{agg.mrr:.3f}"))
    rows += [(f"nDCG@{k}", f"{v:.3f}") for k, v in agg.ndcg_at_k.items()]
    return Card(
        "RunRecord",
        f"eval run {record.id} ({record.timestamp})",
        verdict,
        level,
        tuple(rows),
        (("run.per_query", "every query's hits and metrics"), ("run.to_dict()", "the JSON")),
    )
