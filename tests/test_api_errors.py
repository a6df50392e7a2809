"""Every entry point of the API raises only GrooveError subclasses on bad input (docs/api.md).

Each function of ``groove.__all__`` is called with inputs of the wrong kind, out of range or
naming nothing; all must be refused with a GrooveError that says what to pass, before any
model or index is opened (none exists here). A new entry point must add its cases.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import groove

BAD_CALLS: dict[str, list[Callable[[], Any]]] = {
    "index": [
        lambda: groove.index(None),
        lambda: groove.index(123),
        lambda: groove.index("kb", force="yes"),
        lambda: groove.index("kb", progress=1),
        lambda: groove.index("kb", config=5),
        lambda: groove.index("missing"),
    ],
    "search": [
        lambda: groove.search(None, "kb"),  # type: ignore[arg-type]
        lambda: groove.search(123, "kb"),  # type: ignore[arg-type]
        lambda: groove.search("q", 5),
        lambda: groove.search("q", "kb", limit=0),
        lambda: groove.search("q", "kb", limit=10_001),
        lambda: groove.search("q", "kb", mmr_lambda=2),
        lambda: groove.search("q", "kb", lexical="nope"),  # type: ignore[arg-type]
    ],
    "evaluate": [
        lambda: groove.evaluate(5),
        lambda: groove.evaluate("kb", 5),
        lambda: groove.evaluate("kb", "missing.yml"),
        lambda: groove.evaluate("kb", k_values="1,x"),  # type: ignore[arg-type]
        lambda: groove.evaluate("kb", k_values=[10_001]),
        lambda: groove.evaluate("kb", regression_gate="loud"),
        lambda: groove.evaluate(None, retriever="nope:x"),
        lambda: groove.evaluate("kb", progress=5),  # type: ignore[arg-type]
    ],
    "load_history": [
        lambda: groove.load_history(None),  # type: ignore[arg-type]
        lambda: groove.load_history(5),  # type: ignore[arg-type]
    ],
    "tune": [
        lambda: groove.tune(5),
        lambda: groove.tune("kb", "g.yml", progress=5),  # type: ignore[arg-type]
        lambda: groove.tune("kb", "g.yml", on_note="print"),  # type: ignore[arg-type]
        lambda: groove.tune("kb", limit=-1),
    ],
    "save_tune": [
        lambda: groove.save_tune(None, "x.json"),  # type: ignore[arg-type]
        lambda: groove.save_tune(5, "x.json"),  # type: ignore[arg-type]
    ],
    "load_tune": [
        lambda: groove.load_tune(None),  # type: ignore[arg-type]
        lambda: groove.load_tune(5),  # type: ignore[arg-type]
        lambda: groove.load_tune("missing.json"),
        lambda: groove.load_tune("list.json"),
    ],
    "compare": [
        lambda: groove.compare([]),
        lambda: groove.compare(None),  # type: ignore[arg-type]
        lambda: groove.compare("run.json"),
        lambda: groove.compare([5]),
        lambda: groove.compare([{}]),
        lambda: groove.compare(["missing.json"]),
        lambda: groove.compare(["list.json"]),
        lambda: groove.compare(["run.json"], baseline=3),
        lambda: groove.compare(["run.json"], baseline=1.5),  # type: ignore[arg-type]
        lambda: groove.compare(["run.json"], baseline="1999"),
        lambda: groove.compare(["run.json"], alpha=2),
        lambda: groove.compare(["run.json"], progress=5),  # type: ignore[arg-type]
    ],
    "set_baseline": [
        lambda: groove.set_baseline(5, "main"),
        lambda: groove.set_baseline("missing", "main"),
        lambda: groove.set_baseline("kb", "main"),  # no history: nothing to pin
        lambda: groove.set_baseline("kb", 5),  # type: ignore[arg-type]
    ],
    "accept_baseline": [
        lambda: groove.accept_baseline(None),
        lambda: groove.accept_baseline("kb"),
        lambda: groove.accept_baseline("kb", 5),  # type: ignore[arg-type]
    ],
    "unset_baseline": [
        lambda: groove.unset_baseline(5, "main"),
        lambda: groove.unset_baseline("kb", "main"),
    ],
    "golden_doctor": [
        lambda: groove.golden_doctor(None),
        lambda: groove.golden_doctor(123),  # type: ignore[arg-type]
        lambda: groove.golden_doctor("kb", apply="yes"),  # type: ignore[arg-type]
        lambda: groove.golden_doctor("kb", accept_likely=True),  # likely needs apply
        lambda: groove.golden_doctor("missing"),
    ],
    "pool": [
        lambda: groove.pool(5),
        lambda: groove.pool("kb", "missing.yml"),
        lambda: groove.pool("kb", "g.yml", depth=0),
        lambda: groove.pool("kb", "g.yml", depth=10_001),
        lambda: groove.pool("kb", "g.yml", history=False),  # no source at all
        lambda: groove.pool("kb", "g.yml", runs=5),  # type: ignore[arg-type]
        lambda: groove.pool("kb", "g.yml", retriever="nope:x"),
    ],
    "judge": [
        lambda: groove.judge(5),
        lambda: groove.judge("kb", "g.yml", depth=10_001),
        lambda: groove.judge("kb", "g.yml", by=5),  # type: ignore[arg-type]
    ],
}


def test_every_entry_point_has_bad_calls() -> None:
    functions = {name for name in groove.__all__ if inspect.isfunction(getattr(groove, name))}
    assert functions == set(BAD_CALLS)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # relative names above resolve here; no groove.toml found
    (tmp_path / "kb").mkdir()
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    (tmp_path / "g.yml").write_text('queries:\n  - query: "q"\n    expected: [a.md]\n', "utf-8")
    from helpers.history_jobs import make_record

    run = make_record(1).to_dict()  # a saved run, as the history writes it
    (tmp_path / "run.json").write_text(json.dumps(run), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("name", "index"),
    [(name, i) for name, calls in BAD_CALLS.items() for i in range(len(calls))],
)
def test_bad_input_is_a_groove_error_with_a_hint(folder: Path, name: str, index: int) -> None:
    with pytest.raises(groove.GrooveError) as info:
        BAD_CALLS[name][index]()
    error = info.value
    assert error.message and "\n" not in error.message
    assert "--" not in error.message, error.message  # the API names keywords, not flags
