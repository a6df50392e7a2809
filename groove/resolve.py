"""One resolver for every task's settings: the value given, else groove.toml's, else the
declared default; each capped value checked against LIMIT_MAX.

Every face (the CLI, the API, the notebooks) gathers what its user gave into a mapping
by setting name (None: not given) and hands it, with the loaded Config, to the task's
``resolve_settings`` (groove.evaluation.settings, groove.tuning.settings), which calls
``resolve`` with the task's table (groove.settings) and keeps only the rules that really
are the task's own. So a setting is declared once, with its groove.toml key
(``config_key``) and its bound (``capped``), and no face or task spells out the fallback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groove.config import Config, attribute_path
from groove.settings import Setting, at_most


def resolve(
    table: Mapping[str, Setting], config: Config, given: Mapping[str, Any]
) -> dict[str, Any]:
    """Every setting of ``table`` by name: ``given[name]`` unless absent, else the
    value of its ``config_key`` in ``config`` unless None, else its declared default.

    A capped value (each k of a list) above LIMIT_MAX is refused (``at_most``), in the
    table's order, whichever source it came from. A name ``table`` does not declare is a
    TypeError, as an unknown keyword of a function is: a face passed what no spec holds.
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
        if setting.capped and value is not None:
            for number in value if isinstance(value, tuple | list) else (value,):
                at_most(name, number)
        values[name] = value
    return values


def config_value(config: Config, key: str) -> Any:
    """The value of the groove.toml key ``key`` (``eval.k_values``, ``search.mmr.lambda``)
    in the loaded ``config`` (groove.config.attribute_path)."""
    found: Any = config
    for part in attribute_path(key):
        found = getattr(found, part)
    return found


def _absent(value: Any) -> bool:
    """None, or an empty text, list or mapping (an empty list of k or of headers)."""
    return value is None or (isinstance(value, str | tuple | list | dict) and not value)
