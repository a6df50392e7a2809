"""Slices (groove.stats.slices): from tags and folders, per-slice aggregates, the slice gate."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from groove.metrics import Expected, RankedHit, aggregate, query_metrics
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import QueryResult, RunRecord
from groove.stats.gate import decide
from groove.stats.significance import compare_records
from groove.stats.slices import (
    TOP_FOLDER,
    decide_slices,
    define_slices,
    measure_slices,
    subset,
    top_folder,
)

KS = (1, 5, 10)


def _query(qid: str, paths: list[str], rank: int | None, tags: tuple[str, ...] = ()) -> QueryResult:
    """A query expecting ``paths``, the first found at ``rank`` (None: not found)."""
    expected = tuple(Expected(p) for p in paths)
    hits = [RankedHit(r, f"other/{qid}-{r}.md", None, 1.0 / r) for r in range(1, 11)]
    if rank is not None:
        hits[rank - 1] = RankedHit(rank, paths[0], None, 1.0 / rank)
    top = tuple(hits)
    return QueryResult(qid, qid, expected, top, query_metrics(expected, top, KS), None, tags)


def _record(queries: list[QueryResult], stamp: str = "2026-01-01T00:00:00+00:00") -> RunRecord:
    fp = Fingerprint("m", None, 10, KS, "h", 1, 1)
    agg = aggregate([(q.expected, q.metrics) for q in queries], KS)
    return RunRecord(stamp, fp, None, tuple(queries), agg, ())


def test_each_tag_is_a_slice_and_folders_only_when_asked() -> None:
    queries = [
        _query("a", ["ops/x.md"], 1, ("en", "ops")),
        _query("b", ["ja/y.md", "ops/z.md"], 2, ("ja",)),
        _query("c", ["top.md"], None, ("en",)),
    ]
    by_tags = define_slices(queries)
    assert [(s.name, s.kind, s.query_ids) for s in by_tags] == [
        ("en", "tag", ("a", "c")),
        ("ja", "tag", ("b",)),
        ("ops", "tag", ("a",)),
    ]
    by_folder = define_slices(queries, "folder")
    folders = [(s.name, s.query_ids) for s in by_folder if s.kind == "folder"]
    # b expects answers in two folders: it is in both
    assert folders == [("./", ("c",)), ("ja/", ("b",)), ("ops/", ("a", "b"))]
    assert top_folder("ops/deploy/x.md") == "ops/" and top_folder("x.md") == TOP_FOLDER


def test_no_tags_no_slices_and_a_repeated_id_counts_once() -> None:
    assert define_slices([_query("a", ["x/a.md"], 1)]) == ()
    twice = [_query("a", ["x.md"], 1, ("t", "t")), _query("a", ["x.md"], 1, ("t",))]
    assert define_slices(twice)[0].query_ids == ("a",)
    with pytest.raises(ValueError):
        define_slices(twice, "language")


def test_per_slice_metrics_equal_the_aggregate_recomputed_on_the_subset() -> None:
    rng = random.Random(7)
    queries = []
    for i in range(40):
        tags = tuple(t for t in ("en", "ja", "howto") if rng.random() < 0.5)
        folder = rng.choice(["ops", "data", "search"])
        queries.append(_query(f"q{i}", [f"{folder}/n{i}.md"], rng.choice([None, 1, 2, 4, 9]), tags))
    record = _record(queries)
    slices = measure_slices(record, None, define_slices(queries, "folder"))
    assert {s.name for s in slices} >= {"en", "ja", "howto", "ops/", "data/", "search/"}
    for s in slices:
        members = [
            q
            for q in queries
            if s.name in q.tags or f"{q.expected[0].path.split('/')[0]}/" == s.name
        ]
        expected = aggregate([(q.expected, q.metrics) for q in members], KS)
        assert s.aggregate == expected
        assert s.query_count == len(members) and s.deltas is None
    # the folders partition the queries: their counts add up to the whole
    assert sum(s.query_count for s in slices if s.kind == "folder") == 40


def test_a_slice_of_every_query_is_the_aggregate_and_its_deltas_the_diffs() -> None:
    before = [_query(f"q{i}", ["a/x.md"], 1, ("all",)) for i in range(12)]
    now = [_query(f"q{i}", ["a/x.md"], 1 if i % 3 else None, ("all",)) for i in range(12)]
    old, new = _record(before), _record(now)
    (whole,) = measure_slices(new, old, define_slices(now))
    assert whole.aggregate == new.aggregate and whole.paired_queries == 12
    significance = compare_records(new, old)
    assert whole.deltas is not None
    for d in whole.deltas:
        assert d.test == significance.get(d.label)
    assert whole.delta("MRR").delta == pytest.approx(new.aggregate.mrr - old.aggregate.mrr)


def _ja_en(n_en: int = 30, n_ja: int = 10, n_small: int = 4) -> tuple[RunRecord, RunRecord]:
    """Before: every query found at rank 1. Now: the ja queries lose their answers."""

    def make(lost: bool) -> list[QueryResult]:
        out = []
        for i in range(n_en):
            tags = ("en", "small") if i < n_small else ("en",)
            out.append(_query(f"en{i}", ["en/x.md"], 1, tags))
        out += [_query(f"ja{i}", ["ja/x.md"], None if lost else 1, ("ja",)) for i in range(n_ja)]
        return out

    return _record(make(True), "2026-01-02T00:00:00+00:00"), _record(make(False))


@pytest.mark.parametrize("mode", ["threshold", "significant"])
def test_the_slice_gate_fails_the_slice_the_aggregate_hides(mode: str) -> None:
    now, before = _ja_en()
    aggregate_gate = decide(now, before, compare_records(now, before), mode=mode, threshold=0.3)
    assert not aggregate_gate.regressed  # -0.25 on every metric: under the threshold
    gate = decide_slices(
        now, before, define_slices(now.per_query), mode=mode, threshold=0.3, alpha=0.05
    )
    assert gate.regressed
    assert [s.name for s in gate.regressed_slices] == ["ja"]
    assert [s.name for s in gate.gated] == ["en", "ja"]
    assert gate.not_gated == (("small", 4),)
    assert gate.not_gated_text() == "1 slice under 10 queries reported, not gated: small (4)"
    assert gate.regressed_slices[0].describe().startswith("slice ja (10 queries): recall@1, ")
    doc = json.loads(json.dumps(gate.to_dict()))
    assert doc["regressed"] and doc["not_gated"] == [{"name": "small", "query_count": 4}]


def test_a_small_slice_is_not_gated_however_far_it_fell() -> None:
    now, before = _ja_en(n_ja=9)
    gate = decide_slices(
        now, before, define_slices(now.per_query), mode="threshold", threshold=0.3, alpha=0.05
    )
    assert not gate.regressed and ("ja", 9) in gate.not_gated
    lowered = decide_slices(
        now,
        before,
        define_slices(now.per_query),
        mode="threshold",
        threshold=0.3,
        alpha=0.05,
        min_queries=9,
    )
    assert [s.name for s in lowered.regressed_slices] == ["ja"]


def test_one_slice_of_every_query_adjusts_exactly_as_the_aggregate_gate() -> None:
    rng = np.random.default_rng(3)
    before = [_query(f"q{i}", ["a/x.md"], int(rng.integers(1, 6)), ("all",)) for i in range(20)]
    now = [_query(f"q{i}", ["a/x.md"], int(rng.integers(1, 8)), ("all",)) for i in range(20)]
    new, old = _record(now), _record(before)
    plain = decide(new, old, compare_records(new, old), mode="significant", threshold=0.0)
    (whole,) = decide_slices(
        new, old, define_slices(now), mode="significant", threshold=0.0, alpha=0.05
    ).gated
    assert [m.p_adjusted for m in whole.metrics] == pytest.approx(
        [m.p_adjusted for m in plain.metrics]
    )
    assert [m.regressed for m in whole.metrics] == [m.regressed for m in plain.metrics]


def test_significant_mode_pays_for_more_slices() -> None:
    """The family is slices x metrics: the same fall, adjusted over more slices, is never
    less significant."""
    now, before = _ja_en(n_ja=6, n_en=12)
    one = decide_slices(
        now, before, [d for d in define_slices(now.per_query) if d.name == "ja"],
        mode="significant", threshold=0.0, alpha=0.05, min_queries=1,
    )  # fmt: skip
    many = decide_slices(
        now,
        before,
        define_slices(now.per_query),
        mode="significant",
        threshold=0.0,
        alpha=0.05,
        min_queries=1,
    )
    p_one = {m.label: m.p_adjusted for m in one.gated[0].metrics}
    ja = next(s for s in many.gated if s.name == "ja")
    for m in ja.metrics:
        assert m.p_adjusted is not None and m.p_adjusted >= p_one[m.label] - 1e-12


def test_tags_are_stored_only_when_present() -> None:
    plain = _query("a", ["x.md"], 1)
    assert "tags" not in plain.to_dict()
    tagged = _query("a", ["x.md"], 1, ("ja", "howto"))
    assert tagged.to_dict()["tags"] == ["ja", "howto"]
    assert QueryResult.from_dict(tagged.to_dict()) == tagged
    assert QueryResult.from_dict(plain.to_dict()) == plain


def test_subset_keeps_golden_order_and_recomputes() -> None:
    queries = [_query(f"q{i}", ["a.md"], 1 if i % 2 else None, ("t",)) for i in range(6)]
    part = subset(_record(queries), ["q5", "q1", "q2"])
    assert [q.id for q in part.per_query] == ["q1", "q2", "q5"]
    assert part.aggregate.query_count == 3
    assert part.aggregate.mrr == pytest.approx(2 / 3)


def test_judged_at_k_per_slice_names_the_least_judged() -> None:
    from pathlib import Path

    from groove.report.eval_slices import judged_lines
    from groove.runs.judged import JudgedSummary

    queries = [_query(f"q{i}", ["a.md"], 1, ("ja" if i < 2 else "en",)) for i in range(5)]
    per_query = {f"q{i}": {1: 1.0, 10: 0.3 if i < 2 else 0.9} for i in range(5)}
    summary = JudgedSummary(Path("j.yml"), 3, (1, 10), per_query, {1: 1.0, 10: 0.66}, None, None)
    slices = measure_slices(_record(queries), None, define_slices(queries), summary)
    assert {s.name: s.judged_top for s in slices} == {"en": (10, 0.9), "ja": (10, 0.3)}
    assert judged_lines(slices) == ["judged@10 per slice (least judged first): ja 0.30, en 0.90"]
    assert slices[1].to_dict()["judged_at_k"] == {"1": 1.0, "10": 0.3}
    assert (
        "judged_at_k"
        not in measure_slices(_record(queries), None, define_slices(queries))[0].to_dict()
    )


def test_the_pool_counts_unjudged_hits_per_tag(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from groove.golden.judgements import Judgements
    from groove.golden.queries import GoldenQuery, GoldenSet
    from groove.judging.pool import SourceLists, build_pool

    queries = (
        GoldenQuery("a", "a?", (Expected("x.md"),), ("en",), 1),
        GoldenQuery("b", "b?", (Expected("y.md"),), ("ja",), 5),
        GoldenQuery("c", "c?", (Expected("z.md"),), ("ja",), 9),
    )
    golden = GoldenSet(tmp_path / "g.yml", queries, "h")
    tops = {
        "a": [("x.md", None, 1, 1.0), ("o1.md", None, 2, 1.0)],
        "b": [("o2.md", None, 1, 1.0), ("o3.md", None, 2, 1.0)],
        "c": [("o4.md", None, 1, 1.0), ("z.md", None, 2, 1.0)],
    }
    judgements = Judgements(tmp_path / "g.judgements.yml", ())
    pool = build_pool(golden, judgements, [SourceLists("#1", tops)], depth=10)
    assert pool.slices == (("ja", 2, 3), ("en", 1, 1))
    assert pool.slice_summary() == (
        "unjudged hits per slice (least judged first): ja 3 over 2 queries, en 1 over 1 queries"
    )
    assert pool.to_dict()["slices"][0] == {"name": "ja", "queries": 2, "unjudged": 3}


def test_a_slice_fall_on_too_few_moved_queries_is_said_unjudged() -> None:
    before = [_query(f"q{i}", ["a.md"], 1, ("t",)) for i in range(10)]
    now = [_query(f"q{i}", ["a.md"], None if i < 3 else 1, ("t",)) for i in range(10)]
    new, old = _record(now, "2026-01-02T00:00:00+00:00"), _record(before)
    defs = define_slices(now)
    gate = decide_slices(new, old, defs, mode="significant", threshold=0.2, alpha=0.05)
    (t,) = gate.gated
    assert t.moved == 3 and t.unjudged and not t.regressed  # the smallest p(drop) is 1/8
    threshold = decide_slices(new, old, defs, mode="threshold", threshold=0.2, alpha=0.05)
    assert threshold.gated[0].regressed and not threshold.gated[0].unjudged
