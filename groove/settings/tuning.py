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
    Setting(
        "k_values",
        "k_list",
        "Cut-offs (5 is always in).",
        flag="--k",
        dest="k_text",
        metavar="1,5,10",
        config_key="eval.k_values",
        capped=True,
    ),
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
    Setting(
        "retriever",
        "text",
        "Tune another engine's fusion over the legs its answers carry (docs/engines.md).",
        flag="--retriever",
        metavar="SPEC",
    ),
    Setting(
        "retriever_options",
        "mapping",
        "How to reach and read the retriever (as groove eval's retriever_options).",
        surfaces=frozenset({"api", "notebook"}),
    ),
    Setting(
        "retriever_name",
        "text",
        "The retriever's name in the report (default: the program, URL or file name).",
        flag="--retriever-name",
    ),
    Setting(
        "retriever_timeout",
        "seconds",
        "Per-query answer timeout of the retriever (default 30).",
        flag="--retriever-timeout",
        metavar="SECONDS",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "retriever_allow_stale_copy",
        "bool",
        "Tune over an engine's copy that differs from the local index instead of refusing "
        "it (docs/engines.md).",
        flag="--allow-stale-copy",
        dest="retriever_allow_stale_copy",
        switch=True,
        default=False,
        surfaces=frozenset({"cli"}),
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
