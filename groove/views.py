"""Which function shows a result: its card, its frames and its JSON document, by its type.

Results are plain data (dataclasses that import none of their views); ``Introduces.card``,
``repr()`` and methods such as ``EvalRun.per_query_frame`` ask ``groove.cards.view``, which
calls ``show`` here. This layer sits above every result type and imports them downwards,
so no result module and its card or frames module import each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groove.engine.card import index_card, search_card
from groove.evaluation.card import eval_run_card
from groove.evaluation.frames import aggregate_frame, per_query_frame, slice_frame
from groove.history.card import history_card
from groove.history.frames import history_frame
from groove.judging.card import pool_card
from groove.runs.card import run_record_card
from groove.stats.card import comparison_card
from groove.tuning import document, frames
from groove.tuning.card import tune_card

View = Callable[[Any], Any]

#: result type name -> view name -> the function that shows it
VIEWS: dict[str, dict[str, View]] = {
    "IndexSummary": {"card": index_card},
    "SearchResult": {"card": search_card},
    "RunRecord": {"card": run_record_card},
    "EvalRun": {
        "card": eval_run_card,
        "per_query_frame": per_query_frame,
        "aggregate_frame": aggregate_frame,
        "slice_frame": slice_frame,
    },
    "History": {"card": history_card, "runs_frame": history_frame},
    "Comparison": {"card": comparison_card},
    "Pool": {"card": pool_card},
    "TuneResult": {
        "card": tune_card,
        "to_dict": document.to_dict,
        "conditions_frame": frames.conditions_frame,
        "table_frame": frames.table_frame,
        "folds_frame": frames.folds_frame,
    },
}


def show(result: object, name: str) -> Any:
    """The view ``name`` of ``result``'s type, applied to it."""
    kind = type(result).__name__
    found = VIEWS.get(kind, {}).get(name)
    if found is None:
        raise AttributeError(f"{kind} has no view {name!r}")
    return found(result)
