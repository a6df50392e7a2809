"""Metrics: hand-computed oracles (reference §A.5/§A.6), a literal re-statement of the rules
as a second oracle on random runs, and a cross-check against ranx."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.metrics import (
    METRIC_VERSION,
    AggregateMetrics,
    Expected,
    ExpectedMatcher,
    QueryMetrics,
    RankedHit,
    aggregate,
    best_ranks,
    is_hit,
    metrics_from_matches,
    ndcg_at_k,
    query_metrics,
    recall_at_k,
    reciprocal_rank,
)

L2 = 1.0 / math.log2(3)  # discount at rank 2
L3 = 0.5  # discount at rank 3
L4 = 1.0 / math.log2(5)


def E(*specs: str) -> list[Expected]:
    """`E("a", "a/X")`: path-only entry a, then entry a pinned to heading X."""
    out = []
    for spec in specs:
        path, _, heading = spec.partition("/")
        out.append(Expected(path, heading or None))
    return out


def T(*specs: str) -> list[RankedHit]:
    """`T("a/X", "b")`: rank 1 = a under heading X, rank 2 = b without a heading."""
    out = []
    for i, spec in enumerate(specs):
        path, _, heading = spec.partition("/")
        out.append(RankedHit(rank=i + 1, path=path, heading=heading or None, score=1.0 - i / 100))
    return out


def test_metric_version_is_2() -> None:
    assert METRIC_VERSION == 2


# --- hit rule ---------------------------------------------------------------------------


def test_path_only_entry_matches_any_heading_of_that_path() -> None:
    assert is_hit(Expected("a.md"), RankedHit(1, "a.md", "Intro", 0.5))
    assert is_hit(Expected("a.md"), RankedHit(1, "a.md", None, 0.5))


def test_paths_compare_verbatim() -> None:
    assert not is_hit(Expected("docs/a.md"), RankedHit(1, "./docs/a.md", None, 0.5))
    assert not is_hit(Expected("docs/a.md"), RankedHit(1, "docs\\a.md", None, 0.5))
    assert not is_hit(Expected("Docs/a.md"), RankedHit(1, "docs/a.md", None, 0.5))


def test_headings_compare_trimmed_and_lowercased() -> None:
    hit = RankedHit(1, "a.md", "  Data Flow\t", 0.5)
    assert is_hit(Expected("a.md", "data flow"), hit)
    assert is_hit(Expected("a.md", "\u3000DATA FLOW "), hit)  # ideographic space trims
    assert not is_hit(Expected("a.md", "data  flow"), hit)  # inner whitespace is kept


def test_heading_lowercase_is_full_unicode_lower_not_casefold() -> None:
    assert is_hit(Expected("a.md", "ΣΟΦΙΑΣ"), RankedHit(1, "a.md", "σοφιας", 0.5))
    assert is_hit(Expected("a.md", "ÜBER"), RankedHit(1, "a.md", "über", 0.5))
    # casefold would equate these; to_lowercase in the reference does not
    assert not is_hit(Expected("a.md", "STRASSE"), RankedHit(1, "a.md", "straße", 0.5))


def test_expected_heading_never_matches_a_hit_without_heading() -> None:
    assert not is_hit(Expected("a.md", "Intro"), RankedHit(1, "a.md", None, 0.5))
    assert not is_hit(Expected("a.md", ""), RankedHit(1, "a.md", None, 0.5))


def test_empty_heading_matches_blank_heading() -> None:
    assert is_hit(Expected("a.md", ""), RankedHit(1, "a.md", "  ", 0.5))


# --- worked examples of §A.5 --------------------------------------------------------------


def test_best_ranks_give_each_expected_answer_its_first_hit() -> None:
    hits = [
        RankedHit(1, "x.md", None, 0.9),
        RankedHit(2, "a.md", "Other", 0.8),
        RankedHit(3, "a.md", "Setup", 0.7),
    ]
    expected = [Expected("a.md", "setup"), Expected("a.md", None), Expected("b.md", None)]
    assert best_ranks(expected, hits) == (3, 2, None)
    assert best_ranks(expected, []) == (None, None, None)


def test_worked_example_a_b_against_a_x_b() -> None:
    m = query_metrics(E("a", "b"), T("a", "x", "b"), [1, 3])
    assert m.recall_at_k == {1: 0.5, 3: 1.0}
    assert m.reciprocal_rank == 1.0
    assert m.ndcg_at_k[3] == (1.0 + L3) / (1.0 + L2)
    assert round(m.ndcg_at_k[3], 5) == 0.91972


def test_worked_example_duplicate_expected_counts_in_idcg() -> None:
    m = query_metrics(E("a", "a"), T("a"), [5])
    assert m.ndcg_at_k[5] == 1.0 / (1.0 + L2)
    assert round(m.ndcg_at_k[5], 5) == 0.61315
    assert m.recall_at_k[5] == 1.0


def test_worked_example_first_rank_missed() -> None:
    value = ndcg_at_k(E("a", "b"), T("x", "a", "b"), 5)
    assert value == (L2 + L3) / (1.0 + L2)
    assert round(value, 5) == 0.69343


def test_worked_example_heading_entry_consumes_first() -> None:
    assert ndcg_at_k(E("a", "a/X"), T("a/X", "a/Y"), 5) == 1.0


def test_worked_example_heading_entry_alone_at_rank_one() -> None:
    value = ndcg_at_k(E("a", "a/X"), T("a/X"), 5)
    assert value == 1.0 / (1.0 + L2)
    assert round(value, 5) == 0.61315


def test_worked_example_later_chunks_of_same_file_add_nothing() -> None:
    assert ndcg_at_k(E("X.md"), T("X.md/A", "X.md/B", "X.md/C"), 10) == 1.0


# --- edge cases ---------------------------------------------------------------------------


def test_empty_expected_gives_zero_everywhere() -> None:
    m = query_metrics([], T("a", "b"), [1, 5])
    assert m == QueryMetrics({1: 0.0, 5: 0.0}, 0.0, {1: 0.0, 5: 0.0})
    assert recall_at_k([], T("a"), 1) == 0.0
    assert reciprocal_rank([], T("a")) == 0.0
    assert ndcg_at_k([], T("a"), 1) == 0.0


def test_empty_top_gives_zero_everywhere() -> None:
    m = query_metrics(E("a"), [], [1, 5])
    assert m == QueryMetrics({1: 0.0, 5: 0.0}, 0.0, {1: 0.0, 5: 0.0})
    assert recall_at_k(E("a"), [], 3) == 0.0
    assert reciprocal_rank(E("a"), []) == 0.0


def test_k_zero_gives_zero_recall_and_ndcg_but_rr_is_uncut() -> None:
    m = query_metrics(E("a"), T("a"), [0])
    assert m == QueryMetrics({0: 0.0}, 1.0, {0: 0.0})
    assert recall_at_k(E("a"), T("a"), 0) == 0.0
    assert ndcg_at_k(E("a"), T("a"), 0) == 0.0


def test_negative_k_is_a_caller_bug() -> None:
    with pytest.raises(ValueError, match="k must be >= 0, got -1"):
        query_metrics(E("a"), T("a"), [-1])
    with pytest.raises(ValueError, match="k must be >= 0, got -2"):
        recall_at_k(E("a"), T("a"), -2)


def test_reciprocal_rank_is_not_cut_at_max_k() -> None:
    top = T("x", "x", "x", "x", "x", "x", "x", "x", "x", "x", "x", "a")
    m = query_metrics(E("a"), top, [1, 5, 10])
    assert m.reciprocal_rank == 1.0 / 12
    assert m.recall_at_k == {1: 0.0, 5: 0.0, 10: 0.0}
    assert m.ndcg_at_k == {1: 0.0, 5: 0.0, 10: 0.0}


def test_reciprocal_rank_reads_rank_from_the_record() -> None:
    top = [RankedHit(7, "x", None, 0.9), RankedHit(9, "a", None, 0.8)]
    assert reciprocal_rank(E("a"), top) == 1.0 / 9
    assert query_metrics(E("a"), top, [2]).ndcg_at_k[2] == (1.0 / math.log2(10)) / 1.0


def test_rank_zero_gives_zero_reciprocal_rank_and_no_gain() -> None:
    top = [RankedHit(0, "a", None, 0.9), RankedHit(2, "b", None, 0.8)]
    m = query_metrics(E("a", "b"), top, [2])
    assert m.reciprocal_rank == 0.0
    assert m.ndcg_at_k[2] == L2 / (1.0 + L2)
    assert m.recall_at_k[2] == 1.0
    assert reciprocal_rank(E("a", "b"), top) == 0.0


def test_one_hit_satisfies_duplicates_and_path_plus_heading_entries_for_recall() -> None:
    assert recall_at_k(E("a", "a", "a/X"), T("a/X"), 1) == 1.0
    assert recall_at_k(E("a/X", "a/Y"), T("a/X"), 1) == 0.5


def test_one_hit_gains_once_even_when_it_matches_several_entries() -> None:
    # rank 1 matches both entries but consumes only a/X; rank 2 consumes a
    assert ndcg_at_k(E("a", "a/X"), T("a/X", "a/X"), 2) == 1.0
    assert ndcg_at_k(E("a", "a/X"), T("a/X", "b"), 2) == 1.0 / (1.0 + L2)


def test_greedy_prefers_heading_entries_then_file_order() -> None:
    # rank 1 (a/X) could consume `a` or `a/X`; it must take `a/X` so that rank 3 (a/Z)
    # still credits `a`. Taking `a` first would leave a/Z unmatched.
    top = T("a/X", "b", "a/Z")
    assert ndcg_at_k(E("a", "a/X"), top, 3) == (1.0 + L3) / (1.0 + L2)
    # among two heading entries file order decides; both match rank 1 only through `x`
    assert ndcg_at_k(E("a/x", "a/ X "), T("a/X", "a/X"), 2) == 1.0


def test_idcg_stops_at_k() -> None:
    value = ndcg_at_k(E("a", "b", "c"), T("a", "b", "c"), 2)
    assert value == 1.0
    assert ndcg_at_k(E("a", "b", "c"), T("x", "a", "b", "c"), 2) == L2 / (1.0 + L2)


def test_query_metrics_keeps_the_given_k_order() -> None:
    m = query_metrics(E("a"), T("x", "a"), [10, 1, 5])
    assert list(m.recall_at_k) == [10, 1, 5]
    assert list(m.ndcg_at_k) == [10, 1, 5]


def test_inputs_are_not_mutated() -> None:
    expected, top = E("b", "a/X"), T("a/X", "b")
    before = (list(expected), list(top))
    query_metrics(expected, top, [1, 2])
    assert (expected, top) == before


def test_ranks_beyond_the_discount_table() -> None:
    top = [RankedHit(2000, "a", None, 0.1)]
    assert ndcg_at_k(E("a"), top, 1) == 1.0 / math.log2(2001)
    many = T(*(["a"] * 1100))
    expected = E(*(["a"] * 1100))
    idcg = sum(1.0 / math.log2(i + 1) for i in range(1, 1101))
    dcg = idcg  # every position consumes the next duplicate
    assert ndcg_at_k(expected, many, 1100) == dcg / idcg


def test_matcher_lists_entries_in_greedy_order() -> None:
    matcher = ExpectedMatcher(E("a", "b", "a/X", "a/x ", "a/Y"))
    assert matcher.match("a", "X") == (2, 3, 0)
    assert matcher.match("a", None) == (0,)
    assert matcher.match("b", "anything") == (1,)
    assert matcher.match("c", None) == ()


def test_matcher_exposes_the_expected_paths() -> None:
    assert set(ExpectedMatcher(E("a", "b/X", "a/Y")).paths) == {"a", "b"}


def test_metrics_from_matches_equals_query_metrics() -> None:
    expected, top = E("a", "a/X", "b"), T("a/X", "c", "b", "a/Y")
    matcher = ExpectedMatcher(expected)
    matches = [matcher.match(h.path, h.heading) for h in top]
    ranks = [h.rank for h in top]
    got = metrics_from_matches(len(expected), ranks, matches, [1, 3])
    assert got == query_metrics(expected, top, [1, 3])


def test_metrics_from_matches_rejects_ragged_input() -> None:
    with pytest.raises(ValueError, match="2 ranks but 1 match tuples"):
        metrics_from_matches(1, [1, 2], [()], [1])


# --- aggregation (§A.6) -------------------------------------------------------------------


def test_aggregate_means_over_queries_with_expected_only() -> None:
    q1 = QueryMetrics({1: 1.0, 5: 1.0}, 1.0, {1: 1.0, 5: 0.5})
    q2 = QueryMetrics({1: 0.0, 5: 0.5}, 0.25, {1: 0.0, 5: 0.25})
    skipped = QueryMetrics({1: 0.0, 5: 0.0}, 0.0, {1: 0.0, 5: 0.0})
    got = aggregate([(E("a"), q1), ([], skipped), (E("b", "c"), q2)], [1, 5])
    assert got == AggregateMetrics({1: 0.5, 5: 0.75}, 0.625, {1: 0.5, 5: 0.375}, 2)


def test_aggregate_reads_missing_k_as_zero() -> None:
    q1 = QueryMetrics({1: 1.0}, 1.0, {1: 1.0})
    q2 = QueryMetrics({1: 1.0, 10: 1.0}, 1.0, {1: 1.0, 10: 1.0})
    got = aggregate([(E("a"), q1), (E("a"), q2)], [1, 10])
    assert got.recall_at_k == {1: 1.0, 10: 0.5}
    assert got.ndcg_at_k == {1: 1.0, 10: 0.5}


def test_aggregate_with_no_counted_query_is_empty() -> None:
    skipped = QueryMetrics({1: 0.0}, 0.0, {1: 0.0})
    assert aggregate([([], skipped)], [1]) == AggregateMetrics({}, 0.0, {}, 0)
    assert aggregate([], [1, 5]) == AggregateMetrics({}, 0.0, {}, 0)


def test_aggregate_sums_left_to_right() -> None:
    # 0.1 + 0.2 + 0.3 in order is 0.6000000000000001; a compensated sum would give 0.6
    rows = [(E("a"), QueryMetrics({1: v}, v, {1: v})) for v in (0.1, 0.2, 0.3)]
    got = aggregate(rows, [1])
    assert got.mrr == (0.1 + 0.2 + 0.3) / 3
    assert got.mrr != 0.6 / 3


# --- a literal statement of the rules, as a second oracle ---------------------------------


def literal_recall(expected: Sequence[Expected], top: Sequence[RankedHit], k: int) -> float:
    if not expected or not top:
        return 0.0
    return sum(any(is_hit(e, h) for h in top[:k]) for e in expected) / len(expected)


def literal_rr(expected: Sequence[Expected], top: Sequence[RankedHit]) -> float:
    if not expected:
        return 0.0
    for h in top:
        if any(is_hit(e, h) for e in expected):
            return 1.0 / h.rank if h.rank > 0 else 0.0
    return 0.0


def literal_ndcg(expected: Sequence[Expected], top: Sequence[RankedHit], k: int) -> float:
    if not expected or not top or k == 0:
        return 0.0
    free = set(range(len(expected)))
    dcg = 0.0
    for h in top[:k]:
        hits = [i for i in free if is_hit(expected[i], h)]
        if hits:
            pick = min(hits, key=lambda i: (expected[i].heading is None, i))
            free.remove(pick)
            dcg += 1.0 / math.log2(h.rank + 1)
    idcg = 0.0
    for i in range(1, min(len(expected), k) + 1):
        idcg += 1.0 / math.log2(i + 1)
    return dcg / idcg


PATHS = st.sampled_from(["a.md", "b.md", "c.md", "d/e.md"])
HEADINGS = st.one_of(st.none(), st.sampled_from(["Intro", " intro", "INTRO ", "Setup", ""]))
EXPECTED = st.lists(st.builds(Expected, PATHS, HEADINGS), max_size=6)
HITS = st.lists(st.tuples(PATHS, HEADINGS), max_size=15).map(
    lambda rows: [RankedHit(i + 1, p, h, 1.0) for i, (p, h) in enumerate(rows)]
)
KS = st.lists(st.integers(0, 16), min_size=1, max_size=4, unique=True)


@settings(max_examples=1000, deadline=None)
@given(EXPECTED, HITS, KS)
def test_query_metrics_equals_the_literal_rules(
    expected: list[Expected], top: list[RankedHit], ks: list[int]
) -> None:
    m = query_metrics(expected, top, ks)
    assert m.reciprocal_rank == literal_rr(expected, top)
    for k in ks:
        assert m.recall_at_k[k] == literal_recall(expected, top, k)
        assert m.ndcg_at_k[k] == literal_ndcg(expected, top, k)
        assert 0.0 <= m.ndcg_at_k[k] <= 1.0
        assert recall_at_k(expected, top, k) == m.recall_at_k[k]
        assert ndcg_at_k(expected, top, k) == m.ndcg_at_k[k]
    assert reciprocal_rank(expected, top) == m.reciprocal_rank
    matcher = ExpectedMatcher(expected)
    matches = [matcher.match(h.path, h.heading) for h in top]
    assert metrics_from_matches(len(expected), [h.rank for h in top], matches, ks) == m


# --- cross-check against ranx (independent implementation) --------------------------------


def random_runs(seed: int, n_queries: int) -> list[tuple[list[Expected], list[RankedHit]]]:
    """Path-only expected entries, no duplicates, unique paths in each ranking: the setting
    where our metrics and ranx's binary-relevance ones must agree."""
    rng = random.Random(seed)
    runs = []
    for _ in range(n_queries):
        pool = [f"doc{i}.md" for i in range(rng.randint(1, 60))]
        expected = [Expected(p) for p in rng.sample(pool, rng.randint(1, min(8, len(pool))))]
        ranked = rng.sample(pool, rng.randint(1, len(pool)))
        top = [RankedHit(i + 1, p, rng.choice([None, "H"]), 0.0) for i, p in enumerate(ranked)]
        runs.append((expected, top))
    return runs


@pytest.mark.slow  # ranx compiles its numba kernels on a cold cache: about 80 s
@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
def test_cross_check_against_ranx() -> None:
    ranx = pytest.importorskip("ranx")
    runs = random_runs(seed=20240521, n_queries=3000)
    ks = [1, 3, 5, 10, 20]
    qrels = {f"q{i}": {e.path: 1 for e in expected} for i, (expected, _) in enumerate(runs)}
    run_dict = {
        f"q{i}": {h.path: float(len(top) - j) for j, h in enumerate(top)}
        for i, (_, top) in enumerate(runs)
    }
    names = [f"recall@{k}" for k in ks] + [f"ndcg@{k}" for k in ks] + ["mrr"]
    ranx_run = ranx.Run(run_dict)
    ranx.evaluate(ranx.Qrels(qrels), ranx_run, names)
    theirs = ranx_run.scores
    for i, (expected, top) in enumerate(runs):
        qid = f"q{i}"
        ours = query_metrics(expected, top, ks)
        assert ours.reciprocal_rank == pytest.approx(theirs["mrr"][qid], abs=1e-9)
        for k in ks:
            assert ours.recall_at_k[k] == pytest.approx(theirs[f"recall@{k}"][qid], abs=1e-9)
            assert ours.ndcg_at_k[k] == pytest.approx(theirs[f"ndcg@{k}"][qid], abs=1e-9)


@pytest.mark.slow  # numba compilation again, when run alone
@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
def test_aggregate_cross_checks_against_ranx_means() -> None:
    ranx = pytest.importorskip("ranx")
    runs = random_runs(seed=7, n_queries=500)
    ks = [1, 5, 10]
    qrels = {f"q{i}": {e.path: 1 for e in expected} for i, (expected, _) in enumerate(runs)}
    run_dict = {
        f"q{i}": {h.path: float(len(top) - j) for j, h in enumerate(top)}
        for i, (_, top) in enumerate(runs)
    }
    names = ["recall@5", "ndcg@10", "mrr"]
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run_dict), names)
    per_query = [(expected, query_metrics(expected, top, ks)) for expected, top in runs]
    # an empty-expected query must not move the means
    per_query.append(([], query_metrics([], runs[0][1], ks)))
    ours = aggregate(per_query, ks)
    assert ours.query_count == 500
    assert ours.recall_at_k[5] == pytest.approx(theirs["recall@5"], abs=1e-9)
    assert ours.ndcg_at_k[10] == pytest.approx(theirs["ndcg@10"], abs=1e-9)
    assert ours.mrr == pytest.approx(theirs["mrr"], abs=1e-9)
