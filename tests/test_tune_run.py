"""groove tune on a real index: the fast table equals per-condition SQL, pre-flight, verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from groove.cli import cli
from groove.config import Config, parse_config
from groove.engine.lexical import lexical_query
from groove.engine.query import compile_query
from groove.engine.search import rrf_fuse
from groove.golden.queries import load_golden
from groove.report import tune_json, tune_text
from groove.report.notes import cli_line, progress_line
from groove.settings import LexicalMode
from groove.store.db import connect, default_db_path
from groove.store.schema import FTS_TABLES
from groove.tuning.grid import DEFAULT_CONDITION, Condition, toml_snippet
from groove.tuning.run import run
from groove.tuning.settings import resolve_settings
from groove.tuning.sweep import fuse_all_k, sweep_query, sweep_query_per_condition


@given(
    vec=st.lists(st.integers(1, 60), max_size=40, unique=True),
    fts=st.lists(st.integers(1, 60), max_size=40, unique=True),
    limit=st.integers(1, 30),
)
@settings(max_examples=300, deadline=None)
def test_numpy_fusion_equals_rrf_fuse_for_every_k(
    vec: list[int], fts: list[int], limit: int
) -> None:
    from groove.tuning.grid import RRF_K_GRID

    for k, (ids, scores) in zip(RRF_K_GRID, fuse_all_k(vec, fts, limit), strict=True):
        plain = rrf_fuse([vec, fts], k, limit)
        assert ids.tolist() == [chunk_id for chunk_id, _ in plain]
        assert scores.tolist() == [score for _, score in plain]


@given(
    vec=st.lists(st.integers(1, 60), max_size=40, unique=True),
    lists=st.lists(st.lists(st.integers(1, 60), max_size=40, unique=True), max_size=6),
    limit=st.integers(1, 30),
)
@settings(max_examples=200, deadline=None)
def test_fusing_several_lists_at_once_equals_fusing_each(
    vec: list[int], lists: list[list[int]], limit: int
) -> None:
    """The sweep fuses a query's distinct FTS lists in one array pass (``fuse_lists``):
    each list's rows, cut to their length, are that list's own fusion."""
    from groove.tuning.sweep import fuse_lists

    fused = fuse_lists(vec, lists, limit)
    for n, fts in enumerate(lists):
        size = int(fused.lengths[n])
        for k, (ids, scores) in enumerate(fuse_all_k(vec, fts, limit)):
            assert fused.ids[n, k, :size].tolist() == ids.tolist()
            assert fused.scores[n, k, :size].tobytes() == scores.tobytes()
            assert fused.union[fused.order[n, k, :size]].tolist() == ids.tolist()


@pytest.mark.parametrize("mode", ["trigram", "porter"])
@pytest.mark.parametrize("name", ["kb_en", "kb_ja"])
def test_fast_table_equals_per_condition_sql_cell_by_cell(
    name: str, mode: LexicalMode, indexed_kb, real_embedder
) -> None:  # type: ignore[no-untyped-def]
    """Both FTS tables: every query forced onto ``mode``'s table, fast sweep vs plain SQL."""
    kb = indexed_kb(name)
    golden = load_golden(Path(__file__).parent / "fixtures" / f"golden_{name[3:]}.yml")
    conn = connect(default_db_path(kb))
    labels = {
        cid: (path, heading)
        for cid, path, heading in conn.execute(
            "SELECT c.id, d.path, c.heading FROM chunks c JOIN documents d ON d.id = c.document_id"
        )
    }
    ks = (1, 5, 10)
    checked = 0
    for q in golden.queries:
        compiled = compile_query(q.query)
        routed = lexical_query(q.query, mode, compiled)
        assert routed.leg == mode
        vector = real_embedder.embed([compiled.positive_text])[0]
        fast = sweep_query(conn, routed, vector, q.expected, labels, 50, 10, ks, 226)
        slow = sweep_query_per_condition(conn, routed, vector, q.expected, labels, 50, 10, ks)
        assert fast.metrics == slow, q.id
        checked += len(slow)
    assert checked == 384 * len(golden.queries)


@pytest.fixture
def tuned(indexed_kb):  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    golden = Path(__file__).parent / "fixtures" / "golden_en.yml"
    lines: list[str] = []  # as the CLI prints them: typed events rendered by the face
    settings = resolve_settings(Config(), kb_path=kb, golden=golden)
    result = run(
        settings,
        progress=lambda event: lines.append(progress_line(event)),
        on_note=lambda note: lines.append(cli_line("tune", note)),
    )
    return result, lines


def test_tune_runs_and_reports_on_the_fixture(tuned) -> None:  # type: ignore[no-untyped-def]
    result, lines = tuned
    assert result.ran_grid and result.exit_code == 0
    analysis = result.analysis
    assert analysis.table.primary.shape == (10, 384)
    assert len(analysis.loo.folds) == len(result.effective_rows)
    assert lines[0] == "groove tune: pre-flight (measuring FTS candidates per query)..."
    assert lines[1].startswith("groove tune: WARNING: every chunk has an empty context column")
    assert (
        f"groove tune: {len(result.effective_rows)} of 10 golden queries are effective" in lines[2]
    )
    assert "groove tune: WARNING: effective N = " in "\n".join(lines)
    assert lines[-1].startswith("  [10/10] sweeping 64 weight conditions for ")
    text = tune_text.render(result)
    for section in (
        "## Query diagnostics",
        "## Grid (coordinate descent over",
        "## Nested leave-one-query-out CV",
        "## Secondary metrics (all 10 golden queries)",
        "## Per-query impact (refit vs default)",
        "## Verdict",
    ):
        assert section in text
    document = json.loads(tune_json.render(result))
    assert list(document) == sorted(document)
    assert document["primary_k"] == 5 and document["reranker"] is None
    assert document["verdict"]["decision"] in {"adopt", "keep_default"}
    assert len(document["gates"]) == 5


def test_default_condition_row_matches_groove_eval(tuned, indexed_kb) -> None:  # type: ignore[no-untyped-def]
    """The table's default column is exactly what eval measures with the default settings."""
    from groove.evaluation.run import run as eval_run
    from groove.evaluation.settings import resolve_settings as eval_settings

    result, _ = tuned
    kb = result.kb_path
    evaluated = eval_run(
        eval_settings(
            Config(), kb_path=kb, golden=result.golden_path, k_values=[1, 5, 10], history=False
        )
    )
    table = result.analysis.table
    for row, q in enumerate(evaluated.per_query):
        assert table.ndcg[5][row, DEFAULT_CONDITION.index] == q.metrics.ndcg_at_k[5]
        assert table.rr[row, DEFAULT_CONDITION.index] == q.metrics.reciprocal_rank


def test_no_effective_query_exits_2_with_the_diagnostic_and_empty_stdout(
    indexed_kb, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    golden = tmp_path / "g.yml"
    golden.write_text(
        "queries:\n"
        '  - id: nothing\n    query: "zqxj wvut"\n    expected:\n      - path: ops/rollback.md\n',
        encoding="utf-8",
    )
    runner = CliRunner()
    result = runner.invoke(cli, ["tune", "--kb-path", str(kb), "--golden", str(golden)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert (
        "groove tune: none of the 1 golden queries is sensitive to the fusion parameters "
        "(every query has fewer than 2 FTS candidates), so the grid was not run."
    ) in result.stderr
    assert result.stderr.rstrip().endswith("    nothing: FTS candidates = 0")


def test_exclusion_only_golden_query_is_rejected_at_load(indexed_kb, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    golden = tmp_path / "g.yml"
    golden.write_text(
        'queries:\n  - id: bad\n    query: "-canary -rollback"\n'
        "    expected:\n      - path: a.md\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["tune", "--kb-path", str(kb), "--golden", str(golden)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ")
    assert "bad" in result.stderr and "exclusion" in result.stderr


def test_k_values_always_include_five_and_limit_covers_max_k(tmp_path: Path) -> None:
    s = resolve_settings(Config(), kb_path=tmp_path, golden=tmp_path / "g.yml", k_values=[1, 10])
    assert s.k_values == (1, 5, 10) and s.limit == 10 and s.candidate_pool == 50
    s = resolve_settings(
        Config(), kb_path=tmp_path, golden=tmp_path / "g.yml", k_values=[3], limit=20
    )
    assert s.k_values == (3, 5) and s.limit == 20 and s.candidate_pool == 100


@pytest.mark.parametrize("index", [0, 226, 322, 383, 97])
def test_snippet_loads_back_through_config_validation(index: int, tmp_path: Path) -> None:
    condition = Condition.from_index(index)
    config = parse_config(toml_snippet(condition), tmp_path / "groove.toml")
    fusion = config.search.fusion
    assert fusion.to_dict() == condition.as_fusion_dict()


def test_custom_fusion_and_mmr_in_config_produce_notes(tmp_path: Path) -> None:
    config = parse_config(
        "[search.fusion]\nrrf_k = 20.0\n[search.mmr]\nenabled = true\n", tmp_path / "groove.toml"
    )
    notes = resolve_settings(config, kb_path=tmp_path, golden=tmp_path / "g.yml").notes
    assert [n.kind for n in notes] == ["stage-settings-ignored", "fusion-customised"]
    assert tuple(cli_line("tune", n) for n in notes) == (
        "groove tune: note: [search.mmr] / [search.parent_retriever] are enabled in groove.toml "
        "but tune measures the plain RRF stage only.",
        "groove tune: note: [search.fusion] is already customised in groove.toml; tune still "
        "measures deltas against the BUILT-IN defaults, not your values.",
    )


def test_table_arrays_are_finite_and_in_range(tuned) -> None:  # type: ignore[no-untyped-def]
    result, _ = tuned
    table = result.analysis.table
    for array in [table.rr, *table.ndcg.values(), *table.recall.values()]:
        assert np.all((array >= 0.0) & (array <= 1.0))


def test_tune_sweeps_the_table_each_query_is_routed_to(tuned) -> None:  # type: ignore[no-untyped-def]
    """A new index routes by script ([search] lexical = "auto"): English goes to porter."""
    result, _ = tuned
    assert result.source.lexical == "auto"
    assert {d.lexical_leg for d in result.source.diagnostics} == {"porter"}
    document = json.loads(tune_json.render(result))
    assert document["lexical"] == "auto"
    assert {d["lexical_leg"] for d in document["diagnostics"]} == {"porter"}


@pytest.fixture(scope="module")
def contextual_kb(tmp_path_factory, real_embedder):  # type: ignore[no-untyped-def]
    """kb_en indexed with [contextual] on: every chunk has a context (its breadcrumb)."""
    from conftest import copy_kb

    from groove.engine.index import build

    kb = copy_kb("kb_en", tmp_path_factory.mktemp("contextual"))
    build(kb, real_embedder, config=Config(contextual=True))
    return kb


def _queries_on(kb: Path, name: str, mode: LexicalMode):  # type: ignore[no-untyped-def]
    golden = load_golden(Path(__file__).parent / "fixtures" / f"golden_{name}.yml")
    for q in golden.queries:
        yield q, lexical_query(q.query, mode, compile_query(q.query))


@pytest.mark.parametrize("mode", ["trigram", "porter"])
@pytest.mark.parametrize("name", ["kb_en", "kb_ja", "contextual"])
def test_pruned_rankings_equal_the_plain_pass_at_every_pool(
    name: str, mode: LexicalMode, indexed_kb, contextual_kb
) -> None:  # type: ignore[no-untyped-def]
    """The two-pass FTS read (bounds, then weighted scores for the contenders only; 16
    columns when no chunk has a context) gives the 64 lists of the one-pass read."""
    from groove.store.chunks import any_context
    from groove.tuning.sweep import fts_rankings, pruned_rankings

    kb = contextual_kb if name == "contextual" else indexed_kb(name)
    conn = connect(default_db_path(kb))
    context_free = not any_context(conn)
    assert context_free == (name != "contextual")
    pruned = 0
    for _, routed in _queries_on(kb, "en" if name != "kb_ja" else "ja", mode):
        if routed.match is None:
            continue
        total = conn.execute(
            f"SELECT count(*) FROM {FTS_TABLES[mode]} WHERE {FTS_TABLES[mode]} MATCH ?",
            (routed.match,),
        ).fetchone()[0]
        for pool in (1, 2, 3, 5, 8, 50):
            plain = fts_rankings(conn, routed.match, pool, mode)
            lists, matches = pruned_rankings(conn, routed.match, pool, mode, context_free)
            assert (lists, matches) == (plain, total), (routed.match, pool)
            pruned += pool < total
    assert pruned  # pools smaller than the matches: the pruning did drop rows


@pytest.mark.parametrize("mode", ["trigram", "porter"])
def test_fast_table_equals_per_condition_with_context_and_small_pools(
    mode: LexicalMode, contextual_kb, real_embedder
) -> None:  # type: ignore[no-untyped-def]
    """With a context column the 64 weight sets differ; small pools make the pruning bite."""
    conn = connect(default_db_path(contextual_kb))
    labels = {
        cid: (path, heading)
        for cid, path, heading in conn.execute(
            "SELECT c.id, d.path, c.heading FROM chunks c JOIN documents d ON d.id = c.document_id"
        )
    }
    ks = (1, 3)
    for q, routed in _queries_on(contextual_kb, "en", mode):
        vector = real_embedder.embed([routed.terms.positive_text])[0]
        fast = sweep_query(conn, routed, vector, q.expected, labels, 4, 3, ks, 226)
        slow = sweep_query_per_condition(conn, routed, vector, q.expected, labels, 4, 3, ks)
        assert fast.metrics == slow, q.id


def test_preflight_is_what_the_plain_legs_measure(tuned, real_embedder) -> None:  # type: ignore[no-untyped-def]
    """The diagnostics read from the sweep's pass equal the default FTS leg, the match
    count and the vector leg measured on their own (the pre-flight's former SQL)."""
    from groove.config import FusionConfig
    from groove.engine.search import excluded_chunks, fts_leg, vector_leg
    from groove.store.schema import FTS_TABLES

    result, _ = tuned
    conn = connect(default_db_path(result.kb_path))
    pool = result.source.candidate_pool
    for q, d in zip(result.queries, result.source.diagnostics, strict=True):
        routed = lexical_query(q.query, result.source.lexical, compile_query(q.query))
        vector = real_embedder.embed([routed.terms.positive_text])[0]
        fts_ids = fts_leg(conn, routed.match, FusionConfig().weights, pool, routed.leg)
        vec_ids = vector_leg(conn, vector, pool, excluded_chunks(conn, routed))
        table = FTS_TABLES[routed.leg]
        sql = f"SELECT count(*) FROM {table} WHERE {table} MATCH ?"
        total = 0 if routed.match is None else conn.execute(sql, (routed.match,)).fetchone()[0]
        assert (d.fts_candidates, d.fts_total_matches) == (len(fts_ids), total), q.id
        assert d.vec_fts_overlap == len(set(fts_ids) & set(vec_ids)), q.id


def test_read_snapshots_pin_one_snapshot_and_read_alone_when_a_writer_holds_the_lock(
    indexed_kb,
) -> None:  # type: ignore[no-untyped-def]
    from groove.store.db import read_snapshots

    db = default_db_path(indexed_kb("kb_en"))
    conn, writer = connect(db), connect(db)
    before = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
    with read_snapshots(conn, db, 2) as conns:
        assert len(conns) == 3
        writer.execute("DELETE FROM documents WHERE id = (SELECT min(id) FROM documents)")
        seen = {c.execute("SELECT count(*) FROM documents").fetchone()[0] for c in conns}
        assert seen == {before}  # every reader still sees the state before the commit
    assert conn.execute("SELECT count(*) FROM documents").fetchone()[0] == before - 1
    writer.execute("BEGIN IMMEDIATE")
    try:
        with read_snapshots(conn, db, 2) as conns:
            assert conns == [conn]
    finally:
        writer.execute("ROLLBACK")


def test_legs_read_on_parallel_connections_equal_the_serial_read(indexed_kb, real_embedder) -> None:  # type: ignore[no-untyped-def]
    from groove.store.db import read_snapshots
    from groove.tuning.run import all_legs

    kb = indexed_kb("kb_en")
    db = default_db_path(kb)
    golden = load_golden(Path(__file__).parent / "fixtures" / "golden_en.yml")
    routed = [lexical_query(q.query, "auto", compile_query(q.query)) for q in golden.queries]
    vectors = real_embedder.embed([r.terms.positive_text for r in routed])
    conn = connect(db)
    for pool in (3, 50):
        with read_snapshots(conn, db, 0) as alone:
            serial = all_legs(alone, routed, vectors, pool, True)
        with read_snapshots(conn, db, 2) as conns:
            assert len(conns) == 3
            parallel = all_legs(conns, routed, vectors, pool, True)
        assert parallel == serial


@pytest.mark.parametrize("name", ["kb_en", "kb_ja", "contextual"])
def test_numpy_rankings_equal_the_sql_pass_for_every_weight_set(
    name: str, indexed_kb, contextual_kb
) -> None:  # type: ignore[no-untyped-def]
    """The porter leg's 64 lists from the numpy scorer (engine.bm25) are the SQL pass's,
    at pools that cut through ties; queries it does not serve stay on SQL (None)."""
    from groove.engine import bm25
    from groove.store.chunks import any_context
    from groove.tuning.sweep import fts_rankings, numpy_rankings

    kb = contextual_kb if name == "contextual" else indexed_kb(name)
    conn = connect(default_db_path(kb))
    assert bm25.prepare(conn)
    context_free = not any_context(conn)
    served = 0
    for _, routed in _queries_on(kb, "en" if name != "kb_ja" else "ja", "porter"):
        if routed.match is None:
            continue
        total = conn.execute(
            "SELECT count(*) FROM fts_chunks_porter WHERE fts_chunks_porter MATCH ?",
            (routed.match,),
        ).fetchone()[0]
        for pool in (1, 2, 3, 5, 8, 50):
            found = numpy_rankings(conn, routed, pool, context_free)
            if found is None:
                assert not bm25.serves(routed, (1.0, 1.0, 1.0)), routed.match
                break
            plain = fts_rankings(conn, routed.match, pool, "porter")
            assert found == (plain, total), (routed.match, pool)
            served += 1
    assert served


def test_tune_reads_served_porter_legs_from_numpy(indexed_kb, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A tune routed to the porter table takes its plain-word FTS legs from numpy."""
    from groove.tuning import sweep

    kb = indexed_kb("kb_en")
    golden = Path(__file__).parent / "fixtures" / "golden_en.yml"
    calls: list[bool] = []
    real = sweep.numpy_rankings

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        found = real(*args, **kwargs)
        calls.append(found is not None)
        return found

    monkeypatch.setattr(sweep, "numpy_rankings", counted)
    run(resolve_settings(Config(), kb_path=kb, golden=golden))  # "auto": English -> porter
    assert calls and all(calls)
