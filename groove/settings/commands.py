"""Every ``groove`` command and the table its options are generated from."""

from __future__ import annotations

from collections.abc import Mapping

from groove.settings.engine import EXPORT, INDEX, MODEL_PREPARE, SEARCH, SERVE
from groove.settings.evaluation import BASELINE, BASELINE_ACCEPT, BASELINE_RUN, COMPARE, EVAL
from groove.settings.judging import (
    GOLDEN_APPLY,
    GOLDEN_DOCTOR,
    GOLDEN_EXPORT_QRELS,
    GOLDEN_IMPORT,
    GOLDEN_IMPORT_JUDGEMENTS,
    POOL,
)
from groove.settings.notebooks import NOTEBOOK_OPEN, NOTEBOOK_RUN
from groove.settings.setting import Setting
from groove.settings.tuning import TUNE

#: Each ``groove`` command and the table its options are generated from (a test checks that
#: the CLI has these commands and no other, each with its table's flags and nothing else
#: but the presentation options it names).
COMMANDS: Mapping[str, Mapping[str, Setting]] = {
    "index": INDEX,
    "search": SEARCH,
    "model prepare": MODEL_PREPARE,
    "eval": EVAL,
    "tune": TUNE,
    "serve": SERVE,
    "export": EXPORT,
    "compare": COMPARE,
    "baseline set": BASELINE_RUN,
    "baseline accept": BASELINE_ACCEPT,
    "baseline unset": BASELINE,
    "baseline list": BASELINE,
    "golden import": GOLDEN_IMPORT,
    "golden export-qrels": GOLDEN_EXPORT_QRELS,
    "golden pool": POOL,
    "golden import-judgements": GOLDEN_IMPORT_JUDGEMENTS,
    "golden apply": GOLDEN_APPLY,
    "golden doctor": GOLDEN_DOCTOR,
    "notebook run": NOTEBOOK_RUN,
    "notebook open": NOTEBOOK_OPEN,
}
