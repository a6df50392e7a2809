"""The kinds of settings: one registry entry per kind says everything a kind means.

Each ``KindRule`` holds, for one kind, the four things the faces ask of it: the wording of
what it wants (an API or notebook error: ``a whole number >= 1``), how a value handed to
the API or a notebook is read (``parse``), how groove.toml's value is read (``toml``: the
same check worded as the file's rule, paths against the file's folder) and the keywords
of its click option (``option``: the command line's type). A new kind is one entry here;
nothing else dispatches on the kind.

A setting's own ``bounds`` (``history_size`` 1 to 10000, ``rrf_k`` 1 to 1000000) narrow
its kind's, in groove.toml and in ``parse``; the command-line types keep the kind's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from groove.errors import ConfigError
from groove.fusion import FAMILIES, NORMALIZERS

#: The most hits one search returns (and so the largest --limit or k any face accepts).
LIMIT_MAX = 10_000
#: The values of a ``gate`` setting (the regression gate's modes).
GATE_MODES = ("threshold", "significant")
#: The values of a ``slice_by`` setting: slices from tags, or from tags and top folders.
SLICE_BY = ("tags", "folder")
LexicalMode = Literal["auto", "trigram", "porter"]
#: The values of a ``lexical`` setting: which FTS table the bm25 leg reads (engine.lexical).
LEXICAL_MODES: tuple[LexicalMode, ...] = ("auto", "trigram", "porter")

Bounds = tuple[float, float]


class Refused(ValueError):
    """A value a kind does not take; ``wanted`` words what it takes (for the API's error)."""

    def __init__(self, value: Any, wanted: str) -> None:
        super().__init__(wanted)
        self.value = value
        self.wanted = wanted


class TomlRule(ValueError):
    """A groove.toml value a kind does not take; ``rule`` is the file's wording of why."""

    def __init__(self, rule: str) -> None:
        super().__init__(rule)
        self.rule = rule


class Setting(Protocol):
    """What a kind reads of the setting it parses (groove.settings.setting.Setting; named by
    shape, since that module imports this one)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def bounds(self) -> Bounds | None: ...


#: ``(value, setting, folder of groove.toml) -> value``, raising TomlRule
TomlReader = Callable[[Any, Setting, Path], Any]


@dataclass(frozen=True)
class KindRule:
    """One kind: ``wanted`` (its wording), ``check`` (is this value one of it, as given to
    the API: ``value -> value``, raising ValueError), ``toml`` (groove.toml's reading) and
    ``option`` (the click keywords; the CLI imports click, this package does not)."""

    wanted: str
    check: Callable[[Any], Any]
    toml: TomlReader
    option: Callable[[], dict[str, Any]]
    #: The kind's own bounds (a setting's ``bounds`` narrow them); None: not a number.
    bounds: Bounds | None = None
    #: What it wants when a setting's bounds narrow it ("a whole number from 1 to 10000").
    ranged: str = "a number"
    #: How the command line's text is read where the click type leaves it text.
    from_flag: Callable[[str], Any] = lambda text: text
    #: The placeholder of a value in a hint (``-p golden PATH``).
    placeholder: str = "VALUE"
    #: An example, as its words on the command line, written as a JSON value (a
    #: retriever_options key in a hint); None: the example as it is.
    as_json: Callable[[list[str]], Any] | None = None
    #: The Python type the API and a notebook take, as an annotation (the generated
    #: signatures, groove.settings.signatures).
    annotation: str = "str"

    def parse(self, value: Any, bounds: Bounds | None) -> Any:
        """``value`` as the API or a notebook hands it, checked; None stays None."""
        if value is None:
            return None
        try:
            parsed = self.check(value)
        except Refused:
            raise
        except ValueError:
            raise Refused(value, self.wanted) from None
        if bounds is not None and parsed is not None and not bounds[0] <= parsed <= bounds[1]:
            raise Refused(value, f"{self.ranged} from {_show(bounds[0])} to {_show(bounds[1])}")
        return parsed


# ---------------------------------------------------------------- checks (the API's reading)


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float)


def _is_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int)


def _need(ok: bool) -> None:
    if not ok:
        raise ValueError


def _path(value: Any) -> Path | None:
    if value == "":
        return None
    _need(isinstance(value, str | Path) or hasattr(value, "__fspath__"))
    return Path(value).expanduser()


def _text(value: Any) -> str | None:
    _need(isinstance(value, str))
    return value or None


def _int_between(low: float, high: float = math.inf) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        _need(_is_int(value) and low <= value <= high)
        return int(value)

    return check


def _float_where(ok: Callable[[float], bool]) -> Callable[[Any], float]:
    def check(value: Any) -> float:
        _need(_is_number(value) and ok(value))
        return float(value)

    return check


def _bool(value: Any) -> bool:
    _need(isinstance(value, bool))
    return bool(value)


def _texts(value: Any) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    _need(isinstance(items, list | tuple) and all(isinstance(v, str) for v in items))
    return tuple(items)


def _mapping(value: Any) -> dict[str, Any]:
    _need(isinstance(value, Mapping))
    return dict(value)


def _one_of(values: tuple[str, ...]) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        _need(isinstance(value, str) and value in values)
        return str(value)

    return check


def _integer(value: Any) -> int:
    _need(_is_int(value))
    return int(value)


def _k_list(value: Any) -> tuple[int, ...]:
    if isinstance(value, str):
        return parse_k_list(value.strip().strip("[]"))
    items = [value] if _is_int(value) else value
    _need(isinstance(items, list | tuple) and bool(items))
    whole = KINDS["whole"]
    for k in items:
        if not _is_int(k) or k < 1:
            raise Refused(k, whole.wanted)
    return tuple(items)


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
            expected="a list of whole numbers >= 1",
            given=text,
        )
    return values


# ---------------------------------------------------------------- groove.toml's reading


def _show(value: float) -> str:
    """A bound as a person writes it: 1000000, 0.5."""
    return str(int(value)) if float(value).is_integer() else repr(value)


def _bounds(setting: Setting, kind: Bounds | None) -> Bounds:
    found = setting.bounds or kind
    assert found is not None, setting.name
    return found


def _toml_string(value: Any, setting: Setting, base: Path) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TomlRule("must be a non-empty string")
    return value


def _toml_path(value: Any, setting: Setting, base: Path) -> Path:
    text = _toml_string(value, setting, base)
    try:
        return base / Path(text).expanduser()
    except (RuntimeError, ValueError) as exc:  # unknown ~user, or a NUL byte
        raise TomlRule(f"is not a usable path ({exc})") from exc


def _toml_bool(value: Any, setting: Setting, base: Path) -> bool:
    if not isinstance(value, bool):
        raise TomlRule("must be true or false")
    return value


def _toml_whole(kind_low: float) -> TomlReader:
    def read(value: Any, setting: Setting, base: Path) -> int:
        lo, hi = _bounds(setting, (kind_low, math.inf))
        if not _is_int(value) or not lo <= value <= hi:
            upto = f" to {_show(hi)}" if math.isfinite(hi) else " or more"
            raise TomlRule(f"must be a whole number from {_show(lo)}{upto}")
        return int(value)

    return read


def _toml_number(value: Any, setting: Setting, base: Path) -> float:
    lo, hi = _bounds(setting, KINDS[setting.kind].bounds)
    if not _is_number(value):
        raise TomlRule("must be a number")
    # Compare before converting: TOML integers are unbounded and float() would overflow.
    if not lo <= value <= hi or not math.isfinite(float(value)):
        raise TomlRule(f"must be between {_show(lo)} and {_show(hi)}")
    return float(value)


def _toml_level(value: Any, setting: Setting, base: Path) -> float:
    level = _toml_number(value, setting, base)
    if not 0.0 < level < 1.0:
        raise TomlRule("must be above 0 and below 1")
    return level


def _toml_choice(values: tuple[str, ...], rule: str) -> TomlReader:
    def read(value: Any, setting: Setting, base: Path) -> str:
        if not isinstance(value, str) or value not in values:
            raise TomlRule(rule)
        return value

    return read


def _toml_texts(value: Any, setting: Setting, base: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise TomlRule("must be a list of non-empty strings")
    return tuple(value)


def _toml_k_list(value: Any, setting: Setting, base: Path) -> tuple[int, ...]:
    ok = isinstance(value, list) and all(_is_int(k) and 1 <= k <= LIMIT_MAX for k in value)
    if not ok or not value:
        raise TomlRule(f"must be a non-empty list of whole numbers from 1 to {LIMIT_MAX}")
    return tuple(value)


def _toml_pin(value: Any, setting: Setting, base: Path) -> str:
    if not isinstance(value, str) or not value:
        raise TomlRule("must be the name of a pinned run")
    return value


def _not_in_toml(value: Any, setting: Setting, base: Path) -> Any:
    raise AssertionError(f"{setting.name}: a {setting.kind} setting has no groove.toml key")


# ---------------------------------------------------------------- click's types


def _k_text(text: str) -> tuple[int, ...] | None:
    return parse_k_list(text) if text else None


def _no_type() -> dict[str, Any]:
    return {}


def _click(build: Callable[[Any], Any]) -> Callable[[], dict[str, Any]]:
    """The option keywords ``{"type": build(click)}``; click is imported when asked."""

    def option() -> dict[str, Any]:
        import click

        return {"type": build(click)}

    return option


def _click_path(**kw: Any) -> Callable[[], dict[str, Any]]:
    return _click(lambda click: click.Path(path_type=Path, **kw))


def _quoted(values: tuple[str, ...]) -> str:
    """``"a", "b" or "c"``"""
    words = [f'"{v}"' for v in values]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _at_least(low: int) -> KindRule:
    """A kind of whole numbers from ``low`` up."""
    return KindRule(
        f"a whole number >= {low}",
        _int_between(low),
        _toml_whole(low),
        _click(lambda click: click.IntRange(min=low)),
        ranged="a whole number",
        annotation="int",
    )


def _choice(values: tuple[str, ...], toml_words: str | None = None) -> KindRule:
    """A kind whose values are ``values``; groove.toml says ``must be "a", "b" or "c"``
    unless ``toml_words`` spells them otherwise (the fusion keys: ``a / b / c``)."""
    return KindRule(
        _quoted(values),
        _one_of(values),
        _toml_choice(values, "must be " + (toml_words or _quoted(values))),
        _click(lambda click: click.Choice(values)),
        annotation="Literal[" + ", ".join(f'"{v}"' for v in values) + "]",
    )


_FRACTION = _click(lambda click: click.FloatRange(0, 1))
_PATH = "str | os.PathLike[str]"

#: Every kind of setting, by the name a Setting declares it with.
KINDS: Mapping[str, KindRule] = {
    "path": KindRule(
        "a path", _path, _toml_path, _click_path(), placeholder="PATH", annotation=_PATH
    ),
    "file": KindRule(
        "a path",
        _path,
        _toml_path,
        _click_path(dir_okay=False),
        placeholder="PATH",
        annotation=_PATH,
    ),
    "folder": KindRule(
        "a path",
        _path,
        _toml_path,
        _click_path(file_okay=False),
        placeholder="PATH",
        annotation=_PATH,
    ),
    "text": KindRule(
        "text", _text, _toml_string, _no_type, as_json=lambda words: words[0] if words else None
    ),
    # a pinned run's name: text to the faces, worded as what it names in groove.toml
    "pin": KindRule("text", _text, _toml_pin, _no_type),
    "whole": _at_least(1),
    "count": _at_least(0),
    "several": _at_least(2),
    "integer": KindRule(
        "a whole number", _integer, _not_in_toml, _click(lambda click: int), annotation="int"
    ),
    "port": KindRule(
        "a port number from 0 to 65535",
        _int_between(0, 65535),
        _not_in_toml,
        _click(lambda click: click.IntRange(0, 65535)),
        annotation="int",
    ),
    "number": KindRule(
        "a number",
        _float_where(math.isfinite),
        _toml_number,
        _click(lambda click: float),
        annotation="float",
    ),
    "fraction": KindRule(
        "a number from 0 to 1",
        _float_where(lambda v: 0 <= v <= 1),
        _toml_number,
        _FRACTION,
        bounds=(0.0, 1.0),
        annotation="float",
    ),
    "level": KindRule(
        "a number between 0 and 1 (both excluded)",
        _float_where(lambda v: 0 < v < 1),
        _toml_level,
        _click(lambda click: click.FloatRange(0, 1, min_open=True, max_open=True)),
        bounds=(0.0, 1.0),
        annotation="float",
    ),
    "seconds": KindRule(
        "a number of seconds > 0",
        _float_where(lambda v: v > 0),
        _not_in_toml,
        _click(lambda click: click.FloatRange(min=0, min_open=True)),
        annotation="float",
    ),
    "bool": KindRule(
        "true or false", _bool, _toml_bool, _click(lambda click: click.BOOL), annotation="bool"
    ),
    "k_list": KindRule(
        "a list of whole numbers like [1, 5, 10]",
        _k_list,
        _toml_k_list,
        _no_type,
        from_flag=_k_text,
        annotation="Sequence[int]",
    ),
    "texts": KindRule(
        "a list of texts",
        _texts,
        _toml_texts,
        lambda: {"multiple": True, "default": ()},
        as_json=lambda words: words,
        annotation="Sequence[str]",
    ),
    "mapping": KindRule(
        "a mapping (a dict)", _mapping, _not_in_toml, _no_type, annotation="Mapping[str, Any]"
    ),
    "gate": _choice(GATE_MODES),
    "slice_by": _choice(SLICE_BY),
    "lexical": _choice(LEXICAL_MODES),
    "family": _choice(FAMILIES, " / ".join(FAMILIES)),
    "normalizer": _choice(NORMALIZERS, " / ".join(NORMALIZERS)),
}
