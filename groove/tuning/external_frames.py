"""pandas views of ``groove tune --retriever`` (``ExternalTune.conditions_frame`` ...).

The same frames as groove's own tune (groove.tuning.frames), over the family grid:
``condition`` is a column of the grid (0 is the baseline, RRF k = 60 over the whole
window), and the seed's four grid columns give way to the fusion's own parameters
(``label``, ``family``, ``k``, ``window``, ``vector_weight``, ``normalizer``; a parameter
the family does not use is empty). Every frame has its columns also when the grid did not
run (then with no rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from groove.tuning.families import DEFAULT_COLUMN
from groove.tuning.frames import (
    condition_columns,
    fold_rows,
    long_table,
    metric_arrays,
    primary_gain,
)
from groove.tuning.select import condition_means

if TYPE_CHECKING:
    import pandas as pd

    from groove.fusion import Fusion
    from groove.tuning.external_result import ExternalTune

FUSION_COLUMNS = ("condition", "label", "family", "k", "window", "vector_weight", "normalizer")


def _fusion_row(column: int, f: Fusion) -> dict[str, object]:
    given = f.to_dict()
    return {
        "condition": column,
        "label": f.label,
        "family": f.family,
        "k": given.get("k"),
        "window": given.get("window"),
        "vector_weight": given.get("vector_weight"),
        "normalizer": given.get("normalizer"),
    }


def conditions_frame(result: ExternalTune) -> pd.DataFrame:
    """One row per grid condition, in grid order."""
    import pandas as pd

    columns = condition_columns(FUSION_COLUMNS, result.k_values)
    table, loo = result.table, result.loo
    if table is None or loo is None:
        return pd.DataFrame(columns=columns)
    width = result.grid.width
    frame = pd.DataFrame([_fusion_row(j, f) for j, f in enumerate(result.grid.conditions)])
    frame["default"] = np.arange(width) == DEFAULT_COLUMN
    frame["refit"] = np.arange(width) == loo.refit
    rows = range(table.n_queries)
    for name, array in metric_arrays(table).items():
        frame[name] = condition_means(array, rows)  # over every query, as eval reports them
    for name, column in primary_gain(table.primary, result.effective_rows, DEFAULT_COLUMN).items():
        frame[name] = column
    frame["folds"] = np.bincount(np.asarray(loo.folds, dtype=np.intp), minlength=width)
    return frame[columns]


def table_frame(result: ExternalTune) -> pd.DataFrame:
    """The metric table in long form: one row per query x condition x metric."""
    return long_table([q.id for q in result.queries], result.table)


def folds_frame(result: ExternalTune) -> pd.DataFrame:
    """One row per leave-one-query-out fold: the held-out query, the condition chosen
    without it and that condition's nDCG@5 gain over the baseline on it."""
    return fold_rows(
        [q.id for q in result.queries],
        result.loo,
        FUSION_COLUMNS,
        lambda chosen: _fusion_row(chosen, result.grid.conditions[chosen]),
    )


def diagnostics_frame(result: ExternalTune) -> pd.DataFrame:
    """The pre-flight, one row per usable query: what each leg returned, their overlap and
    whether the query is ``effective`` (both legs hit: fusion can move it)."""
    import pandas as pd

    return pd.DataFrame([vars(d) for d in result.legs])
