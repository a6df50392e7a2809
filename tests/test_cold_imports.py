"""A one-shot command imports only what it uses: the cold start of `groove search` and eval.

Each command runs in a fresh Python process (the real CLI, the real default model, a copy of
the English fixture KB) and reports the top-level modules it imported. fastembed and onnx
cost a cold start about a second of imports before any work and are used by neither path
(the default model runs on onnxruntime directly); pandas, scipy and matplotlib belong to the
notebooks and reports. No timing is asserted: which modules load is what decides it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import embed_fixtures
import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REPO = FIXTURES.parent.parent
UNUSED = {"fastembed", "onnx", "pandas", "scipy", "matplotlib", "huggingface_hub", "loguru"}
# What a one-shot search needs none of: package metadata (and the email package it reads it
# with), the KB scanner's ignore patterns, the file writers, the other commands' modules.
SEARCH_UNUSED = {
    "importlib.metadata",
    "email",
    "pathspec",
    "secrets",
    "shutil",
    "groove.atomic",
    "groove.cli.eval_cmd",
    "groove.cli.tune_cmd",
    "groove.cli.golden_cmd",
}

minilm_root = embed_fixtures.minilm_root

RUN_CLI = """
import json, sys
from groove.cli import cli
try:
    cli(sys.argv[1:], prog_name="groove")
except SystemExit as exit:
    if exit.code:
        raise
finally:
    print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _imported(args: list[str], cache: Path) -> tuple[set[str], str]:
    """(modules imported, stdout) of ``groove ARGS`` in a fresh process."""
    env = {**os.environ, "GROOVE_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, *args], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stderr.strip().splitlines()[-1])), done.stdout


def test_import_groove_loads_no_numpy_and_no_engine() -> None:
    heavy = ("numpy", "groove.engine", "onnxruntime")
    code = f"import sys, groove; print(sorted(m for m in sys.modules if m.startswith({heavy})))"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.model
def test_index_search_and_eval_import_neither_fastembed_nor_onnx(
    minilm_root: Path, tmp_path: Path
) -> None:
    kb = tmp_path / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    golden = FIXTURES / "golden_en.yml"
    steps = [
        ["index", "--kb-path", str(kb), "-q"],
        ["search", "--kb-path", str(kb), "how do I rotate the signing keys"],
        ["search", "--kb-path", str(kb), "--format", "json", "deploy rollback"],
        ["eval", "--kb-path", str(kb), "--golden", str(golden), "--no-history"],
    ]
    outputs = []
    for args in steps:
        modules, out = _imported(args, minilm_root)
        assert {m.split(".")[0] for m in modules} & UNUSED == set(), args[0]
        assert {"onnxruntime", "tokenizers", "numpy"} <= modules  # the real model did run
        if args[0] == "search":
            assert modules & SEARCH_UNUSED == set(), args
        outputs.append(out)
    assert "nDCG@10" in outputs[-1]
    assert json.loads(outputs[2]), "the search found nothing"
