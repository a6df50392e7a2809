"""golden-queries-quoted: normalisation, floor, distinct queries, exemptions, ranks."""

from __future__ import annotations

from groove.evaluation.findings import (
    CHECK_QUOTED,
    Finding,
    QuotedQuery,
    QuoteScanner,
    normalise,
    warning_text,
)
from groove.evaluation.golden import GoldenQuery
from groove.evaluation.metrics import Expected

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
        scanner.visit(*row)
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


def test_warning_text_is_exact() -> None:
    findings = (
        Finding(CHECK_QUOTED, "eng/eval.md", (QuotedQuery("torch", None), QuotedQuery("ce", 8))),
    )
    assert warning_text(findings) == (
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
