"""Every setting of ``groove eval``, ``groove tune`` and the report notebooks, declared once.

A ``Setting`` names one input with its kind, its limits, its help text, its command-line
flag and where it is accepted. Everything else is derived from this table:

* the click options of every ``groove`` command (``COMMANDS`` maps each command to its
  table; presentation options such as ``--format`` aside), built by
  ``groove.cli.common.command_options`` / ``setting_options``;
* the check of the notebooks' parameters (``groove.notebooks.kernel``) and of the keywords
  of ``groove.evaluate`` / ``groove.tune`` (``Setting.parse``);
* tests that compare the notebooks' parameters cells and the API signatures with it.

One rule for the size of a result list, the same on every face (CLI, API, notebook,
``serve``) and in every task (search, eval, tune): ``limit`` and every k are whole numbers
from 1 to ``LIMIT_MAX``; a value above it is refused (``at_most``), never lowered. Refusing
is the one rule that cannot surprise: a lowered k would report recall@1000 under the name
recall@5000, and a silently clamped limit returns fewer hits than asked for. The bound,
10,000, is the reference's "supported maximum" (its tune accepts up to it and refuses
above), so commands copied from it keep working. groove.toml's ``[eval].k_values`` is
checked against the same bound.

This module imports nothing heavy: the CLI reads it to build ``groove --help``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from groove import errors
from groove.errors import ConfigError

#: The most hits one search returns (and so the largest --limit or k any face accepts).
LIMIT_MAX = 10_000
#: Hits per search when no limit is given (search, serve; tune and eval default to max(k)).
DEFAULT_LIMIT = 10

Kind = Literal[
    "path",
    "file",
    "folder",
    "text",
    "whole",
    "fraction",
    "bool",
    "k_list",
    "seconds",
    "count",
    "texts",
    "mapping",
    "gate",
    "lexical",
    "port",
    "integer",
    "level",
    "several",
]
#: The values of a ``gate`` setting (the regression gate's modes).
GATE_MODES = ("threshold", "significant")
LexicalMode = Literal["auto", "trigram", "porter"]
#: The values of a ``lexical`` setting: which FTS table the bm25 leg reads (engine.lexical).
LEXICAL_MODES: tuple[LexicalMode, ...] = ("auto", "trigram", "porter")
Surface = Literal["cli", "api", "notebook"]
ALL: frozenset[Surface] = frozenset({"cli", "api", "notebook"})

_WANTED = {
    "path": "a path",
    "file": "a path",
    "folder": "a path",
    "text": "text",
    "whole": "a whole number >= 1",
    "fraction": "a number from 0 to 1",
    "bool": "true or false",
    "k_list": "a list of whole numbers like [1, 5, 10]",
    "seconds": "a number of seconds > 0",
    "count": "a whole number >= 0",
    "texts": "a list of texts",
    "mapping": "a mapping (a dict)",
    "gate": '"threshold" or "significant"',
    "lexical": '"auto", "trigram" or "porter"',
    "port": "a port number from 0 to 65535",
    "integer": "a whole number",
    "level": "a number between 0 and 1 (both excluded)",
    "several": "a whole number >= 2",
}


class _Refused(ValueError):
    def __init__(self, value: Any, wanted: str) -> None:
        super().__init__(wanted)
        self.value = value
        self.wanted = wanted


@dataclass(frozen=True)
class Setting:
    """One input: ``name`` is the API keyword and the notebook parameter.

    ``default`` is what the API and the notebooks use when the input is not given (None:
    groove.toml, else the built-in default). ``flag`` is the command-line option (None: no
    flag); a ``switch`` flag takes no value and, when it starts with ``--no-``, turns the
    setting off. ``surfaces`` says where the setting is accepted. On the command line
    the flag's default is None (groove.toml, else the library, decides), unless
    ``show_default``: then it is ``default``, shown in ``--help``; a ``required`` flag
    must be given. ``config_key`` is the groove.toml key a value not given falls back to
    (dotted: ``eval.k_values``); ``capped``: the value (each k of a list) is at most
    LIMIT_MAX (``at_most``). groove.resolve applies both, the same way for every face.
    """

    name: str
    kind: Kind
    help: str
    flag: str | None = None
    dest: str | None = None
    metavar: str | None = None
    switch: bool = False
    default: Any = None
    surfaces: frozenset[Surface] = ALL
    show_default: bool = False
    required: bool = False
    config_key: str | None = None
    capped: bool = False

    @property
    def param(self) -> str:
        """The click parameter (and command function argument) name."""
        if self.dest is not None:
            return self.dest
        assert self.flag is not None, self.name
        return self.flag.removeprefix("--").replace("-", "_")

    def parse(self, value: Any, *, source: str = "parameter") -> Any:
        """``value`` checked against the kind and limits; None stays None.

        A wrong value is a ConfigError (exit 2) worded for ``source``: ``parameter`` (a
        notebook parameter, given with ``-p``) or ``keyword`` (an argument of the API).
        """
        try:
            return _parse(self.kind, value)
        except _Refused as bad:
            hint = (
                f"pass it like -p {self.name} VALUE"
                if source == "parameter"
                else f"pass {self.name}= as {_WANTED[self.kind]}, or leave it out"
            )
            raise ConfigError(
                f"{source} {self.name} must be {bad.wanted}, got {bad.value!r}", hint
            ) from None


def _parse(kind: Kind, value: Any) -> Any:
    if value is None:
        return None
    if kind in ("path", "file", "folder"):
        if value == "":
            return None
        if not isinstance(value, str | Path) and not hasattr(value, "__fspath__"):
            raise _Refused(value, _WANTED[kind])
        return Path(value).expanduser()
    if kind == "text":
        if not isinstance(value, str):
            raise _Refused(value, _WANTED[kind])
        return value or None
    if kind == "whole":
        return _whole(value)
    if kind == "fraction":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise _Refused(value, _WANTED[kind])
        return float(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "seconds":
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise _Refused(value, _WANTED[kind])
        return float(value)
    if kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "texts":
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list | tuple) or not all(isinstance(v, str) for v in items):
            raise _Refused(value, _WANTED[kind])
        return tuple(items)
    if kind == "mapping":
        if not isinstance(value, Mapping):
            raise _Refused(value, _WANTED[kind])
        return dict(value)
    if kind == "gate":
        if value not in GATE_MODES:
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "lexical":
        if not isinstance(value, str) or value not in LEXICAL_MODES:
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "port":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Refused(value, _WANTED[kind])
        return value
    if kind == "level":
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            raise _Refused(value, _WANTED[kind])
        return float(value)
    if kind == "several":
        if isinstance(value, bool) or not isinstance(value, int) or value < 2:
            raise _Refused(value, _WANTED[kind])
        return value
    return _k_list(value)


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Refused(value, _WANTED["whole"])
    return value


def _k_list(value: Any) -> tuple[int, ...]:
    if isinstance(value, str):
        return parse_k_list(value.strip().strip("[]"))
    items = [value] if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(items, list | tuple) or not items:
        raise _Refused(value, _WANTED["k_list"])
    return tuple(_whole(k) for k in items)


def parse_k_list(text: str) -> tuple[int, ...]:
    """Parse the ``--k 1,5,10`` flag (and a notebook's ``k_values`` given as text)."""
    try:
        values = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        values = ()
    if not values or any(k < 1 for k in values):
        raise ConfigError(
            f"{{setting}} {text!r} is not a list of whole numbers >= 1",
            "write it like {give:1,5,10}",
            setting="k_values",
        )
    return values


def _table(*settings: Setting) -> Mapping[str, Setting]:
    return {s.name: s for s in settings}


# ---------------------------------------------------------------- shared

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
)
MMR_LAMBDA = Setting(
    "mmr_lambda",
    "fraction",
    "MMR relevance weight.",
    flag="--mmr-lambda",
    config_key="search.mmr.lambda",
)
MMR_SAME_DOC_PENALTY = Setting(
    "mmr_same_doc_penalty",
    "fraction",
    "MMR penalty for a second hit from one document, 0..1.",
    flag="--mmr-same-doc-penalty",
    config_key="search.mmr.same_doc_penalty",
)
PARENT_RETRIEVER = Setting(
    "parent_retriever",
    "bool",
    "Widen hits to their section (overrides [search.parent_retriever]).",
    flag="--parent-retriever",
    metavar="BOOL",
    config_key="search.parent_retriever.enabled",
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
PIPELINE = ("mmr", "mmr_lambda", "mmr_same_doc_penalty", "parent_retriever", "lexical")

# ---------------------------------------------------------------- groove index / search
# (their command-line options are generated from these tables, but for the presentation
# options --quiet and --format, written in groove/cli/engine_cmds.py)

INDEX = _table(
    KB_PATH,
    DB_PATH,
    Setting(
        "force",
        "bool",
        "Rebuild from scratch (re-embed every chunk).",
        flag="--force",
        switch=True,
        default=False,
        surfaces=frozenset({"cli", "api"}),
    ),
    MODEL,
    MODEL_PATH,
    CONFIG,
    # The index's own mode (used when groove.toml names none): a build keeps the recorded
    # one, --force included, because it is part of the eval fingerprint.
    Setting(
        "lexical",
        "lexical",
        "Record this lexical mode in the index (used when groove.toml names none); "
        "without it the recorded mode is kept, with --force too.",
        flag="--lexical",
        surfaces=frozenset({"cli", "api"}),
    ),
)

SEARCH = _table(
    KB_PATH,
    Setting(
        "limit",
        "whole",
        f"Hits, 1 to {LIMIT_MAX}.",
        flag="--limit",
        default=DEFAULT_LIMIT,
        show_default=True,
    ),
    RERANKER,
    MMR,
    MMR_LAMBDA,
    MMR_SAME_DOC_PENALTY,
    PARENT_RETRIEVER,
    LEXICAL,
    DB_PATH,
    MODEL,
    MODEL_PATH,
    CONFIG,
)

MODEL_PREPARE = _table(
    Setting(
        "force",
        "bool",
        "Rebuild the ONNX file even if it exists.",
        flag="--force",
        switch=True,
        default=False,
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)

# ---------------------------------------------------------------- groove eval

EVAL = _table(
    KB_PATH,
    GOLDEN,
    Setting(
        "k_values",
        "k_list",
        "Cut-offs for recall/nDCG.",
        flag="--k",
        dest="k_text",
        metavar="1,5,10",
        config_key="eval.k_values",
        capped=True,
    ),
    MODEL,
    MODEL_PATH,
    RERANKER,
    LIMIT,
    Setting(
        "history",
        "bool",
        "Neither read nor write the history.",
        flag="--no-history",
        switch=True,
        default=True,
    ),
    Setting(
        "save_history",
        "bool",
        "Append this run to the eval history (the CLI and notebook do when history is on).",
        default=False,
        surfaces=frozenset({"api"}),
    ),
    Setting(
        "diff",
        "bool",
        "Do not compare with the previous run.",
        flag="--no-diff",
        switch=True,
        default=True,
        surfaces=frozenset({"cli", "api"}),
    ),
    Setting(
        "full",
        "bool",
        "List every regression, miss and explained query in the text and Markdown reports "
        "(they show the first 20 and 10, and count the rest).",
        flag="--full",
        switch=True,
        default=False,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "fail_on_regression",
        "bool",
        "Exit 1 if a metric fell by more than regression_threshold since the last run.",
        flag="--fail-on-regression",
        switch=True,
        default=False,
    ),
    Setting(
        "baseline",
        "text",
        "Compare with the run pinned under this name (groove baseline set NAME) "
        "(default: [eval].baseline, else the newest passing run of this configuration).",
        flag="--baseline",
        metavar="NAME",
        config_key="eval.baseline",
    ),
    Setting(
        "require_baseline",
        "bool",
        "Exit 4 when the regression gate cannot be applied (no comparable baseline, "
        "too few queries, --no-diff) (default: [eval].require_baseline).",
        flag="--require-baseline",
        switch=True,
        config_key="eval.require_baseline",
    ),
    Setting(
        "regression_gate",
        "gate",
        "threshold: any fall beyond regression_threshold; significant: such a fall whose "
        "one-sided paired p-value, adjusted over the metrics, is below [eval].alpha "
        "(default: [eval].regression_gate).",
        flag="--regression-gate",
        config_key="eval.regression_gate",
    ),
    Setting(
        "explain",
        "bool",
        "Say why each expected answer outside the top k was missed (causes: docs/eval.md).",
        flag="--explain",
        switch=True,
        default=False,
    ),
    MMR,
    MMR_LAMBDA,
    MMR_SAME_DOC_PENALTY,
    PARENT_RETRIEVER,
    LEXICAL,
    DB_PATH,
    CONFIG,
    # Another retriever instead of groove's engine (docs/retrievers.md). The CLI spells
    # its options out as flags; the API and the notebook take them as one mapping.
    Setting(
        "retriever",
        "text",
        "Measure another retriever: command:PROGRAM [ARGS...], http(s)://URL or run:FILE "
        "(docs/retrievers.md).",
        flag="--retriever",
        metavar="SPEC",
    ),
    Setting(
        "retriever_options",
        "mapping",
        "How to reach and read the retriever: name, headers, timeout, concurrency, "
        "retries, body, hits, fields.",
        surfaces=frozenset({"api", "notebook"}),
    ),
    Setting(
        "retriever_name",
        "text",
        "Its name in the fingerprint, kept across edits of its script (default: the whole "
        "command line with a hash of its files, the URL, or the run file's path and hash).",
        flag="--retriever-name",
    ),
    Setting(
        "retriever_headers",
        "texts",
        "HTTP header; $VAR takes the value from the environment (repeatable).",
        flag="--retriever-header",
        dest="retriever_headers",
        metavar="'NAME: VALUE'",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "retriever_timeout",
        "seconds",
        "Per-query answer timeout (default 30).",
        flag="--retriever-timeout",
        metavar="SECONDS",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "retriever_concurrency",
        "whole",
        "HTTP requests in flight (default 4).",
        flag="--retriever-concurrency",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "retriever_retries",
        "count",
        "HTTP retries on connection errors and 5xx (default 3).",
        flag="--retriever-retries",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "retriever_body",
        "text",
        'HTTP request template with "{{query}}", "{{limit}}", "{{id}}" values.',
        flag="--retriever-body",
        metavar="JSON",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "retriever_hits",
        "text",
        "Where the hit list is in an HTTP answer (default hits; OpenSearch: hits.hits).",
        flag="--retriever-hits",
        metavar="PATH",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "retriever_fields",
        "texts",
        "Where path / heading / score sit in a hit, e.g. path=_source.path (repeatable).",
        flag="--retriever-field",
        dest="retriever_fields",
        metavar="NAME=PATH",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "export_run",
        "file",
        "Also write the run as a TREC run file (for trec_eval, ranx, ir_measures).",
        flag="--export-run",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "export_run_headings",
        "bool",
        "TREC doc ids path#heading for every hit (default: path, first hit per document).",
        flag="--export-run-headings",
        switch=True,
        default=False,
        surfaces=frozenset({"cli"}),
    ),
)

# ---------------------------------------------------------------- groove tune

TUNE = _table(
    KB_PATH,
    GOLDEN,
    MODEL,
    MODEL_PATH,
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
    LIMIT,
    LEXICAL,
    DB_PATH,
    CONFIG,
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

# ---------------------------------------------------------------- groove serve

SERVE = _table(
    KB_PATH,
    DB_PATH,
    MODEL,
    MODEL_PATH,
    RERANKER,
    MMR,
    MMR_LAMBDA,
    MMR_SAME_DOC_PENALTY,
    PARENT_RETRIEVER,
    LEXICAL,
    Setting(
        "host",
        "text",
        "Address to bind.",
        flag="--host",
        default="127.0.0.1",
        show_default=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "port",
        "port",
        "Port to listen on (0 picks a free one).",
        flag="--port",
        default=8765,
        show_default=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "threads",
        "count",
        "onnxruntime threads for embedding queries (0: one per core). Requests in flight "
        "are embedded in small batches, which one thread runs best (docs/performance.md).",
        flag="--threads",
        default=1,
        show_default=True,
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)

# ---------------------------------------------------------------- groove export

EXPORT = _table(
    KB_PATH,
    DB_PATH,
    Setting(
        "to",
        "text",
        "postgresql://USER@HOST:PORT/DB[?table=NAME] or lancedb:///PATH[?table=NAME].",
        flag="--to",
        dest="target",
        metavar="URL",
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)

# ---------------------------------------------------------------- groove baseline
# (set / accept / unset / list; the baseline NAME is an argument, written in the command)

BASELINE = _table(
    KB_PATH,
    Setting(
        "golden",
        "file",
        "Without a KB (runs of --retriever): the history beside this golden file.",
        flag="--golden",
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)
#: set and accept also take the run to pin
BASELINE_RUN = _table(
    *BASELINE.values(),
    Setting(
        "ref",
        "text",
        "Run id or prefix (default: the newest run).",
        flag="--run",
        dest="ref",
        surfaces=frozenset({"cli"}),
    ),
)
#: accept may also pin the accepted run
BASELINE_ACCEPT = _table(
    *BASELINE_RUN.values(),
    Setting(
        "name",
        "text",
        "Also pin the accepted run under this name.",
        flag="--name",
        surfaces=frozenset({"cli"}),
    ),
)

# ---------------------------------------------------------------- groove compare
# (REFS are arguments and --format a presentation option, written in the command)

COMPARE = _table(
    KB_PATH,
    Setting(
        "baseline",
        "text",
        "The run the others are compared with (default: the first REF).",
        flag="--baseline",
        metavar="REF",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "alpha",
        "level",
        "Level of the significance marks (default: [eval].alpha).",
        flag="--alpha",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "last",
        "several",
        "Runs shown without REFS.",
        flag="--last",
        default=5,
        show_default=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "golden",
        "file",
        "Golden YAML whose judgements file gives judged@k (default: [eval].golden, else "
        "<kb>/.groove-eval.yml; none: no judged@k).",
        flag="--golden",
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)

# ---------------------------------------------------------------- groove golden pool / judge
# (docs/judgements.md; the --retriever family is the eval's, so a spec reads the same)

_POOL_SOURCES = (
    Setting(
        "depth",
        "whole",
        "Hits taken from each source per query.",
        flag="--depth",
        default=10,
        capped=True,
    ),
    Setting(
        "history",
        "bool",
        "Leave out the newest run of each configuration in the eval history.",
        flag="--no-history",
        switch=True,
        default=True,
    ),
    Setting(
        "runs",
        "texts",
        "Also pool this run: a history position (1 = newest), a timestamp, a run id or "
        "a saved run file (repeatable).",
        flag="--run",
        dest="runs",
        metavar="REF",
    ),
    Setting(
        "current",
        "bool",
        "Also pool a fresh run of groove's engine with the current settings.",
        flag="--current",
        switch=True,
        default=False,
    ),
    Setting(
        "tune",
        "bool",
        "Also pool the top lists of the tune grid's 384 rrf_k x bm25-weight conditions.",
        flag="--tune",
        switch=True,
        default=False,
    ),
)

POOL = _table(
    KB_PATH,
    GOLDEN,
    *_POOL_SOURCES,
    *(EVAL[name] for name in EVAL if name.startswith("retriever")),
    MODEL,
    MODEL_PATH,
    LIMIT,
    LEXICAL,
    DB_PATH,
    Setting(
        "out",
        "file",
        "Write the candidates to this .csv or .jsonl file, to judge elsewhere.",
        flag="--out",
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)

JUDGE = _table(
    *(s for s in POOL.values() if s.name != "out"),  # the judging view pools, exports nothing
    Setting(
        "by",
        "text",
        "Who is judging (default: $GROOVE_JUDGE, else [eval].judge, else the login name).",
        flag="--by",
    ),
)

# ---------------------------------------------------------------- groove golden (the rest)
# import / export-qrels move golden sets to and from IR tooling; import-judgements and
# apply close the judgement loop (docs/judgements.md). FILE of import-judgements is an
# argument, written in the command.

GOLDEN_IMPORT = _table(
    Setting(
        "qrels",
        "file",
        "TREC qrels (qid 0 docid rel) or BEIR qrels TSV (query-id, corpus-id, score).",
        flag="--qrels",
        required=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "queries",
        "file",
        'BEIR queries.jsonl ({"_id", "text"}) or qid<TAB>text lines.',
        flag="--queries",
        required=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "path_template",
        "text",
        "KB-relative path of a document id, e.g. 'docs/{docid}.md'.",
        flag="--path",
        dest="path_template",
        default="{docid}",
        show_default=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "min_relevance",
        "integer",
        "Judgments below this are not relevant.",
        flag="--min-relevance",
        default=1,
        show_default=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "out",
        "file",
        "Golden YAML to write (default: standard output).",
        flag="--out",
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)

GOLDEN_EXPORT_QRELS = _table(
    KB_PATH,
    GOLDEN,
    Setting(
        "out",
        "file",
        "TREC qrels file to write (default: standard output).",
        flag="--out",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "queries_out",
        "file",
        "Also write the queries as qid<TAB>text lines.",
        flag="--queries-out",
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)

GOLDEN_IMPORT_JUDGEMENTS = _table(KB_PATH, GOLDEN, JUDGE["by"], CONFIG)

GOLDEN_APPLY = _table(
    KB_PATH,
    GOLDEN,
    Setting(
        "dry_run",
        "bool",
        "Say what would be added; change nothing.",
        flag="--dry-run",
        switch=True,
        default=False,
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,
)


# ---------------------------------------------------------------- groove notebook run / open
# (NAME is an argument, and -p NAME VALUE, the notebook's own parameters, is written in
# groove/cli/notebook_cmd.py: the parameters themselves are EVAL's and TUNE's)

NOTEBOOK_RUN = _table(
    KB_PATH,
    Setting(
        "out_dir",
        "folder",
        "Folder for <name>.ipynb (executed), <name>.html and result.json.",
        flag="--out",
        dest="out_dir",
        required=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "notebook",
        "file",
        "Run this notebook file instead of a bundled one.",
        flag="--notebook",
        dest="notebook_path",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "cell_timeout",
        "count",
        "Fail the run (exit 3) when one cell runs longer than this; 0: no limit (default 1800).",
        flag="--cell-timeout",
        metavar="SECONDS",
        default=1800,  # half an hour: far above a real eval, short of a CI job's own limit
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,  # handed to the notebook, which loads it
)

NOTEBOOK_OPEN = _table(
    KB_PATH,
    Setting(
        "folder",
        "folder",
        "Working folder for the copy (default: ./groove-notebooks).",
        flag="--dir",
        dest="folder",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "overwrite",
        "bool",
        "Replace an earlier copy in the folder.",
        flag="--overwrite",
        switch=True,
        default=False,
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "browser",
        "bool",
        "Start JupyterLab without opening a browser.",
        flag="--no-browser",
        switch=True,
        default=True,
        surfaces=frozenset({"cli"}),
    ),
    Setting("port", "port", "Port for JupyterLab.", flag="--port", surfaces=frozenset({"cli"})),
    Setting(
        "start",
        "bool",
        "Write the copy and print the command; do not start.",
        flag="--no-start",
        switch=True,
        default=True,
        surfaces=frozenset({"cli"}),
    ),
    CONFIG,  # handed to the copy, which loads it
)

# ---------------------------------------------------------------- every command

#: Each ``groove`` command and the table its options are generated from (a test checks that
#: the CLI has these commands and no other, each with its table's flags and nothing else
#: but the presentation options it names).
COMMANDS: Mapping[str, Mapping[str, Setting]] = {
    "index": INDEX,
    "search": SEARCH,
    "model prepare": MODEL_PREPARE,
    "eval": EVAL,
    "tune": TUNE,
    "serve": SERVE,
    "export": EXPORT,
    "compare": COMPARE,
    "baseline set": BASELINE_RUN,
    "baseline accept": BASELINE_ACCEPT,
    "baseline unset": BASELINE,
    "baseline list": BASELINE,
    "golden import": GOLDEN_IMPORT,
    "golden export-qrels": GOLDEN_EXPORT_QRELS,
    "golden pool": POOL,
    "golden import-judgements": GOLDEN_IMPORT_JUDGEMENTS,
    "golden apply": GOLDEN_APPLY,
    "notebook run": NOTEBOOK_RUN,
    "notebook open": NOTEBOOK_OPEN,
}


def on(table: Mapping[str, Setting], surface: Surface) -> tuple[str, ...]:
    """The names of ``table`` accepted on ``surface``, in declaration order."""
    return tuple(name for name, s in table.items() if surface in s.surfaces)


def at_most(name: str, value: int) -> int:
    """``value`` if it is at most LIMIT_MAX, else a ConfigError naming the setting ``name``.

    The one rule for a limit and for each k, on every face (see the module's docstring).
    """
    if value > LIMIT_MAX:
        raise ConfigError(
            f"{{setting}} {value} exceeds the supported maximum {LIMIT_MAX}",
            f"pass {{give:N}} with N from 1 to {LIMIT_MAX}",
            setting=name,
        )
    return value


def _flags() -> dict[str, str]:
    found: dict[str, str] = {"config": "--config"}
    for table in COMMANDS.values():  # one flag per name in all of them (tests/test_api.py)
        for s in table.values():
            if s.flag is not None:
                found.setdefault(s.name, s.flag)
    return found


_FLAGS = _flags()
_SWITCHES = frozenset(s.name for table in COMMANDS.values() for s in table.values() if s.switch)


class _Spelling:
    """How each face names a setting (groove.errors asks this when it words an error).

    The CLI says ``--kb-path`` (a ``--no-`` switch is given bare), the API ``keyword kb_path``
    / ``kb_path=``, a notebook ``parameter kb_path`` / ``-p kb_path``, ``serve`` the
    request's JSON key.
    """

    def name(self, setting: str, face: errors.Face) -> str:
        if face == "cli":
            return _flag(setting)
        key = _option_key(setting)
        if key is not None and face in ("api", "notebook"):
            return f'retriever_options["{key}"]'
        if face == "notebook":
            return f"parameter {setting}"
        if face == "serve":
            return f'"{setting}"'
        return f"keyword {setting}"

    def give(self, setting: str, face: errors.Face, example: str) -> str:
        off = _FLAGS.get(setting, "").startswith("--no-")  # a switch turns the setting off
        if face == "cli":  # a switch flag takes no value
            bare = off or setting in _SWITCHES
            return _flag(setting) + (f" {example}" if example and not bare else "")
        key = _option_key(setting)
        if key is not None and face in ("api", "notebook"):
            value = _option_value(setting, example)
            if face == "api":
                return f'retriever_options={{"{key}": {value}}}'
            return f"-p retriever_options '{{{key}: {value}}}'"
        value = "false" if off else example
        if face == "notebook":  # the runner's syntax always shows a value
            return f"-p {setting} {value or _placeholder(setting)}"
        if face == "serve":
            return f'"{setting}": {value}' if value else f'"{setting}"'
        return f"{setting}={'False' if off else example}"

    def here(self, face: errors.Face) -> str:
        return {
            "cli": "on the command line",
            "notebook": "to the run",
            "serve": "in the request",
        }.get(face, "to the call")

    def index_command(
        self, face: errors.Face, kb_path: str | None, force: bool, lexical: str | None = None
    ) -> str:
        if face == "api":
            where = repr(kb_path) if kb_path is not None else "kb_path"
            extra = (", force=True" if force else "") + (
                f", lexical={lexical!r}" if lexical else ""
            )
            return f"`groove.index({where}{extra})`"
        # the CLI's own command, which a notebook's user also runs to build an index
        kb = f" {_flag('kb_path')} {kb_path}" if kb_path is not None else ""
        extra = (" " + _flag("force") if force else "") + (
            f" {_flag('lexical')} {lexical}" if lexical else ""
        )
        return f"`groove index{kb}{extra}`"


def _option_key(setting: str) -> str | None:
    """``retriever_timeout`` -> ``timeout``: an option of an external retriever that the CLI
    takes as a flag of its own and the API and the notebooks as a key of
    ``retriever_options`` (groove.retrievers.spec.options_from_mapping)."""
    declared = EVAL.get(setting) or TUNE.get(setting)
    if declared is None or declared.surfaces != frozenset({"cli"}):
        return None
    key = setting.removeprefix("retriever_")
    return key if key != setting else None


def _option_value(setting: str, example: str) -> str:
    """An example written as the command line takes it (``'Authorization: Bearer $T'``,
    ``path=_source.path``, ``N``) as the value of a ``retriever_options`` key."""
    import json
    import shlex

    kind = (EVAL.get(setting) or TUNE[setting]).kind
    try:
        words = shlex.split(example)
    except ValueError:
        words = [example]
    if kind == "texts":
        return json.dumps(words)
    if kind == "text" and words:
        return json.dumps(words[0])
    return example


def cli_flag(setting: str) -> str:
    """The flag of ``setting``, for a groove command line (``command_line``)."""
    return _flag(setting)


def command_line(command: str, **values: Any) -> str:
    """``groove COMMAND --flag VALUE ...`` with the flags as declared here (True: a switch).

    For a hint that tells the user to run a groove command in a terminal whatever the face
    they use, because the command has no API form (``groove export``, ``groove model
    prepare``) or names the file it writes (``groove eval --format json``)."""
    words = ["groove", command]
    for name, value in values.items():
        words.append(_flag(name))
        if value is not True:
            words.append(str(value))
    return " ".join(words)


def _placeholder(setting: str) -> str:
    for table in (EVAL, TUNE, SEARCH):
        if setting in table and table[setting].kind in ("path", "file", "folder"):
            return "PATH"
    return "VALUE"


def _flag(setting: str) -> str:
    return _FLAGS.get(setting, "--" + setting.replace("_", "-"))


errors.use_speller(_Spelling())
