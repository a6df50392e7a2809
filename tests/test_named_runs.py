"""Every run says what it was: its name and its settings, in every listing (issue 29).

A sequence as an analyst makes it on one knowledge base: a named baseline, then an
experiment that changes a setting, then the same experiment again; the history's frame,
groove compare, the JSON report and the card must tell which run was which and what
changed, in the CLI's words.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import groove
from groove.cli import cli
from groove.history.history import HISTORY_FILE_NAME, load_history
from groove.runs.described import (
    differing_settings,
    fingerprint_settings,
    run_settings,
    setting_changes,
)
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import RunRecord
from groove.stats.compare import compare_runs, resolve_refs

pytestmark = pytest.mark.model


def _eval(kb: Path, golden: Path, *extra: str) -> dict[str, Any]:
    args = ["eval", "--kb-path", str(kb), "--golden", str(golden), "--format", "json", *extra]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_named_runs_say_what_they_were_in_the_frame_compare_and_json(
    indexed_kb: Any, golden_en: Path
) -> None:
    kb = indexed_kb("kb_en")
    base = _eval(kb, golden_en, "--name", "baseline")
    trigram = _eval(kb, golden_en, "--name", "trigram", "--lexical", "trigram")
    again = _eval(kb, golden_en, "--name", "trigram-2", "--lexical", "trigram")
    assert (base["name"], trigram["name"], again["name"]) == ("baseline", "trigram", "trigram-2")
    assert trigram["settings"]["lexical"] == "trigram"
    assert base["settings"]["lexical"] != "trigram"
    assert base["settings"]["limit"] == "10" and base["settings"]["k"] == "1,5,10"
    assert base["settings"]["regression_gate"] == "threshold"

    history = load_history(kb / HISTORY_FILE_NAME)
    assert [r.name for r in history.runs] == ["trigram-2", "trigram", "baseline"]
    frame = history.runs_frame()
    assert list(frame.columns[:5]) == ["id", "name", "timestamp", "outcome", "baseline_id"]
    assert list(frame["name"]) == ["baseline", "trigram", "trigram-2"]
    assert list(frame["id"]) == [base["id"], trigram["id"], again["id"]]
    assert list(frame["outcome"]) == ["no-baseline", "no-baseline", "passed"]
    assert frame["baseline_id"].iloc[2] == trigram["id"]
    # one column per setting that differs between the runs shown, and only those
    assert list(frame["lexical"]) == [base["settings"]["lexical"], "trigram", "trigram"]
    assert "limit" not in frame.columns and "mmr" not in frame.columns
    lexical_before = base["settings"]["lexical"]
    assert frame["changed"].iloc[1] == f"lexical {lexical_before} -> trigram"
    assert frame["changed"].isna().tolist() == [True, False, True]  # the oldest; nothing

    compared = CliRunner().invoke(cli, ["compare", "--kb-path", str(kb), "--format", "json"])
    assert compared.exit_code == 0, compared.stderr
    labels = [r["label"] for r in json.loads(compared.stdout)["runs"]]
    assert labels == ["trigram", "trigram-2"]  # the comparable runs, by name
    text = CliRunner().invoke(cli, ["compare", "--kb-path", str(kb)])
    assert text.stdout.startswith("groove compare — baseline trigram (")


def test_runs_are_referred_to_by_name_and_compare_says_what_differs(
    indexed_kb: Any, golden_en: Path
) -> None:
    """The sequence an analyst types: name two runs of two configurations, then compare
    them and accept one by those names; every listing says which run was which."""
    kb = indexed_kb("kb_en")
    base = _eval(kb, golden_en, "--name", "base")
    mmr = _eval(kb, golden_en, "--name", "mmr", "--mmr", "true")
    again = _eval(kb, golden_en, "--name", "base")  # a repeat under the same name

    def run(*args: str) -> Any:
        result = CliRunner().invoke(cli, [*args, "--kb-path", str(kb)])
        assert result.exit_code == 0, result.stderr
        return result

    # the newest run of a name is the one a name means
    document = json.loads(run("compare", "base", "mmr", "--format", "json").stdout)
    assert [r["label"] for r in document["runs"]] == ["base", "mmr"]
    assert [r["timestamp"] for r in document["runs"]] == [again["timestamp"], mmr["timestamp"]]
    on = "mmr off -> on (lambda 0.7)"  # the lambda it was switched on with
    assert [r["changed"] for r in document["runs"]] == [[], [on]]
    text = run("compare", "base", "mmr").stdout
    assert f"(10 paired queries, other config than the baseline: {on}; model " in text
    markdown = run("compare", "base", "mmr", "--format", "markdown").stdout
    assert f"| mmr `{mmr['timestamp']}` ({on}) |" in markdown
    stored = load_history(kb / HISTORY_FILE_NAME).runs
    card = repr(compare_runs(resolve_refs(["base", "mmr"], stored)))
    assert f"10 paired, {on}: recall@1" in card
    frame = groove.compare([stored[0], stored[1]])
    assert set(frame["changed"]) == {"", on}
    same = json.loads(run("compare", again["id"], base["id"], "--format", "json").stdout)
    assert [r["changed"] for r in same["runs"]] == [[], []]  # same configuration: nothing

    listing = run("baseline", "list").stdout.splitlines()
    assert listing[0].split()[:3] == ["id", "name", "timestamp"]
    assert [line.split()[:2] for line in listing[1:]] == [
        [again["id"], "base"],
        [mmr["id"], "mmr"],
        [base["id"], "base"],
    ]
    accepted = run("baseline", "accept", "--run", "mmr").stdout
    assert accepted.startswith(f"accepted {mmr['id']} ({mmr['timestamp']})")
    _eval(kb, golden_en, "--name", "mmr-2", "--mmr", "true", "--mmr-lambda", "0.5")
    lambdas = json.loads(run("compare", "mmr", "mmr-2", "base", "--format", "json").stdout)
    assert [r["changed"] for r in lambdas["runs"]] == [
        [],
        ["mmr_lambda 0.7 -> 0.5"],
        ["mmr on -> off"],
    ]
    alone = CliRunner().invoke(cli, ["compare", "--kb-path", str(kb)])
    assert (alone.exit_code, alone.stderr) == (
        2,
        "Error: 1 run(s) to compare: need at least two\n"
        "hint: the newest run is the only stored run of its configuration; to compare "
        "configurations pass REFS (run names, ids or positions): groove compare base mmr-2\n",
    )
    one = CliRunner().invoke(cli, ["compare", "mmr", "--kb-path", str(kb)])
    assert (one.exit_code, one.stderr) == (  # not "the only stored run": four are stored
        2,
        "Error: 1 run(s) to compare: need at least two\n"
        "hint: pass a second REF to compare it with (a run name, id, position or saved "
        "file): groove compare mmr mmr-2\n",
    )
    missing = CliRunner().invoke(cli, ["compare", "base", "nope", "--kb-path", str(kb)])
    assert (missing.exit_code, missing.stderr) == (
        2,
        "Error: no run(s) in the eval history match 'nope' (as a run name, timestamp or run id)\n"
        "hint: pass a run name, a history position (1 = newest), a unique timestamp, a run id "
        "(groove baseline list) or a saved file\n",
    )


def test_an_unnamed_run_is_listed_by_its_id_and_the_card_names_the_change(
    indexed_kb: Any, golden_en: Path
) -> None:
    kb = indexed_kb("kb_en")
    first = groove.evaluate(kb, golden_en, save_history=True)
    assert first.record.name is None
    second = groove.evaluate(kb, golden_en, save_history=True, limit=20, name="deeper")
    card = repr(second)
    assert "not compared: config or metric version changed since last run" in card
    assert f"(limit 10 -> 20 since {first.record.id})" in card  # the setting, as the CLI words it
    third = groove.evaluate(kb, golden_en, save_history=True, mmr=True, name="diverse")
    changed = "limit 20 -> 10; mmr off -> on (lambda 0.7)"
    assert f"{changed} since deeper)" in repr(third)  # the run before, named
    assert f"deeper · {second.record.id}" in card
    frame = groove.load_history(kb).runs_frame()
    assert frame["name"].isna().iloc[0] and frame["name"].iloc[1] == "deeper"
    assert list(frame["limit"]) == ["10", "20", "10"]
    assert frame["changed"].iloc[1] == "limit 10 -> 20"
    assert frame["changed"].iloc[2] == changed


@pytest.mark.parametrize(
    ("before", "now", "words"),
    [
        ({"mmr": "off"}, {"mmr": "on", "mmr_lambda": "0.7", "mmr_same_doc_penalty": "0"},
         ("mmr off -> on (lambda 0.7)",)),
        ({"mmr": "off"}, {"mmr": "on", "mmr_lambda": "0.3", "mmr_same_doc_penalty": "0.1"},
         ("mmr off -> on (lambda 0.3, same_doc_penalty 0.1)",)),
        ({"mmr": "on", "mmr_lambda": "0.5", "mmr_same_doc_penalty": "0"},
         {"mmr": "on", "mmr_lambda": "0.7", "mmr_same_doc_penalty": "0"},
         ("mmr_lambda 0.5 -> 0.7",)),
        ({"mmr": "on", "mmr_lambda": "0.5", "mmr_same_doc_penalty": "0"}, {"mmr": "off"},
         ("mmr on -> off",)),
    ],
)  # fmt: skip
def test_mmr_switched_on_names_its_lambda(
    before: dict[str, str], now: dict[str, str], words: tuple[str, ...]
) -> None:
    assert setting_changes(before, now) == words


def test_a_run_stored_before_settings_were_kept_is_described_by_its_fingerprint() -> None:
    fingerprint = Fingerprint(
        model="m",
        reranker=None,
        limit=10,
        k_values=(1, 5, 10),
        golden_hash="abcdef0123456789",
        metric_version=2,
        fts_query_version=2,
        mmr={"lambda": 0.7, "same_doc_penalty": 0.1},
        fusion={
            "rrf_k": 30.0,
            "bm25_heading_weight": 2.0,
            "bm25_context_weight": 1.0,
            "bm25_content_weight": 0.5,
        },
        lexical="porter",
    )
    described = fingerprint_settings(fingerprint)
    assert described == {
        "model": "m",
        "reranker": "none",
        "limit": "10",
        "k": "1,5,10",
        "lexical": "porter",
        "mmr": "on",
        "mmr_lambda": "0.7",
        "mmr_same_doc_penalty": "0.1",
        "parent_retriever": "off",
        "rrf_k": "30",
        "bm25_weights": "2,1,0.5",
        "golden": "abcdef01",
    }
    old = RunRecord.from_dict(
        {
            "timestamp": "2026-01-01T00:00:00+00:00",
            "fingerprint": fingerprint.to_dict(),
            "per_query": [],
            "aggregate": {},
        }
    )
    assert old.settings is None and run_settings(old) == described
    assert RunRecord.from_dict({**old.to_dict(), "name": "x"}).name == "x"


def test_changes_are_worded_as_the_cli_words_them() -> None:
    before = {"limit": "10", "lexical": "auto", "golden": "aaaa", "alpha": "0.05"}
    now = {"limit": "20", "lexical": "trigram", "golden": "bbbb"}
    assert setting_changes(before, now) == (
        "limit 10 -> 20",
        "lexical auto -> trigram",
        "golden changed",
    )  # alpha: unknown on one side, not a change
    assert setting_changes(before, before) == ()
    assert differing_settings([before, now]) == ("limit", "lexical", "golden", "alpha")
    assert differing_settings([before, before]) == ()


def test_a_setting_a_run_records_only_off_its_default_is_a_change() -> None:
    """A run's fusion and context settings are recorded only when they differ from the
    built-in ones (the fingerprint keeps them so), so a run with groove.toml's rrf_k = 30
    knows rrf_k and the default run before it does not: compare must still name it."""
    default = {"limit": "10", "mmr": "off", "golden": "aaaa"}
    tuned = {**default, "rrf_k": "30", "bm25_weights": "2,1,1", "context": "static"}
    assert setting_changes(default, tuned) == ("rrf_k 60 -> 30", "context off -> static")
    assert setting_changes(tuned, default) == ("rrf_k 30 -> 60", "context static -> off")
    assert setting_changes(default, {**default, "bm25_weights": "2,1,1"}) == ()
