"""The settings several tasks share (the knowledge base, the model, the search pipeline)."""

from __future__ import annotations

from groove.settings.setting import CLI_ONLY, Setting, switch

KB_PATH = Setting(
    "kb_path",
    "path",
    "Folder of the knowledge base (or kb_path in groove.toml).",
    flag="--kb-path",
    config_key="kb_path",
)
DB_PATH = Setting(
    "db_path",
    "file",
    "Index database (default: <parent of KB>/.groove.db).",
    flag="--db",
    dest="db_path",
    surfaces=frozenset({"cli", "api"}),
)
MODEL = Setting(
    "model",
    "text",
    "Embedding model name (default: the index's model).",
    flag="--model",
    config_key="model",
)
MODEL_PATH = Setting(
    "model_path",
    "folder",
    "Local folder with model.onnx and tokenizer files.",
    flag="--model-path",
    surfaces=frozenset({"cli", "api"}),
    config_key="model_path",
)
GOLDEN = Setting(
    "golden",
    "file",
    "Golden YAML (default: [eval].golden, else <kb>/.groove-eval.yml).",
    flag="--golden",
    config_key="eval.golden",
)
LIMIT = Setting(
    "limit",
    "whole",
    "Hits per query.",
    flag="--limit",
    capped=True,
)
CONFIG = Setting(
    "config",
    "file",
    "groove.toml to use (default: ./groove.toml, then the git root's).",
    flag="--config",
    metavar="FILE",
    # On the CLI it is global: ``groove --config X CMD`` or ``groove CMD --config X``
    # (groove.cli adds it to every command; the commands read it from the context).
)
MMR = Setting(
    "mmr",
    "bool",
    "Diversify results with MMR (overrides [search.mmr]).",
    flag="--mmr",
    metavar="BOOL",
    config_key="search.mmr.enabled",
    default=False,
)
MMR_LAMBDA = Setting(
    "mmr_lambda",
    "fraction",
    "MMR relevance weight.",
    flag="--mmr-lambda",
    config_key="search.mmr.lambda",
    default=0.7,
)
MMR_SAME_DOC_PENALTY = Setting(
    "mmr_same_doc_penalty",
    "fraction",
    "MMR penalty for a second hit from one document, 0..1.",
    flag="--mmr-same-doc-penalty",
    config_key="search.mmr.same_doc_penalty",
    default=0.0,
)
PARENT_RETRIEVER = Setting(
    "parent_retriever",
    "bool",
    "Widen hits to their section (overrides [search.parent_retriever]).",
    flag="--parent-retriever",
    metavar="BOOL",
    config_key="search.parent_retriever.enabled",
    default=False,
)

RERANKER = Setting(
    "reranker",
    "text",
    "Cross-encoder model name, or none.",
    flag="--reranker",
    config_key="reranker",
)
LEXICAL = Setting(
    "lexical",
    "lexical",
    "Full-text index of the bm25 leg: auto (porter for Latin-script queries, else trigram), "
    "trigram or porter (default: [search] lexical, else the index's mode).",
    flag="--lexical",
    config_key="search.lexical",
)
#: The per-call settings of the search pipeline (groove.engine.search.build_options's
#: keywords), taken by search, eval and serve.
PIPELINE_SETTINGS = (MMR, MMR_LAMBDA, MMR_SAME_DOC_PENALTY, PARENT_RETRIEVER, LEXICAL)
PIPELINE = tuple(setting.name for setting in PIPELINE_SETTINGS)

K_VALUES = Setting(
    "k_values",
    "k_list",
    "Cut-offs for recall/nDCG.",
    flag="--k",
    dest="k_text",
    metavar="1,5,10",
    config_key="eval.k_values",
    capped=True,
    default=(1, 5, 10),
)
HISTORY = switch("history", "--no-history", "Neither read nor write the history.")
FORCE = switch(
    "force",
    "--force",
    "Rebuild from scratch (re-embed every chunk).",
    surfaces=frozenset({"cli", "api"}),
)
PORT = Setting("port", "port", "Port for JupyterLab.", flag="--port", surfaces=CLI_ONLY)
OUT = Setting(
    "out",
    "file",
    "Write the candidates to this .csv or .jsonl file, to judge elsewhere.",
    flag="--out",
    surfaces=CLI_ONLY,
)

# ---------------------------------------------------------------- another retriever
# Another retriever instead of groove's engine (docs/retrievers.md), for eval, tune and
# the pool. The CLI spells its options out as flags; the API and the notebook take them
# as one mapping.

RETRIEVER = Setting(
    "retriever",
    "text",
    "Measure another retriever: command:PROGRAM [ARGS...], http(s)://URL or run:FILE "
    "(docs/retrievers.md).",
    flag="--retriever",
    metavar="SPEC",
)
RETRIEVER_OPTIONS = Setting(
    "retriever_options",
    "mapping",
    "How to reach and read the retriever: name, headers, timeout, concurrency, "
    "retries, body, hits, fields.",
    surfaces=frozenset({"api", "notebook"}),
)
RETRIEVER_NAME = Setting(
    "retriever_name",
    "text",
    "Its name in the fingerprint, kept across edits of its script (default: the whole "
    "command line with a hash of its files, the URL, or the run file's path and hash).",
    flag="--retriever-name",
)
RETRIEVER_TIMEOUT = Setting(
    "retriever_timeout",
    "seconds",
    "Per-query answer timeout (default 30).",
    flag="--retriever-timeout",
    metavar="SECONDS",
    surfaces=CLI_ONLY,
)
RETRIEVER_ALLOW_STALE_COPY = switch(
    "retriever_allow_stale_copy",
    "--allow-stale-copy",
    "Measure an engine's copy that differs from the local index (recording the copy's "
    "corpus) instead of refusing it (docs/engines.md).",
    dest="retriever_allow_stale_copy",
    surfaces=CLI_ONLY,
)
RETRIEVER_ANN_RECALL = switch(
    "retriever_ann_recall",
    "--ann-recall",
    "Also run each query's vector leg with exact search on PostgreSQL or LanceDB and report "
    "the approximate leg's recall@k against it (docs/engines.md).",
    dest="retriever_ann_recall",
    surfaces=CLI_ONLY,
)
#: How eval (and the pool, which reads runs the same way) reaches a retriever.
RETRIEVER_SETTINGS = (
    RETRIEVER,
    RETRIEVER_OPTIONS,
    RETRIEVER_NAME,
    Setting(
        "retriever_headers",
        "texts",
        "HTTP header; $VAR takes the value from the environment (repeatable).",
        flag="--retriever-header",
        dest="retriever_headers",
        metavar="'NAME: VALUE'",
        surfaces=CLI_ONLY,
    ),
    RETRIEVER_TIMEOUT,
    RETRIEVER_ALLOW_STALE_COPY,
    RETRIEVER_ANN_RECALL,
    Setting(
        "retriever_concurrency",
        "whole",
        "HTTP requests in flight (default 4).",
        flag="--retriever-concurrency",
        surfaces=CLI_ONLY,
    ),
    Setting(
        "retriever_retries",
        "count",
        "HTTP retries on connection errors and 5xx (default 3).",
        flag="--retriever-retries",
        surfaces=CLI_ONLY,
    ),
    Setting(
        "retriever_body",
        "text",
        'HTTP request template with "{{query}}", "{{limit}}", "{{id}}" values.',
        flag="--retriever-body",
        metavar="JSON",
        surfaces=CLI_ONLY,
    ),
    Setting(
        "retriever_hits",
        "text",
        "Where the hit list is in an HTTP answer (default hits; OpenSearch: hits.hits).",
        flag="--retriever-hits",
        metavar="PATH",
        surfaces=CLI_ONLY,
    ),
    Setting(
        "retriever_fields",
        "texts",
        "Where path / heading / score sit in a hit, e.g. path=_source.path (repeatable).",
        flag="--retriever-field",
        dest="retriever_fields",
        metavar="NAME=PATH",
        surfaces=CLI_ONLY,
    ),
)
