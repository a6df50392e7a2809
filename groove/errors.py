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

An error is data: its message and hint as ``template`` / ``hint_template``, and what
they are about: ``setting`` (the declared name in groove.settings, e.g. ``"kb_path"``) and
``kb_path``, and for a refused value ``expected`` (what the setting takes) and ``given``.
An error about one input writes ``{setting}`` / ``{give}`` (``{kb_path}``,
``{give_kb_path:PATH}``, ``{index_command}``...) where the input's name belongs; the
library never writes a face's spelling, and nothing here knows one.

Each face words an error once, at its boundary, with the one pure function
``groove.settings.spelled(error, face)``, which spells the inputs as that face takes them:
the CLI as its flag (``--kb-path``, in ``cli.print_error``, which prints ``Error: <message>``
and ``hint: <hint>`` on stderr and exits with ``exit_code``), the API as a keyword
(``kb_path=``, the public functions' boundary in groove.api, which hands the words to the
error with ``worded`` so ``message`` / ``hint`` / ``str()`` read them), a notebook as a
parameter (``-p kb_path``, the kernel's ``_refused``), ``serve`` as the request's JSON key.
Anything that is not a GrooveError is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import Literal

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
EXIT_NOTEBOOK_FAILED = 3
# --require-baseline: the regression gate could not be applied (no comparable baseline)
EXIT_NO_BASELINE = 4


Face = Literal["cli", "api", "notebook", "serve"]


class GrooveError(Exception):
    """A user-facing error: a one-line message plus a hint that says what to do next.

    The error holds data, not a face's words: ``template`` and ``hint_template`` are the
    message and hint, and when the error names an input (``setting``, ``kb_path``) they
    are templates (``{setting}``, ``{give}``, ``{kb_path}``, ``{give_kb_path:PATH}``,
    ``{index_command}``) that a face fills in once, at its boundary
    (``groove.settings.spelled(error, face)``). ``message`` and ``hint`` are the words the
    face gave the error (``worded``); before any face has, they are the templates.
    """

    exit_code = EXIT_BAD_INPUT

    def __init__(
        self,
        message: str,
        hint: str | None = None,
        *,
        setting: str | None = None,
        kb_path: object = None,
        expected: str | None = None,
        given: object = None,
    ):
        self.template = message
        self.hint_template = hint
        self.setting = setting
        self.kb_path = None if kb_path is None else str(kb_path)
        # What the setting takes and what it was given, as data beside the words: a face
        # (or a caller) that wants its own wording reads these, not the message.
        self.expected = expected
        self.given = given
        self._words: tuple[str, str | None] | None = None
        super().__init__(message)

    @property
    def templated(self) -> bool:
        """Whether ``template`` names inputs a face fills in (else it is the words)."""
        return self.setting is not None or self.kb_path is not None

    def worded(self, message: str, hint: str | None) -> GrooveError:
        """This error as a face words it at its boundary: ``message``, ``hint`` and
        ``str()`` read these words from now on; the templates stay as they were."""
        self._words = (message, hint)
        self.args = (message,)
        return self

    @property
    def message(self) -> str:
        return self.template if self._words is None else self._words[0]

    @property
    def hint(self) -> str | None:
        return self.hint_template if self._words is None else self._words[1]

    def __str__(self) -> str:
        return self.message


def literal(text: str) -> str:
    """``text`` (a path, a user's value) inside a template, its braces kept as they are."""
    return text.replace("{", "{{").replace("}", "}}")


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
