"""How big the report notebooks get: image heights, page heights, result.json sizes.

Runs ``groove notebook run eval-report`` and ``tune-explorer`` on Cranfield (225 queries)
and on a golden set of 1,000 queries generated from the same knowledge base (one query per
document: ten words of its abstract, the document expected), then measures

- every PNG in the executed notebook (pixels; the bound is 1,000 px tall),
- each HTML page in headless Chromium at 1,400 px wide (document scroll height; the bound
  is 8,400 px, six screens), with a full-page screenshot beside it,
- result.json and the HTML file on disk.

    python bench/report_pages.py [--kb KB --golden GOLDEN] [--only cranfield|generated]

Needs playwright (``pip install playwright``) and a Chromium binary (``--chromium``,
default /usr/bin/chromium); playwright's own browser download is not used.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _browser import WIDTH, report_page
from _cranfield import WORK, indexed_cranfield

IMAGE_BOUND, PAGE_BOUND = 1000, 8400


def generated_golden(kb: Path, count: int, dest: Path) -> Path:
    """``count`` queries, one per document (sorted by name): ten words from the start of
    its abstract (the paragraph after the title line), that document expected."""
    queries: list[dict[str, object]] = []
    for doc in sorted((kb / "docs").glob("*.md"), key=lambda p: int(p.stem)):
        if len(queries) == count:
            break
        paragraphs = [p for p in doc.read_text(encoding="utf-8").split("\n\n") if p.strip()]
        body = paragraphs[2] if len(paragraphs) > 2 else paragraphs[-1]
        words = [w for w in body.split() if w.isalpha()][:10]
        if len(words) < 3:
            continue
        queries.append(
            {
                "id": f"g{doc.stem}",
                "query": " ".join(words),
                "expected": [{"path": doc.relative_to(kb).as_posix()}],
            }
        )
    dest.write_text(yaml.safe_dump({"queries": queries}, sort_keys=False), encoding="utf-8")
    return dest


def png_heights(notebook: Path) -> list[tuple[int, int]]:
    from PIL import Image

    sizes = []
    for cell in nbformat.read(str(notebook), as_version=4).cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                image = Image.open(io.BytesIO(base64.b64decode(data["image/png"])))
                sizes.append(image.size)
    return sizes


def page_height(html: Path, screenshot: Path, chromium: str) -> int:
    with report_page(html, chromium, settle_ms=500) as page:
        height = int(page.evaluate("document.documentElement.scrollHeight"))
        page.screenshot(path=str(screenshot), full_page=True)
    return height


def run(name: str, kb: Path, golden: Path, out: Path) -> tuple[int, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "groove.notebooks.runner", name, "--kb-path", str(kb),
         "-p", "golden", str(golden), "--out", str(out)],
        capture_output=True,
        text=True,
    )  # fmt: skip
    print(f"#   {(done.stdout or done.stderr).strip()}")
    return done.returncode, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kb", type=Path)
    parser.add_argument("--golden", type=Path)
    parser.add_argument("--only", choices=("cranfield", "generated"))
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", type=Path, default=WORK / "report-pages")
    args = parser.parse_args()
    kb, golden = (args.kb, args.golden) if args.kb else indexed_cranfield()
    args.out.mkdir(parents=True, exist_ok=True)
    sets = {
        "cranfield": golden,
        "generated": generated_golden(kb, 1000, args.out / "golden-1000.yml"),
    }
    rows = []
    for label, path in sets.items():
        if args.only and label != args.only:
            continue
        count = len(yaml.safe_load(path.read_text(encoding="utf-8"))["queries"])
        for notebook in ("eval-report", "tune-explorer"):
            out = args.out / f"{label}-{notebook}"
            code, seconds = run(notebook, kb, path, out)
            images = png_heights(out / f"{notebook}.ipynb")
            html = out / f"{notebook}.html"
            height = page_height(html, out / "page.png", args.chromium)
            rows.append(
                (label, count, notebook, code, seconds, images, height,
                 (out / "result.json").stat().st_size, html.stat().st_size)
            )  # fmt: skip
    print(f"# bounds: images <= {IMAGE_BOUND} px tall, pages <= {PAGE_BOUND} px at {WIDTH} px")
    print(f"{'golden':<10} {'queries':>7} {'notebook':<14} exit {'run':>6}  tallest image"
          f"  page px  result.json   html")  # fmt: skip
    for label, count, notebook, code, seconds, images, height, result, page in rows:
        tallest = max((h for _, h in images), default=0)
        print(
            f"{label:<10} {count:>7} {notebook:<14} {code:>4} {seconds:>5.0f}s  "
            f"{tallest:>6} ({len(images)} png)  {height:>7}  {result / 1e3:>8.0f} KB "
            f"{page / 1e6:>5.1f} MB"
        )
    print(json.dumps({"ok": all(
        max((h for _, h in r[5]), default=0) <= IMAGE_BOUND and r[6] <= PAGE_BOUND for r in rows
    )}))  # fmt: skip


if __name__ == "__main__":
    main()
