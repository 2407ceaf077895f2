"""The HTML report of real runs, opened in headless Chromium: what a person sees.

Drives the system's Chromium (Debian's ``chromium``) through Playwright; Playwright's own
browser downloads are never used. Each test checks what is drawn where (the header, the cards,
the prompts, the user's turns in a run), at 1280 px and on a 390 px phone screen, that the page
asks nothing of any network and that its Content-Security-Policy refused nothing. The
screenshot of each page is kept under pytest's temporary folder (its path is printed; ``pytest
-s`` shows it) as the test's artifact.

Without a Chromium the tests are skipped with the reason; in CI (``CI`` set, or
``SKILLTEST_BROWSER=required`` as ``.ci/run`` sets it) they fail instead, so that a CI run never
passes without them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from skilltest.cli import main
from skilltest.report.html import render_html
from skilltest.report.markdown import Document
from skilltest.report.script import SCRIPT
from tests.generated import generated_project
from tests.layers import run_layer
from tests.report.documents import IMPROVED, scenarios_document

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
NO_CHROMIUM = "no Chromium binary (apt-get install chromium, or set SKILLTEST_CHROMIUM)"


def browser_required() -> bool:
    """Whether this run must drive a browser: in CI (``CI`` set to anything but ``false`` or
    ``0``), or when ``SKILLTEST_BROWSER=required``."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false")
    return ci or os.environ.get("SKILLTEST_BROWSER") == "required"


if CHROMIUM is None and browser_required():
    pytest.fail(f"the HTML report's browser tests must run here: {NO_CHROMIUM}", pytrace=False)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)

VIOLATIONS = """
window.violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.violations.push(`${event.effectiveDirective} refused ${event.blockedURI}`);
});
"""
"""Records what the page's Content-Security-Policy refuses (run before the page's own script,
outside its policy)."""


@contextmanager
def opened(
    report: Path | str,
    *,
    width: int = 1280,
    javascript: bool = True,
    refused: list[str] | None = None,
) -> Iterator[tuple[Page, list[str]]]:
    """The report (a file, or a ``file:`` address with a fragment) in a headless Chromium page
    ``width`` pixels wide, with the URL of every request the page made. What the page's
    Content-Security-Policy refused is put in ``refused`` when given; without it, anything
    refused fails the test.

    Started only after the run: Playwright's synchronous API keeps an event loop running in
    this thread, where the run's own ``asyncio.run`` could not start.
    """
    from playwright.sync_api import sync_playwright

    address = report.as_uri() if isinstance(report, Path) else report
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        try:
            context = browser.new_context(
                viewport={"width": width, "height": 900}, java_script_enabled=javascript
            )
            # No deadline of Playwright's own: a loaded machine opens a large page slowly, and
            # pytest's timeout bounds a page that never loads.
            context.set_default_timeout(0)
            context.add_init_script(VIOLATIONS)
            page = context.new_page()
            # The report must work offline: any request leaving the page fails the test.
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.goto(address)
            yield page, requests
            seen = page.evaluate("window.violations") if javascript else []
            if refused is None:
                assert seen == [], f"the page's policy refused: {seen}"
            else:
                refused.extend(seen)
        finally:
            browser.close()


def screenshot(
    page: Page, path: Path, capsys: pytest.CaptureFixture[str], *, whole: bool = True
) -> None:
    """The ``whole`` page (else what the window shows) as a PNG, kept in the test's folder, its
    path printed."""
    page.screenshot(path=str(path), full_page=whole)
    assert path.stat().st_size > 10_000
    with capsys.disabled():
        print(f"\nscreenshot of the HTML report: {path}")


def box(page: Page, selector: str) -> dict[str, float]:
    """Where the first element ``selector`` finds is drawn; it must be visible and not empty."""
    element = page.locator(selector).first
    assert element.is_visible(), selector
    found = element.bounding_box()
    assert found is not None and found["width"] > 20 and found["height"] > 10, selector
    return found


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


def see_header(page: Page, *, backend: str) -> None:
    """The page opens with what produced the results, and an emulator run's header says first,
    where a reader cannot miss it, that its numbers come from a scripted stand-in."""
    title = box(page, "header.page-head h1")
    badge = box(page, "header.page-head .badge.offline")
    assert page.locator(".badge.offline").inner_text() == "offline: scripted stand-in"
    assert abs(badge["y"] - title["y"]) < 30  # beside the title
    facts = page.locator("header.page-head dl.facts .fact")
    shown = {
        facts.nth(i).locator("dt").inner_text().lower().removesuffix("s"): facts.nth(i)
        .locator("dd")
        .inner_text()
        for i in range(facts.count())
    }
    assert list(shown) == [
        "backend",
        "model",
        "claude cli",
        "skilltest",
        "date",
        "duration",
        "cost",
        "run",
    ]
    assert shown["backend"] == f"{backend} (offline: a scripted stand-in)"
    assert shown["duration"] != "not recorded" and int(shown["run"].split()[0]) > 0
    notice = page.locator("p.offline").first
    assert notice.is_visible()
    said = notice.inner_text()
    # One file's notice; a report of several names each file it is about.
    assert said.startswith("offline: ") or said.startswith("offline (/")
    assert said.endswith(
        ": these numbers come from the skilltest emulator, a scripted stand-in, not a "
        "model; they say nothing about how a real model behaves"
    )
    notice_box = notice.bounding_box()
    heading = page.locator("section.layer h2").first.bounding_box()
    assert notice_box is not None and heading is not None
    assert notice_box["y"] < heading["y"] and notice_box["width"] > 300


def see_card(page: Page, title: str) -> str:
    """A layer's card, under the header: its text."""
    card = page.locator(f"section.card[aria-label='{title} summary']")
    card_box = card.bounding_box()
    head = page.locator("header.page-head").bounding_box()
    assert card.is_visible() and card_box is not None and head is not None
    assert card_box["y"] > head["y"] + head["height"] - 1
    return card.inner_text()


def see_pressure_report(page: Page, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    see_header(page, backend="emulator")
    card = see_card(page, "skill pressure")
    assert "4 scenarios" in card and "lift, all runs\n+" in card
    assert box(page, "details.howto")["height"] > 100  # how to read it, open

    # The verdict rows: one per scenario of the suite, each with its verdict.
    rows = page.locator("table.verdicts tr.passed, table.verdicts tr.failed")
    assert rows.count() == 4
    names = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
    assert "lgtm/discovery-before-querying" in names
    verdicts = {rows.nth(i).locator("td.verdict").inner_text() for i in range(rows.count())}
    assert verdicts <= {"steers", "not-red", "no-steer", "inconclusive", "error"}

    # A plot rendered: the forest plot has a real size and a dot per scenario.
    plot = box(page, "svg.forest")
    assert plot["width"] > 100 and plot["height"] > 50
    assert page.locator("svg.forest circle").count() == 4

    # A scenario shows its prompt beside what is expected.
    scenario = page.locator("section.scenario").first
    prompt = scenario.locator("blockquote.prompt").first
    assert prompt.is_visible()
    assert prompt.inner_text().startswith("There's an error spike in our checkout service.")
    expect = scenario.locator("div.expect").bounding_box()
    prompt_box = prompt.bounding_box()
    assert expect is not None and prompt_box is not None
    assert expect["x"] > prompt_box["x"] + prompt_box["width"] - 1  # side by side at 1280 px

    # A baseline run that fails is RED, shown as the outcome wanted.
    baseline = scenario.locator("details.run", has_text="without skill run #1")
    outcome = baseline.locator("summary .chip").first
    assert outcome.inner_text() == "RED (as wanted)"
    assert "good" in (outcome.get_attribute("class") or "")

    # A run expanded: its timeline is hidden until its summary is clicked, then shows the
    # user's prompt and the answer.
    run = scenario.locator("details.run").first
    timeline = run.locator("ol.timeline")
    assert not timeline.is_visible()
    run.locator("summary").first.click()
    assert timeline.is_visible()
    user = timeline.locator("li.user").first
    assert user.is_visible() and "There's an error spike" in user.inner_text()
    assert timeline.locator("li.assistant").first.inner_text().lower().startswith("assistant")

    screenshot(page, tmp_path / "pressure-report.png", capsys)


def test_scenarios_report_with_a_world_in_a_browser(tmp_path, capsys, claude_bin):
    # One run per arm of a world scenario through the real claude CLI on the emulator: the
    # report shows its prompt, its follow-up turn, its transcript with both user turns, and
    # the HTTP calls the fake ticket service saw.
    report = tmp_path / "scenarios.html"
    suite = REPO / "tests" / "scenarios" / "tickets.yaml"
    only = ["--only", "reassign-after-confirmation"]
    options = [*only, "--claude", claude_bin, "-k", "1", "-j", "2", "--report", report]
    code = run_layer("scenarios", suite, tmp_path, *options)
    capsys.readouterr()
    assert code in (0, 1)
    with opened(report) as (page, requests):
        see_header(page, backend="emulator")
        assert "1 scenario" in see_card(page, "scenarios")
        rows = page.locator("table.verdicts tr.passed, table.verdicts tr.failed")
        assert rows.count() == 1
        assert rows.first.locator("td").first.inner_text() == "tickets/reassign-after-confirmation"
        assert box(page, "svg.forest")["width"] > 100
        assert box(page, "svg.bars")["height"] > 20

        prompts = page.locator("section.scenario blockquote.prompt")
        assert prompts.count() == 2
        assert prompts.nth(0).inner_text().startswith("Find the overdue P1 incidents")
        assert prompts.nth(1).inner_text() == "Yes, I confirm: move INC-1042 to the platform team."
        assert all(prompts.nth(i).is_visible() for i in range(2))
        expect = page.locator("section.scenario div.expect").inner_text()
        assert "PATCH /tickets/INC-1042" in expect and "no write before user turn 2" in expect

        run = page.locator("details.run").first
        assert run.locator("summary").first.inner_text().startswith("with skill run #1 score")
        http = run.locator("li.http").first
        assert not http.is_visible()
        run.locator("summary").first.click()
        assert http.is_visible()
        assert "api.tickets.example.com" in http.inner_text()
        assert run.locator("li.tool").count() >= 1
        turns = run.locator("li.user")
        assert turns.count() == 2 and turns.nth(1).is_visible()
        assert "Yes, I confirm" in turns.nth(1).inner_text()

        screenshot(page, tmp_path / "scenarios-report.png", capsys)
        assert requests == [report.as_uri()]


def test_one_report_of_both_layers_reads_wide_and_narrow(tmp_path, capsys, claude_bin):
    # A pressure run and a scenario run with a follow-up turn, reported together as a CI job
    # would: one header, a card per layer, every prompt; at 1280 px the cards sit side by side,
    # on a phone they stack and nothing runs off the side of the page.
    pressure = tmp_path / "pressure"
    code = run_layer("pressure", REPO / "tests" / "skill-pressure" / "lgtm.yaml", pressure)
    assert code in (0, 1)
    scenarios = tmp_path / "scenarios"
    only = ["--only", "latency-follow-up", "--claude", claude_bin, "-k", "1", "-j", "2"]
    code = run_layer("scenarios", REPO / "tests" / "scenarios" / "lgtm.yaml", scenarios, *only)
    assert code in (0, 1)
    report = tmp_path / "report.html"
    results = [pressure / "results.json", scenarios / "results.json"]
    assert main(["report", *map(str, results), "--html", str(report)]) == 0
    capsys.readouterr()

    with opened(report) as (page, requests):
        see_header(page, backend="emulator")
        first, second = see_card(page, "skill pressure"), see_card(page, "scenarios")
        assert "4 scenarios" in first and "1 scenario" in second
        cards = [page.locator("section.card").nth(i).bounding_box() for i in range(2)]
        assert cards[0] is not None and cards[1] is not None
        assert cards[0]["y"] == cards[1]["y"] and cards[1]["x"] > cards[0]["x"]
        follow_up = page.locator("#scenarios-0 blockquote.prompt").nth(1)
        assert follow_up.inner_text() == "And how does that compare with an hour ago?"
        assert follow_up.is_visible()
        run = page.locator("#scenarios-0 details.run").first
        run.locator("summary").first.click()
        turns = run.locator("li.user")
        assert [turns.nth(i).inner_text().split("\n", 1)[1] for i in range(turns.count())] == [
            "What's the latency of payment-service right now?",
            "And how does that compare with an hour ago?",
        ]
        assert turns.nth(1).is_visible()
        screenshot(page, tmp_path / "report-1280.png", capsys)
        assert requests == [report.as_uri()]

    with opened(report, width=390) as (page, _):
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        box(page, "header.page-head .badge.offline")
        cards = [page.locator("section.card").nth(i).bounding_box() for i in range(2)]
        assert cards[0] is not None and cards[1] is not None
        assert cards[1]["y"] > cards[0]["y"] + cards[0]["height"] - 1  # stacked
        assert cards[0]["width"] <= 390
        prompt = page.locator("#scenarios-0 blockquote.prompt").first
        prompt.scroll_into_view_if_needed()
        prompt_box = prompt.bounding_box()
        assert prompt.is_visible() and prompt_box is not None
        assert prompt_box["x"] >= 0 and prompt_box["x"] + prompt_box["width"] <= 390
        # A run opened on the phone stays within the screen too, its user turns readable.
        run = page.locator("#scenarios-0 details.run").first
        run.locator("summary").first.click()
        turn = run.locator("li.user").nth(1)
        turn.scroll_into_view_if_needed()
        turn_box = turn.bounding_box()
        assert turn.is_visible() and turn_box is not None
        assert turn_box["x"] + turn_box["width"] <= 390
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        screenshot(page, tmp_path / "report-390.png", capsys)


def test_eval_case_graders_and_transcript_links_in_a_browser(tmp_path, capsys, claude_bin):
    # The example plugin's Claude Code eval cases, one run per arm: each case shows its graders
    # with what they ask, the indicators as such, and a grader that runs on one arm only says
    # so in the other; the table fits its column, and each run links its kept transcript by a
    # path relative to the page, which opens.
    plugin = tmp_path / "observability"
    shutil.copytree(
        REPO / "tests" / "fixtures" / "plugins" / "observability",
        plugin,
        ignore=shutil.ignore_patterns("output", "results", "__pycache__"),
    )
    report = tmp_path / "reports" / "evals.html"
    options = ["--claude", claude_bin, "-k", "1", "-j", "2", "--report", report]
    code = run_layer("scenarios", plugin / "evals", tmp_path, *options)
    capsys.readouterr()
    assert code in (0, 1)
    with opened(report) as (page, requests):
        see_header(page, backend="emulator")
        case = page.locator("section.scenario", has_text="observability/error-spike")
        graders = case.locator("div.expect table.checks")
        assert graders.is_visible()
        rows = graders.locator("tr")
        by_name = {
            rows.nth(i).locator(".check-name").inner_text(): rows.nth(i).inner_text()
            for i in range(1, rows.count())
        }
        assert "one-log-query" in by_name and "answer-names-service" in by_name
        assert "indicator, not scored" in by_name["loads-the-skill"]
        assert "not run on this arm" in by_name["loads-the-skill"]
        assert "a judge model (3 votes" in by_name["answer-names-service"]
        fits = "t => t.scrollWidth <= t.parentElement.clientWidth + 1"
        assert graders.evaluate(fits), "the graders' table runs past its column"

        run = case.locator("details.run").first
        run.locator("summary").first.click()
        link = run.locator("p.source a")
        assert link.is_visible()
        target = link.get_attribute("href") or ""
        assert target.startswith("../output/") and target.endswith(".ndjson")
        assert (report.parent / target).resolve().is_file()
        assert link.inner_text().endswith(target.removeprefix("../"))
        screenshot(page, tmp_path / "evals-report.png", capsys)
        assert requests == [report.as_uri()]

    # On a phone too: the graders' table and an opened run's checks stay within the screen.
    with opened(report, width=390) as (page, _):
        case = page.locator("section.scenario", has_text="observability/error-spike")
        run = case.locator("details.run").first
        run.locator("summary").first.click()
        for table in (case.locator("div.expect table.checks"), run.locator("table.checks")):
            table.scroll_into_view_if_needed()
            assert table.evaluate(fits), "a checks table runs past the phone's screen"
        assert page.evaluate("document.documentElement.scrollWidth") <= 390


# --- a large suite: 1000 scenarios, filtered, searched, opened ---------------------------------

LARGE = 1000


def rendering(page: Page) -> str:
    """How much the browser built and when it first drew: elements, first contentful paint,
    the end of DOMContentLoaded (printed beside each other, never asserted)."""
    elements = page.evaluate("document.getElementsByTagName('*').length")
    paint = page.evaluate(
        "(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0"
    )
    loaded = page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    return f"{elements:7,} elements, first paint {paint:6.0f} ms, DOM loaded {loaded:6.0f} ms"


def shown_rows(page: Page) -> list[tuple[str, str]]:
    """The verdict table's rows a reader sees: (scenario, verdict)."""
    shown = page.evaluate(
        """[...document.querySelectorAll("table.verdicts tr[data-verdict]")]
            .filter((row) => row.checkVisibility())
            .map((row) => [row.cells[0].innerText, row.querySelector("td.verdict").innerText])"""
    )
    return [(name, verdict) for name, verdict in shown]


def test_a_report_of_1000_scenarios_filters_searches_and_opens(tmp_path, capsys):
    # A real pressure run of 1000 scenarios on the emulator: the page filters by verdict,
    # searches by id, keeps both in its link, builds a scenario's details only when it opens,
    # and without JavaScript shows every scenario in full.
    project = generated_project(tmp_path / "project", LARGE, varied=True)
    suite = project / "tests" / "skill-pressure" / "generated.yaml"
    report = tmp_path / "large.html"
    code = run_layer("pressure", suite, tmp_path, "--backend", "emulator", "-j", "8")
    assert code == 1  # no-steer and not-red scenarios fail the run
    assert main(["report", str(tmp_path / "results.json"), "--html", str(report)]) == 0
    capsys.readouterr()
    counts = {"inconclusive": 940, "no-steer": 20, "not-red": 20, "steers": 20}

    with opened(report) as (page, requests):
        scripted = rendering(page)
        finder = page.get_by_role("search", name="find scenarios")
        status = finder.get_by_role("status")
        assert finder.is_visible() and status.inner_text() == "showing all 1000"
        boxes = finder.get_by_role("checkbox")
        assert [boxes.nth(i).evaluate("box => box.parentElement.innerText") for i in range(4)] == [
            f"{verdict} {count}" for verdict, count in counts.items()
        ]
        # A large layer starts folded: a scenario's details are not built until it opens.
        assert page.locator("section.scenario").count() == LARGE
        assert page.locator("blockquote.prompt").count() == 0
        assert page.locator("details.about[open]").count() == 0

        # Only the not-red scenarios: untick the others, the last one from the keyboard.
        for verdict in ("inconclusive", "no-steer"):
            finder.get_by_role("checkbox", name=f"{verdict} {counts[verdict]}").uncheck()
        finder.get_by_role("checkbox", name="steers 20").focus()
        page.keyboard.press("Space")
        rows = shown_rows(page)
        assert [verdict for _, verdict in rows] == ["not-red"] * 20
        assert rows[0][0] == "demo/s004" and rows[-1][0] == "demo/s954"
        assert status.inner_text() == "showing 20 of 1000"
        assert page.locator("section.scenario:visible").count() == 20
        assert page.locator("section.scenario:visible .name").first.inner_text() == "demo/s004"
        shared = page.url
        assert shared.endswith("#pressure.verdict=not-red")

        # A search by id, case-insensitive, over every verdict again.
        finder.get_by_role("button", name="show all").click()
        assert status.inner_text() == "showing all 1000"
        search = finder.get_by_role("searchbox", name="scenarios whose id contains")
        search.fill("S42")
        assert [name for name, _ in shown_rows(page)] == [f"demo/s42{i}" for i in range(10)]
        search.fill("S421")
        assert shown_rows(page) == [("demo/s421", "inconclusive")]
        assert page.url.endswith("#pressure.id=S421")

        # Opened from its row: its prompt and expectations are built, then a run's timeline.
        page.locator("table.verdicts tr:visible a").first.click()
        scenario = page.locator("#pressure-421")
        prompt = scenario.locator("blockquote.prompt")
        assert prompt.is_visible() and prompt.inner_text() == "Investigate error spike 421."
        assert page.locator("blockquote.prompt").count() == 1  # no other scenario was built
        run = scenario.locator("details.run").first
        run.locator("summary").click()
        answer = run.locator("li.assistant pre")
        assert answer.is_visible() and "count_over_time" in answer.inner_text()
        screenshot(page, tmp_path / "large-report.png", capsys, whole=False)
        assert requests == [report.as_uri()]

    # The link shared keeps the filter: it opens on the 20 not-red scenarios.
    with opened(shared) as (page, _):
        assert [verdict for _, verdict in shown_rows(page)] == ["not-red"] * 20
        assert page.get_by_role("checkbox", name="steers 20").is_checked() is False

    # Without JavaScript: every scenario open and in full, no filter that would do nothing.
    with opened(report, javascript=False) as (page, _):
        plain = rendering(page)
        assert page.locator("form.finder").is_hidden()
        assert page.locator("section.scenario details.about[open]").count() == LARGE
        prompts = page.locator("blockquote.prompt")
        assert prompts.count() == LARGE
        last = prompts.nth(LARGE - 1)
        last.scroll_into_view_if_needed()
        assert last.is_visible() and last.inner_text() == "Investigate error spike 999."
        # Every run's timeline too: K = 1 for 940 scenarios, 5 for 20, 6 for 40; both arms.
        assert page.locator("details.run ol.timeline").count() == 2 * (940 + 20 * 5 + 40 * 6)
        assert page.locator(".script-note").is_hidden()
        screenshot(page, tmp_path / "large-report-no-script.png", capsys, whole=False)
    with capsys.disabled():
        print(f"\n1000 scenarios, with its script:  {scripted}")
        print(f"1000 scenarios, without a script: {plain}")


def test_only_the_pages_own_script_runs(tmp_path):
    # The policy allows the page's one script by its hash: as written, the script runs and
    # nothing is refused; changed by one word and not hashed again, it does not run, the
    # browser reports the refusal, and the page says that its script did not run.
    page = render_html([Document("s.json", scenarios_document(IMPROVED))], cwd=tmp_path)
    report = tmp_path / "report.html"
    report.write_text(page)
    with opened(report) as (browser, _):
        assert browser.locator("html.scripted").count() == 1
        assert browser.get_by_role("search", name="find scenarios").is_visible()
        assert browser.locator(".script-note").is_hidden()
        run = browser.locator("details.run").first
        run.locator("summary").click()
        assert run.locator(".run-body").is_visible()

    changed = tmp_path / "changed.html"
    assert '"scripted"' in SCRIPT
    changed.write_text(page.replace(SCRIPT, SCRIPT.replace('"scripted"', '"changed"')))
    refused: list[str] = []
    with opened(changed, refused=refused) as (browser, _):
        assert browser.locator("html.changed, html.scripted").count() == 0
        assert browser.locator("form.finder").is_hidden()
        note = browser.locator(".script-note")
        assert note.is_visible()
        assert note.inner_text().startswith("This page's script did not run")
        # What the page keeps for its script stays inert: a run opens empty.
        run = browser.locator("details.run").first
        run.locator("summary").click()
        assert run.locator(".run-body").count() == 0
    assert refused == ["script-src-elem refused inline"]
