"""Every setting of every groove task, declared once.

A ``Setting`` (``setting.py``) names one input with its kind, its limits, its help text,
its command-line flag and where it is accepted. Each task has one table of them, grouped
here by what the task works on: ``engine.py`` (index, search, model prepare, serve,
export), ``evaluation.py`` (eval, baselines, compare), ``tuning.py`` (tune), ``judging.py``
(golden pool, the judging notebook, the other golden commands) and ``notebooks.py``
(notebook run / open); ``shared.py`` holds the settings several tables take, and
``groove_toml.py`` the keys only groove.toml holds. What a kind means (parsing, groove.toml
reading, click type, wording) is one entry of ``kinds.KINDS``. Everything else is
derived from these tables:

* groove.toml's keys, their defaults and bounds (``GROOVE_TOML``, read by groove.config);

* the click options of every ``groove`` command (``COMMANDS`` in ``commands.py`` maps each
  command to its table; presentation options such as ``--format`` aside), built by
  ``groove.cli.common.command_options``;
* the keywords of the API's functions and the parameters of the notebooks' run cells,
  with their types and defaults (``signatures.py``), and their check (``Setting.parse``);
* how each face words an error or a note that names settings (``spelling.py``:
  ``spelled(error, face)``, ``spell(template, face)``);
* tests that compare the notebooks' parameters cells and the API signatures with it.

The one rule for a value above a cap (``at_most``, ``LIMIT_MAX``) is in ``setting.py``.
This package imports nothing heavy: the CLI reads it to build ``groove --help``.
"""

from __future__ import annotations

from groove.settings.commands import COMMANDS
from groove.settings.engine import EXPORT, INDEX, MODEL_PREPARE, SEARCH, SERVE
from groove.settings.evaluation import BASELINE, BASELINE_ACCEPT, BASELINE_RUN, COMPARE, EVAL
from groove.settings.groove_toml import GROOVE_TOML
from groove.settings.judging import (
    GOLDEN_APPLY,
    GOLDEN_DOCTOR,
    GOLDEN_EXPORT_QRELS,
    GOLDEN_IMPORT,
    GOLDEN_IMPORT_JUDGEMENTS,
    JUDGE,
    POOL,
)
from groove.settings.notebooks import NOTEBOOK_OPEN, NOTEBOOK_RUN
from groove.settings.setting import (
    ALL,
    DEFAULT_LIMIT,
    EVAL_RETRIEVAL_CAP,
    FILE_ONLY,
    GATE_MODES,
    LEXICAL_MODES,
    LIMIT_MAX,
    SLICE_BY,
    Kind,
    LexicalMode,
    Setting,
    Surface,
    at_most,
    on,
    parse_k_list,
)
from groove.settings.shared import (
    CONFIG,
    DB_PATH,
    GOLDEN,
    KB_PATH,
    LEXICAL,
    LIMIT,
    MMR,
    MMR_LAMBDA,
    MMR_SAME_DOC_PENALTY,
    MODEL,
    MODEL_PATH,
    PARENT_RETRIEVER,
    PIPELINE,
    RERANKER,
)
from groove.settings.spelling import boundary, cli_flag, command_line, spell, spelled
from groove.settings.tuning import TUNE

__all__ = [
    "ALL",
    "BASELINE",
    "BASELINE_ACCEPT",
    "BASELINE_RUN",
    "COMMANDS",
    "COMPARE",
    "CONFIG",
    "DB_PATH",
    "DEFAULT_LIMIT",
    "EVAL",
    "EVAL_RETRIEVAL_CAP",
    "EXPORT",
    "FILE_ONLY",
    "GATE_MODES",
    "GOLDEN",
    "GOLDEN_APPLY",
    "GOLDEN_DOCTOR",
    "GOLDEN_EXPORT_QRELS",
    "GOLDEN_IMPORT",
    "GOLDEN_IMPORT_JUDGEMENTS",
    "GROOVE_TOML",
    "INDEX",
    "JUDGE",
    "KB_PATH",
    "LEXICAL",
    "LEXICAL_MODES",
    "LIMIT",
    "LIMIT_MAX",
    "MMR",
    "MMR_LAMBDA",
    "MMR_SAME_DOC_PENALTY",
    "MODEL",
    "MODEL_PATH",
    "MODEL_PREPARE",
    "NOTEBOOK_OPEN",
    "NOTEBOOK_RUN",
    "PARENT_RETRIEVER",
    "PIPELINE",
    "POOL",
    "RERANKER",
    "SEARCH",
    "SERVE",
    "SLICE_BY",
    "TUNE",
    "Kind",
    "LexicalMode",
    "Setting",
    "Surface",
    "at_most",
    "boundary",
    "cli_flag",
    "command_line",
    "on",
    "parse_k_list",
    "spell",
    "spelled",
]
