"""The golden YAML file: guarded read, strict schema, raw-byte hash.

Schema (every level rejects unknown and duplicate keys)::

    defaults:               optional; reserved: both keys are checked and then ignored
      limit: <u32>          optional
      rerank: <bool>        optional
    queries:                required list (may be empty)
      - id: <str>           optional; default = the first 32 code points of `query`, untrimmed
        query: <str>        required
        expected:           required list of at least one entry (an empty list is refused at
          - path: <str>         its line); path required, non-empty, KB-relative and
            heading: <str>      compared verbatim (never normalised here); heading optional
        tags: [<str>, ...]  optional; reserved

A string field takes any non-null scalar as written (``id: 42`` is the id "42",
``heading: No`` the heading "No"), as the reference's YAML library does
(docs/architecture.md, "Numbers that must stay bit-identical"); ``null``/``~``
means "absent" for optional fields and is a type error for required ones.

Errors are GoldenError with one line and a hint: ``no golden file at {path}``;
``refusing to read the golden file: {reason}`` (file guard); ``failed to read the golden
file: {path}`` (other I/O); ``failed to parse golden file: {path}: line {n}: {what}`` for
YAML syntax, schema and query (``check_query``) errors.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError

from groove import fileguard
from groove.errors import FileRefusedError, GoldenError, QueryError, literal
from groove.golden.lines import utf8_text
from groove.metrics import Expected

MAX_GOLDEN_FILE_BYTES = 1_048_576
DEFAULT_ID_CHARS = 32

# libyaml composes a 1 MiB file about 4x faster than the pure-Python parser; both give marks.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG = "tag:yaml.org,2002:"
_U32_MAX = 2**32 - 1

_TOP_FIELDS = ("defaults", "queries")
_DEFAULTS_FIELDS = ("limit", "rerank")
_QUERY_FIELDS = ("id", "query", "expected", "tags")
_EXPECTED_FIELDS = ("path", "heading")

_ABSENT_HINT = "pass {give} or create <kb>/.groove-eval.yml"  # {give}: groove.errors
_REFUSED_HINT = "point {give} at a regular file (a copy, not a link) up to 1 MiB"
_SCHEMA_HINT = (
    "golden schema: queries: [{query, expected: [{path, heading?}], id?, tags?}], "
    "defaults?: {limit?, rerank?}"
)
_EMPTY_EXPECTED_HINT = (
    "list at least one note that answers the query under `expected` (path, optional "
    "heading), or leave the query out until the knowledge base holds its answer"
)
_RELEVANCE_HINT = (
    "graded relevance is not supported: every entry under `expected` is relevant; "
    "drop `relevance` (list only the relevant paths)"
)


@dataclass(frozen=True)
class GoldenQuery:
    """One golden query; ``line`` is the 1-based YAML line where its mapping starts."""

    id: str
    query: str
    expected: tuple[Expected, ...]
    tags: tuple[str, ...]
    line: int | None


@dataclass(frozen=True)
class GoldenSet:
    """A loaded golden file; ``sha256`` is the lowercase hex SHA-256 of its raw bytes."""

    path: Path
    queries: tuple[GoldenQuery, ...]
    sha256: str


def load_golden(path: Path, *, check_query: Callable[[str], object] | None = None) -> GoldenSet:
    """Read, validate and hash the golden file at ``path``.

    ``check_query`` (e.g. ``groove.engine.query.compile_query``) is called with each query text in
    file order; a QueryError it raises becomes a GoldenError naming the line and query id,
    so that a query tune or eval could never run fails before any work starts.
    """
    data = _read(path)
    try:
        queries = _Schema(check_query).golden(_compose(data))
    except _Problem as problem:
        where = "" if problem.line is None else f"line {problem.line}: "
        raise GoldenError(
            f"failed to parse golden file: {path}: {where}{problem.what}",
            hint=problem.hint or _SCHEMA_HINT,
        ) from None
    return GoldenSet(path=path, queries=queries, sha256=hashlib.sha256(data).hexdigest())


def default_id(query: str) -> str:
    """The id of a query that has none: its first 32 code points, not trimmed."""
    return query[:DEFAULT_ID_CHARS]


def _read(path: Path) -> bytes:
    if not fileguard.is_present(path):
        raise GoldenError(literal(f"no golden file at {path}"), _ABSENT_HINT, setting="golden")
    try:
        return fileguard.read_checked(path, MAX_GOLDEN_FILE_BYTES)
    except FileRefusedError as exc:
        raise GoldenError(
            literal(f"refusing to read the golden file: {exc.reason}"),
            literal(exc.hint) if exc.hint else _REFUSED_HINT,
            setting="golden",
        ) from exc
    except OSError as exc:
        raise GoldenError(
            f"failed to read the golden file: {path}",
            hint=f"check that the file is readable ({exc.strerror or exc})",
        ) from exc


class _Problem(Exception):
    """A parse or schema problem at a line; load_golden adds the path."""

    def __init__(self, line: int | None, what: str, hint: str | None = None) -> None:
        super().__init__(what)
        self.line = line
        self.what = what
        self.hint = hint


def _compose(data: bytes) -> Node | None:
    text = utf8_text(data, lambda line: _Problem(line, "invalid UTF-8"))
    try:
        return yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else mark.line + 1
        raise _Problem(line, exc.problem or exc.context or "invalid YAML") from None
    except ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise _Problem(line, f"unacceptable character #x{exc.character:04x}") from None
    except yaml.YAMLError as exc:
        raise _Problem(None, str(exc).replace("\n", " ")) from None
    except RecursionError:
        raise _Problem(None, "nesting too deep") from None


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1


def _tag(node: Node) -> str:
    return str(node.tag).removeprefix(_TAG)


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and _tag(node) == "null"


def _describe(node: Node) -> str:
    """A node's type and value in serde's words: ``string "x"``, ``integer `3```, ``a map``."""
    if isinstance(node, MappingNode):
        return "a map"
    if isinstance(node, SequenceNode):
        return "a sequence"
    value, tag = str(node.value), _tag(node)
    if tag == "null":
        return "null"
    if tag in ("bool", "int", "float"):
        kind = {"bool": "boolean", "int": "integer", "float": "floating point"}[tag]
        return f"{kind} `{value}`"
    return f"string {_quote(value)}"


def _quote(text: str, limit: int = 60) -> str:
    """A one-line, quoted rendering of user text for an error message."""
    short = text if len(text) <= limit else text[: limit - 1] + "…"
    return json.dumps(short, ensure_ascii=False)


def _printable(name: str) -> str:
    """A field name as it can stand in a one-line message: control characters escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _invalid_type(node: Node, expected: str) -> _Problem:
    return _Problem(_line(node), f"invalid type: {_describe(node)}, expected {expected}")


def _one_of(names: tuple[str, ...]) -> str:
    ticked = [f"`{n}`" for n in names]
    if len(ticked) == 2:
        return f"{ticked[0]} or {ticked[1]}"
    return "one of " + ", ".join(ticked)


def _fields(node: Node, allowed: tuple[str, ...]) -> dict[str, Node]:
    """The mapping's values by key; rejects non-maps, unknown keys and repeated keys."""
    if not isinstance(node, MappingNode):
        raise _invalid_type(node, "a map")
    found: dict[str, Node] = {}
    for key, value in node.value:
        if not isinstance(key, ScalarNode):
            raise _invalid_type(key, "a field name")
        name = str(key.value)
        if name not in allowed:
            hint = _RELEVANCE_HINT if name == "relevance" else None
            what = f"unknown field `{_printable(name)}`, expected {_one_of(allowed)}"
            raise _Problem(_line(key), what, hint)
        if name in found:
            raise _Problem(_line(key), f"duplicate field `{_printable(name)}`")
        found[name] = value
    return found


def _required(fields: dict[str, Node], name: str, owner: Node) -> Node:
    if name not in fields:
        raise _Problem(_line(owner), f"missing field `{name}`")
    return fields[name]


def _string(node: Node) -> str:
    if not isinstance(node, ScalarNode) or _is_null(node):
        raise _invalid_type(node, "a string")
    return str(node.value)


def _optional_string(node: Node | None) -> str | None:
    return None if node is None or _is_null(node) else _string(node)


def _sequence(node: Node) -> list[Node]:
    if not isinstance(node, SequenceNode):
        raise _invalid_type(node, "a sequence")
    return list(node.value)


class _Schema:
    """Walks the composed YAML tree level by level, in document order."""

    def __init__(self, check_query: Callable[[str], object] | None) -> None:
        self._check_query = check_query

    def golden(self, root: Node | None) -> tuple[GoldenQuery, ...]:
        if root is None:
            raise _Problem(1, "missing field `queries`")
        fields = _fields(root, _TOP_FIELDS)
        defaults = fields.get("defaults")
        if defaults is not None and not _is_null(defaults):
            self._defaults(defaults)
        queries = _sequence(_required(fields, "queries", root))
        return tuple(self._query(node) for node in queries)

    def _defaults(self, node: Node) -> None:
        # Reserved: checked so that a typo fails, never used (the CLI flags decide).
        fields = _fields(node, _DEFAULTS_FIELDS)
        limit = fields.get("limit")
        if limit is not None and not _is_null(limit):
            _u32(limit)
        rerank = fields.get("rerank")
        if rerank is not None and not _is_null(rerank):
            _boolean(rerank)

    def _query(self, node: Node) -> GoldenQuery:
        fields = _fields(node, _QUERY_FIELDS)
        text = _string(_required(fields, "query", node))
        expected_node = _required(fields, "expected", node)
        expected = tuple(_expected(e) for e in _sequence(expected_node))
        tags_node = fields.get("tags")
        tags: tuple[str, ...] = ()
        if tags_node is not None and not _is_null(tags_node):
            tags = tuple(_string(t) for t in _sequence(tags_node))
        query_id = _optional_string(fields.get("id"))
        query = GoldenQuery(
            id=default_id(text) if query_id is None else query_id,
            query=text,
            expected=expected,
            tags=tags,
            line=_line(node),
        )
        if not expected:
            # The seed requires one expected hit at least: an empty list scores nothing.
            what = f"query {_quote(query.id)}: `expected` is empty, at least one entry is required"
            raise _Problem(_line(expected_node), what, _EMPTY_EXPECTED_HINT)
        self._check(query)
        return query

    def _check(self, query: GoldenQuery) -> None:
        if self._check_query is None:
            return
        try:
            self._check_query(query.query)
        except QueryError as exc:
            what = f"query {_quote(query.id)}: {exc.message}"
            raise _Problem(query.line, what, exc.hint) from None


def _expected(node: Node) -> Expected:
    fields = _fields(node, _EXPECTED_FIELDS)
    path_node = _required(fields, "path", node)
    path = _string(path_node)
    if not path:
        what = "invalid value: empty string, expected a KB-relative path such as docs/a.md"
        raise _Problem(_line(path_node), what)
    return Expected(path=path, heading=_optional_string(fields.get("heading")))


def _u32(node: Node) -> int:
    if not isinstance(node, ScalarNode) or _tag(node) != "int":
        raise _invalid_type(node, "u32")
    try:
        value = SafeConstructor().construct_yaml_int(node)
    except ValueError:
        # YAML 1.1 resolves "0b_" or "0x_" as an int that has no digits to read.
        what = f"invalid type: string {_quote(str(node.value))}, expected u32"
        raise _Problem(_line(node), what) from None
    if not 0 <= value <= _U32_MAX:
        raise _Problem(_line(node), f"invalid value: integer `{node.value}`, expected u32")
    return int(value)


def _boolean(node: Node) -> bool:
    if not isinstance(node, ScalarNode) or _tag(node) != "bool":
        raise _invalid_type(node, "a boolean")
    return bool(SafeConstructor().construct_yaml_bool(node))
