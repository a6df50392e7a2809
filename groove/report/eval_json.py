"""``groove eval --format json``: the run, the previous run and the diff, keys sorted."""

from __future__ import annotations

import json
import math
from typing import Any

from groove.evaluation.result import EvalRun


def render(run: EvalRun) -> str:
    document = run.to_dict()
    if document.get("previous") is not None and not _finite(document["previous"]):
        document["previous"] = None  # a previous run that JSON cannot carry is dropped
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True
