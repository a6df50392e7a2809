"""``groove eval``: score golden queries, compare with the last run, gate CI."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from groove.cli.common import config_from, setting_options, use_color, warn
from groove.cli.retriever_flags import RETRIEVER_FLAGS
from groove.settings import EVAL, LexicalMode


@click.command("eval")
@setting_options(EVAL, "kb_path", "golden", "k_values", "model", "model_path", "reranker", "limit")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text")
@setting_options(EVAL, "history", "diff")
@click.option("--no-color", is_flag=True, help="No ANSI colours in the text report.")
@setting_options(EVAL, "full")
@setting_options(
    EVAL,
    "fail_on_regression",
    "baseline",
    "require_baseline",
    "regression_gate",
    "explain",
    "mmr",
    "mmr_lambda",
    "mmr_same_doc_penalty",
    "parent_retriever",
    "lexical",
    "db_path",
)
@setting_options(EVAL, *RETRIEVER_FLAGS, "export_run", "export_run_headings")
@click.pass_context
def eval_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    golden: Path | None,
    k_text: str | None,
    model: str | None,
    model_path: Path | None,
    reranker: str | None,
    limit: int | None,
    fmt: str,
    no_history: bool,
    no_diff: bool,
    no_color: bool,
    full: bool,
    fail_on_regression: bool,
    baseline: str | None,
    require_baseline: bool,
    regression_gate: str | None,
    explain: bool,
    mmr: bool | None,
    mmr_lambda: float | None,
    mmr_same_doc_penalty: float | None,
    parent_retriever: bool | None,
    lexical: LexicalMode | None,
    db_path: Path | None,
    export_run: Path | None,
    export_run_headings: bool,
    **retriever_flags: Any,
) -> None:
    """Evaluate retrieval against golden queries: recall@k, MRR, nDCG@k, diff, CI gate."""
    from groove.cli.bars import ProgressBar
    from groove.cli.retriever_flags import spec_from_flags
    from groove.config import parse_k_list
    from groove.evaluation import run as evaluation
    from groove.evaluation.result import VERDICT_NOT_APPLIED, VERDICT_REGRESSION
    from groove.evaluation.settings import resolve_settings
    from groove.golden.findings import warning_texts
    from groove.report import eval_json, eval_markdown, eval_text
    from groove.report.notes import cli_line, not_applied_message, regression_message
    from groove.tuning.reach import PROBE

    config = config_from(ctx)
    retriever = spec_from_flags(**retriever_flags)
    settings = resolve_settings(
        config,
        kb_path=kb_path,
        golden=golden,
        k_values=parse_k_list(k_text) if k_text else None,
        limit=limit,
        model=model,
        model_path=model_path,
        reranker=reranker,
        db_path=db_path,
        mmr=mmr,
        mmr_lambda=mmr_lambda,
        mmr_same_doc_penalty=mmr_same_doc_penalty,
        parent_retriever=parent_retriever,
        history=not no_history,
        diff=not no_diff,
        fail_on_regression=fail_on_regression,
        baseline=baseline,
        require_baseline=require_baseline or None,  # absent: [eval].require_baseline
        retriever=retriever,
        regression_gate=regression_gate,
        explain=explain,
        lexical=lexical,
    )
    bar = ProgressBar()
    try:
        result = evaluation.prepare(settings, progress=bar, grid=PROBE if explain else None)
    finally:
        bar.close()
    # All or nothing: every output is written before the run enters the history.
    if export_run is not None:
        from groove.golden.qrels import write_atomic
        from groove.retrievers.trec import run_lines

        by = "heading" if export_run_headings else "path"
        write_atomic(export_run, run_lines(result.per_query, by=by))
    if fmt == "json":
        report = eval_json.render(result)
    elif fmt == "markdown":
        report = eval_markdown.render(result, full=full)
    else:
        report = eval_text.render(result, color=use_color(no_color), full=full)
    for note in result.notes:
        warn(cli_line("eval", note))
    click.echo(report, nl=False)
    sys.stdout.flush()
    saved = evaluation.save(result, settings)
    for note in saved.notes[len(result.notes) :]:
        warn(cli_line("eval", note))
    for text in warning_texts(result.findings):
        warn(text)
    if result.verdict == VERDICT_REGRESSION:
        warn(regression_message(result, switch=EVAL["fail_on_regression"].flag or ""))
    elif result.verdict == VERDICT_NOT_APPLIED:
        warn(not_applied_message(result, switch=EVAL["require_baseline"].flag or ""))
    if result.exit_code:
        ctx.exit(result.exit_code)


def register(cli: click.Group) -> None:
    cli.add_command(eval_cmd)
