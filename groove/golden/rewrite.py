"""``groove golden doctor --apply``: rewrite broken entries in place, every other byte kept.

The golden file is written by people (comments, quoting, order, blank lines, line endings),
so it is never re-emitted from a parsed tree. The parser's marks give each entry's
``path`` and ``heading`` scalars; only those spans are replaced, by the new value written
in the old one's quoting style (plain when it reads back the same, else quoted). A
heading that must go (the section became the file's lead text) takes its whole line with
it, in block style only. The result must load under the golden schema with exactly the
intended entries changed, and the file must still be the one the doctor read (same
SHA-256), or nothing is written; the write is atomic (groove.atomic).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from groove import fileguard
from groove.atomic import write_file
from groove.errors import GoldenError
from groove.golden.proposals import Proposal
from groove.golden.queries import MAX_GOLDEN_FILE_BYTES, GoldenSet, load_golden

# The pure-Python parser: its marks count characters of the decoded text, as slicing does.
_LOADER = yaml.SafeLoader
_BOM = "\ufeff"


@dataclass(frozen=True)
class Rewrite:
    """What ``apply_proposals`` changed and what it had to leave (with why)."""

    applied: tuple[Proposal, ...]
    skipped: tuple[tuple[Proposal, str], ...]
    written: bool


@dataclass(frozen=True)
class _Edit:
    start: int
    end: int
    text: str


def apply_proposals(
    golden: GoldenSet, proposals: Sequence[Proposal], *, write: bool = True
) -> Rewrite:
    """Rewrite each proposal's entry to its target (the caller chose which ones)."""
    if not proposals:
        return Rewrite((), (), False)
    raw = fileguard.read_checked(golden.path, MAX_GOLDEN_FILE_BYTES)
    if hashlib.sha256(raw).hexdigest() != golden.sha256:
        raise GoldenError(
            f"the golden file changed while the doctor read it: {golden.path}",
            "run groove golden doctor again; nothing was written",
        )
    text = raw.decode("utf-8-sig")
    entries = _entry_nodes(text, golden)
    edits: list[_Edit] = []
    applied: list[Proposal] = []
    skipped: list[tuple[Proposal, str]] = []
    taken: set[tuple[int, int] | None] = set()
    for proposal in proposals:
        key = _key(golden, proposal)
        if key in taken:
            skipped.append((proposal, "another proposal rewrites the same entry"))
            continue
        taken.add(key)
        node = entries.get(key)
        if node is None or proposal.target is None:
            skipped.append((proposal, "the entry is not in the golden file as read"))
            continue
        found = _edits(text, node, proposal)
        if isinstance(found, str):
            skipped.append((proposal, found))
            continue
        edits += found
        applied.append(proposal)
    if not applied:
        return Rewrite((), tuple(skipped), False)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.text + text[edit.end :]
    data = ((_BOM if raw.startswith(_BOM.encode()) else "") + text).encode("utf-8")
    _check(golden, data, applied)
    if write:
        try:
            write_file(golden.path, data)
        except OSError as exc:
            raise GoldenError(
                f"could not write the golden file {golden.path}: {exc.strerror or exc}",
                "free some space or fix the folder's permissions; the file is as it was",
            ) from exc
    return Rewrite(tuple(applied), tuple(skipped), write)


def entry_lines(golden: GoldenSet) -> dict[tuple[str, int], int]:
    """(query id, entry position) -> the 1-based line of each entry in the golden file."""
    raw = fileguard.read_checked(golden.path, MAX_GOLDEN_FILE_BYTES)
    nodes = _entry_nodes(raw.decode("utf-8-sig"), golden)
    out: dict[tuple[str, int], int] = {}
    for qi, query in enumerate(golden.queries):
        for ei in range(len(query.expected)):
            node = nodes[(qi, ei)]
            out.setdefault((query.id, ei), int(node.start_mark.line) + 1)
    return out


def _key(golden: GoldenSet, proposal: Proposal) -> tuple[int, int] | None:
    """(query position, entry position) of the proposal's entry in ``golden``."""
    for qi, query in enumerate(golden.queries):
        if query.id != proposal.query_id:
            continue
        for ei, entry in enumerate(query.expected):
            if entry == proposal.entry:
                return qi, ei
    return None


def _entry_nodes(text: str, golden: GoldenSet) -> dict[tuple[int, int] | None, MappingNode]:
    root = yaml.compose(text, Loader=_LOADER)
    assert isinstance(root, MappingNode)  # load_golden accepted the same text
    queries = {str(k.value): v for k, v in root.value}["queries"]
    assert isinstance(queries, SequenceNode)
    out: dict[tuple[int, int] | None, MappingNode] = {}
    for qi, node in enumerate(queries.value):
        assert isinstance(node, MappingNode)
        expected = {str(k.value): v for k, v in node.value}["expected"]
        assert isinstance(expected, SequenceNode)
        for ei, entry in enumerate(expected.value):
            assert isinstance(entry, MappingNode)
            out[(qi, ei)] = entry
    return out


def _edits(text: str, node: MappingNode, proposal: Proposal) -> list[_Edit] | str:
    """The span replacements that turn ``node`` into the proposal's target, or why not."""
    assert proposal.target is not None
    fields = {str(k.value): (k, v) for k, v in node.value}
    out = []
    _, path_node = fields["path"]
    if proposal.target.path != proposal.entry.path:
        out.append(_replace(path_node, proposal.target.path))
    heading = fields.get("heading")
    wanted = proposal.target.heading
    if wanted is not None and heading is not None and wanted != proposal.entry.heading:
        out.append(_replace(heading[1], wanted))
    elif wanted is None and heading is not None:
        removal = _remove_line(text, node, *heading)
        if removal is None:
            return "the heading cannot be removed from a flow-style entry"
        out.append(removal)
    elif wanted is not None and heading is None:
        return "adding a heading to an entry is not done in place"
    return out


def _replace(node: Node, value: str) -> _Edit:
    assert isinstance(node, ScalarNode)
    return _Edit(int(node.start_mark.index), int(node.end_mark.index), scalar(value, node.style))


def scalar(value: str, style: str | None) -> str:
    """``value`` as a YAML scalar in ``style`` (None plain, ``'`` or ``"``) when that style
    can hold it and reads back as the same string, else plain-or-quoted as YAML dumps it."""
    if style == '"':
        return json.dumps(value, ensure_ascii=False)  # JSON's escapes are YAML's
    if style == "'" and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    dumped = yaml.safe_dump(value, allow_unicode=True, width=10**9, default_flow_style=True)
    return dumped.removesuffix("\n...\n").rstrip("\n")


def _remove_line(text: str, entry: MappingNode, key: Node, value: Node) -> _Edit | None:
    """The ``heading:`` line of a block-style entry, whole (comment and newline included)."""
    if entry.flow_style or key.start_mark.line != value.end_mark.line:
        return None
    first = entry.value[0][0]
    if first is key:  # `- heading: x` carries the dash: keep the entry's first line
        return None
    start = text.rfind("\n", 0, key.start_mark.index) + 1
    if text[start : key.start_mark.index].strip():
        return None  # something else shares the line
    end = text.find("\n", value.end_mark.index)
    return _Edit(start, len(text) if end < 0 else end + 1, "")


def _check(golden: GoldenSet, data: bytes, applied: Sequence[Proposal]) -> None:
    """The rewritten file loads, and differs from the old one in exactly ``applied``."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / golden.path.name
        probe.write_bytes(data)
        try:
            after = load_golden(probe)
        except GoldenError as exc:
            raise GoldenError(
                f"the rewritten golden file would not load ({exc.message}); nothing written",
                "report this as a groove bug, with the golden file",
            ) from exc
    wanted = [[e for e in q.expected] for q in golden.queries]
    for proposal in applied:
        key = _key(golden, proposal)
        assert key is not None and proposal.target is not None
        wanted[key[0]][key[1]] = proposal.target
    got = [list(q.expected) for q in after.queries]
    if got != wanted or [q.id for q in after.queries] != [q.id for q in golden.queries]:
        raise GoldenError(
            "the rewritten golden file would not say what the doctor meant; nothing written",
            "report this as a groove bug, with the golden file",
        )
