"""``groove baseline``: name, accept and list the runs the regression gate compares with."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from groove.cli.common import command_options, config_from, warn
from groove.resolve import resolve
from groove.settings import BASELINE, BASELINE_ACCEPT, BASELINE_RUN, Setting

if TYPE_CHECKING:
    from groove.runs.record import RunRecord


def _resolved(
    ctx: click.Context, table: Mapping[str, Setting], kb_path: Path | None, golden: Path | None
) -> dict[str, Any]:
    """The command's settings: the flags over groove.toml over the declared defaults."""
    return resolve(table, config_from(ctx), {"kb_path": kb_path, "golden": golden})


def _history(values: Mapping[str, Any], golden: Path | None) -> tuple[Path, int]:
    """The history file and its size; ``golden`` as given (a KB from groove.toml wins over
    the golden file groove.toml names)."""
    from groove.engine.session import check_kb_path
    from groove.errors import ConfigError
    from groove.history.history import history_path

    wanted, size = values["kb_path"], values["history_size"]
    if wanted is None and golden is not None:
        return history_path(golden.expanduser().parent), size
    if wanted is None:
        raise ConfigError(
            "groove baseline needs the knowledge base whose history it edits",
            "pass --kb-path KB (or --golden FILE for the history of --retriever runs)",
        )
    return history_path(check_kb_path(wanted)), size


@click.group("baseline")
def baseline_group() -> None:
    """Pin, accept and list the runs the regression gate compares with (docs/eval.md)."""


@baseline_group.command("set")
@click.argument("name")
@command_options(BASELINE_RUN)
@click.pass_context
def set_cmd(
    ctx: click.Context, name: str, ref: str | None, kb_path: Path | None, golden: Path | None
) -> None:
    """Pin a run as the baseline NAME (groove eval --baseline NAME compares with it)."""
    from groove.history.baseline import pin

    path, size = _history(_resolved(ctx, BASELINE_RUN, kb_path, golden), golden)
    run = pin(path, name, ref, size)
    click.echo(f"baseline '{name}' -> {run.id} ({run.timestamp}): {_configuration(run)}")


@baseline_group.command("accept")
@command_options(BASELINE_ACCEPT)
@click.pass_context
def accept_cmd(
    ctx: click.Context,
    ref: str | None,
    name: str | None,
    kb_path: Path | None,
    golden: Path | None,
    file: str | None,
) -> None:
    """Accept a run as the floor (an intended drop, or a gain to keep): the next runs of its
    configuration are compared with it. With --file, into the baseline file to commit."""
    from groove.history.baseline import accept, accept_into_file

    values = _resolved(ctx, BASELINE_ACCEPT, kb_path, golden)
    path, size = _history(values, golden)
    pinned = f", pinned as '{name}'" if name is not None else ""
    if file is None:
        run, _ = accept(path, ref, name, size)
        click.echo(f"accepted {run.id} ({run.timestamp}){pinned}: {_configuration(run)}")
        committed = _baseline_file(values, "")
        if committed.exists():
            warn(
                f"groove baseline: warning: the gate compares with the baseline file {committed}, "
                "which this leaves as it is; groove baseline accept --file moves it"
            )
        return
    target = _baseline_file(values, file)
    run, changed = accept_into_file(path, ref, target, name, size)
    same = "" if changed else " (unchanged)"
    click.echo(
        f"accepted {run.id} ({run.timestamp}){pinned} into {target}{same}: {_configuration(run)}"
    )


def _baseline_file(values: Mapping[str, Any], given: str) -> Path:
    """``--file PATH``; ``--file`` alone: [eval].baseline_file, else the default beside the
    golden file (``--golden``, else [eval].golden, else the KB's .groove-eval.yml)."""
    from groove.evaluation.settings import GOLDEN_FILE_NAME, baseline_file_for

    if given:
        return Path(given).expanduser()
    golden_path = values["golden"]
    if golden_path is None:
        assert values["kb_path"] is not None  # _history refused a call with neither
        golden_path = values["kb_path"].expanduser() / GOLDEN_FILE_NAME
    return baseline_file_for(values["baseline_file"], golden_path.expanduser())


@baseline_group.command("unset")
@click.argument("name")
@command_options(BASELINE)
@click.pass_context
def unset_cmd(ctx: click.Context, name: str, kb_path: Path | None, golden: Path | None) -> None:
    """Remove the pinned baseline NAME (its run stays in the history)."""
    from groove.history.baseline import unpin

    path, size = _history(_resolved(ctx, BASELINE, kb_path, golden), golden)
    run_id = unpin(path, name, size)
    click.echo(f"baseline '{name}' removed (was {run_id})")


@baseline_group.command("list")
@command_options(BASELINE)
@click.pass_context
def list_cmd(ctx: click.Context, kb_path: Path | None, golden: Path | None) -> None:
    """The stored runs, newest first: id, name, time, the gate's outcome, its baseline, pins."""
    from groove.history.history import load_history
    from groove.report.notes import cli_line

    path, _ = _history(_resolved(ctx, BASELINE, kb_path, golden), golden)
    history = load_history(path)
    for note in history.warnings:
        warn(cli_line("baseline", note))
    names: dict[str, list[str]] = {}
    for name, run_id in history.pins.items():
        names.setdefault(run_id, []).append(name)
    if not history.runs:
        click.echo(f"no runs in {path}")
        return
    # the run's own name (groove eval --name) beside its id; pins stay in brackets at the end
    width = max([len("name"), *(len(run.name or "-") for run in history.runs)])
    click.echo(
        f"{'id':<10}  {'name':<{width}}  {'timestamp':<25}  {'outcome':<11}  {'against':<10}  "
        "configuration"
    )
    for run in history.runs:
        outcome = "accepted" if run.accepted else (run.outcome or "passed")
        against = run.baseline_id or "-"
        pins = names.get(run.id)
        tail = f"  [{', '.join(sorted(pins))}]" if pins else ""
        line = (
            f"{run.id:<10}  {run.name or '-':<{width}}  {run.timestamp:<25}  {outcome:<11}  "
            f"{against:<10}"
        )
        click.echo(f"{line}  {_configuration(run)}{tail}")


def _configuration(run: RunRecord) -> str:
    """What a run measured, in a few words: a pin of another configuration than the gated
    runs' never applies, so `set` and `accept` say which one they chose."""
    fp = run.fingerprint
    what = (
        f"{fp.retriever.get('kind')} {fp.retriever.get('name')}"
        if fp.retriever
        else f"{fp.model}, lexical {fp.lexical}"
    )
    return f"{what}, limit {fp.limit}"


def register(cli: click.Group) -> None:
    cli.add_command(baseline_group)
