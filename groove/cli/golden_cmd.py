"""``groove golden import`` / ``export-qrels`` (golden sets to and from IR tooling) and
``groove golden doctor`` (broken expected entries after a KB reorganisation)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from groove.cli.common import command_options, config_from, warn
from groove.resolve import resolve
from groove.settings import GOLDEN_DOCTOR, GOLDEN_EXPORT_QRELS, GOLDEN_IMPORT, Setting


@click.group("golden")
def golden_group() -> None:
    """Golden sets: qrels in and out, pool unjudged hits, apply judgements."""


@golden_group.command("import")
@command_options(GOLDEN_IMPORT)
def import_cmd(
    qrels: Path, queries: Path, path_template: str, min_relevance: int, out: Path | None
) -> None:
    """Build a golden YAML from qrels plus a queries file."""
    from groove.golden.qrels import golden_from_qrels, read_qrels, read_queries, write_atomic
    from groove.golden.queries import load_golden

    text, count = golden_from_qrels(
        read_qrels(qrels),
        read_queries(queries),
        path_template=path_template,
        min_relevance=min_relevance,
        source=f"{qrels.name} and {queries.name}",
    )
    if out is None:
        click.echo(text, nl=False)
    else:
        write_atomic(out, text)
        load_golden(out)  # what was written reads back under the golden schema
    warn(f"groove golden import: {count} queries with relevant documents")


@golden_group.command("export-qrels")
@command_options(GOLDEN_EXPORT_QRELS)
@click.pass_context
def export_qrels_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    golden: Path | None,
    out: Path | None,
    queries_out: Path | None,
) -> None:
    """Write a golden set as TREC qrels (qid 0 docid 1; docid = path or path#heading)."""
    from groove.golden.qrels import qrels_lines, queries_lines, write_atomic
    from groove.golden.queries import load_golden

    golden_set = load_golden(
        golden_file(golden_settings(ctx, GOLDEN_EXPORT_QRELS, kb_path, golden))
    )
    if queries_out is not None:
        write_atomic(queries_out, queries_lines(golden_set))
    if out is None:
        click.echo(qrels_lines(golden_set), nl=False)
    else:
        write_atomic(out, qrels_lines(golden_set))


@golden_group.command("doctor")
@command_options(GOLDEN_DOCTOR)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
@click.pass_context
def doctor_cmd(
    ctx: click.Context,
    kb_path: Path | None,
    golden: Path | None,
    apply: bool,
    accept_likely: bool,
    model: str | None,
    model_path: Path | None,
    db_path: Path | None,
    fmt: str,
) -> None:
    """Find expected entries the index lost (moved, renamed, split, deleted) and fix them."""
    from groove.cli.words import DOCTOR_SWITCHES
    from groove.evaluation.doctor import resolve_doctor, run_doctor
    from groove.report.doctor_text import render

    config = config_from(ctx)
    given = {
        "kb_path": kb_path,
        "golden": golden,
        "apply": apply,
        "accept_likely": accept_likely,
        "model": model,
        "model_path": model_path,
        "db_path": db_path,
    }
    report = run_doctor(resolve_doctor(config, given))
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        switches = DOCTOR_SWITCHES
        click.echo(
            render(report, apply=apply, accept_likely=accept_likely, switches=switches), nl=False
        )
    if report.written:
        warn("groove golden doctor: the next eval notes that the golden set changed (no diff)")


def golden_settings(
    ctx: click.Context, table: Mapping[str, Setting], kb_path: Path | None, golden: Path | None
) -> dict[str, Any]:
    """A golden command's settings: the flags over groove.toml over the declared defaults."""
    return resolve(table, config_from(ctx), {"kb_path": kb_path, "golden": golden})


def golden_file(values: Mapping[str, Any]) -> Path:
    """--golden, else [eval].golden, else the KB's golden file (the golden commands' rule)."""
    from groove.engine.session import check_kb_path
    from groove.errors import GoldenError
    from groove.evaluation.settings import golden_file as golden_of

    if values["golden"] is None and values["kb_path"] is None:
        raise GoldenError("no golden file given", "pass --golden FILE or --kb-path KB")
    kb = None if values["golden"] is not None else check_kb_path(values["kb_path"])
    found = golden_of(values["golden"], kb)
    assert found is not None  # a golden file, or a KB's
    return found


def register(cli: click.Group) -> None:
    cli.add_command(golden_group)
