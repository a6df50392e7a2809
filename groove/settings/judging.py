"""The judgement loop: golden pool, the judging notebook and the other golden commands."""

from __future__ import annotations

from groove.settings import shared
from groove.settings.setting import CLI_ONLY, FILE_ONLY, Setting, switch, table

#: [eval] judge in groove.toml: no face takes it (``by`` is the face's own).
JUDGE_NAME = Setting(
    "judge",
    "text",
    "Who judges hits when $GROOVE_JUDGE is unset (docs/judgements.md).",
    surfaces=FILE_ONLY,
    config_key="eval.judge",
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
    shared.HISTORY.but(help="Leave out the newest run of each configuration in the eval history."),
    Setting(
        "runs",
        "texts",
        "Also pool this run: a history position (1 = newest), a timestamp, a run id or "
        "a saved run file (repeatable).",
        flag="--run",
        dest="runs",
        metavar="REF",
    ),
    switch(
        "current",
        "--current",
        "Also pool a fresh run of groove's engine with the current settings.",
    ),
    switch(
        "tune",
        "--tune",
        "Also pool the top lists of the tune grid's 384 rrf_k x bm25-weight conditions.",
    ),
)

POOL = table(
    shared.KB_PATH,
    shared.GOLDEN,
    *_POOL_SOURCES,
    *shared.RETRIEVER_SETTINGS,
    shared.MODEL,
    shared.MODEL_PATH,
    shared.LIMIT,
    shared.LEXICAL,
    shared.DB_PATH,
    shared.OUT,
    shared.CONFIG,
)

JUDGE = table(
    *(s for s in POOL.values() if s.name != "out"),  # the judging view pools, exports nothing
    Setting(
        "by",
        "text",
        "Who is judging (default: $GROOVE_JUDGE, else [eval].judge, else the login name).",
        flag="--by",
    ),
    JUDGE_NAME,
)

# ---------------------------------------------------------------- groove golden (the rest)
# import / export-qrels move golden sets to and from IR tooling; import-judgements and
# apply close the judgement loop (docs/judgements.md). FILE of import-judgements is an
# argument, written in the command.

GOLDEN_IMPORT = table(
    Setting(
        "qrels",
        "file",
        "TREC qrels (qid 0 docid rel) or BEIR qrels TSV (query-id, corpus-id, score).",
        flag="--qrels",
        required=True,
        surfaces=CLI_ONLY,
    ),
    Setting(
        "queries",
        "file",
        'BEIR queries.jsonl ({"_id", "text"}) or qid<TAB>text lines.',
        flag="--queries",
        required=True,
        surfaces=CLI_ONLY,
    ),
    Setting(
        "path_template",
        "text",
        "KB-relative path of a document id, e.g. 'docs/{docid}.md'.",
        flag="--path",
        dest="path_template",
        default="{docid}",
        show_default=True,
        surfaces=CLI_ONLY,
    ),
    Setting(
        "min_relevance",
        "integer",
        "Judgments below this are not relevant.",
        flag="--min-relevance",
        default=1,
        show_default=True,
        surfaces=CLI_ONLY,
    ),
    shared.OUT.but(help="Golden YAML to write (default: standard output)."),
    shared.CONFIG,
)

GOLDEN_EXPORT_QRELS = table(
    shared.KB_PATH,
    shared.GOLDEN,
    shared.OUT.but(help="TREC qrels file to write (default: standard output)."),
    Setting(
        "queries_out",
        "file",
        "Also write the queries as qid<TAB>text lines.",
        flag="--queries-out",
        surfaces=CLI_ONLY,
    ),
    shared.CONFIG,
)

GOLDEN_IMPORT_JUDGEMENTS = table(
    shared.KB_PATH, shared.GOLDEN, JUDGE["by"], JUDGE_NAME, shared.CONFIG
)

GOLDEN_APPLY = table(
    shared.KB_PATH,
    shared.GOLDEN,
    switch("dry_run", "--dry-run", "Say what would be added; change nothing.", surfaces=CLI_ONLY),
    shared.CONFIG,
)

# ---------------------------------------------------------------- groove golden doctor
# Reads the index and the eval history (docs/eval.md, "When the KB moves"); writes the
# golden file only with --apply.

GOLDEN_DOCTOR = table(
    shared.KB_PATH,
    shared.GOLDEN,
    switch(
        "apply",
        "--apply",
        "Rewrite the entries the doctor is certain of (comments and layout kept).",
    ),
    switch("accept_likely", "--accept-likely", "With --apply: rewrite the likely proposals too."),
    shared.MODEL,
    shared.MODEL_PATH,
    shared.DB_PATH,
    shared.CONFIG,
)
