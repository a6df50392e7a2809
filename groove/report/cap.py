"""How long the eval reports may grow: the first rows of each long list, and a line that
counts the rest and says where they all are.

A golden set of a thousand queries made ``--explain`` print 5,513 lines and summary.md
(meant for a CI job summary) weigh 306 KB. The text and Markdown reports now list the
:data:`TOP_FLAGGED` worst regressions and misses and the first :data:`TOP_EXPLAINED`
explained queries; ``full`` lists everything, as the JSON report always does. Each
face says where its reader finds every row (``where``): the CLI names its own flags
(groove/cli/words.py), the notebook its files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

TOP_FLAGGED = 20  # regressions and misses listed
TOP_EXPLAINED = 10  # queries whose misses are explained one by one
TOP_FINDINGS = 10  # documents or paths a findings section lists
TOP_QUOTED = 5  # queries named per document that quotes golden queries
TOP_STDERR = 10  # entries (documents, paths, query ids, lines) a finding lists on stderr

# where a report's reader finds every row: by default (a face that names nothing of its
# own) and in the notebook's summary.md
ALL_ROWS = "the full report lists them all, the JSON report has every row"
NOTEBOOK_WHERE = "every row is in result.json and the HTML report beside this summary"


def first(items: Sequence[T], limit: int, full: bool) -> tuple[Sequence[T], int]:
    """The items to list and how many are left out."""
    if full or len(items) <= limit:
        return items, 0
    return items[:limit], len(items) - limit


def rest_line(rest: int, noun: str, where: str) -> str:
    """``… and 980 more queries: <where>``."""
    return f"… and {rest:,} more {noun}: {where}"
