"""The size of a result list on every face, as the reference has it.

Up to LIMIT_MAX (10,000, the reference's supported maximum) a limit or a k is accepted;
above it, it is refused with a one-line error that names the setting as the face spells
it, in every task. Below the bound, search and tune take it as given, while eval lowers
its limit and each k to EVAL_RETRIEVAL_CAP (1,000: the reference's
``normalize_eval_limit_and_k``), the k sorted without repeats and not lowered to the
limit, with ``groove eval: note: limit 2000 exceeds the retrieval cap; using 1000`` when
the limit changed. Each face is run for real up to the point of refusal, which comes
before any model or index is opened; the note is checked on a real eval.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import groove
from groove.cli import cli
from groove.config import Config
from groove.engine.search import SearchOptions
from groove.errors import ConfigError
from groove.evaluation.settings import resolve_settings as eval_settings
from groove.notebooks import kernel
from groove.notes import Note
from groove.settings import EVAL_RETRIEVAL_CAP, LIMIT_MAX
from groove.settings.spelling import spelled
from groove.tuning.settings import resolve_settings as tune_settings

OVER = LIMIT_MAX + 1
CLI_LIMIT = f"Error: --limit {OVER} exceeds the supported maximum {LIMIT_MAX}\n"
CLI_HINT = f"hint: pass --limit N with N from 1 to {LIMIT_MAX}\n"


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no groove.toml of the repository is found
    folder = tmp_path / "kb"
    folder.mkdir()
    return folder


def test_the_bound_is_the_references_supported_maximum() -> None:
    assert LIMIT_MAX == 10_000


def test_the_caps_are_the_references() -> None:
    assert (EVAL_RETRIEVAL_CAP, LIMIT_MAX) == (1_000, 10_000)


def _capped(requested: int) -> Note:
    return Note(
        "limit-capped",
        f"limit {requested} exceeds the retrieval cap; using 1000",
        data={"requested": requested, "used": 1000},
    )


def test_eval_lowers_a_limit_over_the_retrieval_cap_with_a_note(kb: Path) -> None:
    s = eval_settings(Config(), kb_path=kb, golden=kb / "g.yml", limit=2000)
    assert (s.limit, s.search.limit, s.k_values, s.notes) == (
        1000,
        1000,
        (1, 5, 10),
        (_capped(2000),),
    )
    at_cap = eval_settings(Config(), kb_path=kb, golden=kb / "g.yml", limit=1000)
    assert (at_cap.limit, at_cap.notes) == (1000, ())


def test_eval_lowers_each_k_sorts_them_and_keeps_them_above_the_limit(kb: Path) -> None:
    """Each k := min(k, 1000), sorted and de-duplicated; k is not clamped to the limit, and
    lowering a k alone says nothing (only a changed limit has a note)."""
    s = eval_settings(
        Config(), kb_path=kb, golden=kb / "g.yml", k_values=[2000, 5, 1000, 1], limit=3
    )
    assert (s.k_values, s.limit, s.notes) == ((1, 5, 1000), 3, ())
    assert s.depth == 1000


def test_eval_takes_its_limit_from_the_k_as_given_before_lowering_them(kb: Path) -> None:
    s = eval_settings(Config(), kb_path=kb, golden=kb / "g.yml", k_values=[1, LIMIT_MAX])
    assert (s.k_values, s.limit, s.notes) == ((1, 1000), 1000, (_capped(LIMIT_MAX),))


def test_eval_lowers_groove_toml_k_values_too(kb: Path) -> None:
    config = Config(values=(("eval.k_values", (5000, 10)),))
    s = eval_settings(config, kb_path=kb, golden=kb / "g.yml")
    assert (s.k_values, s.limit, s.notes) == ((10, 1000), 1000, (_capped(5000),))


def test_tune_keeps_the_values_as_given_up_to_the_bound(kb: Path) -> None:
    golden = kb / "g.yml"
    t = tune_settings(Config(), kb_path=kb, golden=golden, k_values=[LIMIT_MAX], limit=LIMIT_MAX)
    assert (t.k_values, t.limit, t.notes) == ((5, LIMIT_MAX), LIMIT_MAX, ())
    t = tune_settings(Config(), kb_path=kb, golden=golden, k_values=[1, 2000], limit=1500)
    assert (t.k_values, t.limit) == ((1, 5, 2000), 2000)
    assert SearchOptions(limit=LIMIT_MAX).limit == LIMIT_MAX


def test_tune_with_a_retriever_takes_its_limit_and_window_from_its_rules() -> None:
    """tune --retriever's rules (resolver hooks): k with the primary k, a limit not given
    is 10 and at least the largest k, a window not given is 100; up to the bound, nothing
    is lowered."""
    from groove.resolve import resolve
    from groove.settings import TUNE
    from groove.tuning.retriever import RETRIEVER_RULES

    def chosen(**given: object) -> tuple[object, ...]:
        values = resolve(TUNE, Config(), given, RETRIEVER_RULES)
        return values["k_values"], values["limit"], values["window"]

    assert chosen() == ((1, 5, 10), 10, 100)
    assert chosen(k_values=(1,)) == ((1, 5), 10, 100)
    assert chosen(k_values=(20,), limit=3, window=50) == ((5, 20), 20, 50)
    assert chosen(limit=LIMIT_MAX, window=LIMIT_MAX) == ((1, 5, 10), LIMIT_MAX, LIMIT_MAX)
    with pytest.raises(ConfigError) as over:
        chosen(window=OVER)
    assert over.value.setting == "window"


def test_the_cli_eval_prints_the_references_note(indexed_kb, golden_en: Path) -> None:  # type: ignore[no-untyped-def]
    """A real eval: the note on stderr, word for word, and the run made at the cap."""
    kb = indexed_kb("kb_en")
    args = ["eval", "--kb-path", str(kb), "--golden", str(golden_en), "--no-history"]
    result = CliRunner().invoke(
        cli, [*args, "--limit", "2000", "--k", "1,5000,5,5", "--format", "json"]
    )
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "groove eval: note: limit 2000 exceeds the retrieval cap; using 1000\n"
    document = json.loads(result.stdout)
    assert document["fingerprint"]["limit"] == 1000
    assert document["fingerprint"]["k_values"] == [1, 5, 1000]
    assert sorted(document["aggregate"]["recall_at_k"], key=int) == ["1", "5", "1000"]
    quiet = CliRunner().invoke(cli, [*args, "--limit", "1000", "--format", "json"])
    assert (quiet.exit_code, quiet.stderr) == (0, "")


@pytest.mark.parametrize(
    ("build", "setting"),
    [
        (lambda kb: eval_settings(Config(), kb_path=kb, golden=kb / "g", limit=OVER), "limit"),
        (
            lambda kb: eval_settings(Config(), kb_path=kb, golden=kb / "g", k_values=[OVER]),
            "k_values",
        ),
        (lambda kb: tune_settings(Config(), kb_path=kb, golden=kb / "g", limit=OVER), "limit"),
        (
            lambda kb: tune_settings(Config(), kb_path=kb, golden=kb / "g", k_values=[1, OVER]),
            "k_values",
        ),
        (lambda kb: SearchOptions(limit=OVER), "limit"),
    ],
    ids=["eval-limit", "eval-k", "tune-limit", "tune-k", "engine-search"],
)
def test_the_library_refuses_and_names_the_setting(kb: Path, build, setting: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as info:
        build(kb)
    message, hint = spelled(info.value, "api")  # the API's words
    assert info.value.setting == setting
    assert message == f"keyword {setting} {OVER} exceeds the supported maximum {LIMIT_MAX}"
    assert hint == f"pass {setting}=N with N from 1 to {LIMIT_MAX}"


@pytest.mark.parametrize(
    "args",
    [
        ("search", "anything", "--limit", str(OVER)),
        ("eval", "--limit", str(OVER)),
        ("tune", "--limit", str(OVER)),
    ],
    ids=["search", "eval", "tune"],
)
def test_the_cli_refuses_with_one_line_naming_the_flag(kb: Path, args: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*args, "--kb-path", str(kb)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == CLI_LIMIT + CLI_HINT


@pytest.mark.parametrize("command", ["eval", "tune"])
def test_the_cli_refuses_a_k_over_the_bound(kb: Path, command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--kb-path", str(kb), "--k", f"1,{OVER}"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == (
        f"Error: --k {OVER} exceeds the supported maximum {LIMIT_MAX}"
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda kb: groove.search("anything", kb, limit=OVER),
        lambda kb: groove.evaluate(kb, kb / "g.yml", limit=OVER),
        lambda kb: groove.tune(kb, kb / "g.yml", limit=OVER),
    ],
    ids=["search", "evaluate", "tune"],
)
def test_the_api_refuses_naming_the_keyword(kb: Path, call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(groove.ConfigError) as info:
        call(kb)
    assert str(info.value) == f"keyword limit {OVER} exceeds the supported maximum {LIMIT_MAX}"
    assert info.value.hint == f"pass limit=N with N from 1 to {LIMIT_MAX}"


@pytest.mark.parametrize("notebook", ["eval_report", "tune_explorer"])
def test_the_notebooks_refuse_naming_the_parameter(kb: Path, tmp_path: Path, notebook: str) -> None:
    path = tmp_path / "result.json"
    outcome = getattr(kernel, notebook)(
        kb_path=kb, golden=kb / "g.yml", limit=OVER, result_path=path
    )
    assert outcome.exit_code == 2
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["error"] == f"parameter limit {OVER} exceeds the supported maximum {LIMIT_MAX}"
    assert document["hint"] == f"pass -p limit N with N from 1 to {LIMIT_MAX}"


# ---------------------------------------------------------------- depth-like settings
# The pool's depth (hits per source) and tune --retriever's window (the retrieval's limit)
# are limits too: the same bound, the same refusal.


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (("golden", "pool", "--limit", str(OVER)), "--limit"),
        (("golden", "pool", "--depth", str(OVER)), "--depth"),
        (("tune", "--retriever", "command:true", "--window", str(OVER)), "--window"),
        (("tune", "--retriever", "command:true", "--limit", str(OVER)), "--limit"),
    ],
    ids=["pool-limit", "pool-depth", "tune-window", "tune-retriever-limit"],
)
def test_the_cli_refuses_a_depth_over_the_bound(kb: Path, args: tuple[str, ...], flag: str) -> None:
    golden = kb / "g.yml"
    golden.write_text('queries:\n  - query: "q"\n    expected: [a.md]\n', encoding="utf-8")
    result = CliRunner().invoke(cli, [*args, "--kb-path", str(kb), "--golden", str(golden)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        f"Error: {flag} {OVER} exceeds the supported maximum {LIMIT_MAX}\n"
        f"hint: pass {flag} N with N from 1 to {LIMIT_MAX}\n"
    )


def test_the_api_refuses_a_pool_depth_over_the_bound(kb: Path) -> None:
    golden = kb / "g.yml"
    golden.write_text('queries:\n  - query: "q"\n    expected: [a.md]\n', encoding="utf-8")
    with pytest.raises(groove.ConfigError) as info:
        groove.pool(kb, golden, depth=OVER)
    assert str(info.value) == f"keyword depth {OVER} exceeds the supported maximum {LIMIT_MAX}"
    assert info.value.hint == f"pass depth=N with N from 1 to {LIMIT_MAX}"


@pytest.mark.parametrize("setting", ["limit", "depth"])
def test_the_judge_notebook_refuses_naming_the_parameter(kb: Path, setting: str) -> None:
    """The judging view's parameters (groove.settings.JUDGE) pass the pool's resolver."""
    from groove.judging.run import resolve

    golden = kb / "g.yml"
    golden.write_text('queries:\n  - query: "q"\n    expected: [a.md]\n', encoding="utf-8")
    given = {"kb_path": kb, "golden": golden, setting: OVER}
    with pytest.raises(ConfigError) as info:
        resolve(Config(), given)
    message, hint = spelled(info.value, "notebook")
    assert message == f"parameter {setting} {OVER} exceeds the supported maximum {LIMIT_MAX}"
    assert hint == f"pass -p {setting} N with N from 1 to {LIMIT_MAX}"


def test_the_api_refuses_a_pool_limit_over_the_bound(kb: Path) -> None:
    golden = kb / "g.yml"
    golden.write_text('queries:\n  - query: "q"\n    expected: [a.md]\n', encoding="utf-8")
    with pytest.raises(groove.ConfigError) as info:
        groove.pool(kb, golden, limit=OVER)
    assert str(info.value) == f"keyword limit {OVER} exceeds the supported maximum {LIMIT_MAX}"
    assert info.value.hint == f"pass limit=N with N from 1 to {LIMIT_MAX}"


def test_the_api_and_the_notebook_carry_the_note(
    indexed_kb, golden_en: Path, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    kb = indexed_kb("kb_en")
    run = groove.evaluate(kb, golden_en, limit=2000, history=False)
    assert run.record.fingerprint.limit == 1000
    assert _capped(2000) in run.notes
    outcome = kernel.eval_report(
        kb_path=kb, golden=golden_en, limit=2000, history=False, result_path=tmp_path / "r.json"
    )
    assert outcome.exit_code == 0
    assert _capped(2000) in outcome.notes
