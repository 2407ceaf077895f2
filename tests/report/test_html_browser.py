"""The HTML report of a real run, opened in headless Chromium: what a person sees.

Drives the system's Chromium (Debian's ``chromium``) through Playwright; Playwright's own
browser downloads are never used. The screenshot of each page is kept under pytest's temporary
folder (its path is printed; ``pytest -s`` shows it) as the test's artifact.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.layers import run_layer

if TYPE_CHECKING:
    from playwright.sync_api import Page

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def chromium_binary() -> str | None:
    """The browser to drive: ``$SKILLTEST_CHROMIUM``, else the first Chromium on ``PATH``."""
    if os.environ.get("SKILLTEST_CHROMIUM"):
        return os.environ["SKILLTEST_CHROMIUM"]
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


CHROMIUM = chromium_binary()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium binary (apt-get install chromium, or set SKILLTEST_CHROMIUM)",
)


@contextmanager
def opened(report: Path) -> Iterator[tuple[Page, list[str]]]:
    """The report in a headless Chromium page, with the URL of every request the page made.

    Started only after the run: Playwright's synchronous API keeps an event loop running in
    this thread, where the run's own ``asyncio.run`` could not start.
    """
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            # The report must work offline: any request leaving the page fails the test.
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.goto(report.as_uri())
            yield page, requests
        finally:
            browser.close()


def test_pressure_report_in_a_browser(tmp_path, capsys):
    report = tmp_path / "pressure.html"
    suite = REPO / "tests" / "skill-pressure" / "lgtm.yaml"
    options = ["--backend", "emulator", "-k", "3", "--report", report]
    code = run_layer("pressure", suite, tmp_path, *options)
    capsys.readouterr()
    assert code in (0, 1)  # a verdict, not bad input: the report is what is under test
    with opened(report) as (page, requests):
        see_pressure_report(page, tmp_path, capsys)
        assert requests == [report.as_uri()]


def see_offline_notice(page: Page) -> None:
    """An emulator run's report says first, where a reader cannot miss it, that its numbers come
    from a scripted stand-in; what produced it is in the table beside the verdicts."""
    notice = page.locator("p.offline").first
    assert notice.is_visible()
    assert notice.inner_text() == (
        "offline: these numbers come from the skilltest emulator, a scripted stand-in, not a "
        "model; they say nothing about how a real model behaves"
    )
    box, heading = notice.bounding_box(), page.locator("section.layer h2").first.bounding_box()
    assert box is not None and heading is not None
    assert box["y"] < heading["y"] and box["width"] > 300 and box["height"] > 20
    provenance = page.locator("table.provenance").first
    assert provenance.is_visible()
    assert "emulator (offline: a scripted stand-in)" in provenance.inner_text()


def see_pressure_report(page: Page, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    see_offline_notice(page)

    # The verdict rows: one per scenario of the suite, each with its verdict.
    rows = page.locator("table.verdicts tr.passed, table.verdicts tr.failed")
    assert rows.count() == 4
    names = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
    assert "lgtm/discovery-before-querying" in names
    verdicts = {rows.nth(i).locator("td.verdict").inner_text() for i in range(rows.count())}
    assert verdicts <= {"steers", "not-red", "no-steer", "inconclusive", "error"}
    assert page.locator("table.verdicts").first.is_visible()

    # A plot rendered: the forest plot has a real size and a dot per scenario.
    plot = page.locator("svg.forest").first
    box = plot.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50
    assert plot.locator("circle").count() == 4

    # A run expanded: its timeline is hidden until its summary is clicked.
    run = page.locator("details.run").first
    timeline = run.locator("ol.timeline")
    assert not timeline.is_visible()
    run.locator("summary").click()
    assert timeline.is_visible()
    assert timeline.locator("li.assistant").first.inner_text().startswith("assistant")

    screenshot = tmp_path / "pressure-report.png"
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    with capsys.disabled():
        print(f"\nscreenshot of the HTML report: {screenshot}")


def test_scenarios_report_with_a_world_in_a_browser(tmp_path, capsys, claude_bin):
    # One run per arm of a world scenario through the real claude CLI on the emulator: the
    # report shows its transcript and the HTTP calls the fake ticket service saw.
    report = tmp_path / "scenarios.html"
    suite = REPO / "tests" / "scenarios" / "tickets.yaml"
    only = ["--only", "reassign-after-confirmation"]
    options = [*only, "--claude", claude_bin, "-k", "1", "-j", "2", "--report", report]
    code = run_layer("scenarios", suite, tmp_path, *options)
    capsys.readouterr()
    assert code in (0, 1)
    with opened(report) as (page, requests):
        see_offline_notice(page)
        rows = page.locator("table.verdicts tr.passed, table.verdicts tr.failed")
        assert rows.count() == 1
        assert rows.first.locator("td").first.inner_text() == "tickets/reassign-after-confirmation"
        box = page.locator("svg.forest").first.bounding_box()
        assert box is not None and box["width"] > 100
        bars = page.locator("svg.bars").first.bounding_box()
        assert bars is not None and bars["height"] > 20

        run = page.locator("details.run").first
        assert run.locator("summary").inner_text().startswith("with skill run #0 (score")
        http = run.locator("li.http").first
        assert not http.is_visible()
        run.locator("summary").click()
        assert http.is_visible()
        assert "api.tickets.example.com" in http.inner_text()
        assert run.locator("li.tool").count() >= 1

        screenshot = tmp_path / "scenarios-report.png"
        page.screenshot(path=str(screenshot), full_page=True)
        with capsys.disabled():
            print(f"\nscreenshot of the HTML report: {screenshot}")
        assert requests == [report.as_uri()]
