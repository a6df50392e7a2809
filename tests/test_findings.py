"""golden-queries-quoted: normalisation, floor, distinct queries, exemptions, ranks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.golden.findings import (
    CHECK_QUOTED,
    Finding,
    QuotedQuery,
    QuoteScanner,
    normalise,
)
from groove.golden.queries import GoldenQuery
from groove.metrics import Expected
from groove.report.findings_text import quoted_text

Q1 = "How do I roll back a bad release?"
Q2 = "What share of traffic does a canary get?"
Q3 = "Which snapshots do we keep?"


def golden(*queries: tuple[str, str, tuple[str, ...]]) -> tuple[GoldenQuery, ...]:
    return tuple(
        GoldenQuery(
            id=qid, query=text, expected=tuple(Expected(p) for p in paths), tags=(), line=None
        )
        for qid, text, paths in queries
    )


def scan(queries, rows, tops=None):  # type: ignore[no-untyped-def]
    scanner = QuoteScanner(queries)
    for row in rows:
        scanner.visit(row)
    return scanner.findings(tops if tops is not None else [[] for _ in queries])


def test_normalise_folds_every_unicode_space_and_case() -> None:
    assert normalise("  Roll\tBACK\u3000the\n\nrelease ") == "roll back the release"


def test_two_distinct_quoted_queries_make_a_finding_with_ranks() -> None:
    queries = golden(("q1", Q1, ("ops/rollback.md",)), ("q2", Q2, ("ops/canary.md",)))
    note = f"Notes on the eval: we ask '{Q1.upper()}' and   {Q2}"
    found = scan(queries, [("notes/eval.md", 0, None, note, None)], [["x.md", "notes/eval.md"], []])
    assert found == (
        Finding(
            CHECK_QUOTED,
            "notes/eval.md",
            (QuotedQuery("q1", 2), QuotedQuery("q2", None)),
        ),
    )


def test_one_quote_is_not_evidence() -> None:
    queries = golden(("q1", Q1, ("a.md",)), ("q2", Q2, ("b.md",)))
    assert scan(queries, [("n.md", 0, None, f"text {Q1} text", None)]) == ()


def test_queries_under_twelve_characters_are_never_matched() -> None:
    queries = golden(("s1", "rrf k value", ("a.md",)), ("q2", Q2, ("b.md",)))
    assert len(normalise("rrf k value")) == 11
    assert scan(queries, [("n.md", 0, None, f"rrf k value and {Q2}", None)]) == ()


def test_fields_are_matched_separately_never_across_a_seam() -> None:
    queries = golden(("q1", Q1, ("a.md",)), ("q2", Q2, ("b.md",)))
    half = len(Q1) // 2
    row = ("n.md", 0, Q1[:half], Q1[half:] + " " + Q2, None)
    assert scan(queries, [row]) == ()
    # the heading and the breadcrumb are searched too, each on its own
    rows = [("n.md", 0, Q1, "body", None), ("n.md", 1, None, "body", f"Title > {Q2}")]
    assert [f.path for f in scan(queries, rows)] == ["n.md"]


def test_matches_in_different_chunks_of_one_document_add_up() -> None:
    queries = golden(("q1", Q1, ("a.md",)), ("q2", Q2, ("b.md",)))
    rows = [("n.md", 0, None, Q1, None), ("n.md", 1, None, Q2, None), ("m.md", 0, None, Q1, None)]
    assert [f.path for f in scan(queries, rows)] == ["n.md"]


def test_a_document_expected_by_the_query_is_exempt() -> None:
    queries = golden(
        ("q1", Q1, ("n.md",)), ("q2", Q2, ("b.md",)), ("q3", Q3 + " nightly", ("c.md",))
    )
    rows = [("n.md", 0, None, f"{Q1} {Q2}", None)]
    assert scan(queries, rows) == ()
    rows = [("n.md", 0, None, f"{Q1} {Q2} {Q3} nightly", None)]
    assert scan(queries, rows)[0].quoted == (QuotedQuery("q2", None), QuotedQuery("q3", None))


def test_a_query_inside_a_longer_quoted_query_counts_once() -> None:
    long = "how do i roll back a bad release quickly"
    queries = golden(("short", Q1.rstrip("?"), ("a.md",)), ("long", long, ("b.md",)))
    assert scan(queries, [("n.md", 0, None, long, None)]) == ()


def test_identical_queries_fold_into_the_first_id() -> None:
    queries = golden(
        ("first", Q1, ("a.md",)), ("again", Q1.upper(), ("z.md",)), ("q2", Q2, ("b.md",))
    )
    found = scan(queries, [("z.md", 0, None, f"{Q1} {Q2}", None)])
    # z.md is expected by the folded duplicate, so the whole needle is exempt there
    assert found == ()
    found = scan(queries, [("n.md", 0, None, f"{Q1} {Q2}", None)])
    assert [q.query_id for q in found[0].quoted] == ["first", "q2"]


def test_japanese_queries_are_matched_verbatim() -> None:
    ja1 = "再ランキングはいつ有効にすべきですか"
    ja2 = "チャンクの重複排除はどうしている？"
    queries = golden(("j1", ja1, ("a.md",)), ("j2", ja2, ("b.md",)))
    assert len(normalise(ja1)) >= 12 and len(normalise(ja2)) >= 12
    found = scan(queries, [("メモ.md", 0, None, f"評価メモ: {ja1}、{ja2}", None)])
    assert [f.path for f in found] == ["メモ.md"]


# Words that overlap and nest ("ab" in "abab", "aba"...), CJK, a case fold and odd spaces:
# the automaton must find exactly what a substring test per query per field finds.
_WORDS = st.sampled_from(
    ["ab", "aba", "abab", "ba", "b", "roll", "back", "ロール", "バック", "ΣΑ", "σα"]
)
_TEXT = st.lists(_WORDS, min_size=0, max_size=12).map("  ".join)
_SPACED = st.lists(st.tuples(_WORDS, st.sampled_from([" ", "\t", "\u3000", "\n "])), max_size=14)


def _reference_matches(queries, rows):  # type: ignore[no-untyped-def]
    """Which needles each path holds, one substring test per needle per field."""
    scanner = QuoteScanner(queries)
    found: dict[str, set[int]] = {}
    for path, _, heading, content, context in rows:
        for text in (heading, context, content):
            if text:
                haystack = normalise(text)
                for n, needle in enumerate(scanner.needles):
                    if needle.text in haystack:
                        found.setdefault(path, set()).add(n)
    return found


@settings(max_examples=300, deadline=None)
@given(
    fields=st.lists(
        st.tuples(st.sampled_from(["a.md", "b.md"]), _SPACED, _SPACED), min_size=1, max_size=6
    ),
    cuts=st.lists(st.tuples(st.integers(0, 200), st.integers(12, 40)), min_size=1, max_size=8),
    others=st.lists(_TEXT, max_size=3),
)
def test_every_query_in_every_field_is_found_as_one_at_a_time_finds_it(
    fields, cuts, others
) -> None:  # type: ignore[no-untyped-def]
    rows = [
        (path, i, None, "".join(w + s for w, s in body), "".join(w + s for w, s in context))
        for i, (path, body, context) in enumerate(fields)
    ]
    # queries cut from the fields themselves, so that they nest and overlap there
    corpus = " ".join(normalise(f"{row[3]} {row[4]}") for row in rows)
    texts = [corpus[start : start + size] for start, size in cuts] + others
    queries = golden(*((f"q{i}", text, ()) for i, text in enumerate(texts)))
    scanner = QuoteScanner(queries)
    for row in rows:
        scanner.visit(row)
    assert dict(scanner.matches) == _reference_matches(queries, rows)


def test_warning_text_is_exact() -> None:
    findings = (
        Finding(CHECK_QUOTED, "eng/eval.md", (QuotedQuery("torch", None), QuotedQuery("ce", 8))),
    )
    assert quoted_text(findings) == (
        "groove eval: 1 document(s) quote 2 or more golden queries verbatim "
        "(golden-queries-quoted).\n"
        "  eng/eval.md\n"
        "    torch (not in top_k)\n"
        "    ce (rank 8)\n"
        "  Either these notes leaked into the corpus, or the queries came from them\n"
        "  and the documents belong in `expected`. groove eval changes neither."
    )


def test_finding_round_trips_through_dict() -> None:
    finding = Finding(CHECK_QUOTED, "p.md", (QuotedQuery("a", 3), QuotedQuery("b", None)))
    assert finding.to_dict() == {
        "check": "golden-queries-quoted",
        "path": "p.md",
        "quoted": [{"query_id": "a", "rank_in_top_k": 3}, {"query_id": "b", "rank_in_top_k": None}],
    }
    assert Finding.from_dict(finding.to_dict()) == finding


# ---------------------------------------------------------------- duplicate-query-id


def test_ids_shared_by_several_queries_are_named_given_or_default(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from groove.golden.findings import (
        CHECK_DUPLICATE_ID,
        DuplicateIdFinding,
        duplicate_id_findings,
        finding_from_dict,
    )
    from groove.golden.queries import load_golden
    from groove.report.findings_text import warning_texts

    stem = "How do I roll back a deploy when"  # 32 characters: the default id
    assert len(stem) == 32
    path = tmp_path / "golden.yml"
    path.write_text(
        "queries:\n"
        f"  - query: {stem} the canary fails?\n    expected: [{{path: a.md}}]\n"
        f"  - query: {stem} the database migrated?\n    expected: [{{path: b.md}}]\n"
        "  - id: backup\n    query: which snapshots?\n    expected: [{path: c.md}]\n"
        "  - id: backup\n    query: how long do we keep backups?\n    expected: [{path: c.md}]\n"
        "  - id: unique\n    query: who is on call?\n    expected: [{path: d.md}]\n",
        encoding="utf-8",
    )
    found = duplicate_id_findings(load_golden(path).queries)
    assert found == (
        DuplicateIdFinding(CHECK_DUPLICATE_ID, stem, (2, 4), True),
        DuplicateIdFinding(CHECK_DUPLICATE_ID, "backup", (6, 9), False),
    )
    assert [finding_from_dict(f.to_dict()) for f in found] == list(found)
    (text,) = warning_texts(found)
    assert text == (
        "groove eval: 2 query id(s) in the golden file name more than one query "
        "(duplicate-query-id).\n"
        f"  query id '{stem}' (default id: the first 32 characters) names 2 queries "
        "(lines 2, 4)\n"
        "  query id 'backup' names 2 queries (lines 6, 9)\n"
        "  Runs are paired by id (the per-query diff, groove compare): only the first\n"
        "  query of each id is compared. Give every query its own `id`."
    )


# ---------------------------------------------------------------- retriever-paths-implausible


def _tops(*paths: str):  # type: ignore[no-untyped-def]
    from groove.metrics import RankedHit

    return [tuple(RankedHit(r, p, None, 0.0) for r, p in enumerate(paths, start=1))]


INDEXED = frozenset({"ops/rollback.md", "ops/canary.md", "team/oncall.md", "archive/old.md"})


def test_absolute_hit_paths_are_not_indexed_paths_and_the_fix_names_the_prefix() -> None:
    from groove.golden.hit_paths import hit_path_findings
    from groove.report.findings_text import hit_path_text

    tops = _tops(*(f"/srv/kb/{p}" for p in sorted(INDEXED)))
    (found,) = hit_path_findings(tops, {"ops/rollback.md"}, INDEXED)
    assert (found.against, found.hits, found.implausible, found.pattern) == (
        "index",
        4,
        4,
        "absolute",
    )
    assert found.examples == ("/srv/kb/archive/old.md", "/srv/kb/ops/canary.md",
                              "/srv/kb/ops/rollback.md")  # fmt: skip
    assert hit_path_text([found]) == (
        "groove eval: 4 of 4 hit paths from the retriever are not indexed paths "
        "(retriever-paths-implausible).\n"
        "  e.g. /srv/kb/archive/old.md, /srv/kb/ops/canary.md, /srv/kb/ops/rollback.md\n"
        "  Likely fix: the paths are absolute: strip '/srv/kb/' to get paths relative to the KB "
        "folder, as the index holds them (e.g. archive/old.md).\n"
        "  Each such hit counts as a miss: the scores say nothing of the retriever."
    )


@pytest.mark.parametrize(
    ("paths", "pattern"),
    [
        (("./ops/rollback.md", "./ops/canary.md", "ops/x.md"), "dot-slash"),
        (("kb/ops/rollback.md", "kb/team/oncall.md", "x.md"), "prefix"),
        (("ops\\rollback.md", "ops\\canary.md", "x.md"), "backslash"),
        (("C:\\kb\\ops\\rollback.md", "C:\\kb\\ops\\canary.md", "x.md"), "absolute"),
    ],
)
def test_without_an_index_hits_are_judged_by_the_golden_paths_shape(
    paths: tuple[str, ...], pattern: str
) -> None:
    from groove.golden.hit_paths import hit_path_findings

    golden = {"ops/rollback.md", "ops/canary.md", "team/oncall.md"}
    (found,) = hit_path_findings(_tops(*paths), golden, None)
    assert (found.against, found.implausible, found.pattern) == ("golden", 2, pattern)


def test_plausible_hits_raise_nothing() -> None:
    from groove.golden.hit_paths import hit_path_findings

    golden = {"ops/rollback.md"}
    # Paths outside the golden file are plausible: most hits of any retriever are no answer.
    elsewhere = _tops("archive/old.md", "team/oncall.md", "x/y.md")
    assert hit_path_findings(elsewhere, golden, None) == ()
    # Half of the hits unindexed is not "most".
    assert hit_path_findings(_tops("ops/rollback.md", "/abs.md"), golden, INDEXED) == ()
    assert hit_path_findings([()], golden, INDEXED) == ()


def test_groove_engine_runs_report_duplicate_ids_too(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from conftest import copy_kb
    from helpers.hashing import HashingEmbedder

    from groove.config import Config
    from groove.engine.index import build
    from groove.evaluation.run import run
    from groove.evaluation.settings import resolve_settings
    from groove.golden.findings import DuplicateIdFinding

    kb = copy_kb("kb_en", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder)
    golden = tmp_path / "golden.yml"
    golden.write_text(
        "queries:\n"
        "  - {id: r, query: roll back a release, expected: [{path: ops/rollback.md}]}\n"
        "  - {id: r, query: canary share, expected: [{path: ops/canary.md}]}\n",
        encoding="utf-8",
    )
    settings = resolve_settings(Config(), kb_path=kb, golden=golden, history=False)
    result = run(settings, embedder=embedder)
    assert [f for f in result.findings if isinstance(f, DuplicateIdFinding)] == [
        DuplicateIdFinding("duplicate-query-id", "r", (2, 3), False)
    ]
