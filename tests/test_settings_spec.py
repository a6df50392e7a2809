"""One spec per task: what each face hands the resolver, and what the resolver makes of it,
agree with the task's table in groove.settings.

A setting a face uses but its table does not declare, a declared setting a face drops on
the way, a groove.toml key that does not exist, or a cap missing on a limit fails here.
The faces are run for real up to the resolver, which is replaced by a probe that records
what reached it (no index or model is needed).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import groove
from groove.cli import cli
from groove.cli.common import cli_given
from groove.cli.retriever_flags import RETRIEVER_FLAGS
from groove.config import Config, parse_config
from groove.errors import ConfigError
from groove.evaluation.settings import EvalSettings
from groove.evaluation.settings import resolve_settings as eval_settings
from groove.notebooks import kernel
from groove.resolve import config_value, resolve
from groove.settings import (
    BASELINE,
    EVAL,
    EXPORT,
    GROOVE_TOML,
    INDEX,
    JUDGE,
    LIMIT_MAX,
    NOTEBOOK_RUN,
    POOL,
    SEARCH,
    SERVE,
    TUNE,
    Setting,
    at_most,
    on,
    parse_k_list,
)
from groove.settings.spelling import spelled
from groove.tuning.retriever import RETRIEVER_ONLY
from groove.tuning.settings import TuneSettings
from groove.tuning.settings import resolve_settings as tune_settings

ROOT = Path(__file__).resolve().parent.parent
TABLES = {
    "INDEX": INDEX,
    "SEARCH": SEARCH,
    "EVAL": EVAL,
    "TUNE": TUNE,
    "SERVE": SERVE,
    "EXPORT": EXPORT,
    "BASELINE": BASELINE,
    "POOL": POOL,
    "JUDGE": JUDGE,
    "NOTEBOOK_RUN": NOTEBOOK_RUN,
}
#: The tables whose values go through groove.resolve.
RESOLVED = {"EVAL": EVAL, "TUNE": TUNE}
#: A value groove.toml may hold for a setting of each kind, and what it reads as.
TOML_SAMPLE: dict[str, tuple[Any, Any]] = {
    "path": ("somewhere", "somewhere"),
    "file": ("golden.yml", "golden.yml"),
    "folder": ("models", "models"),
    "text": ("main", "main"),
    "k_list": ([2, 7], (2, 7)),
    "bool": (True, True),
    "fraction": (0.25, 0.25),
    "lexical": ("porter", "porter"),
    "gate": ("significant", "significant"),
    "slice_by": ("folder", "folder"),
    "pin": ("release-2", "release-2"),
    "whole": (700, 700),
    "count": (3, 3),
    "several": (4, 4),
    "number": (2.5, 2.5),
    "level": (0.01, 0.01),
    "texts": (["a", "b"], ("a", "b")),
    "family": ("convex", "convex"),
    "normalizer": ("zscore", "zscore"),
}


def _keyed() -> list[tuple[str, Setting]]:
    return [
        (f"{table}.{name}", s)
        for table, settings in TABLES.items()
        for name, s in settings.items()
        if s.config_key is not None
    ]


def _toml(key: str, value: Any) -> str:
    *tables, leaf = key.split(".")
    header = f"[{'.'.join(tables)}]\n" if tables else ""
    return f"{header}{leaf} = {json.dumps(value)}\n"


# ---------------------------------------------------------------- the declaration


@pytest.mark.parametrize(("where", "setting"), _keyed(), ids=[w for w, _ in _keyed()])
def test_each_config_key_is_a_groove_toml_key_the_resolver_reads(
    tmp_path: Path, where: str, setting: Setting
) -> None:
    """groove.toml accepts the declared key, and a value written there comes back from
    the resolver when the face gives none; a value the face gives wins over it."""
    assert setting.config_key is not None
    written, read = TOML_SAMPLE[setting.kind]
    config = parse_config(_toml(setting.config_key, written), tmp_path / "groove.toml")
    expected = tmp_path / read if setting.kind in ("path", "file", "folder") else read
    assert config_value(config, setting.config_key) == expected
    table = TABLES[where.split(".")[0]]
    assert resolve(table, config, {})[setting.name] == expected
    given = setting.parse(written)
    assert resolve(table, config, {setting.name: given})[setting.name] == given


@pytest.mark.parametrize("key", list(GROOVE_TOML))
def test_groove_toml_is_read_through_the_declarations(tmp_path: Path, key: str) -> None:
    """Every key of the file is a declared setting: without the file, Config holds its
    declared default; a value of its kind written there is read back; one of the wrong
    kind is refused with the file's wording."""
    setting = GROOVE_TOML[key]
    assert config_value(Config(), key) == setting.default
    written, read = TOML_SAMPLE[setting.kind]
    config = parse_config(_toml(key, written), tmp_path / "groove.toml")
    expected = tmp_path / read if setting.kind in ("path", "file", "folder") else read
    assert config_value(config, key) == expected
    wrong = _toml(key, 0).replace("= 0", "= { a = 1 }")  # a table: no kind takes it
    with pytest.raises(ConfigError, match=f"{key} = "):
        parse_config(wrong, tmp_path / "groove.toml")


def test_the_bounds_of_a_groove_toml_key_are_its_declarations() -> None:
    bounded = {key: s.bounds for key, s in GROOVE_TOML.items() if s.bounds is not None}
    assert bounded["eval.history_size"] == (1, 10_000)
    assert bounded["search.fusion.rrf_k"] == (1.0, 1e6)
    for key, (lo, hi) in bounded.items():
        for outside in (lo - 1, hi + 1):
            with pytest.raises(ConfigError, match=f"{key} = "):
                parse_config(_toml(key, outside), Path("groove.toml"))


@pytest.mark.parametrize("name", list(RESOLVED))
def test_without_a_value_or_a_config_the_declared_default_holds(name: str) -> None:
    table = RESOLVED[name]
    values = resolve(table, Config(), {})
    assert list(values) == list(table)  # every setting of the table, nothing else
    for key, setting in table.items():
        toml_key = setting.config_key
        from_config = None if toml_key is None else config_value(Config(), toml_key)
        expected = setting.default if from_config is None else from_config
        assert values[key] == expected, key


def test_the_resolver_refuses_a_setting_its_table_does_not_declare() -> None:
    with pytest.raises(TypeError, match=r"undeclared setting.*: depth"):
        resolve(EVAL, Config(), {"limit": 5, "depth": 3})
    with pytest.raises(TypeError, match="undeclared"):
        eval_settings(Config(), kb_path=Path("."), golden=Path("g"), windw=5)


@pytest.mark.parametrize("table", ["EVAL", "TUNE", "POOL", "JUDGE"])
def test_every_limit_and_k_is_capped_and_refused_above_the_bound(table: str) -> None:
    """The one rule (groove.settings): a limit, a depth, a window or a k above LIMIT_MAX
    is refused by name, whichever face gave it; at the bound it is kept."""
    settings = TABLES[table]
    sizes = [
        name
        for name, s in settings.items()
        if s.kind == "k_list" or name in ("limit", "depth", "window")
    ]
    assert sizes and all(settings[name].capped for name in sizes)
    capped = [name for name, s in settings.items() if s.capped]
    assert capped == sizes
    if table not in RESOLVED:
        return
    for name in capped:
        is_list = settings[name].kind == "k_list"
        at_bound = (1, LIMIT_MAX) if is_list else LIMIT_MAX
        assert resolve(settings, Config(), {name: at_bound})[name] == at_bound
        with pytest.raises(ConfigError) as info:
            resolve(settings, Config(), {name: (1, LIMIT_MAX + 1) if is_list else LIMIT_MAX + 1})
        assert info.value.setting == name


def test_the_cli_hands_switches_and_k_text_over_as_given_values() -> None:
    params = {"no_history": False, "no_diff": True, "require_baseline": False, "k_text": "5,1"}
    given = cli_given(EVAL, {**params, "explain": True, "fmt": "json"})
    assert given == {
        "k_values": (5, 1),
        "history": None,  # a switch left off: groove.toml or the default decides
        "diff": False,  # a --no- switch given
        "require_baseline": None,
        "explain": True,
    }


# ---------------------------------------------------------------- what the resolver returns

#: EVAL settings with rules of eval's own in resolve_settings (the rest are copied as given).
EVAL_OWN_RULES = {"kb_path", "k_values", "limit", "reranker", "retriever", "save_history"}
#: EVAL settings that reach the run inside another field: golden_path, the retriever's
#: spec, the search options; ``config`` is the file the face loads.
EVAL_FOLDED = {
    "golden",
    "retriever_options",
    "retriever_name",
    "mmr",
    "mmr_lambda",
    "mmr_same_doc_penalty",
    "parent_retriever",
    "lexical",
    "config",
}
#: EVAL settings the CLI itself uses: its report options and the retriever flags it
#: turns into a spec.
EVAL_CLI_OWN = {"full", "export_run", "export_run_headings", *RETRIEVER_FLAGS} - {"retriever"}
#: The tune --retriever settings (groove.tuning.retriever.RetrieverTuneSettings).
TUNE_EXTERNAL = {"retriever", "retriever_options", *RETRIEVER_ONLY}
SAMPLE: dict[str, Any] = {
    "text": "other",
    "file": Path("elsewhere.db"),
    "folder": Path("models"),
    "gate": "significant",
    "lexical": "porter",
    "slice_by": "folder",
    "pin": "release-2",
    "fraction": 0.2,
    "level": 0.01,
    "whole": 3,
    "count": 4,
    "several": 3,
    "integer": -2,
    "number": 2.5,
    "seconds": 1.5,
    "port": 8080,
    "texts": ("a", "b"),
    "path": Path("somewhere"),
    "family": "convex",
    "normalizer": "zscore",
}


def test_every_kind_has_a_sample() -> None:
    """A setting of any kind can be added without touching these tests."""
    from groove.settings.kinds import KINDS

    assert set(KINDS) - {"bool", "k_list", "mapping"} <= set(SAMPLE)
    assert set(KINDS) - {"integer", "port", "seconds", "mapping"} <= set(TOML_SAMPLE)


def _sample(setting: Setting) -> Any:
    if setting.kind == "bool":
        return not setting.default if setting.default is not None else True
    return SAMPLE[setting.kind]


def test_every_eval_setting_reaches_the_run(tmp_path: Path) -> None:
    """Each EVAL setting is read from the resolved settings by name (``settings[name]``):
    its field when it has one, else the value as resolved; a field named as a setting
    defaults to the declared default."""
    given = {name: _sample(EVAL[name]) for name in EVAL if name in SETTABLE}
    settings = eval_settings(Config(), kb_path=tmp_path, **given)
    for name, value in given.items():
        assert settings[name] == value, name
    with pytest.raises(KeyError, match="EVAL declares no setting 'depth'"):
        settings["depth"]
    for f in fields(EvalSettings):
        # save_history: the API's keyword is off by default, a run built directly saves
        if f.name in set(EVAL) - {"save_history"} and EVAL[f.name].default is not None:
            assert f.default == EVAL[f.name].default, f.name


#: EVAL settings whose value is read as given (not changed by a rule, nor turned into a
#: spec or a path by eval's own resolution).
SETTABLE = set(EVAL) - EVAL_OWN_RULES - EVAL_FOLDED - {"baseline_file", "config"} | {
    "mmr",
    "lexical",
}


def test_every_tune_setting_reaches_the_run(tmp_path: Path) -> None:
    """As eval's: each TUNE setting of groove's own engine is read from the resolved
    settings by name, its field when it has one, else the value as resolved (a
    retriever's settings are refused without one: refuse_without_retriever)."""
    given = {name: _sample(TUNE[name]) for name in TUNE if name in TUNE_SETTABLE}
    assert {"golden", "tune_json"} <= set(given) - {f.name for f in fields(TuneSettings)}
    settings = tune_settings(Config(), kb_path=tmp_path, **given)
    for name, value in given.items():
        assert settings[name] == value, name
    with pytest.raises(KeyError, match="TUNE declares no setting 'candidate_pool'"):
        settings["candidate_pool"]
    for f in fields(TuneSettings):
        if f.name in TUNE and TUNE[f.name].default is not None:
            assert f.default == TUNE[f.name].default, f.name


def test_a_new_tune_setting_needs_its_declaration_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import groove.tuning.settings as tune_module

    probe = Setting("probe", "count", "A test setting.", default=3)
    table = {**TUNE, "probe": probe}
    monkeypatch.setattr(tune_module, "TUNE", table)
    monkeypatch.setattr(TuneSettings, "TABLE", table)
    assert tune_settings(Config(), kb_path=tmp_path)["probe"] == 3
    assert tune_settings(Config(), kb_path=tmp_path, probe=7)["probe"] == 7


#: TUNE settings of groove's own engine whose value is read as given (not changed by a
#: rule, nor turned into a path by tune's own resolution; ``config`` is the file the face
#: loads).
TUNE_SETTABLE = set(TUNE) - {"kb_path", "k_values", "limit", "config"} - TUNE_EXTERNAL


def test_a_setting_named_as_a_field_is_copied_into_the_eval_settings(tmp_path: Path) -> None:
    copied = {f.name for f in fields(EvalSettings)} & set(EVAL) - EVAL_OWN_RULES
    assert copied  # db_path, model, history, diff, baseline, ...
    given = {name: _sample(EVAL[name]) for name in copied}
    settings = eval_settings(Config(), kb_path=tmp_path, **given)
    assert {name: getattr(settings, name) for name in copied} == given


def test_a_setting_named_as_a_field_is_copied_into_the_tune_settings(tmp_path: Path) -> None:
    copied = {f.name for f in fields(TuneSettings)} & set(TUNE) - {"kb_path", "k_values", "limit"}
    assert copied
    given = {name: _sample(TUNE[name]) for name in copied}
    settings = tune_settings(Config(), kb_path=tmp_path, **given)
    assert {name: getattr(settings, name) for name in copied} == given


# ---------------------------------------------------------------- what each face hands over


class _Reached(Exception):
    def __init__(self, given: Mapping[str, Any]) -> None:
        super().__init__("reached the resolver")
        self.given = dict(given)


def _probe(*_args: Any, **given: Any) -> Any:
    raise _Reached(given)


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.chdir(tmp_path)  # no groove.toml of the repository is found
    monkeypatch.setattr("groove.evaluation.settings.resolve_settings", _probe)
    monkeypatch.setattr("groove.tuning.settings.resolve_settings", _probe)
    return tmp_path


def _names(call: Any) -> set[str]:
    with pytest.raises(_Reached) as info:
        call()
    return set(info.value.given) - {"source", "face"}  # who asks, not what is set


def test_evaluate_hands_every_keyword_to_the_resolver(probe: Path) -> None:
    names = _names(lambda: groove.evaluate(probe))
    assert names == set(on(EVAL, "api")) - {"config"}


def test_tune_hands_every_keyword_to_the_resolver(probe: Path) -> None:
    names = _names(lambda: groove.tune(probe))
    assert names == set(on(TUNE, "api")) - {"config"}


def test_the_eval_report_hands_every_parameter_to_the_resolver(probe: Path) -> None:
    names = _names(lambda: kernel.eval_report(kb_path=probe, result_path=probe / "r.json"))
    assert names == set(on(EVAL, "notebook")) - {"config"}


def test_the_tune_explorer_hands_every_parameter_to_the_resolver(probe: Path) -> None:
    names = _names(lambda: kernel.tune_explorer(kb_path=probe, result_path=probe / "r.json"))
    assert names == set(on(TUNE, "notebook")) - {"config", "tune_json"}


@pytest.mark.parametrize(
    ("command", "table", "own"),
    [("eval", EVAL, EVAL_CLI_OWN), ("tune", TUNE, set())],
)
def test_the_cli_hands_every_option_to_the_resolver(
    probe: Path, command: str, table: Mapping[str, Setting], own: set[str]
) -> None:
    result = CliRunner().invoke(cli, [command, "--kb-path", str(probe)])
    assert isinstance(result.exception, _Reached), result.output
    given = set(result.exception.given) - {"face"}  # who asks, not what is set
    assert given == set(on(table, "cli")) - {"config"} - own


@pytest.mark.parametrize(
    ("notebook", "function"),
    [
        ("eval_report.ipynb", "kernel.eval_report"),
        ("tune_explorer.ipynb", "kernel.tune_explorer"),
        ("judge.ipynb", "judge.open_view"),
    ],
)
def test_the_run_cell_forwards_every_parameter(notebook: str, function: str) -> None:
    """The notebook's run cell passes on every parameter the cells assigned (``assigned``
    over its function's parameters, which are the table's): none is listed by hand."""
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    module, name = function.split(".")
    call = f"{name}(**{'cells' if module == 'judge' else 'notebook_run'}.assigned("
    (source,) = ["".join(c["source"]) for c in cells if call in "".join(c["source"])]
    assert (
        f"assigned({'judge' if module == 'judge' else 'notebook_run'}.{name}, globals())" in source
    )


def test_a_new_setting_is_a_keyword_and_a_parameter_by_its_declaration_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a new eval setting gets without a second declaration: the API keyword and the
    notebook parameter (in the run cell's signature, the parameters cell groove writes and
    the names -p accepts), each with its type and face default."""
    import inspect

    from groove.notebooks import cells, runner
    from groove.settings.signatures import offered

    probe = Setting("probe", "count", "A test setting. More words.", flag="--probe")
    table = {**EVAL, "probe": probe}
    monkeypatch.setitem(cells.TABLES, "eval-report", table)
    keyword = offered(inspect.signature(groove.evaluate), table, "api").parameters["probe"]
    assert (keyword.kind, keyword.default, keyword.annotation) == (
        inspect.Parameter.KEYWORD_ONLY,
        None,
        "int | None",
    )
    source = ROOT / "notebooks" / "eval_report.ipynb"
    assert runner.allowed_parameters(source, "eval-report")[-1] == "probe"
    completed = runner.read_notebook(source, "eval-report")
    (cell,) = [c.source for c in completed.cells if "parameters" in c.metadata.get("tags", [])]
    assert cell.endswith("\nprobe = None  # A test setting")


def test_a_key_no_section_has_a_field_for_is_read_through_its_declaration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new groove.toml key needs its declaration only: Config keeps its value by key."""
    import groove.config as config_module

    probe = Setting("probe", "count", "A test key.", config_key="eval.probe", default=2)
    monkeypatch.setattr(config_module, "GROOVE_TOML", {**GROOVE_TOML, "eval.probe": probe})
    monkeypatch.setattr(config_module, "_SECTIONS", config_module._sections())
    config = parse_config("[eval]\nprobe = 7\n", tmp_path / "groove.toml")
    assert (config.value("eval.probe"), Config().value("eval.probe")) == (7, 2)
    assert resolve({"probe": probe}, config, {})["probe"] == 7
    with pytest.raises(
        ConfigError, match=r"eval\.probe = -1: must be a whole number from 0 or more$"
    ):
        parse_config("[eval]\nprobe = -1\n", tmp_path / "groove.toml")


def test_a_refused_value_carries_the_setting_what_it_takes_and_what_it_got() -> None:
    """The error is data (the setting, what it takes, what it got); each face words it."""
    with pytest.raises(ConfigError) as info:
        EVAL["limit"].parse("ten")
    refused = info.value
    assert (refused.setting, refused.expected, refused.given) == (
        "limit",
        "a whole number >= 1",
        "ten",
    )
    assert spelled(refused, "api") == (
        "keyword limit must be a whole number >= 1, got 'ten'",
        "pass limit= as a whole number >= 1, or leave it out",
    )
    assert spelled(refused, "notebook") == (
        "parameter limit must be a whole number >= 1, got 'ten'",
        "pass it like -p limit VALUE",
    )
    assert spelled(refused, "cli") == (
        "--limit must be a whole number >= 1, got 'ten'",
        "pass it like --limit VALUE",
    )
    with pytest.raises(ConfigError) as braces:
        EVAL["limit"].parse("{x}")
    assert spelled(braces.value, "notebook")[0] == (
        "parameter limit must be a whole number >= 1, got '{x}'"
    )
    assert braces.value.given == "{x}"
    with pytest.raises(ConfigError) as over:
        at_most("limit", LIMIT_MAX + 1)
    assert (over.value.setting, over.value.given) == ("limit", LIMIT_MAX + 1)
    assert over.value.expected == f"at most {LIMIT_MAX}"
    with pytest.raises(ConfigError) as k:
        parse_k_list("0,5")
    assert (k.value.setting, k.value.expected, k.value.given) == (
        "k_values",
        "a list of whole numbers >= 1",
        "0,5",
    )
