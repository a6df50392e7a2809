"""groove eval, the baselines and groove compare."""

from __future__ import annotations

from groove.settings import shared
from groove.settings.setting import Setting, table

# ---------------------------------------------------------------- groove eval

EVAL = table(
    shared.KB_PATH,
    shared.GOLDEN,
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
    shared.MODEL,
    shared.MODEL_PATH,
    shared.RERANKER,
    shared.LIMIT,
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
        "baseline_file",
        "file",
        "The committed accepted baseline the gate also compares with (groove baseline accept "
        "--file) (default: [eval].baseline_file, else <golden stem>.baseline.json beside the "
        "golden file, when it exists).",
        flag="--baseline-file",
        metavar="PATH",
        config_key="eval.baseline_file",
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
    *shared.PIPELINE_SETTINGS,
    shared.DB_PATH,
    shared.CONFIG,
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

# ---------------------------------------------------------------- groove baseline
# (set / accept / unset / list; the baseline NAME is an argument, written in the command)

BASELINE = table(
    shared.KB_PATH,
    Setting(
        "golden",
        "file",
        "Without a KB (runs of --retriever): the history beside this golden file.",
        flag="--golden",
        surfaces=frozenset({"cli"}),
    ),
    shared.CONFIG,
)
#: set and accept also take the run to pin
BASELINE_RUN = table(
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
BASELINE_ACCEPT = table(
    *BASELINE_RUN.values(),
    Setting(
        "name",
        "text",
        "Also pin the accepted run under this name.",
        flag="--name",
        surfaces=frozenset({"cli"}),
    ),
    Setting(
        "file",
        "file",
        "Write the accepted run to this baseline file, to commit, instead of marking it in "
        "the history (without PATH: [eval].baseline_file, else <golden stem>.baseline.json "
        "beside the golden file).",
        flag="--file",
        metavar="[PATH]",
        bare="",
        surfaces=frozenset({"cli"}),
    ),
)

# ---------------------------------------------------------------- groove compare
# (REFS are arguments and --format a presentation option, written in the command)

COMPARE = table(
    shared.KB_PATH,
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
    shared.CONFIG,
)
