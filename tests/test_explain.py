"""``groove eval --explain``: every cause produced on a real index, ranks checked against
direct queries of each leg, the grid checked against the per-condition sweep.

The KB is generated (tests/helpers/explain_kb.py): 64 near-identical notes about database
backup retention, a stew recipe that names the made-up word "zorblax" (the only FTS match
for it, far from the query in vector space), a gardening note that shares no word with the
queries, and a draft that .grooveignore hides. Over 50 chunks, so a leg's candidate pool
(50) does not hold the whole index.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from groove.cli import cli
from groove.config import Config
from groove.engine.lexical import lexical_query, mode_for_index
from groove.engine.search import candidate_pool, excluded_chunks, fts_leg, rrf_fuse, vector_leg
from groove.engine.session import open_engine
from groove.evaluation.run import run
from groove.evaluation.settings import resolve_settings
from groove.explain.attribution import CAUSES, Attribution, summary_line
from groove.explain.explain import Explainer, LegOrders
from groove.golden.paths import PathDoctor, near_matches
from groove.metrics import Expected
from groove.store.db import read_snapshot
from groove.store.meta import read_meta
from groove.store.ranks import indexed_paths
from groove.tuning.reach import PROBE, grid_rankings
from groove.tuning.sweep import fts_rankings, sweep_query_per_condition
from tests.helpers.explain_kb import GOLDEN, QUERY, build_explain_kb

K = 10


@pytest.fixture(scope="module")
def explain_source(tmp_path_factory: pytest.TempPathFactory, real_embedder: Any) -> Path:
    return build_explain_kb(tmp_path_factory.mktemp("explain"), real_embedder)


@pytest.fixture
def kb(explain_source: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(explain_source, tmp_path / "copy")
    return tmp_path / "copy" / "kb"


@pytest.fixture
def golden(tmp_path: Path) -> Path:
    path = tmp_path / "golden.yml"
    path.write_text(GOLDEN, encoding="utf-8")
    return path


def explained(kb: Path, golden: Path, embedder: Any, **kw: Any) -> Any:
    settings = resolve_settings(
        Config(), kb_path=kb, golden=golden, history=False, explain=True, **kw
    )
    return run(settings, embedder=embedder, grid=PROBE)


def routed(conn: Any, query: str) -> Any:
    """The query as the search compiles it: routed to the index's FTS table."""
    return lexical_query(query, mode_for_index(None, read_meta(conn)))


def by_path(result: Any, query_id: str) -> dict[str, Attribution]:
    return {
        a.path + (f" › {a.heading}" if a.heading else ""): a for a in result.attribution[query_id]
    }


def test_every_cause_of_the_fixture_set(kb: Path, golden: Path, real_embedder: Any) -> None:
    result = explained(kb, golden, real_embedder)
    causes = {a.cause for group in result.attribution.values() for a in group}
    assert {
        "not-indexed",
        "heading-mismatch",
        "excluded",
        "fusion-buried",
        "neither-leg",
    } <= causes
    typo = by_path(result, "typo")
    assert typo["kitchen/zorblx.md"].cause == "not-indexed"
    assert typo["kitchen/zorblx.md"].not_indexed_reason == "missing"
    assert typo["kitchen/zorblx.md"].near_matches == ("kitchen/zorblax.md",)
    assert typo["./kitchen/zorblax.md"].not_indexed_reason == "path-spelling"
    assert typo["Kitchen/Zorblax.md"].near_matches == ("kitchen/zorblax.md",)
    assert typo["old/zorblax.md"].near_matches == ("kitchen/zorblax.md",)
    ignored = by_path(result, "ignored")["drafts/hidden.md"]
    assert (ignored.cause, ignored.not_indexed_reason, ignored.indexed) == (
        "not-indexed",
        "ignored",
        False,
    )
    heading = by_path(result, "heading")["kitchen/zorblax.md › Ingredient list"]
    assert (heading.cause, heading.heading_exists, heading.closest_heading) == (
        "heading-mismatch",
        False,
        "Ingredients",
    )
    excluded = by_path(result, "excluded")["kitchen/zorblax.md"]
    assert excluded.cause == "excluded" and excluded.excluded_by == ("zorblax",)
    assert excluded.fts_rank is None and excluded.vector_rank is None
    buried = by_path(result, "buried")["kitchen/zorblax.md"]
    assert buried.cause == "fusion-buried"
    assert buried.fts_rank == 1 and buried.vector_rank is not None and buried.vector_rank > 50
    assert buried.fused_rank is not None and buried.fused_rank > K
    nowhere = by_path(result, "nowhere")["garden/tulips.md"]
    assert nowhere.cause == "neither-leg" and nowhere.fts_rank is None
    assert nowhere.vector_rank is not None and nowhere.vector_rank > 50
    assert summary_line(result.attribution).startswith("misses by cause: not-indexed 5, ")
    # Answers that no query can miss or find differently are not attributed at all.
    assert set(result.attribution) == {
        "typo",
        "ignored",
        "heading",
        "excluded",
        "buried",
        "nowhere",
    }


def test_ranks_match_direct_queries_of_each_leg(kb: Path, golden: Path, real_embedder: Any) -> None:
    result = explained(kb, golden, real_embedder)
    weights = Config().search.fusion.weights
    with open_engine(kb, embedder=real_embedder) as engine, read_snapshot(engine.conn) as conn:
        chunk_of = {
            path: cid
            for cid, path in conn.execute(
                "SELECT c.id, d.path FROM chunks c JOIN documents d ON d.id = c.document_id"
            )
        }
        total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        for query_id, path in (("buried", "kitchen/zorblax.md"), ("nowhere", "garden/tulips.md")):
            query = next(q for q in result.per_query if q.id == query_id).query
            compiled = routed(conn, query)
            vector = engine.embed_queries([compiled.terms.positive_text])[0]
            excluded = excluded_chunks(conn, compiled)
            fts_all = fts_leg(conn, compiled.match, weights, total, compiled.leg)
            vec_all = vector_leg(conn, vector, total, excluded)
            a = by_path(result, query_id)[path]
            target = chunk_of[path]
            assert a.fts_rank == (fts_all.index(target) + 1 if target in fts_all else None)
            assert a.fts_matches == len(fts_all)
            assert a.vector_rank == vec_all.index(target) + 1
            assert a.vector_candidates == len(vec_all)
            pool = candidate_pool(K)
            fused = [cid for cid, _ in rrf_fuse([vec_all[:pool], fts_all[:pool]], 60.0)]
            assert a.fused_rank == (fused.index(target) + 1 if target in fused else None)


def test_grid_reach_equals_the_per_condition_sweep(
    kb: Path, golden: Path, real_embedder: Any
) -> None:
    result = explained(kb, golden, real_embedder)
    with open_engine(kb, embedder=real_embedder) as engine, read_snapshot(engine.conn) as conn:
        labels = {
            cid: (path, heading)
            for cid, path, heading in conn.execute(
                "SELECT c.id, d.path, c.heading FROM chunks c JOIN documents d "
                "ON d.id = c.document_id"
            )
        }
        for query_id, path in (("buried", "kitchen/zorblax.md"), ("nowhere", "garden/tulips.md")):
            query = next(q for q in result.per_query if q.id == query_id).query
            compiled = routed(conn, query)
            vector = engine.embed_queries([compiled.terms.positive_text])[0]
            rows = sweep_query_per_condition(
                conn, compiled, vector, [Expected(path)], labels, candidate_pool(K), K, (K,)
            )
            found = sum(1 for m in rows if m.recall_at_k[K] == 1.0)
            a = by_path(result, query_id)[path]
            assert a.grid is not None and a.grid.of == 384
            assert a.grid.found_in == found
    buried = by_path(result, "buried")["kitchen/zorblax.md"]
    assert buried.grid is not None and buried.grid.found_in > 0  # rrf_k 5 lifts FTS rank 1


def test_pruned_grid_rankings_equal_the_tune_sweep(kb: Path, real_embedder: Any) -> None:
    with open_engine(kb, embedder=real_embedder) as engine, read_snapshot(engine.conn) as conn:
        explainer = Explainer(
            conn,
            resolve_settings(Config(), kb_path=kb).search,
            k=K,
            depth=K,
            reranker=False,
            dim=engine.embedder.dim,
            doctor=PathDoctor(kb, indexed_paths(conn)),
            grid=PROBE,
        )
        for query in (QUERY, "retention of nightly snapshots for the replica", "stew onions"):
            compiled = routed(conn, query)
            vector = engine.embed_queries([compiled.terms.positive_text])[0]
            legs = LegOrders.measure(explainer, compiled, vector)
            assert legs.context_free  # 16 weighted columns stand for the 64 (no context here)
            for pool in (5, 50):
                assert grid_rankings(legs, compiled.match, pool) == fts_rankings(
                    conn, compiled.match, pool, compiled.leg
                )


def test_near_matches_kinds() -> None:
    indexed = ["ops/rollback.md", "ops/canary.md", "archive/Backup.md"]
    assert [n.kind for n in near_matches("./ops/rollback.md", indexed)] == ["prefix"]
    assert [n.kind for n in near_matches("OPS/Rollback.md", indexed)] == ["case"]
    assert [(n.path, n.kind) for n in near_matches("data/backup.md", indexed)] == [
        ("archive/Backup.md", "moved")
    ]
    assert [n.kind for n in near_matches("ops/rolback.md", indexed)] == ["similar"]
    assert near_matches("team/oncall.md", indexed) == ()


def test_a_numbered_note_is_not_a_typo_of_another_number() -> None:
    """docs/572.md missing: docs/72.md is another document (Cranfield numbers its notes)."""
    indexed = ["docs/72.md", "docs/571.md", "docs/57.md", "notes/v2-plan.md"]
    assert near_matches("docs/572.md", indexed) == ()
    assert [n.path for n in near_matches("notes/v2-plna.md", indexed)] == ["notes/v2-plan.md"]
    assert [n.kind for n in near_matches("Docs/72.md", indexed)] == ["case"]


def test_cause_order_for_the_post_retrieval_and_leg_cases() -> None:
    from groove.explain.explain import Explainer as E
    from groove.explain.explain import _Ranks

    ex = E.__new__(E)
    ex.k, ex.options, ex.reranker, ex.depth = K, resolve_search(), True, K

    def cause(**ranks: Any) -> str:
        named = ("fts_rank", "vector_rank", "fused_rank", "final_rank")
        return ex._cause(_Ranks(*(ranks.get(n) for n in named)), excluded=False)

    assert ex.per_leg == 250  # reranker, no MMR: each leg fetches candidate_pool(pool)
    assert cause(fused_rank=3, final_rank=14) == "post-processing"
    assert cause(fused_rank=3, final_rank=None) == "post-processing"
    assert cause(fts_rank=4, vector_rank=300, fused_rank=12) == "fusion-buried"
    assert cause(fts_rank=40, vector_rank=300, fused_rank=35) == "lexical-only-low"
    assert cause(fts_rank=None, vector_rank=40, fused_rank=41) == "vector-only-low"
    assert cause(fts_rank=40, vector_rank=41, fused_rank=30) == "both-low"
    assert cause(fts_rank=400, vector_rank=300) == "neither-leg"
    assert cause(fused_rank=30, final_rank=2) == "found"
    assert set(CAUSES) >= {"post-processing", "lexical-only-low", "vector-only-low", "both-low"}


def resolve_search() -> Any:
    from groove.engine.search import SearchOptions

    return SearchOptions(limit=K)


def test_cli_explain_json_text_markdown(kb: Path, golden: Path) -> None:
    runner = CliRunner()
    base = ["eval", "--kb-path", str(kb), "--golden", str(golden), "--no-history"]
    as_json = runner.invoke(cli, [*base, "--explain", "--format", "json"])
    assert as_json.exit_code == 0, as_json.stderr
    document = json.loads(as_json.stdout)
    for query in document["per_query"]:
        attribution = query["attribution"]
        if query["metrics"]["recall_at_k"]["10"] < 1.0:
            assert len(attribution) == len(query["expected"])
            for item in attribution:
                assert {"path", "heading", "indexed", "fts_rank", "vector_rank"} <= set(item)
                assert {"fused_rank", "cause"} <= set(item)
        else:
            assert attribution is None
    assert document["misses_by_cause"]["not-indexed"] == 5
    text = runner.invoke(cli, [*base, "--explain", "--no-color"])
    assert "  misses by cause: not-indexed 5, " in text.stdout
    assert "    kitchen/zorblax.md  [fusion-buried]\n      FTS rank 1 of " in text.stdout
    assert "      excluded by -zorblax\n" in text.stdout
    markdown = runner.invoke(cli, [*base, "--explain", "--format", "markdown"])
    assert "### Why it missed (k = 10): " in markdown.stdout
    assert "| `garden/tulips.md` | neither-leg | yes | — |" in markdown.stdout
    plain = runner.invoke(cli, [*base, "--format", "json"])
    document = json.loads(plain.stdout)
    assert "misses_by_cause" not in document
    assert all("attribution" not in q for q in document["per_query"])
    assert "Why it missed" not in runner.invoke(cli, base).stdout


def test_golden_path_not_indexed_finding(kb: Path, golden: Path) -> None:
    result = CliRunner().invoke(
        cli, ["eval", "--kb-path", str(kb), "--golden", str(golden), "--format", "json"]
    )
    assert result.exit_code == 0
    findings = json.loads(result.stdout)["findings"]
    missing = {f["path"]: f for f in findings if f["check"] == "golden-path-not-indexed"}
    assert set(missing) == {
        "kitchen/zorblx.md",
        "./kitchen/zorblax.md",
        "Kitchen/Zorblax.md",
        "old/zorblax.md",
        "drafts/hidden.md",
    }
    assert missing["kitchen/zorblx.md"]["near"] == [
        {"path": "kitchen/zorblax.md", "kind": "similar"}
    ]
    assert missing["kitchen/zorblx.md"]["queries"] == ["typo"]
    assert missing["drafts/hidden.md"]["reason"] == "ignored"
    assert "(golden-path-not-indexed)" in result.stderr
    assert "  kitchen/zorblx.md: no such file in the KB\n    expected by: typo\n" in result.stderr
    assert "    did you mean kitchen/zorblax.md (similar path)?" in result.stderr


def test_attribution_frame(kb: Path, golden: Path, real_embedder: Any) -> None:
    result = explained(kb, golden, real_embedder)
    frame = result.attribution_frame()
    assert len(frame) == sum(len(g) for g in result.attribution.values())
    row = frame[(frame["id"] == "buried") & (frame["path"] == "kitchen/zorblax.md")].iloc[0]
    assert (row["cause"], row["fts_rank"]) == ("fusion-buried", 1)
    settings = resolve_settings(Config(), kb_path=kb, golden=golden, history=False)
    assert run(settings, embedder=real_embedder).attribution_frame().empty


def test_notebook_views_show_the_causes(kb: Path, golden: Path, tmp_path: Path) -> None:
    from groove.notebooks import kernel as notebook_run
    from groove.report.notebook import eval_report as views

    outcome = notebook_run.eval_report(
        kb_path=kb, golden=golden, history=False, explain=True, result_path=tmp_path / "r.json"
    )
    assert outcome.ok and outcome.value is not None
    rows = {row["id"]: row for row in views.per_query_rows(outcome.value)}
    assert rows["typo"]["cause"] == "not-indexed ×4"
    assert rows["buried"]["cause"] == "fusion-buried"
    assert rows["found"]["cause"] == ""
    assert "misses by cause: not-indexed 5, " in views.attribution_summary(outcome).data
    table = views.attribution_table(outcome).data
    assert "groove-table" in table  # paged and sortable like the per-query table
    assert "fusion-buried" in table
    assert "1 of " in table  # the FTS rank of the buried answer
    # a cause or a rank wraps as a whole ("vector-\nonly-low", "263 of\n741" read badly)
    assert "<span class='item'>fusion-buried</span>" in table
    assert re.search(r"<span class='item'>\d+ of \d+</span>", table)
    per_query = views.per_query_table(outcome).data
    assert "<span class='item'>not-indexed " in per_query  # "not-indexed ×4", one item
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert written["misses_by_cause"]["not-indexed"] == 5
    plain = notebook_run.eval_report(
        kb_path=kb, golden=golden, history=False, result_path=tmp_path / "p.json"
    )
    assert plain.value is not None and "cause" not in views.per_query_rows(plain.value)[0]
    assert views.attribution_table(plain) is None


@pytest.mark.slow
def test_eval_report_notebook_with_explain(kb: Path, golden: Path, tmp_path: Path) -> None:
    from groove.notebooks import runner

    out = tmp_path / "out"
    report = runner.run_notebook(
        "eval-report",
        kb_path=kb,
        parameters={"golden": str(golden), "explain": True, "history": False},
        out_dir=out,
    )
    assert report.exit_code == 0
    page = (out / "eval-report.html").read_text(encoding="utf-8")
    assert "misses by cause: not-indexed 5, " in page
    assert "fusion-buried" in page and "golden-path-not-indexed" in page


def test_path_doctor_tells_every_reason_apart(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    (kb / "ops").mkdir(parents=True)
    (kb / "node_modules").mkdir()
    (kb / "drafts").mkdir()
    (kb / "ops" / "rollback.md").write_text("## Steps\n\nRevert the deploy.\n", encoding="utf-8")
    (kb / "ops" / "new.md").write_text("Written after the last index.\n", encoding="utf-8")
    (kb / "ops" / "notes.txt").write_text("plain text\n", encoding="utf-8")
    (kb / "node_modules" / "readme.md").write_text("vendored\n", encoding="utf-8")
    (kb / "drafts" / "idea.md").write_text("draft\n", encoding="utf-8")
    (kb / ".grooveignore").write_text("drafts/\n", encoding="utf-8")
    (kb / "ops" / "link.md").symlink_to(kb / "ops" / "rollback.md")
    doctor = PathDoctor(kb, frozenset({"ops/rollback.md"}))
    reasons = {
        path: doctor.diagnose(path).reason
        for path in (
            "ops/new.md",
            "ops/notes.txt",
            "node_modules/readme.md",
            "drafts/idea.md",
            "ops/link.md",
            "ops/gone.md",
            "./ops/rollback.md",
            "../outside.md",
        )
    }
    assert reasons == {
        "ops/new.md": "not-indexed-yet",
        "ops/notes.txt": "not-markdown",
        "node_modules/readme.md": "excluded-folder",
        "drafts/idea.md": "ignored",
        "ops/link.md": "skipped",
        "ops/gone.md": "missing",
        "./ops/rollback.md": "path-spelling",
        "../outside.md": "missing",
    }
    assert "symbolic link" in doctor.diagnose("ops/link.md").detail


def test_mmr_pushing_a_fused_hit_out_is_post_processing(
    indexed_kb: Any, tmp_path: Path, real_embedder: Any
) -> None:
    kb = indexed_kb("kb_en")
    golden = tmp_path / "golden.yml"
    golden.write_text(
        "queries:\n  - id: page-escalation\n"
        '    query: "Who is paged when the primary on-call engineer does not answer?"\n'
        "    expected:\n      - path: team/oncall.md\n        heading: Paging\n",
        encoding="utf-8",
    )
    common: dict[str, Any] = {"k_values": [1, 5]}
    plain = run(
        resolve_settings(Config(), kb_path=kb, golden=golden, history=False, **common),
        embedder=real_embedder,
    )
    assert plain.per_query[0].metrics.recall_at_k[5] == 1.0  # found without MMR
    result = explained(kb, golden, real_embedder, mmr=True, mmr_same_doc_penalty=1.0, **common)
    (a,) = result.attribution["page-escalation"]
    assert (a.cause, a.moved_by, a.final_rank) == ("post-processing", ("MMR",), None)
    assert a.fused_rank is not None and a.fused_rank <= 5
    assert a.explanation() == f"fusion ranked it {a.fused_rank}, within k=5; MMR pushed it out"


def test_a_wrong_heading_miss_gives_the_files_own_ranks(kb: Path, tmp_path: Path) -> None:
    """Issue 18: ``--explain`` on a wrong-heading miss gave no ranks, although the file
    itself was at rank 1; now both legs' best ranks of the file are shown."""
    golden = tmp_path / "stew.yml"
    golden.write_text(
        "queries:\n"
        "  - id: stew\n"
        "    query: zorblax stew with onions carrots and bay leaves\n"
        "    expected:\n"
        "      - path: kitchen/zorblax.md\n"
        "        heading: Ingredient list\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["eval", "--kb-path", str(kb), "--golden", str(golden),
                                      "--explain", "--no-history", "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (a,) = json.loads(result.stdout)["per_query"][0]["attribution"]
    assert a["cause"] == "heading-mismatch" and a["closest_heading"] == "Ingredients"
    assert (a["fts_rank"], a["final_rank"]) == (1, 1)
    assert a["vector_rank"] is not None and a["fused_rank"] == 1
    assert a["explanation"] == (
        'no chunk of kitchen/zorblax.md has the heading "Ingredient list"; closest heading: '
        '"Ingredients"; the file itself is at rank 1'
    )
    text = CliRunner().invoke(cli, ["eval", "--kb-path", str(kb), "--golden", str(golden),
                                    "--explain", "--no-history"])  # fmt: skip
    assert re.search(
        r"\n      the file's best chunk: FTS rank 1 of \d+ matches · vector rank \d+ of \d+ · "
        r"fused rank 1 \(pool 50 per leg\) · final rank 1\n",
        text.stdout,
    ), text.stdout


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"mmr": True},
        {"limit": 3},
        {"rrf_k": 5.0, "bm25_heading_weight": 4.0},
        {"family": "convex"},  # another fusion family reads its own legs: given ones ignored
    ],
)
def test_search_fed_the_explain_reads_returns_the_plain_search(
    kb: Path, real_embedder: Any, options: dict[str, Any]
) -> None:
    """``--explain`` reads each query's legs whole before its search and hands the search
    their heads: the search must return exactly what it returns reading its own legs."""
    from dataclasses import replace as with_

    from groove.engine.search import SearchOptions, search

    base = resolve_settings(Config(), kb_path=kb).search
    fusion = with_(base.fusion, **{k: v for k, v in options.items() if k not in {"mmr", "limit"}})
    mmr = with_(base.mmr, enabled=bool(options.get("mmr")))
    limit = int(options.get("limit", K))
    queries = (QUERY, "zorblax stew -zorblax", "stew onions", "tulips in spring", "qqq zzz")
    with open_engine(kb, embedder=real_embedder) as engine, read_snapshot(engine.conn) as conn:
        mode = mode_for_index(None, read_meta(conn))
        opts = SearchOptions(limit, fusion, mmr, base.parent_retriever, mode)
        explainer = Explainer(
            conn,
            opts,
            k=limit,
            depth=limit,
            reranker=False,
            dim=engine.embedder.dim,
            doctor=PathDoctor(kb, indexed_paths(conn)),
            grid=PROBE,
        )
        for query in queries:
            compiled = routed(conn, query)
            vector = engine.embed_queries([compiled.terms.positive_text])[0]
            plain = search(conn, query, vector, opts, None, compiled.terms)
            read = explainer.read(compiled, vector)
            fed = search(conn, query, vector, opts, None, compiled.terms, read.candidates)
            assert fed == plain, query
            assert len(read.fts_ids) == len(fts_leg(conn, compiled.match, fusion.weights,
                                                    10_000, compiled.leg))  # fmt: skip


def test_explain_leaves_the_eval_itself_unchanged(
    kb: Path, golden: Path, real_embedder: Any
) -> None:
    plain = run(
        resolve_settings(Config(), kb_path=kb, golden=golden, history=False),
        embedder=real_embedder,
    )
    with_explain = explained(kb, golden, real_embedder)
    assert with_explain.per_query == plain.per_query
    assert with_explain.record.aggregate == plain.record.aggregate


def test_grid_examples_are_the_nearest_conditions_in_grid_steps() -> None:
    import random

    from groove.tuning.grid import Condition
    from groove.tuning.reach import MAX_GRID_EXAMPLES, examples

    rng = random.Random(7)
    for _ in range(200):
        found = sorted(rng.sample(range(384), rng.randint(0, 40)))
        current = Condition.from_index(rng.randrange(384)) if rng.random() < 0.8 else None
        conditions = [Condition.from_index(i) for i in found]
        if current is not None:
            conditions.sort(
                key=lambda c: (
                    abs(c.h - current.h)
                    + abs(c.ctx - current.ctx)
                    + abs(c.content - current.content)
                    + abs(c.k - current.k),
                    c.index,
                )
            )
        assert examples(found, current) == tuple(c.label for c in conditions[:MAX_GRID_EXAMPLES])


def test_numpy_read_legs_equal_the_sql_read_ones_bit_for_bit(
    kb: Path, golden: Path, real_embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Explainer.read`` scores the whole FTS order in numpy when ``engine.bm25`` serves the
    query: the same ids in the same order and the same floats as the SQL pass, exclusions
    included; quoted phrases and the like still go through SQL. The attributions of a
    whole eval are the same either way."""
    import numpy as np

    from groove.engine import bm25

    queries = (
        QUERY,
        "database backup retention -zorblax",
        "zorblax stew -onions -carrots",
        "stew onions stew",
        "tulips in spring",
        "qqq zzz",
        '"backup retention" zorblax',
    )
    with open_engine(kb, embedder=real_embedder) as engine, read_snapshot(engine.conn) as conn:

        def make() -> Explainer:
            return Explainer(
                conn,
                resolve_settings(Config(), kb_path=kb).search,
                k=K,
                depth=K,
                reranker=False,
                dim=engine.embedder.dim,
                doctor=PathDoctor(kb, indexed_paths(conn)),
                grid=PROBE,
            )

        fast, served = make(), 0
        for query in queries:
            compiled = routed(conn, query)
            vector = engine.embed_queries([compiled.terms.positive_text])[0]
            weight_sets = [fast.options.fusion.weights, PROBE.lowest, PROBE.highest]
            numpy_read = fast.read(compiled, vector)
            served += bm25.scored(conn, compiled, weight_sets) is not None
            with monkeypatch.context() as m:
                m.setattr(bm25, "scored", lambda *a: None)
                sql_read = make().read(compiled, vector)
            assert np.array_equal(numpy_read.fts_ids, sql_read.fts_ids), query
            for name in ("fts_lowest", "fts_highest"):
                assert getattr(numpy_read, name).tobytes() == getattr(sql_read, name).tobytes()
            assert numpy_read.excluded == sql_read.excluded
            assert numpy_read.candidates == sql_read.candidates
        assert served == len(queries) - 1  # all but the quoted phrase came from numpy
    fast_run = explained(kb, golden, real_embedder)
    monkeypatch.setattr(bm25, "scored", lambda *a: None)
    sql_run = explained(kb, golden, real_embedder)
    assert fast_run.attribution == sql_run.attribution
    assert fast_run.per_query == sql_run.per_query


def _sorted_places(ids: Any, distances: Any, exclude: frozenset[int]) -> dict[int, int]:
    """The plain rule: a stable sort of the distances over ascending ids, exclusions out."""
    import numpy as np

    ranked = ids[np.argsort(distances, kind="stable")]
    ranked = [int(i) for i in ranked if int(i) not in exclude]
    return {chunk_id: place for place, chunk_id in enumerate(ranked, start=1)}


def test_vector_places_are_the_stable_sorts_places_ties_and_exclusions_included() -> None:
    import numpy as np

    from groove.store.ranks import _places

    rng = np.random.default_rng(3)
    ids = np.sort(rng.choice(10_000, size=400, replace=False)).astype(np.int64)
    distances = rng.integers(0, 40, size=400).astype(np.float32)  # many ties
    for exclude in (frozenset(), frozenset(int(i) for i in ids[::7])):
        places = _places(ids, distances, exclude)
        expected = _sorted_places(ids, distances, exclude)
        assert len(places) == len(expected)
        assert {int(i): places[int(i)] for i in ids if int(i) not in exclude} == expected
        assert list(places) == list(expected)
        for gone in [*sorted(exclude)[:5], 10_001]:
            assert gone not in places


def test_copied_vector_places_equal_exact_places_near_ties_and_duplicates_included() -> None:
    """The copy's places are counted over an approximate order, and exact distances only
    where it is too close to call: vectors a rounding apart, exact duplicates, exclusions
    and a scan order unlike the id order give the places of the exact distances."""
    import numpy as np

    from groove.store import ranks
    from groove.store.vector_copy import VectorCopy

    rng = np.random.default_rng(11)
    base = rng.standard_normal((60, 48)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    near = base[rng.integers(0, 60, 240)]
    near += rng.choice([0.0, 1e-7, -3e-7, 2e-6], size=near.shape).astype(np.float32)
    matrix = np.concatenate([base, near, near[:20]]).astype(np.float32)  # exact ties too
    ids = rng.choice(100_000, size=len(matrix), replace=False).astype(np.int64)
    wide = matrix.astype(np.float64)
    sqnorms = np.einsum("ij,ij->i", wide, wide)
    copy = VectorCopy(
        token="t",
        ids=ids,
        matrix=matrix,
        sqnorms=sqnorms.astype(np.float32),
        by_id=np.argsort(ids, kind="stable").astype(np.int64),
        max_norm=float(np.sqrt(sqnorms.max())) * (1 + 1e-6),
    )
    by_id = np.argsort(ids)
    read = ranks.StoredVectors(ids[by_id], matrix[by_id])
    for query in (base[3], matrix[100], rng.standard_normal(48).astype(np.float32)):
        for exclude in (frozenset(), frozenset(int(i) for i in ids[::9])):
            a, b = ranks.CopiedVectors(copy).places(query, exclude), read.places(query, exclude)
            ahead = ranks.CopiedVectors(copy).places(query, exclude)  # many looked up at once
            ahead.prefetch([*rng.choice(ids, 120).tolist(), 100_001])
            plain = np.sqrt(np.sum(np.square(read.matrix - query), axis=1, dtype=np.float32))
            expected = _sorted_places(read.ids, plain, exclude)  # the stable sort's places
            for places in (a, ahead, b):
                assert {int(i): places[int(i)] for i in ids if int(i) not in exclude} == expected
                assert all(int(i) not in places for i in [*exclude, 100_001])
            assert list(a) == list(b) == list(expected)


def test_the_vector_order_from_the_vector_copy_equals_the_read_vectors_order(
    kb: Path, real_embedder: Any
) -> None:
    """--explain's vector order over every stored vector, from the memory-mapped copy and
    from vectors read out of sqlite-vec: the same distances bit for bit, the same places."""
    import numpy as np

    from groove.store import ranks

    with open_engine(kb, embedder=real_embedder) as engine, read_snapshot(engine.conn) as conn:
        mapped = ranks.stored_vectors(conn, engine.embedder.dim)
        read = ranks.read_vectors(conn, engine.embedder.dim)
        assert isinstance(mapped, ranks.CopiedVectors)
        for query in (QUERY, "stew onions", "tulips in spring"):
            vector = engine.embed_queries([query])[0]
            exclude = frozenset(int(i) for i in read.ids[::5])
            for ex in (frozenset(), exclude):
                a, b = mapped.places(vector, ex), read.places(vector, ex)
                assert list(a) == list(b)
                assert {i: a[i] for i in a} == {i: b[i] for i in b}
                plain = np.sqrt(np.sum(np.square(read.matrix - vector), axis=1, dtype=np.float32))
                assert list(b) == list(_sorted_places(read.ids, plain, ex))
