"""Which stored run the gate compares a new run with, and the named baselines.

The seed compared with the newest run of the history, if compatible. That let ordinary
actions move or silence the gate: a run that failed the gate became the next run's
baseline (re-running a failed CI job passed), and one experiment with another retriever or
lexical mode became the newest run and switched the gate off. The rule here:

* ``--baseline NAME`` (or ``[eval].baseline``): the run pinned under that name in the
  history file (``groove baseline set NAME``). It moves only when someone pins another.
* otherwise: the newest run **of the same configuration** (an equal fingerprint) that did
  not fail the gate, or that was accepted (``groove baseline accept``). Runs of other
  configurations are skipped, never compared, and never displace it.

For a history of one configuration where every run passed this is the newest run, so the
diff and its messages are the seed's. The outcome a run is stored with (passed, regressed,
no baseline) is computed whether or not ``--fail-on-regression`` was given, so that a
regressed run made on a laptop cannot become CI's baseline either.

The edits (``pin``, ``unpin``, ``accept``) go through ``history.edit_history``: under the
history lock, atomic, all or nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from groove.errors import HistoryError, literal
from groove.history.history import History, SaveResult, edit_history, load_history
from groove.runs.fingerprint import Fingerprint
from groove.runs.record import RunRecord

WHY_NEWEST = "newest run"
WHY_PASSING = "newest passing run of this configuration"
WHY_ACCEPTED = "accepted with groove baseline accept"
WHY_PINNED = "pinned as '{name}'"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Baseline:
    """The run the gate compares with, or why there is none.

    ``run`` is None when there is nothing comparable; ``reason`` then says why (the
    sentence after "regression gate not applied: "). ``why`` says how the run was chosen;
    ``newest`` whether it is the newest run of the history (the seed's only candidate).
    """

    run: RunRecord | None
    why: str | None = None
    newest: bool = False
    name: str | None = None
    reason: str | None = None

    @property
    def stated(self) -> bool:
        """Must the reports name this baseline? Yes when it is not what the seed would
        have compared with (the newest run), or when it was pinned by name."""
        return self.run is not None and (not self.newest or self.name is not None)

    def to_dict(self) -> dict[str, Any] | None:
        if self.run is None:
            return None
        return self.run.reference(why=self.why, name=self.name, newest=self.newest)


def choose(history: History, fingerprint: Fingerprint, name: str | None = None) -> Baseline:
    """The baseline of a run with ``fingerprint`` in ``history`` (see the module's rule)."""
    newest = history.newest
    if name is not None:
        return _pinned(history, fingerprint, name)
    for run in history.runs:
        if run.fingerprint.compatible_with(fingerprint) and run.passed:
            why = WHY_ACCEPTED if run.accepted and run.outcome == "regressed" else WHY_PASSING
            is_newest = run is newest
            return Baseline(run, WHY_NEWEST if is_newest else why, is_newest)
    if newest is None:
        return Baseline(None, reason="no previous run in the history")
    if any(r.fingerprint.compatible_with(fingerprint) for r in history.runs):
        return Baseline(
            None,
            reason="every stored run of this configuration failed the gate; "
            "accept one with `groove baseline accept` if the drop was intended",
        )
    return Baseline(
        None, reason=f"no stored run of this configuration ({difference(newest, fingerprint)})"
    )


def _pinned(history: History, fingerprint: Fingerprint, name: str) -> Baseline:
    run_id = history.pins.get(name)
    if run_id is None:
        return Baseline(None, name=name, reason=f"no run is pinned as '{name}'")
    run = history.by_id(run_id)
    if run is None:
        return Baseline(None, name=name, reason=f"the run pinned as '{name}' ({run_id}) is gone")
    if not run.fingerprint.compatible_with(fingerprint):
        what = difference(run, fingerprint, since="the pinned run")
        return Baseline(
            None,
            name=name,
            reason=f"the run pinned as '{name}' ({run.id}, {run.timestamp}) has another "
            f"configuration ({what})",
        )
    return Baseline(run, WHY_PINNED.format(name=name), run is history.newest, name)


def difference(run: RunRecord, fingerprint: Fingerprint, since: str = "last run") -> str:
    """What differs between ``run``'s fingerprint and ``fingerprint``, in the words of the
    seed's diff-disabled messages (``golden changed since last run``)."""
    before = run.fingerprint
    if before.golden_hash != fingerprint.golden_hash:
        return f"golden changed since {since}"
    if before.retriever != fingerprint.retriever:
        return f"retriever changed since {since}"
    if before.lexical != fingerprint.lexical:
        return f"lexical mode changed since {since} ({before.lexical} -> {fingerprint.lexical})"
    return f"config or metric version changed since {since}"


# ---------------------------------------------------------------- edits


def check_name(name: str) -> str:
    if not NAME_PATTERN.match(name):
        raise HistoryError(
            f"baseline name {name!r} is not a plain name",
            "use letters, digits, '.', '_' or '-' (up to 64), like main or release-2",
        )
    return name


def find_run(history: History, ref: str | None, path: Path) -> RunRecord:
    """The run ``ref`` names (a run name given with ``groove eval --name``, the newest run
    of that name; else an id or an unambiguous prefix of one); None: the newest."""
    if not history.runs:
        raise HistoryError(
            literal(f"the eval history {path} holds no runs"),
            "run {eval_command} first",
            setting="history",
        )
    if ref is None:
        return history.runs[0]
    named = next((r for r in history.runs if r.name == ref), None)
    if named is not None:
        return named
    wanted = ref.strip().lower()
    matches = [r for r in history.runs if r.id.startswith(wanted)] if wanted else []
    if len(matches) == 1:
        return matches[0]
    listed = "groove baseline list shows the ids and names"
    if not matches:
        raise HistoryError(f"no run in the eval history has the name or id {ref!r}", listed)
    ids = ", ".join(r.id for r in matches[:5])
    raise HistoryError(f"run id {ref!r} is ambiguous: {ids}", f"give more characters; {listed}")


def pin(path: Path, name: str, ref: str | None, history_size: int) -> RunRecord:
    """Pin the run ``ref`` (default: the newest) as ``name``; return it."""
    check_name(name)
    chosen: list[RunRecord] = []

    def change(history: History) -> History:
        run = find_run(history, ref, path)
        chosen.append(run)
        return replace(history, pins={**history.pins, name: run.id})

    edit_history(path, change, history_size)
    return chosen[0]


def unpin(path: Path, name: str, history_size: int) -> str:
    """Remove the pin ``name``; return the id it pointed at."""
    removed: list[str] = []

    def change(history: History) -> History:
        if name not in history.pins:
            known = ", ".join(sorted(history.pins)) or "none"
            raise HistoryError(f"no baseline is named '{name}'", f"pinned names: {known}")
        removed.append(history.pins[name])
        return replace(history, pins={k: v for k, v in history.pins.items() if k != name})

    edit_history(path, change, history_size)
    return removed[0]


def accept(
    path: Path, ref: str | None, name: str | None, history_size: int
) -> tuple[RunRecord, SaveResult]:
    """Mark the run ``ref`` (default: the newest) accepted, so that the default rule may
    compare the next runs of its configuration with it although it fell; with ``name``,
    pin it as well."""
    if name is not None:
        check_name(name)
    chosen: list[RunRecord] = []

    def change(history: History) -> History:
        run = find_run(history, ref, path)
        accepted = replace(run, accepted=True)
        chosen.append(accepted)
        runs = tuple(accepted if r is run else r for r in history.runs)
        pins = {**history.pins, name: run.id} if name is not None else history.pins
        return replace(history, runs=runs, pins=pins)

    saved = edit_history(path, change, history_size)
    return chosen[0], saved


def accept_into_file(
    path: Path, ref: str | None, file: Path, name: str | None, history_size: int
) -> tuple[RunRecord, bool]:
    """Write the run ``ref`` (default: the newest) of the history at ``path`` into the
    baseline file ``file`` (groove.history.baseline_file), the floor a pull request
    reviews; the history itself is only read (with ``name``, the run is pinned there too).
    Returns the run and whether the file changed."""
    from groove.history.baseline_file import write_baseline_file

    if name is not None:
        check_name(name)
    history = load_history(path)
    run = find_run(history, ref, path)
    changed = write_baseline_file(file, run)
    if name is not None:
        pin(path, name, run.id, history_size)
    return run, changed


def listing(path: Path) -> History:
    return load_history(path)
