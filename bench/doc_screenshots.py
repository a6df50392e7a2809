"""The screenshots of docs/notebooks.md: both report notebooks on Cranfield, cut into sections.

    python bench/doc_screenshots.py [--cranfield DIR] [--tune-json RESULT] [--img docs/img]

DIR holds an indexed Cranfield (``kb/``, ``.groove.db`` beside it, ``golden.yml``); without
it the benchmarks' own copy is built (bench/_cranfield.py, minutes of embedding). Nothing
in DIR is written: the script works on two copies in --work.

The eval report needs a history with a diff, so the copy gets four runs, each with a real
change before it:

1. ``groove eval --limit 20`` (another configuration: a dashed line in the history plot);
2. ``groove eval`` (the baseline of the comparable runs);
3. ``docs/401.md`` cut to its title line, ``groove index``, ``groove eval`` (a small drop);
4. 30 more documents cut to their title, ``groove index``, then
   ``groove notebook run eval-report -p explain true -p fail_on_regression true`` (a drop
   the gate catches: exit code 1, the status in red).

The tune explorer runs on an untouched copy (``groove notebook run tune-explorer``, about a
minute on 2 cores), or shows a saved result (``--tune-json``, a result.json it wrote).

Each HTML page is opened in headless Chromium (playwright driving /usr/bin/chromium, no
browser download) at 1,400 px wide, and each section (a run of notebook cells, from a
first to a last cell named by their source) is saved as a PNG of 256 colours.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _browser import report_page
from _cranfield import REPO, WORK, indexed_cranfield

SMALL_CHANGE = "401"  # relevant to three queries, found in their top 5
# the documents most often found in a top 5, after 401
LARGE_CHANGE = [
    str(n)
    for n in (431, 799, 672, 305, 320, 326, 664, 458, 666, 589, 887, 1045, 13, 12, 746,
              57, 56, 122, 58, 21, 22, 302, 106, 716, 141, 252, 272, 468, 797, 460)
]  # fmt: skip


@dataclass(frozen=True)
class Shot:
    """A section of a page: from the cell whose text contains ``first`` (only its output
    when ``output_only``) to the cell whose text contains ``last``."""

    name: str
    first: str
    last: str
    output_only: bool = False
    search: str = ""  # typed into the search box of the last cell's table


EVAL_SHOTS = (
    Shot("eval-report-aggregate", "view.status(outcome)", "view.aggregate_table", True),
    Shot("eval-report-significance", "Is the change real?", "view.eval_notes"),
    Shot("eval-report-per-query", "Per-query results", "view.per_query_table", search="regressed"),
    Shot("eval-report-explain", "Why it missed", "view.attribution_table"),
    Shot("eval-report-history", "History", "view.history_plot"),
    Shot("eval-report-comparison", "The last comparable runs", "view.history_comparison"),
)
TUNE_SHOTS = (
    Shot("tune-explorer-run", "view.status(outcome)", "view.diagnostics_table", True),
    Shot("tune-explorer-loo", "Held-out deltas", "view.stability_plot"),
    Shot("tune-explorer-grid", "bm25 weight grid", "view.impact_plot"),
    Shot("tune-explorer-explorer", "Explore any condition", "view.verdict"),
)


def groove(*args: str, cwd: Path, ok: tuple[int, ...] = (0,)) -> None:
    script = Path(sys.executable).with_name("groove")
    command = [str(script) if script.exists() else "groove", *args]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    last = (done.stdout.strip() or done.stderr.strip()).splitlines()[-1:]
    print(f"#   groove {' '.join(args[:2])}: exit {done.returncode} {' '.join(last)[:120]}")
    if done.returncode not in ok:
        raise SystemExit(done.stderr)


def copy_of(source: Path, golden: Path, dest: Path) -> Path:
    """dest/kb, dest/.groove.db and dest/golden.yml, writable."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    shutil.copytree(source / "kb", dest / "kb")
    shutil.copy2(source / ".groove.db", dest / ".groove.db")
    shutil.copy2(golden, dest / "golden.yml")
    for path in [dest, *dest.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    return dest


def cut_to_title(kb: Path, names: list[str]) -> None:
    for name in names:
        doc = kb / "docs" / f"{name}.md"
        title = doc.read_text(encoding="utf-8").split("\n\n")[0]
        doc.write_text(title + "\n", encoding="utf-8")


def eval_report(source: Path, golden: Path, work: Path) -> Path:
    root = copy_of(source, golden, work / "eval-kb")
    eval_args = ("eval", "--kb-path", "kb", "--golden", "golden.yml")
    groove(*eval_args, "--limit", "20", cwd=root)
    groove(*eval_args, cwd=root)
    cut_to_title(root / "kb", [SMALL_CHANGE])
    groove("index", "--kb-path", "kb", cwd=root)
    groove(*eval_args, cwd=root)
    cut_to_title(root / "kb", LARGE_CHANGE)
    groove("index", "--kb-path", "kb", cwd=root)
    out = work / "eval-report"
    groove(
        "notebook", "run", "eval-report", "--kb-path", "kb", "--out", str(out),
        "-p", "golden", "golden.yml", "-p", "explain", "true",
        "-p", "fail_on_regression", "true",
        cwd=root, ok=(0, 1),
    )  # fmt: skip
    return out / "eval-report.html"


def tune_explorer(source: Path, golden: Path, work: Path, saved: Path | None) -> Path:
    out = work / "tune-explorer"
    if saved is not None:
        groove("notebook", "run", "tune-explorer", "--out", str(out),
               "-p", "tune_json", str(saved.resolve()), cwd=work)  # fmt: skip
    else:
        root = copy_of(source, golden, work / "tune-kb")
        groove("notebook", "run", "tune-explorer", "--kb-path", "kb", "--out", str(out),
               "-p", "golden", "golden.yml", cwd=root)  # fmt: skip
    return out / "tune-explorer.html"


# The page box of the cells from the first to the last marker, in document coordinates.
SECTION_BOX = """([first, last, outputOnly]) => {
  const cells = [...document.querySelectorAll('.jp-Cell')];
  const text = (cell) => cell.innerText;
  const start = cells.findIndex((cell) => text(cell).includes(first));
  const end = cells.findIndex((cell, i) => i >= start && text(cell).includes(last));
  if (start < 0 || end < 0) return null;
  const top = outputOnly ? cells[start].querySelector('.jp-Cell-outputWrapper') : cells[start];
  const a = top.getBoundingClientRect(), b = cells[end].getBoundingClientRect();
  return {x: Math.min(a.left, b.left), y: a.top + window.scrollY,
          width: Math.max(a.right, b.right) - Math.min(a.left, b.left),
          height: b.bottom - a.top};
}"""


def shoot(html: Path, shots: tuple[Shot, ...], img: Path, chromium: str) -> None:
    from PIL import Image

    with report_page(html, chromium) as page:
        for shot in shots:
            if shot.search:
                cell = page.locator(".jp-Cell", has_text=shot.last)
                cell.locator("input[type=search]").first.fill(shot.search)
                page.wait_for_timeout(300)
            box = page.evaluate(SECTION_BOX, [shot.first, shot.last, shot.output_only])
            if box is None:
                raise SystemExit(f"{html.name}: no cells from {shot.first!r} to {shot.last!r}")
            path = img / f"{shot.name}.png"
            page.screenshot(path=str(path), clip=box, full_page=True)
            picture = Image.open(path).convert("RGB")
            picture.quantize(256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
            print(f"{path}  {picture.size[0]} x {picture.size[1]} px  "
                  f"{path.stat().st_size / 1e3:.0f} KB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cranfield", type=Path, help="kb/, .groove.db and golden.yml")
    parser.add_argument("--tune-json", type=Path, help="a saved tune result to show")
    parser.add_argument("--img", type=Path, default=REPO / "docs" / "img")
    parser.add_argument("--work", type=Path, default=WORK / "doc-screenshots")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--only", choices=("eval", "tune"))
    parser.add_argument("--shoot-only", action="store_true", help="reuse the pages in --work")
    args = parser.parse_args()
    if args.shoot_only:
        for name, shots in (("eval-report", EVAL_SHOTS), ("tune-explorer", TUNE_SHOTS)):
            if args.only is None or name.startswith(args.only):
                shoot(args.work / name / f"{name}.html", shots, args.img, args.chromium)
        return
    if args.cranfield is not None:
        source, golden = args.cranfield, args.cranfield / "golden.yml"
    else:
        kb, golden = indexed_cranfield()
        source = kb.parent
    args.work.mkdir(parents=True, exist_ok=True)
    if args.only != "tune":
        shoot(eval_report(source, golden, args.work), EVAL_SHOTS, args.img, args.chromium)
    if args.only != "eval":
        html = tune_explorer(source, golden, args.work, args.tune_json)
        shoot(html, TUNE_SHOTS, args.img, args.chromium)


if __name__ == "__main__":
    main()
