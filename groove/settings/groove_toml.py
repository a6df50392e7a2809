"""groove.toml: every key the file may hold is a Setting, read through its kind.

The keys a task table holds (``kb_path``, ``[eval].k_values``, ``[search.mmr].lambda``, ...)
are declared there; the ones no face takes (the fusion constants, the parent retriever's
token bounds, the index's exclusions) are declared here, with their default, bounds and
help. ``GROOVE_TOML`` gathers them all by ``config_key``: groove.config reads the file
through it (unknown keys, the kind's rule, the bounds) and builds its dataclasses from
the values, so a default or a bound is written once, in its declaration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from groove.settings import shared
from groove.settings.commands import COMMANDS
from groove.settings.evaluation import EVAL
from groove.settings.judging import JUDGE, JUDGE_NAME
from groove.settings.setting import FILE_ONLY, Setting
from groove.settings.tuning import TUNE

#: The largest [search.fusion] window (candidates per leg).
FUSION_WINDOW_MAX = 10_000
#: Upper bound of [search.parent_retriever].max_expanded_tokens.
MAX_EXPANDED_TOKENS = 8192
#: The bounds of a bm25 column weight and of rrf_k.
_WEIGHT = (0.0, 1e6)


def _file(
    name: str, kind: str, help: str, key: str, default: object = None, **kw: object
) -> Setting:
    return Setting(name, kind, help, surfaces=FILE_ONLY, config_key=key, default=default, **kw)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the index

EXCLUDE_HEADINGS = _file(
    "exclude_headings",
    "texts",
    "Sections whose heading is one of these are not indexed.",
    "exclude_headings",
    default=(),
)
EXCLUDE_DIRS = _file(
    "exclude_dirs",
    "texts",
    "Folders of the knowledge base that are not indexed (default: the built-in list).",
    "exclude_dirs",
)
CONTEXTUAL = _file(
    "contextual",
    "bool",
    "Embed each chunk with its document's title and headings.",
    "contextual.enabled",
    default=False,
)

# ---------------------------------------------------------------- [search.fusion]

RRF_K = _file(
    "rrf_k", "number", "The RRF constant.", "search.fusion.rrf_k", 60.0, bounds=(1.0, 1e6)
)
BM25_HEADING_WEIGHT = _file(
    "bm25_heading_weight",
    "number",
    "bm25 weight of the heading column.",
    "search.fusion.bm25_heading_weight",
    2.0,
    bounds=_WEIGHT,
)
BM25_CONTEXT_WEIGHT = _file(
    "bm25_context_weight",
    "number",
    "bm25 weight of the context column.",
    "search.fusion.bm25_context_weight",
    1.0,
    bounds=_WEIGHT,
)
BM25_CONTENT_WEIGHT = _file(
    "bm25_content_weight",
    "number",
    "bm25 weight of the content column.",
    "search.fusion.bm25_content_weight",
    1.0,
    bounds=_WEIGHT,
)
FUSION_FAMILY = _file(
    "fusion_family",
    "family",
    "How the two legs are fused: rrf, weighted_rrf or convex (groove.fusion).",
    "search.fusion.family",
    "rrf",
)
FUSION_WINDOW = _file(
    "fusion_window",
    "whole",
    "Candidates per leg, as Elasticsearch's rank_window_size (default: groove's pool).",
    "search.fusion.window",
    bounds=(1, FUSION_WINDOW_MAX),
)
VECTOR_WEIGHT = _file(
    "vector_weight",
    "fraction",
    "Weight of the vector leg (the lexical leg gets 1 - that).",
    "search.fusion.vector_weight",
    0.5,
)
NORMALIZER = _file(
    "normalizer",
    "normalizer",
    "How the convex family normalises each leg's scores.",
    "search.fusion.normalizer",
    "minmax",
)

# ---------------------------------------------------------------- [search.parent_retriever]

WHOLE_DOC_THRESHOLD_TOKENS = _file(
    "whole_doc_threshold_tokens",
    "count",
    "A document up to this many tokens is returned whole.",
    "search.parent_retriever.whole_doc_threshold_tokens",
    100,
    bounds=(0, MAX_EXPANDED_TOKENS - 1),
)
MAX_EXPANDED_TOKENS_SETTING = _file(
    "max_expanded_tokens",
    "whole",
    "The most tokens a hit is widened to.",
    "search.parent_retriever.max_expanded_tokens",
    2000,
    bounds=(1, MAX_EXPANDED_TOKENS),
)

#: The keys only groove.toml holds, in the file's order.
FILE_SETTINGS = (
    EXCLUDE_HEADINGS,
    EXCLUDE_DIRS,
    CONTEXTUAL,
    RRF_K,
    BM25_HEADING_WEIGHT,
    BM25_CONTEXT_WEIGHT,
    BM25_CONTENT_WEIGHT,
    FUSION_FAMILY,
    FUSION_WINDOW,
    VECTOR_WEIGHT,
    NORMALIZER,
    WHOLE_DOC_THRESHOLD_TOKENS,
    MAX_EXPANDED_TOKENS_SETTING,
    JUDGE_NAME,
)


def _by_key(settings: Iterable[Setting]) -> dict[str, Setting]:
    """Each config_key's declaration; two tables that name one key share its declaration
    (the same kind, default and bounds: a per-task ``but`` changes only its wording)."""
    found: dict[str, Setting] = {}
    for setting in settings:
        key = setting.config_key
        if key is None:
            continue
        first = found.setdefault(key, setting)
        same = (first.kind, first.default, first.bounds) == (
            setting.kind,
            setting.default,
            setting.bounds,
        )
        assert same, f"{key} is declared twice, differently: {first} / {setting}"
    return found


#: Every groove.toml key and its declaration, by config_key (dotted: ``eval.k_values``).
GROOVE_TOML: Mapping[str, Setting] = _by_key(
    [
        shared.KB_PATH,
        shared.MODEL,
        shared.MODEL_PATH,
        shared.RERANKER,
        *FILE_SETTINGS,
        *(s for table in (*COMMANDS.values(), EVAL, TUNE, JUDGE) for s in table.values()),
    ]
)
