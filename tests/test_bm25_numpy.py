"""The FTS leg in numpy (engine.bm25) against FTS5's own ``bm25()``, on real SQLite + FTS5.

Every comparison is exact: the same rowids in the same order and the same bm25 floats,
bit for bit (``==`` on Python floats), as ``store.leg_scores.bm25_scored`` (the SQL
``ORDER BY bm25(...), rowid LIMIT n``) returns them.
"""

from __future__ import annotations

import pytest
import yaml
from conftest import FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groove.engine import bm25
from groove.engine.lexical import LexicalQuery, lexical_query
from groove.engine.search import fts_leg
from groove.store import postings_file
from groove.store.db import connect, default_db_path, read_snapshot
from groove.store.leg_scores import bm25_scored
from groove.store.postings import Postings, index_key, read_postings, tokens
from groove.store.schema import migrate
from groove.store.sqlite import Connection, open_connection

WEIGHT_SETS = [
    (2.0, 1.0, 1.0),  # groove's default
    (1.0, 1.0, 1.0),
    (0.5, 4.0, 1.0),
    (0.3, 1.7, 0.9),  # sums that round: added one instance at a time, as FTS5 does
    (0.0, 0.0, 1.0),
]
EXTRA_QUERIES = [
    "deploy deploy deploys deploying",  # repeated words and one stem from several
    "the of and to a in is",  # stop-ish words: in most rows, IDF clamped
    "zzzqqq xyzzyplugh",  # no match
    "backup -restore",  # an exclusion
    "rollback -zzzqqq",  # an exclusion that excludes nothing
    "database",
]
JAPANESE = ["再ランキング", "ロールバック 手順", "検索の設定"]


def golden(name: str) -> list[str]:
    data = yaml.safe_load((FIXTURES / name).read_text(encoding="utf-8"))
    return [q["query"] for q in data["queries"]]


def sql(conn: Connection, lq: LexicalQuery, weights: tuple[float, float, float], n: int) -> list:
    assert lq.match is not None
    return bm25_scored(conn, lq.match, weights, n, lq.leg)


def numpy_top(scorer: bm25.Scorer, lq: LexicalQuery, weights, n: int) -> list:  # type: ignore[no-untyped-def]
    phrases = bm25._served(lq, weights)
    assert phrases is not None, lq
    ids, scores = scorer.top(*phrases, weights, n)
    return list(zip(ids.tolist(), scores.tolist(), strict=True))


@pytest.fixture
def en(indexed_kb) -> Connection:  # type: ignore[no-untyped-def]
    conn = connect(default_db_path(indexed_kb("kb_en")))
    yield conn
    conn.close()


def postings_from(conn: Connection, source: str) -> Postings:
    """The porter postings read through SQL, or mapped from the file ``groove index`` wrote."""
    if source == "sql":
        return read_postings(conn, "porter")
    mapped = postings_file.load(conn, "porter")
    assert mapped is not None and mapped.checked
    return mapped.postings


@pytest.mark.parametrize("source", ["sql", "file"])
@pytest.mark.parametrize("weights", WEIGHT_SETS)
def test_porter_lists_and_scores_equal_fts5_bit_for_bit(en: Connection, weights, source) -> None:  # type: ignore[no-untyped-def]
    scorer = bm25.Scorer.of(postings_from(en, source))
    queries = golden("golden_en.yml") + EXTRA_QUERIES
    served = 0
    for query in queries:
        lq = lexical_query(query, "porter")
        if lq.match is None:
            continue
        for n in (1, 7, 50, 10_000):  # 10,000: every matching row
            assert numpy_top(scorer, lq, weights, n) == sql(en, lq, weights, n), (query, n)
        served += 1
    assert served == len(queries)


def test_the_sums_that_round_take_the_one_by_one_path() -> None:
    assert bm25._sums_exact((2.0, 1.0, 1.0), (50, 50, 500))
    assert bm25._sums_exact((0.5, 4.0, 0.25), (50, 50, 500))
    assert not bm25._sums_exact((0.3, 1.7, 0.9), (3, 3, 3))


@pytest.mark.parametrize("source", ["sql", "file"])
def test_japanese_text_on_the_porter_table_is_one_token_and_equal(indexed_kb, source) -> None:  # type: ignore[no-untyped-def]
    conn = connect(default_db_path(indexed_kb("kb_ja")))
    scorer = bm25.Scorer.of(postings_from(conn, source))
    found_any = False
    for query in golden("golden_ja.yml") + JAPANESE:
        lq = lexical_query(query, "porter")
        if lq.match is None or bm25._served(lq, (2.0, 1.0, 1.0)) is None:
            continue
        for weights in WEIGHT_SETS[:4]:
            expected = sql(conn, lq, weights, 10_000)
            assert numpy_top(scorer, lq, weights, 10_000) == expected, query
            found_any = found_any or bool(expected)
    assert found_any  # some Japanese query matched rows, so the comparison was not vacuous
    conn.close()


def test_trigram_phrases_and_quoted_word_sequences_go_through_sql(indexed_kb) -> None:  # type: ignore[no-untyped-def]
    conn = connect(default_db_path(indexed_kb("kb_ja")))
    assert bm25.prepare(conn, "porter")
    for query in [*JAPANESE, "canary rollout"]:
        lq = lexical_query(query, "trigram")
        assert tokens(lq.terms.positive[0], "trigram")  # FTS5 cut it: trigrams
        assert bm25._served(lq, (2.0, 1.0, 1.0)) is None or lq.leg == "porter"
        assert bm25.ranked(conn, lq, (2.0, 1.0, 1.0), 50) == fts_leg(
            conn, lq.match, (2.0, 1.0, 1.0), 50, lq.leg
        )
    quoted = lexical_query('"canary rollout" deploy', "porter")
    assert bm25._served(quoted, (2.0, 1.0, 1.0)) is None  # two words in sequence: SQL
    conn.close()


def test_ranked_reads_postings_once_they_pay_and_drops_them_when_the_index_changes(
    indexed_kb,
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    postings_file.file_path(default_db_path(kb)).unlink()  # the read through SQL
    conn = connect(default_db_path(kb))
    weights = (2.0, 1.0, 1.0)
    queries = [lexical_query(q, "porter") for q in golden("golden_en.yml")]
    state = bm25._state(conn, "porter")
    assert state is not None
    assert bm25.ranked(conn, queries[0], weights, 50) == fts_leg(
        conn, queries[0].match, weights, 50, "porter"
    )
    assert state.scorer is None and state.spent > 0  # a first query runs in SQL
    assert bm25.prepare(conn)
    for lq in queries:
        assert bm25.ranked(conn, lq, weights, 50) == fts_leg(conn, lq.match, weights, 50, "porter")
    assert state.verified and state.scorer is not None
    before = index_key(conn, "porter")
    writer = connect(default_db_path(kb))
    writer.execute("BEGIN IMMEDIATE")
    writer.execute(
        "INSERT INTO fts_chunks_porter(rowid, heading, content) VALUES (999999, 'deploy', 'deploy')"
    )
    writer.execute("COMMIT")
    writer.close()
    assert index_key(conn, "porter") != before
    lq = lexical_query("deploy", "porter")
    assert bm25.ranked(conn, lq, weights, 50) == fts_leg(conn, lq.match, weights, 50, "porter")
    assert state.scorer is None  # stale postings were dropped, not used
    conn.close()


@pytest.mark.parametrize("source", ["sql", "file from elsewhere"])
def test_a_mismatch_on_the_first_served_query_turns_the_numpy_path_off(
    indexed_kb, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:  # type: ignore[no-untyped-def]
    db = default_db_path(indexed_kb("kb_en"))
    if source == "sql":
        postings_file.file_path(db).unlink()
    else:  # a file checked by a writer in another environment: each reader checks again
        real = postings_file.environment()
        monkeypatch.setattr(postings_file, "environment", lambda: {**real, "numpy": "0.0"})
    en = connect(db)
    assert bm25.prepare(en)
    assert (postings_file.load(en, "porter") is None) == (source == "sql")
    lq = lexical_query("database backup", "porter")
    expected = fts_leg(en, lq.match, (2.0, 1.0, 1.0), 50, "porter")
    real_top = bm25.Scorer.top

    def off_by_an_ulp(self, *args):  # type: ignore[no-untyped-def]
        ids, scores = real_top(self, *args)
        return ids, scores * (1 + 2**-52)

    monkeypatch.setattr(bm25.Scorer, "top", off_by_an_ulp)
    assert bm25.ranked(en, lq, (2.0, 1.0, 1.0), 50) == expected  # SQL's answer
    state = bm25._state(en, "porter")
    assert state is not None and state.scorer is None and state.refused == index_key(en, "porter")


# ---------------------------------------------------------------- property

VOCABULARY = ["flow", "flows", "flowing", "wing", "the", "of", "shock", "layer", "heat", "mach"]
text = st.lists(st.sampled_from(VOCABULARY), max_size=12).map(" ".join)
row = st.tuples(text, text, text)
weight = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0]), st.floats(min_value=0.0, max_value=8.0)
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(row, min_size=1, max_size=40),
    deleted=st.sets(st.integers(min_value=1, max_value=40), max_size=5),
    query=st.lists(st.sampled_from([*VOCABULARY, "absent"]), min_size=1, max_size=6),
    weights=st.tuples(weight, weight, weight),
    n=st.sampled_from([1, 3, 50]),
)
def test_any_small_table_any_query_any_weights(rows, deleted, query, weights, n) -> None:  # type: ignore[no-untyped-def]
    conn = open_connection(":memory:")
    migrate(conn)
    conn.executemany(
        "INSERT INTO fts_chunks_porter(rowid, heading, context, content) VALUES (?, ?, ?, ?)",
        [(i + 1, *r) for i, r in enumerate(rows)],
    )
    conn.executemany("DELETE FROM fts_chunks_porter WHERE rowid = ?", [(d,) for d in deleted])
    if conn.execute("SELECT count(*) FROM fts_chunks_porter_docsize").fetchone()[0] == 0:
        return  # FTS5 has no rows to average over
    lq = lexical_query(" ".join(query), "porter")
    scorer = bm25.Scorer.of(read_postings(conn, "porter"))
    assert numpy_top(scorer, lq, weights, n) == sql(conn, lq, weights, n)
    conn.close()


def test_a_long_run_in_a_read_snapshot_switches_to_numpy_by_itself(indexed_kb) -> None:  # type: ignore[no-untyped-def]
    db = default_db_path(indexed_kb("kb_en"))
    postings_file.file_path(db).unlink()  # no file beside the index: the postings are read
    en = connect(db)
    weights = (2.0, 1.0, 1.0)
    queries = [lexical_query(q, "porter") for q in golden("golden_en.yml")]
    state = bm25._state(en, "porter")
    assert state is not None
    with read_snapshot(en):
        for i in range(5000):
            lq = queries[i % len(queries)]
            assert bm25.ranked(en, lq, weights, 50) == fts_leg(en, lq.match, weights, 50, "porter")
            if state.scorer is not None and state.verified:
                break
    assert state.scorer is not None and state.verified  # read and checked inside the snapshot
    assert i > 0  # the first query ran in SQL: a one-shot search never pays for the read


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(row, min_size=1, max_size=30),
    query=st.lists(st.sampled_from([*VOCABULARY, "absent"]), min_size=1, max_size=5),
    negative=st.lists(st.sampled_from(VOCABULARY), max_size=1),
    n=st.sampled_from([1, 2, 3, 50]),
)
def test_tops_over_the_tune_grid_equal_sql_with_ties(rows, query, negative, n) -> None:  # type: ignore[no-untyped-def]
    """``Scorer.tops`` (a tune sweep's 64 lists at once) is the SQL pass over the grid:
    few words over few rows make many equal scores, ordered by the lower rowid."""
    from groove.tuning.grid import weight_sets
    from groove.tuning.sweep import fts_rankings

    conn = open_connection(":memory:")
    migrate(conn)
    conn.executemany(
        "INSERT INTO fts_chunks_porter(rowid, heading, context, content) VALUES (?, ?, ?, ?)",
        [(i + 1, *r) for i, r in enumerate(rows)],
    )
    lq = lexical_query(" ".join(query + [f"-{w}" for w in negative]), "porter")
    assert lq.match is not None
    phrases = bm25._served(lq, (1.0, 1.0, 1.0))
    assert phrases is not None
    lists, matches = bm25.Scorer.of(read_postings(conn, "porter")).tops(*phrases, weight_sets(), n)
    total = conn.execute(
        "SELECT count(*) FROM fts_chunks_porter WHERE fts_chunks_porter MATCH ?", (lq.match,)
    ).fetchone()[0]
    assert (lists, matches) == (fts_rankings(conn, lq.match, n, "porter"), total)
    conn.close()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(row, min_size=1, max_size=30),
    deleted=st.sets(st.integers(min_value=1, max_value=30), max_size=4),
    query=st.lists(st.sampled_from([*VOCABULARY, "absent"]), min_size=1, max_size=5),
    negative=st.lists(st.sampled_from(VOCABULARY), max_size=1),
    share=st.floats(min_value=0.0, max_value=1.0),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_scores_of_some_matching_rows_equal_sqls_restricted_pass(  # type: ignore[no-untyped-def]
    rows, deleted, query, negative, share, seed
) -> None:
    """``Scorer.scores_of`` (an explain's grid contenders) is ``bm25_columns`` with ``only``:
    the same floats bit for bit, for any subset of the matching rows, in any order."""
    import numpy as np

    from groove.store.legs import bm25_columns
    from groove.tuning.grid import weight_sets

    conn = open_connection(":memory:")
    migrate(conn)
    conn.executemany(
        "INSERT INTO fts_chunks_porter(rowid, heading, context, content) VALUES (?, ?, ?, ?)",
        [(i + 1, *r) for i, r in enumerate(rows)],
    )
    conn.executemany("DELETE FROM fts_chunks_porter WHERE rowid = ?", [(d,) for d in deleted])
    if conn.execute("SELECT count(*) FROM fts_chunks_porter_docsize").fetchone()[0] == 0:
        return
    lq = lexical_query(" ".join(query + [f"-{w}" for w in negative]), "porter")
    assert lq.match is not None
    phrases = bm25._served(lq, (1.0, 1.0, 1.0))
    assert phrases is not None
    grid = weight_sets()[::4]
    matching = [int(r[0]) for r in bm25_columns(conn, lq.match, grid[:1], "porter")]
    rng = np.random.default_rng(seed)
    some = [r for r in matching if rng.random() < share]
    rng.shuffle(some)
    scorer = bm25.Scorer.of(read_postings(conn, "porter"))
    ordered = np.sort(np.asarray(some, dtype=np.int64))
    assert all(bm25._sums_exact(w, scorer.largest) for w in grid)
    # the grid's sums are exact (one matrix product); a set whose sums round is not.
    # Each from the postings alone, and from those a ``scores`` call just looked up.
    for sets in (grid, [*grid, (0.3, 1.7, 0.9)]):
        expected = {int(r[0]): r[1:] for r in bm25_columns(conn, lq.match, sets, "porter", some)}
        for after_scores, at_once in ((False, None), (True, None), (True, 1)):
            scorer.recent.clear()
            if after_scores:
                scorer.scores(*phrases, sets[:1])
                assert scorer.recent or not matching
            saved = bm25._TERMS_AT_ONCE
            bm25._TERMS_AT_ONCE = at_once or saved  # 1: one weight set per pass
            try:
                columns = scorer.scores_of(phrases[0], sets, ordered)
            finally:
                bm25._TERMS_AT_ONCE = saved
            found = {
                int(r): tuple(float(c[i]) for c in columns) for i, r in enumerate(ordered.tolist())
            }
            assert found == expected
    conn.close()
