"""FTS query compiler (groove/engine/query.py): pinned examples, -term exclusion, fuzzing."""

from __future__ import annotations

import functools
import re

import pytest
import sqlean as sqlite3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groove.engine.query import (
    FTS_QUERY_VERSION,
    HIRAGANA,
    KANJI,
    KATAKANA,
    MAX_PHRASES,
    MIN_PHRASE_CHARS,
    OTHER_WORD,
    SEPARATOR,
    CompiledQuery,
    char_class,
    compile_query,
    quote_phrase,
)
from groove.errors import QueryError


def match(text: str) -> str | None:
    return compile_query(text).match


# --- version 2 behaviour, unchanged in version 3 -------------------------------------------


def test_constants() -> None:
    assert (FTS_QUERY_VERSION, MIN_PHRASE_CHARS, MAX_PHRASES) == (3, 3, 32)


# The pinned examples of the reference's version 2. In the spec's list `" a "` is the
# three-character query space-a-space and `""` is two double quotes.
PINNED = [
    ("再ランキングの評価について", '"再ランキング" OR "ランキング" OR "の評価" OR "について"'),
    ("retry budget の設定", '"retry" OR "budget" OR "の設定"'),
    ('"Foundry Local" の設定', '"Foundry Local" OR "の設定"'),
    ("再ランキング化", '"再ランキング化" OR "再ランキング" OR "ランキング"'),
    ("評価・分析", '"評価・分析" OR "評価・"'),
    ("再 ランキング", '"ランキング"'),
    ("AI と ML", '"AI と ML"'),
    ("ab", None),
    (" a ", None),
    ('""', None),
    ('abc "def', '"abc" OR "def"'),
    ('"ab""cd"', '"ab""cd"'),
    ("abc abc def", '"abc" OR "def"'),
    ("---", '"---"'),
]


@pytest.mark.parametrize(("text", "expected"), PINNED)
def test_pinned_examples(text: str, expected: str | None) -> None:
    compiled = compile_query(text)
    assert compiled.match == expected
    assert compiled.negative == ()
    assert compiled.dropped_negative == ()


def test_pinned_quoted_space_a_space_is_a_three_char_phrase() -> None:
    # The other reading of `" a "`: a quoted region of exactly 3 characters is kept.
    assert match('" a "') == '" a "'


@pytest.mark.parametrize(
    ("char", "cls"),
    [
        ("再", KANJI),
        ("々", KANJI),
        ("〆", KANJI),
        ("\u3400", KANJI),
        ("\uf900", KANJI),
        ("\U0002f800", KANJI),
        ("ぁ", HIRAGANA),
        ("ゟ", HIRAGANA),
        ("ア", KATAKANA),
        ("ー", KATAKANA),
        ("・", KATAKANA),
        ("ｱ", KATAKANA),
        ("\uff9f", KATAKANA),
        ("A", OTHER_WORD),
        ("０", OTHER_WORD),
        ("п", OTHER_WORD),
        ("한", OTHER_WORD),
        ("_", OTHER_WORD),
        ("-", OTHER_WORD),
        ("\U00020bb7", OTHER_WORD),  # CJK extension B is outside the Kanji ranges
        (" ", SEPARATOR),
        ("\u3000", SEPARATOR),
        (":", SEPARATOR),
        ('"', SEPARATOR),
        ("。", SEPARATOR),
        ("\uff65", SEPARATOR),
        ("\0", SEPARATOR),
    ],
)
def test_char_class(char: str, cls: int) -> None:
    assert char_class(char) == cls


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("の再ランキング", '"の再ランキング" OR "ランキング"'),
        ("システム化", '"システム化" OR "システム"'),
        ("の評価は", '"の評価は" OR "の評価"'),
        ("ＡＢＣ検索", '"ＡＢＣ検索" OR "ＡＢＣ"'),
        ("評価は", '"評価は"'),
        ("クロス・エンコーダ", '"クロス・エンコーダ"'),
        ("クロス\uff65エンコーダ", '"クロス" OR "エンコーダ"'),
        ("abcｶﾀｶﾅ", '"abc" OR "ｶﾀｶﾅ"'),
        ("代々木", '"代々木"'),
        ("sqlite-vec E0382", '"sqlite-vec" OR "E0382"'),
        ("ランキング 再ランキング", '"ランキング" OR "再ランキング"'),
        ('再"ランキング"', '"ランキング"'),
        ('"ランキング"化', '"ランキング"'),
        ("sagashiro-embed-r4 の", '"sagashiro-embed-r4"'),
    ],
)
def test_run_joining_rules(text: str, expected: str) -> None:
    assert match(text) == expected


def test_operators_and_column_filters_are_literal_text() -> None:
    assert match('foo "bar" AND') == '"foo" OR "bar" OR "AND"'
    assert match("foo OR bar") == '"foo" OR "bar"'
    assert match("heading:foo") == '"heading" OR "foo"'


def test_short_and_nul_quoted_regions_are_dropped() -> None:
    assert match('"ab" テスト') == '"テスト"'
    assert match('"a\0bc"') is None
    # Only the quote survives as content (1 char), so the whole query falls back.
    assert match('""""') == quote_phrase('""""')


def test_fallback_keeps_the_trigram_floor_and_refuses_nul() -> None:
    assert match("!!! ??? 、。") == '"!!! ??? 、。"'
    assert match("評価\uff65分析") == '"評価\uff65分析"'
    assert match("a\0b") is None


def test_quote_phrase_doubles_inner_quotes() -> None:
    assert quote_phrase('say "hi"') == '"say ""hi"""'
    assert match('"say ""hi"""') == '"say ""hi"""'


def test_dedupe_runs_before_the_cap_and_the_cap_counts_distinct_drops() -> None:
    words = [f"w{i:02d}" for i in range(40)]
    capped = compile_query(" ".join(words))
    assert capped.positive == tuple(words[:MAX_PHRASES])
    assert capped.dropped_positive == 8
    assert capped.warnings == ("query has more than 32 phrases: the last 8 were not searched",)

    exact = compile_query(" ".join(["w00", *words[:MAX_PHRASES]]))
    assert exact.positive == tuple(words[:MAX_PHRASES])
    assert exact.dropped_positive == 0
    assert exact.warnings == ()


def test_empty_query_is_rejected() -> None:
    for text in ["", "   ", "\u3000\t\n"]:
        with pytest.raises(QueryError) as err:
            compile_query(text)
        assert err.value.message == "empty query"
        assert err.value.hint == "type at least one word to search for (3+ characters)"


# --- version 3: -term exclusion ------------------------------------------------------------


def test_an_exclusion_becomes_not_with_both_sides_parenthesised() -> None:
    compiled = compile_query("release -canary")
    assert compiled == CompiledQuery(
        positive=("release",),
        negative=("canary",),
        dropped_positive=0,
        dropped_negative=(),
        positive_text="release",
    )
    assert compiled.match == '("release") NOT ("canary")'
    assert compiled.positive_match == '"release"'
    assert compiled.negative_match == '"canary"'
    assert match('rust tokio -async -"sync io"') == '("rust" OR "tokio") NOT ("async" OR "sync io")'


def test_japanese_exclusions_split_like_positive_text() -> None:
    compiled = compile_query("検索の評価 -再ランキング")
    assert compiled.positive == ("検索の評価", "検索の")
    assert compiled.negative == ("再ランキング", "ランキング")
    assert compiled.match == '("検索の評価" OR "検索の") NOT ("再ランキング" OR "ランキング")'
    # A full-width space starts a token too.
    assert compile_query("再ランキング\u3000-クロスエンコーダ").negative == ("クロスエンコーダ",)


def test_a_quoted_exclusion_excludes_the_phrase_verbatim() -> None:
    compiled = compile_query('検索の評価 -"再ランキング"')
    assert compiled.negative == ("再ランキング",)
    compiled = compile_query('foo -"say ""hi"" now"')
    assert compiled.negative == ('say "hi" now',)
    assert compiled.match == '("foo") NOT ("say ""hi"" now")'


def test_a_short_exclusion_is_dropped_and_reported() -> None:
    compiled = compile_query("foo -ab")
    assert compiled.match == '"foo"'
    assert compiled.negative_match is None
    assert compiled.dropped_negative == ("ab",)
    assert compiled.warnings == (
        "exclusion -ab is under the 3-character trigram floor and was not applied",
    )
    assert compile_query('foo -"ab" -ab -評価').dropped_negative == ("ab", "評価")


def test_an_exclusion_without_phrases_falls_back_to_the_whole_term() -> None:
    assert match("foo -AI/ML") == '("foo") NOT ("AI/ML")'
    assert compile_query("foo -a\0b").dropped_negative == ("a\0b",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a-b", '"a-b"'),
        ("kb-mcp", '"kb-mcp"'),
        ("foo,-bar", '"foo" OR "-bar"'),
        ('"foo"-bar', '"foo" OR "-bar"'),
        ("abc - foo", '"abc" OR "foo"'),
        ("abc --foo", '"abc" OR "--foo"'),
        ("abc -", '"abc"'),
        ("---", '"---"'),
        ('abc -"def', '"abc" OR "def"'),  # unclosed: `-"def` is plain text
        ('rust "async -tokio', '"rust" OR "async" OR "-tokio"'),  # `-` after an unclosed quote
        ('"-foo"', '"-foo"'),  # quoting is how to search for a leading hyphen
    ],
)
def test_hyphens_that_are_not_exclusions(text: str, expected: str) -> None:
    compiled = compile_query(text)
    assert compiled.match == expected
    assert compiled.negative == ()
    assert compiled.dropped_negative == ()
    assert compiled.positive_text == text


@pytest.mark.parametrize("text", ["-foo", "  -foo  ", "-ab", '-"ab"', "-a -b", '-"x y"', "-再評価"])
def test_a_query_of_exclusions_only_is_rejected(text: str) -> None:
    with pytest.raises(QueryError) as err:
        compile_query(text)
    assert err.value.message == "query has only exclusions (-term): nothing is left to search for"
    assert err.value.hint == (
        'add a term to search for, or quote a leading hyphen ("-term") to find it'
    )


def test_positive_text_too_short_for_fts_still_feeds_the_vector_leg() -> None:
    compiled = compile_query("xy -abc z")
    assert compiled.match is None
    assert compiled.negative_match == '"abc"'
    assert compiled.positive_text == "xy z"


def test_fallback_applies_to_each_positive_region_not_to_the_exclusions() -> None:
    assert match("AI と ML -foo") == '("AI と ML") NOT ("foo")'
    assert match("AI -foo ML!") == '("ML!") NOT ("foo")'


def test_positive_text_cuts_the_exclusions_out() -> None:
    assert compile_query("-async rust").positive_text == "rust"
    assert compile_query("a -b c").positive_text == "a c"
    assert compile_query('foo -"bar baz" qux').positive_text == "foo qux"
    assert compile_query("  rust   async  ").positive_text == "  rust   async  "


# --- a real FTS5 trigram table --------------------------------------------------------------

ROWS = {
    1: ("Deploys", "Canary release: route five percent of traffic to the new version first."),
    2: ("Deploys", "Rollback release: restore the previous version when errors rise."),
    3: ("検索", "検索結果の再ランキングを評価する手順。"),
    4: ("検索", "クロスエンコーダによる再ランキングの評価。"),
    5: ("索引", "インデックスの作成方法と更新の間隔。"),
    6: ("Quotes", 'He said "hello world" -- twice; heading:foo AND bar OR baz.'),
}


@functools.cache
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(heading, context, content, "
        "tokenize='trigram remove_diacritics 1 case_sensitive 0')"
    )
    conn.executemany(
        "INSERT INTO t(rowid, heading, context, content) VALUES (?, ?, NULL, ?)",
        [(rowid, h, c) for rowid, (h, c) in ROWS.items()],
    )
    return conn


def rows(expression: str | None) -> set[int]:
    assert expression is not None
    return {r for (r,) in fts().execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,))}


def test_fts_exclusion_drops_the_canary_row_and_keeps_the_rollback_row() -> None:
    assert rows(match("release")) == {1, 2}
    assert rows(match("release -canary")) == {2}
    assert rows(match("release -Canary")) == {2}  # case-insensitive like the positives
    # The search drops vector-leg rows with the negative side alone.
    assert rows(compile_query("release -canary").negative_match) == {1}


def test_fts_not_applies_to_every_positive_phrase() -> None:
    # Unparenthesised, `"version" OR "traffic" NOT "canary"` would keep row 1 via "version".
    assert rows(match("version traffic -canary")) == {2}


def test_fts_japanese_query_matches_the_japanese_rows() -> None:
    assert rows(match("再ランキングの評価")) == {3, 4}
    assert rows(match("再ランキングの評価 -クロスエンコーダ")) == {3}
    assert rows(match('再ランキングの評価 -"クロスエンコーダ"')) == {3}


def test_fts_operator_words_are_searched_as_text() -> None:
    assert rows(match("heading:foo")) == {6}
    assert rows(match('"hello world"')) == {6}


# --- properties -----------------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=200)
TRICKY = st.text(
    st.sampled_from(list('ab -"\0\u3000:,_.再評価のランキングｱﾃ・･々AI1\t')),
    max_size=60,
)
TOKENS = st.lists(
    st.sampled_from(
        [
            "release",
            "-canary",
            '"a b"',
            '-"foo bar"',
            "-ab",
            "再ランキング",
            "-評価",
            "の",
            "-",
            "---",
            "a-b",
            "AND",
            "heading:foo",
            '"',
            '""',
            "x",
        ]
    ),
    max_size=12,
).map(" ".join)
QUERIES = st.one_of(ANY_TEXT, TRICKY, TOKENS)
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
OPENER = re.compile(r'(?:^|(?<=\s))-(?:"|[^\s-])')


def compile_or_none(text: str) -> CompiledQuery | None:
    try:
        return compile_query(text)
    except QueryError:
        return None


@FUZZ
@given(QUERIES)
def test_every_expression_is_accepted_by_fts5(text: str) -> None:
    compiled = compile_or_none(text)
    if compiled is None:
        return
    for expression in (compiled.match, compiled.positive_match, compiled.negative_match):
        if expression is not None:
            fts().execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()


@FUZZ
@given(QUERIES)
def test_only_query_errors_and_only_for_blank_or_exclusion_only_queries(text: str) -> None:
    try:
        compiled = compile_query(text)
    except QueryError as err:
        assert err.hint
        assert "\n" not in err.message
        if err.message != "empty query":
            assert OPENER.search(text), text
        return
    assert compiled.positive_text.strip()


@FUZZ
@given(QUERIES)
def test_phrases_are_distinct_capped_and_long_enough(text: str) -> None:
    compiled = compile_or_none(text)
    if compiled is None:
        return
    assert len(compiled.positive) <= MAX_PHRASES
    for phrases in (compiled.positive, compiled.negative):
        assert len(set(phrases)) == len(phrases)
        assert all(len(p) >= MIN_PHRASE_CHARS and "\0" not in p for p in phrases)
    if compiled.match is None:
        assert compiled.positive == ()


@FUZZ
@given(QUERIES.map(lambda t: t.replace('"', "")))
def test_without_quotes_every_phrase_is_a_piece_of_the_query(text: str) -> None:
    compiled = compile_or_none(text)
    if compiled is None:
        return
    assert all(p in text for p in compiled.positive + compiled.negative)


@FUZZ
@given(QUERIES)
def test_a_query_without_an_exclusion_opener_compiles_as_version_2(text: str) -> None:
    if OPENER.search(text):
        return
    compiled = compile_or_none(text)
    if compiled is None:
        assert not text.strip()
        return
    assert (compiled.negative, compiled.dropped_negative) == ((), ())
    assert compiled.positive_text == text
    assert compiled.match == compiled.positive_match
