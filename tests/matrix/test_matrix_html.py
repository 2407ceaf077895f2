"""A matrix's HTML report in headless Chromium: the heatmap of lift by scenario and cell, and a
cell's runs one click away (the cell's own report)."""

from __future__ import annotations

import re

from skilltest.cli import main

# Without a Chromium the browser tests' module skips them (in CI it fails): its mark is ours.
from tests.report.test_html_browser import opened, pytestmark, screenshot  # noqa: F401

from ..conftest import REPO_ROOT


def test_the_heatmap_shows_each_scenario_in_each_cell_and_opens_a_cell_s_runs(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(REPO_ROOT)
    page_path = tmp_path / "matrix.html"
    argv = ["pressure", "lgtm", "--models", "haiku,opus", "-k", "12"]
    argv += ["--script", "tests/model-scripts/lgtm.by-model.pressure.yaml"]
    assert main([*argv, "--report", str(page_path)]) == 1  # two scenarios no-steer in both
    capsys.readouterr()
    cells = sorted(p.name for p in (tmp_path / "matrix.cells").iterdir())
    assert cells == ["model-haiku.html", "model-opus.html"]
    with opened(page_path) as (page, requests):
        assert requests == [page_path.as_uri()]  # nothing fetched
        assert page.locator("h1").inner_text() == "skilltest pressure matrix"
        assert page.locator("p.notice").first.inner_text().startswith("offline:")
        heads = page.locator("table.heatmap thead th").all_inner_texts()
        assert heads == ["scenario", "model=haiku", "model=opus"]
        lifts = page.locator("table.heatmap td.lift")
        assert lifts.count() == 8
        first = page.locator("table.heatmap tbody tr").first
        assert first.locator("th").inner_text() == "lgtm/aggregation-before-raw-fetch"
        haiku, opus = first.locator("td.lift").all()
        assert haiku.inner_text().startswith("steers +100%")
        assert opus.inner_text().startswith("not-red +0%")
        # A credible lift is green, none at all pale yellow: the two cells differ at a glance.
        green = haiku.evaluate("td => getComputedStyle(td).backgroundColor")
        pale = opus.evaluate("td => getComputedStyle(td).backgroundColor")
        red, green_part, blue = map(int, re.findall(r"\d+", green)[:3])
        assert green_part > red and green_part > blue
        assert green != pale
        assert "helps haiku, not needed on opus" in page.locator("body").inner_text()
        screenshot(page, tmp_path / "matrix.png", capsys)
        # One click: the cell's own report, with its runs.
        haiku.locator("a").click()
        page.wait_for_load_state()
        assert page.url.endswith("matrix.cells/model-haiku.html")
        text = page.locator("body").inner_text()
        assert "aggregation-before-raw-fetch" in text
        assert "haiku" in text
        screenshot(page, tmp_path / "cell.png", capsys)
