"""groove: measure whether retrieval over a Markdown knowledge base got better or worse.

The engine (index, search) and the measurements (evaluate, tune) are plain library calls
that return frozen dataclasses; the CLI, the notebooks and the CI runner only render them.
The public API is ``__all__`` below, documented in docs/api.md:

    import groove
    run = groove.evaluate("docs", "examples/golden.yml")
    run.per_query_frame()

Importing groove is cheap: the functions import the engine, pandas and numpy when called,
and the result types are loaded on first access (``groove.EvalRun``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from groove.api import (
    accept_baseline,
    evaluate,
    golden_doctor,
    index,
    judge,
    load_history,
    load_tune,
    pool,
    save_tune,
    search,
    set_baseline,
    tune,
    unset_baseline,
)
from groove.errors import (
    ConfigError,
    FileRefusedError,
    GoldenError,
    GrooveError,
    HistoryError,
    IndexMissingError,
    KnowledgeBaseError,
    ModelError,
    NotebookError,
    QueryError,
    RetrieverError,
)

if TYPE_CHECKING:
    from groove.engine.index import IndexSummary
    from groove.engine.search import Hit, SearchResult
    from groove.evaluation.result import EvalRun
    from groove.history.history import History
    from groove.progress import Progress
    from groove.runs.record import QueryResult, RunRecord
    from groove.stats.compare import compare
    from groove.tuning.result import TuneResult

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "EvalRun",
    "FileRefusedError",
    "GoldenError",
    "GrooveError",
    "History",
    "HistoryError",
    "Hit",
    "IndexMissingError",
    "IndexSummary",
    "KnowledgeBaseError",
    "ModelError",
    "NotebookError",
    "Progress",
    "QueryError",
    "QueryResult",
    "RetrieverError",
    "RunRecord",
    "SearchResult",
    "TuneResult",
    "__version__",
    "accept_baseline",
    "compare",
    "evaluate",
    "golden_doctor",
    "index",
    "judge",
    "load_history",
    "load_tune",
    "pool",
    "save_tune",
    "search",
    "set_baseline",
    "tune",
    "unset_baseline",
]

# Result types live beside the code that builds them; they are loaded on first access so
# that `import groove` (and `groove --help`) does not import numpy-heavy engine modules.
_LAZY_TYPES = {
    "IndexSummary": "groove.engine.index",
    "Hit": "groove.engine.search",
    "SearchResult": "groove.engine.search",
    "History": "groove.history.history",
    "QueryResult": "groove.runs.record",
    "RunRecord": "groove.runs.record",
    "EvalRun": "groove.evaluation.result",
    "TuneResult": "groove.tuning.result",
    "Progress": "groove.progress",
    # a function, loaded like the types: it needs numpy (groove.stats.significance)
    "compare": "groove.stats.compare",
}


def __getattr__(name: str) -> Any:
    module = _LAZY_TYPES.get(name)
    if module is None:
        raise AttributeError(f"module 'groove' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    if name == "compare":  # a public function: its errors leave worded as the API's are
        from groove.settings import boundary

        value = boundary("api")(value)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
