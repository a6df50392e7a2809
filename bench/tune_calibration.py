"""What the calibrated SE adds to `groove tune` on Cranfield, measured side by side.

Runs `groove tune` once (the calibrated SE included, as shipped), then times the calibrated
SE alone on the same table (both bootstrap levels), and prints the SEs.

    .venv/bin/python bench/tune_calibration.py [--cranfield DIR] [--resamples 200]

``--cranfield DIR``: a folder with kb/, golden.yml and an index beside kb/; default: the
indexed copy bench/_cranfield.py builds.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _cranfield import indexed_cranfield

from groove.config import Config
from groove.engine.embed import load_embedder
from groove.tuning import run as tune
from groove.tuning.calibrated import CALIBRATION_REPLICATES, calibrated_se
from groove.tuning.settings import resolve_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cranfield", type=Path, default=None)
    parser.add_argument("--resamples", type=int, default=CALIBRATION_REPLICATES)
    args = parser.parse_args()
    if args.cranfield is None:
        kb, golden = indexed_cranfield()
    else:
        kb, golden = args.cranfield / "kb", args.cranfield / "golden.yml"
    embedder = load_embedder()
    settings = resolve_settings(Config(), kb_path=kb, golden=golden)
    start = time.perf_counter()
    result = tune.run(settings, embedder=embedder)
    total = time.perf_counter() - start
    analysis = result.analysis
    if analysis is None:
        raise SystemExit("no effective query: the grid did not run")
    start = time.perf_counter()
    cal = calibrated_se(analysis.table.primary, result.effective_rows, replicates=args.resamples)
    alone = time.perf_counter() - start
    loo = analysis.loo
    print(f"groove tune on Cranfield: {len(result.effective_rows)} effective queries")
    print(f"  whole run (calibrated SE included)  {total:7.1f} s")
    print(
        f"  calibrated SE alone ({args.resamples} resamples)   {alone:7.1f} s"
        f"   share of the run {alone / total:5.1%}"
    )
    print(
        f"  mean held-out delta {loo.mean_delta:+.4f}; paired SE {loo.paired_se:.4f};"
        f" calibrated SE {cal.se:.4f} (±{100 * cal.relative_precision:.0f}%;"
        f" plain bootstrap {cal.bootstrap_se:.4f})"
    )


if __name__ == "__main__":
    main()
