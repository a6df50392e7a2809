"""Where did a broken expected entry's answer go? One proposal per entry the index lacks.

An entry is broken when the index holds no document at its path, or no chunk under its
heading there (compared as eval compares). The evidence, strongest first:

* the history's sketch of the old file (groove.golden.answers: each chunk's heading and
  body digest when a run last found it) against the index's digests
  (groove.store.digests). A file whose every chunk is, in order, the body of exactly one
  indexed file moved or was renamed: **certain**. A section whose body sits unchanged in
  exactly one chunk, under whatever heading and in whatever file: **certain** (a
  reworded heading, a split file). Most of the old chunks in one file: **likely**.
* failing those, the section that matches the old one in the target file: its heading's
  wording, the embedding of the old heading and query against the chunk's stored vector,
  the place it sits between sections that did not change, and its rank for the query in
  the newest run of the history: **likely** when the blend clears ``LIKELY_SCORE``.
* without a sketch: the same file name in another folder, the heading verbatim in one
  other file, the newest run's hits: **likely** at most. Nothing certain is ever
  inferred from names.
* no candidate: **deleted**, said so.

Nothing here writes: groove.golden.rewrite applies the proposals.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

from groove.golden.answers import AnswerSketch
from groove.golden.paths import near_matches
from groove.golden.proposals import (
    CERTAIN,
    DELETED,
    EMPTY,
    HEADING_RENAMED,
    LIKELY,
    MERGED,
    MOVED,
    MOVED_AND_RENAMED,
    NONE,
    SPLIT,
    Proposal,
)
from groove.golden.queries import GoldenQuery
from groove.metrics import Expected, RankedHit, normalise_heading
from groove.store.digests import DigestedChunk

#: A file whose share of the old chunks found unchanged in it reaches this is "most alike".
MOST_CHUNKS = 0.5
#: The blended score (0..1) a section candidate needs to be proposed as likely.
LIKELY_SCORE = 0.45
#: The blend's weights: heading wording, embedding, place among unchanged sections, rank.
WEIGHTS = {"text": 0.35, "embedding": 0.35, "place": 0.2, "rank": 0.1}

#: ``similarity(text, chunks)``: the cosine of ``text``'s embedding with each chunk's
#: stored vector (groove.evaluation.doctor passes the index's model); None: text only.
Similarity = Callable[[str, Sequence[DigestedChunk]], Sequence[float]]

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class IndexView:
    """The index as the doctor reads it: every chunk with its body digest."""

    chunks: tuple[DigestedChunk, ...]

    @cached_property
    def by_path(self) -> dict[str, list[DigestedChunk]]:
        out: dict[str, list[DigestedChunk]] = {}
        for chunk in self.chunks:
            out.setdefault(chunk.path, []).append(chunk)
        return out

    @cached_property
    def by_digest(self) -> dict[str, list[DigestedChunk]]:
        out: dict[str, list[DigestedChunk]] = {}
        for chunk in self.chunks:
            out.setdefault(chunk.digest, []).append(chunk)
        return out

    def heading_chunk(self, path: str, heading: str) -> DigestedChunk | None:
        wanted = normalise_heading(heading)
        for chunk in self.by_path.get(path, ()):
            if chunk.heading is not None and normalise_heading(chunk.heading) == wanted:
                return chunk
        return None

    def resolves(self, entry: Expected) -> bool:
        """Can an eval hit this entry at all?"""
        if entry.path not in self.by_path:
            return False
        return entry.heading is None or self.heading_chunk(entry.path, entry.heading) is not None


@dataclass(frozen=True)
class BrokenEntry:
    query: GoldenQuery
    position: int  # index in the query's expected list
    entry: Expected


def broken_entries(queries: Sequence[GoldenQuery], view: IndexView) -> list[BrokenEntry]:
    """Every expected entry the index cannot match, in golden order."""
    return [
        BrokenEntry(q, i, e)
        for q in queries
        for i, e in enumerate(q.expected)
        if not view.resolves(e)
    ]


@dataclass(frozen=True)
class _FileGuess:
    path: str | None  # None: no candidate file
    confidence: str
    evidence: str
    split: bool = False


def diagnose(
    queries: Sequence[GoldenQuery],
    view: IndexView,
    sketches: Mapping[str, AnswerSketch],
    tops: Mapping[str, Sequence[RankedHit]] | None = None,
    similarity: Similarity | None = None,
    lines: Mapping[tuple[str, int], int] | None = None,
) -> tuple[Proposal, ...]:
    """One proposal per broken entry. ``tops``: each query's hits in the newest run of the
    history; ``lines``: (query id, entry position) -> the entry's line in the golden file."""
    doctor = _Doctor(view, sketches, tops or {}, similarity)
    out = []
    for broken in broken_entries(queries, view):
        line = (lines or {}).get((broken.query.id, broken.position))
        out.append(doctor.propose(broken, line))
    return tuple(out)


class _Doctor:
    def __init__(
        self,
        view: IndexView,
        sketches: Mapping[str, AnswerSketch],
        tops: Mapping[str, Sequence[RankedHit]],
        similarity: Similarity | None,
    ) -> None:
        self.view = view
        self.sketches = sketches
        self.tops = tops
        self.similarity = similarity
        self._files: dict[str, _FileGuess] = {}

    def propose(self, broken: BrokenEntry, line: int | None) -> Proposal:
        entry, query = broken.entry, broken.query

        def made(target: Expected | None, kind: str, confidence: str, evidence: str) -> Proposal:
            return Proposal(query.id, line, entry, target, kind, confidence, evidence)

        sketch = self.sketches.get(entry.path)
        guess = self._file(entry.path, sketch)
        if guess.path is None and sketch is None:
            # No memory of the old file: the newest run's ranks are the best hint left. With
            # a sketch whose bodies are gone everywhere, the answer was deleted or rewritten.
            guess = self._by_rank(entry, query.id) or guess
        if entry.heading is None:
            if guess.path is None:
                return made(None, DELETED, NONE, guess.evidence)
            kind = SPLIT if guess.split else MOVED
            return made(Expected(guess.path, None), kind, guess.confidence, guess.evidence)
        return self._section(entry, entry.heading, query, sketch, guess, made)

    # ---- the file ----------------------------------------------------------------------

    def _file(self, path: str, sketch: AnswerSketch | None) -> _FileGuess:
        if path not in self._files:
            self._files[path] = self._locate_file(path, sketch)
        return self._files[path]

    def _locate_file(self, path: str, sketch: AnswerSketch | None) -> _FileGuess:
        if path in self.view.by_path:
            return _FileGuess(path, CERTAIN, "the file is still indexed")
        seen = f" (as last seen {sketch.seen})" if sketch and sketch.seen else ""
        if sketch is not None and sketch.chunks:
            old = [c.digest for c in sketch.chunks]
            same = [
                p for p, chunks in self.view.by_path.items() if [c.digest for c in chunks] == old
            ]
            n = len(old)
            if len(same) == 1:
                return _FileGuess(same[0], CERTAIN, f"all {n} chunk(s) identical{seen}")
            if len(same) > 1:
                listed = ", ".join(sorted(same))
                return _FileGuess(sorted(same)[0], LIKELY, f"identical copies: {listed}")
            shared = self._shared(old)
            if shared:
                best, count = shared[0]
                spread = len(shared) > 1 and count < n
                share = f"{count} of {n} chunks unchanged in {best}"
                if spread:
                    others = ", ".join(f"{c} in {p}" for p, c in shared[1:3])
                    share += f"; {others}"
                if count / n >= MOST_CHUNKS or spread:
                    return _FileGuess(best, LIKELY, share + seen, split=spread)
        return self._by_name(path)

    def _shared(self, old: Sequence[str]) -> list[tuple[str, int]]:
        """Indexed files holding some of the old chunk bodies unchanged, most first."""
        wanted = Counter(old)
        found: Counter[str] = Counter()
        for digest, count in wanted.items():
            holders = Counter(c.path for c in self.view.by_digest.get(digest, ()))
            for p, held in holders.items():
                found[p] += min(count, held)
        return sorted(found.items(), key=lambda item: (-item[1], item[0]))

    def _by_name(self, path: str) -> _FileGuess:
        moved = [n.path for n in near_matches(path, self.view.by_path) if n.kind == "moved"]
        if len(moved) == 1:
            return _FileGuess(moved[0], LIKELY, "same file name in another folder")
        similar = [n.path for n in near_matches(path, self.view.by_path) if n.kind == "similar"]
        if similar:
            return _FileGuess(similar[0], LIKELY, "a similar path")
        return _FileGuess(None, NONE, "no indexed file holds its chunks or its name")

    def _by_rank(self, entry: Expected, query_id: str) -> _FileGuess | None:
        """Failing digests and names: the best-ranked hit of the query in the newest run
        whose file name shares a word with the old one (and, for a heading entry, holds
        that heading). A rank is a hint, never proof: likely at most."""
        old_words = set(_WORD.findall(PurePosixPath(entry.path).stem.lower()))
        for hit in self.tops.get(query_id, ()):
            if hit.path == entry.path or hit.path not in self.view.by_path:
                continue
            words = set(_WORD.findall(PurePosixPath(hit.path).stem.lower()))
            if not (old_words & words):
                continue
            if (
                entry.heading is not None
                and self.view.heading_chunk(hit.path, entry.heading) is None
            ):
                continue
            evidence = f"rank {hit.rank} for this query in the newest run, a like file name"
            return _FileGuess(hit.path, LIKELY, evidence)
        return None

    # ---- the section -------------------------------------------------------------------

    def _section(
        self,
        entry: Expected,
        heading: str,
        query: GoldenQuery,
        sketch: AnswerSketch | None,
        guess: _FileGuess,
        made: Callable[[Expected | None, str, str, str], Proposal],
    ) -> Proposal:
        view = self.view
        old_digest = sketch.digest_of(heading) if sketch is not None else None
        if guess.path is not None:
            same = view.heading_chunk(guess.path, heading)
            if same is not None:
                confidence = guess.confidence
                if old_digest is not None and same.digest == old_digest:
                    confidence, evidence = CERTAIN, "the section's body is unchanged"
                else:
                    evidence = guess.evidence
                target = Expected(same.path, same.heading)
                return made(target, self._kind(entry, target, guess.split), confidence, evidence)
        if old_digest is not None:
            holders = view.by_digest.get(old_digest, [])
            if len(holders) == 1:
                c = holders[0]
                target = Expected(c.path, c.heading)
                moved_away = guess.path is not None and c.path != guess.path
                where = f"under {c.heading!r}" if c.heading else "as the lead text"
                evidence = f"the section's body is unchanged, {where} in {c.path}"
                return made(target, self._kind(entry, target, moved_away), CERTAIN, evidence)
            in_file = [c for c in holders if c.path == guess.path]
            if in_file:
                c = in_file[0]
                evidence = (
                    f"the section's body is unchanged, also in {len(holders) - 1} other place(s)"
                )
                target = Expected(c.path, c.heading)
                return made(target, self._kind(entry, target, False), LIKELY, evidence)
        if guess.path is not None:
            merged = self._merged(guess.path, heading)
            if merged is not None:
                return made(*merged)
            found = self._matching(entry, heading, query, sketch, guess.path)
            if found is not None:
                chunk, evidence = found
                target = Expected(chunk.path, chunk.heading)
                return made(target, self._kind(entry, target, False), LIKELY, evidence)
        elsewhere = self._heading_elsewhere(heading, guess.path)
        if elsewhere is not None:
            target = Expected(elsewhere.path, elsewhere.heading)
            evidence = f"the heading now sits in {elsewhere.path}"
            return made(target, self._kind(entry, target, guess.path is not None), LIKELY, evidence)
        if guess.path is None:
            return made(None, DELETED, NONE, guess.evidence)
        return made(None, DELETED, NONE, f"no section of {guess.path} matches it")

    def _kind(self, entry: Expected, target: Expected, split: bool) -> str:
        if split:
            return SPLIT
        path_changed = target.path != entry.path
        heading_changed = normalise_heading(target.heading or "") != normalise_heading(
            entry.heading or ""
        )
        if path_changed and heading_changed:
            return MOVED_AND_RENAMED
        return MOVED if path_changed else HEADING_RENAMED

    def _merged(self, path: str, heading: str) -> tuple[Expected | None, str, str, str] | None:
        """A section under 50 bytes is merged into the chunk above it as ``## heading``:
        the eval can only hit that chunk. An empty one holds nothing to find."""
        wanted = normalise_heading(heading)
        for chunk in self.view.by_path.get(path, ()):
            lines = chunk.content.split("\n")
            for i, text in enumerate(lines):
                if text.startswith("## ") and normalise_heading(text[3:]) == wanted:
                    body = _section_text(lines[i + 1 :])
                    if not body:
                        return None, EMPTY, NONE, "the section is empty: nothing to find"
                    target = Expected(chunk.path, chunk.heading)
                    under = repr(chunk.heading) if chunk.heading else "the lead text"
                    evidence = f"too short for a chunk of its own: merged into {under}"
                    return target, MERGED, LIKELY, evidence
        return None

    def _matching(
        self,
        entry: Expected,
        heading: str,
        query: GoldenQuery,
        sketch: AnswerSketch | None,
        path: str,
    ) -> tuple[DigestedChunk, str] | None:
        """The section of ``path`` that most resembles the old one, if it resembles enough."""
        chunks = self.view.by_path.get(path, [])
        old = {c.digest for c in sketch.chunks} if sketch is not None else set()
        candidates = [c for c in chunks if c.heading is not None and c.digest not in old]
        if not candidates:
            return None
        texts = [_wording(heading, c.heading or "") for c in candidates]
        embedded: Sequence[float] = [0.0] * len(candidates)
        if self.similarity is not None:
            embedded = [
                max(0.0, s) for s in self.similarity(f"{heading}. {query.query}", candidates)
            ]
        places = [self._place(c, heading, sketch, chunks) for c in candidates]
        ranks = [self._rank(query.id, c) for c in candidates]
        scores = [
            WEIGHTS["text"] * t
            + WEIGHTS["embedding"] * e
            + WEIGHTS["place"] * p
            + WEIGHTS["rank"] * r
            for t, e, p, r in zip(texts, embedded, places, ranks, strict=True)
        ]
        best = max(range(len(candidates)), key=lambda i: (scores[i], -candidates[i].chunk_index))
        if scores[best] < LIKELY_SCORE:
            return None
        parts = [f"heading wording {texts[best]:.2f}"]
        if self.similarity is not None:
            parts.append(f"embedding {embedded[best]:.2f}")
        if places[best]:
            parts.append("in the old section's place")
        if ranks[best]:
            parts.append(f"rank {round(1 / ranks[best])} for this query in the newest run")
        return candidates[best], "the section that matches it: " + ", ".join(parts)

    def _place(
        self,
        chunk: DigestedChunk,
        heading: str,
        sketch: AnswerSketch | None,
        chunks: Sequence[DigestedChunk],
    ) -> float:
        """1.0 when ``chunk`` sits where the old section sat: right after the chunk that
        came before it, or right before the one that came after it (both unchanged)."""
        if sketch is None:
            return 0.0
        wanted = normalise_heading(heading)
        old = sketch.chunks
        at = next(
            (i for i, c in enumerate(old) if c.heading and normalise_heading(c.heading) == wanted),
            None,
        )
        if at is None:
            return 0.0
        pos = next(i for i, c in enumerate(chunks) if c.id == chunk.id)
        before = old[at - 1].digest if at > 0 else None
        after = old[at + 1].digest if at + 1 < len(old) else None
        if before is not None and pos > 0 and chunks[pos - 1].digest == before:
            return 1.0
        if after is not None and pos + 1 < len(chunks) and chunks[pos + 1].digest == after:
            return 1.0
        return 0.0

    def _rank(self, query_id: str, chunk: DigestedChunk) -> float:
        """1/rank of ``chunk`` among the query's hits in the newest run (0: not there)."""
        for hit in self.tops.get(query_id, ()):
            if hit.path == chunk.path and hit.heading == chunk.heading:
                return 1.0 / hit.rank
        return 0.0

    def _heading_elsewhere(self, heading: str, path: str | None) -> DigestedChunk | None:
        """The one indexed chunk outside ``path`` with this exact heading, if only one."""
        wanted = normalise_heading(heading)
        found = [
            c
            for c in self.view.chunks
            if c.path != path and c.heading is not None and normalise_heading(c.heading) == wanted
        ]
        return found[0] if len({c.path for c in found}) == 1 else None


def _section_text(lines: Sequence[str]) -> str:
    """The text of a merged section: up to the next merged heading."""
    out = []
    for text in lines:
        if text.startswith("## "):
            break
        out.append(text)
    return "\n".join(out).strip()


def _wording(a: str, b: str) -> float:
    """How alike two headings read (0..1): the better of character and word overlap."""
    x, y = normalise_heading(a), normalise_heading(b)
    chars = difflib.SequenceMatcher(None, x, y).ratio()
    words_a, words_b = set(_WORD.findall(x)), set(_WORD.findall(y))
    union = words_a | words_b
    words = len(words_a & words_b) / len(union) if union else 0.0
    return max(chars, words)
