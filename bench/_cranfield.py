"""Shared set-up for the benchmarks: a writable, indexed copy of the Cranfield KB.

The copy lives in bench/.work/ (ignored by git) and is reused between runs; it is rebuilt
when the source changes size. The source is ../shared/datasets/cranfield from the repo root
unless --dataset points elsewhere.
"""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "cranfield"
WORK = REPO / "bench" / ".work"


def cranfield_copy(dataset: Path = DEFAULT_DATASET) -> tuple[Path, Path]:
    """(kb, golden) of a writable copy; the KB may not be indexed yet."""
    source_kb = dataset / "kb"
    golden = dataset / "golden.yml"
    if not source_kb.is_dir() or not golden.is_file():
        raise SystemExit(f"Cranfield dataset not found at {dataset}: pass --dataset DIR")
    kb = WORK / "cranfield" / "kb"
    count = sum(1 for _ in (source_kb / "docs").iterdir())
    if not kb.is_dir() or sum(1 for _ in (kb / "docs").iterdir()) != count:
        shutil.rmtree(kb.parent, ignore_errors=True)
        kb.parent.mkdir(parents=True)
        shutil.copytree(source_kb, kb)
    return kb, golden


def indexed_cranfield(dataset: Path = DEFAULT_DATASET) -> tuple[Path, Path]:
    """(kb, golden) with the index built (incrementally: a no-op when already done)."""
    from groove.cli.words import index_line
    from groove.engine.embed import load_embedder
    from groove.engine.index import build

    kb, golden = cranfield_copy(dataset)
    summary = build(kb, load_embedder())
    print(f"# index: {index_line(summary)}")
    return kb, golden
