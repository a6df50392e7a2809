"""The two lexical legs: routing by script, the porter compiler, the second FTS table (its
migration into an existing index), the mode in eval's fingerprint and per-query records,
and the Japanese fixture under ``auto`` against ``trigram``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURES, copy_kb
from helpers.hashing import HashingEmbedder

from groove.config import Config, SearchConfig, parse_config
from groove.engine.index import build
from groove.engine.lexical import (
    DEFAULT_LEXICAL,
    compile_porter,
    lexical_query,
    mode_for_index,
    route,
)
from groove.engine.query import compile_query
from groove.engine.search import SearchOptions
from groove.engine.session import open_engine
from groove.errors import ConfigError, QueryError
from groove.evaluation.run import run as eval_run
from groove.evaluation.settings import resolve_settings
from groove.runs.fingerprint import Fingerprint
from groove.store.db import connect, default_db_path
from groove.store.meta import IndexMeta, read_meta
from groove.store.schema import FTS_TABLES, KEY_LEXICAL_DEFAULT

# ---------------------------------------------------------------- routing


@pytest.mark.parametrize(
    ("query", "leg"),
    [
        ("restore from backup", "porter"),
        ("Café au lait", "porter"),  # Latin letters with diacritics are Latin
        ("rollback 2024-03", "porter"),  # digits do not decide
        ("再ランキングの評価", "trigram"),
        ("カナリアリリース", "trigram"),
        ("RRF の定数 k の意味は？", "trigram"),  # mixed Latin + Japanese: trigram
        ("Ωmega σύνολο", "trigram"),  # another script: the seed's leg
        ("2024 0001", "trigram"),  # no letter at all
        ("backup -restore", "porter"),  # Latin exclusions: porter honours them
        ("backup -ロールバック", "trigram"),  # porter could not honour a Japanese exclusion
        ('deployctl -"ロールバック 手順"', "trigram"),
        ("deployctl -ロ", "trigram"),  # under the trigram floor: not applied, and said so
        ("バックアップ -backup", "trigram"),
    ],
)
def test_auto_routes_by_the_script_of_the_positive_text(query: str, leg: str) -> None:
    assert route(compile_query(query), "auto") == leg
    assert lexical_query(query, "auto").leg == leg


def test_fixed_modes_route_every_query_to_their_table() -> None:
    for query in ("restore from backup", "再ランキング"):
        assert lexical_query(query, "trigram").leg == "trigram"
        assert lexical_query(query, "porter").leg == "porter"


def test_trigram_mode_is_the_seed_compiler_unchanged() -> None:
    for query in ("restore from backup", 'snapshots -retention "point in time"', "検索の設定"):
        compiled = compile_query(query)
        routed = lexical_query(query, "trigram")
        assert routed.terms == compiled
        assert (routed.match, routed.negative_match) == (compiled.match, compiled.negative_match)
        assert routed.warnings == compiled.warnings


def test_the_index_decides_when_the_config_names_no_mode() -> None:
    old = IndexMeta("m", 384, None, None, lexical_default="trigram")
    new = IndexMeta("m", 384, None, None)
    assert mode_for_index(None, old) == "trigram"
    assert mode_for_index(None, new) == DEFAULT_LEXICAL == "auto"
    assert mode_for_index("porter", old) == "porter"
    assert mode_for_index("trigram", new) == "trigram"


def test_config_reads_the_lexical_mode_and_refuses_others(tmp_path: Path) -> None:
    source = tmp_path / "groove.toml"
    assert parse_config("", source).search.lexical is None
    assert parse_config('[search]\nlexical = "porter"', source).search.lexical == "porter"
    with pytest.raises(ConfigError, match=re.escape('search.lexical = "stem": must be "auto"')):
        parse_config('[search]\nlexical = "stem"', source)


# ---------------------------------------------------------------- the porter compiler


def test_porter_words_are_lowered_deduplicated_quoted_and_ored() -> None:
    porter = compile_porter("Restore from a backup, restore it")
    assert porter.positive == ("restore", "from", "a", "backup", "it")
    assert porter.match == '"restore" OR "from" OR "a" OR "backup" OR "it"'
    assert porter.negative_match is None


def test_porter_keeps_quoted_regions_as_phrases() -> None:
    porter = compile_porter('"point in time" recovery "!!"')
    assert porter.positive == ("point in time", "recovery")


@pytest.mark.parametrize(
    ("query", "negative", "unenforced"),
    [
        ("snapshots -retention", ("retention",), ()),
        ("snapshots -ai", ("ai",), ()),  # no 3-character floor on words
        ("snapshots -foo-bar", ("foo-bar",), ()),  # one phrase: foo then bar
        ("snapshots -foo,bar", ("foo", "bar"), ()),
        ('snapshots -"point in time"', ("point in time",), ()),
        ("snapshots -___", (), ("___",)),
    ],
)
def test_porter_exclusions(query: str, negative: tuple[str, ...], unenforced: tuple) -> None:
    porter = compile_porter(query)
    assert porter.positive == ("snapshots",)
    assert porter.negative == negative
    assert porter.dropped_negative == unenforced
    routed = lexical_query(query, "porter")
    assert len(routed.warnings) == len(unenforced)
    assert all("porter index" in w for w in routed.warnings)


def test_porter_rejects_what_the_trigram_compiler_rejects() -> None:
    for query in ("", "   ", "-only -exclusions"):
        with pytest.raises(QueryError):
            compile_porter(query)


def test_porter_caps_words_with_the_same_warning() -> None:
    query = " ".join(f"word{i}" for i in range(40))
    routed = lexical_query(query, "porter")
    assert len(routed.terms.positive) == 32
    assert routed.warnings == ("query has more than 32 phrases: the last 8 were not searched",)


# ---------------------------------------------------------------- the second table


def _rowids(conn, table: str) -> set[int]:  # type: ignore[no-untyped-def]
    return {r[0] for r in conn.execute(f"SELECT rowid FROM {table}")}


def test_both_fts_tables_hold_every_chunk_and_follow_updates(tmp_path: Path) -> None:
    kb = copy_kb("kb_en", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder)
    (kb / "data" / "restore.md").unlink()
    (kb / "ops" / "canary.md").write_text("# Canary\n\nA canary gets five percent.\n")
    build(kb, embedder)
    conn = connect(default_db_path(kb))
    try:
        chunk_ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
        for table in FTS_TABLES.values():
            assert _rowids(conn, table) == chunk_ids
        porter = compile_porter("canaries percentages").match
        found = conn.execute(
            "SELECT count(*) FROM fts_chunks_porter WHERE fts_chunks_porter MATCH ?", (porter,)
        ).fetchone()[0]
        assert found >= 1  # stems: canaries -> canari, percentages -> percentag
        assert read_meta(conn).lexical_default is None  # a new index: groove's default
    finally:
        conn.close()


def _make_pre_porter(db: Path) -> None:
    """Turn ``db`` into what the previous groove left: schema 1, no porter table."""
    conn = connect(db)
    try:
        conn.execute("DROP TABLE fts_chunks_porter")
        conn.execute("DELETE FROM index_meta WHERE key = ?", (KEY_LEXICAL_DEFAULT,))
        conn.execute("PRAGMA user_version = 1")
    finally:
        conn.close()


def test_an_index_built_before_the_porter_table_gains_it_without_reembedding(
    tmp_path: Path,
) -> None:
    kb = copy_kb("kb_en", tmp_path)
    db = default_db_path(kb)
    embedder = HashingEmbedder()
    build(kb, embedder)
    with open_engine(kb, embedder=embedder) as engine:
        before = engine.search("restore from backup", SearchOptions(lexical="trigram")).hits
    _make_pre_porter(db)

    summary = build(kb, embedder)
    assert (summary.indexed, summary.chunks_embedded) == (0, 0)
    conn = connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        chunk_ids = {r[0] for r in conn.execute("SELECT id FROM chunks")}
        assert _rowids(conn, "fts_chunks_porter") == chunk_ids
        assert read_meta(conn).lexical_default == "trigram"
    finally:
        conn.close()
    with open_engine(kb, embedder=embedder) as engine:
        kept = engine.search("restore from backup")  # no [search] lexical: the index's mode
        assert kept.hits == before and kept.lexical is not None
        assert kept.lexical.leg == "trigram"
        assert engine.search("restore", SearchOptions(lexical="porter")).hits

    forced = build(kb, embedder, force=True)  # a rebuild keeps the recorded mode
    # the note names the settings as each face does: the API's words, the CLI's flags
    assert forced.notes and forced.notes[0].message.startswith(
        "force=True kept the index's lexical mode trigram"
    )
    assert f"`groove.index({str(kb)!r}, lexical='auto')` switches it" in forced.notes[0].message
    assert forced.notes_for("cli")[0].startswith("--force kept the index's lexical mode trigram")
    conn = connect(db)
    try:
        assert read_meta(conn).lexical_default == "trigram"
    finally:
        conn.close()
    switched = build(kb, embedder, force=True, lexical="auto")  # unless told otherwise
    assert tuple(n.message for n in switched.notes) == (
        "the index's lexical mode is now auto (was trigram): eval runs without a configured "
        "mode are not compared with earlier ones",
    )
    conn = connect(db)
    try:
        assert read_meta(conn).lexical_default is None
    finally:
        conn.close()
    assert build(kb, embedder, force=True).notes == ()  # groove's default: nothing to say


def test_index_force_keeps_a_legacy_index_comparable_and_gated(tmp_path: Path) -> None:
    """Issue 18: ``index --force`` turned a legacy index's ``trigram`` into ``auto`` without
    a word; the next eval's fingerprint changed and the gate was off ("diff disabled")."""
    kb = copy_kb("kb_en", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder)
    _make_pre_porter(default_db_path(kb))
    build(kb, embedder)  # the migration records trigram
    golden = FIXTURES / "golden_en.yml"

    def evaluate():  # type: ignore[no-untyped-def]
        settings = resolve_settings(
            Config(), kb_path=kb, golden=golden, save_history=True, fail_on_regression=True
        )
        return eval_run(settings, embedder=embedder)

    before = evaluate()
    assert before.fingerprint.lexical == "trigram"
    build(kb, embedder, force=True)
    (kb / "ops" / "rollback.md").unlink()  # a real change after the rebuild
    build(kb, embedder)
    after = evaluate()
    assert after.fingerprint.lexical == "trigram"
    assert after.diff_enabled and after.diff_note is None
    assert after.regression and after.exit_code == 1


def test_porter_exclusions_drop_chunks_from_both_legs(tmp_path: Path) -> None:
    kb = copy_kb("kb_en", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder)
    with open_engine(kb, embedder=embedder) as engine:
        plain = engine.search("backup snapshots", SearchOptions(limit=50, lexical="porter"))
        excluded = engine.search(
            "backup snapshots -retention", SearchOptions(limit=50, lexical="porter")
        )
    assert any("retention" in h.content.lower() for h in plain.hits)
    assert excluded.hits and all("retention" not in h.content.lower() for h in excluded.hits)
    assert {h.lexical_leg for h in excluded.hits} == {"porter"}


# ---------------------------------------------------------------- eval


def test_an_old_fingerprint_reads_as_trigram_and_modes_are_never_compared() -> None:
    new = Fingerprint("m", None, 10, (1, 5, 10), "g", 2, 3, lexical="auto")
    stored = new.to_dict()
    assert stored["lexical"] == "auto"
    old = dict(stored)
    del old["lexical"]
    assert Fingerprint.from_dict(old).lexical == "trigram"
    trigram_now = Fingerprint.from_dict({**stored, "lexical": "trigram"})
    assert Fingerprint.from_dict(old).compatible_with(trigram_now)
    assert not Fingerprint.from_dict(old).compatible_with(new)


def test_eval_records_the_mode_and_each_querys_leg_and_says_why_runs_differ(
    tmp_path: Path,
) -> None:
    kb = copy_kb("kb_ja", tmp_path)
    embedder = HashingEmbedder()
    build(kb, embedder)
    golden = FIXTURES / "golden_ja.yml"

    def evaluate(mode: str):  # type: ignore[no-untyped-def]
        config = Config(search=SearchConfig(lexical=mode))  # type: ignore[arg-type]
        return eval_run(resolve_settings(config, kb_path=kb, golden=golden), embedder=embedder)

    first = evaluate("trigram")
    assert {q.lexical_leg for q in first.per_query} == {"trigram"}
    second = evaluate("auto")
    assert second.fingerprint.lexical == "auto"
    legs = {q.id: q.lexical_leg for q in second.per_query}
    assert legs["embeddings-japanese"] == "porter" and legs["rrf-constant"] == "trigram"
    assert not second.diff_enabled
    note = "lexical mode changed since last run (trigram -> auto), diff disabled"
    assert second.diff_note == note
    document = json.loads(json.dumps(second.to_dict()))
    assert {q["lexical_leg"] for q in document["per_query"]} == {"trigram", "porter"}


@pytest.mark.parametrize("golden", ["golden_ja.yml", "golden_ja_mixed.yml"])
def test_auto_equals_or_beats_trigram_on_the_japanese_fixture(
    golden: str, indexed_kb, real_embedder
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_ja")
    runs = {}
    for mode in ("trigram", "auto"):
        config = Config(search=SearchConfig(lexical=mode))  # type: ignore[arg-type]
        settings = resolve_settings(config, kb_path=kb, golden=FIXTURES / golden, history=False)
        runs[mode] = eval_run(settings, embedder=real_embedder).record.aggregate
    trigram, auto = runs["trigram"], runs["auto"]
    assert auto.mrr >= trigram.mrr
    for k in (1, 5, 10):
        assert auto.recall_at_k[k] >= trigram.recall_at_k[k]
        assert auto.ndcg_at_k[k] >= trigram.ndcg_at_k[k]


# ---------------------------------------------------------------- the --lexical option


def test_the_lexical_flag_wins_over_groove_toml_and_modes_are_never_diffed(
    tmp_path: Path, indexed_kb, golden_en: Path
) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from groove.cli import cli

    kb = indexed_kb("kb_en")
    toml = tmp_path / "groove.toml"
    toml.write_text('[search]\nlexical = "porter"\n', encoding="utf-8")

    def eval_json(*flags: str) -> dict:  # type: ignore[type-arg]
        args = ["--config", str(toml), "eval", "--kb-path", str(kb), "--golden", str(golden_en)]
        done = CliRunner().invoke(cli, [*args, "--format", "json", *flags])
        assert done.exit_code == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    porter = eval_json()  # groove.toml's mode
    assert porter["fingerprint"]["lexical"] == "porter"
    assert {q["lexical_leg"] for q in porter["per_query"]} == {"porter"}
    trigram = eval_json("--lexical", "trigram")  # the flag wins
    assert trigram["fingerprint"]["lexical"] == "trigram"
    assert {q["lexical_leg"] for q in trigram["per_query"]} == {"trigram"}
    assert trigram["previous"]["fingerprint"]["lexical"] == "porter"
    assert trigram["diff"] is None and trigram["gate"]["applied"] is False  # not with porter
    assert trigram["aggregate"] != porter["aggregate"]  # the modes do rank differently here
    again = eval_json("--lexical", "trigram")
    assert again["diff"] is not None and again["diff"]["mrr"] == 0.0  # same mode: compared
    text = CliRunner().invoke(
        cli, ["--config", str(toml), "eval", "--kb-path", str(kb), "--golden", str(golden_en)]
    )
    # Back to porter: compared with the porter run, not switched off by the trigram runs.
    assert f" · {porter['id']}, newest passing run of this configuration)" in text.stdout
    assert "diff disabled" not in text.stdout
    (kb / ".groove-eval-history.json").unlink()
    eval_json("--lexical", "trigram")
    first_porter = CliRunner().invoke(
        cli, ["--config", str(toml), "eval", "--kb-path", str(kb), "--golden", str(golden_en)]
    )  # the seed's message when no run of the mode exists
    assert "lexical mode changed since last run (trigram -> porter), diff disabled" in (
        first_porter.stdout
    )


def test_search_and_tune_take_the_lexical_flag(indexed_kb, golden_en: Path) -> None:  # type: ignore[no-untyped-def]
    from click.testing import CliRunner

    from groove.cli import cli

    kb = indexed_kb("kb_en")
    for mode in ("trigram", "porter"):
        args = ["search", "restore a backup", "--kb-path", str(kb), "--format", "json"]
        done = CliRunner().invoke(cli, [*args, "--lexical", mode])
        assert done.exit_code == 0, done.stderr
        assert {hit["lexical_leg"] for hit in json.loads(done.stdout)} == {mode}
        args = ["tune", "--kb-path", str(kb), "--golden", str(golden_en), "--format", "json"]
        tuned = CliRunner().invoke(cli, [*args, "--lexical", mode])
        assert tuned.exit_code == 0, tuned.stderr
        document = json.loads(tuned.stdout)
        assert document["lexical"] == mode
        assert {d["lexical_leg"] for d in document["diagnostics"]} == {mode}
    wrong = CliRunner().invoke(cli, ["search", "x", "--kb-path", str(kb), "--lexical", "bm25"])
    assert wrong.exit_code == 2
    assert "'bm25' is not one of 'auto', 'trigram', 'porter'" in wrong.stderr


def test_the_api_takes_lexical_as_a_keyword(indexed_kb, golden_en: Path) -> None:  # type: ignore[no-untyped-def]
    import groove

    kb = indexed_kb("kb_en")
    found = groove.search("restore a backup", kb, limit=3, lexical="trigram")
    assert {h.lexical_leg for h in found.hits} == {"trigram"}
    run = groove.evaluate(kb, golden_en, lexical="porter", history=False)
    assert run.fingerprint.lexical == "porter"
    assert {q.lexical_leg for q in run.per_query} == {"porter"}
    tuned = groove.tune(kb, golden_en, lexical="trigram")
    source = tuned.source
    assert source.lexical == "trigram" and {d.lexical_leg for d in source.diagnostics} == {
        "trigram"
    }
    with pytest.raises(ConfigError) as bad:
        groove.evaluate(kb, golden_en, lexical="bm25")
    assert bad.value.message == (
        'keyword lexical must be "auto", "trigram" or "porter", got \'bm25\''
    )
    with pytest.raises(ConfigError, match="keyword lexical configures groove's own engine"):
        groove.evaluate(None, golden_en, retriever="run:run.jsonl", lexical="porter")


def test_both_notebooks_take_the_lexical_parameter(
    indexed_kb, golden_en: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from groove.notebooks import kernel

    kb = indexed_kb("kb_en")
    evaluated = kernel.eval_report(
        kb_path=kb, golden=golden_en, lexical="trigram", history=False, result_path=tmp_path / "e"
    )
    written = json.loads((tmp_path / "e").read_text(encoding="utf-8"))
    assert evaluated.exit_code == 0 and written["fingerprint"]["lexical"] == "trigram"
    assert {q["lexical_leg"] for q in written["per_query"]} == {"trigram"}
    tuned = kernel.tune_explorer(
        kb_path=kb, golden=golden_en, lexical="trigram", result_path=tmp_path / "t"
    )
    assert tuned.value is not None and tuned.value.source.lexical == "trigram"
    refused = kernel.eval_report(
        kb_path=kb, golden=golden_en, lexical="bm25", result_path=tmp_path / "x"
    )
    assert refused.exit_code == 2
