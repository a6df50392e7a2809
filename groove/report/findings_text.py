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

from collections.abc import Callable, Sequence
from typing import TypeVar

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

F = TypeVar("F")

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


def _block(
    findings: Sequence[F],
    headline: str,
    entry: Callable[[F], list[str]],
    noun: str,
    advice: tuple[str, ...],
    *,
    full: bool,
    where: str,
) -> str:
    """One check's block: the headline with the count, the first findings' lines, how many
    more there are and where, then what to do."""
    shown, rest = first(findings, TOP_STDERR, full)
    lines = [f"groove eval: {len(findings)} {headline}"]
    for finding in shown:
        lines += entry(finding)
    lines += _more(rest, noun, where)
    return "\n".join(lines + list(advice))


def quoted_text(
    findings: Sequence[Finding], *, full: bool = False, where: str = ALL_ENTRIES
) -> str:
    def entry(finding: Finding) -> list[str]:
        lines = [f"  {finding.path}"]
        named, more = first(finding.quoted, TOP_STDERR, full)
        for q in named:
            where_in = "not in top_k" if q.rank_in_top_k is None else f"rank {q.rank_in_top_k}"
            lines.append(f"    {q.query_id} ({where_in})")
        return lines + _more(more, "queries", where, indent="    ")

    return _block(
        findings,
        f"document(s) quote 2 or more golden queries verbatim ({CHECK_QUOTED}).",
        entry,
        "documents",
        (
            "  Either these notes leaked into the corpus, or the queries came from them",
            "  and the documents belong in `expected`. groove eval changes neither.",
        ),
        full=full,
        where=where,
    )


def path_text(
    findings: Sequence[PathFinding], *, full: bool = False, where: str = ALL_ENTRIES
) -> str:
    def entry(finding: PathFinding) -> list[str]:
        return [
            f"  {finding.path}: {finding.detail}",
            f"    expected by: {_listed(finding.queries, full)}",
            *(f"    did you mean {near.text}?" for near in finding.near),
        ]

    return _block(
        findings,
        f"expected path(s) in the golden file are not in the index ({CHECK_NOT_INDEXED}).",
        entry,
        "paths",
        ("  No query can find these answers; fix the golden file or the index.",),
        full=full,
        where=where,
    )


def duplicate_id_text(
    findings: Sequence[DuplicateIdFinding], *, full: bool = False, where: str = ALL_ENTRIES
) -> str:
    return _block(
        findings,
        f"query id(s) in the golden file name more than one query ({CHECK_DUPLICATE_ID}).",
        lambda f: [f"  {f.worded(_listed(f.line_labels, full))}"],
        "ids",
        (
            "  Runs are paired by id (the per-query diff, groove compare): only the first",
            "  query of each id is compared. Give every query its own `id`.",
        ),
        full=full,
        where=where,
    )


def hit_path_text(findings: Sequence[HitPathFinding]) -> str:
    """At most one finding per kind of path compared, each with its few examples."""
    lines = []
    for f in findings:
        lines.append(f"groove eval: {f.summary} ({f.check}).")
        lines.append(f"  e.g. {', '.join(f.examples)}")
        lines.append(f"  Likely fix: {f.hint}.")
        lines.append("  Each such hit counts as a miss: the scores say nothing of the retriever.")
    return "\n".join(lines)
