"""The judging view in a live JupyterLab, driven by a real browser: the check behind
docs/judgements.md's screenshots.

On a copy of the test fixture KB (indexed with the real model, two eval runs of two
configurations in the history) it writes the judge notebook with ``groove notebook open
judge --no-start``, starts JupyterLab on it, and with headless system Chromium (never a
downloaded browser): runs the notebook, judges five candidates with the keyboard (r / n in
the key box), reloads the page and runs it again (the view resumes: five judged), clicks
"apply to golden file" and "run eval" (the golden-changed note and judged@10 show). Each
step asserts what the page shows and leaves a screenshot in ``--shots``.

    python bench/judge_live.py [--chromium /usr/bin/chromium] [--shots DIR] [--work DIR]

Needs jupyterlab and jupyterlab_widgets in this environment and playwright (the Python
package only).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERDICTS = "rnrnr"  # five candidates: relevant, not relevant, ...


def _groove(*args: str, cwd: Path) -> str:
    done = subprocess.run(
        [str(Path(sys.executable).parent / "groove"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def prepare(work: Path) -> tuple[Path, Path]:
    kb = work / "kb"
    shutil.copytree(ROOT / "tests" / "fixtures" / "kb_en", kb)
    golden = work / "golden.yml"
    shutil.copy(ROOT / "tests" / "fixtures" / "golden_en.yml", golden)
    _groove("index", "--kb-path", str(kb), cwd=work)
    _groove("eval", "--kb-path", str(kb), "--golden", str(golden), cwd=work)
    _groove("eval", "--kb-path", str(kb), "--golden", str(golden), "--mmr", "true", cwd=work)
    _groove(
        "notebook", "open", "judge", "--kb-path", str(kb), "-p", "golden", str(golden),
        "-p", "by", "live-check", "--dir", str(work / "nb"), "--no-start",
        cwd=work,
    )  # fmt: skip
    return kb, golden


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_lab(folder: Path, port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.port={port}",
        "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.ip=127.0.0.1",
        "--ServerApp.disable_check_xsrf=True", "--allow-root",
    ]  # fmt: skip
    lab = subprocess.Popen(
        command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    for _ in range(120):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api", timeout=2)
            return lab
        except OSError:
            time.sleep(1)
    lab.terminate()
    raise SystemExit("JupyterLab did not start within two minutes")


def run_all(page) -> None:  # type: ignore[no-untyped-def]
    """Run All Cells from the menu once the kernel is idle; again if nothing started."""
    page.wait_for_selector(".jp-StatusBar-TextItem:has-text('Idle')", timeout=180_000)
    news = page.get_by_role("button", name="No", exact=True)  # JupyterLab's news question
    if news.count():
        news.first.click()
    for _attempt in range(3):
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        try:
            page.wait_for_selector(".groove-judge", timeout=120_000)
            break
        except Exception:  # a click the page was not ready for: try once more
            page.keyboard.press("Escape")
    else:
        raise SystemExit("the judging view did not appear after Run All Cells")
    page.wait_for_timeout(1000)
    page.locator(".groove-judge").scroll_into_view_if_needed()


def status(page) -> str:  # type: ignore[no-untyped-def]
    return str(page.inner_text(".groove-judge .widget-html-content >> nth=0"))


def check(page, shots: Path, golden: Path) -> None:  # type: ignore[no-untyped-def]
    run_all(page)
    first = status(page)
    print("opened:", first)
    page.locator(".groove-judge").screenshot(path=str(shots / "judge-1-open.png"))
    box = page.locator(".groove-judge-keys input")
    before = first
    for key in VERDICTS:
        box.click()
        page.keyboard.press(key)
        page.wait_for_function(
            "(b) => document.querySelector('.groove-judge .widget-html-content').innerText != b",
            arg=before,
            timeout=30_000,
        )
        before = status(page)
        print(f"after {key}:", before)
    page.locator(".groove-judge").screenshot(path=str(shots / "judge-2-five-judged.png"))
    judged_lines = (golden.with_name("golden.judgements.jsonl")).read_text().splitlines()
    verdicts = [json.loads(line)["relevant"] for line in judged_lines]
    assert verdicts == [k == "r" for k in VERDICTS], verdicts
    page.reload()
    page.wait_for_selector(".jp-Notebook", timeout=60_000)
    run_all(page)
    resumed = status(page)
    print("resumed:", resumed)
    assert resumed.startswith(before.split(" judged")[0]), (resumed, before)
    page.locator(".groove-judge").screenshot(path=str(shots / "judge-3-resumed.png"))
    page.click("button:has-text('apply to golden file')")
    page.wait_for_selector(".groove-judge-log", timeout=60_000)
    log = page.inner_text(".groove-judge-log")
    print(log)
    assert log.startswith("added "), log
    page.locator(".groove-judge").screenshot(path=str(shots / "judge-4-applied.png"))
    page.click("button:has-text('run eval')")
    page.wait_for_function(
        "document.querySelector('.groove-judge-log').innerText.includes('groove eval')",
        timeout=240_000,
    )
    report = page.inner_text(".groove-judge-log")
    print(report)
    assert "golden changed since last run, diff disabled" in report
    assert "judged@10" in report
    page.locator(".groove-judge-log").scroll_into_view_if_needed()
    page.locator(".groove-judge").screenshot(path=str(shots / "judge-5-eval.png"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--shots", type=Path, default=Path("judge-live-shots"))
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    work = args.work or Path(tempfile.mkdtemp(prefix="groove-judge-live-"))
    args.shots.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _kb, golden = prepare(work)
    port = free_port()
    lab = start_lab(work / "nb", port)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=args.chromium, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 1300, "height": 1100})
            page.goto(f"http://127.0.0.1:{port}/lab/tree/judge.ipynb")
            page.wait_for_selector(".jp-Notebook", timeout=120_000)
            try:
                check(page, args.shots, golden)
            except Exception:
                page.screenshot(path=str(args.shots / "failure.png"))
                raise
            finally:
                browser.close()
    finally:
        lab.terminate()
        lab.wait(timeout=30)
    print(f"live check passed; screenshots in {args.shots}, work folder {work}")


if __name__ == "__main__":
    main()
