"""Runs whose metrics are known in advance: a golden set of one-answer queries and run files
(``run:FILE``) in which a chosen number of them miss (tests/test_floor.py and
tests/test_baseline_file.py tell their stories with them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from groove.cli import cli

QUERIES = 50  # one broken query moves every metric by 0.02: under the 0.05 threshold
NAME = "decline"


def write_golden(folder: Path, count: int = QUERIES) -> Path:
    queries = [
        {"id": f"q{i:02d}", "query": f"question {i}", "expected": [{"path": f"doc{i:02d}.md"}]}
        for i in range(count)
    ]
    golden = folder / "golden.yml"
    golden.write_text(yaml.safe_dump({"queries": queries}, sort_keys=False), encoding="utf-8")
    return golden


def write_run(folder: Path, broken: int, count: int = QUERIES) -> Path:
    """A run file in which the first ``broken`` queries miss and the others hit at rank 1."""
    lines = []
    for i in range(count):
        path = "elsewhere.md" if i < broken else f"doc{i:02d}.md"
        lines.append(json.dumps({"id": f"q{i:02d}", "hits": [{"path": path}]}))
    run = folder / "run.jsonl"
    run.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return run


def cli_eval(golden: Path, run: Path, *options: str) -> Result:
    args = ["eval", "--retriever", f"run:{run}", "--retriever-name", NAME, "--golden", str(golden)]
    return CliRunner().invoke(cli, [*args, *options])


def as_json(result: Result) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(result.stdout)
    return document
