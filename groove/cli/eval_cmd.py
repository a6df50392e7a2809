"""``groove eval``: score golden queries, compare with the last run, gate CI."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from groove.cli.common import cli_given, command_options, config_from, use_color, warn
from groove.cli.retriever_flags import RETRIEVER_FLAGS
from groove.cli.words import EVAL_WHERE, FINDINGS_WHERE
from groove.settings import EVAL

if TYPE_CHECKING:
    from groove.evaluation.result import EvalRun


@click.command("eval")
@command_options(
    EVAL,
    after={
        "limit": [
            click.option(
                "--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text"
            )
        ],
        "diff": [
            click.option("--no-color", is_flag=True, help="No ANSI colours in the text report.")
        ],
    },
)
@click.pass_context
def eval_cmd(
    ctx: click.Context,
    fmt: str,
    no_color: bool,
    full: bool,
    export_run: Path | None,
    export_run_headings: bool,
    **params: Any,
) -> None:
    """Evaluate retrieval against golden queries: recall@k, MRR, nDCG@k, diff, CI gate."""
    from groove.cli.bars import ProgressBar
    from groove.cli.retriever_flags import spec_from_flags
    from groove.evaluation import run as evaluation
    from groove.evaluation.outputs import EvalOutputs
    from groove.evaluation.result import VERDICT_NOT_APPLIED, VERDICT_REGRESSION
    from groove.evaluation.settings import resolve_settings
    from groove.report import junit
    from groove.report.findings_text import warning_texts
    from groove.report.notes import cli_line, not_applied_message, regression_message
    from groove.report.rot import rot_message
    from groove.tuning.reach import PROBE

    config = config_from(ctx)
    retriever = spec_from_flags(**{name: params.pop(name) for name in RETRIEVER_FLAGS})
    settings = resolve_settings(config, retriever=retriever, face="cli", **cli_given(EVAL, params))
    outputs = EvalOutputs(
        export_run=export_run,
        export_run_by="heading" if export_run_headings else "path",
        junit=junit,
        report=(lambda run: _print_report(run, fmt, full=full, color=use_color(no_color)),),
    )
    bar = ProgressBar()
    try:
        result = evaluation.run(
            settings,
            outputs,
            grid=PROBE,
            progress=bar,
            on_note=lambda note: warn(cli_line("eval", note)),
        )
    finally:
        bar.close()
    for text in warning_texts(result.findings, full=full, where=FINDINGS_WHERE):
        warn(text)
    if result.verdict == VERDICT_REGRESSION:
        warn(regression_message(result, switch=EVAL["fail_on_regression"].flag or ""))
        rot = rot_message(result)
        if rot is not None:
            warn(rot)
    elif result.verdict == VERDICT_NOT_APPLIED:
        warn(not_applied_message(result, switch=EVAL["require_baseline"].flag or ""))
    if result.exit_code:
        ctx.exit(result.exit_code)


def _print_report(run: EvalRun, fmt: str, *, full: bool, color: bool) -> None:
    """The report on stdout, flushed: written before the run enters the history."""
    from groove.report import eval_json, eval_markdown, eval_text

    if fmt == "json":
        report = eval_json.render(run)
    elif fmt == "markdown":
        report = eval_markdown.render(run, full=full, where=EVAL_WHERE)
    else:
        report = eval_text.render(run, color=color, full=full, where=EVAL_WHERE)
    click.echo(report, nl=False)
    sys.stdout.flush()


def register(cli: click.Group) -> None:
    cli.add_command(eval_cmd)
