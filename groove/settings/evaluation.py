"""groove eval, the baselines and groove compare."""

from __future__ import annotations

from groove.settings import shared
from groove.settings.setting import CLI_ONLY, FILE_ONLY, Setting, switch, table

# ---------------------------------------------------------------- [eval] in groove.toml
# (no flag: the file holds them; eval reads them through its table like the others)

HISTORY_SIZE = Setting(
    "history_size",
    "whole",
    "Runs the eval history keeps (pinned runs are always kept).",
    surfaces=FILE_ONLY,
    config_key="eval.history_size",
    default=10,
    bounds=(1, 10_000),
)
REGRESSION_THRESHOLD = Setting(
    "regression_threshold",
    "fraction",
    "The fall of a metric since the baseline that counts as a regression.",
    surfaces=FILE_ONLY,
    config_key="eval.regression_threshold",
    default=0.05,
)
ALPHA = Setting(
    "alpha",
    "level",
    "Level of the significance tests (the significant gate, the marks of groove compare).",
    surfaces=FILE_ONLY,
    config_key="eval.alpha",
    default=0.05,
)

BASELINE_PIN = Setting(
    "baseline",
    "pin",
    "Compare with the run pinned under this name (groove baseline set NAME) "
    "(default: [eval].baseline, else the newest passing run of this configuration).",
    flag="--baseline",
    metavar="NAME",
    config_key="eval.baseline",
)

#: Which slices the reports measure (groove.stats.slices); eval and compare take it.
SLICE_BY_SETTING = Setting(
    "slice_by",
    "slice_by",
    "Slices of the golden queries measured on their own: tags (one per tag) or folder "
    "(also one per top folder of the expected paths) (default: [eval].slice_by).",
    flag="--slice-by",
    config_key="eval.slice_by",
    default="tags",
)

# ---------------------------------------------------------------- groove eval

EVAL = table(
    shared.KB_PATH,
    shared.GOLDEN,
    shared.K_VALUES,
    shared.MODEL,
    shared.MODEL_PATH,
    shared.RERANKER,
    shared.LIMIT,
    shared.HISTORY,
    Setting(
        "name",
        "text",
        "A name for this run, shown wherever runs are listed (groove compare, the history's "
        "runs, the cards, the history plot) instead of its id.",
        flag="--name",
        metavar="NAME",
    ),
    Setting(
        "save_history",
        "bool",
        "Append this run to the eval history (the CLI and notebook do when history is on).",
        default=False,
        surfaces=frozenset({"api"}),
    ),
    switch(
        "diff",
        "--no-diff",
        "Do not compare with the previous run.",
        surfaces=frozenset({"cli", "api"}),
    ),
    switch(
        "full",
        "--full",
        "List every regression, miss and explained query in the text and Markdown reports, "
        "and every entry of the findings on stderr (they show the first 20, 10 and 10, and "
        "count the rest).",
        surfaces=CLI_ONLY,
    ),
    switch(
        "fail_on_regression",
        "--fail-on-regression",
        "Exit 1 if a metric fell by more than regression_threshold since the last run.",
    ),
    BASELINE_PIN,
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
    switch(
        "require_baseline",
        "--require-baseline",
        "Exit 4 when the regression gate cannot be applied (no comparable baseline, "
        "too few queries, --no-diff) (default: [eval].require_baseline).",
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
        default="threshold",
    ),
    HISTORY_SIZE,
    REGRESSION_THRESHOLD,
    ALPHA,
    SLICE_BY_SETTING,
    switch(
        "gate_slices",
        "--gate-slices",
        "Also apply the regression gate to every slice of at least [eval].slice_min_queries "
        "queries (default: [eval].gate_slices).",
        config_key="eval.gate_slices",
    ),
    Setting(
        "slice_min_queries",
        "whole",
        "The fewest queries a slice needs to be gated; smaller ones are reported, not gated "
        "(default: [eval].slice_min_queries, else 10).",
        flag="--slice-min-queries",
        metavar="N",
        config_key="eval.slice_min_queries",
        default=10,
        bounds=(1, 1_000_000),
    ),
    switch(
        "explain",
        "--explain",
        "Say why each expected answer outside the top k was missed (causes: docs/eval.md).",
    ),
    switch(
        "latency",
        "--latency",
        "Add the retrieval latency line (p50 / p95 / max per query) to the text report; "
        "a retriever's report always has it, JSON always carries it.",
        surfaces=CLI_ONLY,
    ),
    *shared.PIPELINE_SETTINGS,
    shared.DB_PATH,
    shared.CONFIG,
    *shared.RETRIEVER_SETTINGS,
    Setting(
        "export_run",
        "file",
        "Also write the run as a TREC run file (for trec_eval, ranx, ir_measures).",
        flag="--export-run",
        surfaces=CLI_ONLY,
    ),
    Setting(
        "junit",
        "file",
        "Also write a JUnit XML report: one test case per golden query, a failure for each "
        "miss or regression (with its --explain cause), the verdict and the aggregate as "
        "suite properties.",
        flag="--junit",
        metavar="FILE",
        surfaces=frozenset({"cli", "notebook"}),
    ),
    switch(
        "export_run_headings",
        "--export-run-headings",
        "TREC doc ids path#heading for every hit (default: path, first hit per document).",
        surfaces=CLI_ONLY,
    ),
)

# ---------------------------------------------------------------- groove baseline
# (set / accept / unset / list; the baseline NAME is an argument, written in the command)

BASELINE = table(
    shared.KB_PATH,
    shared.GOLDEN.but(
        help="Without a KB (runs of --retriever): the history beside this golden file.",
        surfaces=CLI_ONLY,
    ),
    HISTORY_SIZE,
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
        surfaces=CLI_ONLY,
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
        surfaces=CLI_ONLY,
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
        surfaces=CLI_ONLY,
    ),
    EVAL["baseline_file"].but(surfaces=FILE_ONLY),  # where --file alone writes
)

# ---------------------------------------------------------------- groove compare
# (REFS are arguments and --format a presentation option, written in the command)

COMPARE = table(
    shared.KB_PATH,
    BASELINE_PIN.but(
        kind="text",
        help="The run the others are compared with (default: the first REF).",
        metavar="REF",
        surfaces=CLI_ONLY,
        config_key=None,
    ),
    ALPHA.but(
        help="Level of the significance marks (default: [eval].alpha).",
        flag="--alpha",
        surfaces=CLI_ONLY,
    ),
    Setting(
        "last",
        "several",
        "Runs shown without REFS.",
        flag="--last",
        default=5,
        show_default=True,
        surfaces=CLI_ONLY,
    ),
    shared.GOLDEN.but(
        help="Golden YAML whose judgements file gives judged@k (default: [eval].golden, else "
        "<kb>/.groove-eval.yml; none: no judged@k).",
        surfaces=CLI_ONLY,
    ),
    SLICE_BY_SETTING.but(
        help="Slices listed under each run: tags (one per tag of its queries) or folder (also "
        "one per top folder of the expected paths) (default: [eval].slice_by).",
        surfaces=CLI_ONLY,
    ),
    shared.CONFIG,
)
