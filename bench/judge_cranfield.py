"""The worked example of docs/judgements.md on Cranfield: how many hits nobody judged a
different configuration brings into the top 10, and what judged@10 and the drop note say.

On a copy of the Cranfield KB (bench/_cranfield.py), with an empty judgements file beside a
copy of the golden file (so the reports show judged@k): ``groove eval`` with the default
settings, then with ``--mmr true`` (another configuration), ``groove compare`` of the two,
then ``groove golden pool`` over the history. Prints the counts the docs quote and the
commands' own output.

    python bench/judge_cranfield.py [--dataset DIR] [--other "--mmr true"]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _cranfield import DEFAULT_DATASET, indexed_cranfield


def groove(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).parent / "groove"), *args]
    print("$ groove " + " ".join(shlex.quote(a) for a in args), flush=True)
    return subprocess.run(command, capture_output=True, text=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--other", default="--mmr true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    kb, source_golden = indexed_cranfield(args.dataset)
    golden = kb.parent / "golden.yml"
    shutil.copy(source_golden, golden)
    (kb / ".groove-eval-history.json").unlink(missing_ok=True)
    judgements = golden.with_name("golden.judgements.jsonl")
    judgements.write_text("")  # present, empty: nothing judged beyond `expected` yet
    base = ["--kb-path", str(kb), "--golden", str(golden)]
    for extra in ([], shlex.split(args.other)):
        done = groove("eval", *base, *extra)
        print(done.stdout, done.stderr, sep="", flush=True)
    compared = groove("compare", "2", "1", "--kb-path", str(kb), "--golden", str(golden))
    print(compared.stdout, compared.stderr, sep="", flush=True)
    started = time.perf_counter()
    pooled = groove("golden", "pool", *base, "--depth", "10")
    print(pooled.stderr + "\n".join(pooled.stdout.splitlines()[:8]))
    print(f"# pool took {time.perf_counter() - started:.1f} s")

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from groove.golden.queries import load_golden
    from groove.history.history import history_path, load_history
    from groove.metrics import is_hit

    other, first = load_history(history_path(kb)).runs[:2]
    queries = {q.id: q for q in load_golden(golden).queries}
    new, new_unjudged, moved = 0, 0, 0
    for a, b in zip(first.per_query, other.per_query, strict=True):
        seen = {h.path for h in a.top_k[:10]}
        brought = [h for h in b.top_k[:10] if h.path not in seen]
        moved += bool(brought)
        new += len(brought)
        new_unjudged += sum(
            1 for h in brought if not any(is_hit(e, h) for e in queries[b.id].expected)
        )
    print(
        f"# {args.other!r} brings {new} hits into the top 10 of {moved} of {len(queries)} "
        f"queries that the default run did not have; {new_unjudged} of them are unjudged"
    )


if __name__ == "__main__":
    main()
