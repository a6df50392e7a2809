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
from pathlib import Path
from typing import Any, TypeVar, cast

from groove.settings import shared
from groove.settings.engine import INDEX, SEARCH
from groove.settings.evaluation import EVAL
from groove.settings.judging import GOLDEN_DOCTOR, JUDGE, POOL
from groove.settings.kinds import KINDS
from groove.settings.setting import Setting, Surface, on
from groove.settings.tuning import TUNE

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


# ---------------------------------------------------------------- the typed stub
# A type checker and an IDE read source, not a runtime signature: the keywords each API
# function gathers in ``**keywords`` are also written out as a TypedDict
# (groove/settings/keywords.py, generated from the tables by ``write_keywords``, ``make
# keywords``; tests/test_api.py checks that it is current).

#: Each API function's keywords: (its TypedDict, its table, what it writes out itself).
API_KEYWORDS: Mapping[str, tuple[str, Mapping[str, Setting], tuple[str, ...]]] = {
    "index": ("IndexKeywords", INDEX, ("kb_path", "config")),
    "search": ("SearchKeywords", SEARCH, ("kb_path", "config")),
    "evaluate": ("EvaluateKeywords", EVAL, ("kb_path", "golden", "config")),
    "tune": ("TuneKeywords", TUNE, ("kb_path", "golden", "config")),
    "pool": ("PoolKeywords", POOL, ("kb_path", "golden", "config")),
    "golden_doctor": ("GoldenDoctorKeywords", GOLDEN_DOCTOR, ("kb_path", "golden", "config")),
    "judge": ("JudgeKeywords", JUDGE, ("kb_path", "golden", "config")),
}
KEYWORDS_MODULE = Path(__file__).with_name("keywords.py")
_HEAD = '''"""The keywords of the API's functions, for type checkers and IDEs (generated).

Written by ``make keywords`` (groove.settings.signatures.write_keywords) from the tables
in groove.settings; do not edit. At run time the signatures come from ``offers``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

__all__ = [{names}
]
'''


def keywords_module() -> str:
    """The text of groove/settings/keywords.py: one TypedDict (``total=False``) per API
    function, a key for each keyword it gathers, typed as ``offers`` types it; the search
    pipeline's keywords, which several take, are one TypedDict they extend, and so are
    the keywords of a function another extends (judge: pool's and ``by``)."""
    names = sorted([*(t for t, _, _ in API_KEYWORDS.values()), "PipelineKeywords"])
    parts = [_HEAD.format(names="".join(f'\n    "{name}",' for name in names))]
    pipeline = [f"{s.name}: {annotation(s)}" for s in shared.PIPELINE_SETTINGS]
    classes: dict[str, list[str]] = {"PipelineKeywords": pipeline}
    parts.append(_typed_dict("PipelineKeywords", ["TypedDict"], pipeline))
    for typed, table, written in API_KEYWORDS.values():
        keys = [f"{n}: {annotation(table[n])}" for n in on(table, "api") if n not in written]
        bases = [t for t, k in classes.items() if t != "PipelineKeywords" and keys[: len(k)] == k]
        bases = bases[:1] or (["PipelineKeywords"] if set(pipeline) <= set(keys) else [])
        inherited = {key for base in bases for key in classes[base]}
        classes[typed] = keys
        parts.append(
            _typed_dict(typed, bases or ["TypedDict"], [k for k in keys if k not in inherited])
        )
    return "\n".join(parts)


def _typed_dict(name: str, bases: list[str], keys: list[str]) -> str:
    body = "".join(f"\n    {key}" for key in keys)
    return f"\nclass {name}({', '.join(bases)}, total=False):{body}\n"


def write_keywords() -> None:
    KEYWORDS_MODULE.write_text(keywords_module(), encoding="utf-8")
