"""``groove golden apply``: add the relevant judgements to ``expected`` in the golden YAML.

The golden file is written by people: comments, key order, quoting, blank lines and line
endings are theirs. So the file is not re-emitted from a parsed tree (a round-trip
emitter re-indents and re-wraps what it does not model); instead the parser's marks say
where each query's ``expected`` list ends, and the new entries are inserted there as text,
indented like the entry above them. Every other byte of the file stays as it was, which
the tests check on a commented file. The result is parsed under the golden schema before
it replaces the file (atomically): a file that would not load is never written.

A relevant judgement is added unless an entry of the query already covers it (the same
path with no heading, or the same path and heading), or its query is no longer in the
golden file; both are reported. Not-relevant judgements are never added: the golden file
lists relevant answers only, and they stay in the judgements file for judged@k.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from groove import fileguard
from groove.atomic import write_file
from groove.errors import GoldenError
from groove.golden.judgements import Judgement, Judgements
from groove.golden.queries import MAX_GOLDEN_FILE_BYTES, GoldenQuery, GoldenSet, load_golden
from groove.labels import location_label
from groove.metrics import Expected, RankedHit, is_hit

# The pure-Python parser: its marks count characters of the decoded text, as slicing does.
_LOADER = yaml.SafeLoader
_BOM = "\ufeff"


@dataclass(frozen=True)
class Added:
    query_id: str
    entry: Expected

    def describe(self) -> str:
        return f"{self.query_id}: + {location_label(self.entry.path, self.entry.heading)}"


@dataclass(frozen=True)
class ApplyResult:
    """What ``apply`` added (or would add, with ``dry_run``) and what it left out."""

    golden_path: Path
    added: tuple[Added, ...]
    already_expected: int
    unknown_queries: tuple[str, ...]
    written: bool

    def lines(self) -> list[str]:
        queries = len({a.query_id for a in self.added})
        verb = "added" if self.written else "would add"
        out = [
            f"{verb} {len(self.added)} expected entr{'y' if len(self.added) == 1 else 'ies'} "
            f"to {queries} quer{'y' if queries == 1 else 'ies'} in {self.golden_path}"
        ]
        out += [f"  {a.describe()}" for a in self.added]
        if self.already_expected:
            out.append(f"{self.already_expected} relevant judgement(s) already expected")
        if self.unknown_queries:
            names = ", ".join(sorted(set(self.unknown_queries)))
            out.append(
                f"relevant judgements for queries not in the golden file (left out): {names}"
            )
        return out


def additions(golden: GoldenSet, judgements: Judgements) -> tuple[list[Added], int, list[str]]:
    """The entries to add, per query in golden order; how many were already expected; the
    unknown query ids."""
    by_id = {q.id: q for q in golden.queries}
    unknown = [j.query_id for j in judgements.items if j.relevant and j.query_id not in by_id]
    added: list[Added] = []
    already = 0
    for query in golden.queries:
        entries = list(query.expected)
        for j in judgements.for_query(query.id):
            if not j.relevant:
                continue
            if _covered(entries, j):
                already += 1
                continue
            entries.append(j.expected)
            added.append(Added(query.id, j.expected))
    return added, already, unknown


def _covered(entries: Sequence[Expected], j: Judgement) -> bool:
    if j.heading is None:
        return any(e.path == j.path and e.heading is None for e in entries)
    return any(is_hit(e, RankedHit(0, j.path, j.heading, 0.0)) for e in entries)


def apply(golden_path: Path, judgements: Judgements, *, dry_run: bool = False) -> ApplyResult:
    golden = load_golden(golden_path)
    added, already, unknown = additions(golden, judgements)
    written = False
    if added and not dry_run:
        raw = fileguard.read_checked(golden_path, MAX_GOLDEN_FILE_BYTES)
        text = insert_entries(raw.decode("utf-8-sig"), golden.queries, added)
        data = ((_BOM if raw.startswith(_BOM.encode()) else "") + text).encode("utf-8")
        _check(golden_path, data, golden, added)
        try:
            write_file(golden_path, data)
        except OSError as exc:
            raise GoldenError(
                f"could not write the golden file {golden_path}: {exc.strerror or exc}",
                "free some space or fix the folder's permissions; the file is as it was",
            ) from exc
        written = True
    return ApplyResult(golden_path, tuple(added), already, tuple(unknown), written)


def insert_entries(text: str, queries: Sequence[GoldenQuery], added: Sequence[Added]) -> str:
    """``text`` with each added entry inserted at the end of its query's ``expected``."""
    nodes = _expected_nodes(text, queries)
    newline = "\r\n" if "\r\n" in text else "\n"
    quoting = _quoting(nodes.values())
    inserts: list[tuple[int, str]] = []
    for query_id in dict.fromkeys(a.query_id for a in added):
        entries = [a.entry for a in added if a.query_id == query_id]
        inserts.append(_insertion(text, nodes[query_id], entries, newline, quoting))
    for index, piece in sorted(inserts, key=lambda x: x[0], reverse=True):
        if index == len(text) and text and not text.endswith("\n"):
            piece = newline + piece
        text = text[:index] + piece + text[index:]
    return text


def _expected_nodes(text: str, queries: Sequence[GoldenQuery]) -> dict[str, SequenceNode]:
    root = yaml.compose(text, Loader=_LOADER)
    assert isinstance(root, MappingNode)  # load_golden accepted the same text
    fields = {str(k.value): v for k, v in root.value}
    out = {}
    query_nodes = fields["queries"]
    assert isinstance(query_nodes, SequenceNode)
    for node, query in zip(query_nodes.value, queries, strict=True):
        assert isinstance(node, MappingNode)
        values = {str(k.value): v for k, v in node.value}
        expected = values["expected"]
        assert isinstance(expected, SequenceNode)
        out[query.id] = expected
    return out


#: A field's quoting in the file: None (plain), ``'`` or ``"`` (PyYAML's scalar styles).
Quoting = dict[str, str | None]


def _quoting(expected_lists: Iterable[SequenceNode]) -> Quoting:
    """How the file writes ``path`` and ``heading`` values: the style most of its entries
    use (plain when it has none), so an added entry reads like its neighbours."""
    seen: dict[str, Counter[str | None]] = {"path": Counter(), "heading": Counter()}
    for expected in expected_lists:
        for entry in expected.value:
            if not isinstance(entry, MappingNode):
                continue
            for key, value in entry.value:
                if str(key.value) in seen and isinstance(value, ScalarNode):
                    style = value.style if value.style in ("'", '"') else None
                    seen[str(key.value)][style] += 1
    return {field: c.most_common(1)[0][0] if c else None for field, c in seen.items()}


def _insertion(
    text: str,
    expected: SequenceNode,
    entries: Sequence[Expected],
    newline: str,
    quoting: Quoting | None = None,
) -> tuple[int, str]:
    quoting = quoting or {}
    if expected.flow_style:
        # `expected: [{path: a.md}]`: the new entries go before the closing bracket.
        close = text.rindex("]", 0, expected.end_mark.index)
        pieces = "".join(", " + _flow_entry(e, quoting) for e in entries)
        return close, pieces
    last = expected.value[-1]
    dash = text.rindex("-", 0, last.start_mark.index)  # the dash may sit on a line of its own
    line_start = text.rfind("\n", 0, dash) + 1
    prefix = text[line_start:dash]
    if prefix.strip():
        prefix = " " * len(prefix)
    body = " " * int(last.start_mark.column)
    if last.start_mark.line != text.count("\n", 0, dash):
        body = prefix + "  "
    lines = []
    for e in entries:
        lines.append(f"{prefix}- path: {_scalar(e.path, quoting.get('path'))}{newline}")
        if e.heading is not None:
            heading = _scalar(e.heading, quoting.get("heading"))
            lines.append(f"{body}heading: {heading}{newline}")
    return _after(text, last), "".join(lines)


def _after(text: str, node: Node) -> int:
    """The start of the line after ``node``'s last character (its comment stays with it)."""
    end = _last_scalar(node).end_mark
    if end.column == 0:  # a block scalar ends at the start of the next line
        return int(end.index)
    newline = text.find("\n", end.index)
    return len(text) if newline < 0 else newline + 1


def _last_scalar(node: Node) -> Node:
    while isinstance(node, MappingNode | SequenceNode) and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(node, MappingNode) else last
    return node


def _scalar(value: str, style: str | None = None) -> str:
    """``value`` as a YAML scalar in ``style`` (``'`` or ``"``); without one, plain when
    that reads back as the same string."""
    dumped = yaml.safe_dump(
        value, allow_unicode=True, width=10**9, default_flow_style=True, default_style=style
    )
    return dumped.removesuffix("\n...\n").rstrip("\n")


def _flow_entry(e: Expected, quoting: Quoting) -> str:
    heading = (
        "" if e.heading is None else f", heading: {_scalar(e.heading, quoting.get('heading'))}"
    )
    return f"{{path: {_scalar(e.path, quoting.get('path'))}{heading}}}"


def _check(golden_path: Path, data: bytes, golden: GoldenSet, added: Sequence[Added]) -> None:
    """The new text loads under the golden schema with exactly the added entries more."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / golden_path.name
        probe.write_bytes(data)
        try:
            after = load_golden(probe)
        except GoldenError as exc:
            raise GoldenError(
                f"could not add the judgements to {golden_path}: the result would not load "
                f"({exc.message})",
                "add them by hand; the golden file was left as it was",
            ) from exc
    wanted = {q.id: [*q.expected] for q in golden.queries}
    for a in added:
        wanted[a.query_id].append(a.entry)
    got = {q.id: list(q.expected) for q in after.queries}
    if got != wanted:
        raise GoldenError(
            f"could not add the judgements to {golden_path}: its layout is not one groove "
            "can extend safely",
            "add them by hand; the golden file was left as it was",
        )
