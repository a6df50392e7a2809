"""groove: measure whether retrieval over a Markdown knowledge base got better or worse.

The engine (index, search) and the measurements (eval, tune) are plain library calls that
return frozen dataclasses; the CLI, the notebooks and the CI runner only render them.
"""

__version__ = "0.1.0"
