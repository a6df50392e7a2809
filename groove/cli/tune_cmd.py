"""``groove tune``: the guarded sweep of rrf_k and the bm25 column weights, or, with
``--retriever``, of another engine's fusion over the legs it returns."""

from __future__ import annotations

from pathlib import Path

import click

from groove.cli.common import config_from, setting_options, use_color, warn
from groove.cli.words import TUNE_WHERE
from groove.settings import TUNE, LexicalMode


@click.command("tune")
@setting_options(TUNE, "kb_path", "golden", "model", "model_path", "k_values", "limit")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.option("--no-color", is_flag=True, help="No ANSI styles in the text report.")
@setting_options(TUNE, "lexical", "db_path", "retriever", "retriever_name", "retriever_timeout")
@setting_options(TUNE, "family", "engine", "window")
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
    retriever_name: str | None,
    retriever_timeout: float | None,
    family: str | None,
    engine: str | None,
    window: int | None,
) -> None:
    """Measure whether rrf_k and the bm25 weights can move nDCG@5; recommend only if guarded."""
    from groove.config import parse_k_list

    if retriever is not None:
        from groove.tuning.external_settings import refuse_index_settings

        refuse_index_settings(model=model, model_path=model_path, lexical=lexical, db_path=db_path)
        _tune_retriever(
            ctx, retriever, retriever_name, retriever_timeout, kb_path, golden, k_text, limit,
            fmt, family or "rrf", engine, window,
        )  # fmt: skip
        return
    for flag, value in (("--family", family), ("--engine", engine), ("--window", window)):
        if value is not None and not (flag == "--family" and value == "rrf"):
            from groove.errors import ConfigError

            raise ConfigError(f"{flag} needs --retriever", "pass --retriever SPEC as well")
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
        text = tune_text.render(result, color=use_color(no_color), where=TUNE_WHERE)
        click.echo(text, nl=False)


def _tune_retriever(
    ctx: click.Context,
    retriever: str,
    name: str | None,
    timeout: float | None,
    kb_path: Path | None,
    golden: Path | None,
    k_text: str | None,
    limit: int | None,
    fmt: str,
    family: str,
    engine: str | None,
    window: int | None,
) -> None:
    from groove.config import parse_k_list
    from groove.report import tune_external
    from groove.report.notes import progress_line
    from groove.retrievers.spec import RetrieverOptions, parse_spec
    from groove.tuning.external_settings import run_retriever

    options = RetrieverOptions(timeout=timeout) if timeout is not None else RetrieverOptions()
    spec = parse_spec(retriever, name=name, options=options)
    result = run_retriever(
        config_from(ctx),
        spec,
        kb_path=kb_path,
        golden=golden,
        k_values=parse_k_list(k_text) if k_text else None,
        limit=limit,
        family=family,
        engine=engine,
        window=window,
        progress=lambda event: warn(progress_line(event)),
    )
    for note in result.notes:
        warn(f"groove tune: {note.message}")
    if not result.ran_grid:  # as groove's own tune: the reason on stderr, exit 2
        warn(tune_external.render_no_effective(result))
        ctx.exit(result.exit_code)
    if fmt == "json":
        click.echo(tune_external.render_json(result), nl=False)
    else:
        click.echo(tune_external.render_text(result), nl=False)


def register(cli: click.Group) -> None:
    cli.add_command(tune_cmd)
