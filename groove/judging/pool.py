"""Pooling: the hits that nobody has judged, from several rankings, most useful first.

Pooling is how test collections are built (TREC judges the union of many systems' top
k): a hit that some system ranks high but that no ``expected`` entry and no judgement
covers is where a metric can be wrong. The sources:

* ``history``: the newest run of each configuration in the eval history (a configuration
  is a fingerprint without the golden hash, so growing the golden set keeps it one);
* ``runs``: runs named as ``groove compare`` names them (history position, timestamp, or
  a saved ``--format json`` / result.json file);
* ``current``: a fresh run of groove's own engine with the current settings;
* ``retriever``: another system (``--retriever``), run through the eval's retriever code;
* ``tune``: the 384 rrf_k x bm25-weight conditions of ``groove tune``'s grid.

Each source contributes its first ``depth`` hits per golden query. A candidate is one
(query, path, heading) with the best rank each source gave it; the tune grid counts as one
source whose weight is the share of conditions that brought the hit. Candidates are
ordered by ``priority``: the sum over sources of ``weight x share / rank`` (a reciprocal
rank fusion of the sources), where the runs the regression gate compares (the newest run
and the one before it) weigh double. So a hit high in many rankings, or in the runs a
decision hangs on, is judged first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from groove.cards import Introduces
from groove.golden.judgements import Judgements, judgements_path, load_judgements
from groove.golden.queries import GoldenQuery, GoldenSet, load_golden
from groove.metrics import Expected, RankedHit, is_hit, normalise_heading
from groove.notes import Note
from groove.runs.record import RunRecord

if TYPE_CHECKING:
    import pandas as pd

SNIPPET_CHARS = 600
GATE_WEIGHT = 2.0
NOTE_NO_SNIPPETS = "pool-no-snippets"

#: query id -> [(path, heading, best rank, share of the source's lists that hold it)]
TopLists = Mapping[str, Sequence[tuple[str, str | None, int, float]]]


@dataclass(frozen=True)
class SourceLists:
    """One source's top lists: its label, its weight in the ordering, its hits per query."""

    label: str
    tops: TopLists
    weight: float = 1.0


@dataclass(frozen=True)
class Sighting:
    """Where one source ranked a candidate (``share`` < 1 only for the tune grid)."""

    source: str
    rank: int
    share: float = 1.0

    def describe(self) -> str:
        share = f" in {self.share:.0%} of conditions" if self.share < 1.0 else ""
        return f"{self.source} #{self.rank}{share}"


@dataclass(frozen=True)
class Candidate:
    """One hit to judge: the query, the hit, its text and the rankings that brought it."""

    query_id: str
    query: str
    path: str
    heading: str | None
    snippet: str
    seen: tuple[Sighting, ...]
    priority: float
    expected: tuple[Expected, ...] = ()
    # a heading-less hit whose text opens with a ``# `` line (a title the chunker keeps as
    # text: only ## and ### open sections): that title, so the judge sees what it is
    lead_title: str | None = None

    @property
    def sources(self) -> str:
        """``#1 #3; tune #2 in 40% of conditions``: each source and the rank it gave."""
        return "; ".join(s.describe() for s in self.seen)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "query": self.query,
            "path": self.path,
            "heading": self.heading,
            "priority": round(self.priority, 6),
            "sources": self.sources,
            "snippet": self.snippet,
        }


@dataclass(frozen=True, repr=False)
class Pool(Introduces):
    """The candidates of one golden set, most useful first."""

    golden_path: Path
    judgements_path: Path
    depth: int
    sources: tuple[str, ...]
    candidates: tuple[Candidate, ...]
    covered: int  # distinct hits the sources brought that expected or a judgement covers
    judged: int = 0  # of those, the ones only a judgement covers (judging progress)
    notes: tuple[Note, ...] = ()
    # per tag of the golden queries (a slice, groove.stats.slices): (tag, its queries, its
    # unjudged candidates), the most unjudged per query first; empty without tags
    slices: tuple[tuple[str, int, int], ...] = ()

    def slice_summary(self) -> str | None:
        """``unjudged hits per slice (least judged first): ja 23 over 10 queries, ...``."""
        if not self.slices:
            return None
        listed = ", ".join(f"{name} {hits} over {n} queries" for name, n, hits in self.slices)
        return f"unjudged hits per slice (least judged first): {listed}"

    def summary(self) -> str:
        queries = len({c.query_id for c in self.candidates})
        return (
            f"{len(self.candidates)} unjudged hits over {queries} queries from "
            f"{len(self.sources)} source(s) at depth {self.depth} ({', '.join(self.sources)}); "
            f"{self.covered} hits already judged or expected"
        )

    def to_dict(self) -> dict[str, Any]:
        """The pool, JSON-ready: where it came from and its candidates, most useful
        first (an exported .jsonl adds the judging columns to each)."""
        return {
            "golden_path": str(self.golden_path),
            "judgements_path": str(self.judgements_path),
            "depth": self.depth,
            "sources": list(self.sources),
            "covered": self.covered,
            "judged": self.judged,
            "candidates": [c.to_dict() for c in self.candidates],
            "notes": [note.to_dict() for note in self.notes],
            **(
                {"slices": [{"name": t, "queries": n, "unjudged": h} for t, n, h in self.slices]}
                if self.slices
                else {}
            ),
        }

    def candidates_frame(self) -> pd.DataFrame:
        """One row per candidate, in priority order: query_id, query, path, heading,
        priority, sources, snippet."""
        import pandas as pd

        columns = ["query_id", "query", "path", "heading", "priority", "sources", "snippet"]
        return pd.DataFrame([c.to_dict() for c in self.candidates], columns=columns)


def _key(path: str, heading: str | None) -> tuple[str, str | None]:
    return (path, None if heading is None else normalise_heading(heading))


def lists_from_record(
    label: str, record: RunRecord, depth: int, weight: float = 1.0
) -> SourceLists:
    tops = {
        q.id: [(h.path, h.heading, h.rank, 1.0) for h in q.top_k[:depth]] for q in record.per_query
    }
    return SourceLists(label, tops, weight)


def configuration(record: RunRecord) -> str:
    """A run's configuration: its fingerprint without the golden hash."""
    data = record.fingerprint.to_dict()
    data.pop("golden_hash", None)
    return repr(sorted(data.items()))


def history_lists(runs: Sequence[RunRecord], depth: int) -> list[SourceLists]:
    """The newest run of each configuration; the newest run and the one the gate compared
    it with (its stored baseline; in a history from before baselines were stored, the run
    before it when comparable) weigh double."""
    gate = set()
    if runs:
        gate.add(0)
        baseline_id = runs[0].baseline_id
        if baseline_id is not None:
            gate.update(i for i, r in enumerate(runs) if r.id == baseline_id)
        elif len(runs) > 1 and runs[1].fingerprint.compatible_with(runs[0].fingerprint):
            gate.add(1)
    seen: set[str] = set()
    out = []
    for i, record in enumerate(runs):
        config = configuration(record)
        if config in seen and i not in gate:
            continue
        seen.add(config)
        weight = GATE_WEIGHT if i in gate else 1.0
        out.append(lists_from_record(f"#{i + 1}", record, depth, weight))
    return out


def build_pool(
    golden: GoldenSet,
    judgements: Judgements,
    sources: Sequence[SourceLists],
    depth: int,
    snippets: Mapping[str, Sequence[tuple[str | None, str]]] | None = None,
    notes: Iterable[Note] = (),
) -> Pool:
    """Merge the sources' top lists into candidates: not covered, most useful first."""
    by_id = {q.id: q for q in golden.queries}
    found: dict[tuple[str, str, str | None], dict[str, Sighting]] = {}
    labels: dict[tuple[str, str, str | None], tuple[str, str | None]] = {}
    weights = {s.label: s.weight for s in sources}
    covered: set[tuple[str, str, str | None]] = set()
    judged: set[tuple[str, str, str | None]] = set()
    for source in sources:
        for query_id, hits in source.tops.items():
            query = by_id.get(query_id)
            if query is None:  # a query since removed from the golden file
                continue
            for path, heading, rank, share in hits:
                if rank > depth:
                    continue
                key = (query_id, *_key(path, heading))
                how = _covered(query, judgements, path, heading)
                if how is not None:
                    covered.add(key)
                    if how == "judged":
                        judged.add(key)
                    continue
                labels.setdefault(key, (path, heading))
                sightings = found.setdefault(key, {})
                best = sightings.get(source.label)
                if best is None or rank < best.rank:
                    sightings[source.label] = Sighting(source.label, rank, share)
    order = {q.id: i for i, q in enumerate(golden.queries)}
    candidates = []
    for key, sightings in found.items():
        query = by_id[key[0]]
        path, heading = labels[key]
        seen = tuple(sorted(sightings.values(), key=lambda s: (s.rank, s.source)))
        priority = sum(weights[s.source] * s.share / s.rank for s in seen)
        content = _content(snippets, path, heading) if snippets is not None else ""
        title = lead_title(content) if heading is None else None
        candidates.append(
            Candidate(
                query.id,
                query.query,
                path,
                heading,
                _shorten(content),
                seen,
                priority,
                query.expected,
                title,
            )
        )
    candidates.sort(key=lambda c: (-c.priority, order[c.query_id], c.path, c.heading or ""))
    return Pool(
        golden_path=golden.path,
        judgements_path=judgements.path,
        depth=depth,
        sources=tuple(s.label for s in sources),
        candidates=tuple(candidates),
        covered=len(covered),
        judged=len(judged),
        notes=tuple(notes),
        slices=_by_tag(golden, candidates),
    )


def _by_tag(golden: GoldenSet, candidates: Sequence[Candidate]) -> tuple[tuple[str, int, int], ...]:
    """(tag, queries, unjudged candidates) per tag, the most unjudged per query first."""
    queries: dict[str, set[str]] = {}
    for q in golden.queries:
        for tag in q.tags:
            queries.setdefault(tag, set()).add(q.id)
    unjudged = {tag: sum(c.query_id in ids for c in candidates) for tag, ids in queries.items()}
    rows = [(tag, len(queries[tag]), unjudged[tag]) for tag in sorted(queries)]
    return tuple(sorted(rows, key=lambda r: -r[2] / r[1]))


def _covered(
    query: GoldenQuery, judgements: Judgements, path: str, heading: str | None
) -> str | None:
    """ "expected" or "judged" when the hit is covered, else None."""
    hit = RankedHit(0, path, heading, 0.0)
    if any(is_hit(e, hit) for e in query.expected):
        return "expected"
    return "judged" if judgements.find(query.id, path, heading) is not None else None


def _content(
    snippets: Mapping[str, Sequence[tuple[str | None, str]]], path: str, heading: str | None
) -> str:
    chunks = snippets.get(path, ())
    want = None if heading is None else normalise_heading(heading)
    for chunk_heading, content in chunks:
        have = None if chunk_heading is None else normalise_heading(chunk_heading)
        if have == want:
            return content
    return chunks[0][1] if chunks else ""


def lead_title(content: str) -> str | None:
    """``# Title`` opening a lead chunk's text -> ``Title``; None without such a line."""
    for line in content.splitlines():
        if line.strip():
            text = line.strip()
            return text[2:].strip() or None if text.startswith("# ") else None
    return None


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…"


def load_for_pool(golden_path: Path) -> tuple[GoldenSet, Judgements]:
    return load_golden(golden_path), load_judgements(judgements_path(golden_path))
