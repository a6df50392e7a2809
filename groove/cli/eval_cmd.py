"""``groove eval``: score golden queries, compare with the last run, gate CI."""

from __future__ import annotations

from pathlib import Path

import click

from groove.cli.common import config_from, setting_options, use_color, warn
from groove.settings import EVAL


@click.command("eval")
@setting_options(EVAL, "kb_path", "golden", "k_values", "model", "model_path", "reranker", "limit")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text")
@setting_options(EVAL, "history", "diff")
@click.option("--no-color", is_flag=True, help="No ANSI colours in the text report.")
@setting_options(
    EVAL,
    "fail_on_regression",
    "regression_gate",
    "mmr",
    "mmr_lambda",
    "mmr_same_doc_penalty",
    "parent_retriever",
    "db_path",
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
    regression_gate: str | None,
    mmr: bool | None,
    mmr_lambda: float | None,
    mmr_same_doc_penalty: float | None,
    parent_retriever: bool | None,
    db_path: Path | None,
) -> None:
    """Evaluate retrieval against golden queries: recall@k, MRR, nDCG@k, diff, CI gate."""
    from groove.config import parse_k_list
    from groove.evaluation import run as evaluation
    from groove.evaluation.findings import warning_text
    from groove.evaluation.settings import resolve_settings
    from groove.report import eval_json, eval_markdown, eval_text
    from groove.report.notes import cli_line, regression_message

    config = config_from(ctx)
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
        regression_gate=regression_gate,
    )
    result = evaluation.run(settings)
    for note in result.notes:
        warn(cli_line("eval", note))
    if fmt == "json":
        click.echo(eval_json.render(result), nl=False)
    elif fmt == "markdown":
        click.echo(eval_markdown.render(result), nl=False)
    else:
        click.echo(eval_text.render(result, color=use_color(no_color)), nl=False)
    if result.findings:
        warn(warning_text(result.findings))
    if result.regression:
        warn(regression_message(result))
        ctx.exit(result.exit_code)


def register(cli: click.Group) -> None:
    cli.add_command(eval_cmd)
