"""``groove tune``: the guarded sweep of rrf_k and the bm25 column weights, or, with
``--retriever``, of another engine's fusion over the legs it returns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from groove.cli.common import cli_given, command_options, config_from, use_color, warn
from groove.cli.words import TUNE_WHERE
from groove.settings import TUNE

if TYPE_CHECKING:
    from groove.notes import Note


@click.command("tune")
@command_options(
    TUNE,
    after={
        "limit": [
            click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text"),
            click.option("--no-color", is_flag=True, help="No ANSI styles in the text report."),
        ]
    },
)
@click.pass_context
def tune_cmd(ctx: click.Context, fmt: str, no_color: bool, **params: Any) -> None:
    """Measure whether rrf_k and the bm25 weights can move nDCG@5; recommend only if guarded."""
    from groove.report import tune_json, tune_text
    from groove.report.notes import progress_line
    from groove.tuning import run as tune
    from groove.tuning.retriever import RetrieverTuneSettings
    from groove.tuning.settings import resolve_settings as tune_settings

    settings = tune_settings(config_from(ctx), **cli_given(TUNE, params))
    retriever = isinstance(settings, RetrieverTuneSettings)
    result = tune.run(
        settings,
        progress=lambda event: warn(progress_line(event)),
        on_note=lambda note: warn(_note_line(note, retriever)),
    )
    if not result.ran_grid:  # the reason on stderr, exit 2
        warn(tune_text.render_no_effective(result))
        ctx.exit(result.exit_code)
    if fmt == "json":
        click.echo(tune_json.render(result), nl=False)
    else:
        text = tune_text.render(result, color=use_color(no_color), where=TUNE_WHERE)
        click.echo(text, nl=False)


def _note_line(note: Note, retriever: bool) -> str:
    """A note's stderr line (tune --retriever's without its level, as it always was)."""
    from groove.report.notes import cli_line

    return f"groove tune: {note.message}" if retriever else cli_line("tune", note)


def register(cli: click.Group) -> None:
    cli.add_command(tune_cmd)
