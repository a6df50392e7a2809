"""External retrievers: measure a system groove did not build with the same golden set.

``groove eval --retriever SPEC`` hands the golden queries to one of three kinds, all behind
one contract (``docs/retrievers.md``): a program speaking JSON lines on its standard input
and output (``command:``), an HTTP endpoint (``http://``, ``https://``) or a precomputed
run file (``run:``). Each returns, per query, the ranked hits that groove then scores
exactly as it scores its own engine.

Import the submodules directly (``spec``, ``opener``, ``base``); this package re-exports
nothing.
"""
