"""`groove golden doctor` after a reorganisation of Cranfield: how right, how fast.

On a private copy of the indexed Cranfield KB: eval once (the history keeps the sketches),
move 100 expected documents into another folder, rename 50, delete 10, index again, eval
(the gate falls), run the doctor, apply its certain proposals, eval again. Prints the
broken entries found against the truth (right targets, wrong certain ones, deletions), the
doctor's wall time beside the eval's, and recall@10 before, after the reorganisation and
after --apply. Usage:

    .venv/bin/python bench/golden_doctor.py [--dataset ../shared/datasets/cranfield]
    .venv/bin/python bench/golden_doctor.py --kb /tmp/cranfield/kb --golden golden.yml

(``--kb``: an indexed copy, its .groove.db beside it; it is copied, never changed.)
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path

from _cranfield import DEFAULT_DATASET, indexed_cranfield

import groove.evaluation.run as evaluation
from groove.config import Config
from groove.engine.embed import load_embedder
from groove.engine.index import build
from groove.evaluation.doctor import DoctorRequest, run_doctor
from groove.evaluation.settings import resolve_settings
from groove.golden.queries import load_golden


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--kb", type=Path)
    parser.add_argument("--golden", type=Path)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    if args.kb is not None and args.golden is not None:
        source_kb, source_golden = args.kb, args.golden
    else:
        source_kb, source_golden = indexed_cranfield(args.dataset)
    embedder = load_embedder()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        kb = root / "kb"
        shutil.copytree(source_kb, kb, ignore=shutil.ignore_patterns(".groove-eval-history*"))
        for extra in source_kb.parent.glob(".groove.db*"):
            if not extra.name.endswith(".lock"):
                shutil.copy(extra, root / extra.name)
        for path in kb.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        golden = root / "golden.yml"
        shutil.copy(source_golden, golden)
        golden.chmod(0o644)

        def settings(**given: object):  # type: ignore[no-untyped-def]
            return resolve_settings(Config(), kb_path=kb, golden=golden, **given)

        before = evaluation.run(settings(), embedder=embedder)
        expected = sorted({e.path for q in load_golden(golden).queries for e in q.expected})
        random.Random(args.seed).shuffle(expected)
        truth: dict[str, str | None] = {}
        (kb / "docs" / "moved").mkdir()
        for path in expected[:100]:
            truth[path] = path.replace("docs/", "docs/moved/")
        for path in expected[100:150]:
            truth[path] = path.replace(".md", "-renamed.md")
        for old, new in truth.items():
            (kb / old).rename(kb / str(new))
        for path in expected[150:160]:
            (kb / path).unlink()
            truth[path] = None
        build(kb, embedder)
        start = time.perf_counter()
        after = evaluation.run(settings(), embedder=embedder)
        eval_s = time.perf_counter() - start
        start = time.perf_counter()
        report = run_doctor(DoctorRequest(settings()), embedder=embedder)
        doctor_s = time.perf_counter() - start
        broken = [p for p in report.proposals if p.entry.path in truth]
        right = [p for p in broken if p.target is not None and p.target.path == truth[p.entry.path]]
        deleted = [p for p in broken if truth[p.entry.path] is None and p.target is None]
        wrong_certain = [
            p
            for p in report.certain
            if p.target is None or p.target.path != truth.get(p.entry.path)
        ]
        moved = [p for p in broken if truth[p.entry.path] is not None]
        print(
            f"# broken entries: {len(report.proposals)} flagged, {len(broken)} of them known broken"
        )
        wrong = len(wrong_certain)
        print(f"moves and renames: {len(right)} of {len(moved)} right, {wrong} wrong certain")
        deletions = sum(1 for p in broken if truth[p.entry.path] is None)
        print(f"deletions: {len(deleted)} of {deletions} said so (no candidate)")
        print(f"eval {eval_s:.2f} s, doctor {doctor_s:.2f} s (ratio {doctor_s / eval_s:.2f})")
        applied = run_doctor(DoctorRequest(settings(), apply=True), embedder=embedder)
        again = evaluation.run(settings(), embedder=embedder)
        print(f"applied: {len(applied.applied)} entries rewritten")
        was, fell, back = (r.record.aggregate.recall_at_k[10] for r in (before, after, again))
        print(f"recall@10: before {was:.3f}, reorganised {fell:.3f}, after --apply {back:.3f}")


if __name__ == "__main__":
    main()
