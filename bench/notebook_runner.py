"""What the notebook runner costs on top of `groove eval` doing the same evaluation.

    python bench/notebook_runner.py [--repeat 3] [--kb-path KB --golden G]

Times, as separate processes (median of --repeat runs):

    cli       groove eval --kb-path KB --golden G --no-history --format json
    notebook  groove notebook run eval-report --kb-path KB -p golden G -p history false
    empty     the runner on a notebook that only writes result.json (kernel start,
              papermill, nbconvert: the fixed cost of any notebook run)

run in turn so that they share whatever load the machine has, with the CPU seconds of
each process tree beside the wall time; then one in-process runner call for its phases
(prepare / execute / html) and the notebook's cell durations (papermill records them).
Goal: notebook - cli <= 5 s of wall time.
The default KB is a copy of tests/fixtures/kb_en, indexed with the default model.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GROOVE = [str(Path(sys.executable).parent / "groove")]
GOAL_SECONDS = 5.0


@dataclass(frozen=True)
class Timing:
    wall: float  # seconds, as the user waits
    cpu: float  # user + system seconds of the process and its children (the kernel)


def _timed(command: list[str]) -> Timing:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def _interleaved(commands: dict[str, list[str]], repeat: int) -> dict[str, Timing]:
    """Median wall and CPU time of each command, run in turn so they share the same load."""
    runs: dict[str, list[Timing]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            runs[name].append(_timed(command))
    return {
        name: Timing(
            statistics.median(t.wall for t in timings), statistics.median(t.cpu for t in timings)
        )
        for name, timings in runs.items()
    }


def _fixture_kb(work: Path) -> tuple[Path, Path]:
    from groove.engine.embed import load_embedder
    from groove.engine.index import build

    kb = work / "kb"
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_en", kb)
    build(kb, load_embedder())
    return kb, REPO / "tests" / "fixtures" / "golden_en.yml"


def _empty_notebook(path: Path) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("result_path = 'result.json'")
    params.metadata["tags"] = ["parameters"]
    write = "import pathlib\npathlib.Path(result_path).write_text('{\"exit_code\": 0}')"
    nb.cells = [params, nbformat.v4.new_code_cell(write)]
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, str(path))
    return path


def _cell_seconds(notebook: Path) -> list[tuple[float, str]]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    rows = []
    for cell in cells:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]).splitlines()
        first = next((line for line in source if not line.startswith("#")), "")
        rows.append((cell["metadata"]["papermill"].get("duration") or 0.0, first[:48]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kb-path", type=Path)
    parser.add_argument("--golden", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="groove-bench-") as folder:
        work = Path(folder)
        if args.kb_path is not None and args.golden is not None:
            kb, golden = args.kb_path.resolve(), args.golden.resolve()
        else:
            kb, golden = _fixture_kb(work)
        out = work / "out"
        cli = [*GROOVE, "eval", "--kb-path", str(kb), "--golden", str(golden), "--no-history"]
        cli += ["--format", "json"]
        notebook = [*GROOVE, "notebook", "run", "eval-report", "--kb-path", str(kb)]
        notebook += ["-p", "golden", str(golden), "-p", "history", "false", "--out", str(out)]
        empty_nb = _empty_notebook(work / "empty.ipynb")
        empty = [*GROOVE, "notebook", "run", "--notebook", str(empty_nb), "--out", str(out)]
        _timed(cli)  # warm the page cache and the model files once
        load = os.getloadavg()[0]
        timings = _interleaved({"cli": cli, "notebook": notebook, "empty": empty}, args.repeat)
        report(kb, args.repeat, timings, load, golden, work)


def report(
    kb: Path, repeat: int, timings: dict[str, Timing], load: float, golden: Path, work: Path
) -> None:
    from groove.notebooks import runner

    cores = os.cpu_count()
    print(f"# notebook runner vs CLI on {kb}")
    print(f"# median of {repeat} interleaved runs; {cores} cores, load average {load:.1f}")
    print(f"{'':34}{'wall':>8}{'cpu':>8}")
    rows = [
        ("groove eval (CLI)", "cli"),
        ("groove notebook run eval-report", "notebook"),
        ("runner on an empty notebook", "empty"),
    ]
    for label, key in rows:
        t = timings[key]
        print(f"{label:<34}{t.wall:7.2f}s{t.cpu:7.2f}s")
    overhead = timings["notebook"].wall - timings["cli"].wall
    verdict = "within" if overhead <= GOAL_SECONDS else "OVER"
    print(f"overhead (wall)                   {overhead:+6.2f} s  ({verdict} the 5 s goal)")
    phases = runner.run_notebook(
        "eval-report",
        kb_path=kb,
        parameters={"golden": str(golden), "history": False},
        out_dir=work / "phases",
    )
    print("# one in-process runner call, by phase")
    for name, seconds in phases.seconds.items():
        print(f"  {name:<8} {seconds:6.2f} s")
    print("# cells of the executed notebook (papermill's durations)")
    for seconds, source in _cell_seconds(phases.notebook):
        print(f"  {seconds:6.2f} s  {source}")


if __name__ == "__main__":
    main()
