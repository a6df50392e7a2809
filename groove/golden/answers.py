"""What the expected answers looked like when the golden file last matched the index.

After a reorganisation (a file moved, a heading reworded) the index holds only the new
state, so ``groove golden doctor`` needs a memory of the old one. Each eval keeps, in the
history, one sketch per expected path: the heading and body digest of each of its chunks
(groove.store.digests), in chunk order. A path's sketch is renewed only by a run in which
every expected heading of that path was found in it (the eval records them:
groove.runs.corpus_scan); otherwise the previous sketch stays:
the one from the last run that found the answers. Sketches of paths this golden file does
not expect are kept (another golden file of the same KB may expect them), the most recently
seen ``KEEP_OTHERS`` of them, so the memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groove.golden.queries import GoldenQuery
from groove.metrics import normalise_heading

#: How many sketches of paths the evaluated golden file does not expect are kept.
KEEP_OTHERS = 5000


@dataclass(frozen=True)
class SketchedChunk:
    heading: str | None
    digest: str


@dataclass(frozen=True)
class AnswerSketch:
    """One expected file as a run saw it: ``seen`` is that run's timestamp."""

    path: str
    seen: str
    chunks: tuple[SketchedChunk, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "seen": self.seen,
            "chunks": [[c.heading, c.digest] for c in self.chunks],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerSketch:
        chunks = tuple(
            SketchedChunk(None if h is None else str(h), str(d)) for h, d in data["chunks"]
        )
        return cls(str(data["path"]), str(data.get("seen", "")), chunks)

    def digest_of(self, heading: str) -> str | None:
        """The body digest of the chunk under ``heading`` (compared as eval compares)."""
        wanted = normalise_heading(heading)
        for chunk in self.chunks:
            if chunk.heading is not None and normalise_heading(chunk.heading) == wanted:
                return chunk.digest
        return None

    def holds(self, heading: str | None) -> bool:
        return heading is None or self.digest_of(heading) is not None


@dataclass(frozen=True)
class AnswerUpdate:
    """A run's fresh sketches, and the headings the golden file expects in each path."""

    fresh: Mapping[str, AnswerSketch]
    expected: Mapping[str, tuple[str | None, ...]]

    @classmethod
    def of(cls, fresh: Mapping[str, AnswerSketch], queries: Sequence[GoldenQuery]) -> AnswerUpdate:
        headings: dict[str, list[str | None]] = {}
        for q in queries:
            for e in q.expected:
                headings.setdefault(e.path, []).append(e.heading)
        return cls(fresh, {p: tuple(h) for p, h in headings.items()})

    def merged(self, stored: Mapping[str, AnswerSketch]) -> dict[str, AnswerSketch]:
        """The sketches to keep, by path: for each expected path the fresh one when it holds
        every heading the golden file expects there, else the stored one, else the fresh;
        the stored ones of other paths (the ``KEEP_OTHERS`` most recently seen)."""
        out: dict[str, AnswerSketch] = {}
        for path in sorted(self.expected):
            fresh, old = self.fresh.get(path), stored.get(path)
            if fresh is not None and all(fresh.holds(h) for h in self.expected[path]):
                out[path] = fresh
            elif old is not None:
                out[path] = old
            elif fresh is not None:
                out[path] = fresh
        others = sorted(
            (sk for p, sk in stored.items() if p not in self.expected),
            key=lambda sk: (sk.seen, sk.path),
            reverse=True,
        )
        out.update((sk.path, sk) for sk in others[:KEEP_OTHERS])
        return dict(sorted(out.items()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "fresh": [self.fresh[p].to_dict() for p in sorted(self.fresh)],
            "expected": {p: list(h) for p, h in sorted(self.expected.items())},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerUpdate:
        expected = {
            str(p): tuple(None if h is None else str(h) for h in hs)
            for p, hs in data["expected"].items()
        }
        return cls(sketches_from_list(data.get("fresh")), expected)


def sketches_from_list(data: Any) -> dict[str, AnswerSketch]:
    """The history's ``answers`` list read back; anything malformed reads as no memory
    (the runs, which hold the baselines, never depend on it)."""
    if not isinstance(data, list):
        return {}
    try:
        sketches = [AnswerSketch.from_dict(item) for item in data]
    except (KeyError, TypeError, ValueError, AttributeError):
        return {}
    return {s.path: s for s in sketches}
