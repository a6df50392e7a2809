"""The settings several tasks share (the knowledge base, the model, the search pipeline)."""

from __future__ import annotations

from groove.settings.setting import Setting

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
