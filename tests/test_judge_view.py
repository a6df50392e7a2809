"""The judging view (groove.judge): keys, saving at once, resuming, apply and eval.

The widgets are built in-process (no browser); the live JupyterLab check with a real
browser is bench/judge_live.py. Real engine and model on the fixture KB.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

import groove
from groove.errors import NotebookError
from groove.golden.judgements import judgements_path, load_judgements
from groove.notebooks import judge as judge_module
from groove.settings import JUDGE, on

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def kb(indexed_kb) -> Path:  # type: ignore[no-untyped-def]
    return indexed_kb("kb_en")


@pytest.fixture
def golden(tmp_path: Path, golden_en: Path) -> Path:
    path = tmp_path / "golden.yml"
    shutil.copy(golden_en, path)
    return path


def test_keys_save_each_verdict_at_once_and_a_new_view_resumes(kb: Path, golden: Path) -> None:
    groove.evaluate(kb, golden, save_history=True)
    view = groove.judge(kb, golden, depth=3, by="ann")
    total = view.total
    # three candidates of different files (a verdict on a file's lead text covers the file)
    first = view.queue[0]
    second = next(c for c in view.queue if (c.query_id, c.path) != (first.query_id, first.path))
    third = next(
        c
        for c in view.queue
        if (c.query_id, c.path) not in {(x.query_id, x.path) for x in (first, second)}
    )
    view.keys.value = "r"
    assert view.keys.value == ""  # the key box empties itself
    saved = load_judgements(judgements_path(golden))
    assert [(j.path, j.relevant, j.by) for j in saved.items] == [(first.path, True, "ann")]
    while view.current != second:  # skip to the second (skips go to the back of the queue)
        view.keys.value = "s"
    view.note.value = "wrong service"
    view.keys.value = "n"
    while view.current != third:
        view.keys.value = "s"
    assert f"{view.done} of {total} judged" in view.status.value
    view.keys.value = "s"
    assert view.queue[-1] == third and "skipped" in view.status.value
    items = load_judgements(judgements_path(golden)).items
    assert [(j.path, j.relevant, j.note) for j in items][-1] == (
        second.path,
        False,
        "wrong service",
    )
    again = groove.judge(kb, golden, depth=3)
    assert again.done == view.done and again.total == total
    assert third in again.queue and first not in again.queue and second not in again.queue
    assert again.current == third or again.current.priority >= third.priority
    assert again.current == again.queue[0] == min(again.queue, key=lambda c: -c.priority)


def test_apply_and_run_eval_buttons(kb: Path, golden: Path) -> None:
    groove.evaluate(kb, golden, save_history=True)
    view = groove.judge(kb, golden, depth=2, by="ann")
    view.keys.value = "r"
    view.apply()
    assert "added 1 expected entry to 1 query" in view.log.value
    view.run_eval()
    assert "golden changed since last run, diff disabled" in view.log.value
    assert "judged@10" in view.log.value


def test_without_ipywidgets_the_view_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, kb: Path, golden: Path
) -> None:
    real = judge_module.importlib.util.find_spec
    monkeypatch.setattr(
        judge_module.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ipywidgets" else real(name, *a),
    )
    with pytest.raises(NotebookError) as caught:
        groove.judge(kb, golden)
    assert caught.value.message == "the judging view needs ipywidgets in this kernel"
    assert "[lab]" in (caught.value.hint or "") and "groove[lab]" not in (caught.value.hint or "")


def test_without_the_front_end_the_plain_text_says_so(kb: Path, golden: Path) -> None:
    view = groove.judge(kb, golden, depth=1)
    bundle = view.widget._repr_mimebundle_()
    assert bundle["text/plain"] == judge_module.NO_FRONT_END
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_the_notebook_has_no_logic_and_its_parameters_are_the_declared_settings() -> None:
    cells = json.loads((ROOT / "notebooks" / "judge.ipynb").read_text())["cells"]
    (params,) = [c for c in cells if "parameters" in c["metadata"].get("tags", [])]
    tree = ast.parse("".join(params["source"]))
    values = {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body}  # type: ignore[attr-defined]
    assert set(values) <= set(on(JUDGE, "notebook"))  # groove adds the ones it lacks
    for name, value in values.items():
        assert value == JUDGE[name].face_default, name
    code = [c for c in cells if c["cell_type"] == "code" and c is not params]
    assert len(code) == 1
    *imports, call = ast.parse("".join(code[0]["source"])).body
    assert all(isinstance(node, ast.ImportFrom) for node in imports)
    assert isinstance(call, ast.Expr) and ast.unparse(call) == (
        "judge.open_view(**cells.assigned(judge.open_view, globals()))"
    )  # one call, handing over every parameter the cells assigned
    import inspect

    assert sorted(inspect.signature(judge_module.open_view).parameters) == sorted(
        on(JUDGE, "notebook")
    )
