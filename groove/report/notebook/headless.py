"""The one fact the notebook views need from the runner: whether a front end is there.

``groove notebook run`` sets ``HEADLESS_ENV`` in the kernel's environment; views that need
a live front end (the condition picker) then show their text form instead of creating
widgets nobody can draw or use. It sits beside the views, below the runner that imports
it, so the views never import the runner (and, through it, the CLI and the engine).
"""

from __future__ import annotations

import os

HEADLESS_ENV = "GROOVE_NOTEBOOK_RUNNER"


def headless() -> bool:
    """True in a kernel the headless runner started."""
    return bool(os.environ.get(HEADLESS_ENV))
