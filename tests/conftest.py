"""Shared fixtures: fixture knowledge bases, the real model, indexes built once per session.

Indexing with the real model costs seconds, so each fixture KB is indexed once per session
and every test gets its own copy of the KB folder and its database (tests write history
files and re-index, so they must not share a folder).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

# No test may reach for a model hub: fastembed and groove check this before any network use.
os.environ["HF_HUB_OFFLINE"] = "1"

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def real_embedder():  # type: ignore[no-untyped-def]
    """The offline default model (all-MiniLM-L6-v2 as ONNX), loaded once."""
    from groove.engine.embed import load_embedder

    return load_embedder()


@pytest.fixture
def hashing_embedder():  # type: ignore[no-untyped-def]
    from helpers.hashing import HashingEmbedder

    return HashingEmbedder()


def copy_kb(name: str, dest: Path) -> Path:
    """Copy fixture KB ``name`` to ``dest/kb`` and return it (the DB goes to dest/.groove.db)."""
    kb = dest / "kb"
    shutil.copytree(FIXTURES / name, kb)
    return kb


@pytest.fixture(scope="session")
def _built_indexes(tmp_path_factory, real_embedder):  # type: ignore[no-untyped-def]
    from groove.engine.index import build

    built: dict[str, Path] = {}
    for name in ("kb_en", "kb_ja"):
        root = tmp_path_factory.mktemp(f"built_{name}")
        kb = copy_kb(name, root)
        build(kb, real_embedder)
        built[name] = root
    return built


@pytest.fixture
def indexed_kb(tmp_path, _built_indexes) -> Callable[[str], Path]:  # type: ignore[no-untyped-def]
    """``indexed_kb("kb_en")`` -> a private copy of that KB, already indexed with the real model."""

    def make(name: str) -> Path:
        source = _built_indexes[name]
        dest = tmp_path / name
        shutil.copytree(source, dest)
        return dest / "kb"

    return make


@pytest.fixture
def golden_en() -> Path:
    return FIXTURES / "golden_en.yml"


@pytest.fixture
def golden_ja() -> Path:
    return FIXTURES / "golden_ja.yml"


@pytest.fixture(autouse=True)
def _result_json_follows_the_schema(request):  # type: ignore[no-untyped-def]
    """After each test that had a tmp_path: every result.json it left there (any file that
    is a JSON object with an exit_code) validates against groove's published schema."""
    if "tmp_path" not in request.fixturenames:
        yield
        return
    root = request.getfixturevalue("tmp_path")  # set up now, so torn down after this check
    yield
    from helpers.result_schema import problems, result_documents

    for path, document in result_documents(root):
        found = problems(document)
        assert not found, f"{path} breaks result.schema.json: {found[:3]}"
