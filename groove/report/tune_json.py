"""``groove tune --format json``: the whole measurement, keys sorted."""

from __future__ import annotations

import json

from groove.tuning.result import TuneResult


def render(result: TuneResult) -> str:
    return json.dumps(result.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
