"""The eval run: one golden set through a retriever, scored and set against its baseline.

settings (flags over groove.toml), run (groove's own engine; ``prepare`` and ``save``),
external (a retriever groove did not build), verdict (score the hits, choose the baseline, apply the
gate), gate_status (whether the gate could be applied) and result (``EvalRun``). The layers
below hold what a run is made of: groove.golden, groove.runs, groove.retrievers,
groove.history, groove.stats, groove.explain. Import the submodules directly; this package
re-exports nothing.
"""
