"""The cards a search and an index build introduce themselves with (groove/cards.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groove.cards import INFO, OK, WARN, Card, clip, rows_with_more

if TYPE_CHECKING:
    from groove.engine.index import IndexSummary
    from groove.engine.search import SearchResult


def search_card(result: SearchResult) -> Card:
    hits = result.hits
    if hits:
        top = hits[0]
        where = top.path + (f" › {top.heading}" if top.heading else "")
        verdict, level = f"{len(hits)} hit(s); best: {where}", OK
    else:
        verdict, level = "no hit", WARN
    rows = [
        (f"#{h.rank}", f"{h.score:.4f}  {h.path}" + (f" › {h.heading}" if h.heading else ""))
        for h in hits
    ]
    shown, more = rows_with_more(rows, "hits", limit=8)
    shown += tuple(("warning", w) for w in result.warnings[:2])
    return Card(
        "SearchResult",
        f"search {clip(result.query, 80)!r}",
        verdict,
        level,
        shown,
        (("result.hits", "every hit with its text"), ("hit.to_dict()", "one hit as JSON")),
        more,
    )


def index_card(summary: IndexSummary) -> Card:
    level = WARN if summary.skipped or summary.warnings else OK
    rows = [
        ("files", f"{summary.files} ({summary.indexed} indexed, {summary.unchanged} unchanged)"),
        ("chunks", f"{summary.chunks_total} ({summary.chunks_embedded} embedded)"),
        ("model", summary.model),
        ("index", str(summary.db_path)),
        ("time", f"{summary.seconds:.1f} s"),
    ]
    if summary.skipped:
        rows.append(("skipped", f"{len(summary.skipped)} file(s): see summary.skipped"))
    rows += [("warning", w) for w in summary.warnings[:3]]
    return Card(
        "IndexSummary",
        f"groove index of {summary.kb_path}",
        f"indexed {summary.indexed} file(s), {summary.unchanged} unchanged, "
        f"{summary.removed} removed, {len(summary.skipped)} skipped",
        level if rows else INFO,
        tuple(rows),
        (("summary.skipped", "files left out and why"), ("summary.warnings", "what to check")),
    )
