"""Golden paths that are not in the index: why not, and what the author probably meant.

``groove eval`` compares paths exactly (metrics.py), so an expected path the index does not
hold can never be found, and the miss looks like a retrieval failure. This module tells the
cases apart and drives both the ``golden-path-not-indexed`` finding (every eval) and the
``not-indexed`` cause of ``--explain``:

* ``path-spelling``: the index holds the file under the same path up to case or a leading
  ``./``, and golden paths are compared exactly;
* ``missing``: no such file in the KB;
* ``ignored``: the file exists and ``.grooveignore`` ignores it (or a folder above it);
* ``excluded-folder``: it sits under a folder the walk never enters (``.git``,
  ``node_modules``, ``exclude_dirs``);
* ``not-markdown``: the file exists but is not a ``.md`` file;
* ``skipped``: the walk found it and a guard skipped it (symlink, size, hard link...);
* ``not-indexed-yet``: the walk accepts it, the index lacks it: run ``groove index``.

Near matches come from the indexed paths: the same path up to case, the path without a
leading ``./`` (or ``/``, or with ``\\`` as separators), a file with the same name in another
folder (moved), and failing those the closest spellings (a typo).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

from groove.engine.kb import (
    ALWAYS_EXCLUDED_DIRS,
    DEFAULT_EXCLUDE_DIRS,
    KbScan,
    load_ignore,
    scan_kb,
)
from groove.errors import GrooveError
from groove.golden.findings import CHECK_NOT_INDEXED, NearMatch, PathFinding
from groove.golden.queries import GoldenQuery

MAX_NEAR = 3
TYPO_CUTOFF = 0.8

REASONS = {
    "path-spelling": "golden paths are compared exactly",
    "missing": "no such file in the KB",
    "ignored": "the file exists but .grooveignore ignores it",
    "excluded-folder": "the file sits in a folder the index never enters",
    "not-markdown": "the file exists but is not a .md file",
    "skipped": "the index skipped the file",
    "not-indexed-yet": "the file exists but is not in the index yet (run groove index)",
}


@dataclass(frozen=True)
class PathDiagnosis:
    """Why ``path`` is not indexed (a key of REASONS), the detail, and near matches."""

    path: str
    reason: str
    detail: str
    near: tuple[NearMatch, ...] = ()


def near_matches(path: str, indexed: Iterable[str]) -> tuple[NearMatch, ...]:
    """Indexed paths the author may have meant, best kind first, at most MAX_NEAR."""
    candidates = sorted(indexed)
    out: list[NearMatch] = []

    def add(found: Iterable[str], kind: str) -> None:
        for p in found:
            if p != path and all(n.path != p for n in out):
                out.append(NearMatch(p, kind))

    cleaned = path.replace("\\", "/")
    while cleaned.startswith(("./", "/")):
        cleaned = cleaned[1:] if cleaned.startswith("/") else cleaned[2:]
    add([p for p in candidates if p == cleaned], "prefix")
    lowered = cleaned.lower()
    add([p for p in candidates if p.lower() == lowered], "case")
    name = PurePosixPath(cleaned).name.lower()
    add([p for p in candidates if PurePosixPath(p).name.lower() == name], "moved")
    if not out:
        # numbered notes (docs/572.md, docs/72.md) are different documents, not a typo
        shape = _numbered(cleaned)
        spelled = [p for p in candidates if _numbered(p) != shape]
        add(
            difflib.get_close_matches(cleaned, spelled, n=MAX_NEAR, cutoff=TYPO_CUTOFF),
            "similar",
        )
    return tuple(out[:MAX_NEAR])


def _numbered(path: str) -> str:
    """``path`` with each run of digits as ``#``: equal for two notes that differ only in
    their numbers."""
    return re.sub(r"\d+", "#", path.lower())


@dataclass
class PathDoctor:
    """Diagnoses unindexed paths against one KB; walks the KB only when first needed."""

    kb_path: Path | None  # None: no KB folder to look in (only the index is known)
    indexed: frozenset[str]
    exclude_dirs: Sequence[str] | None = None
    _cache: dict[str, PathDiagnosis] = field(default_factory=dict)

    @cached_property
    def _scan(self) -> KbScan | None:
        if self.kb_path is None:
            return None
        try:
            return scan_kb(self.kb_path, self.exclude_dirs)
        except GrooveError:
            return None

    def diagnose(self, path: str) -> PathDiagnosis:
        if path not in self._cache:
            near = near_matches(path, self.indexed)
            spelled = [n for n in near if n.kind in ("prefix", "case")]
            if spelled:
                reason = "path-spelling"
                detail = f"the index holds this file as {spelled[0].path} ({REASONS[reason]})"
            else:
                reason, detail = self._reason(path)
            self._cache[path] = PathDiagnosis(path, reason, detail, near)
        return self._cache[path]

    def _reason(self, path: str) -> tuple[str, str]:
        scan = self._scan
        if scan is not None:
            for skipped in scan.skipped:
                if skipped.rel_path == path:
                    return "skipped", skipped.reason
            if any(f.rel_path == path for f in scan.files):
                return "not-indexed-yet", REASONS["not-indexed-yet"]
        parts = PurePosixPath(path).parts
        inside = bool(parts) and not path.startswith("/") and ".." not in parts
        if self.kb_path is None or not inside or not os.path.lexists(self.kb_path / path):
            return "missing", REASONS["missing"]
        names = DEFAULT_EXCLUDE_DIRS if self.exclude_dirs is None else tuple(self.exclude_dirs)
        folded = {n.casefold() for n in names} | set(ALWAYS_EXCLUDED_DIRS)
        for folder in parts[:-1]:
            if folder.casefold() in folded:
                return "excluded-folder", f"{REASONS['excluded-folder']} ({folder}/)"
        if self._ignored(parts):
            return "ignored", REASONS["ignored"]
        if not path.lower().endswith(".md"):
            return "not-markdown", REASONS["not-markdown"]
        return "missing", REASONS["missing"]

    def _ignored(self, parts: tuple[str, ...]) -> bool:
        if self.kb_path is None:
            return False
        spec, _ = load_ignore(self.kb_path)
        if spec is None:
            return False
        prefixes = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts) - 1)]
        targets = [*prefixes, "/".join(parts)]
        return any(spec.match_file(t.lower()) for t in targets)


def path_findings(queries: Sequence[GoldenQuery], doctor: PathDoctor) -> tuple[PathFinding, ...]:
    """One finding per distinct expected path missing from the index, in golden order."""
    by_path: dict[str, list[str]] = {}
    for q in queries:
        for e in q.expected:
            if e.path not in doctor.indexed:
                ids = by_path.setdefault(e.path, [])
                if q.id not in ids:
                    ids.append(q.id)
    out = []
    for path, ids in by_path.items():
        d = doctor.diagnose(path)
        out.append(PathFinding(CHECK_NOT_INDEXED, path, tuple(ids), d.reason, d.detail, d.near))
    return tuple(out)
