"""One setting: its kind, its limits, how a given value is parsed, and the one rule for a cap.

One rule for the size of a result list, the same on every face (CLI, API, notebook,
``serve``) and in every task (search, eval, tune): ``limit`` and every k are whole numbers
from 1 to ``LIMIT_MAX``; a value above it is refused (``at_most``), never lowered. Refusing
is the one rule that cannot surprise: a lowered k would report recall@1000 under the name
recall@5000, and a silently clamped limit returns fewer hits than asked for. The bound,
10,000, is the reference's "supported maximum" (its tune accepts up to it and refuses
above), so commands copied from it keep working. groove.toml's ``[eval].k_values`` is
checked against the same bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from groove.errors import ConfigError

#: The most hits one search returns (and so the largest --limit or k any face accepts).
LIMIT_MAX = 10_000
#: Hits per search when no limit is given (search, serve; tune and eval default to max(k)).
DEFAULT_LIMIT = 10

Kind = Literal[
    "path",
    "file",
    "folder",
    "text",
    "whole",
    "fraction",
    "bool",
    "k_list",
    "seconds",
    "count",
    "texts",
    "mapping",
    "gate",
    "lexical",
    "port",
    "integer",
    "level",
    "several",
]
#: The values of a ``gate`` setting (the regression gate's modes).
GATE_MODES = ("threshold", "significant")
LexicalMode = Literal["auto", "trigram", "porter"]
#: The values of a ``lexical`` setting: which FTS table the bm25 leg reads (engine.lexical).
LEXICAL_MODES: tuple[LexicalMode, ...] = ("auto", "trigram", "porter")
Surface = Literal["cli", "api", "notebook"]
ALL: frozenset[Surface] = frozenset({"cli", "api", "notebook"})

_WANTED = {
    "path": "a path",
    "file": "a path",
    "folder": "a path",
    "text": "text",
    "whole": "a whole number >= 1",
    "fraction": "a number from 0 to 1",
    "bool": "true or false",
    "k_list": "a list of whole numbers like [1, 5, 10]",
    "seconds": "a number of seconds > 0",
    "count": "a whole number >= 0",
    "texts": "a list of texts",
    "mapping": "a mapping (a dict)",
    "gate": '"threshold" or "significant"',
    "lexical": '"auto", "trigram" or "porter"',
    "port": "a port number from 0 to 65535",
    "integer": "a whole number",
    "level": "a number between 0 and 1 (both excluded)",
    "several": "a whole number >= 2",
}


class _Refused(ValueError):
    def __init__(self, value: Any, wanted: str) -> None:
        super().__init__(wanted)
        self.value = value
        self.wanted = wanted


@dataclass(frozen=True)
class Setting:
    """One input: ``name`` is the API keyword and the notebook parameter.

    ``default`` is what the API and the notebooks use when the input is not given (None:
    groove.toml, else the built-in default). ``flag`` is the command-line option (None: no
    flag); a ``switch`` flag takes no value and, when it starts with ``--no-``, turns the
    setting off. ``surfaces`` says where the setting is accepted. On the command line
    the flag's default is None (groove.toml, else the library, decides), unless
    ``show_default``: then it is ``default``, shown in ``--help``; a ``required`` flag
    must be given. ``config_key`` is the groove.toml key a value not given falls back to
    (dotted: ``eval.k_values``); ``capped``: the value (each k of a list) is at most
    LIMIT_MAX (``at_most``). groove.resolve applies both, the same way for every face.
    ``bare``: the flag's value may be left out, and then is ``bare`` (``--file [PATH]``).
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
    # A flag that may be given without its value (``--file`` alone) takes this one.
    bare: str | None = None

    @property
    def param(self) -> str:
        """The click parameter (and command function argument) name."""
        if self.dest is not None:
            return self.dest
        assert self.flag is not None, self.name
        return self.flag.removeprefix("--").replace("-", "_")

    def parse(self, value: Any, *, source: str = "parameter") -> Any:
        """``value`` checked against the kind and limits; None stays None.

        A wrong value is a ConfigError (exit 2) worded for ``source``: ``parameter`` (a
        notebook parameter, given with ``-p``) or ``keyword`` (an argument of the API).
        """
        try:
            return _parse(self.kind, value)
        except _Refused as bad:
            hint = (
                f"pass it like -p {self.name} VALUE"
                if source == "parameter"
                else f"pass {self.name}= as {_WANTED[self.kind]}, or leave it out"
            )
            raise ConfigError(
                f"{source} {self.name} must be {bad.wanted}, got {bad.value!r}", hint
            ) from None


def _parse(kind: Kind, value: Any) -> Any:
    if value is None:
        return None
    if kind in ("path", "file", "folder"):
        if value == "":
            return None
        if not isinstance(value, str | Path) and not hasattr(value, "__fspath__"):
            raise _Refused(value, _WANTED[kind])
        return Path(value).expanduser()
    if kind == "text":
        if not isinstance(value, str):
            raise _Refused(value, _WANTED[kind])
        return value or None
    if kind == "whole":
        return _whole(value)
    if kind == "fraction":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise _Refused(value, _WANTED[kind])
        return float(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "seconds":
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise _Refused(value, _WANTED[kind])
        return float(value)
    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "texts":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
            raise _Refused(value, _WANTED[kind])
        return tuple(items)
    if kind == "mapping":
        if not isinstance(value, Mapping):
            raise _Refused(value, _WANTED[kind])
        return dict(value)
    if kind == "gate":
        if value not in GATE_MODES:
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "lexical":
        if not isinstance(value, str) or value not in LEXICAL_MODES:
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "port":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "level":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            raise _Refused(value, _WANTED[kind])
        return float(value)
    if kind == "several":
        if isinstance(value, bool) or not isinstance(value, int) or value < 2:
            raise _Refused(value, _WANTED[kind])
        return value
    return _k_list(value)


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Refused(value, _WANTED["whole"])
    return value


def _k_list(value: Any) -> tuple[int, ...]:
    if isinstance(value, str):
        return parse_k_list(value.strip().strip("[]"))
    items = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(items, list | tuple) or not items:
        raise _Refused(value, _WANTED["k_list"])
    return tuple(_whole(k) for k in items)


def parse_k_list(text: str) -> tuple[int, ...]:
    """Parse the ``--k 1,5,10`` flag (and a notebook's ``k_values`` given as text)."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or any(k < 1 for k in values):
        raise ConfigError(
            f"{{setting}} {text!r} is not a list of whole numbers >= 1",
            "write it like {give:1,5,10}",
            setting="k_values",
        )
    return values


def table(*settings: Setting) -> Mapping[str, Setting]:
    """A task's table: its settings by name, in declaration order."""
    return {s.name: s for s in settings}


def on(table: Mapping[str, Setting], surface: Surface) -> tuple[str, ...]:
    """The names of ``table`` accepted on ``surface``, in declaration order."""
    return tuple(name for name, s in table.items() if surface in s.surfaces)


def at_most(name: str, value: int) -> int:
    """``value`` if it is at most LIMIT_MAX, else a ConfigError naming the setting ``name``.

    The one rule for a limit and for each k, on every face (see the module's docstring).
    """
    if value > LIMIT_MAX:
        raise ConfigError(
            f"{{setting}} {value} exceeds the supported maximum {LIMIT_MAX}",
            f"pass {{give:N}} with N from 1 to {LIMIT_MAX}",
            setting=name,
        )
    return value
