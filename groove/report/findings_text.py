"""The golden file's findings as ``groove eval`` writes them to stderr: one block per check.

stderr is read by a person (or scrolled past in a CI log), so each block lists at most
:data:`~groove.report.cap.TOP_STDERR` entries of each list (documents, paths, query ids,
lines) and counts the rest with where they all are; ``full`` lists everything. After a
reorganisation that removed 150 expected documents the ``golden-path-not-indexed`` block
was 202 lines and nothing else on stderr could be found; it is now about 50. The findings
themselves (and the JSON report, which keeps every one) are unchanged. Plain ASCII: a
Japanese Windows console shows it intact.
"""

from __future__ import annotations

from collections.abc import Sequence

from groove.golden.findings import (
    CHECK_DUPLICATE_ID,
    CHECK_NOT_INDEXED,
    CHECK_QUOTED,
    AnyFinding,
    DuplicateIdFinding,
    Finding,
    PathFinding,
)
from groove.golden.hit_paths import HitPathFinding
from groove.report.cap import TOP_STDERR, first

#: where the left-out entries are, when the face names nothing of its own
ALL_ENTRIES = "the full report lists them all, the JSON report has every one"


def warning_texts(
    findings: Sequence[AnyFinding], *, full: bool = False, where: str = ALL_ENTRIES
) -> list[str]:
    """One stderr block per kind of finding present (quoted documents first)."""
    quoted = [f for f in findings if isinstance(f, Finding)]
    unindexed = [f for f in findings if isinstance(f, PathFinding)]
    duplicates = [f for f in findings if isinstance(f, DuplicateIdFinding)]
    hit_paths = [f for f in findings if isinstance(f, HitPathFinding)]
    out = [quoted_text(quoted, full=full, where=where)] if quoted else []
    out += [path_text(unindexed, full=full, where=where)] if unindexed else []
    out += [duplicate_id_text(duplicates, full=full, where=where)] if duplicates else []
    return out + ([hit_path_text(hit_paths)] if hit_paths else [])


def _more(rest: int, noun: str, where: str, indent: str = "  ") -> list[str]:
    """``  ... and 140 more paths (<where>)``, or nothing."""
    return [f"{indent}... and {rest:,} more {noun} ({where})"] if rest else []


def _listed(items: Sequence[str], full: bool) -> str:
    """``a, b, c ... and 4 more``: a list on one line, capped like the blocks."""
    shown, rest = first(items, TOP_STDERR, full)
    return ", ".join(shown) + (f" ... and {rest:,} more" if rest else "")


def quoted_text(
    findings: Sequence[Finding], *, full: bool = False, where: str = ALL_ENTRIES
) -> str:
    lines = [
        f"groove eval: {len(findings)} document(s) quote 2 or more golden queries verbatim "
        f"({CHECK_QUOTED})."
    ]
    shown, rest = first(findings, TOP_STDERR, full)
    for finding in shown:
        lines.append(f"  {finding.path}")
        named, more = first(finding.quoted, TOP_STDERR, full)
        for q in named:
            where_in = "not in top_k" if q.rank_in_top_k is None else f"rank {q.rank_in_top_k}"
            lines.append(f"    {q.query_id} ({where_in})")
        lines += _more(more, "queries", where, indent="    ")
    lines += _more(rest, "documents", where)
    lines.append("  Either these notes leaked into the corpus, or the queries came from them")
    lines.append("  and the documents belong in `expected`. groove eval changes neither.")
    return "\n".join(lines)


def path_text(
    findings: Sequence[PathFinding], *, full: bool = False, where: str = ALL_ENTRIES
) -> str:
    lines = [
        f"groove eval: {len(findings)} expected path(s) in the golden file are not in the "
        f"index ({CHECK_NOT_INDEXED})."
    ]
    shown, rest = first(findings, TOP_STDERR, full)
    for finding in shown:
        lines.append(f"  {finding.path}: {finding.detail}")
        lines.append(f"    expected by: {_listed(finding.queries, full)}")
        for near in finding.near:
            lines.append(f"    did you mean {near.text}?")
    lines += _more(rest, "paths", where)
    lines.append("  No query can find these answers; fix the golden file or the index.")
    return "\n".join(lines)


def duplicate_id_text(
    findings: Sequence[DuplicateIdFinding], *, full: bool = False, where: str = ALL_ENTRIES
) -> str:
    lines = [
        f"groove eval: {len(findings)} query id(s) in the golden file name more than one "
        f"query ({CHECK_DUPLICATE_ID})."
    ]
    shown, rest = first(findings, TOP_STDERR, full)
    lines += [f"  {f.worded(_listed(f.line_labels, full))}" for f in shown]
    lines += _more(rest, "ids", where)
    lines.append("  Runs are paired by id (the per-query diff, groove compare): only the first")
    lines.append("  query of each id is compared. Give every query its own `id`.")
    return "\n".join(lines)


def hit_path_text(findings: Sequence[HitPathFinding]) -> str:
    """At most one finding per kind of path compared, each with its few examples."""
    lines = []
    for f in findings:
        lines.append(f"groove eval: {f.summary} ({f.check}).")
        lines.append(f"  e.g. {', '.join(f.examples)}")
        lines.append(f"  Likely fix: {f.hint}.")
        lines.append("  Each such hit counts as a miss: the scores say nothing of the retriever.")
    return "\n".join(lines)
