"""The exported report pages as a reader meets them, in headless Chromium at 1,400 px:
the verdict on the first screen (top 900 px), tables that sort from a click on the header
text, and not one request to the network.

Needs playwright and a system Chromium (``/usr/bin/chromium``, or GROOVE_CHROMIUM);
playwright's own browser download is never used. Skipped when either is missing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from groove.cli.words import notebook_line
from groove.notebooks import runner

pytestmark = [pytest.mark.slow, pytest.mark.model]

CHROMIUM = os.environ.get("GROOVE_CHROMIUM", "/usr/bin/chromium")
WIDTH, FIRST_SCREEN = 1400, 900
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory, _built_indexes) -> dict[str, Path]:  # type: ignore[no-untyped-def]
    """Both notebooks run once (eval twice, so the second run has a previous one)."""
    pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    root = tmp_path_factory.mktemp("pages")
    shutil.copytree(_built_indexes["kb_en"], root, dirs_exist_ok=True)
    kb = root / "kb"
    golden = str(FIXTURES / "golden_en.yml")
    out: dict[str, Path] = {}
    for name, parameters in (
        ("eval-report", {"golden": golden, "explain": True}),
        ("eval-report", {"golden": golden, "explain": True}),
        ("tune-explorer", {"golden": golden}),
    ):
        report = runner.run_notebook(name, kb_path=kb, parameters=parameters, out_dir=root / name)
        assert report.exit_code == 0, notebook_line(report)
        assert report.html is not None
        out[name] = report.html
    return out


def _browse(html: Path, check: Any) -> tuple[list[str], Any]:
    """Open ``html`` with every request outside the file aborted and recorded."""
    from playwright.sync_api import sync_playwright

    asked: list[str] = []

    def route(r: Any) -> None:
        url = r.request.url
        if url.startswith(("file:", "data:", "blob:", "about:")):
            r.continue_()
        else:
            asked.append(url)
            r.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": FIRST_SCREEN})
            page.route("**/*", route)
            page.goto(html.resolve().as_uri())
            page.wait_for_function("document.querySelectorAll('table.dataTable').length > 0")
            page.wait_for_timeout(500)
            return asked, check(page)
        finally:
            browser.close()


def _first_screen(page: Any) -> dict[str, Any]:
    card = page.locator(".groove-card").first
    box = card.bounding_box()
    return {"bottom": box["y"] + box["height"], "text": card.inner_text()}


@pytest.mark.parametrize(
    ("name", "verdict"),
    [
        ("eval-report", "no metric fell by more than 0.050 since the previous run"),
        ("tune-explorer", "keep the built-in defaults"),
    ],
)
def test_the_verdict_is_on_the_first_screen_and_nothing_is_fetched(
    pages: dict[str, Path], name: str, verdict: str
) -> None:
    asked, seen = _browse(pages[name], _first_screen)
    assert asked == []  # no require.js, no MathJax, no CDN
    assert seen["bottom"] <= FIRST_SCREEN, seen
    assert verdict in seen["text"]
    assert "Next:" in seen["text"]  # what to do next, beside the numbers that decided
    page = pages[name].read_text(encoding="utf-8")
    assert "notebook_run." not in page  # the set-up code is not in the page


def _sorted_by_header_text(page: Any) -> dict[str, Any]:
    table = page.locator("table.dataTable").first
    column = "id"
    header = table.locator("thead th", has_text=column).first
    index = int(header.get_attribute("data-dt-column"))

    def cells() -> list[str]:
        return table.locator(f"tbody tr td:nth-child({index + 1})").all_inner_texts()

    before = cells()
    title = header.locator(".dt-column-title")
    title.scroll_into_view_if_needed()
    box = title.bounding_box()
    page.mouse.click(box["x"] + 3, box["y"] + box["height"] / 2)  # on the text, not the icon
    page.wait_for_timeout(300)
    return {"before": before, "after": cells(), "class": header.get_attribute("class")}


def test_a_click_on_the_header_text_sorts(pages: dict[str, Path]) -> None:
    _, seen = _browse(pages["eval-report"], _sorted_by_header_text)
    assert "dt-ordering-asc" in seen["class"]
    assert seen["after"] == sorted(seen["after"]) and seen["after"] != seen["before"]


def test_an_untrusted_reader_is_told_where_every_row_is(pages: dict[str, Path]) -> None:
    """With scripts (the HTML page) the note is gone; without (an untrusted notebook, whose
    outputs lose their scripts) the first page is static and the note names the HTML."""
    from playwright.sync_api import sync_playwright

    _, notes = _browse(
        pages["tune-explorer"], lambda page: page.locator(".groove-untrusted").count()
    )
    assert notes == 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(java_script_enabled=False)
            page.goto(pages["tune-explorer"].resolve().as_uri())
            texts = page.locator(".groove-untrusted").all_inner_texts()
        finally:
            browser.close()
    assert texts and all("the HTML report exported beside this notebook" in t for t in texts)
