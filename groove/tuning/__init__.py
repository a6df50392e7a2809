"""The package behind ``groove.tune``: a guarded sweep of rrf_k and the bm25 column weights.

grid (the 384 conditions), table (per-query metrics for each condition), select (coordinate
descent and nested leave-one-query-out CV), stats (mean, paired SE, sign test), gates (the
five adoption gates). The AU-16 / AU-68 studies behind the 3 x SE gate are research code,
kept in tests/helpers/tune_simulation.py (docs/architecture.md, "Numbers that must stay
bit-identical").
Import the submodules directly; this package re-exports nothing so that importing it stays
cheap. The public function is ``groove.tune`` (groove.api.tune); the package is named
``tuning`` as ``evaluation`` is beside ``groove.evaluate``, so that the two never share a name.
"""
