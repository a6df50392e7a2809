"""``groove compare``: eval runs from the history or saved files against a baseline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from groove.cli.common import cli_given, command_options, config_from
from groove.settings import COMPARE

if TYPE_CHECKING:
    from groove.golden.judgements import Judgements
    from groove.stats.compare import LabelledRun


@click.command("compare")
@click.argument("refs", nargs=-1)
@command_options(COMPARE)
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text")
@click.pass_context
def compare_cmd(
    ctx: click.Context,
    refs: tuple[str, ...],
    kb_path: Path | None,
    baseline: str | None,
    alpha: float | None,
    last: int,
    golden: Path | None,
    slice_by: str | None,
    fmt: str,
) -> None:
    """Compare eval runs with paired statistics per metric.

    Each REF is a run's name (`groove eval --name`), a position in the eval history (1 =
    the newest run), a timestamp or a run id (or a unique prefix of one) or a saved run
    (`groove eval --format json` output, an eval-report result.json). Without REFS: the
    last comparable runs of the history, the oldest of them as the baseline.
    """
    given = cli_given(COMPARE, locals())  # the options, by setting name
    from groove.errors import HistoryError
    from groove.history.history import history_path, load_history
    from groove.report import compare as report
    from groove.resolve import resolve
    from groove.stats.compare import compare_runs, default_runs, resolve_refs

    values = resolve(COMPARE, config_from(ctx), given)
    kb, baseline, last = values["kb_path"], values["baseline"], values["last"]
    wanted = [*refs] + ([baseline] if baseline is not None else [])
    needs_history = not wanted or any(not Path(r).expanduser().is_file() for r in wanted)
    history: tuple = ()
    if needs_history:
        if kb is None:
            raise HistoryError(
                "no knowledge base given, so no eval history to read",
                "pass --kb-path (or set kb_path in groove.toml), or pass saved run files",
            )
        history = load_history(history_path(Path(kb))).runs
    runs = resolve_refs(refs, history) if refs else default_runs(history, last)
    index = 0
    if baseline is not None:
        chosen = resolve_refs([baseline], history)[0]
        same = [i for i, r in enumerate(runs) if r.record is chosen.record or r == chosen]
        if same:
            index = same[0]
        else:
            runs.insert(0, chosen)
    if len(runs) < 2:
        hint = _second_ref_hint(runs[0], history) if refs else _hint(history)
        raise HistoryError(f"{len(runs)} run(s) to compare: need at least two", hint)
    comparison = compare_runs(
        runs,
        index,
        alpha=values["alpha"],
        judgements=_judgements(values["golden"], kb),
        slice_by=values["slice_by"],
    )
    if fmt == "json":
        click.echo(report.render_json(comparison), nl=False)
    elif fmt == "markdown":
        click.echo(report.render_markdown(comparison), nl=False)
    else:
        click.echo(report.render_text(comparison), nl=False)


def _hint(history: tuple) -> str:
    """Without REFS only runs of the newest run's configuration are compared: when older
    runs of other configurations exist, name the two newest as REFS to compare."""
    from groove.runs.described import label

    if len(history) < 2:
        return "run `groove eval` again, or pass two REFS (run names, positions or saved files)"
    older, newest = label(history[1]), label(history[0])
    return (
        "the newest run is the only stored run of its configuration; to compare "
        f"configurations pass REFS (run names, ids or positions): groove compare {older} {newest}"
    )


def _second_ref_hint(chosen: LabelledRun, history: tuple) -> str:
    """One REF given: name a second one, the newest other stored run, older run first (the
    first REF is the baseline)."""
    from groove.runs.described import label

    other = next((r for r in history if r is not chosen.record), None)
    if other is None:
        return "run `groove eval` again, or pass a second REF (a run name, position or saved file)"
    position = {id(r): i for i, r in enumerate(history)}  # 0 = the newest
    chosen_newer = position.get(id(chosen.record), len(history)) < position[id(other)]
    pair = (other, chosen.record) if chosen_newer else (chosen.record, other)
    return (
        "pass a second REF to compare it with (a run name, id, position or saved file): "
        f"groove compare {label(pair[0])} {label(pair[1])}"
    )


def _judgements(golden: Path | None, kb: Path | None) -> Judgements | None:
    """The judgements beside the golden file, when that file exists (else no judged@k)."""
    from groove.evaluation.settings import GOLDEN_FILE_NAME
    from groove.golden.judgements import judgements_path, load_judgements

    if golden is None and kb is not None:
        golden = Path(kb) / GOLDEN_FILE_NAME
    if golden is None or not judgements_path(golden).exists():
        return None
    return load_judgements(judgements_path(golden))


def register(cli: click.Group) -> None:
    cli.add_command(compare_cmd)
