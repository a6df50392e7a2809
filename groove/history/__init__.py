"""Runs over time: the history file, the baseline a run is compared with, and how a
metric moved between two runs.

history (read and append under a lock, the byte cap, pins), baseline (which run is the
baseline; ``groove baseline``), change (same / up / down / noise), and the views shared by
a run, a comparison and a history: card (the repr / Jupyter card) and frames (the
DataFrames). They sit here because ``History`` itself shows them. Import the submodules
directly; this package re-exports nothing.
"""
