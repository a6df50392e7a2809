"""``groove tune``: the guarded sweep of rrf_k and the bm25 column weights, or, with
``--retriever``, of another engine's fusion over the legs it returns."""

from __future__ import annotations

from typing import Any

import click

from groove.cli.common import cli_given, command_options, config_from, use_color, warn
from groove.cli.words import TUNE_WHERE
from groove.settings import TUNE


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

    given = cli_given(TUNE, params)
    if given["retriever"] is not None:
        from groove.tuning.retriever import refuse_index_settings

        refuse_index_settings(given)
        _tune_retriever(ctx, given, fmt)
        return
    for name in ("family", "engine", "window", "retriever_allow_stale_copy"):
        value = given[name]
        if value is not None and not (name == "family" and value == "rrf"):
            from groove.errors import ConfigError

            flag = TUNE[name].flag
            raise ConfigError(f"{flag} needs --retriever", "pass --retriever SPEC as well")
    from groove.report import tune_json, tune_text
    from groove.report.notes import cli_line, progress_line
    from groove.tuning import run as tune
    from groove.tuning.settings import resolve_settings as tune_settings

    settings = tune_settings(config_from(ctx), **given)
    for note in settings.notes:
        warn(cli_line("tune", note))
    result = tune.run(
        settings,
        progress=lambda event: warn(progress_line(event)),
        on_note=lambda note: warn(cli_line("tune", note)),
    )
    if not result.ran_grid:
        warn(tune_text.render_no_effective(result))
        ctx.exit(result.exit_code)
    if fmt == "json":
        click.echo(tune_json.render(result), nl=False)
    else:
        text = tune_text.render(result, color=use_color(no_color), where=TUNE_WHERE)
        click.echo(text, nl=False)


def _tune_retriever(ctx: click.Context, given: dict[str, Any], fmt: str) -> None:
    from groove.report import tune_json, tune_text
    from groove.report.notes import progress_line
    from groove.retrievers.spec import RetrieverOptions, parse_spec
    from groove.tuning.retriever import run_retriever

    timeout = given.pop("retriever_timeout")
    allow_stale = bool(given.pop("retriever_allow_stale_copy"))
    options = RetrieverOptions(
        timeout=timeout if timeout is not None else RetrieverOptions().timeout,
        allow_stale_copy=allow_stale,
    )
    spec = parse_spec(given.pop("retriever"), name=given.pop("retriever_name"), options=options)
    result = run_retriever(
        config_from(ctx), spec, progress=lambda event: warn(progress_line(event)), **given
    )
    for note in result.notes:
        warn(f"groove tune: {note.message}")
    if not result.ran_grid:  # as groove's own tune: the reason on stderr, exit 2
        warn(tune_text.render_no_effective(result))
        ctx.exit(result.exit_code)
    if fmt == "json":
        click.echo(tune_json.render(result), nl=False)
    else:
        click.echo(tune_text.render(result), nl=False)


def register(cli: click.Group) -> None:
    cli.add_command(tune_cmd)
