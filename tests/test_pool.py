"""Pooling unjudged hits from history runs, another retriever and the tune grid; the
CSV / JSONL round trip. Real engine: SQLite, FTS5, sqlite-vec and the offline model."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import groove
from groove.cli import cli
from groove.config import Config
from groove.errors import GoldenError
from groove.evaluation.run import run
from groove.evaluation.settings import resolve_settings
from groove.golden.judgements import judgements_path, load_judgements, save_judgements, stamped
from groove.golden.queries import load_golden
from groove.judging.collect import PoolSources, collect
from groove.judging.exchange import export_text, read_verdicts
from groove.metrics import RankedHit, is_hit
from groove.retrievers.spec import parse_spec

ADAPTER = Path(__file__).parent / "helpers" / "adapter.py"


@pytest.fixture
def kb(indexed_kb) -> Path:  # type: ignore[no-untyped-def]
    return indexed_kb("kb_en")


@pytest.fixture
def golden(tmp_path: Path, golden_en: Path) -> Path:
    path = tmp_path / "golden.yml"
    shutil.copy(golden_en, path)
    return path


def _eval(kb: Path, golden: Path, embedder, **kw):  # type: ignore[no-untyped-def]
    settings = resolve_settings(Config(), kb_path=kb, golden=golden, **kw)
    return run(settings, embedder=embedder)


def _settings(kb: Path, golden: Path):  # type: ignore[no-untyped-def]
    return resolve_settings(Config(), kb_path=kb, golden=golden, save_history=False)


def _covered_by_expected(golden: Path, query_id: str, path: str, heading: str | None) -> bool:
    query = {q.id: q for q in load_golden(golden).queries}[query_id]
    return any(is_hit(e, RankedHit(1, path, heading, 0.0)) for e in query.expected)


def test_pool_from_two_history_configurations_leaves_out_what_is_covered(
    kb: Path, golden: Path, real_embedder
) -> None:
    plain = _eval(kb, golden, real_embedder)
    mmr = _eval(kb, golden, real_embedder, mmr=True, mmr_lambda=0.3)
    first = plain.per_query[0]
    judged_hit = next(
        h for h in first.top_k if not _covered_by_expected(golden, first.id, h.path, h.heading)
    )
    save_judgements(
        judgements_path(golden),
        [stamped(first.id, judged_hit.path, judged_hit.heading, False, "t")],
    )
    pool = collect(_settings(kb, golden), PoolSources(history=True), depth=10)
    assert pool.sources == ("#1", "#2")  # the newest run of each configuration
    keys = {(c.query_id, c.path, c.heading) for c in pool.candidates}
    assert (first.id, judged_hit.path, judged_hit.heading) not in keys
    for c in pool.candidates:
        assert not _covered_by_expected(golden, c.query_id, c.path, c.heading)
        assert c.snippet  # the text comes from the index
    # every unjudged hit of either run's top 10 is a candidate, with the rank it had there
    for label, record in (("#1", mmr.record), ("#2", plain.record)):
        for q in record.per_query:
            for h in q.top_k[:10]:
                if _covered_by_expected(golden, q.id, h.path, h.heading):
                    continue
                if (q.id, h.path, h.heading) == (first.id, judged_hit.path, judged_hit.heading):
                    continue
                c = next(
                    c
                    for c in pool.candidates
                    if (c.query_id, c.path, c.heading) == (q.id, h.path, h.heading)
                )
                assert any(s.source == label and s.rank <= h.rank for s in c.seen)
    priorities = [c.priority for c in pool.candidates]
    assert priorities == sorted(priorities, reverse=True)
    both = [c for c in pool.candidates if len(c.seen) == 2 and all(s.rank == 1 for s in c.seen)]
    assert not both or pool.candidates[0].priority >= both[0].priority


def test_pool_from_a_retriever_and_the_tune_grid(
    kb: Path, golden: Path, tmp_path: Path, real_embedder
) -> None:
    ids = [q.id for q in load_golden(golden).queries]
    answers = tmp_path / "run.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"id": qid, "hits": [{"path": "team/oncall.md", "score": 1.0}]}) + "\n"
            for qid in ids
        )
    )
    spec = parse_spec(f"command:{sys.executable} {ADAPTER} {answers}")
    sources = PoolSources(history=False, retriever=spec, tune=True)
    pool = collect(_settings(kb, golden), sources, depth=5)
    assert pool.sources[0].startswith("retriever ") and pool.sources[1] == "tune"
    from_retriever = [
        c for c in pool.candidates if any(s.source.startswith("retriever") for s in c.seen)
    ]
    # a hit without a heading is covered only by a path-only entry (page-escalation's
    # entry names the Paging section, so the bare file is still a candidate there)
    covered = {q for q in ids if _covered_by_expected(golden, q, "team/oncall.md", None)}
    assert {c.query_id for c in from_retriever} == set(ids) - covered
    assert "page-escalation" not in covered
    tune = [s for c in pool.candidates for s in c.seen if s.source == "tune"]
    assert tune and all(0 < s.share <= 1 and 1 <= s.rank <= 5 for s in tune)
    assert any(s.share < 1 for s in tune)  # some hits only some conditions bring


def test_export_and_import_round_trip(kb: Path, golden: Path, tmp_path: Path) -> None:
    pool = collect(_settings(kb, golden), PoolSources(history=True), depth=3)
    assert pool.candidates
    text = export_text(pool, "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["path"] for r in rows] == [c.path for c in pool.candidates]
    rows[0]["relevant"], rows[1]["relevant"], rows[1]["note"] = "yes", "no", "off topic"
    filled = tmp_path / "filled.csv"
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    filled.write_text(out.getvalue())
    imported = read_verdicts(filled, load_golden(golden), "tester")
    assert [j.relevant for j in imported.judgements] == [True, False]
    assert imported.judgements[1].note == "off topic" and imported.skipped == len(rows) - 2
    jsonl = tmp_path / "filled.jsonl"
    lines = [json.loads(x) for x in export_text(pool, "jsonl").splitlines()]
    lines[0]["relevant"] = True
    jsonl.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert (
        read_verdicts(jsonl, load_golden(golden), "t").judgements[0].path == pool.candidates[0].path
    )


def test_import_errors_name_the_line(golden: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("query_id,path,relevant\nrollback-when,a.md,yes\nrollback-when,b.md,maybe\n")
    with pytest.raises(GoldenError, match=r"bad.csv: line 3: relevant is \"maybe\""):
        read_verdicts(bad, load_golden(golden), "t")
    columns = tmp_path / "cols.csv"
    columns.write_text("query,path\n")
    with pytest.raises(GoldenError, match="line 1: missing column"):
        read_verdicts(columns, load_golden(golden), "t")


def test_cli_pool_import_apply_then_eval_notes_the_golden_change(
    kb: Path, golden: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    base = ["--kb-path", str(kb), "--golden", str(golden)]
    first = runner.invoke(cli, ["eval", *base])
    assert first.exit_code == 0, first.output
    out = tmp_path / "pool.csv"
    pooled = runner.invoke(cli, ["golden", "pool", *base, "--out", str(out), "--depth", "3"])
    assert pooled.exit_code == 0, pooled.output
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    rows[0]["relevant"] = "yes"
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    imported = runner.invoke(cli, ["golden", "import-judgements", str(out), *base, "--by", "ann"])
    assert imported.exit_code == 0, imported.output
    assert load_judgements(judgements_path(golden)).items[0].by == "ann"
    applied = runner.invoke(cli, ["golden", "apply", *base])
    assert applied.exit_code == 0, applied.output
    assert applied.output.startswith("added 1 expected entry to 1 query in ")
    again = runner.invoke(cli, ["eval", *base])
    assert "⚠️ golden changed since last run, diff disabled" in again.output
    assert "judged@10" in again.output


def test_cli_pool_refuses_a_bad_export_name_before_any_work(kb: Path, golden: Path) -> None:
    result = CliRunner().invoke(
        cli, ["golden", "pool", "--kb-path", str(kb), "--golden", str(golden), "--out", "x.txt"]
    )
    assert result.exit_code == 2
    assert "Error: cannot tell the format of x.txt" in result.output


def test_pool_from_a_saved_run_file_and_a_history_position(
    kb: Path, golden: Path, tmp_path: Path, real_embedder
) -> None:
    from groove.report import eval_json

    saved = tmp_path / "run.json"
    saved.write_text(eval_json.render(_eval(kb, golden, real_embedder, mmr=True)))
    stored = _eval(kb, golden, real_embedder)  # the history's only run
    sources = PoolSources(history=False, runs=(str(saved), "1"))
    pool = collect(_settings(kb, golden), sources, depth=2)
    # a saved file by its name, a stored run by its name, else its id
    assert pool.sources == ("run.json", stored.record.id)
    assert {s.source for c in pool.candidates for s in c.seen} == {"run.json", stored.record.id}
    assert all(s.rank <= 2 for c in pool.candidates for s in c.seen)


def test_a_titled_document_is_shown_by_its_title_not_as_text_before_a_heading(
    tmp_path: Path, real_embedder
) -> None:
    """A Cranfield-like file opens with a ``# title`` line the chunker keeps as text: its
    candidate names that title, and only a file without one says the text comes before
    its first heading."""
    from groove.notebooks.judge import _card

    kb = tmp_path / "kb"
    (kb / "docs").mkdir(parents=True)
    (kb / "docs" / "a.md").write_text(
        "# wing in a slipstream\n\nthe lift increase of a wing in a propeller slipstream.\n"
    )
    (kb / "docs" / "b.md").write_text(
        "# lift of a wing near the ground\n\nhow the ground changes the lift of a wing.\n"
    )
    (kb / "docs" / "c.md").write_text("the lift of a thin wing at small angles of attack.\n")
    golden = tmp_path / "golden.yml"
    golden.write_text(
        "queries:\n  - id: lift\n    query: lift of a wing\n    expected:\n"
        '      - path: "docs/a.md"\n'
    )
    groove.index(kb, progress=False)
    _eval(kb, golden, real_embedder, save_history=True)
    pool = collect(_settings(kb, golden), PoolSources(history=True), depth=10)
    by_path = {c.path: c for c in pool.candidates}
    assert set(by_path) == {"docs/b.md", "docs/c.md"}
    titled, plain = by_path["docs/b.md"], by_path["docs/c.md"]
    assert titled.heading is None and titled.lead_title == "lift of a wing near the ground"
    assert titled.snippet.startswith("# lift of a wing near the ground")
    assert "titled “lift of a wing near the ground”" in _card(titled)
    assert "before its first heading" not in _card(titled)
    assert plain.lead_title is None
    assert "(the text before its first heading)" in _card(plain)


def test_a_pool_file_in_a_missing_folder_is_a_one_line_error(tmp_path: Path) -> None:
    """Bad input, not an OSError naming the temporary file groove writes first."""
    from groove.errors import GrooveError
    from groove.judging.exchange import export_pool
    from groove.judging.pool import Pool

    empty = Pool(tmp_path / "golden.yml", tmp_path / "golden.judgements.jsonl", 10, (), (), 0)
    target = tmp_path / "no-such-folder" / "pool.csv"
    with pytest.raises(GrooveError) as refused:
        export_pool(empty, target)
    assert refused.value.message == f"cannot write {target}: No such file or directory"
    assert refused.value.hint == "check the folder and its permissions"
