"""The report notebooks and the result cards in a live JupyterLab, driven by a browser.

Starts JupyterLab (this interpreter's, on a free port, token auth) on a working folder
with an indexed copy of the English test fixture and:

1. a probe notebook whose cell evaluates the golden set and shows the ``EvalRun``: the
   cell output must be the card (its height is measured, a screenshot is taken);
2. the eval-report copy ``groove notebook open`` writes, run in the live kernel: the
   verdict card's position on the first screen (1,400 x 900) is measured, a click on the
   text of a table header must sort the table, and screenshots are taken; then, with the
   file browser open, whether the per-query table scrolls inside its box, key columns first;
3. a notebook of two named runs (``name="bm25-default"``, then ``name="mmr-0.3"``): both
   names must show in the second run's card, in ``runs_frame()`` and in ``compare``'s
   card, and each ``evaluate`` cell's progress bar must be drawn and reach its total.

    python bench/lab_live.py [--out DIR] [--chromium /usr/bin/chromium]

Needs jupyterlab and playwright in this environment and a system Chromium (never
playwright's download). Prints the measures; the screenshots go to DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 1400, 900


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _probe_notebook(path: Path, kb: Path, golden: Path) -> None:
    source = f"import groove\nrun = groove.evaluate({str(kb)!r}, {str(golden)!r})\nrun"
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": "probe",
                "metadata": {},
                "outputs": [],
                "source": source,
            }
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")


NAMES = ("bm25-default", "mmr-0.3")
SHOWN = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook in front


def _named_runs_notebook(path: Path, kb: Path, golden: Path) -> None:
    """Two named runs in a row, the history frame and the comparison, one cell each."""
    first, second = NAMES
    cells = [
        f"import groove\nkb, golden = {str(kb)!r}, {str(golden)!r}\n"
        f"a = groove.evaluate(kb, golden, save_history=True, name={first!r})",
        f"b = groove.evaluate(kb, golden, save_history=True, name={second!r}, mmr=True, "
        "mmr_lambda=0.3)\nb",
        'groove.load_history(kb).runs_frame()[["id", "name", "outcome", "changed", "queries", '
        '"ndcg@10"]]',
        "groove.compare([a, b])",
    ]
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "execution_count": None,
                "id": f"c{i}",
                "metadata": {},
                "outputs": [],
                "source": source,
            }
            for i, source in enumerate(cells)
        ],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook), encoding="utf-8")


def _named_runs(page, out: Path) -> None:  # type: ignore[no-untyped-def]
    """Measure the named-runs notebook: the names in each output, the progress bars."""
    outputs = page.locator(f"{SHOWN} .jp-Cell .jp-OutputArea")
    texts = [outputs.nth(i).inner_text() for i in range(outputs.count())]
    labels = ("evaluate a", "card of b", "runs_frame()", "compare")
    for label, text in zip(labels, texts, strict=False):
        shown = [name for name in NAMES if name in text]
        print(f"named runs: {label}: names shown {shown}")
    bars = page.locator(".jp-OutputArea-output .widget-hprogress, .jp-OutputArea-output progress")
    done = page.evaluate(
        "() => [...document.querySelectorAll('.jp-OutputArea-output .widget-html-content')]"
        ".map(e => e.textContent).filter(t => t.includes('/'))"
    )
    print(f"named runs: {bars.count()} progress bar(s); their counters: {done[:6]}")
    page.screenshot(path=str(out / "lab-named-runs.png"), full_page=True)
    for i, label in enumerate(("card", "frame", "compare"), start=1):
        box = outputs.nth(i).bounding_box() if i < outputs.count() else None
        if box is not None:
            outputs.nth(i).screenshot(path=str(out / f"lab-named-{label}.png"))
            print(f"named runs: the {label} output is {box['width']:.0f} x {box['height']:.0f} px")


def _table_fit(page, out: Path) -> None:  # type: ignore[no-untyped-def]
    """With the file browser open: does the per-query table scroll inside its box?"""
    side = page.locator("#jp-left-stack")
    if not side.is_visible():  # open the left sidebar on the file browser
        page.locator('.jp-SideBar.jp-mod-left [data-id="filebrowser"]').first.click()
        page.wait_for_timeout(1200)
    table = page.locator("table.dataTable").first
    table.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    fit = page.evaluate(
        """() => {
          const t = document.querySelector('table.dataTable');
          const out = t.closest('.jp-OutputArea-output');
          let box = t.parentElement;
          while (box && box !== out && !(box.scrollWidth > box.clientWidth + 1
                 && getComputedStyle(box).overflowX !== 'visible')) box = box.parentElement;
          const o = out.getBoundingClientRect();
          const side = document.querySelector('#jp-left-stack');
          const heads = [...t.querySelectorAll('thead th')].map(h => h.textContent.trim());
          return {sidebar: side ? side.getBoundingClientRect().width : 0,
                  output_right: o.right, window: innerWidth,
                  table_width: t.getBoundingClientRect().width,
                  scroller: box && box !== out ? box.className : null,
                  scroll: box ? [box.scrollWidth, box.clientWidth] : null,
                  first_columns: heads.slice(0, 5)};
        }"""
    )
    page.screenshot(path=str(out / "lab-eval-table-sidebar.png"))
    print(f"per-query table with the file browser open: {fit}")


def _run_all(page, timeout_ms: int = 240_000) -> None:  # type: ignore[no-untyped-def]
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    page.wait_for_timeout(3000)  # the kernel starts
    page.click("text=Run", timeout=30_000)  # the menu bar's Run menu
    page.click("text=Run All Cells", timeout=30_000)
    page.wait_for_function(
        "() => { const s = document.querySelector('.jp-Notebook-ExecutionIndicator');"
        " const prompts = [...document.querySelectorAll('.jp-InputPrompt')];"
        " return prompts.length > 0 && prompts.every(p => !p.textContent.includes('*'))"
        " && prompts.some(p => /\\[\\d+\\]/.test(p.textContent)); }",
        timeout=timeout_ms,
    )
    page.wait_for_timeout(1500)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / ".work" / "lab")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="groove-lab-"))
    kb = work / "kb"
    shutil.copytree(ROOT / "tests" / "fixtures" / "kb_en", kb)
    golden = ROOT / "tests" / "fixtures" / "golden_en.yml"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    groove = [sys.executable, "-c", "from groove.cli import main; main()"]
    subprocess.run([*groove, "index", "--kb-path", str(kb)], env=env, check=True)
    subprocess.run(
        [*groove, "notebook", "open", "eval-report", "--kb-path", str(kb), "--dir", str(work),
         "-p", "golden", str(golden), "-p", "explain", "true", "--no-start"],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    _probe_notebook(work / "probe.ipynb", kb, golden)
    named_kb = work / "named" / "kb"
    shutil.copytree(kb, named_kb)  # its own history: the two named runs only
    subprocess.run([*groove, "index", "--kb-path", str(named_kb)], env=env, check=True)
    _named_runs_notebook(work / "named.ipynb", named_kb, golden)
    port, token = _free_port(), secrets.token_hex(16)
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.port={port}",
         f"--IdentityProvider.token={token}", "--allow-root", f"--ServerApp.root_dir={work}"],
        env=env, stdout=subprocess.DEVNULL, stderr=(out / "lab.log").open("w"),
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(1)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(f"{base}/lab/tree/probe.ipynb?token={token}")
            _run_all(page)
            card = page.locator(".jp-OutputArea-output .groove-card").first
            box = card.bounding_box()
            cell = page.locator(".jp-Cell").first.bounding_box()
            page.screenshot(path=str(out / "lab-card.png"))
            print(f"probe: the EvalRun card is {box['height']:.0f} px tall, "
                  f"{box['width']:.0f} px wide; the cell {cell['height']:.0f} px")  # fmt: skip
            print(f"probe card text: {card.inner_text()[:300]!r}")

            page.goto(f"{base}/lab/tree/eval-report.ipynb?token={token}")
            _run_all(page)
            page.keyboard.press("Escape")
            page.keyboard.press("Control+Home")  # to the first cell: the notebook's top
            page.evaluate(
                "document.querySelectorAll('.jp-Notebook, .jp-WindowedPanel-outer')"
                ".forEach(e => { e.scrollTop = 0; })"
            )
            page.wait_for_timeout(1000)
            verdict = page.locator(".jp-OutputArea-output .groove-card").first
            vbox = verdict.bounding_box()
            page.screenshot(path=str(out / "lab-eval-first-screen.png"))
            print(f"eval-report: the verdict card spans y {vbox['y']:.0f}-"
                  f"{vbox['y'] + vbox['height']:.0f} px of a {HEIGHT} px window")  # fmt: skip
            table = page.locator("table.dataTable").first
            header = table.locator("thead th", has_text="id").first
            index = int(header.get_attribute("data-dt-column") or 0)
            title = header.locator(".dt-column-title")
            title.scroll_into_view_if_needed()
            cells = f"tbody tr td:nth-child({index + 1})"
            before = table.locator(cells).all_inner_texts()
            tbox = title.bounding_box()
            page.mouse.click(tbox["x"] + 3, tbox["y"] + tbox["height"] / 2)
            page.wait_for_timeout(800)
            after = table.locator(cells).all_inner_texts()
            page.screenshot(path=str(out / "lab-eval-sorted.png"))
            print(f"header text click: {header.get_attribute('class')}; "
                  f"sorted: {after == sorted(after) and after != before}")  # fmt: skip
            print(f"before: {before[:4]} after: {after[:4]}")
            _table_fit(page, out)

            page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            # its own workspace, reset: only this notebook open (no tab of the others)
            page.goto(f"{base}/lab/workspaces/named/tree/named.ipynb?reset&token={token}")
            _run_all(page)
            _named_runs(page, out)
            browser.close()
    finally:
        lab.terminate()
        lab.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    print(f"screenshots in {out}")


if __name__ == "__main__":
    main()
