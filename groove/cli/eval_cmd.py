"""``groove eval``: score golden queries, compare with the last run, gate CI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from groove.cli.common import (
    config_from,
    db_option,
    kb_option,
    model_options,
    pipeline_options,
    use_color,
    warn,
)
from groove.cli.retriever_flags import retriever_options


@click.command("eval")
@kb_option
@click.option(
    "--golden",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Golden YAML (default: [eval].golden, else <kb>/.groove-eval.yml).",
)
@click.option("--k", "k_text", default=None, metavar="1,5,10", help="Cut-offs for recall/nDCG.")
@model_options
@click.option("--reranker", default=None, help="Cross-encoder model name, or none.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Hits per query.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text")
@click.option("--no-history", is_flag=True, help="Neither read nor write the history.")
@click.option("--no-diff", is_flag=True, help="Do not compare with the previous run.")
@click.option("--no-color", is_flag=True, help="No ANSI colours in the text report.")
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 if a metric fell by more than regression_threshold since the last run.",
)
@pipeline_options
@db_option
@retriever_options
@click.option(
    "--export-run",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Also write the run as a TREC run file (for trec_eval, ranx, ir_measures).",
)
@click.option(
    "--export-run-ids",
    type=click.Choice(["path", "heading"]),
    default="path",
    show_default=True,
    help="TREC doc ids: path (first hit per document) or path#heading (every hit).",
)
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
    fail_on_regression: bool,
    mmr: bool | None,
    mmr_lambda: float | None,
    mmr_same_doc_penalty: float | None,
    parent_retriever: bool | None,
    db_path: Path | None,
    export_run: Path | None,
    export_run_ids: str,
    **retriever_flags: Any,
) -> None:
    """Evaluate retrieval against golden queries: recall@k, MRR, nDCG@k, diff, CI gate."""
    from groove.cli.retriever_flags import ProgressBar, spec_from_flags
    from groove.config import parse_k_list
    from groove.evaluation import run as evaluation
    from groove.evaluation.findings import warning_text
    from groove.evaluation.settings import resolve_settings
    from groove.report import eval_json, eval_markdown, eval_text

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
        retriever=retriever,
    )
    bar = ProgressBar()
    try:
        result = evaluation.run(settings, progress=bar.update)
    finally:
        bar.close()
    if export_run is not None:
        from groove.evaluation.trec import run_lines, write_atomic

        write_atomic(export_run, run_lines(result.per_query, by=export_run_ids))
    for note in result.notes:
        warn(note)
    if fmt == "json":
        click.echo(eval_json.render(result), nl=False)
    elif fmt == "markdown":
        click.echo(eval_markdown.render(result), nl=False)
    else:
        click.echo(eval_text.render(result, color=use_color(no_color)), nl=False)
    if result.findings:
        warn(warning_text(result.findings))
    if result.regression:
        warn(evaluation.regression_message(result))
        ctx.exit(result.exit_code)


def register(cli: click.Group) -> None:
    cli.add_command(eval_cmd)
