"""The ``retriever-paths-implausible`` check: an external retriever's hits that cannot match.

groove compares a hit's path with the golden file's paths verbatim, so a retriever that
answers ``/srv/kb/ops/rollback.md`` or ``./ops/rollback.md`` for ``ops/rollback.md`` scores
0 on every metric, and the report alone cannot tell that from a retriever that finds
nothing. This check looks at every hit of the run:

* with an index (``--kb-path``), a hit is implausible when its path is not an indexed path;
* without one, when its path does not look like the golden file's paths: absolute, starting
  with ``./`` or ``../``, with ``\\`` separators, or a golden path only once a leading
  folder (another root) is stripped or the case is changed. A path that merely is not in
  the golden file is plausible: most hits of any retriever are not answers.

When more than half of the hits are implausible, one finding names their count, three
examples, what they have in common (``pattern``) and the likely fix.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groove.errors import Face
from groove.metrics import RankedHit
from groove.settings.spelling import spell

CHECK_HIT_PATHS = "retriever-paths-implausible"
EXAMPLES = 3
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


@dataclass(frozen=True)
class HitPathFinding:
    """Most hits of the retriever cannot match a golden path (rules in the module doc)."""

    check: str
    against: str  # "index": not indexed paths; "golden": unlike the golden file's paths
    hits: int  # hits in the run
    implausible: int  # of which implausible
    pattern: str  # absolute, dot-slash, backslash, prefix, case or unknown
    examples: tuple[str, ...]
    hint: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "against": self.against,
            "hits": self.hits,
            "implausible": self.implausible,
            "pattern": self.pattern,
            "examples": list(self.examples),
            "hint": self.hint,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HitPathFinding:
        return cls(
            str(data["check"]),
            str(data.get("against", "index")),
            int(data.get("hits", 0)),
            int(data.get("implausible", 0)),
            str(data.get("pattern", "unknown")),
            tuple(str(e) for e in data.get("examples", [])),
            str(data.get("hint", "")),
        )

    @property
    def summary(self) -> str:
        what = (
            "are not indexed paths"
            if self.against == "index"
            else "do not look like the golden file's paths"
        )
        return f"{self.implausible} of {self.hits} hit paths from the retriever {what}"


def hit_path_findings(
    tops: Sequence[Sequence[RankedHit]],
    golden_paths: Collection[str],
    indexed: Collection[str] | None,
    face: Face = "api",
) -> tuple[HitPathFinding, ...]:
    """The finding for the run whose hits are ``tops``, or () when most hits are plausible.

    ``indexed``: the index's paths (None: no index, judge by ``golden_paths``' shape);
    ``face``: who runs the eval, as whose option the hint names the path field."""
    paths = [hit.path for hits in tops for hit in hits]
    known = frozenset(indexed) if indexed is not None else frozenset(golden_paths)
    fixes = {p: _fix(p, known) for p in set(paths)}
    if indexed is not None:
        bad = [p for p in paths if p not in known]
    else:
        bad = [p for p in paths if p not in known and fixes[p][0] != "unknown"]
    if not paths or 2 * len(bad) <= len(paths):
        return ()
    examples = tuple(dict.fromkeys(bad))[:EXAMPLES]
    pattern, prefix = Counter(fixes[p] for p in bad).most_common(1)[0][0]
    sample = min(known) if known else "ops/rollback.md"
    against = "index" if indexed is not None else "golden"
    hint = _hint(pattern, prefix, sample, against, face)
    return (
        HitPathFinding(CHECK_HIT_PATHS, against, len(paths), len(bad), pattern, examples, hint),
    )


def _fix(path: str, known: frozenset[str]) -> tuple[str, str]:
    """(pattern, the prefix to strip or "") that explains why ``path`` is not in ``known``."""
    if path.startswith("/") or path.startswith("\\\\") or _DRIVE.match(path):
        return "absolute", _stripped_prefix(path.replace("\\", "/"), known)
    if path.startswith(("./", "../", ".\\")):
        return "dot-slash", _stripped_prefix(path, known)
    if "\\" in path:
        return "backslash", ""
    prefix = _stripped_prefix(path, known)
    if prefix:
        return "prefix", prefix
    lowered = {k.lower() for k in known}
    if path.lower() in lowered:
        return "case", ""
    return "unknown", ""


def _stripped_prefix(path: str, known: frozenset[str]) -> str:
    """The shortest leading part of ``path`` (up to a ``/``) whose removal leaves a known
    path; "" when none does."""
    for i, c in enumerate(path):
        if c == "/" and path[i + 1 :] in known:
            return path[: i + 1]
    return ""


def _hint(pattern: str, prefix: str, sample: str, against: str, face: Face) -> str:
    target = "the index holds them" if against == "index" else "the golden file writes them"
    relative = f"return paths relative to the KB folder, as {target} (e.g. {sample})"
    if pattern == "absolute":
        if prefix:
            return (
                f"the paths are absolute: strip {prefix!r} to get paths relative to the KB "
                f"folder, as {target} (e.g. {sample})"
            )
        return f"the paths are absolute: {relative}"
    if pattern == "dot-slash":
        return f"the paths start with ./ or ../: {relative}; groove compares paths verbatim"
    if pattern == "backslash":
        return f"the paths use \\ as the separator: use /, as {target} (e.g. {sample})"
    if pattern == "prefix":
        return f"the paths are rooted above the KB folder: strip {prefix!r} (e.g. {sample})"
    if pattern == "case":
        return f"the paths differ in case only: keep the file names' case (e.g. {sample})"
    field = spell("{give_retriever_fields:path=...}", face)
    return f"{relative}; check the path field ({field})"
