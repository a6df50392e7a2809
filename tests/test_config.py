"""groove.toml: discovery, defaults, relative paths, and every validation message."""

from __future__ import annotations

from pathlib import Path

import pytest

from groove.config import (
    Config,
    FusionConfig,
    MmrConfig,
    ParentRetrieverConfig,
    SearchConfig,
    find_config,
    load_config,
    parse_config,
)
from groove.errors import ConfigError
from groove.settings import parse_k_list
from groove.settings.spelling import spelled

SRC = Path("/proj/groove.toml")
FIX = "fix the value in groove.toml, or delete the line to use the default"
TOP_KEYS = (
    "contextual, eval, exclude_dirs, exclude_headings, kb_path, model, model_path, reranker, search"
)


def _error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(text, SRC)
    return info.value


# ---------------------------------------------------------------- values that load


def test_an_empty_file_gives_the_built_in_defaults() -> None:
    assert parse_config("", SRC) == Config(source=SRC)
    defaults = Config()
    assert defaults.search.fusion == FusionConfig(60.0, 2.0, 1.0, 1.0)
    assert defaults.search.fusion.weights == (2.0, 1.0, 1.0)
    assert defaults.search.mmr == MmrConfig(False, 0.7, 0.0)
    assert defaults.search.parent_retriever == ParentRetrieverConfig(False, 100, 2000)
    assert defaults.values == ()
    eval_keys = ("eval.golden", "eval.history_size", "eval.k_values", "eval.regression_threshold")
    assert [defaults.value(key) for key in eval_keys] == [None, 10, (1, 5, 10), 0.05]
    assert defaults.contextual is False
    assert defaults.exclude_dirs is None
    assert defaults.exclude_headings == ()


def test_every_section_is_read() -> None:
    cfg = parse_config(
        """
kb_path = "notes"
model = "bge-small-en-v1.5"
model_path = "~/models/x"
reranker = "bge-base"
exclude_headings = ["Changelog"]
exclude_dirs = ["archive"]

[contextual]
enabled = true

[search.fusion]
rrf_k = 30
bm25_heading_weight = 4.0
bm25_context_weight = 0
bm25_content_weight = 0.5

[search.mmr]
enabled = true
lambda = 0.5
same_doc_penalty = 0.25

[search.parent_retriever]
enabled = true
whole_doc_threshold_tokens = 50
max_expanded_tokens = 8192

[eval]
golden = "golden/set.yml"
history_size = 3
k_values = [1, 3]
regression_threshold = 0.1
""",
        SRC,
    )
    assert cfg == Config(
        source=SRC,
        kb_path=Path("/proj/notes"),
        model="bge-small-en-v1.5",
        model_path=Path("/proj") / Path("~/models/x").expanduser(),
        reranker="bge-base",
        exclude_headings=("Changelog",),
        exclude_dirs=("archive",),
        contextual=True,
        search=SearchConfig(
            fusion=FusionConfig(30.0, 4.0, 0.0, 0.5),
            mmr=MmrConfig(True, 0.5, 0.25),
            parent_retriever=ParentRetrieverConfig(True, 50, 8192),
        ),
        values=(
            ("eval.golden", Path("/proj/golden/set.yml")),
            ("eval.history_size", 3),
            ("eval.k_values", (1, 3)),
            ("eval.regression_threshold", 0.1),
        ),
    )
    assert cfg.search.fusion.is_default is False


def test_absolute_paths_stay_absolute() -> None:
    cfg = parse_config('kb_path = "/data/kb"\n[eval]\ngolden = "/data/g.yml"', SRC)
    assert cfg.kb_path == Path("/data/kb")
    assert cfg.value("eval.golden") == Path("/data/g.yml")


# ---------------------------------------------------------------- validation messages


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('kb_path = ""', 'kb_path = "": must be a non-empty string'),
        ("model = 3", "model = 3: must be a non-empty string"),
        ('reranker = "  "', 'reranker = "  ": must be a non-empty string'),
        ('model_path = ["a"]', 'model_path = ["a"]: must be a non-empty string'),
        ('exclude_headings = "x"', 'exclude_headings = "x": must be a list of non-empty strings'),
        (
            'exclude_dirs = ["a", ""]',
            'exclude_dirs = ["a", ""]: must be a list of non-empty strings',
        ),
        ("contextual = true", "contextual = true: must be a table ([contextual])"),
        ('[contextual]\nenabled = "yes"', 'contextual.enabled = "yes": must be true or false'),
        ("search = 3", "search = 3: must be a table ([search])"),
        ("[search]\nfusion = 1", "search.fusion = 1: must be a table ([search.fusion])"),
        (
            "[search.fusion]\nrrf_k = 0.5",
            "search.fusion.rrf_k = 0.5: must be between 1 and 1000000",
        ),
        (
            "[search.fusion]\nrrf_k = 1e7",
            "search.fusion.rrf_k = 10000000.0: must be between 1 and 1000000",
        ),
        (
            "[search.fusion]\nrrf_k = nan",
            "search.fusion.rrf_k = nan: must be between 1 and 1000000",
        ),
        (
            "[search.fusion]\nrrf_k = inf",
            "search.fusion.rrf_k = inf: must be between 1 and 1000000",
        ),
        ('[search.fusion]\nrrf_k = "60"', 'search.fusion.rrf_k = "60": must be a number'),
        ("[search.fusion]\nrrf_k = true", "search.fusion.rrf_k = true: must be a number"),
        (
            "[search.fusion]\nbm25_heading_weight = -0.5",
            "search.fusion.bm25_heading_weight = -0.5: must be between 0 and 1000000",
        ),
        (
            "[search.fusion]\nbm25_context_weight = 2e6",
            "search.fusion.bm25_context_weight = 2000000.0: must be between 0 and 1000000",
        ),
        (
            "[search.fusion]\nbm25_content_weight = [1]",
            "search.fusion.bm25_content_weight = [1]: must be a number",
        ),
        (
            "[search.fusion]\nbm25_heading_weight = 0\nbm25_context_weight = 0\n"
            "bm25_content_weight = 0.0",
            "[search.fusion] the three bm25 weights cannot all be zero",
        ),
        ("[search.mmr]\nenabled = 1", "search.mmr.enabled = 1: must be true or false"),
        ("[search.mmr]\nlambda = 1.5", "search.mmr.lambda = 1.5: must be between 0 and 1"),
        (
            "[search.mmr]\nsame_doc_penalty = -0.1",
            "search.mmr.same_doc_penalty = -0.1: must be between 0 and 1",
        ),
        (
            "[search.parent_retriever]\nenabled = 'on'",
            'search.parent_retriever.enabled = "on": must be true or false',
        ),
        (
            "[search.parent_retriever]\nwhole_doc_threshold_tokens = 1.5",
            "search.parent_retriever.whole_doc_threshold_tokens = 1.5: "
            "must be a whole number from 0 to 8191",
        ),
        (
            "[search.parent_retriever]\nmax_expanded_tokens = 8193",
            "search.parent_retriever.max_expanded_tokens = 8193: "
            "must be a whole number from 1 to 8192",
        ),
        (
            "[search.parent_retriever]\nmax_expanded_tokens = 100",
            "[search.parent_retriever] max_expanded_tokens (100) must be above "
            "whole_doc_threshold_tokens (100)",
        ),
        (
            "[search.parent_retriever]\nwhole_doc_threshold_tokens = 3000",
            "[search.parent_retriever] max_expanded_tokens (2000) must be above "
            "whole_doc_threshold_tokens (3000)",
        ),
        ("eval = []", "eval = []: must be a table ([eval])"),
        ('[eval]\ngolden = ""', 'eval.golden = "": must be a non-empty string'),
        (
            "[eval]\nhistory_size = 0",
            "eval.history_size = 0: must be a whole number from 1 to 10000",
        ),
        (
            "[eval]\nk_values = []",
            "eval.k_values = []: must be a non-empty list of whole numbers from 1 to 10000",
        ),
        (
            "[eval]\nk_values = [1, 0]",
            "eval.k_values = [1, 0]: must be a non-empty list of whole numbers from 1 to 10000",
        ),
        (
            '[eval]\nk_values = "1,5"',
            'eval.k_values = "1,5": must be a non-empty list of whole numbers from 1 to 10000',
        ),
        (
            "[eval]\nk_values = [5, 10001]",
            "eval.k_values = [5, 10001]: must be a non-empty list of whole numbers from 1 to 10000",
        ),
        (
            "[eval]\nk_values = [true]",
            "eval.k_values = [true]: must be a non-empty list of whole numbers from 1 to 10000",
        ),
        (
            "[eval]\nregression_threshold = 1.5",
            "eval.regression_threshold = 1.5: must be between 0 and 1",
        ),
    ],
)
def test_bad_values_name_the_file_the_key_and_the_rule(text: str, message: str) -> None:
    error = _error(text)
    assert error.message == f"invalid {SRC}: {message}"
    assert error.hint == FIX


@pytest.mark.parametrize(
    ("text", "key", "allowed"),
    [
        ("kbpath = 'x'", "kbpath", TOP_KEYS),
        ("[contextual]\nenable = true", "contextual.enable", "enabled"),
        ("[search]\nlimit = 3", "search.limit", "fusion, lexical, mmr, parent_retriever"),
        # read by the Rust tool for its own search; groove never used it
        (
            "[search]\nmin_confidence_ratio = 2",
            "search.min_confidence_ratio",
            "fusion, lexical, mmr, parent_retriever",
        ),
        (
            "[search.fusion]\nrrfk = 3",
            "search.fusion.rrfk",
            "bm25_content_weight, bm25_context_weight, bm25_heading_weight, family, "
            "normalizer, rrf_k, vector_weight, window",
        ),
        ("[search.mmr]\nlambda_ = 0.5", "search.mmr.lambda_", "enabled, lambda, same_doc_penalty"),
        (
            "[search.parent_retriever]\nthreshold = 3",
            "search.parent_retriever.threshold",
            "enabled, max_expanded_tokens, whole_doc_threshold_tokens",
        ),
        (
            "[eval.extra]\nx = 1",
            "eval.extra",
            "alpha, baseline, baseline_file, gate_slices, golden, history_size, judge, "
            "k_values, regression_gate, regression_threshold, require_baseline, slice_by, "
            "slice_min_queries",
        ),
        ("[quality_filter]\nenabled = true", "quality_filter", TOP_KEYS),
    ],
)
def test_unknown_keys_are_errors_with_the_allowed_list(text: str, key: str, allowed: str) -> None:
    """The hint lists every key the section declares (groove.settings.GROOVE_TOML), sorted:
    the ones written here, and any a later setting adds."""
    from groove.config import _SECTIONS

    error = _error(text)
    assert error.message == f"invalid {SRC}: unknown key {key}"
    listed = ", ".join(sorted(_SECTIONS[key.rpartition(".")[0]]))
    assert error.hint == f"check the spelling; allowed here: {listed}"
    assert set(allowed.split(", ")) <= set(listed.split(", "))


def test_invalid_toml() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("a = ", SRC)
    assert info.value.message == f"invalid TOML in {SRC}: Invalid value (at end of document)"
    assert info.value.hint == "check the file's syntax"


def test_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "groove.toml"
    path.write_bytes(b"kb_path = '\xff'\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.message == f"{path} is not UTF-8 text"
    assert info.value.hint == "save groove.toml as UTF-8"


# ---------------------------------------------------------------- discovery


def _write(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_explicit_path_wins_and_must_exist(tmp_path: Path) -> None:
    chosen = _write(tmp_path / "other.toml")
    _write(tmp_path / "groove.toml")
    assert find_config(chosen, cwd=tmp_path) == chosen
    missing = tmp_path / "missing.toml"
    with pytest.raises(ConfigError) as info:
        find_config(missing, cwd=tmp_path)
    message, hint = spelled(info.value, "api")  # the API's words
    assert message == f"config file not found: {missing}"
    assert hint == "pass an existing file to config="
    assert spelled(info.value, "cli")[1] == "pass an existing file to --config"


def test_explicit_path_expands_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    chosen = _write(tmp_path / "g.toml")
    assert find_config(Path("~/g.toml")) == chosen


def test_the_working_folder_comes_first(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    _write(tmp_path / "groove.toml")
    here = _write(tmp_path / "sub" / "groove.toml")
    assert find_config(cwd=tmp_path / "sub") == here


def test_the_nearest_git_root_is_searched(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    found = _write(tmp_path / "repo" / "groove.toml")
    deep = tmp_path / "repo" / "a" / "b"
    deep.mkdir(parents=True)
    assert find_config(cwd=deep) == found


def test_the_search_stops_at_the_nearest_git_root(tmp_path: Path) -> None:
    _write(tmp_path / "groove.toml")
    (tmp_path / ".git").mkdir()
    (tmp_path / "inner" / ".git").mkdir(parents=True)
    assert find_config(cwd=tmp_path / "inner") is None


def test_no_git_root_means_defaults(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    assert find_config(cwd=tmp_path / "a") is None
    assert load_config(cwd=tmp_path / "a") == Config()


def test_git_roots_more_than_nineteen_parents_up_are_not_searched(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    found = _write(tmp_path / "groove.toml")
    nineteen = tmp_path.joinpath(*[f"d{i}" for i in range(19)])
    nineteen.mkdir(parents=True)
    assert find_config(cwd=nineteen) == found
    twenty = nineteen / "d19"
    twenty.mkdir()
    assert find_config(cwd=twenty) is None


def test_load_config_reads_the_discovered_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "groove.toml", 'kb_path = "kb"\n[search.fusion]\nrrf_k = 10\n')
    cfg = load_config(cwd=tmp_path)
    assert cfg.source == path
    assert cfg.kb_path == tmp_path / "kb"
    assert cfg.search.fusion.rrf_k == 10.0


# ---------------------------------------------------------------- --k


def test_parse_k_list() -> None:
    assert parse_k_list("1,5,10") == (1, 5, 10)
    assert parse_k_list(" 3 , 7 ,") == (3, 7)
    for bad in ("", "0,5", "a", "1;5"):
        with pytest.raises(ConfigError) as info:
            parse_k_list(bad)
        message, hint = spelled(info.value, "api")  # the API's words
        assert message == f"keyword k_values {bad!r} is not a list of whole numbers >= 1"
        assert hint == "write it like k_values=1,5,10"
        assert spelled(info.value, "cli") == (
            f"--k {bad!r} is not a list of whole numbers >= 1",
            "write it like --k 1,5,10",
        )
