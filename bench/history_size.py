"""Bytes per run of the eval history on Cranfield (225 queries, limit 10).

Runs three evals with different settings (the default, --mmr, --lexical trigram), appends
each to a fresh history file as `groove eval` does (sketches of the expected files
included), and prints the file's size after each run, the size per run, and what the same
runs took in the layout groove wrote before the stored form (every run's full record,
pretty-printed). Goal: <= 150 KB per run. Usage:

    .venv/bin/python bench/history_size.py [--dataset ../shared/datasets/cranfield]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from _cranfield import DEFAULT_DATASET, indexed_cranfield

import groove
from groove.history.history import append_run, history_path, load_history

RUNS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("default", {}),
    ("mmr", {"mmr": True}),
    ("trigram", {"lexical": "trigram"}),
)


def earlier_layout(path: Path) -> tuple[int, int]:
    """(pretty, compact) bytes of the history at ``path`` as groove wrote it before: every
    run's full record and the sketches as a list (runs without the latency kept since)."""
    history = load_history(path)
    data: dict[str, Any] = {
        "runs": [replace(r, latency=None).to_dict(keep_empty_findings=False) for r in history.runs],
        "answers": [history.answers[p].to_dict() for p in sorted(history.answers)],
    }
    pretty = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    compact = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return len(pretty.encode("utf-8")), len(compact.encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = parser.parse_args()
    kb, golden = indexed_cranfield(args.dataset)
    with tempfile.TemporaryDirectory() as folder:
        path = history_path(Path(folder))
        print("runs  file KB  KB/run  added KB  | before: pretty KB/run  compact KB/run")
        previous = 0
        for count, (name, options) in enumerate(RUNS, start=1):
            run = groove.evaluate(kb, golden, history=False, progress=False, **options)
            append_run(path, replace(run.record, name=name), 10, answers=run.answers)
            size = path.stat().st_size
            pretty, compact = earlier_layout(path)
            print(
                f"{count:>4}  {size / 1000:>7.1f}  {size / count / 1000:>6.1f}  "
                f"{(size - previous) / 1000:>8.1f}  | {pretty / count / 1000:>21.1f}  "
                f"{compact / count / 1000:>14.1f}"
            )
            previous = size


if __name__ == "__main__":
    main()
