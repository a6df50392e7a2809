"""`groove tune`: a guarded sweep of the RRF constant and the three bm25 column weights.

grid (the 384 conditions), table (per-query metrics for each condition), select (coordinate
descent and nested leave-one-query-out CV), stats (mean, paired SE, sign test), gates (the
five adoption gates) and simulation (the AU-16 / AU-68 studies behind the 3 x SE gate).
Import the submodules directly; this package re-exports nothing so that importing it stays cheap.
"""
