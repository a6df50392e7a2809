"""Every public result introduces itself briefly: a short repr and a one-screen HTML card,
however large the golden set (1,000 generated queries here; the dataclass repr of such an
EvalRun ran to 667,592 characters)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers.hashing import HashingEmbedder

from groove.cards import MAX_REPR_CHARS, MAX_ROWS, Card, clip
from groove.config import Config
from groove.engine.query import compile_query
from groove.engine.search import SearchOptions, search
from groove.history.history import history_path, load_history
from groove.stats.compare import LabelledRun, compare_runs
from groove.store.db import connect
from groove.tuning.run import run as tune_run
from groove.tuning.settings import resolve_settings as tune_settings

QUERIES = 1000


class _Text(HTMLParser):
    """The visible text of a card and how many table rows and tags it has."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.rows = 0
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.rows += tag == "tr"
        self.scripts += tag in ("script", "img", "iframe", "link")

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _check(result: object, kind: str, *, verdict: str, method: str) -> str:
    text = repr(result)
    assert text.startswith(f"<{kind}: ") and text.endswith(">")
    assert len(text) <= MAX_REPR_CHARS
    assert len(text.splitlines()) <= MAX_ROWS + 5
    assert re.search(verdict, text), text
    assert method in text
    page = result._repr_html_()  # type: ignore[attr-defined]
    assert len(page) <= 8 * 1024
    parsed = _Text()
    parsed.feed(page)
    visible = " ".join(parsed.text)
    assert re.search(verdict, visible), visible
    assert method in visible and kind in visible
    assert parsed.rows <= MAX_ROWS and parsed.scripts == 0  # one screen, nothing to load
    return text


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """An index of the English fixture, 1,000 generated queries, two explained runs."""
    from helpers.large_runs import large_runs

    got = large_runs(tmp_path_factory.mktemp("cards"))
    return {
        "kb": got.kb,
        "golden": got.golden,
        "summary": got.summary,
        "first": got.first,
        "second": got.second,
    }


def test_an_eval_run_of_1000_queries(large: dict[str, object]) -> None:
    first, second = large["first"], large["second"]
    assert len(second.per_query) == QUERIES  # type: ignore[attr-defined]
    _check(first, "EvalRun", verdict="first run", method="run.per_query_frame()")
    text = _check(
        second,
        "EvalRun",
        verdict=r"(fell by more than|no metric fell)",
        method="run.attribution_frame()",
    )
    assert "misses" in text and f"of {QUERIES} queries" in text


def test_the_history_of_1000_query_runs(large: dict[str, object]) -> None:
    history = load_history(history_path(large["kb"]))  # type: ignore[arg-type]
    assert len(history.runs) == 2
    _check(
        history, "History", verdict="newest run vs the one before", method="history.runs_frame()"
    )
    empty = load_history(Path(str(large["kb"])) / "none.json")
    assert repr(empty) == "<History: groove eval history: no run stored\n  • empty>"


def test_a_comparison_of_1000_query_runs(large: dict[str, object]) -> None:
    history = load_history(history_path(large["kb"]))  # type: ignore[arg-type]
    runs = [LabelledRun(f"#{i + 1}", r) for i, r in enumerate(history.runs)]
    comparison = compare_runs(runs, 1)
    _check(
        comparison,
        "Comparison",
        verdict=r"(significant change|no significant change)",
        method="comparison.metrics_frame()",
    )


def test_search_and_index_results(large: dict[str, object]) -> None:
    kb = large["kb"]
    _check(large["summary"], "IndexSummary", verdict=r"indexed \d+ file", method="summary.skipped")
    conn = connect(Path(str(kb)).parent / ".groove.db")
    try:
        query = "how do I roll back a release " * 40  # a long query is cut, not echoed whole
        vector = HashingEmbedder().embed([compile_query(query).positive_text])[0]
        result = search(conn, query, vector, SearchOptions(limit=1000))
    finally:
        conn.close()
    assert len(result.hits) > 8
    text = _check(result, "SearchResult", verdict=r"hit\(s\); best: ", method="result.hits")
    assert "more hits" in text


@pytest.mark.slow
def test_a_tune_result_of_1000_queries(large: dict[str, object]) -> None:
    settings = tune_settings(Config(), kb_path=large["kb"], golden=large["golden"])
    result = tune_run(settings, embedder=HashingEmbedder())
    assert len(result.queries) == QUERIES
    _check(
        result,
        "TuneResult",
        verdict=r"(adopt |keep the built-in defaults)",
        method="result.conditions_frame()",
    )


def test_a_card_never_outgrows_its_bounds() -> None:
    card = Card(
        "EvalRun",
        "x" * 10_000,
        "y" * 10_000,
        "bad",
        tuple((f"row {i}" * 50, "v" * 5000) for i in range(100)),
        tuple((f"m{i}()" * 30, "w" * 500) for i in range(20)),
        "z" * 5000,
    )
    assert len(card.text()) <= MAX_REPR_CHARS
    assert card.html().count("<tr>") == MAX_ROWS
    assert "<script" not in Card("A", "<script>", "<b>", "ok").html()
    assert clip("a\n b  c", 4) == "a b…"


def test_a_pool_of_many_candidates_and_an_empty_one() -> None:
    from groove.judging.pool import Candidate, Pool, Sighting

    candidates = tuple(
        Candidate(
            f"q{i % QUERIES}",
            f"question {i % QUERIES}",
            f"docs/{i}.md",
            "Steps" if i % 2 else None,
            "text " * 200,
            (Sighting("#1", i % 10 + 1),),
            1.0 / (i + 1),
        )
        for i in range(QUERIES * 3)
    )
    pool = Pool(Path("golden.yml"), Path("golden.judgements.jsonl"), 10, ("#1",), candidates, 7)
    text = _check(
        pool,
        "Pool",
        verdict=r"3000 unjudged hit\(s\) over 1000 queries",
        method="pool.candidates_frame()",
    )
    assert "and 2994 more candidates" in text
    empty = Pool(Path("golden.yml"), Path("golden.judgements.jsonl"), 10, ("#1",), (), 7)
    _check(empty, "Pool", verdict="nothing left to judge", method="pool.candidates_frame()")


def test_every_result_type_has_its_card_in_the_views_layer() -> None:
    """Results are plain data: each ``Introduces`` type's card is found by its type name in
    groove.views, so a result type missing there could not show itself (repr would fail)."""
    import importlib

    from groove.cards import Introduces
    from groove.views import VIEWS

    root = Path(__file__).resolve().parent.parent / "groove"
    declared = set()
    for path in root.rglob("*.py"):
        found = re.findall(r"^class (\w+)\(Introduces\)", path.read_text(), re.MULTILINE)
        if found:
            module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
            for name in found:
                assert issubclass(getattr(importlib.import_module(module), name), Introduces)
                declared.add(name)
    assert len(declared) >= 8
    assert {name for name in declared if "card" in VIEWS.get(name, {})} == declared
    assert set(VIEWS) == declared  # and no view for a type that is gone
