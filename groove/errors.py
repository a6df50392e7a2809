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

The CLI catches GrooveError once, prints ``Error: <message>`` and ``hint: <hint>`` on stderr
and exits with ``exit_code``. Anything else is a bug and keeps its traceback.

An error about one input names it with ``setting`` (the declared name in groove.settings,
e.g. ``"kb_path"``) and writes ``{setting}`` / ``{give}`` where the name belongs in its
message and hint. Each face spells the input its own way (``spelled``): the CLI as its
flag (``--kb-path``), the API as a keyword (``kb_path=``), a notebook as a parameter
(``-p kb_path``). The library itself never writes a face's spelling.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
EXIT_NOTEBOOK_FAILED = 3


Face = Literal["cli", "api", "notebook", "serve"]
#: How a face names a setting, set by groove.settings (which holds the declared flags):
#: ``(setting, face) -> (name in a sentence, how to give it)``.
_spellers: list[Callable[[str, Face], tuple[str, str]]] = []


def _plain(setting: str, face: Face) -> tuple[str, str]:
    if _spellers:
        return _spellers[0](setting, face)
    return setting, f"{setting}="


class GrooveError(Exception):
    """A user-facing error: a one-line message plus a hint that says what to do next.

    ``message`` and ``hint`` read as the API would say them; ``spelled(face)`` gives them
    as another face says them.
    """

    exit_code = EXIT_BAD_INPUT

    def __init__(self, message: str, hint: str | None = None, *, setting: str | None = None):
        self.setting = setting
        self._message = message
        self._hint = hint
        self._face: Face = "api"
        super().__init__(self.message)

    def spelled(self, face: Face) -> tuple[str, str | None]:
        """(message, hint) with the setting named as ``face`` names it."""
        if self.setting is None:
            return self._message, self._hint
        name, give = _plain(self.setting, face)
        fill = {"setting": name, "give": give}
        hint = self._hint.format(**fill) if self._hint is not None else None
        return self._message.format(**fill), hint

    def respell(self, face: Face) -> GrooveError:
        """This error, its ``message`` and ``hint`` now spelled for ``face`` (returns self)."""
        self._face = face
        self.args = (self.message,)
        return self

    @property
    def message(self) -> str:
        return self.spelled(self._face)[0]

    @property
    def hint(self) -> str | None:
        return self.spelled(self._face)[1]

    @hint.setter
    def hint(self, value: str | None) -> None:
        self._hint = value

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
