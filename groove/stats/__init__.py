"""Statistics over scored runs: is a difference real, and does the gate trip.

significance (paired intervals, sign-flip p-values, Holm), familywise (the gate's one-sided
max-T drop test), gate (the ``threshold`` and ``significant`` regression gates) and compare
(many runs against a baseline: ``groove compare``, ``groove.compare``). Import the
submodules directly; this package re-exports nothing.
"""
