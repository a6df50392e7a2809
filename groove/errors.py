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

An error about one input names it with ``setting`` (the declared name in groove.settings,
e.g. ``"kb_path"``) and writes ``{setting}`` / ``{give}`` where the name belongs in its
message and hint. Each face spells the input its own way (``spelled``): the CLI as its
flag (``--kb-path``), the API as a keyword (``kb_path=``), a notebook as a parameter
(``-p kb_path``). The library itself never writes a face's spelling. Each face words an
error once, at its boundary (the CLI's ``print_error``, the notebook kernel's ``_refused``,
``serve``'s answer); ``message`` / ``hint`` are the API's words. A refused value also
carries its data: ``setting``, ``expected`` (what the setting takes) and ``given``.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_BAD_INPUT = 2
EXIT_NOTEBOOK_FAILED = 3
# --require-baseline: the regression gate could not be applied (no comparable baseline)
EXIT_NO_BASELINE = 4


Face = Literal["cli", "api", "notebook", "serve"]


class Speller(Protocol):
    """How each face names a setting; groove.settings (which holds the flags) is the one."""

    def name(self, setting: str, face: Face) -> str: ...

    def give(self, setting: str, face: Face, example: str) -> str: ...

    def here(self, face: Face) -> str: ...

    def index_command(
        self, face: Face, kb_path: str | None, force: bool, lexical: str | None = None
    ) -> str: ...


class _Plain:
    def name(self, setting: str, face: Face) -> str:
        return setting

    def give(self, setting: str, face: Face, example: str) -> str:
        return f"{setting}={example}"

    def here(self, face: Face) -> str:
        return "to the call"

    def index_command(
        self, face: Face, kb_path: str | None, force: bool, lexical: str | None = None
    ) -> str:
        extra = (", force=True" if force else "") + (f", lexical={lexical!r}" if lexical else "")
        return f"groove.index({kb_path!r}{extra})"


_speller: list[Speller] = [_Plain()]


def use_speller(speller: Speller) -> None:
    _speller[0] = speller


class _Give:
    def __init__(self, setting: str, face: Face) -> None:
        self.setting, self.face = setting, face

    def __format__(self, example: str) -> str:
        return _speller[0].give(self.setting, self.face, example)


# What a face calls its inputs, for "the same model {options}".
_OPTIONS: dict[Face, str] = {
    "cli": "flags",
    "api": "keywords",
    "notebook": "parameters",
    "serve": "fields",
}


class _IndexCommand:
    """``{index_command}`` / ``{index_command:force}`` / ``{index_command:lexical=MODE}``: how
    ``face`` builds the index (with those options)."""

    def __init__(self, face: Face, kb_path: str | None) -> None:
        self.face, self.kb_path = face, kb_path

    def __format__(self, spec: str) -> str:
        words = spec.split()
        lexical = next(
            (w.removeprefix("lexical=") for w in words if w.startswith("lexical=")), None
        )
        return _speller[0].index_command(self.face, self.kb_path, "force" in words, lexical)


class _Fill(dict[str, Any]):
    """``{kb_path}`` -> the setting as ``face`` names it; ``{give_kb_path:PATH}`` -> how to
    give it (``--kb-path PATH``, ``kb_path=PATH``, ``-p kb_path PATH``); ``{setting}`` /
    ``{give}`` -> the error's own setting; ``{here}`` -> where the face takes its inputs;
    ``{index_command}`` (``:force``) -> how the face builds the index of ``kb_path``."""

    def __init__(self, setting: str | None, face: Face, kb_path: str | None = None) -> None:
        speller = _speller[0]
        super().__init__(
            here=speller.here(face),
            index_command=_IndexCommand(face, kb_path),
            options=_OPTIONS[face],
        )
        if setting is not None:
            self.update(setting=speller.name(setting, face), give=_Give(setting, face))
        self.face = face

    def __missing__(self, key: str) -> Any:
        if key.startswith("give_"):
            return _Give(key.removeprefix("give_"), self.face)
        return _speller[0].name(key, self.face)


def spell(template: str, face: Face, *, kb_path: object = None) -> str:
    """A template that names settings (as a GrooveError's message is) spelled for ``face``:
    text the library words while a face runs it (a note, the gate's reason) names settings
    as the face it was given says them (``EvalSettings.face``, ``run_notebook(face=)``)."""
    return template.format_map(_Fill(None, face, None if kb_path is None else str(kb_path)))


class GrooveError(Exception):
    """A user-facing error: a one-line message plus a hint that says what to do next.

    With ``setting`` (or ``kb_path``), ``message`` and ``hint`` are templates (``{setting}``,
    ``{give}``, ``{kb_path}``, ``{give_kb_path:PATH}``, ``{index_command}``): ``message`` and
    ``hint`` read as the API says them, ``spelled(face)`` as another face does.
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
        self.setting = setting
        # What the setting takes and what it was given, as data beside the words: a face
        # (or a caller) that wants its own wording reads these, not the message.
        self.expected = expected
        self.given = given
        self._kb_path = None if kb_path is None else str(kb_path)
        self._message = message
        self._hint = hint
        super().__init__(self.message)

    def spelled(self, face: Face) -> tuple[str, str | None]:
        """(message, hint) with the settings named as ``face`` names them."""
        if self.setting is None and self._kb_path is None:
            return self._message, self._hint  # not a template
        fill = _Fill(self.setting, face, self._kb_path)
        hint = self._hint.format_map(fill) if self._hint is not None else None
        return self._message.format_map(fill), hint

    @property
    def message(self) -> str:
        return self.spelled("api")[0]

    @property
    def hint(self) -> str | None:
        return self.spelled("api")[1]

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
