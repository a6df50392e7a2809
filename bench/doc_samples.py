"""The sample outputs in the docs, made by running the commands they show.

docs/eval.md, docs/tune.md and their Japanese twins quote what ``make demo``'s commands
print on this repository's own ``docs/`` with ``examples/golden.yml``. Each quote is the
fenced block after a ``<!-- sample:NAME -->`` marker. This script runs the commands on a
copy of docs/ (laid out as in the repository, so the printed paths read ``docs`` and
``examples/golden.yml``) and writes the blocks, or checks them:

    python bench/doc_samples.py            # rewrite the blocks
    python bench/doc_samples.py --check    # exit 1 if a block differs from a fresh run

docs/ is the knowledge base the samples are measured on, so writing a sample changes it:
the script repeats until a run reproduces what is written (two rounds in practice). Tune
runs on a copy with every sample blanked: its own are pages of numbers that would move the
index they describe with each rewrite and never settle. The eval sample is exactly what
``make demo`` prints.
Timestamps are compared as ``<timestamp>``; tests/test_docs.py runs the check.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = {
    "eval": ("docs/eval.md", "docs/eval.ja.md"),
    "tune-stdout": ("docs/tune.md", "docs/tune.ja.md"),
    "tune-stderr": ("docs/tune.md", "docs/tune.ja.md"),
}
STDERR_LINES = 8  # tune's progress goes on per query; the sample keeps its start
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d")
BLOCK = re.compile(r"(<!-- sample:(?P<name>[\w-]+) -->\n```text\n)(?P<body>.*?)(\n```)", re.S)


def _groove(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from groove.cli import main; main()", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    got = subprocess.run(command, cwd=work, capture_output=True, text=True, env=env, check=False)
    if got.returncode != 0:
        raise SystemExit(f"groove {' '.join(args)} failed ({got.returncode}): {got.stderr}")
    return got


def samples(docs: Path = ROOT / "docs") -> dict[str, str]:
    """Run the demo's commands on a copy of ``docs`` and return each sample's text."""
    with tempfile.TemporaryDirectory(prefix="groove-samples-") as tmp:
        work = Path(tmp)
        shutil.copytree(docs, work / "docs")
        (work / "examples").mkdir()
        shutil.copy(ROOT / "examples" / "golden.yml", work / "examples" / "golden.yml")
        _groove(work, "index", "--kb-path", "docs")
        golden = ("--golden", "examples/golden.yml")
        evaluated = _groove(work, "eval", "--kb-path", "docs", *golden, "--no-history")
        # tune runs without the samples: its own are pages of numbers that would move the
        # index they describe with every rewrite, and eval's would tie the two together
        for page in sorted({p for pages in PAGES.values() for p in pages}):
            path = work / page
            path.write_text(BLOCK.sub(_blank, path.read_text(encoding="utf-8")), "utf-8")
        _groove(work, "index", "--kb-path", "docs")
        tuned = _groove(work, "tune", "--kb-path", "docs", *golden)
    stderr = tuned.stderr.splitlines()[:STDERR_LINES]
    return {
        "eval": evaluated.stdout.rstrip("\n"),
        "tune-stdout": tuned.stdout.rstrip("\n"),
        "tune-stderr": "\n".join([*stderr, "  ..."]),
    }


def _blank(m: re.Match[str]) -> str:
    return m.group(1) + "(sample)" + m.group(4)


def _normal(text: str) -> str:
    return TIMESTAMP.sub("<timestamp>", text)


def written(page: Path) -> dict[str, str]:
    return {m["name"]: m["body"] for m in BLOCK.finditer(page.read_text(encoding="utf-8"))}


def differences(fresh: dict[str, str]) -> list[str]:
    """The (page, sample) pairs whose block differs from ``fresh``."""
    out = []
    for name, pages in PAGES.items():
        for page in pages:
            have = written(ROOT / page).get(name)
            if have is None or _normal(have) != _normal(fresh[name]):
                out.append(f"{page}: sample:{name}")
    return out


def write(fresh: dict[str, str]) -> None:
    for page in sorted({p for pages in PAGES.values() for p in pages}):
        path = ROOT / page
        text = path.read_text(encoding="utf-8")

        def replace(m: re.Match[str]) -> str:
            body = fresh.get(m["name"], m["body"])
            return m.group(1) + body + m.group(4)

        path.write_text(BLOCK.sub(replace, text), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    if args.check:
        wrong = differences(samples())
        print("\n".join(wrong) or "every sample matches a fresh run")
        raise SystemExit(1 if wrong else 0)
    for round_ in range(1, 5):
        fresh = samples()
        wrong = differences(fresh)
        if not wrong:
            print(f"every sample matches a fresh run (round {round_})")
            return
        print(f"round {round_}: rewriting {', '.join(wrong)}")
        write(fresh)
    raise SystemExit("the samples did not settle in 4 rounds")


if __name__ == "__main__":
    main()
