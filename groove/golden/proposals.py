"""What ``groove golden doctor`` found: a proposal per broken expected entry, and checks.

Plain data (no index, no model), so the eval's result and the reports can carry it. The
doctor itself is groove.golden.doctor; the rewrite of the golden file groove.golden.rewrite.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groove.labels import location_label
from groove.metrics import Expected

#: How sure a proposal is. ``certain``: the old section's body (or the whole file's) is in
#: the index unchanged at exactly one place; ``likely``: the best of similar candidates;
#: ``none``: nothing to propose (the answer was deleted).
CERTAIN = "certain"
LIKELY = "likely"
NONE = "none"

#: What happened to the answer, as the evidence tells it.
MOVED = "moved"  # the file moved or was renamed; the heading (if any) is unchanged
HEADING_RENAMED = "heading-renamed"  # same file, reworded heading
MOVED_AND_RENAMED = "moved-and-heading-renamed"
SPLIT = "split"  # the file's sections now sit in several files
MERGED = "merged-section"  # the section is too short to be a chunk of its own
DELETED = "deleted"  # no candidate
EMPTY = "empty-section"  # the heading is there, the section has no text

CHECK_DUPLICATE_QUERY = "duplicate-query"
CHECK_NEAR_DUPLICATE_QUERY = "near-duplicate-query"
CHECK_OPPOSITE_JUDGEMENTS = "opposite-judgements"
CHECK_EMPTY_SECTION = "empty-section"


def _label(entry: Expected | None, ascii_only: bool = False) -> str:
    if entry is None:
        return "-"
    if ascii_only:  # stderr is ASCII (groove.cli.common.warn)
        return f"{entry.path} > {entry.heading}" if entry.heading else entry.path
    return location_label(entry.path, entry.heading)


@dataclass(frozen=True)
class Proposal:
    """One expected entry the index cannot match, and where its answer most likely went."""

    query_id: str
    line: int | None  # the golden file's line of the entry (1-based)
    entry: Expected
    target: Expected | None  # None: no candidate
    kind: str
    confidence: str
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "line": self.line,
            "entry": {"path": self.entry.path, "heading": self.entry.heading},
            "target": None
            if self.target is None
            else {"path": self.target.path, "heading": self.target.heading},
            "kind": self.kind,
            "confidence": self.confidence,
            "evidence": self.evidence,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Proposal:
        entry, target = data["entry"], data.get("target")
        return cls(
            str(data["query_id"]),
            None if data.get("line") is None else int(data["line"]),
            Expected(str(entry["path"]), entry.get("heading")),
            None if not target else Expected(str(target["path"]), target.get("heading")),
            str(data["kind"]),
            str(data["confidence"]),
            str(data.get("evidence", "")),
        )

    def fixable(self, accept_likely: bool = False) -> bool:
        """Would ``--apply`` (with ``--accept-likely``) rewrite this entry?"""
        if self.target is None:
            return False
        return self.confidence == CERTAIN or (accept_likely and self.confidence == LIKELY)

    @property
    def change(self) -> str:
        """``old -> new`` in the ``path › heading`` form of the reports."""
        return f"{_label(self.entry)} -> {_label(self.target)}"

    @property
    def change_ascii(self) -> str:
        """``change`` for stderr: ``path > heading``."""
        return f"{_label(self.entry, True)} -> {_label(self.target, True)}"

    def describe(self) -> str:
        if self.target is None:
            what = f"{self.kind}, no candidate"
            return f"{self.query_id}: {_label(self.entry)}: {what} ({self.evidence})"
        return f"{self.query_id}: {self.change} ({self.kind}, {self.confidence}: {self.evidence})"


@dataclass(frozen=True)
class GoldenCheck:
    """A problem of the golden set itself: duplicate queries, opposite judgements, an
    entry pointing at an empty section."""

    check: str
    query_ids: tuple[str, ...]
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "query_ids": list(self.query_ids), "detail": self.detail}

    def describe(self) -> str:
        return f"{', '.join(self.query_ids)}: {self.detail} ({self.check})"


@dataclass(frozen=True)
class DoctorReport:
    """Everything the doctor found in one golden file, and what ``--apply`` changed."""

    golden_path: Path
    entries: int  # expected entries checked
    proposals: tuple[Proposal, ...]
    checks: tuple[GoldenCheck, ...]
    memory: str | None  # the newest time the history saw the expected files (None: never)
    applied: tuple[Proposal, ...] = ()
    written: bool = False

    @property
    def certain(self) -> tuple[Proposal, ...]:
        return tuple(p for p in self.proposals if p.confidence == CERTAIN)

    @property
    def likely(self) -> tuple[Proposal, ...]:
        return tuple(p for p in self.proposals if p.confidence == LIKELY)

    def to_dict(self) -> dict[str, Any]:
        return {
            "golden": str(self.golden_path),
            "entries": self.entries,
            "memory": self.memory,
            "proposals": [p.to_dict() for p in self.proposals],
            "checks": [c.to_dict() for c in self.checks],
            "applied": [p.to_dict() for p in self.applied],
            "written": self.written,
        }
