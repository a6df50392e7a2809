"""Why an expected answer was missed (``eval --explain``).

attribution (the causes and their types, what renderers import), explain (groove's own
index: where each expected chunk stands in each leg, and under which grid conditions it
would come within k) and legs (the same from another engine's per-leg scores). Import the
submodules directly; this package re-exports nothing.
"""
