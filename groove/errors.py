"""Every error groove shows a user, and the exit code it maps to.

    GrooveError                 exit 2: the input is wrong and the hint says how to fix it
    +-- ConfigError             groove.toml or a flag holds a value groove cannot use
    +-- KnowledgeBaseError      the KB path is missing or not a folder
    +-- FileRefusedError        a file guard refused a file (symlink, hard link, too large...)
    +-- IndexMissingError       no index database where one is needed
    +-- ModelError              the embedding model cannot be loaded, or differs from the index's
    +-- QueryError              a search query groove cannot run (empty, exclusions only)
    +-- GoldenError             the golden YAML is absent, unreadable or breaks the schema
    +-- HistoryError            the eval history cannot be read or written safely
    +-- NotebookError           the notebook runner was given something it cannot run
    +-- RetrieverError          an external retriever failed, hung or broke its contract

Exit code 4 is no error: ``groove eval --require-baseline`` (and the notebook runner) exit
with it when the regression gate could not be applied (groove.evaluation.gate_status).

The CLI catches GrooveError once, prints ``Error: <message>`` and ``hint: <hint>`` on stderr
and exits with ``exit_code``. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
EXIT_NOTEBOOK_FAILED = 3
# --require-baseline: the regression gate could not be applied (no comparable baseline)
EXIT_NO_BASELINE = 4


class GrooveError(Exception):
    """A user-facing error: a one-line message plus a hint that says what to do next."""

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class ConfigError(GrooveError):
    pass


class KnowledgeBaseError(GrooveError):
    pass


class FileRefusedError(GrooveError):
    """A guarded read refused a file; ``reason`` is the sentence that says why."""

    def __init__(self, message: str, reason: str, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.reason = reason


class IndexMissingError(GrooveError):
    pass


class ModelError(GrooveError):
    pass


class QueryError(GrooveError):
    pass


class GoldenError(GrooveError):
    pass


class HistoryError(GrooveError):
    pass


class NotebookError(GrooveError):
    pass


class RetrieverError(GrooveError):
    """An external retriever (``--retriever``) failed: the message names the query id."""
