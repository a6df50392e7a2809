"""Fuzzing the two loaders a user feeds by hand: the golden YAML and groove.toml.

Whatever the bytes, ``load_golden`` either returns a GoldenSet or raises GoldenError, and
``parse_config`` / ``load_config`` either return a Config or raise ConfigError: one line and a
hint, never a traceback. Inputs: arbitrary bytes and text, YAML/TOML documents built from
random trees, schema-shaped documents with random values, and templates filled with the
scalars YAML and TOML treat specially.

The FTS query compiler and the Markdown chunker are fuzzed in tests/test_query.py and
tests/test_chunking.py.
"""

from __future__ import annotations

import datetime as dt
import math
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groove.config import Config, load_config, parse_config
from groove.engine.query import compile_query
from groove.errors import ConfigError, GoldenError
from groove.golden.queries import GoldenSet, load_golden


def examples(n: int) -> settings:
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    # One folder for every example (hypothesis reruns a test body; tmp_path would be shared).
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


def _one_line(message: str, hint: str | None) -> None:
    assert message and "\n" not in message
    assert hint and "\n" not in hint


# ---- golden ------------------------------------------------------------------------------


def load_or_error(folder: Path, data: bytes) -> GoldenSet | GoldenError:
    path = folder / "golden.yml"
    path.write_bytes(data)
    try:
        return load_golden(path, check_query=compile_query)
    except GoldenError as err:
        _one_line(err.message, err.hint)
        return err


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
YAML_SPECIAL = (
    "~", "null", "Null", "true", "yes", "No", "on", "off", "y", "n", "0", "-1", "4294967295",
    "4294967296", "0x1F", "0o17", "017", "0b101", "0b_", "0x_", "+0b_", "-0x_", "0_", "1_000",
    "1:20", "1:_", "190:20:30", ".inf", "-.inf", ".nan", "1e400", "3.", ".5", "2026-01-01",
    "2001-12-14t21:59:43.10-05:00", "!!binary aGVsbG8=", "!!str 5", "!!int 5", "!!float x",
    "!!set {a, b}", "!!omap [a: 1]", "!!timestamp x", "!!python/object:os.system x", "!foo x",
    "&a x", "*a", "*nowhere", "<<: {a: 1}", "[]", "{}", "[1, [2, [3]]]", "{a: {b: c}}", "''",
    '""', '"\\x00"', '"\\ud800"', "|\n  text", ">-\n  folded", "? complex", "- item", "%YAML",
    "---", "...", "#", "@", "`", "'unterminated", '"unterminated', "\t", "é", "検索", "\ufeff",
)  # fmt: skip

TEMPLATE = """\
defaults:
  limit: {0}
  rerank: {1}
queries:
  - id: {2}
    query: {3}
    expected:
      - path: {4}
        heading: {5}
    tags: [{6}]
"""


@pytest.mark.parametrize(("data"), [b"", b"\xff\xfe", b"\x00", b"queries: [", b"\xef\xbb\xbf"])
def test_pinned_odd_files_are_golden_errors(scratch: Path, data: bytes) -> None:
    assert isinstance(load_or_error(scratch, data), GoldenError)


@examples(300)
@given(data=st.binary(max_size=400))
def test_any_bytes_load_or_give_a_golden_error(scratch: Path, data: bytes) -> None:
    load_or_error(scratch, data)


@examples(300)
@given(text=st.text(max_size=300))
def test_any_text_loads_or_gives_a_golden_error(scratch: Path, text: str) -> None:
    load_or_error(scratch, text.encode("utf-8", "surrogatepass"))


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.dates(),
)
TREES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), inner, max_size=4)
    ),
    max_leaves=20,
)
FIELD_NAMES = st.sampled_from(
    ["queries", "defaults", "query", "expected", "path", "heading", "id", "tags", "limit",
     "rerank", "relevance", "other"]
)  # fmt: skip
SHAPED = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(FIELD_NAMES, inner, max_size=5),
    max_leaves=25,
)


def _golden_like(draw: Any) -> dict[str, Any]:
    """A document with the golden schema's shape whose every value may be wrong."""
    query = draw(st.fixed_dictionaries(
        {"query": SCALARS, "expected": st.lists(SHAPED, max_size=3)},
        optional={"id": SCALARS, "tags": SHAPED, "heading": SCALARS},
    ))  # fmt: skip
    return draw(st.fixed_dictionaries(
        {"queries": st.lists(st.just(query) | SHAPED, max_size=3)},
        optional={"defaults": SHAPED | st.fixed_dictionaries({}, optional={
            "limit": SCALARS, "rerank": SCALARS})},
    ))  # fmt: skip


@examples(150)
@given(tree=TREES)
def test_any_yaml_tree_loads_or_gives_a_golden_error(scratch: Path, tree: Any) -> None:
    load_or_error(scratch, yaml.dump(tree, Dumper=_DUMPER, allow_unicode=True).encode("utf-8"))


GOLDEN_LIKE = st.composite(lambda draw: _golden_like(draw))()


def check_schema_shaped(folder: Path, document: dict[str, Any]) -> None:
    loaded = load_or_error(folder, yaml.dump(document, Dumper=_DUMPER, allow_unicode=True).encode())
    if isinstance(loaded, GoldenSet):
        assert len(loaded.queries) == len(document["queries"])
        for query in loaded.queries:
            assert isinstance(query.id, str) and isinstance(query.query, str)
            assert all(isinstance(e.path, str) and e.path for e in query.expected)


@examples(200)
@given(document=GOLDEN_LIKE)
def test_schema_shaped_documents_load_or_give_a_golden_error(
    scratch: Path, document: dict[str, Any]
) -> None:
    check_schema_shaped(scratch, document)


@pytest.mark.slow
@examples(3000)
@given(document=GOLDEN_LIKE)
def test_many_schema_shaped_documents_load_or_give_a_golden_error(
    scratch: Path, document: dict[str, Any]
) -> None:
    check_schema_shaped(scratch, document)


@examples(300)
@given(values=st.lists(st.sampled_from(YAML_SPECIAL), min_size=7, max_size=7))
def test_special_yaml_scalars_in_every_field_load_or_give_a_golden_error(
    scratch: Path, values: list[str]
) -> None:
    load_or_error(scratch, TEMPLATE.format(*values).encode("utf-8"))


@pytest.mark.parametrize("value", ["0b_", "0x_", "+0b_", "-0x_"])
def test_an_int_tagged_scalar_with_no_digits_is_a_golden_error(scratch: Path, value: str) -> None:
    # YAML 1.1 resolves "0b_" as an int, and PyYAML's constructor then fails on it.
    err = load_or_error(scratch, f"defaults:\n  limit: {value}\nqueries: []\n".encode())
    assert isinstance(err, GoldenError)
    assert err.message.endswith(f'line 2: invalid type: string "{value}", expected u32')


# ---- groove.toml -------------------------------------------------------------------------

SOURCE = Path("/project/groove.toml")
TOP_KEYS = ["kb_path", "model", "model_path", "reranker", "exclude_headings", "exclude_dirs"]
TABLES = {
    "contextual": ["enabled"],
    "search": ["fusion", "mmr", "parent_retriever"],
    "search.fusion": ["rrf_k", "bm25_heading_weight", "bm25_context_weight",
                      "bm25_content_weight"],
    "search.mmr": ["enabled", "lambda", "same_doc_penalty"],
    "search.parent_retriever": ["enabled", "whole_doc_threshold_tokens", "max_expanded_tokens"],
    "eval": ["golden", "history_size", "k_values", "regression_threshold"],
}  # fmt: skip
PATH_KEYS = {"kb_path", "model_path", "golden"}


def parse_or_error(text: str) -> Config | ConfigError:
    try:
        return parse_config(text, SOURCE)
    except ConfigError as err:
        _one_line(err.message, err.hint)
        assert err.message.startswith(f"invalid {SOURCE}: ") or err.message.startswith(
            f"invalid TOML in {SOURCE}: "
        )
        return err


# Integers stay within TOML's 64 bits, path values never start with "~" and strings hold no
# control characters: the known bugs outside these bounds are pinned by the xfail tests below.
_TEXT = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=12)
TOML_SCALARS = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=True, allow_infinity=True),
    _TEXT,
    st.datetimes(timezones=st.none() | st.just(dt.UTC)),
    st.dates(),
    st.times(),
)
TOML_VALUES = st.recursive(
    TOML_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
NEAR_VALUES = st.one_of(
    TOML_VALUES,
    st.sampled_from([0, 1, -1, 60, 1e6, 1e6 + 1, 0.5, 2, 8192, 8193, 10_000, 10_001]),
    st.lists(st.integers(min_value=-2, max_value=10_002), max_size=4),
    st.lists(_TEXT, max_size=3),
)


def _toml_key(key: str) -> str:
    bare = key and all(c.isascii() and (c.isalnum() or c in "-_") for c in key)
    return key if bare else _toml_string(key)


def _toml_string(text: str) -> str:
    escaped = "".join(
        c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}"
        if ord(c) < 0x10000 else f"\\U{ord(c):08x}"
        for c in text
    )  # fmt: skip
    return f'"{escaped}"'


def toml_value(value: Any) -> str:
    """``value`` written as a TOML inline value (floats by their TOML spelling)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    items = (f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items())
    return "{" + ", ".join(items) + "}"


def _no_home_paths(value: Any) -> Any:
    return "x" + value if isinstance(value, str) and value.startswith("~") else value


def _between(lo: float, hi: float) -> st.SearchStrategy[float]:
    edges = st.sampled_from([lo, hi, (lo + hi) / 2])
    return edges | st.floats(min_value=lo, max_value=hi) | st.integers(int(lo), int(hi))


def _whole(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.sampled_from([lo, hi]) | st.integers(lo, hi)


_NAME = _TEXT.filter(bool)
GOOD = {
    "kb_path": _NAME, "model_path": _NAME, "golden": _NAME, "model": _NAME, "reranker": _NAME,
    "exclude_headings": st.lists(_NAME, max_size=3), "exclude_dirs": st.lists(_NAME, max_size=3),
    "enabled": st.booleans(),
    "rrf_k": _between(1, 1e6), "bm25_heading_weight": _between(0, 1e6),
    "bm25_context_weight": _between(0, 1e6), "bm25_content_weight": _between(0, 1e6),
    "lambda": _between(0, 1), "same_doc_penalty": _between(0, 1),
    "whole_doc_threshold_tokens": _whole(0, 8191), "max_expanded_tokens": _whole(1, 8192),
    "history_size": _whole(1, 10_000), "k_values": st.lists(_whole(1, 10_000), min_size=1),
    "regression_threshold": _between(0, 1),
}  # fmt: skip


def _value(draw: Any, key: str) -> str:
    """Nine times in ten a value of the right kind and range (edges included), else any."""
    wrong = draw(st.integers(0, 9)) == 0
    value = draw(NEAR_VALUES if wrong else GOOD.get(key, TOML_VALUES))
    return f"{_toml_key(key)} = {toml_value(_no_home_paths(value))}"


def _keys(draw: Any, allowed: list[str]) -> list[str]:
    """Some of ``allowed``, and one time in twelve a misspelt key as well."""
    keys: list[str] = draw(st.lists(st.sampled_from(allowed), unique=True, max_size=4))
    if draw(st.integers(0, 11)) == 0:
        keys.append(draw(st.sampled_from(["typo", allowed[0] + "s", allowed[-1][:-1]])))
    return keys


@st.composite
def config_documents(draw: Any) -> str:
    """A valid TOML document with groove's tables and keys set at random (a few typos)."""
    lines = [_value(draw, key) for key in _keys(draw, TOP_KEYS)]
    for table in draw(st.lists(st.sampled_from(list(TABLES)), unique=True, max_size=4)):
        chosen = _keys(draw, TABLES[table])
        # a sub-table is written as its own [header], not as a key of its parent
        body = [_value(draw, key) for key in chosen if f"{table}.{key}" not in TABLES]
        lines += [f"[{table}]", *body]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n", "[eval]\n", "[search.fusion]\n"])
def test_pinned_empty_configs_are_the_defaults(text: str) -> None:
    loaded = parse_or_error(text)
    assert isinstance(loaded, Config)
    assert (loaded.search, loaded.values) == (Config().search, ())


@examples(500)
@given(text=st.text(max_size=300))
def test_any_text_parses_or_gives_a_config_error(text: str) -> None:
    parse_or_error(text)


def check_config_document(text: str) -> None:
    loaded = parse_or_error(text)
    if isinstance(loaded, Config):
        fusion = loaded.search.fusion
        assert 1.0 <= fusion.rrf_k <= 1e6 and any(fusion.weights)
        k_values = loaded.value("eval.k_values")
        assert all(1 <= k <= 10_000 for k in k_values) and k_values
        assert 1 <= loaded.value("eval.history_size") <= 10_000
        parent = loaded.search.parent_retriever
        assert parent.whole_doc_threshold_tokens < parent.max_expanded_tokens <= 8192


@examples(250)
@given(text=config_documents())
def test_random_valid_toml_configs_parse_or_give_a_config_error(text: str) -> None:
    check_config_document(text)


@pytest.mark.slow
@examples(5000)
@given(text=config_documents())
def test_many_random_valid_toml_configs_parse_or_give_a_config_error(text: str) -> None:
    check_config_document(text)


@examples(200)
@given(data=st.binary(max_size=200))
def test_any_config_file_bytes_load_or_give_a_config_error(scratch: Path, data: bytes) -> None:
    path = scratch / "groove.toml"
    path.write_bytes(data)
    try:
        load_config(path)
    except ConfigError as err:
        _one_line(err.message, err.hint)


@pytest.mark.parametrize(
    "text",
    [
        "[search.fusion]\nrrf_k = 1" + "0" * 400 + "\n",
        "[eval]\nregression_threshold = -9" + "9" * 400,
    ],
)
def test_an_integer_beyond_float_range_is_a_config_error(text: str) -> None:
    assert isinstance(parse_or_error(text), ConfigError)


@pytest.mark.parametrize(
    "text",
    [
        'kb_path = "~nosuchuser/kb"\n',
        'model_path = "~\\u0000"\n',
        '[eval]\ngolden = "~no1/g.yml"\n',
    ],
)
def test_a_home_folder_that_cannot_be_found_is_a_config_error(text: str) -> None:
    assert isinstance(parse_or_error(text), ConfigError)


@pytest.mark.parametrize("text", ['model = " \\n "\n', '[eval]\nk_values = ["\\n"]\n'])
def test_a_value_with_a_newline_gives_a_one_line_config_error(text: str) -> None:
    assert isinstance(parse_or_error(text), ConfigError)
