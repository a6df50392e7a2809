"""Made-up legs (seeded) for the tests of ``groove tune --retriever``: the lexical leg is
good and the vector leg is noise, so a sweep can find a better fusion than the baseline
and the gates can adopt it. ``adapter`` is a command retriever that fuses these legs
itself with one condition (fusing_adapter.py, the engines' formulas written out by hand)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import yaml

from groove.fusion import Fusion

HELPERS = Path(__file__).parent
N_QUERIES = 40
N_DOCS = 80


def legs_for(rng: random.Random, qid: int) -> dict[str, list[dict[str, Any]]]:
    target = f"docs/d{qid}.md"
    others = [f"docs/d{i}.md" for i in range(N_DOCS) if i != qid]
    lexical_paths = rng.sample(others, 25)
    lexical_paths.insert(rng.randrange(0, 3), target)  # the lexical leg finds it near the top
    vector_paths = rng.sample(others, 30)
    if rng.random() < 0.5:
        vector_paths.insert(rng.randrange(5, 30), target)  # the vector leg, deep if at all
    lexical = [
        {"path": p, "heading": None, "score": round(30.0 - i + rng.random(), 3), "id": p}
        for i, p in enumerate(lexical_paths)
    ]
    vector = [
        {"path": p, "score": round(0.9 - 0.01 * i - 0.005 * rng.random(), 4), "id": p}
        for i, p in enumerate(vector_paths)
    ]
    return {"lexical": lexical, "vector": vector}


def write_made_up(folder: Path, golden_name: str = "golden.yml") -> tuple[Path, Path]:
    """(golden file, legs JSONL) for N_QUERIES queries, written into ``folder``."""
    rng = random.Random(7)
    golden = {
        "queries": [
            {"id": f"q{i}", "query": f"question {i}", "expected": [{"path": f"docs/d{i}.md"}]}
            for i in range(N_QUERIES)
        ]
    }
    golden_path = folder / golden_name
    golden_path.write_text(yaml.safe_dump(golden))
    legs_path = folder / "legs.jsonl"
    lines = [json.dumps({"id": f"q{i}", "legs": legs_for(rng, i)}) for i in range(N_QUERIES)]
    legs_path.write_text("\n".join(lines) + "\n")
    return golden_path, legs_path


def adapter(legs: Path, f: Fusion) -> str:
    window = f.window if f.window is not None else 1000
    return (
        f"command:{sys.executable} {HELPERS / 'fusing_adapter.py'} {legs} {f.family} {f.k!r} "
        f"{window} {f.vector_weight!r} {f.normalizer}"
    )
