"""Judgements beside the golden file, and judged@k (checked against ir_measures' Judged@k).

ir_measures is a test-only dependency (dev extra): it is the independent oracle for
judged@k on generated data the size of Cranfield (225 queries, 1,400 documents).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from groove.errors import GoldenError
from groove.golden.judgements import (
    Judgement,
    Judgements,
    judge_name,
    judgements_path,
    load_judgements,
    save_judgements,
    stamped,
)
from groove.metrics import Expected, RankedHit
from groove.runs.judged import judged_at_k

WHEN = "2026-12-01T15:00:00+00:00"


def _line(**fields: object) -> str:
    base: dict[str, object] = {
        "query_id": "q1",
        "path": "a.md",
        "heading": None,
        "relevant": True,
        "when": WHEN,
        "by": "alice",
    }
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v != "<absent>"})


def test_the_file_sits_beside_the_golden_file() -> None:
    assert judgements_path(Path("/x/golden.yml")) == Path("/x/golden.judgements.jsonl")
    assert judgements_path(Path("kb/.groove-eval.yml")) == Path("kb/.groove-eval.judgements.jsonl")


def test_save_then_load_round_trips_and_a_second_verdict_replaces_the_first(
    tmp_path: Path,
) -> None:
    path = tmp_path / "g.judgements.jsonl"
    first = stamped("q1", "a.md", "Setup", True, "alice", note="step 2", when=WHEN)
    other = stamped("q1", "b.md", None, False, "alice", when=WHEN)
    save_judgements(path, [first, other])
    again = stamped("q1", "a.md", " setup ", False, "bob", when=WHEN)  # same key, normalised
    saved = save_judgements(path, [again])
    loaded = load_judgements(path)
    assert loaded.items == saved.items == (again, other)  # in the place of the first
    assert path.read_text().count("\n") == 2
    assert not list(tmp_path.glob("*.tmp"))  # written through groove.atomic


def test_a_missing_file_is_an_empty_set(tmp_path: Path) -> None:
    assert len(load_judgements(tmp_path / "none.judgements.jsonl")) == 0


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("{not json", "line 2: not JSON (Expecting property name enclosed in double quotes)"),
        ("[1, 2]", "line 2: expected a JSON object"),
        (_line(extra="<absent>", by=None), "line 2: missing field `by`"),
        (_line(relevance=1), "line 2: unknown field `relevance`"),
        (_line(relevant="<absent>"), "line 2: missing field `relevant`"),
        (_line(relevant="yes"), 'line 2: `relevant` must be true or false, got "yes"'),
        (_line(path=""), 'line 2: `path` must be a non-empty string, got ""'),
        (_line(heading=3), "line 2: `heading` must be a string or null, got 3"),
    ],
)
def test_a_malformed_line_is_one_error_naming_the_line(
    tmp_path: Path, line: str, what: str
) -> None:
    path = tmp_path / "g.judgements.jsonl"
    path.write_text(_line() + "\n" + line + "\n" + _line(path="c.md") + "\n")
    with pytest.raises(GoldenError) as caught:
        load_judgements(path)
    assert caught.value.message.startswith(f"failed to parse judgements file: {path}: {what}")
    assert "\n" not in caught.value.message
    assert caught.value.hint and "query_id" in caught.value.hint


def test_invalid_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "g.judgements.jsonl"
    path.write_bytes(_line().encode() + b"\n\xff\n")
    with pytest.raises(GoldenError, match="line 2: invalid UTF-8"):
        load_judgements(path)


def test_who_judges_comes_from_the_argument_the_environment_or_the_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GROOVE_JUDGE", "env-name")
    assert judge_name("given", "config-name") == "given"
    assert judge_name(None, "config-name") == "env-name"
    monkeypatch.delenv("GROOVE_JUDGE")
    assert judge_name(None, "config-name") == "config-name"
    assert judge_name(None, None)  # the login name


def test_a_judgement_covers_hits_by_the_golden_hit_rule() -> None:
    j = Judgements(
        Path("j"),
        (
            Judgement("q", "a.md", None, False, WHEN, "x"),
            Judgement("q", "b.md", "Setup", True, WHEN, "x"),
        ),
    )
    assert j.find("q", "a.md", "Any heading") is not None
    assert j.find("q", "b.md", " SETUP ") is not None
    assert j.find("q", "b.md", None) is None  # a heading judgement never covers lead text
    assert j.find("other", "a.md", None) is None


def test_a_verdict_on_lead_text_covers_only_the_lead_text() -> None:
    lead = stamped("q", "a.md", None, False, "x")
    assert lead.heading == "" and lead.lead_text
    assert lead.covers("a.md", None) and not lead.covers("a.md", "Setup")
    assert lead.expected == Expected("a.md")  # applied: the golden file names the file
    whole = Judgement("q", "a.md", None, False, WHEN, "x")  # written by hand: the whole file
    assert whole.covers("a.md", "Setup") and whole.key != lead.key


def _cranfield_sized(seed: int) -> tuple[dict, dict, dict]:
    """225 queries over 1,400 documents: expected answers, judgements, ranked runs."""
    rng = random.Random(seed)
    docs = [f"d{i}.md" for i in range(1400)]
    expected, judged, runs = {}, {}, {}
    for q in range(225):
        qid = f"q{q}"
        pool = rng.sample(docs, 60)
        expected[qid] = pool[: rng.randint(1, 8)]
        judged[qid] = {d: rng.random() < 0.3 for d in pool[8 : 8 + rng.randint(0, 40)]}
        depth = rng.choice([3, 7, 10, 20, 50, 100])  # some return fewer hits than k
        ranked = rng.sample(pool, min(depth, 40)) + rng.sample(docs, max(depth - 40, 0))
        runs[qid] = list(dict.fromkeys(ranked))
    return expected, judged, runs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_judged_at_k_equals_ir_measures_on_cranfield_sized_data(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import Judged, Qrel, ScoredDoc

    expected, judged, runs = _cranfield_sized(seed)
    qrels = [Qrel(q, d, 1) for q, ds in expected.items() for d in ds]
    qrels += [Qrel(q, d, int(rel)) for q, js in judged.items() for d, rel in js.items()]
    run = [ScoredDoc(q, d, float(-r)) for q, ds in runs.items() for r, d in enumerate(ds)]
    judgements = Judgements(
        Path("j"),
        tuple(
            Judgement(q, d, None, rel, WHEN, "gen")
            for q, js in judged.items()
            for d, rel in js.items()
        ),
    )
    ks = (1, 5, 10, 20, 100)
    ours = {
        q: {
            k: judged_at_k(
                q,
                [Expected(d) for d in expected[q]],
                judgements,
                [RankedHit(r + 1, d, None, 0.0) for r, d in enumerate(runs[q])],
                k,
            )
            for k in ks
        }
        for q in runs
    }
    measures = [Judged @ k for k in ks]
    for metric in ir_measures.iter_calc(measures, qrels, run):
        assert ours[metric.query_id][metric.measure.params["cutoff"]] == pytest.approx(
            metric.value, abs=1e-12
        )
    aggregate = ir_measures.calc_aggregate(measures, qrels, run)
    for k in ks:
        mean = sum(ours[q][k] for q in runs) / len(runs)
        assert mean == pytest.approx(aggregate[Judged @ k], abs=1e-12)


# ---------------------------------------------------------------- in the eval reports


def _copy_golden(tmp_path: Path, golden_en: Path) -> Path:
    golden = tmp_path / "golden.yml"
    shutil.copy(golden_en, golden)
    return golden


def test_reports_show_judged_at_k_only_when_a_judgements_file_exists(
    tmp_path: Path, indexed_kb, golden_en: Path, real_embedder
) -> None:
    from groove.config import Config
    from groove.evaluation.run import run
    from groove.evaluation.settings import resolve_settings
    from groove.report import eval_json, eval_markdown, eval_text

    kb = indexed_kb("kb_en")
    golden = _copy_golden(tmp_path, golden_en)
    settings = resolve_settings(Config(), kb_path=kb, golden=golden, save_history=False)
    plain = run(settings, embedder=real_embedder)
    assert plain.judged is None
    assert "judged" not in json.loads(eval_json.render(plain))
    assert "judged@" not in eval_text.render(plain) + eval_markdown.render(plain)

    top = plain.per_query[0].top_k
    unjudged = [h for h in top if h.path != plain.per_query[0].expected[0].path]
    save_judgements(
        judgements_path(golden),
        [stamped(plain.per_query[0].id, h.path, h.heading, False, "t") for h in unjudged[:2]],
    )
    judged = run(settings, embedder=real_embedder)
    assert judged.judged is not None
    document = json.loads(eval_json.render(judged))["judged"]
    first = plain.per_query[0]
    covered = sum(
        1 for h in first.top_k[:10] if h.path == first.expected[0].path or h in unjudged[:2]
    )
    assert document["per_query"][first.id]["10"] == pytest.approx(covered / len(first.top_k[:10]))
    assert document["judgements"] == 2
    text = eval_text.render(judged)
    assert f"  judged@10  {judged.judged.aggregate[10]:.3f}\n" in text
    assert "| judged@5 |" in eval_markdown.render(judged)


# ---------------------------------------------------------------- a drop on unjudged hits


def _record(tops: dict[str, list[str]], expected: dict[str, list[str]]):  # type: ignore[no-untyped-def]
    from groove.metrics import aggregate, query_metrics
    from groove.runs.fingerprint import Fingerprint
    from groove.runs.record import QueryResult, RunRecord

    per_query = []
    for qid, paths in tops.items():
        exp = tuple(Expected(p) for p in expected[qid])
        hits = tuple(RankedHit(r + 1, p, None, 1.0 / (r + 1)) for r, p in enumerate(paths))
        per_query.append(QueryResult(qid, qid, exp, hits, query_metrics(exp, hits, (1, 5, 10))))
    fp = Fingerprint("m", None, 10, (1, 5, 10), "g", 2, 1)
    agg = aggregate([(q.expected, q.metrics) for q in per_query], (1, 5, 10))
    return RunRecord(WHEN, fp, None, tuple(per_query), agg, ())


def test_a_drop_made_of_unjudged_newcomers_is_named_and_compare_shows_it() -> None:
    from groove.report.compare import render_text
    from groove.runs.judged import drop_check, summarise
    from groove.stats.compare import LabelledRun, compare_runs

    expected = {"q1": ["a.md"], "q2": ["b.md"]}
    before = _record({"q1": ["a.md", "x.md", "y.md"], "q2": ["b.md", "z.md"]}, expected)
    # q1 fell: a.md went from rank 1 to rank 3, pushed down by two newcomers
    after = _record({"q1": ["n1.md", "n2.md", "a.md"], "q2": ["b.md", "z.md"]}, expected)
    judgements = Judgements(Path("j"), (Judgement("q1", "n1.md", None, False, WHEN, "x"),))
    found = drop_check(after, before, judgements)
    assert found is not None
    assert (found.queries, found.entered, found.unjudged) == (("q1",), 2, 1)
    assert found.message == (
        "1 of the 2 hits that entered the top 10 of the 1 query that fell are unjudged: "
        "judge them before trusting this drop (groove golden pool)"
    )
    assert drop_check(before, before, judgements) is None  # nothing fell
    summary = summarise(after, judgements, before)
    assert summary.aggregate[10] == pytest.approx(((2 / 3) + 0.5) / 2)  # q1: a.md, n1.md
    comparison = compare_runs(
        [LabelledRun("#2", before), LabelledRun("#1", after)], 0, judgements=judgements
    )
    text = render_text(comparison)
    assert "  judged@10  0.583\n" in text
    assert f"  ⚠️ {found.message}\n" in text
    assert comparison.to_dict()["runs"][1]["judged"]["drop"]["unjudged"] == 1
    plain = render_text(compare_runs([LabelledRun("#2", before), LabelledRun("#1", after)]))
    assert "judged@" not in plain  # without judgements, compare prints what it did


def test_the_eval_notes_the_drop_and_reports_it(tmp_path: Path) -> None:
    from groove.config import Config
    from groove.evaluation.settings import resolve_settings
    from groove.evaluation.verdict import compare
    from groove.history.history import append_run, history_path
    from groove.report import eval_json, eval_markdown

    kb = tmp_path / "kb"
    kb.mkdir()
    golden = tmp_path / "golden.yml"
    golden.write_text("queries: []\n")
    expected = {"q1": ["a.md"], "q2": ["b.md"]}
    before = _record({"q1": ["a.md", "x.md"], "q2": ["b.md"]}, expected)
    after = _record({"q1": ["n1.md", "a.md"], "q2": ["b.md"]}, expected)
    append_run(history_path(kb), before, 10)
    settings = resolve_settings(Config(), kb_path=kb, golden=golden, save_history=False)
    plain = compare(settings, after)
    assert plain.judged is None and not plain.notes  # no judgements file: no note
    save_judgements(judgements_path(golden), [stamped("q2", "c.md", None, False, "x")])
    run = compare(settings, after)
    (note,) = run.notes
    assert note.kind == "unjudged-drop"
    assert note.message.startswith("1 of the 1 hits that entered the top 10 of the 1 query")
    assert f"> ⚠️ warning: {note.message}" in eval_markdown.render(run)
    assert json.loads(eval_json.render(run))["judged"]["drop"]["queries"] == ["q1"]


def test_the_pool_weighs_the_newest_run_and_its_stored_baseline_double() -> None:
    """The gate compares the newest run with its baseline, which need not be the run
    before it (an experiment or a failed run may sit between them)."""
    from dataclasses import replace

    from groove.judging.pool import GATE_WEIGHT, history_lists

    expected = {"q1": ["a.md"]}
    base = replace(_record({"q1": ["a.md", "b.md"]}, expected), run_id="base000001")
    failed = replace(_record({"q1": ["c.md", "a.md"]}, expected), run_id="fail000002")
    newest = replace(
        _record({"q1": ["d.md", "a.md"]}, expected), run_id="new0000003", baseline_id="base000001"
    )
    weights = {s.label: s.weight for s in history_lists([newest, failed, base], 10)}
    assert weights == {"#1": GATE_WEIGHT, "#3": GATE_WEIGHT}  # the failed run is not its pair
    legacy = [replace(newest, baseline_id=None), failed, base]
    assert {s.label: s.weight for s in history_lists(legacy, 10)} == {
        "#1": GATE_WEIGHT,
        "#2": GATE_WEIGHT,
    }


def test_judged_at_k_is_in_the_frames_and_the_card_with_a_short_repr(
    tmp_path: Path, indexed_kb, golden_en: Path, real_embedder
) -> None:
    """Two runs in a row with a judgements file: the second's frames carry judged@k beside
    the metrics (and the first run's under the same judgements as ``previous``), the card
    names it, and ``run.judged`` prints one line; without the file none of it appears."""
    from groove.config import Config
    from groove.evaluation.run import run
    from groove.evaluation.settings import resolve_settings

    kb = indexed_kb("kb_en")
    golden = _copy_golden(tmp_path, golden_en)
    settings = resolve_settings(Config(), kb_path=kb, golden=golden)
    plain = run(settings, embedder=real_embedder)
    assert not any(c.startswith("judged@") for c in plain.per_query_frame().columns)
    assert not plain.aggregate_frame()["metric"].str.startswith("judged@").any()
    assert "judged@" not in repr(plain)

    first = plain.per_query[0]
    wrong = [h for h in first.top_k if h.path != first.expected[0].path][:3]
    save_judgements(
        judgements_path(golden), [stamped(first.id, h.path, h.heading, False, "t") for h in wrong]
    )
    second = run(settings, embedder=real_embedder)
    judged = second.judged
    assert judged is not None and second.previous is not None
    frame = second.per_query_frame().set_index("id")
    ks = second.fingerprint.k_values
    assert [c for c in frame.columns if c.startswith("judged@")] == [f"judged@{k}" for k in ks]
    for q in second.per_query:
        for k in ks:
            assert frame.loc[q.id, f"judged@{k}"] == pytest.approx(judged.per_query[q.id][k])

    rows = second.aggregate_frame().set_index("metric")
    assert rows.loc["judged@10", "value"] == pytest.approx(judged.aggregate[10])
    assert judged.previous is not None  # the first run, judged now
    assert rows.loc["judged@10", "previous"] == pytest.approx(judged.previous[10])
    assert rows.index[: len(rows) - len(ks)].tolist() == list(plain.aggregate_frame()["metric"])

    card = repr(second)
    line_of = {ln.split()[0]: ln for ln in card.splitlines() if ln.strip()}
    assert f"{judged.aggregate[10]:.3f} of the top 10 judged" in line_of["judged@10"]
    assert "3 judgements in golden.judgements" in card
    line = repr(judged)
    assert "\n" not in line and len(line) < 200
    assert f"judged@10 {judged.aggregate[10]:.3f}" in line
    assert f"over {len(second.per_query)} queries, 3 judgements" in line
