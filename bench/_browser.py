"""Shared set-up for the benchmarks that look at a report: headless system Chromium.

A report page is ready once its paged tables exist and have drawn once. Never downloads a
browser: ``executable_path`` is the system chromium (apt-get install chromium).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

WIDTH = 1400  # px: the viewport every report measurement and screenshot uses


@contextmanager
def report_page(html: Path, chromium: str, settle_ms: int = 800) -> Iterator[Any]:
    """A playwright page with ``html`` loaded and its tables drawn; the browser closes after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": WIDTH, "height": 1000})
            page.goto(html.resolve().as_uri())
            page.wait_for_function("document.querySelectorAll('table.dataTable').length > 0")
            page.wait_for_timeout(settle_ms)  # let the tables finish their first draw
            yield page
        finally:
            browser.close()
