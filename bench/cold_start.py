"""A one-shot `groove search` against the model's floor, each in a fresh process.

The floor is what no search can avoid: start Python, import onnxruntime and tokenizers, load
the prepared default model (model.onnx, tokenizer.json) and embed the query, with no groove
code. Beside it, rotating in one run: `groove search` on the indexed Cranfield copy, `python
-c "import groove"`, and `groove eval` on the small English fixture KB (tests/fixtures).
Each figure is the median of --repeat runs (wall time of the child process); the ratio to the
floor is the goal (one-shot search / floor <= 1.5). The heavy modules each command imported
are listed too (none of fastembed, onnx, pandas, scipy, matplotlib should appear). The
children cache their bytecode (in a temporary folder), as an installed package does. Usage:

    .venv/bin/python bench/cold_start.py [--dataset ../shared/datasets/cranfield] [--repeat 5]
    .venv/bin/python bench/cold_start.py --kb /tmp/cranfield/kb   # an indexed copy
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _cranfield import DEFAULT_DATASET, REPO, indexed_cranfield

from groove.engine.embed import default_model_dir, load_embedder

QUERY = "what similarity laws must be obeyed when constructing aeroelastic models"
HEAVY = ("fastembed", "onnx", "pandas", "scipy", "matplotlib", "huggingface_hub", "loguru")

FLOOR = """
import sys
import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer
folder = sys.argv[1]
tok = Tokenizer.from_file(folder + "/tokenizer.json")
tok.enable_truncation(max_length=256)
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
session = ort.InferenceSession(
    folder + "/model.onnx", providers=["CPUExecutionProvider"], sess_options=options
)
e = tok.encode(sys.argv[2])
ids = np.array([e.ids], dtype=np.int64)
mask = np.array([e.attention_mask], dtype=np.int64)
states = session.run(None, {"input_ids": ids, "attention_mask": mask,
                            "token_type_ids": np.zeros_like(ids)})[0]
row = states[0].mean(axis=0)
print(row[:3] / np.linalg.norm(row))
"""

# runs a groove command in process, then reports which heavy top-level modules it imported
GROOVE_CLI = """
import sys
from groove.cli import cli
try:
    cli(sys.argv[2:], prog_name="groove")
except SystemExit as exit:
    if exit.code:
        raise
finally:
    heavy = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1].split(",")))
    print("heavy modules:", ",".join(heavy) or "none", file=sys.stderr)
"""


def child_env(pycache: Path) -> dict[str, str]:
    """The environment of the children: bytecode cached (in ``pycache``, outside the repo), as
    an installed package has it; without it each process compiles groove's modules anew."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": str(pycache)}


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds: user + system, the last stderr line) of one child process.
    On a shared machine the CPU time drifts far less than the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed:\n{done.stderr}")
    lines = done.stderr.strip().splitlines()
    return seconds, cpu, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--compare-with",
        type=Path,
        default=None,
        help="another checkout of groove (e.g. the code before a change): its one-shot "
        "search is timed in the same rotation",
    )
    parser.add_argument("--kb", type=Path, default=None, help="an already indexed Cranfield KB")
    args = parser.parse_args()
    kb = args.kb if args.kb is not None else indexed_cranfield(args.dataset)[0]
    load_embedder()  # the model folder is prepared before anything is timed
    scratch = Path(tempfile.mkdtemp(prefix="groove-cold-"))
    env, small = child_env(scratch / "pycache"), scratch / "kb"
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_en", small)
    golden = REPO / "tests" / "fixtures" / "golden_en.yml"
    py, heavy = sys.executable, ",".join(HEAVY)
    subprocess.run(
        [py, "-c", GROOVE_CLI, heavy, "index", "--kb-path", str(small), "-q"], check=True, env=env
    )
    commands = {
        "floor: onnxruntime + tokenizers, one query": [
            py, "-c", FLOOR, str(default_model_dir()), QUERY,
        ],
        "groove search (Cranfield, 1,400 docs)": [
            py, "-c", GROOVE_CLI, heavy, "search", "--kb-path", str(kb), QUERY,
        ],
        "import groove": [py, "-c", "import groove"],
        "groove eval (fixture KB kb_en)": [
            py, "-c", GROOVE_CLI, heavy, "eval", "--kb-path", str(small),
            "--golden", str(golden), "--no-history",
        ],
    }  # fmt: skip
    envs = {name: env for name in commands}
    if args.compare_with is not None:
        name = f"groove search at {args.compare_with}"
        commands[name] = commands["groove search (Cranfield, 1,400 docs)"]
        envs[name] = {**env, "PYTHONPATH": str(args.compare_with.resolve())}
    for name, argv in commands.items():
        timed(argv, envs[name])  # warm-up: page cache, bytecode
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    notes: dict[str, str] = {}
    print(f"at start: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for _ in range(args.repeat):
        for name, argv in commands.items():
            seconds, cpu, note = timed(argv, envs[name])
            times[name].append(seconds)
            cpus[name].append(cpu)
            notes[name] = note if note.startswith("heavy") else ""
    first = next(iter(commands))
    floor, floor_cpu = statistics.median(times[first]), statistics.median(cpus[first])
    print(f"one-shot commands, each a fresh process, median of {args.repeat} (rotating)")
    for name in commands:
        median, cpu = statistics.median(times[name]), statistics.median(cpus[name])
        print(
            f"  {name:44} {median:6.3f} s  {median / floor:5.2f}x floor   "
            f"CPU {cpu:6.3f} s  {cpu / floor_cpu:5.2f}x  {notes[name]}"
        )
    name = "groove search (Cranfield, 1,400 docs)"
    search, search_cpu = statistics.median(times[name]), statistics.median(cpus[name])
    print(
        f"  one-shot search / floor: {search / floor:.2f} wall, {search_cpu / floor_cpu:.2f} CPU"
        "   goal <= 1.5 (wall)"
    )
    print(f"at end: load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
