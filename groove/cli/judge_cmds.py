"""``groove golden pool`` / ``import-judgements`` / ``apply``: the judgement loop's commands
(docs/judgements.md). The judging view itself is a notebook: ``groove notebook open judge``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from groove.cli.common import command_options, config_from, warn
from groove.cli.golden_cmd import golden_file, golden_group, golden_settings
from groove.settings import GOLDEN_APPLY, GOLDEN_IMPORT_JUDGEMENTS, POOL, LexicalMode


@golden_group.command("pool")
@command_options(POOL)
@click.pass_context
def pool_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    golden: Path | None,
    depth: int | None,
    no_history: bool,
    runs: tuple[str, ...],
    current: bool,
    tune: bool,
    model: str | None,
    model_path: Path | None,
    limit: int | None,
    lexical: LexicalMode | None,
    db_path: Path | None,
    out: Path | None,
    **retriever_flags: Any,
) -> None:
    """List the hits no expected entry and no judgement covers, most useful first."""
    from groove.cli.retriever_flags import spec_from_flags
    from groove.judging.exchange import export_pool, file_format
    from groove.judging.run import pool, resolve
    from groove.report.notes import cli_line

    if out is not None:
        file_format(out)  # a bad name fails before any retrieval runs
    given = {
        "kb_path": kb_path,
        "golden": golden,
        "depth": depth,
        "history": not no_history,
        "runs": runs,
        "current": current,
        "tune": tune,
        "model": model,
        "model_path": model_path,
        "limit": limit,
        "lexical": lexical,
        "db_path": db_path,
    }
    request = resolve(config_from(ctx), given, retriever=spec_from_flags(**retriever_flags))
    result = pool(request)
    for note in result.notes:
        warn(cli_line("golden pool", note))
    warn(f"groove golden pool: {result.summary()}")
    by_slice = result.slice_summary()
    if by_slice is not None:
        warn(f"groove golden pool: {by_slice}")
    if out is not None:
        export_pool(result, out)
        warn(f"groove golden pool: wrote {out}")
        return
    for c in result.candidates:
        heading = f" › {c.heading}" if c.heading else ""
        click.echo(f"{c.query_id}\t{c.path}{heading}\t{c.priority:.3f}\t{c.sources}")


@golden_group.command("import-judgements")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@command_options(GOLDEN_IMPORT_JUDGEMENTS)
@click.pass_context
def import_cmd(
    ctx: click.Context, file: Path, kb_path: Path | None, golden: Path | None, by: str | None
) -> None:
    """Read the verdicts of an exported pool (.csv or .jsonl) into the judgements file."""
    from groove.golden.judgements import judge_name, judgements_path, save_judgements
    from groove.golden.queries import load_golden
    from groove.judging.exchange import read_verdicts

    values = golden_settings(ctx, GOLDEN_IMPORT_JUDGEMENTS, kb_path, golden)
    golden_path = golden_file(values)
    imported = read_verdicts(file, load_golden(golden_path), judge_name(by, values["judge"]))
    target = judgements_path(golden_path)
    saved = save_judgements(target, imported.judgements)
    warn(f"groove golden import-judgements: {imported.summary()}")
    click.echo(f"{target}: {len(saved)} judgements")


@golden_group.command("apply")
@command_options(GOLDEN_APPLY)
@click.pass_context
def apply_cmd(ctx: click.Context, kb_path: Path | None, golden: Path | None, dry_run: bool) -> None:
    """Add the relevant judgements to `expected` in the golden YAML (comments kept)."""
    from groove.golden.judgements import judgements_path, load_judgements
    from groove.judging.apply import apply

    golden_path = golden_file(golden_settings(ctx, GOLDEN_APPLY, kb_path, golden))
    result = apply(golden_path, load_judgements(judgements_path(golden_path)), dry_run=dry_run)
    for line in result.lines():
        click.echo(line)
    if result.written:
        warn("groove golden apply: the next eval notes that the golden set changed (no diff)")


def register(cli: click.Group) -> None:
    """The commands join ``groove golden`` (registered by groove.cli.golden_cmd)."""
