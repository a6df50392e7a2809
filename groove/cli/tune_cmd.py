"""``groove tune``: the guarded sweep of rrf_k and the bm25 column weights."""

from __future__ import annotations

from pathlib import Path

import click

from groove.cli.common import config_from, setting_options, use_color, warn
from groove.settings import TUNE, LexicalMode


@click.command("tune")
@setting_options(TUNE, "kb_path", "golden", "model", "model_path", "k_values", "limit")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--no-color", is_flag=True, help="No ANSI styles in the text report.")
@setting_options(TUNE, "lexical", "db_path", "retriever")
@click.pass_context
def tune_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    golden: Path | None,
    model: str | None,
    model_path: Path | None,
    k_text: str | None,
    limit: int | None,
    fmt: str,
    no_color: bool,
    lexical: LexicalMode | None,
    db_path: Path | None,
    retriever: str | None,
) -> None:
    """Measure whether rrf_k and the bm25 weights can move nDCG@5; recommend only if guarded."""
    if retriever is not None:
        from groove.errors import ConfigError

        raise ConfigError(
            "groove tune sweeps groove's own fusion (rrf_k and the bm25 weights) and cannot "
            "tune an external retriever",
            "measure it with `groove eval --retriever SPEC`; tune its fusion in that system",
        )
    from groove.config import parse_k_list
    from groove.report import tune_json, tune_text
    from groove.report.notes import cli_line, progress_line
    from groove.tuning import run as tune
    from groove.tuning.settings import resolve_settings as tune_settings

    config = config_from(ctx)
    settings = tune_settings(
        config,
        kb_path=kb_path,
        golden=golden,
        k_values=parse_k_list(k_text) if k_text else None,
        limit=limit,
        model=model,
        model_path=model_path,
        db_path=db_path,
        lexical=lexical,
    )
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
        click.echo(tune_text.render(result, color=use_color(no_color)), nl=False)


def register(cli: click.Group) -> None:
    cli.add_command(tune_cmd)
