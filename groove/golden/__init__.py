"""The golden set, where every eval starts: the queries and what each expects.

queries (the golden YAML: load, validate, hash, default ids), judgements (the graded
judgements file beside it), findings and hit_paths (what is wrong with a golden file or
with the paths a retriever returned), paths (the golden file's paths against the corpus),
qrels (TREC / BEIR qrels and queries in and out).
Import the submodules directly; this package re-exports nothing.
"""
