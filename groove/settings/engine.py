"""The engine's commands: index, search, model prepare, serve and export."""

from __future__ import annotations

from groove.settings import shared
from groove.settings.setting import CLI_ONLY, DEFAULT_LIMIT, LIMIT_MAX, Setting, switch, table

# ---------------------------------------------------------------- groove index / search
# (their command-line options are generated from these tables, but for the presentation
# options --quiet and --format, written in groove/cli/engine_cmds.py)

INDEX = table(
    shared.KB_PATH,
    shared.DB_PATH,
    shared.FORCE,
    shared.MODEL,
    shared.MODEL_PATH,
    shared.CONFIG,
    # The index's own mode (used when groove.toml names none): a build keeps the recorded
    # one, --force included, because it is part of the eval fingerprint.
    shared.LEXICAL.but(
        help="Record this lexical mode in the index (used when groove.toml names none); "
        "without it the recorded mode is kept, with --force too.",
        surfaces=frozenset({"cli", "api"}),
        config_key=None,
    ),
)

SEARCH = table(
    shared.KB_PATH,
    shared.LIMIT.but(help=f"Hits, 1 to {LIMIT_MAX}.", default=DEFAULT_LIMIT, show_default=True),
    shared.RERANKER,
    *shared.PIPELINE_SETTINGS,
    shared.DB_PATH,
    shared.MODEL,
    shared.MODEL_PATH,
    shared.CONFIG,
)

MODEL_PREPARE = table(
    shared.FORCE.but(help="Rebuild the ONNX file even if it exists.", surfaces=CLI_ONLY),
    switch(
        "int8",
        "--int8",
        "Also write an int8-quantised copy (model minilm-int8: faster, slightly less exact; "
        "an index built with it records that model).",
        surfaces=CLI_ONLY,
    ),
    shared.CONFIG,
)

# ---------------------------------------------------------------- groove serve

SERVE = table(
    shared.KB_PATH,
    shared.DB_PATH,
    shared.MODEL,
    shared.MODEL_PATH,
    shared.RERANKER,
    *shared.PIPELINE_SETTINGS,
    Setting(
        "host",
        "text",
        "Address to bind.",
        flag="--host",
        default="127.0.0.1",
        show_default=True,
        surfaces=CLI_ONLY,
    ),
    shared.PORT.but(
        help="Port to listen on (0 picks a free one).", default=8765, show_default=True
    ),
    Setting(
        "threads",
        "count",
        "onnxruntime threads for embedding queries (0: one per core). Requests in flight "
        "are embedded in small batches, which one thread runs best (docs/performance.md).",
        flag="--threads",
        default=1,
        show_default=True,
        surfaces=CLI_ONLY,
    ),
    shared.CONFIG,
)

# ---------------------------------------------------------------- groove export

EXPORT = table(
    shared.KB_PATH,
    shared.DB_PATH,
    Setting(
        "to",
        "text",
        "postgresql://USER@HOST:PORT/DB[?table=NAME] or lancedb:///PATH[?table=NAME].",
        flag="--to",
        dest="target",
        metavar="URL",
        surfaces=CLI_ONLY,
    ),
    switch(
        "replace",
        "--replace",
        "Drop a table of that name that groove did not write (a groove export is replaced "
        "without it).",
        surfaces=CLI_ONLY,
    ),
    shared.CONFIG,
)
