"""The ``golden-queries-quoted`` check: documents that quote several golden queries.

A note about the evaluation that sits inside the evaluated KB quotes golden queries word for
word, becomes their strongest match, and pushes the real answers down. One verbatim quote
proves nothing (a query naming a topic appears in documents about that topic), so a
document is reported only when it quotes two or more distinct queries.

Normalisation (queries and text alike): split on Unicode whitespace, join with one space,
lower-case. Queries shorter than 12 characters after it are skipped (short strings match by
chance). Heading, breadcrumb and body of each chunk are searched one at a time, exactly the
three columns the FTS index holds, and never concatenated, so a quote cannot straddle two
fields. A query whose ``expected`` lists the document is exempt there: the document is its
answer. groove reports; it changes neither the golden file nor the KB.

Every query is looked for in every field in one pass over the field (an Aho-Corasick
automaton of the normalised queries): a query at a time cost one substring search per
query per field, 35 s of a 48 s eval at 100,000 chunks and 1,000 queries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from groove.golden.hit_paths import CHECK_HIT_PATHS, HitPathFinding
from groove.golden.queries import DEFAULT_ID_CHARS, GoldenQuery, default_id

# A chunk as the corpus scan hands it over (store.chunks.ChunkText): path, chunk index,
# heading, content, context. Spelled out here: renderers import this module, and they may
# not depend on the store, even for a type.
ChunkText = tuple[str, int, str | None, str, str | None]

CHECK_QUOTED = "golden-queries-quoted"
CHECK_NOT_INDEXED = "golden-path-not-indexed"
CHECK_DUPLICATE_ID = "duplicate-query-id"
MIN_QUERY_CHARS = 12
MIN_DISTINCT_QUERIES = 2


@dataclass(frozen=True)
class QuotedQuery:
    query_id: str
    rank_in_top_k: int | None  # None: quoted, but the document is not in that query's top_k

    def to_dict(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "rank_in_top_k": self.rank_in_top_k}


@dataclass(frozen=True)
class Finding:
    check: str
    path: str
    quoted: tuple[QuotedQuery, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "path": self.path,
            "quoted": [q.to_dict() for q in self.quoted],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        quoted = tuple(
            QuotedQuery(str(q["query_id"]), q.get("rank_in_top_k")) for q in data["quoted"]
        )
        return cls(str(data["check"]), str(data["path"]), quoted)


def normalise(text: str) -> str:
    return " ".join(text.split()).lower()


@dataclass
class _Needle:
    text: str
    golden: list[int] = field(default_factory=list)  # indices of the folded golden queries


class QuoteScanner:
    """Fed every chunk row once (``visit``); ``findings`` then applies the per-document rules."""

    def __init__(self, queries: Sequence[GoldenQuery]) -> None:
        self.queries = queries
        self.needles: list[_Needle] = []
        by_text: dict[str, _Needle] = {}
        for i, query in enumerate(queries):
            text = normalise(query.query)
            if len(text) < MIN_QUERY_CHARS:
                continue
            if text in by_text:
                by_text[text].golden.append(i)
            else:
                by_text[text] = _Needle(text, [i])
                self.needles.append(by_text[text])
        self.matches: dict[str, set[int]] = defaultdict(set)
        self._automaton = _automaton([needle.text for needle in self.needles])

    def visit(self, row: ChunkText) -> None:
        if self._automaton is None:
            return
        path, _, heading, content, context = row
        for text in (heading, context, content):
            if text:
                # every needle found anywhere in the field, overlapping ones included
                found = {n for _, n in self._automaton.iter(normalise(text))}
                if found:
                    self.matches[path].update(found)

    def findings(self, top_paths: Sequence[Sequence[str]]) -> tuple[Finding, ...]:
        """``top_paths[i]`` is golden query i's ranked list of hit paths (its whole top_k)."""
        found = []
        for path in sorted(self.matches):
            quoted = self._quoted_in(path, sorted(self.matches[path]), top_paths)
            if len(quoted) >= MIN_DISTINCT_QUERIES:
                found.append(Finding(CHECK_QUOTED, path, tuple(quoted)))
        return tuple(found)

    def _quoted_in(
        self, path: str, matched: list[int], top_paths: Sequence[Sequence[str]]
    ) -> list[QuotedQuery]:
        texts = [self.needles[n].text for n in matched]
        quoted = []
        for n in matched:
            needle = self.needles[n]
            # One quotation of a longer query must not also count as the shorter one.
            if any(needle.text != other and needle.text in other for other in texts):
                continue
            if any(e.path == path for i in needle.golden for e in self.queries[i].expected):
                continue
            first = needle.golden[0]
            ranks = [r for r, p in enumerate(top_paths[first], start=1) if p == path]
            quoted.append(QuotedQuery(self.queries[first].id, ranks[0] if ranks else None))
        return quoted


def _automaton(texts: Sequence[str]) -> Any:
    """An Aho-Corasick automaton whose matches are ``(end, index into texts)``; None for
    no texts."""
    if not texts:
        return None
    import ahocorasick  # only an eval scans the corpus

    automaton = ahocorasick.Automaton()
    for n, text in enumerate(texts):
        automaton.add_word(text, n)
    automaton.make_automaton()
    return automaton


# ---- golden-path-not-indexed (computed by groove.golden.paths) ---------------


@dataclass(frozen=True)
class NearMatch:
    path: str
    kind: str  # "case", "prefix", "moved", "similar"

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "kind": self.kind}

    @property
    def text(self) -> str:
        what = {
            "case": "same path up to case",
            "prefix": "same path without the prefix",
            "moved": "same file name in another folder",
            "similar": "similar path",
        }[self.kind]
        return f"{self.path} ({what})"


@dataclass(frozen=True)
class PathFinding:
    """The ``golden-path-not-indexed`` finding: one per distinct unindexed expected path."""

    check: str
    path: str
    queries: tuple[str, ...]
    reason: str
    detail: str
    near: tuple[NearMatch, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "path": self.path,
            "queries": list(self.queries),
            "reason": self.reason,
            "detail": self.detail,
            "near": [n.to_dict() for n in self.near],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PathFinding:
        near = tuple(NearMatch(str(n["path"]), str(n["kind"])) for n in data.get("near", []))
        return cls(
            str(data["check"]),
            str(data["path"]),
            tuple(str(q) for q in data.get("queries", [])),
            str(data.get("reason", "missing")),
            str(data.get("detail", "")),
            near,
        )


# ---- duplicate-query-id ------------------------------------------------------------------


@dataclass(frozen=True)
class DuplicateIdFinding:
    """One query id that names two or more golden queries (given, or the default id)."""

    check: str
    query_id: str
    lines: tuple[int | None, ...]  # the golden file's lines of those queries
    default_id: bool  # True: no query gave an id, all share the first 32 characters

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "query_id": self.query_id,
            "lines": list(self.lines),
            "default_id": self.default_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DuplicateIdFinding:
        lines = tuple(None if n is None else int(n) for n in data.get("lines", []))
        return cls(str(data["check"]), str(data["query_id"]), lines, bool(data.get("default_id")))

    @property
    def summary(self) -> str:
        return self.worded(", ".join(self.line_labels))

    @property
    def line_labels(self) -> tuple[str, ...]:
        return tuple("?" if n is None else str(n) for n in self.lines)

    def worded(self, lines: str) -> str:
        """The summary with ``lines`` as its list of lines (the stderr caps it)."""
        how = f" (default id: the first {DEFAULT_ID_CHARS} characters)" if self.default_id else ""
        return f"query id {self.query_id!r}{how} names {len(self.lines)} queries (lines {lines})"


def duplicate_id_findings(queries: Sequence[GoldenQuery]) -> tuple[DuplicateIdFinding, ...]:
    """One finding per id shared by several queries, in the order of first use."""
    by_id: dict[str, list[GoldenQuery]] = defaultdict(list)
    for query in queries:
        by_id[query.id].append(query)
    return tuple(
        DuplicateIdFinding(
            CHECK_DUPLICATE_ID,
            query_id,
            tuple(q.line for q in same),
            all(q.id == default_id(q.query) for q in same),
        )
        for query_id, same in by_id.items()
        if len(same) > 1
    )


AnyFinding = Finding | PathFinding | DuplicateIdFinding | HitPathFinding


def finding_from_dict(data: Mapping[str, Any]) -> AnyFinding:
    """Any kind of finding, told apart by its ``check``."""
    check = data.get("check")
    if check == CHECK_NOT_INDEXED:
        return PathFinding.from_dict(data)
    if check == CHECK_DUPLICATE_ID:
        return DuplicateIdFinding.from_dict(data)
    if check == CHECK_HIT_PATHS:
        return HitPathFinding.from_dict(data)
    return Finding.from_dict(data)
