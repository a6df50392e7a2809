"""One setting: its kind, its limits, how a given value is parsed, and the one rule for a cap.

The size of a result list follows the reference, the same on every face (CLI, API,
notebook, ``serve``): ``limit`` and every k are whole numbers from 1 to ``LIMIT_MAX``
(10,000, the reference's "supported maximum"); a value above it is refused (``at_most``)
in every task, whichever face or groove.toml gave it. Below it, search and tune take the
value as given, while eval lowers its limit and each k to ``EVAL_RETRIEVAL_CAP`` (1,000,
the reference's retrieval cap: ``normalize_eval_limit_and_k``), with a note when the limit
changed (groove.evaluation.settings).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from groove.errors import ConfigError, literal
from groove.settings.kinds import (  # the kinds' constants, re-exported with Setting
    GATE_MODES,
    KINDS,
    LEXICAL_MODES,
    LIMIT_MAX,
    SLICE_BY,
    Bounds,
    LexicalMode,
    Refused,
    parse_k_list,
)

__all__ = [
    "ALL",
    "CLI_ONLY",
    "DEFAULT_LIMIT",
    "EVAL_RETRIEVAL_CAP",
    "FILE_ONLY",
    "GATE_MODES",
    "LEXICAL_MODES",
    "LIMIT_MAX",
    "SLICE_BY",
    "Kind",
    "LexicalMode",
    "Setting",
    "Surface",
    "at_most",
    "on",
    "parse_k_list",
    "switch",
    "table",
]

#: Hits per search when no limit is given (search, serve; tune and eval default to max(k)).
DEFAULT_LIMIT = 10
#: The deepest eval retrieves: its limit and each k above it are lowered to it, with a note.
EVAL_RETRIEVAL_CAP = 1_000

#: The names of the kinds (groove.settings.kinds.KINDS holds what each means).
Kind = Literal[
    "path",
    "file",
    "folder",
    "text",
    "pin",
    "whole",
    "count",
    "several",
    "integer",
    "port",
    "number",
    "fraction",
    "level",
    "seconds",
    "bool",
    "k_list",
    "texts",
    "mapping",
    "gate",
    "slice_by",
    "lexical",
    "family",
    "normalizer",
]
Surface = Literal["cli", "api", "notebook"]
ALL: frozenset[Surface] = frozenset({"cli", "api", "notebook"})
#: A setting only groove.toml holds (no flag, keyword or parameter).
FILE_ONLY: frozenset[Surface] = frozenset()
#: A setting only the command line takes (a presentation choice, or one the API and the
#: notebooks take in another form, such as the retriever's flags in ``retriever_options``).
CLI_ONLY: frozenset[Surface] = frozenset({"cli"})


@dataclass(frozen=True)
class Setting:
    """One input: ``name`` is the API keyword and the notebook parameter.

    ``default`` is the built-in value: what the resolver takes when no face gives one and
    groove.toml, if ``config_key`` names a key of it, holds none (the API's keyword and
    the notebook's parameter default to ``face_default``). ``flag`` is the command-line
    option (None: no flag); a ``switch`` flag takes no value and, when it starts with
    ``--no-``, turns the setting off. ``surfaces`` says where the setting is accepted. On
    the command line the flag's default is None (groove.toml, else the library, decides), unless
    ``show_default``: then it is ``default``, shown in ``--help``; a ``required`` flag
    must be given. ``config_key`` is the groove.toml key a value not given falls back to
    (dotted: ``eval.k_values``); ``capped``: the value (each k of a list) is at most
    LIMIT_MAX (``at_most``). groove.resolve applies both, the same way for every face.
    ``bare``: the flag's value may be left out, and then is ``bare`` (``--file [PATH]``).
    What the kind means (its parsing, groove.toml reading, click type and wording) is its
    entry in groove.settings.kinds.KINDS.
    """

    name: str
    kind: Kind
    help: str
    flag: str | None = None
    dest: str | None = None
    metavar: str | None = None
    switch: bool = False
    default: Any = None
    surfaces: frozenset[Surface] = ALL
    show_default: bool = False
    required: bool = False
    config_key: str | None = None
    capped: bool = False
    #: Narrower bounds than the kind's (groove.toml and ``parse``), as (lowest, highest).
    bounds: Bounds | None = None
    #: A flag that may be given without its value (``--file`` alone) takes this one.
    bare: str | None = None

    @property
    def face_default(self) -> Any:
        """What a face's keyword or parameter defaults to: None (not given) for a key
        groove.toml may hold, so that the resolver looks there before ``default``."""
        return None if self.config_key is not None else self.default

    @property
    def param(self) -> str:
        """The click parameter (and command function argument) name."""
        if self.dest is not None:
            return self.dest
        assert self.flag is not None, self.name
        return self.flag.removeprefix("--").replace("-", "_")

    def parse(self, value: Any) -> Any:
        """``value`` (as the API or a notebook hands it) checked against the kind and
        limits; None stays None.

        A wrong value is a ConfigError (exit 2) about this setting: what it takes
        (``expected``), what it was given (``given``) and, in its hint, what its kind
        takes; the face that took the value words it (groove.settings.spelling).
        """
        kind = KINDS[self.kind]
        try:
            return kind.parse(value, self.bounds)
        except Refused as bad:
            raise ConfigError(
                "{setting} must be " + literal(f"{bad.wanted}, got {bad.value!r}"),
                "{pass_value:" + kind.wanted + "}",  # the kinds' wording holds no braces
                setting=self.name,
                expected=bad.wanted,
                given=bad.value,
            ) from None

    def but(self, **changes: Any) -> Setting:
        """The same setting as one task words or offers it (its help, surfaces, default)."""
        return replace(self, **changes)


def switch(name: str, flag: str, help: str, **more: Any) -> Setting:
    """A flag that takes no value: ``--x`` turns the setting on (it is off by default),
    ``--no-x`` turns it off (it is on by default)."""
    default = flag.startswith("--no-")
    return Setting(name, "bool", help, flag=flag, switch=True, default=default, **more)


def table(*settings: Setting) -> Mapping[str, Setting]:
    """A task's table: its settings by name, in declaration order."""
    return {s.name: s for s in settings}


def on(table: Mapping[str, Setting], surface: Surface) -> tuple[str, ...]:
    """The names of ``table`` accepted on ``surface``, in declaration order."""
    return tuple(name for name, s in table.items() if surface in s.surfaces)


def at_most(name: str, value: int) -> int:
    """``value`` if it is at most LIMIT_MAX, else a ConfigError naming the setting ``name``.

    The bound of a limit and of each k, on every face (see the module's docstring).
    """
    if value > LIMIT_MAX:
        raise ConfigError(
            f"{{setting}} {value} exceeds the supported maximum {LIMIT_MAX}",
            f"pass {{give:N}} with N from 1 to {LIMIT_MAX}",
            setting=name,
            expected=f"at most {LIMIT_MAX}",
            given=value,
        )
    return value
