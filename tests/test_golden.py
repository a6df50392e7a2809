"""Golden loader: schema, exact error messages and lines, guards, hash, id default."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import pytest
import yaml

from groove import fileguard
from groove.errors import GoldenError, GrooveError, QueryError
from groove.golden import queries as golden
from groove.golden.queries import (
    MAX_GOLDEN_FILE_BYTES,
    GoldenQuery,
    GoldenSet,
    load_golden,
)
from groove.metrics import Expected
from groove.settings.spelling import spelled

FIXTURES = Path(__file__).parent / "fixtures"
SCHEMA_HINT = (
    "golden schema: queries: [{query, expected: [{path, heading?}], id?, tags?}], "
    "defaults?: {limit?, rerank?}"
)

VALID = """\
# golden set for the tests
defaults:
  limit: 20
  rerank: false
queries:
  - id: rrf-basics
    query: "RRF の k パラメータの意味は？"
    expected:
      - path: "docs/ARCHITECTURE.md"
        heading: "Data flow"
      - path: src/db.rs
    tags: [fusion, ja]

  - query: チャンクの重複排除はどうしている？
    expected:
      - path: src/indexer.rs
"""


def write(tmp_path: Path, text: str | bytes, name: str = "golden.yml") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def parse_error(tmp_path: Path, text: str | bytes) -> GoldenError:
    path = write(tmp_path, text)
    with pytest.raises(GoldenError) as info:
        load_golden(path)
    return info.value


def what(tmp_path: Path, text: str | bytes) -> str:
    """The part of a parse error after the path prefix."""
    err = parse_error(tmp_path, text)
    prefix = f"failed to parse golden file: {tmp_path / 'golden.yml'}: "
    assert err.message.startswith(prefix)
    return err.message[len(prefix) :]


# --- a valid file -------------------------------------------------------------------------


def test_loads_queries_in_file_order_with_lines(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    got = load_golden(path)
    assert got == GoldenSet(
        path=path,
        queries=(
            GoldenQuery(
                id="rrf-basics",
                query="RRF の k パラメータの意味は？",
                expected=(Expected("docs/ARCHITECTURE.md", "Data flow"), Expected("src/db.rs")),
                tags=("fusion", "ja"),
                line=6,
            ),
            GoldenQuery(
                id="チャンクの重複排除はどうしている？",
                query="チャンクの重複排除はどうしている？",
                expected=(Expected("src/indexer.rs"),),
                tags=(),
                line=14,
            ),
        ),
        sha256=hashlib.sha256(VALID.encode()).hexdigest(),
    )


def test_default_id_is_first_32_code_points_untrimmed(tmp_path: Path) -> None:
    query = "  再ランキングの評価について知りたいのですが、どの指標を最初に見るべきでしょうか"
    path = write(tmp_path, f'queries:\n  - query: "{query}"\n    expected: [{{path: a.md}}]\n')
    (q,) = load_golden(path).queries
    assert q.id == query[:32]
    assert len(q.id) == 32
    assert q.id == "  再ランキングの評価について知りたいのですが、どの指標を最初に"
    assert len(q.id.encode()) == 92  # code points, not bytes


def test_null_id_means_default(tmp_path: Path) -> None:
    path = write(tmp_path, "queries:\n  - id: ~\n    query: short\n    expected: [{path: a.md}]\n")
    assert load_golden(path).queries[0].id == "short"


def test_string_fields_take_scalars_as_written(tmp_path: Path) -> None:
    text = (
        "queries:\n"
        "  - id: 42\n"
        "    query: 1.10\n"
        "    expected:\n"
        "      - path: 2024.md\n"
        "        heading: No\n"
        "    tags: [yes, 0x1F]\n"
    )
    (q,) = load_golden(write(tmp_path, text)).queries
    assert (q.id, q.query, q.expected, q.tags) == (
        "42",
        "1.10",
        (Expected("2024.md", "No"),),
        ("yes", "0x1F"),
    )


def test_paths_are_kept_verbatim(tmp_path: Path) -> None:
    text = (
        "queries:\n  - query: q\n    expected:\n"
        "      - path: ./Docs\\A.md \n"
        "      - path: /abs/b.md\n"
        '      - path: " c.md"\n'
    )
    (q,) = load_golden(write(tmp_path, text)).queries
    assert [e.path for e in q.expected] == ["./Docs\\A.md", "/abs/b.md", " c.md"]


def test_empty_queries_are_allowed(tmp_path: Path) -> None:
    assert load_golden(write(tmp_path, "queries: []\n")).queries == ()


def test_empty_expected_is_refused_at_its_line(tmp_path: Path) -> None:
    text = (
        "queries:\n  - query: q\n    expected: [{path: a.md}]\n"
        "  - id: orphan\n    query: r\n    expected: []\n"
    )
    path = write(tmp_path, text)
    with pytest.raises(GoldenError) as info:
        load_golden(path)
    assert info.value.message == (
        f"failed to parse golden file: {path}: line 6: "
        'query "orphan": `expected` is empty, at least one entry is required'
    )
    assert info.value.hint is not None and "at least one note" in info.value.hint


def test_null_optional_fields_read_as_absent(tmp_path: Path) -> None:
    text = (
        "defaults: ~\nqueries:\n  - query: q\n    tags: ~\n"
        "    expected:\n      - {path: a.md, heading: null}\n"
    )
    (q,) = load_golden(write(tmp_path, text)).queries
    assert (q.tags, q.expected) == ((), (Expected("a.md"),))


def test_flow_style_and_yaml11_defaults(tmp_path: Path) -> None:
    text = 'defaults: {limit: 0x10, rerank: yes}\nqueries: [{query: q, expected: [{path: "a"}]}]\n'
    (q,) = load_golden(write(tmp_path, text)).queries
    assert (q.line, q.expected) == (2, (Expected("a"),))


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + VALID.encode()
    got = load_golden(write(tmp_path, data))
    assert len(got.queries) == 2
    assert got.sha256 == hashlib.sha256(data).hexdigest()


def test_hash_is_over_raw_bytes_and_moves_with_a_comment(tmp_path: Path) -> None:
    first = load_golden(write(tmp_path, VALID, "a.yml"))
    second = load_golden(write(tmp_path, VALID.replace("for the tests", "for tests"), "b.yml"))
    assert first.queries == second.queries
    assert first.sha256 != second.sha256
    assert first.sha256 == hashlib.sha256((tmp_path / "a.yml").read_bytes()).hexdigest()
    assert first.sha256 == first.sha256.lower()
    assert len(first.sha256) == 64


@pytest.mark.parametrize("name", ["golden_en.yml", "golden_ja.yml"])
def test_fixture_golden_files_load_with_the_query_compiler(name: str) -> None:
    from groove.engine.query import compile_query

    got = load_golden(FIXTURES / name, check_query=compile_query)
    assert len(got.queries) > 0
    assert all(q.line is not None for q in got.queries)


# --- absent, refused, unreadable ----------------------------------------------------------


def test_absent_file(tmp_path: Path) -> None:
    path = tmp_path / ".groove-eval.yml"
    with pytest.raises(GoldenError) as info:
        load_golden(path)
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == f"no golden file at {path}"
    assert hint == "pass golden= or create <kb>/.groove-eval.yml"
    assert info.value.exit_code == 2


def test_symlink_is_refused(tmp_path: Path) -> None:
    target = write(tmp_path, VALID, "real.yml")
    link = tmp_path / "golden.yml"
    link.symlink_to(target)
    with pytest.raises(GoldenError) as info:
        load_golden(link)
    assert info.value.message == (
        f"refusing to read the golden file: {link} is not a regular file and was skipped: "
        "something other than the note that was collected (a symlink, a device, a named pipe) "
        "was in its place when it came to be read (BU-20)."
    )


def test_dangling_symlink_is_present_and_refused(tmp_path: Path) -> None:
    link = tmp_path / "golden.yml"
    link.symlink_to(tmp_path / "missing.yml")
    with pytest.raises(GoldenError) as info:
        load_golden(link)
    assert info.value.message.startswith(f"refusing to read the golden file: {link} is not a")


def test_hard_link_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    os.link(path, tmp_path / "other.yml")
    with pytest.raises(GoldenError) as info:
        load_golden(path)
    assert info.value.message == (
        f"refusing to read the golden file: {path} has more than one name (hard link) and was "
        "skipped: groove cannot tell whether the other name is outside the knowledge base, and "
        "a hard link is how a file you cannot read gets indexed on your behalf (BU-20). Replace "
        "it with a copy if it belongs in the index."
    )


def test_directory_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "golden.yml"
    folder.mkdir()
    with pytest.raises(GoldenError) as info:
        load_golden(folder)
    assert info.value.message.startswith(
        f"refusing to read the golden file: {folder} is not a regular file"
    )


def padded(size: int) -> bytes:
    head = b"queries: []\n#"
    return head + b"x" * (size - len(head) - 1) + b"\n"


def test_file_of_exactly_one_mib_loads(tmp_path: Path) -> None:
    data = padded(MAX_GOLDEN_FILE_BYTES)
    assert len(data) == 1_048_576
    assert load_golden(write(tmp_path, data)).queries == ()


def test_file_one_byte_over_one_mib_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, padded(MAX_GOLDEN_FILE_BYTES + 1))
    with pytest.raises(GoldenError) as info:
        load_golden(path)
    assert info.value.message == (
        f"refusing to read the golden file: {path} is 1048577 bytes, over the 1048576 byte "
        "limit, measured on the handle it would have been read from"
    )


def test_other_io_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, VALID)

    def broken(p: Path, cap: int) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(fileguard, "read_checked", broken)
    with pytest.raises(GoldenError) as info:
        load_golden(path)
    assert info.value.message == f"failed to read the golden file: {path}"
    assert info.value.hint == "check that the file is readable (Input/output error)"


# --- schema errors ------------------------------------------------------------------------


def test_graded_relevance_is_rejected_with_its_own_hint(tmp_path: Path) -> None:
    text = "queries:\n  - query: q\n    expected:\n      - path: a.md\n        relevance: 2\n"
    err = parse_error(tmp_path, text)
    assert err.message == (
        f"failed to parse golden file: {tmp_path / 'golden.yml'}: line 5: "
        "unknown field `relevance`, expected `path` or `heading`"
    )
    assert err.hint == (
        "graded relevance is not supported: every entry under `expected` is relevant; "
        "drop `relevance` (list only the relevant paths)"
    )
    assert err.exit_code == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "queries: []\nversion: 2\n",
            "line 2: unknown field `version`, expected `defaults` or `queries`",
        ),
        (
            "defaults:\n  limit: 5\n  k: 3\nqueries: []\n",
            "line 3: unknown field `k`, expected `limit` or `rerank`",
        ),
        (
            "queries:\n  - query: q\n    expected: [{path: a.md}]\n    weight: 1\n",
            "line 4: unknown field `weight`, expected one of `id`, `query`, `expected`, `tags`",
        ),
        (
            "queries: []\n<<: {a: 1}\n",
            "line 2: unknown field `<<`, expected `defaults` or `queries`",
        ),
        (  # a key with a line break (found by the fuzzer) stays on one line
            'queries: []\n"\\n": 1\n',
            "line 2: unknown field `\\n`, expected `defaults` or `queries`",
        ),
    ],
)
def test_unknown_fields_at_every_level(tmp_path: Path, text: str, expected: str) -> None:
    assert what(tmp_path, text) == expected
    assert parse_error(tmp_path, text).hint == SCHEMA_HINT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("queries: []\nqueries: []\n", "line 2: duplicate field `queries`"),
        ("defaults:\n  limit: 1\n  limit: 2\nqueries: []\n", "line 3: duplicate field `limit`"),
        (
            "queries:\n  - query: a\n    expected: [{path: a.md}]\n    query: b\n",
            "line 4: duplicate field `query`",
        ),
        (
            "queries:\n  - query: a\n    expected:\n      - {path: x, path: y}\n",
            "line 4: duplicate field `path`",
        ),
    ],
)
def test_duplicate_keys_at_every_level(tmp_path: Path, text: str, expected: str) -> None:
    assert what(tmp_path, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("defaults: {}\n", "line 1: missing field `queries`"),
        ("", "line 1: missing field `queries`"),
        ("# only a comment\n", "line 1: missing field `queries`"),
        ("queries:\n  - id: a\n    expected: [{path: a.md}]\n", "line 2: missing field `query`"),
        ("queries:\n  - query: a\n    tags: []\n", "line 2: missing field `expected`"),
        (
            "queries:\n  - query: a\n    expected:\n      - heading: H\n",
            "line 4: missing field `path`",
        ),
    ],
)
def test_missing_fields(tmp_path: Path, text: str, expected: str) -> None:
    assert what(tmp_path, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- a\n- b\n", "line 1: invalid type: a sequence, expected a map"),
        ("queries: {a: 1}\n", "line 1: invalid type: a map, expected a sequence"),
        ("queries: none\n", 'line 1: invalid type: string "none", expected a sequence'),
        ("queries:\n", "line 1: invalid type: null, expected a sequence"),
        ("queries:\n  - just text\n", 'line 2: invalid type: string "just text", expected a map'),
        (
            "queries:\n  - query: [a, b]\n    expected: [{path: a.md}]\n",
            "line 2: invalid type: a sequence, expected a string",
        ),
        (
            "queries:\n  - query: ~\n    expected: [{path: a.md}]\n",
            "line 2: invalid type: null, expected a string",
        ),
        (
            "queries:\n  - query:\n    expected: [{path: a.md}]\n",
            "line 2: invalid type: null, expected a string",
        ),
        (
            "queries:\n  - query: q\n    expected: a.md\n",
            'line 3: invalid type: string "a.md", expected a sequence',
        ),
        (
            "queries:\n  - query: q\n    expected:\n",
            "line 3: invalid type: null, expected a sequence",
        ),
        (
            "queries:\n  - query: q\n    expected: [a.md]\n",
            'line 3: invalid type: string "a.md", expected a map',
        ),
        (
            "queries:\n  - query: q\n    expected:\n      - path: ~\n",
            "line 4: invalid type: null, expected a string",
        ),
        (
            "queries:\n  - query: q\n    expected:\n      - path: a.md\n        heading: {x: 1}\n",
            "line 5: invalid type: a map, expected a string",
        ),
        (
            "queries:\n  - query: q\n    expected: [{path: a.md}]\n    tags: fusion\n",
            'line 4: invalid type: string "fusion", expected a sequence',
        ),
        (
            "queries:\n  - query: q\n    expected: [{path: a.md}]\n    tags: [a, [b]]\n",
            "line 4: invalid type: a sequence, expected a string",
        ),
        (
            "queries:\n  - query: q\n    expected: [{path: a.md}]\n    id: [x]\n",
            "line 4: invalid type: a sequence, expected a string",
        ),
        (
            "defaults:\n  limit: ten\nqueries: []\n",
            'line 2: invalid type: string "ten", expected u32',
        ),
        (
            "defaults:\n  limit: 1.5\nqueries: []\n",
            "line 2: invalid type: floating point `1.5`, expected u32",
        ),
        (
            "defaults:\n  limit: -1\nqueries: []\n",
            "line 2: invalid value: integer `-1`, expected u32",
        ),
        (
            "defaults:\n  limit: 4294967296\nqueries: []\n",
            "line 2: invalid value: integer `4294967296`, expected u32",
        ),
        (
            "defaults:\n  rerank: 1\nqueries: []\n",
            "line 2: invalid type: integer `1`, expected a boolean",
        ),
        (
            'defaults:\n  rerank: "true"\nqueries: []\n',
            'line 2: invalid type: string "true", expected a boolean',
        ),
        ("defaults: [1]\nqueries: []\n", "line 1: invalid type: a sequence, expected a map"),
        ("[a]: 1\nqueries: []\n", "line 1: invalid type: a sequence, expected a field name"),
    ],
)
def test_wrong_types(tmp_path: Path, text: str, expected: str) -> None:
    assert what(tmp_path, text) == expected


def test_long_values_are_shortened_to_one_line(tmp_path: Path) -> None:
    text = 'queries: "' + "line one\\n" + "x" * 100 + '"\n'
    shown = '"line one\\n' + "x" * 50 + '…"'
    assert what(tmp_path, text) == f"line 1: invalid type: string {shown}, expected a sequence"


def test_empty_path_is_rejected(tmp_path: Path) -> None:
    text = 'queries:\n  - query: q\n    expected:\n      - path: ""\n'
    assert what(tmp_path, text) == (
        "line 4: invalid value: empty string, expected a KB-relative path such as docs/a.md"
    )


def test_first_error_in_document_order_wins(tmp_path: Path) -> None:
    text = (
        "queries:\n  - query: q\n    expected: [{path: a.md}]\n    extra: 1\n"
        "  - expected: [{path: a.md}]\n"
    )
    assert what(tmp_path, text) == (
        "line 4: unknown field `extra`, expected one of `id`, `query`, `expected`, `tags`"
    )


# --- YAML syntax and encoding -------------------------------------------------------------


@pytest.mark.parametrize(
    ("loader", "problem"),
    [
        (yaml.SafeLoader, "expected ',' or ']', but got ':'"),
        (getattr(yaml, "CSafeLoader", None), "did not find expected ',' or ']'"),
    ],
)
def test_yaml_syntax_error_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: type | None, problem: str
) -> None:
    if loader is None:
        pytest.skip("PyYAML built without libyaml")
    monkeypatch.setattr(golden, "_LOADER", loader)
    text = "queries:\n  - query: q\n    expected: [a.md\n  - query: r\n"
    assert what(tmp_path, text) == f"line 4: {problem}"


def test_two_documents_are_a_syntax_error(tmp_path: Path) -> None:
    assert what(tmp_path, "queries: []\n---\nqueries: []\n").startswith("line 2: ")


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    data = b"queries:\n  - query: caf\xe9\n    expected: [{path: a.md}]\n"
    assert what(tmp_path, data) == "line 2: invalid UTF-8"


def test_control_character_names_the_line(tmp_path: Path) -> None:
    assert what(tmp_path, 'queries:\n  - query: "a\x07b"\n    expected: [{path: a.md}]\n') == (
        "line 2: unacceptable character #x0007"
    )


@pytest.mark.parametrize(
    ("loader", "depth", "expected"),
    [
        # the pure-Python composer recurses (Python's limit); libyaml stops at 1000 levels
        (yaml.SafeLoader, 800, "nesting too deep"),
        (getattr(yaml, "CSafeLoader", None), 1001, "line 1: exceeded maximum nesting depth"),
    ],
)
def test_absurd_nesting_is_a_parse_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: type | None, depth: int, expected: str
) -> None:
    if loader is None:
        pytest.skip("PyYAML built without libyaml")
    monkeypatch.setattr(golden, "_LOADER", loader)
    assert what(tmp_path, "queries: " + "[" * depth + "]" * depth + "\n") == expected


# --- check_query --------------------------------------------------------------------------


def test_check_query_sees_every_query_in_order(tmp_path: Path) -> None:
    seen: list[str] = []
    load_golden(write(tmp_path, VALID), check_query=seen.append)
    assert seen == ["RRF の k パラメータの意味は？", "チャンクの重複排除はどうしている？"]


def test_exclusion_only_query_is_rejected_at_load(tmp_path: Path) -> None:
    def compile_stub(text: str) -> object:
        if all(token.startswith("-") for token in text.split()):
            raise QueryError(
                "query has only exclusions (-term): nothing is left to search for",
                hint="add a term to search for",
            )
        return text

    text = (
        "queries:\n  - query: rollback\n    expected: [{path: a.md}]\n"
        "  - id: no-positive\n    query: -canary -staging\n    expected: [{path: a.md}]\n"
    )
    path = write(tmp_path, text)
    with pytest.raises(GoldenError) as info:
        load_golden(path, check_query=compile_stub)
    assert info.value.message == (
        f'failed to parse golden file: {path}: line 4: query "no-positive": '
        "query has only exclusions (-term): nothing is left to search for"
    )
    assert info.value.hint == "add a term to search for"


def test_real_query_compiler_rejects_exclusions_only(tmp_path: Path) -> None:
    from groove.engine.query import compile_query

    path = write(tmp_path, "queries:\n  - query: -canary -staging\n    expected: [{path: a.md}]\n")
    with pytest.raises(GoldenError) as info:
        load_golden(path, check_query=compile_query)
    assert info.value.message.startswith(
        f'failed to parse golden file: {path}: line 2: query "-canary -staging": '
    )


def test_check_query_bugs_are_not_disguised(tmp_path: Path) -> None:
    def broken(text: str) -> object:
        raise RuntimeError("bug")

    with pytest.raises(RuntimeError, match="bug"):
        load_golden(write(tmp_path, VALID), check_query=broken)


def test_golden_error_is_a_groove_error() -> None:
    assert issubclass(GoldenError, GrooveError)
