"""`groove tune`: a guarded sweep of the RRF constant and the three bm25 column weights.

grid (the 384 conditions), table (per-query metrics for each condition), select (coordinate
descent and nested leave-one-query-out CV), stats (mean, paired SE, sign test), gates (the
five adoption gates) and simulation (the AU-16 / AU-68 studies behind the 3 x SE gate,
named in docs/architecture.md, "Numbers that must stay bit-identical").
Import the submodules directly; this package re-exports nothing so that importing it stays cheap.

The package is also the public function ``groove.tune(kb_path, ...)`` (groove.api.tune):
importing a submodule binds the package as the attribute ``tune`` of ``groove``, over any
function of that name, so the package itself is made callable and forwards the call.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


def _api_tune() -> Any:
    # Looked up by name: the tune layer does not depend on the API layer above it.
    return importlib.import_module("groove.api").tune


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _api_tune()(*args, **kwargs)

    @property
    def __signature__(self) -> Any:
        import inspect

        return inspect.signature(_api_tune())


sys.modules[__name__].__class__ = _CallablePackage
