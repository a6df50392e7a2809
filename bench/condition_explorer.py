"""How fast the tune explorer's condition picker redraws at 1,000 queries x 384 conditions.

The picker (groove.report.notebook.picker.ConditionPicker) redraws from the metric table in memory:
one per-query ΔnDCG@5 figure and its PNG. This times, on a synthetic table of 1,000 queries
(nDCG values on the grid of a real run: a few distinct values per query, most conditions
tied), building the picker (the 384-row condition summary included), then each step of a
redraw separately and together, over a dozen conditions; and a re-sort plus a filter of
the dropdown. The goal is a redraw within one second. Wall and CPU time are both printed:
on a machine other jobs keep busy, the CPU time is what the redraw itself costs.

    python bench/condition_explorer.py [--queries 1000] [--repeat 12]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np


def synthetic_result(n: int, seed: int = 11):  # type: ignore[no-untyped-def]
    from groove.golden.queries import GoldenQuery
    from groove.metrics import Expected
    from groove.tuning.analysis import analyse
    from groove.tuning.grid import N_CONDITIONS
    from groove.tuning.result import EngineLegs, QueryDiagnostics, TuneResult
    from groove.tuning.table import MetricTable

    rng = np.random.default_rng(seed)
    base = rng.choice([0.0, 0.2, 0.39, 0.5, 0.63, 1.0], size=(n, 1))
    moves = rng.random((n, N_CONDITIONS)) < 0.15  # most conditions leave a query alone
    values = np.where(moves, rng.choice([0.0, 0.3, 0.6, 1.0], size=(n, N_CONDITIONS)), base)
    table = MetricTable.uniform(values, (1, 5, 10))
    queries = tuple(
        GoldenQuery(f"query-{i:04d}", f"query text {i}", (Expected("a.md"),), (), None)
        for i in range(n)
    )
    diagnostics = tuple(QueryDiagnostics(q.id, 9, 20, 3, False, True, 0) for q in queries)
    return TuneResult(
        golden_path=Path("/kb/golden.yml"),
        limit=10,
        k_values=(1, 5, 10),
        queries=queries,
        source=EngineLegs(
            model="m",
            candidate_pool=50,
            chunk_total=5000,
            context_axis_noop=False,
            diagnostics=diagnostics,
        ),
        analysis=analyse(table, list(range(n))),
        kb_path=Path("/kb"),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=12)
    args = parser.parse_args()

    from groove.report import plots
    from groove.report.notebook import picker as views
    from groove.tuning.grid import Condition

    result = synthetic_result(args.queries)
    assert result.analysis is not None
    started = time.perf_counter()
    picker = views.ConditionPicker(result, result.analysis)
    build = time.perf_counter() - started

    conditions = [Condition.from_index(i) for i in range(7, 384, 384 // args.repeat)]
    figure, png, total = [], [], []
    for condition in conditions:
        t0 = time.perf_counter()
        fig = plots.per_query_deltas(
            result.analysis.table, [q.id for q in result.queries], condition
        )
        t1 = time.perf_counter()
        plots.png_bytes(fig)
        t2 = time.perf_counter()
        figure.append(t1 - t0)
        png.append(t2 - t1)
    cpu = []
    for condition in conditions:
        t0, c0 = time.perf_counter(), time.process_time()
        picker.dropdown.value = condition.index  # what a pick in the dropdown does
        total.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    t0 = time.perf_counter()
    picker.sort.value = "fold picks, most first"
    picker.filter.value = "k=60"
    relist = time.perf_counter() - t0

    load = os.getloadavg()[0]
    print(f"# condition picker, {args.queries} queries x 384 conditions; "
          f"{os.cpu_count()} cores, load average {load:.1f}")  # fmt: skip
    print(f"build the picker (condition summary, first draw)  {build:6.3f} s")
    print(f"redraw, median of {len(conditions)} conditions:")
    print(f"  figure                                          {statistics.median(figure):6.3f} s")
    print(f"  PNG                                             {statistics.median(png):6.3f} s")
    print(f"  pick in the dropdown (figure + PNG + output)    {statistics.median(total):6.3f} s")
    print(f"  the same, CPU time of this process              {statistics.median(cpu):6.3f} s")
    print(f"  slowest pick                                    {max(total):6.3f} s")
    print(f"re-sort and filter the dropdown (2 changes)       {relist:6.3f} s")


if __name__ == "__main__":
    main()
