"""One resolver for every task's settings: the value given, else groove.toml's, else the
declared default; then the rules: each capped value checked against LIMIT_MAX, and the
task's own (a limit taken from k, eval's retrieval cap).

Every face (the CLI, the API, the notebooks, ``serve``) gathers what its user gave into a
mapping by setting name (None: not given) and hands it, with the loaded Config, to the
task's ``resolve_settings`` (groove.evaluation.settings, groove.tuning.settings, ...),
which calls ``resolve`` with the task's table (groove.settings) and its rules. So a
setting is declared once, with its groove.toml key (``config_key``) and its bound
(``capped``), a task's rule is written once, as a function of the resolved values, and no
face or task spells out the fallback.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import fields
from typing import Any, ClassVar

from groove.config import Config
from groove.notes import Note
from groove.settings import DEFAULT_LIMIT, Setting, at_most

#: A rule of one task, run on the resolved ``values`` (by name; it may change them) with
#: the table: it returns the notes the user should read (a value it lowered, ...).
Rule = Callable[[dict[str, Any], Mapping[str, Setting]], Iterable[Note]]


def resolve(
    table: Mapping[str, Setting],
    config: Config,
    given: Mapping[str, Any],
    rules: Sequence[Rule] = (),
    notes: list[Note] | None = None,
) -> dict[str, Any]:
    """Every setting of ``table`` by name: ``given[name]`` unless absent, else the
    value of its ``config_key`` in ``config`` unless None, else its declared default;
    then ``refuse_above_the_bound`` and each of ``rules`` in turn, whose notes are added
    to ``notes``.

    A name ``table`` does not declare is a TypeError, as an unknown keyword of a function
    is: a face passed what no spec holds.
    """
    unknown = sorted(set(given) - set(table))
    if unknown:
        raise TypeError(f"undeclared setting(s): {', '.join(unknown)}")
    values: dict[str, Any] = {}
    for name, setting in table.items():
        value = given.get(name)
        if _absent(value) and setting.config_key is not None:
            value = config_value(config, setting.config_key)
        if _absent(value):
            value = setting.default
        values[name] = value
    for rule in (refuse_above_the_bound, *rules):
        found = list(rule(values, table))
        if notes is not None:
            notes.extend(found)
    return values


def refuse_above_the_bound(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """A capped value (each k of a list) above LIMIT_MAX is refused (``at_most``), in the
    table's order, whichever source it came from: the rule of every task."""
    for name, setting in table.items():
        value = values[name]
        if setting.capped and value is not None:
            for number in value if isinstance(value, tuple | list) else (value,):
                at_most(name, number)
    return []


def config_value(config: Config, key: str) -> Any:
    """The value of the groove.toml key ``key`` (``eval.k_values``, ``search.mmr.lambda``)
    in the loaded ``config`` (Config.value)."""
    return config.value(key)


def _absent(value: Any) -> bool:
    """None, or an empty text, list or mapping (an empty list of k or of headers)."""
    return value is None or (isinstance(value, str | tuple | list | dict) and not value)


def limit_from_k(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """A limit not given is the largest k (DEFAULT_LIMIT without any k), as the reference
    computes it: on the k as given, before any task rule changes them."""
    if values["limit"] is None:
        values["limit"] = max(values["k_values"], default=DEFAULT_LIMIT)
    return []


def limit_covers_k(values: dict[str, Any], table: Mapping[str, Setting]) -> list[Note]:
    """The limit is at least the largest k (a k deeper than the list would be empty)."""
    values["limit"] = max(values["limit"] or 0, max(values["k_values"], default=0))
    return []


class ByName:
    """A task's resolved settings (a frozen dataclass with a ``values`` field), read by
    name: ``settings["name"]`` is the field of that name when there is one, else the value
    as resolved, kept in ``values``. So a new setting of the task needs its declaration
    only, and the code that reads it."""

    #: The task's table and the name its KeyError says (EVAL, TUNE).
    TABLE: ClassVar[Mapping[str, Setting]]
    TABLE_NAME: ClassVar[str]
    values: Mapping[str, Any]

    def __getitem__(self, name: str) -> Any:
        """The resolved value of the setting ``name`` (its field, when it has one)."""
        if name not in self.TABLE:
            raise KeyError(f"{self.TABLE_NAME} declares no setting {name!r}")
        return getattr(self, name) if name in self.field_names() else self.values[name]

    @classmethod
    def field_names(cls) -> frozenset[str]:
        return frozenset(f.name for f in fields(cls))  # type: ignore[arg-type]

    @classmethod
    def split(cls, values: Mapping[str, Any]) -> dict[str, Any]:
        """The keywords that build the settings from the resolved ``values``: each value
        that has a field, and the rest as ``values``."""
        named = cls.field_names()
        return {
            **{name: value for name, value in values.items() if name in named},
            "values": {name: value for name, value in values.items() if name not in named},
        }
