"""The keywords of an API function and the parameters of a notebook's run cell, taken from
a task's table.

``offers(table, surface)`` decorates a function that writes out only what no setting
declares (``progress``) or what it takes by position (``kb_path``), and gathers the rest in
``**settings``. Its signature, what ``help()``, Jupyter's tooltip and ``inspect`` show, gains
every setting of ``table`` accepted on ``surface``: the setting's name, its type (its kind's
``annotation``) and its face default. A call binds to that signature, so a keyword no
setting declares is the TypeError Python raises for a function that does not take it, and
the function receives every declared setting in ``**settings`` (one left out: its face
default). A new setting is thus offered as a keyword and as a notebook parameter by its
declaration alone; checking its value stays the function's (``Setting.parse``), so that
each face words a refusal its own way.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from groove.settings.kinds import KINDS
from groove.settings.setting import Setting, Surface, on

F = TypeVar("F", bound=Callable[..., Any])


def annotation(setting: Setting) -> str:
    """The type a face takes for ``setting``: its kind's, or None too when that is its
    face default (not given: groove.toml, else the declared default, decides)."""
    kind = KINDS[setting.kind].annotation
    return kind if setting.face_default is not None else f"{kind} | None"


def parameter(setting: Setting) -> inspect.Parameter:
    """``setting`` as a keyword-only parameter: its name, face default and type."""
    return inspect.Parameter(
        setting.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=setting.face_default,
        annotation=annotation(setting),
    )


def offered(
    own: inspect.Signature, table: Mapping[str, Setting], surface: Surface
) -> inspect.Signature:
    """``own`` with the settings of ``table`` accepted on ``surface`` that it does not write
    out, after its positional parameters and before its own keywords; ``**settings`` goes."""
    written = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    names = {p.name for p in written}
    first = [p for p in written if p.kind is not p.KEYWORD_ONLY]
    declared = [parameter(table[name]) for name in on(table, surface) if name not in names]
    last = [p for p in written if p.kind is p.KEYWORD_ONLY]
    return own.replace(parameters=[*first, *declared, *last])


def offers(table: Mapping[str, Setting], surface: Surface) -> Callable[[F], F]:
    """The decorator (see the module's docstring)."""

    def wrap(function: F) -> F:
        signature = offered(inspect.signature(function), table, surface)

        @functools.wraps(function)
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:  # as Python words it: f() got an unexpected keyword ...
                raise TypeError(f"{function.__name__}() {exc}") from None
            bound.apply_defaults()
            return function(**bound.arguments)

        call.__signature__ = signature  # type: ignore[attr-defined]
        return cast(F, call)

    return wrap
