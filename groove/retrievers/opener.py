"""Open the retriever a ``RetrieverSpec`` names.

Kept apart from ``spec.py``: every retriever module imports the spec, so the spec must not
import them back.
"""

from __future__ import annotations

from groove.retrievers.base import Retriever
from groove.retrievers.spec import RetrieverSpec


def open_retriever(spec: RetrieverSpec) -> Retriever:
    """Start (or open) the retriever ``spec`` names; close it when done."""
    if spec.kind == "command":
        from groove.retrievers.command import CommandRetriever

        return CommandRetriever(spec)
    if spec.kind == "http":
        from groove.retrievers.http import HttpRetriever

        return HttpRetriever(spec)
    if spec.kind == "postgresql":
        from groove.retrievers.backends.postgres import PostgresRetriever

        return PostgresRetriever(
            spec.target, spec.name, spec.options.timeout, ann_recall=spec.options.ann_recall
        )
    if spec.kind == "lancedb":
        from groove.retrievers.backends.lance import LanceRetriever

        return LanceRetriever(spec.target, spec.name, ann_recall=spec.options.ann_recall)
    from groove.retrievers.runfile import RunFileRetriever

    return RunFileRetriever(spec)
