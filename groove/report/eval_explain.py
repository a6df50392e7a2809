"""The ``--explain`` section of the text and Markdown eval reports: why each miss missed.

Why it missed (k = 10): 3 of 4 expected answers in 2 queries
  misses by cause: not-indexed 1, heading-mismatch 1, fusion-buried 1

  ✗ rollback-typo  When should I revert a bad deploy?
    ops/rolback.md  [not-indexed]
      no such file in the KB; did you mean ops/rollback.md?
"""

from __future__ import annotations

from groove.evaluation.result import EvalRun
from groove.explain.attribution import Attribution, summary_line
from groove.report.cap import ALL_ROWS, TOP_EXPLAINED, first, rest_line
from groove.runs.record import QueryResult


def _explained(run: EvalRun) -> list[tuple[QueryResult, tuple[Attribution, ...]]]:
    attribution = run.attribution or {}
    out = []
    seen: set[str] = set()
    for q in run.per_query:
        found = attribution.get(q.id)
        if found and q.id not in seen:
            seen.add(q.id)
            out.append((q, found))
    return out


def _headline(run: EvalRun, explained: list[tuple[QueryResult, tuple[Attribution, ...]]]) -> str:
    k = max(run.fingerprint.k_values, default=10)
    if not explained:
        return f"Why it missed (k = {k}): nothing missed, every expected answer is within k"
    answers = [a for _, group in explained for a in group]
    missed = sum(a.missed for a in answers)
    return (
        f"Why it missed (k = {k}): {missed} of {len(answers)} expected answers in "
        f"{len(explained)} queries not fully found"
    )


def text_lines(run: EvalRun, *, full: bool = False, where: str = ALL_ROWS) -> list[str]:
    if run.attribution is None:
        return []
    explained = _explained(run)
    lines = [_headline(run, explained), f"  {summary_line(run.attribution)}"]
    shown, rest = first(explained, TOP_EXPLAINED, full)
    for q, group in shown:
        mark = "✗" if all(a.missed for a in group) else "◐"
        lines += ["", f"  {mark} {q.id}  {q.query}"]
        for a in group:
            lines.append(f"    {a.label}  [{a.cause}]")
            if a.cause == "heading-mismatch":
                lines.append(f"      the file's best chunk: {a.ranks_text()}")
            elif a.cause not in ("not-indexed", "excluded", "found"):
                lines.append(f"      {a.ranks_text()}")
            lines.append(f"      {a.explanation()}")
            grid = a.grid_text()
            if grid is not None and a.missed:
                lines.append(f"      {grid}")
    if rest:
        lines += ["", f"  {rest_line(rest, 'explained queries', where)}"]
    return lines


def _rank(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_lines(run: EvalRun, *, full: bool = False, where: str = ALL_ROWS) -> list[str]:
    if run.attribution is None:
        return []
    explained = _explained(run)
    lines = ["", f"### {_headline(run, explained)}", "", summary_line(run.attribution)]
    shown, rest = first(explained, TOP_EXPLAINED, full)
    for q, group in shown:
        lines += ["", f"#### `{_cell(q.id)}`: {_cell(q.query)}", ""]
        lines += [
            "| expected | cause | indexed | FTS rank | vector rank | fused rank | final rank |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        for a in group:
            fts = "—" if a.fts_rank is None else f"{a.fts_rank:,} of {a.fts_matches:,}"
            vec = "—" if a.vector_rank is None else f"{a.vector_rank:,} of {a.vector_candidates:,}"
            lines.append(
                f"| `{_cell(a.label)}` | {a.cause} | {'yes' if a.indexed else 'no'} | {fts} | "
                f"{vec} | {_rank(a.fused_rank)} | {_rank(a.final_rank)} |"
            )
        lines.append("")
        for a in group:
            if not a.missed:
                continue
            detail = a.explanation()
            grid = a.grid_text()
            if grid is not None:
                detail += f"; {grid}"
            lines.append(f"- `{_cell(a.label)}`: {_cell(detail)}")
    if rest:
        lines += ["", rest_line(rest, "explained queries", where)]
    return lines
