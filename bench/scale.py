"""A knowledge base of a chosen size, end to end: every step's wall time and peak memory.

Writes a KB of ``--chunks`` chunks (Markdown files of five 120-word sections, words drawn
Zipf-like from the Cranfield vocabulary, so common words match most chunks as in a real
KB) and a golden set of ``--queries`` queries generated from its notes, then runs each step
as its own ``groove`` process (so that its peak memory is its own, read from its
``/proc/self/status`` as it exits: Linux only):

1. ``groove index`` from nothing, with the real model; beside it, raw fastembed
   (``TextEmbedding.embed``, batch 16, no groove code) on a sample of the same chunk texts
   (``--raw-sample``, a share of the chunks, at least 160) for chunks/s against chunks/s;
2. ``groove index`` after 1% of the files changed (a sentence appended to each);
3. ``groove eval`` of the golden set (no history);
4. ``groove tune``;
5. ``groove eval --explain``;
6. ``groove notebook run eval-report``.

It prints a Markdown table (step, seconds, peak MB, per-chunk or per-query figures) and the
load average before and after. Indexing at the model's speed dominates: about 30 chunks/s
on 2 cores, so 100,000 chunks take about an hour. Usage:

    .venv/bin/python bench/scale.py --chunks 100000 --queries 1000 --work /tmp/scale
    .venv/bin/python bench/scale.py --chunks 2000 --queries 200     # a quick check
    .venv/bin/python bench/scale.py --reuse --work /tmp/scale     # the steps after the index

``--reuse`` keeps the KB, golden set and index of an earlier run in ``--work`` and runs the
steps from 2 on (and the raw fastembed sample): for measuring a change to search, eval or
tune at size without indexing again.

``--stand-in-vectors`` builds the index from nothing in process with a stand-in embedder
(random unit vectors seeded by each text, recorded under the default model's name and
width) instead of the real model: minutes instead of an hour, for the time and memory of
the steps after the index (the real model embeds the queries; the vector leg's answers are
meaningless, its cost is not). ``--steps`` picks the steps to run after the index (names:
reindex, eval, tune, explain, notebook).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from helpers.golden_gen import generated_golden
from index_search import DEFAULT_KB, raw_model, raw_seconds, vocabulary_of

SECTIONS = 5
WORDS_PER_SECTION = 120
GROOVE = Path(sys.executable).parent / "groove"


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float
    peak_mb: float
    note: str = ""


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def write_kb(kb: Path, chunks: int, vocabulary: Sequence[str], seed: int = 11) -> int:
    """``chunks // 5`` notes of five sections each; returns the number of files."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    files = max(1, chunks // SECTIONS)
    for i in range(files):
        words = rng.choice(len(vocabulary), size=(SECTIONS, WORDS_PER_SECTION), p=weights)
        sections = [
            f"## {' '.join(vocabulary[w] for w in row[:3])}\n\n"
            + " ".join(vocabulary[w] for w in row)
            for row in words
        ]
        path = kb / f"part{i % 100:02d}" / f"note{i:06d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n\n".join(sections) + "\n", encoding="utf-8")
    return files


def change_share(kb: Path, share: float, seed: int = 5) -> int:
    """Append a sentence to ``share`` of the notes; returns how many changed."""
    notes = sorted(kb.rglob("*.md"))
    rng = np.random.default_rng(seed)
    picked = rng.choice(len(notes), size=max(1, round(len(notes) * share)), replace=False)
    for i in picked:
        with notes[i].open("a", encoding="utf-8") as out:
            out.write("\nThis note was revised for the re-index benchmark.\n")
    return len(picked)


#: Runs a console script and, as it exits, writes its own peak resident KB (VmHWM) to a
#: file. A child's ru_maxrss is no good here: Linux starts a child made with vfork from its
#: parent's high-water mark, so every step showed the bench process's own peak (1,343 MB
#: after a stand-in index built in process). VmHWM belongs to the image exec started.
_OWN_PEAK = """
import atexit, runpy, sys
out, script = sys.argv[1], sys.argv[2]
def peak():
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(out, "w") as f:
        f.write(kb)
atexit.register(peak)
sys.argv = sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""


def run_step(name: str, argv: Sequence[str], note: str = "", ok: Sequence[int] = (0,)) -> Step:
    """Run one groove process (``argv[0]`` a console script); its wall time and its own
    peak resident memory."""
    with tempfile.TemporaryDirectory() as scratch:
        peak_file = Path(scratch) / "peak"
        wrapped = [sys.executable, "-c", _OWN_PEAK, str(peak_file), *argv]
        started = time.perf_counter()
        done = subprocess.run(wrapped, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        seconds = time.perf_counter() - started
        peak_kb = int(peak_file.read_text()) if peak_file.exists() else 0
    stderr = done.stderr.decode(errors="replace")
    if done.returncode not in ok:
        raise SystemExit(f"{name} exited {done.returncode}:\n{stderr[-2000:]}")
    print(f"[{time.strftime('%H:%M:%S')}] {name}: {seconds:.1f} s", file=sys.stderr, flush=True)
    return Step(name, seconds, peak_kb / 1024, note)


def raw_rate(db: Path, sample: float) -> tuple[float, int]:
    """Raw fastembed chunks/s on a sample of the indexed chunk texts, in index order."""
    import sqlean

    conn = sqlean.connect(str(db))
    texts = [row[0] for row in conn.execute("SELECT content FROM chunks ORDER BY id")]
    conn.close()
    n = min(len(texts), max(160, round(len(texts) * sample)))
    step = max(1, len(texts) // n)
    picked = texts[::step][:n]
    model = raw_model()
    raw_seconds(model, ["warm up"] * 16)
    return len(picked) / raw_seconds(model, picked), len(picked)


class StandIn:
    """Random unit vectors seeded by each text, under the default model's name and width."""

    def __init__(self) -> None:
        from groove.engine.embed import DEFAULT_MODEL

        self.model_id, self.dim = DEFAULT_MODEL, 384

    def embed(self, texts: Sequence[str], **_: object) -> np.ndarray:
        import zlib

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            rng = np.random.default_rng(zlib.crc32(text.encode("utf-8")))
            row = rng.standard_normal(self.dim)
            out[i] = row / np.linalg.norm(row)
        return out


def index_with_stand_in(kb: Path) -> Step:
    """``groove index`` from nothing, in process, with the stand-in embedder."""
    import resource

    from groove.engine.index import build

    started = time.perf_counter()
    build(kb, StandIn())  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return Step("index from nothing (stand-in vectors, in process)", seconds, peak, "")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--raw-sample", type=float, default=0.05)
    parser.add_argument("--work", type=Path, default=None, help="folder kept after the run")
    parser.add_argument(
        "--reuse", action="store_true", help="keep --work's KB and index: steps 2 to 6 only"
    )
    parser.add_argument("--stand-in-vectors", action="store_true")
    parser.add_argument(
        "--vocabulary-kb", type=Path, default=DEFAULT_KB, help="the KB whose words are drawn"
    )
    parser.add_argument("--steps", default="reindex,eval,tune,explain,notebook")
    args = parser.parse_args(argv)
    wanted = set(args.steps.split(","))
    if args.reuse and (args.work is None or not (args.work / ".groove.db").is_file()):
        raise SystemExit("--reuse needs --work DIR holding an earlier run's KB and index")
    work = args.work or Path(tempfile.mkdtemp(prefix="groove-scale-"))
    kb = work / "kb"
    golden = work / "golden.yml"
    db = work / ".groove.db"
    kb_flag = ["--kb-path", str(kb)]
    print(f"# at start: load average {load_average()}; {os.cpu_count()} cores")
    steps: list[Step] = []
    if args.reuse:
        files = len(list(kb.rglob("*.md")))
        args.queries = len(yaml.safe_load(golden.read_text(encoding="utf-8"))["queries"])
    else:
        shutil.rmtree(kb, ignore_errors=True)
        for stale in work.glob(".groove.db*"):
            stale.unlink()
        kb.mkdir(parents=True)
        files = write_kb(kb, args.chunks, vocabulary_of(args.vocabulary_kb))
        generated_golden(kb, args.queries, golden)
        if args.stand_in_vectors:
            steps.append(index_with_stand_in(kb))
        else:
            steps.append(run_step("index from nothing", [str(GROOVE), "index", *kb_flag, "-q"]))
    import sqlean

    conn = sqlean.connect(str(db))
    chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    conn.close()
    raw, sampled = raw_rate(db, args.raw_sample) if not args.stand_in_vectors else (0.0, 0)
    if steps and not args.stand_in_vectors:
        index_rate = chunks / steps[0].seconds
        steps[0] = Step(
            steps[0].name,
            steps[0].seconds,
            steps[0].peak_mb,
            f"{index_rate:.1f} chunks/s; raw fastembed {raw:.1f} chunks/s on {sampled} of the "
            f"same texts (ratio {index_rate / raw:.2f})",
        )
    elif not args.stand_in_vectors:
        print(f"# raw fastembed {raw:.1f} chunks/s on {sampled} of the indexed texts")
    if "reindex" in wanted:
        changed = change_share(kb, 0.01)
        steps.append(
            run_step(
                "re-index after 1% of the files changed",
                [str(GROOVE), "index", *kb_flag, "-q"],
                f"{changed} of {files} files",
            )
        )
    per_query = f"{args.queries} queries"
    eval_cmd = [str(GROOVE), "eval", *kb_flag, "--golden", str(golden), "--no-history"]
    if "eval" in wanted:
        steps.append(run_step("groove eval", eval_cmd, per_query, ok=(0, 1)))
    tune_cmd = [str(GROOVE), "tune", *kb_flag, "--golden", str(golden)]
    if "tune" in wanted:
        steps.append(run_step("groove tune", tune_cmd, per_query, ok=(0, 1)))
    if "explain" in wanted:
        explain_cmd = [*eval_cmd, "--explain"]
        steps.append(run_step("groove eval --explain", explain_cmd, per_query, ok=(0, 1)))
    notebook = [str(GROOVE), "notebook", "run", "eval-report", *kb_flag]
    notebook += ["-p", "golden", str(golden), "--out", str(work / "report")]
    if "notebook" in wanted:
        steps.append(run_step("notebook eval-report", notebook, per_query, ok=(0, 1)))
    size_mb = sum(p.stat().st_size for p in work.glob(".groove.db*")) / 1e6
    print(f"# {chunks} chunks in {files} files, index {size_mb:.0f} MB; {per_query}")
    print("| step | seconds | peak MB | |")
    print("|---|---:|---:|---|")
    for s in steps:
        print(f"| {s.name} | {s.seconds:.1f} | {s.peak_mb:.0f} | {s.note} |")
    print(f"# at end: load average {load_average()}")


if __name__ == "__main__":
    main()
