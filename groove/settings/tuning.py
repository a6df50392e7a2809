"""groove tune: the sweep, its gates and an external retriever's window."""

from __future__ import annotations

from groove.settings import shared
from groove.settings.setting import Setting, table

# ---------------------------------------------------------------- groove tune

TUNE = table(
    shared.KB_PATH,
    shared.GOLDEN,
    shared.MODEL,
    shared.MODEL_PATH,
    shared.K_VALUES.but(help="Cut-offs (5 is always in)."),
    shared.LIMIT,
    shared.LEXICAL,
    shared.DB_PATH,
    shared.CONFIG,
    Setting(
        "tune_json",
        "file",
        "A saved tune result to show instead of measuring (the tune explorer).",
        surfaces=frozenset({"notebook"}),
    ),
    shared.RETRIEVER.but(
        help="Tune another engine's fusion over the legs its answers carry (docs/engines.md)."
    ),
    shared.RETRIEVER_OPTIONS.but(
        help="How to reach and read the retriever (as groove eval's retriever_options)."
    ),
    shared.RETRIEVER_NAME.but(
        help="The retriever's name in the report (default: the program, URL or file name)."
    ),
    shared.RETRIEVER_TIMEOUT.but(help="Per-query answer timeout of the retriever (default 30)."),
    shared.RETRIEVER_ALLOW_STALE_COPY.but(
        help="Tune over an engine's copy that differs from the local index instead of "
        "refusing it (docs/engines.md)."
    ),
    Setting(
        "family",
        "text",
        "With --retriever: the fusion family to sweep: rrf, weighted_rrf or convex.",
        flag="--family",
        default="rrf",
    ),
    Setting(
        "engine",
        "text",
        "With --retriever: write the recommendation for groove, elasticsearch, opensearch, "
        "qdrant, postgresql or lancedb (default: the retriever's kind, else groove).",
        flag="--engine",
    ),
    Setting(
        "window",
        "whole",
        "With --retriever: the deepest window swept (the retrieval's limit; default 100).",
        flag="--window",
        metavar="N",
        capped=True,
    ),
)
