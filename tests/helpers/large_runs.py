"""Two explained eval runs of 1,000 generated queries on the English fixture (deterministic
hashing embedder): the second after three notes were deleted, so it has regressions,
misses and causes to list. For the tests of what a result or a report looks like at size."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groove.config import Config
from groove.engine.index import IndexSummary, build
from groove.evaluation.run import run as eval_run
from groove.evaluation.settings import resolve_settings as eval_settings
from helpers.golden_gen import generated_golden
from helpers.hashing import HashingEmbedder

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
QUERIES = 1000
DELETED = ("ops/rollback.md",)


@dataclass
class LargeRuns:
    kb: Path
    golden: Path
    summary: IndexSummary
    first: Any  # EvalRun
    second: Any


def large_runs(root: Path, deleted: tuple[str, ...] = DELETED) -> LargeRuns:
    kb = root / "kb"
    shutil.copytree(FIXTURES / "kb_en", kb)
    summary = build(kb, HashingEmbedder())
    golden = generated_golden(kb, QUERIES, root / "large.yml")
    settings = eval_settings(Config(), kb_path=kb, golden=golden, explain=True)
    first = eval_run(settings, embedder=HashingEmbedder())
    for path in deleted:
        (kb / path).unlink()
    build(kb, HashingEmbedder())
    second = eval_run(settings, embedder=HashingEmbedder())
    return LargeRuns(kb, golden, summary, first, second)
