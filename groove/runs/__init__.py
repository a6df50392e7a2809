"""One scored run as the history stores it: what every later step reads.

record (``RunRecord`` and ``QueryResult``: the per-query scores and the aggregate),
fingerprint (which runs compare), corpus (the corpus snapshot a run was measured on),
corpus_scan (that snapshot and the quote scan in one pass over an open index's rows; the
export to another engine records it too) and judged (what graded judgements say of a
run). No module here opens an index or loads a model. Import the submodules directly;
this package re-exports nothing.
"""
