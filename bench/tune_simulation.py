"""Reproduce the AU-68 and AU-16 simulations behind `groove tune`'s 3 x SE gate.

The two names and the numbers that must not move: docs/architecture.md, "Numbers that must
stay bit-identical"; the results: docs/tune.md, "Why 3 × SE and not 2".

Prints, in the layout of the reference behaviour (spec B.15.4): the AU-68 grid (adopt % and,
in parentheses, % that adopted the true winner), the AU-16 table (first 300 replications of
the same streams) and the published headline table, then the wall time.

    .venv/bin/python bench/tune_simulation.py [--reps 2000]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# The simulation is research code, kept with the tests that pin its numbers (tests/helpers).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers.tune_simulation import (
    AU16_REPS,
    AU68_REPS,
    HEADLINE_FLOOR,
    SettingRun,
    au16_row,
    headline,
    percent,
    run_all,
)


def au68_lines(runs: Sequence[SettingRun]) -> list[str]:
    deltas = runs[0].min_deltas
    lines = [
        f"## AU-68: adopt % (adopted the true winner %), {runs[0].reps} replications",
        "",
        "| setting | mult | " + " | ".join(f"δ={d:.2f}" for d in deltas) + " |",
        "|---|---|" + "---|" * len(deltas),
    ]
    for run in runs:
        mults = " / ".join(f"{m:.1f}" for m in run.multipliers)
        cells = []
        for d in deltas:
            pairs = [run.cell(m, d) for m in run.multipliers]
            cells.append(
                " / ".join(
                    f"{percent(a, run.reps):.1f}({percent(w, run.reps):.1f})" for a, w in pairs
                )
            )
        lines.append(f"| {run.setting.label} | {mults} | " + " | ".join(cells) + " |")
    return lines


def au16_lines(runs: Sequence[SettingRun], reps: int) -> list[str]:
    lines = [
        f"## AU-16: first {reps} replications",
        "",
        "| setting | SE ratio all | ratio, stability>0.5 (n) | mean stab. | `m>2se` fired"
        " | decide@3.0 adopt | decide@2.0 adopt | distinct fold sel. | distinct refits |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        r = au16_row(run, reps)
        name = f"{r.setting.number}" + (" (not in AU-16)" if r.setting.number == 5 else "")
        lines.append(
            f"| {name} | {r.se_ratio_all:.3f} | {r.se_ratio_stable:.3f} ({r.n_stable})"
            f" | {r.mean_stability:.2f} | {r.fired_pct:.1f}% | {r.adopt_pct_shipping:.1f}%"
            f" | {r.adopt_pct_at_2:.1f}% | {r.distinct_fold_selections} | {r.distinct_refits} |"
        )
    return lines


def headline_lines(runs: Sequence[SettingRun]) -> list[str]:
    h = headline(runs)
    names = {2.0: "2 (before AU-68)", 3.0: "**3 (shipping)**", 4.0: "4"}
    lines = [
        f"## Published table: {runs[0].reps} replications, min-delta 0.02",
        "",
        "| multiplier | null adopt N=26 (setting 2) | null adopt N=12 (setting 5)"
        " | power (setting 4) |",
        "|---|---|---|---|",
    ]
    for i, m in enumerate(h.multipliers):
        lines.append(
            f"| {names.get(m, f'{m:g}')} | {h.null_n26[i]:.1f}% | {h.null_n12[i]:.1f}%"
            f" | {h.power[i]:.1f}% |"
        )
    lines += [
        "",
        f"min-delta {HEADLINE_FLOOR:.2f} at multiplier 2 => null {h.floor_null_n26:.1f}%,"
        f" power {h.floor_power:.1f}%",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=AU68_REPS, help="replications per setting")
    args = parser.parse_args()
    start = time.perf_counter()
    runs = run_all(args.reps)
    elapsed = time.perf_counter() - start
    agrees = all(bool(run.shipping_agrees.all()) for run in runs)
    print("\n".join(au68_lines(runs)))
    print()
    print("\n".join(au16_lines(runs, min(AU16_REPS, args.reps))))
    print()
    print("\n".join(headline_lines(runs)))
    print()
    print(f"shipping cell (3.0, 0.02) equals decide() in every replication: {agrees}")
    print(f"wall time: {elapsed:.1f} s for {len(runs)} settings x {args.reps} replications")


if __name__ == "__main__":
    main()
