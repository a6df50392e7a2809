"""External retrievers: measure a system groove did not build with the same golden set.

``groove eval --retriever SPEC`` hands the golden queries to one of three kinds, all behind
one contract (``docs/retrievers.md``): a program speaking JSON lines on its standard input
and output (``command:``), an HTTP endpoint (``http://``, ``https://``) or a precomputed
run file (``run:``). Each returns, per query, the ranked hits that groove then scores
exactly as it scores its own engine.
"""

from groove.retrievers.base import Retriever, RetrieverQuery
from groove.retrievers.opener import open_retriever
from groove.retrievers.spec import (
    RetrieverOptions,
    RetrieverSpec,
    parse_spec,
)

__all__ = [
    "Retriever",
    "RetrieverOptions",
    "RetrieverQuery",
    "RetrieverSpec",
    "open_retriever",
    "parse_spec",
]
