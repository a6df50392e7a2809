"""An error is data until a face words it (groove.errors, groove.settings.spelling).

The same refusal, raised deep inside the library (``check_kb_path`` in groove.engine.session:
no kb_path given and none in groove.toml), is caught at each face's boundary and read there
in that face's words: the CLI's ``print_error``, the API's public functions, the notebook
kernel's ``_refused`` (its status cell and result.json); ``serve``'s answer is read the same
way in tests/test_serve.py (``"limit" 10001 exceeds ...``). The wording is one pure function
of (error, face): nothing is installed at import and nothing is remembered between faces.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import groove
from groove import errors
from groove.cli import cli
from groove.engine.session import check_kb_path
from groove.errors import KnowledgeBaseError
from groove.notebooks import kernel
from groove.settings.spelling import spelled

REQUIRED = {
    "cli": (
        "--kb-path is required",
        "pass --kb-path on the command line or set kb_path in groove.toml",
    ),
    "api": (
        "keyword kb_path is required",
        "pass kb_path= to the call or set kb_path in groove.toml",
    ),
    "notebook": (
        "parameter kb_path is required",
        "pass -p kb_path PATH to the run or set kb_path in groove.toml",
    ),
    "serve": (
        '"kb_path" is required',
        'pass "kb_path" in the request or set kb_path in groove.toml',
    ),
}


@pytest.fixture
def golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no groove.toml here: kb_path comes from nowhere
    path = tmp_path / "g.yml"
    path.write_text('queries:\n  - query: "q"\n    expected: [a.md]\n', encoding="utf-8")
    return path


def test_inside_the_library_the_error_is_data_not_words() -> None:
    with pytest.raises(KnowledgeBaseError) as info:
        check_kb_path(None)
    error = info.value
    assert (error.setting, error.template) == ("kb_path", "{setting} is required")
    assert error.message == error.template  # no face has worded it yet
    assert {face: spelled(error, face) for face in REQUIRED} == REQUIRED
    assert error.message == error.template  # wording is pure: the error is as it was


def test_the_cli_words_it_as_flags(golden: Path) -> None:
    result = CliRunner().invoke(cli, ["eval", "--golden", str(golden)])
    assert result.exit_code == 2
    message, hint = REQUIRED["cli"]
    assert result.stderr == f"Error: {message}\nhint: {hint}\n"


def test_the_api_words_it_as_keywords(golden: Path) -> None:
    with pytest.raises(KnowledgeBaseError) as info:
        groove.evaluate(None, golden)
    assert (info.value.message, info.value.hint) == REQUIRED["api"]
    assert str(info.value) == REQUIRED["api"][0]
    # the data stays beside the words: another face can still word the same error
    assert spelled(info.value, "cli") == REQUIRED["cli"]


def test_the_notebook_words_it_as_parameters(golden: Path, tmp_path: Path) -> None:
    result = tmp_path / "result.json"
    outcome = kernel.eval_report(golden=str(golden), result_path=str(result))
    assert outcome.exit_code == 2 and outcome.error is not None
    assert (outcome.error.message, outcome.error.hint) == REQUIRED["notebook"]
    document = json.loads(result.read_text(encoding="utf-8"))
    assert (document["error"], document["hint"]) == REQUIRED["notebook"]


def test_one_face_after_another_each_reads_its_own_words(golden: Path) -> None:
    """No face is installed: the CLI run in between leaves the API's words as they were."""
    CliRunner().invoke(cli, ["eval", "--golden", str(golden)])
    with pytest.raises(KnowledgeBaseError) as info:
        groove.evaluate(None, golden)
    assert info.value.message == REQUIRED["api"][0]


def test_nothing_is_installed_at_import() -> None:
    assert not hasattr(errors, "use_speller") and not hasattr(errors, "spell")
    names = vars(errors).values()
    assert not [v for v in names if type(v).__name__ in ("ContextVar", "_Spelling", "_Plain")]
