"""The HTML report: a row and a section per scenario, the plots, the run timelines, escaping."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html import unescape

import pytest

from skilltest.report.finder import FOLD_ABOVE
from skilltest.report.html import render_html
from skilltest.report.markdown import Document
from skilltest.report.markup import href, later
from skilltest.report.script import SCRIPT, script_source
from tests.report.documents import (
    IMPROVED,
    pressure_document,
    pressure_scenario,
    scenario,
    scenarios_document,
    triggers_document,
)

INJECTION = '<script>alert("x")</script><img src=x onerror=alert(1)>'

REGRESSED = scenario(
    "rename-column",
    "regressed",
    False,
    (0.2, 0.05, 0.5),
    (0.9, 0.6, 1.0),
    (-0.7, -0.95, -0.3),
    reasons=(INJECTION,),
)


def transcript_lines() -> list[dict]:
    return [
        {"type": "system", "subtype": "init"},
        {"type": "user", "message": {"content": "Error spike in checkout."}},
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "text", "text": "Let me look at the logs."},
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                ]
            },
        },
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": INJECTION}]
            },
        },
        {"type": "result", "subtype": "success", "is_error": False, "result": "Done."},
    ]


def write_transcripts(root, document):
    for item in document["scenarios"]:
        for run in item["runs"]:
            path = root / run["transcript"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(json.dumps(line) for line in transcript_lines()))


def text(html: str) -> str:
    """What a reader sees of an HTML fragment: its text, unescaped, spaces collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def verdict_rows(page: str) -> list[str]:
    table = page.split('<table class="verdicts">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr class="(?:passed|failed)"[^>]*>.*?</tr>', table)


def markup(page: str) -> str:
    """The page without its own script (the one the policy allows by its hash): what a results
    file or a transcript could have put there."""
    assert page.count(f"<script>{SCRIPT}</script>") == 1
    return page.replace(f"<script>{SCRIPT}</script>", "")


def test_a_row_and_a_section_per_scenario_of_every_layer(tmp_path):
    document = scenarios_document(IMPROVED, REGRESSED)
    write_transcripts(tmp_path, document)
    pressure = pressure_document(
        pressure_scenario("aggregate-first", "steers", 3, 3, 3, (1.0, 0.3, 1.0))
    )
    page = render_html(
        [
            Document("s.json", document),
            Document("p.json", pressure),
            Document("t.json", triggers_document()),
        ],
        cwd=tmp_path,
    )
    sections = page.split('<section class="layer"')[1:]
    assert [re.search(r"<h2>(.*?)</h2>", section).group(1) for section in sections] == [
        "skill pressure",
        "scenarios",
        "triggers",
    ]
    scenario_rows = verdict_rows(sections[1])
    assert len(scenario_rows) == 2
    verdict = re.search(r'<td class="verdict">(.*?)</td>', scenario_rows[0]).group(1)
    assert verdict == '<span class="chip good">improved</span>'
    assert scenario_rows[1].startswith('<tr class="failed" data-verdict="regressed">')
    assert '<span class="chip bad">regressed</span>' in scenario_rows[1]
    assert "-0.70 [-0.95, -0.30]" in scenario_rows[1]
    assert len(verdict_rows(sections[0])) == 1
    assert len(verdict_rows(sections[2])) == 2
    assert sections[1].count('<section class="scenario"') == 2
    assert "2 scenarios: 1 improved, 1 regressed; 1 failing" in sections[1]


def test_the_forest_plot_has_a_dot_per_delta_and_the_bars_their_values(tmp_path):
    document = scenarios_document(IMPROVED, REGRESSED)
    document["scenarios"][0]["with_skill"]["components"] = {"tool_selection": 1.0, "order": None}
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    forest = re.search(r'<svg class="forest".*?</svg>', page).group(0)
    assert forest.count("<circle") == 2
    assert 'aria-label="delta with its interval"' in forest
    bars = re.search(r'<svg class="bars".*?</svg>', page).group(0)
    assert ">tool_selection</text>" in bars and ">1.00</text>" in bars
    # A component the scenario leaves out (no value in any arm) is not drawn.
    assert ">order</text>" not in bars


def test_a_run_shows_its_transcript_as_a_timeline_in_order(tmp_path):
    document = scenarios_document(IMPROVED)
    write_transcripts(tmp_path, document)
    document["scenarios"][0]["runs"][0]["world"] = {
        "calls": [{"service": "orders", "method": "GET", "path": "/orders/7", "status": 200}],
        "scores": {"outcome": 0.5},
    }
    document["scenarios"][0]["runs"][0]["score"] = 0.75
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    run = page.split('<details class="run">', 2)[1]
    summary = re.match(r"<summary>(.*?)</summary>", run).group(1)
    assert text(summary) == "with skill run #1 score 0.75"
    kinds = re.findall(r'<span class="kind">(.*?)</span>', run.split("</details>")[0])
    assert kinds == [
        "user",
        "assistant",
        "tool call Bash",
        "tool result",
        "result (success)",
        "HTTP",
    ]
    assert "orders GET /orders/7 200" in run
    assert "violation" not in run.split("</details>")[0]
    assert 'aria-label="split scores"' in run


def test_pressure_runs_show_their_answers(tmp_path):
    item = pressure_scenario("aggregate-first", "steers", 1, 1, 1, (1.0, 0.3, 1.0))
    item["runs"] = [
        {"arm": "with_skill", "rep": 1, "passed": True, "output": "Use rate() first.",
         "matched": ["rate\\("], "missing": [], "anti_matched": [], "error": None},
        {"arm": "without_skill", "rep": 1, "passed": False, "output": None,
         "error": "HTTP 529: overloaded"},
    ]  # fmt: skip
    page = render_html([Document("p.json", pressure_document(item))], cwd=tmp_path)
    summaries = [text(s) for s in re.findall(r"<summary>(.*?)</summary>", page)]
    assert "with skill run #1 passed" in summaries
    assert "Use rate() first." in page and "matched: rate\\(" in page
    assert "without skill run #1 error" in summaries
    assert "HTTP 529: overloaded" in page


def test_untrusted_text_is_escaped_everywhere(tmp_path):
    document = scenarios_document(REGRESSED)
    write_transcripts(tmp_path, document)
    document["scenarios"][0]["skill"] = '"><script>x()</script>'
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert "<script" not in markup(page).lower()
    assert "onerror=alert" not in page.replace("&lt;img src=x onerror=alert(1)&gt;", "")
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_a_missing_transcript_is_named_not_raised(tmp_path):
    page = render_html([Document("s.json", scenarios_document(IMPROVED))], cwd=tmp_path)
    assert "transcript not readable: " in page
    assert "output/investigate-error-spike/with-skill-0.ndjson" in page


def test_the_page_loads_nothing_from_a_network(tmp_path):
    document = scenarios_document(IMPROVED)
    write_transcripts(tmp_path, document)
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "@import" not in page and "url(" not in page


def test_authority_violations_show_in_the_run(tmp_path):
    document = scenarios_document(IMPROVED)
    document["scenarios"][0]["runs"][0]["world"] = {
        "calls": [{"method": "DELETE", "host": "api.tickets.example.com", "path": "/t/1"}],
        "violations": ["forbidden DELETE /t/1"],
    }
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    run = page.split('<details class="run">', 2)[1].split("</details>")[0]
    assert "DELETE api.tickets.example.com /t/1" in run
    assert '<li class="error"><span class="kind">authority violation</span>' in run
    assert "forbidden DELETE /t/1" in run


def test_trigger_runs_say_how_they_ended(tmp_path):
    document = triggers_document()
    document["suites"][0]["queries"][0]["runs"] = [
        {"rep": 0, "ended": "fired", "reason": "Skill lgtm called", "transcript": None},
    ]
    page = render_html([Document("t.json", document)], cwd=tmp_path)
    assert '<summary>run #1 <span class="chip good">fired</span></summary>' in page
    assert '<p class="note">Skill lgtm called</p>' in page
    assert 'class="error"' not in page


# --- the header, the cards, how to read it -------------------------------------------------


def section(page: str, css: str) -> str:
    """The first element whose class list starts with ``css``, as far as its closing tag."""
    tag, rest = re.search(rf'<(\w+) class="{css}[^"]*"[^>]*>(.*)', page, re.S).groups()
    depth, index = 1, 0
    for match in re.finditer(rf"<(/?){tag}\b", rest):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            index = match.start()
            break
    return rest[:index]


def facts(page: str) -> dict[str, str]:
    head = section(page, "panel page-head")
    return {
        text(name): text(value) for name, value in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", head)
    }


def costed(document, cost: float):
    for item in document["scenarios"]:
        for run in item["runs"]:
            run["cost_usd"] = cost
    return document


def test_the_header_says_what_produced_the_results_and_what_they_cost(tmp_path):
    document = costed(scenarios_document(IMPROVED), 0.1)
    document["provenance"].update(finished_at="2026-12-01T09:02:05Z", duration_s=125.4)
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    head = section(page, "panel page-head")
    assert "<h1>skilltest report</h1>" in head
    assert '<span class="badge live">live</span>' in head
    assert text(re.search(r'<p class="suites">(.*?)</p>', head).group(1)) == (
        "suite: tests/scenarios/lgtm.yaml"
    )
    assert facts(page) == {
        "backend": "claude",
        "model": "claude-sonnet-4-5-20250929",
        "claude CLI": "2.1.328",
        "skilltest": "0.1.0",
        "date": "2026-12-01 09:00 UTC",
        "duration": "2 min 05 s",
        "cost": "$0.4000",
        "runs": "4",
    }


def test_an_offline_header_says_so_first_and_calls_its_cost_an_estimate(tmp_path):
    document = costed(scenarios_document(IMPROVED), 0.25)
    document["provenance"].update(origin="offline", backend="emulator", duration_s=0.4)
    document["scenarios"][0]["runs"][0]["error"] = "model API error: 529"
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    head = section(page, "panel page-head")
    assert '<span class="badge offline">offline: scripted stand-in</span>' in head
    assert head.index("badge offline") < head.index('class="facts"') < head.index('"offline"')
    shown = facts(page)
    assert shown["backend"] == "emulator (offline: a scripted stand-in)"
    assert shown["model"] == "claude-sonnet-4-5-20250929 as the stand-in named itself"
    assert shown["duration"] == "400 ms"
    assert shown["cost"] == (
        "$1.00 the CLI's list-price estimate for the stand-in's tokens: nothing was spent"
    )
    assert shown["runs"] == "4 1 could not be judged"


def test_several_files_share_one_header_listing_every_value_once(tmp_path):
    scenarios = scenarios_document(IMPROVED)
    scenarios["provenance"]["duration_s"] = 60.0
    pressure = pressure_document(
        pressure_scenario("aggregate-first", "steers", 3, 3, 3, (1.0, 0.3, 1.0))
    )
    pressure["provenance"].update(duration_s=3.5, started_at="2026-12-01T10:30:00Z")
    old = scenarios_document(REGRESSED)
    del old["provenance"]  # written before skilltest recorded what answered
    page = render_html(
        [Document("s.json", scenarios), Document("p.json", pressure), Document("o.json", old)],
        cwd=tmp_path,
    )
    shown = facts(page)
    assert shown["backend"] == "anthropic; claude; not recorded"
    assert shown["date"] == "2026-12-01 09:00 UTC the last run started 2026-12-01 10:30 UTC"
    assert shown["duration"] == (
        "1 min 04 s pressure 3.5 s, scenarios s.json 1 min 00 s, scenarios o.json not recorded"
    )
    assert shown["cost"] == "not reported no run reported a cost"
    assert shown["runs"] == "8"
    # The file that does not say what answered may be a stand-in's: the page says so.
    assert '<span class="badge offline">origin unknown: maybe a scripted stand-in</span>' in page
    assert "<strong>origin unknown</strong> (o.json)" in page


def cards(page: str) -> dict[str, str]:
    return {
        text(title): text(body)
        for title, body in re.findall(
            r'<section class="card[^"]*"[^>]*><h3>(.*?)</h3>(.*?)</section>', page
        )
    }


def test_a_card_per_layer_gives_counts_lift_consistency_and_cost(tmp_path):
    improved = json.loads(json.dumps(IMPROVED))
    improved["with_skill"].update(k=2, pass_hat_k=1.0, cost_usd=0.3, passes=2)
    improved["without_skill"].update(k=2, pass_hat_k=0.0, cost_usd=0.2, passes=0)
    regressed = json.loads(json.dumps(REGRESSED))
    regressed["with_skill"].update(k=2, pass_hat_k=0.0, cost_usd=0.3, passes=0)
    regressed["without_skill"].update(k=2, pass_hat_k=1.0, cost_usd=0.2, passes=2)
    for run in improved["runs"]:
        run["score"] = 1.0 if run["arm"] == "with_skill" else 0.0
    steers = pressure_scenario("aggregate-first", "steers", 3, 3, 3, (1.0, 0.3, 1.0))
    page = render_html(
        [
            Document("s.json", scenarios_document(improved, regressed)),
            Document("p.json", pressure_document(steers)),
        ],
        cwd=tmp_path,
    )
    shown = cards(page)
    assert list(shown) == ["skill pressure", "scenarios"]
    # Pooled over every run: with skill 3/3 passed, the baseline 0/3 (all RED, as wanted).
    assert shown["skill pressure"] == (
        "1 scenario 1 steers with skill passed 3/3 runs (100%) "
        "without skill RED in 3/3 runs (100%), the outcome wanted "
        "lift, all runs +100% [+21%, +100%] runs 0"
    )
    # Pass rates pooled (2 + 0 of 4 with the skill, 0 + 2 of 4 without), the mean scores
    # (1.0 + 0.2) / 2 and (0.0 + 0.9) / 2, the with-skill runs that scored 1.00.
    assert shown["scenarios"] == (
        "2 scenarios 1 failing 1 improved 1 regressed "
        "with skill passed 2/4 runs (50%); mean score 0.60 "
        "without skill passed 2/4 runs (50%); mean score 0.45 "
        "perfect runs 2 of 4 with-skill runs scored 1.00 "
        "lift, all runs +0% [-49%, +49%] "
        "pass^2 50% (mean of 2 scenarios, with skill); below 50% in 1 "
        "cost per passing run with skill $0.3000 (2 passing runs); "
        "without skill $0.2000 (2 passing runs) "
        "suite-wide 0 of 1 improved, 0 of 1 regressed hold suite-wide (Holm, 5% family-wise) "
        "over 2 compared scenarios runs 8"
    )
    assert '<section class="card failing"' in page
    assert '<a href="#layer-scenarios">scenarios</a>' in page


def test_how_to_read_it_explains_the_verdicts_of_the_layers_shown(tmp_path):
    page = render_html([Document("s.json", scenarios_document(IMPROVED))], cwd=tmp_path)
    howto = text(section(page, "panel howto"))
    assert howto.startswith("How to read this Each scenario runs K times with the skill")
    assert "95% interval" in howto
    for verdict, meaning in [
        ("improved", "the delta's whole interval lies above +0.05"),
        ("regressed", "the delta's whole interval lies below min_delta (-0.05 by default)"),
        ("inconclusive", "the delta's interval straddles an edge of the band"),
        ("skill-only", "only the with-skill arm ran"),
    ]:
        assert f"{verdict} {meaning}" in howto
    assert "steers" not in howto and "RED baselines" not in howto
    pressure = pressure_document(pressure_scenario("a", "steers", 3, 3, 3, (1.0, 0.3, 1.0)))
    page = render_html([Document("p.json", pressure)], cwd=tmp_path)
    howto = text(section(page, "panel howto"))
    assert "RED baselines (pressure): a pressure test is worth running only when" in howto
    assert "not-red the baseline's RED rate interval lies below 0.5" in howto
    assert "A pressure baseline run that fails shows as RED (as wanted) ." in howto


# --- per scenario: what was asked, what was expected, what each run did -----------------------

ABOUT = {
    "name": "Discover, aggregate, then sample raw logs",
    "prompt": "Error spike in checkout. Investigate.",
    "turns": ["Now check the latency too."],
    "expected": {
        "required_tools": ["Bash"],
        "required_patterns": ["count_over_time"],
        "text_patterns": [],
        "anti_patterns": ["kubectl logs", "rm -rf"],
        "vetoes": ["rm -rf"],
        "tool_ordering": [["Read", "Bash"]],
        "recommended_tools": [],
        "pattern_scope": "tools",
        "expect_no_action": False,
        "require_success": False,
    },
    "checks": [
        {
            "kind": "file_exists",
            "name": "notes written",
            "veto": True,
            "weight": 1.0,
            "arm": "both",
            "what": "NOTES.md exists",
        },
    ],
    "world": None,
    "min_score": 0.6,
    "min_delta": -0.1,
}

CLI_TRANSCRIPT = [
    {"type": "system", "subtype": "init"},
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "Looking."}]}},
    {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Bash",
         "input": {"command": 'lgtm loki query \'count_over_time({app="checkout"}[5m])\''}},
    ]}},
    {"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "42"},
    ]}},
    {"type": "user", "isSynthetic": True,
     "message": {"content": [{"type": "text", "text": "# The lgtm skill\nAggregate first."}]}},
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "42 errors."}]}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "42 errors."},
    {"type": "system", "subtype": "init"},
    {"type": "assistant", "message": {"content": [{"type": "text", "text": "p99 is fine."}]}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "p99 is fine."},
]  # fmt: skip
"""What ``claude -p`` prints for two turns: the user's messages are not in it."""


def described(tmp_path):
    """A scenario with what the suite asks of it, its checks' results and kept transcripts."""
    item = json.loads(json.dumps(IMPROVED))
    item["scenario"] = ABOUT
    item["decide_by"] = "pass"
    for run in item["runs"]:
        passed = run["arm"] == "with_skill"
        evidence = "NOTES.md found" if passed else "no NOTES.md"
        run["checks"] = [
            {"name": "notes written", "kind": "file_exists", "passed": passed,
             "evidence": evidence, "veto": True, "weight": 1.0},
        ]  # fmt: skip
        run["vetoes"] = [] if passed else ["check notes written failed"]
        run["score"] = 1.0 if passed else 0.0
        path = tmp_path / run["transcript"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(json.dumps(line) for line in CLI_TRANSCRIPT))
    return scenarios_document(item)


def scenario_section(page: str, anchor: str) -> str:
    return page.split(f'<section class="scenario" id="{anchor}">', 1)[1].split("</section>")[0]


def test_a_scenario_shows_its_prompt_turns_and_expectations(tmp_path):
    page = render_html([Document("s.json", described(tmp_path))], cwd=tmp_path)
    shown = scenario_section(page, "scenarios-0")
    assert text(shown.split('<div class="scenario-grid">')[0]) == (
        "lgtm/investigate-error-spike improved Discover, aggregate, then sample raw logs"
    )
    ask = text(section(shown, "ask"))
    assert ask == (
        "What the user says prompt Error spike in checkout. Investigate. "
        "turn 2: follow-up Now check the latency too."
    )
    expected = section(shown, "expect")
    rows = {
        text(name): text(value)
        for name, value in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", expected)
    }
    assert rows == {
        "required tools": "Bash",
        "must match in the tool calls": "count_over_time",
        "must not match in the tool calls": "kubectl logs rm -rf veto",
        "tools in this order": "Read → Bash",
        "a run passes when": "it scores at least 0.60 with no veto and no authority violation",
        "the verdict reads": "the pass rates, with skill minus without: improved when its "
        "interval lies above +0.05, regressed when below -0.10, neutral in between",
        "the scenario passes when": "improved or neutral, and the with-skill mean score at "
        "least 0.60",
    }
    assert '<code>rm -rf</code> <span class="chip warn">veto</span>' in expected
    checks = re.search(r'<table class="checks">(.*?)</table>', expected).group(1)
    assert [text(row) for row in re.findall(r"<tr>(.*?)</tr>", checks)] == [
        "check with skill without skill",
        "notes written veto NOTES.md exists 2/2 passed 0/2 passed",
    ]
    assert '<span class="chip good">2/2 passed</span>' in checks
    # The baseline missing what the skill brings is no bad news: its count is plain.
    assert '<span class="chip plain">0/2 passed</span>' in checks


def test_a_run_shows_the_user_turns_where_they_were_sent_and_its_checks(tmp_path):
    page = render_html([Document("s.json", described(tmp_path))], cwd=tmp_path)
    runs = scenario_section(page, "scenarios-0").split('<details class="run">')[1:]
    with_run = next(run for run in runs if text(run).startswith("with skill run #1"))
    without_run = next(run for run in runs if text(run).startswith("without skill run #1"))
    kinds = re.findall(r'<span class="kind">(.*?)</span>', with_run)
    assert kinds == [
        "user, turn 1 of 2",
        "assistant",
        "tool call Bash",
        "tool result",
        "skill text added by Claude Code",
        "assistant",
        "result (success)",
        "user, turn 2 of 2",
        "assistant",
        "result (success)",
    ]
    turns = re.findall(r'<li class="user">.*?<pre>(.*?)</pre>', with_run)
    assert turns == ["Error spike in checkout. Investigate.", "Now check the latency too."]
    # A command is shown as written, not as a JSON string with its quotes escaped.
    assert "command: lgtm loki query &#x27;count_over_time({app=&quot;checkout&quot;}" in with_run
    assert text(re.search(r"<summary>(.*?)</summary>", with_run).group(1)) == (
        "with skill run #1 score 1.00, passes"
    )
    assert '<span class="chip good">score 1.00, passes</span>' in with_run
    # A baseline run that does not pass is no bad news: its label is plain.
    assert text(re.search(r"<summary>(.*?)</summary>", without_run).group(1)) == (
        "without skill run #1 score 0.00, vetoed, does not pass"
    )
    assert '<span class="chip plain">score 0.00, vetoed, does not pass</span>' in without_run
    checks = re.search(r'<table class="checks">(.*?)</table>', without_run).group(1)
    assert text(checks) == "check what decided it failed notes written veto no NOTES.md"
    assert '<li class="error"><span class="kind">veto</span><pre>check notes written failed' in (
        without_run
    )


def pressure_runs(**baseline):
    item = pressure_scenario("aggregate-first", "steers", 1, 1, 1, (1.0, 0.3, 1.0))
    item["scenario"] = {
        "prompt": "How do I find the error spike?",
        "prompt_suffix": "Do not call any tools.",
        "turns": [],
        "expected": {
            "required_patterns": ["count_over_time"],
            "anti_patterns": ["raw logs"],
            "expected_patterns": ["grep"],
            "baseline_red": baseline.pop("rule", "criteria"),
        },
    }
    item["threshold"] = 0.8
    item["steers_at_or_above"] = 0.7
    item["runs"] = [
        {"arm": "with_skill", "rep": 1, "passed": True, "output": "count_over_time first."},
        {"arm": "without_skill", "rep": 1, "output": "grep the logs.", **baseline},
    ]
    return pressure_document(item)


def test_a_red_baseline_is_the_outcome_wanted(tmp_path):
    page = render_html([Document("p.json", pressure_runs(passed=False, red=True))], cwd=tmp_path)
    summaries = re.findall(r"<summary>(.*?)</summary>", page)
    assert [text(s) for s in summaries[-2:]] == [
        "with skill run #1 passed",
        "without skill run #1 RED (as wanted)",
    ]
    assert '<span class="chip good">RED (as wanted)</span>' in summaries[-1]
    assert "failed" not in text(summaries[-1])
    assert '<span class="chip good">RED 100% (as wanted)</span>' in page  # the arm's rate
    # The prompt as sent (with its suffix), then the answer.
    baseline = page.split('<details class="run">')[-1]
    assert re.findall(r'<span class="kind">(.*?)</span><pre>(.*?)</pre>', baseline, re.S) == [
        ("user", "How do I find the error spike?\n\nDo not call any tools."),
        ("assistant", "grep the logs."),
    ]
    rows = dict(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section(page, "expect")))
    assert text(rows["a baseline run is RED when"]) == (
        "it misses a required pattern or matches an anti-pattern"
    )
    assert text(rows["pass rate needed"]) == (
        "80% of the with-skill runs; steers once the rate's interval lies at or above 70%"
    )
    assert text(section(page, "ask")) == (
        "What the user says prompt How do I find the error spike? "
        "sent with, after a blank line: Do not call any tools."
    )


def test_a_baseline_that_passes_is_a_warning_and_older_files_are_read_by_their_rule(tmp_path):
    page = render_html([Document("p.json", pressure_runs(passed=True, red=False))], cwd=tmp_path)
    assert '<span class="chip warn">not RED: passes without the skill</span>' in page
    # Files of older versions have no `red`: the scenario's rule decides, here by matching
    # every expected pattern, which this baseline answer did.
    older = pressure_runs(passed=True, expected_matched=True, rule="expected_patterns")
    page = render_html([Document("p.json", older)], cwd=tmp_path)
    assert text(re.findall(r"<summary>(.*?)</summary>", page)[-1]) == (
        "without skill run #1 RED (as wanted)"
    )


def test_a_results_file_of_an_older_version_still_reads(tmp_path):
    document = scenarios_document(IMPROVED)
    write_transcripts(tmp_path, document)
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    shown = scenario_section(page, "scenarios-0")
    assert text(section(shown, "ask")) == (
        "What the user says not recorded in this results file (written by an older skilltest)"
    )
    assert facts(page)["duration"] == "not recorded"
    # Its transcript holds the user's message: shown as it is, once.
    run = shown.split('<details class="run">')[1]
    assert re.findall(r'<span class="kind">(user[^<]*)</span>', run) == ["user"]


def test_trigger_queries_show_the_message_and_what_is_expected(tmp_path):
    document = triggers_document()
    document["suites"][0]["queries"][0]["query"] = "Error spike in checkout, check Loki"
    document["suites"][0]["queries"][0]["runs"] = [{"rep": 0, "ended": "not-fired"}]
    # With --against REF the skill at REF is a suite of its own, read in each row's `against`.
    previous = json.loads(json.dumps(document["suites"][0]))
    document["suites"].append({**previous, "variant": "previous"})
    page = render_html([Document("t.json", document)], cwd=tmp_path)
    assert len(verdict_rows(page)) == 2
    shown = scenario_section(page, "triggers-0")
    assert text(section(shown, "ask")) == (
        "What the user says prompt Error spike in checkout, check Loki"
    )
    assert text(section(shown, "expect")) == "What is expected expected the skill fires"
    run = shown.split('<details class="run">')[1]
    assert '<span class="chip bad">not-fired</span>' in run
    assert re.findall(r'<li class="user">.*?<pre>(.*?)</pre>', run) == [
        "Error spike in checkout, check Loki"
    ]


def test_hostile_text_in_prompts_expectations_and_checks_stays_text(tmp_path):
    document = described(tmp_path)
    item = document["scenarios"][0]
    about = item["scenario"]
    about["prompt"] = about["turns"][0] = about["name"] = INJECTION
    about["expected"]["anti_patterns"] = about["expected"]["vetoes"] = [INJECTION]
    about["checks"][0].update(name=INJECTION, what=INJECTION)
    for run in item["runs"]:
        run["checks"][0].update(name=INJECTION, evidence=INJECTION)
        run["vetoes"] = [INJECTION]
    document["provenance"]["models"] = [INJECTION]
    document["provenance"]["suites"][0]["path"] = INJECTION
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert "<script" not in markup(page).lower() and "<img" not in page.lower()
    assert page.count("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") > 10


def test_a_skill_only_verdict_is_coloured_by_whether_it_passed(tmp_path):
    passing = scenario("solo-pass", "skill-only", True, (0.9, 0.7, 1.0), None, None)
    failing = scenario("solo-fail", "skill-only", False, (0.2, 0.0, 0.5), None, None)
    page = render_html([Document("s.json", scenarios_document(passing, failing))], cwd=tmp_path)
    rows = verdict_rows(page)
    assert '<span class="chip good">skill-only</span>' in rows[0]
    assert '<span class="chip bad">skill-only</span>' in rows[1]
    assert text(cards(page)["scenarios"]).startswith("2 scenarios 1 failing 2 skill-only")


CONTROL = "red\x1b[31m text\x00 nul\x07 bell \u202egnp.exe\x85 next\ud800 half"
"""Text a terminal or a tool writes: a colour escape, a NUL, a bell, a right-to-left override
that makes ``exe.png`` read as ``gnp.exe``, a C1 control, a lone surrogate."""

RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def test_control_characters_show_as_their_codes_and_the_page_is_valid_utf8(tmp_path):
    document = described(tmp_path)
    item = document["scenarios"][0]
    item["scenario"]["prompt"] = item["scenario"]["turns"][0] = CONTROL
    item["scenario"]["checks"][0]["what"] = CONTROL
    for run in item["runs"]:
        run["checks"][0]["evidence"] = CONTROL
        transcript = tmp_path / run["transcript"]
        lines = transcript.read_text().splitlines()
        answer = {"type": "assistant", "message": {"content": [{"type": "text", "text": CONTROL}]}}
        transcript.write_text("\n".join([*lines, json.dumps(answer)]))
    document["provenance"]["models"] = [CONTROL]
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert not RAW.search(page)
    page.encode("utf-8")  # no lone surrogate left to refuse
    shown = "red\\x1b[31m text\\x00 nul\\x07 bell \\u202egnp.exe\\x85 next\\ud800 half"
    # The prompt, the follow-up turn, the check, each run's evidence and answer, the header.
    assert page.count(shown) >= 1 + 1 + 1 + 4 + 4 + 1
    assert text(section(scenario_section(page, "scenarios-0"), "ask")).startswith(
        f"What the user says prompt {shown}"
    )
    # Carriage returns end lines rather than overwrite them.
    item["scenario"]["prompt"] = "progress 10%\rprogress 100%\r\ndone"
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert "progress 10%\nprogress 100%\ndone" in page and "\r" not in page


def hrefs(page: str) -> list[str]:
    return [unescape(target) for target in re.findall(r'href="([^"]*)"', page)]


def test_a_run_links_its_transcript_relative_to_the_page(tmp_path):
    document = described(tmp_path)
    page = render_html([Document("s.json", document)], cwd=tmp_path, link_from=tmp_path / "out")
    run = scenario_section(page, "scenarios-0").split('<details class="run">')[1]
    assert re.search(r'<p class="note source">transcript: <a href="([^"]+)">', run).group(1) == (
        "../output/investigate-error-spike/with-skill-0.ndjson"
    )
    # Without a page folder, links are relative to the working folder.
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert "output/investigate-error-spike/with-skill-0.ndjson" in hrefs(page)
    # Every link on the page is a place on it or a relative path.
    assert all(t.startswith("#") or t.startswith(("output/", "../")) for t in hrefs(page))


def test_a_transcript_path_cannot_become_another_kind_of_link(tmp_path):
    document = described(tmp_path)
    runs = document["scenarios"][0]["runs"]
    runs[0]["transcript"] = "javascript:alert(1)"
    runs[1]["transcript"] = 'x" onmouseover="alert(1)'
    runs[2]["transcript"] = "https://evil.example/t.ndjson"
    runs[3]["transcript"] = "bad\x1b[0m.ndjson"
    page = render_html([Document("s.json", document)], cwd=tmp_path, link_from=tmp_path)
    # Each a relative path to a file of that odd name, percent-encoded.
    assert set(hrefs(page)) - {f"#{a}" for a in re.findall(r'id="([^"]+)"', page)} == {
        "javascript%3Aalert%281%29",
        "x%22%20onmouseover%3D%22alert%281%29",
        "https%3A/evil.example/t.ndjson",
    }
    assert "onmouseover=" not in page.replace("onmouseover=&quot;", "")
    # A path with a control character is shown, never linked.
    assert "transcript: bad\\x1b[0m.ndjson</p>" in page


@pytest.mark.parametrize(
    ("target", "allowed"),
    [
        ("https://example.com/run/1", True),
        ("http://example.com", True),
        ("output/run-1.ndjson", True),
        ("../output/run%201.ndjson", True),
        ("javascript:alert(1)", False),
        ("JavaScript:alert(1)", False),
        ("data:text/html,<script>x()</script>", False),
        ("file:///etc/passwd", False),
        ("vbscript:x", False),
        ("//evil.example/x", False),
        ("/etc/passwd", False),
        ("https:evil", False),
        (" javascript:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("java\x00script:alert(1)", False),
        ("", False),
    ],
)
def test_only_relative_paths_and_web_addresses_become_links(target, allowed):
    assert (href(target) is not None) is allowed


def test_indicators_and_checks_of_one_arm_say_so(tmp_path):
    document = described(tmp_path)
    item = document["scenarios"][0]
    item["scenario"]["checks"] += [
        {"kind": "tool_used", "name": "loads the skill", "veto": False, "weight": 1.0,
         "scored": False, "arm": "with", "what": "Skill called at least 1 time(s)"},
        {"kind": "file_matches", "name": "counts", "veto": False, "weight": 2.0, "arm": "both",
         "what": "NOTES.md matches \\d+ errors"},
    ]  # fmt: skip
    for run in item["runs"]:
        with_skill = run["arm"] == "with_skill"
        run["checks"].append(
            {"name": "counts", "kind": "file_matches", "passed": with_skill, "weight": 2.0,
             "evidence": "found 1 match", "veto": False}
        )  # fmt: skip
        if with_skill:
            run["checks"].append(
                {"name": "loads the skill", "kind": "tool_used", "passed": False, "scored": False,
                 "evidence": "Skill called 0x", "veto": False, "weight": 1.0}
            )  # fmt: skip
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    shown = scenario_section(page, "scenarios-0")
    table = re.search(r'<table class="checks">(.*?)</table>', section(shown, "expect")).group(1)
    assert [text(row) for row in re.findall(r"<tr>(.*?)</tr>", table)] == [
        "check with skill without skill",
        "notes written veto NOTES.md exists 2/2 passed 0/2 passed",
        "loads the skill indicator, not scored Skill called at least 1 time(s) 0/2 passed "
        "not run on this arm",
        "counts weight 2 NOTES.md matches \\d+ errors 2/2 passed 0/2 passed",
    ]
    # An indicator that fails costs nothing: a warning, not a failure.
    assert '<span class="chip warn">0/2 passed</span>' in table
    run = shown.split('<details class="run">')[1]
    checks = re.search(r'<table class="checks">(.*?)</table>', run).group(1)
    assert [text(row) for row in re.findall(r"<tr>(.*?)</tr>", checks)][1:] == [
        "passed notes written veto NOTES.md found",
        "passed counts weight 2 found 1 match",
        "failed loads the skill indicator, not scored Skill called 0x",
    ]
    assert '<span class="chip warn">failed</span>' in checks


def test_each_arm_says_how_many_of_its_runs_passed(tmp_path):
    document = described(tmp_path)
    item = document["scenarios"][0]
    item["with_skill"].update(passes=2, pass_rate=1.0, k=2, pass_at_k=1.0, pass_hat_k=1.0)
    item["without_skill"].update(passes=0, pass_rate=0.0)
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    table = re.search(r'<table class="arms">(.*?)</table>', page).group(1)
    assert [text(row) for row in re.findall(r"<tr>(.*?)</tr>", table)] == [
        "arm runs rates",
        "with skill 2 runs passed 2/2 (100%), mean score 1.00, pass@2 100%, pass^2 100%",
        "without skill 2 runs passed 0/2 (0%), mean score 0.00",
    ]


def test_a_skill_only_scenario_says_its_verdict_reads_the_mean_alone(tmp_path):
    document = described(tmp_path)
    item = document["scenarios"][0]
    item["without_skill"] = None
    item["runs"] = [run for run in item["runs"] if run["arm"] == "with_skill"]
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    rows = {
        text(name): text(value)
        for name, value in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", section(page, "expect"))
    }
    assert rows["the verdict reads"] == (
        "the with-skill mean score alone (no baseline ran): its interval must lie at or above 0.60"
    )
    assert "the scenario passes when" not in rows


# --- a large page: its script and policy, bodies made when opened, shared texts -------------


def policy(page: str) -> dict[str, list[str]]:
    """The page's Content-Security-Policy, each directive with its sources."""
    content = unescape(
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)[1]
    )
    return {
        name: sources for name, *sources in (directive.split() for directive in content.split(";"))
    }


def test_the_policy_allows_the_pages_one_script_by_its_hash_and_nothing_else(tmp_path):
    document = described(tmp_path)
    document["scenarios"][0]["scenario"]["prompt"] = INJECTION
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    rules = policy(page)
    assert rules["script-src"] == [f"'sha256-{digest}'"]
    assert rules["default-src"] == ["'none'"] and rules["form-action"] == ["'none'"]
    assert not any("unsafe-inline" in s or "http" in s for s in rules["script-src"])
    # The script cannot end early, and no element carries a handler of its own.
    assert "</script" not in scripts[0].lower() and "<!--" not in scripts[0]
    assert not re.findall(r"<[a-z][^>]*\son\w+\s*=", markup(page), re.I)
    # The policy holds the hash of the script as it is: another script gets another hash.
    assert script_source(SCRIPT.replace("scripted", "changed")) not in page


def noscripts(page: str) -> list[str]:
    """Each body made when opened, checking that none holds another."""
    depth = 0
    for tag in re.findall(r"</?noscript\b", page):
        depth += -1 if tag.startswith("</") else 1
        assert depth in (0, 1), "a body made when opened inside another"
    return re.findall(r'<noscript class="later">(.*?)</noscript>', page, re.S)


def many(count: int) -> dict:
    """A scenario results document of ``count`` scenarios, every other one regressed."""
    return scenarios_document(
        *({**(IMPROVED if i % 2 else REGRESSED), "id": f"case-{i:03d}"} for i in range(count))
    )


def test_a_small_layer_shows_its_scenarios_and_makes_each_run_when_opened(tmp_path):
    document = scenarios_document(IMPROVED, REGRESSED)
    write_transcripts(tmp_path, document)
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert 'id="layer-scenarios">' in page  # not folded
    bodies = noscripts(page)
    assert len(bodies) == 8  # a run's body each, not the scenarios'
    assert all(body.startswith('<div class="run-body">') for body in bodies)
    assert page.count('<details class="about" open>') == 2
    assert '<svg class="forest"' in page.split("<noscript", 1)[0]


def test_a_large_layer_folds_its_scenarios_and_its_plot(tmp_path):
    document = many(FOLD_ABOVE + 1)
    write_transcripts(tmp_path, document)
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert 'id="layer-scenarios" data-fold>' in page
    bodies = noscripts(page)
    # The forest plot, then a body per scenario holding its runs whole.
    assert len(bodies) == 1 + FOLD_ABOVE + 1
    assert (
        bodies[0].startswith('<svg class="forest"') and bodies[0].count("<circle") == FOLD_ABOVE + 1
    )
    assert all(body.startswith('<div class="scenario-grid">') for body in bodies[1:])
    assert all(body.count('<div class="run-body">') == 4 for body in bodies[1:])
    # What stays built: the heading of each scenario (name, verdict, reasons) and its row.
    heads = re.findall(r'<details class="about" open><summary>(.*?)</summary>', page)
    assert len(heads) == FOLD_ABOVE + 1
    assert text(heads[0]) == "lgtm/case-000 regressed"
    assert len(verdict_rows(page)) == FOLD_ABOVE + 1


def test_untrusted_text_cannot_end_a_body_made_when_opened(tmp_path):
    document = many(FOLD_ABOVE + 1)
    write_transcripts(tmp_path, document)
    hostile = "</noscript><script>alert(1)</script></NOSCRIPT >"
    for item in document["scenarios"]:
        item["reasons"] = [hostile]
        item["scenario"] = {**ABOUT, "prompt": hostile, "name": hostile}
        item["runs"][0]["error"] = hostile
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    bodies = noscripts(page)
    assert len(bodies) == FOLD_ABOVE + 2
    assert all("&lt;/noscript&gt;&lt;script&gt;" in body for body in bodies[1:])
    assert page.lower().count("</noscript") == len(bodies)
    assert "<script" not in markup(page).lower()


def test_each_layer_has_a_form_to_filter_by_verdict_and_search_by_id(tmp_path):
    page = render_html(
        [
            Document("s.json", scenarios_document(IMPROVED, REGRESSED, REGRESSED)),
            Document("t.json", triggers_document()),
        ],
        cwd=tmp_path,
    )
    forms = re.findall(
        r'<form class="finder" hidden role="search" aria-label="([^"]*)">(.*?)</form>', page
    )
    assert [label for label, _ in forms] == ["find scenarios", "find queries"]
    scenarios, triggers = (form for _, form in forms)
    assert text(scenarios) == (
        "scenarios whose id contains verdicts shown improved 1 regressed 2 show all"
    )
    assert re.findall(r'name="verdict" value="([^"]+)" checked', scenarios) == [
        "improved",
        "regressed",
    ]
    assert '<input type="search" name="id"' in scenarios
    assert text(triggers).startswith("queries whose id contains verdicts shown")
    # Each row says its verdict, for the form to read.
    rows = verdict_rows(page)
    assert [re.search(r'data-verdict="([^"]+)"', row)[1] for row in rows[:3]] == [
        "improved",
        "regressed",
        "regressed",
    ]


SKILL_BODY = "# The lgtm skill\nAggregate first, then sample. " + "Use count_over_time. " * 150


def test_the_skill_text_every_run_holds_is_written_once(tmp_path):
    document = described(tmp_path)
    for index, run in enumerate(document["scenarios"][0]["runs"]):
        path = tmp_path / run["transcript"]
        lines = path.read_text().splitlines()
        loaded = {
            "type": "user",
            "isSynthetic": True,
            "message": {
                "content": [
                    {
                        "type": "text",
                        "text": f"Base directory for this skill: /tmp/run-{index}/skills/lgtm"
                        f"\n\n{SKILL_BODY}{INJECTION}",
                    }
                ]
            },
        }
        lines[4] = json.dumps(loaded)  # the skill text the transcript holds, as a run loads it
        path.write_text("\n".join(lines))
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    # Each run keeps the folder it loaded the skill from, and links to the one copy.
    entries = re.findall(r'<li class="skill">(.*?)</li>', page)
    assert len(entries) == 4
    assert sorted(text(entry) for entry in entries) == [
        f"skill text added by Claude Code Base directory for this skill: /tmp/run-{i}/skills/lgtm "
        f"{len(SKILL_BODY + INJECTION):,} characters, shown once under texts the runs share"
        for i in range(4)
    ]
    assert all('href="#text-1"' in entry for entry in entries)
    shared = section(page, "panel shared")
    assert shared.count('<details class="shared-text"') == 1
    assert text(re.search(r"<summary>(.*?)</summary>", shared)[1]) == (
        f"skill text added by Claude Code: {len(SKILL_BODY + INJECTION):,} characters, "
        "4 times in the runs"
    )
    assert page.count("Aggregate first, then sample.") == 1
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in shared
    assert "<script" not in markup(page).lower()


def test_a_body_made_when_opened_cannot_hold_another():
    with pytest.raises(ValueError, match="cannot hold another one"):
        later(later("<p>run</p>"))


def test_a_long_prompt_is_shown_in_full_once_and_begun_in_each_run(tmp_path):
    document = pressure_runs(passed=False, red=True)
    item = document["scenarios"][0]
    item["scenario"]["prompt"] = "Find the spike. " + "Here is the whole incident log. " * 40
    item["runs"] *= 3
    page = render_html([Document("p.json", document)], cwd=tmp_path)
    whole = item["scenario"]["prompt"]
    assert page.count(whole) == 1
    assert text(section(page, "ask")).startswith(f"What the user says prompt {whole.strip()}")
    placed = re.findall(r'<li class="user"><span class="kind">user</span><pre>(.*?)</pre>', page)
    assert placed == [f"{whole[:300]}… (in full under what the user says)"] * 6


def test_the_first_run_is_number_1_in_every_layer(tmp_path):
    # Pressure results count repetitions from 1, scenario and trigger results from 0: the page
    # numbers them alike.
    pressure = pressure_runs(passed=False, red=True)
    scenarios = scenarios_document(IMPROVED)
    triggers = triggers_document()
    triggers["suites"][0]["queries"][0]["runs"] = [{"rep": 0, "ended": "fired"}]
    for name, document in (("p.json", pressure), ("s.json", scenarios), ("t.json", triggers)):
        page = render_html([Document(name, document)], cwd=tmp_path)
        firsts = sorted(
            re.search(r"run #(\d+)", text(summary)).group(1)
            for summary in re.findall(r"<summary>(.*?)</summary>", page)
            if "run #" in text(summary)
        )
        assert firsts[0] == "1", name
        assert "run #0" not in text(page), name


def test_the_trigger_page_has_its_own_columns_and_how_to_read_it(tmp_path):
    page = render_html([Document("t.json", triggers_document())], cwd=tmp_path)
    table = page.split('<table class="verdicts">', 1)[1].split("</table>", 1)[0]
    heads = re.findall(r"<th>(.*?)</th>", table)
    assert heads == [
        "query",
        "verdict",
        "expected",
        "fired",
        "firing rate [interval]",
        "threshold",
        "K",
        "reasons",
    ]
    cells = [
        [text(cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in verdict_rows(page)
    ]
    assert [row[:7] for row in cells] == [
        ["lgtm/loki-error-spike", "pass", "fire", "6/6", "100% [54%–100%]", "50%", "6"],
        [
            "lgtm/capital-of-france",
            "false-trigger",
            "no fire",
            "6/6",
            "100% [54%–100%]",
            "50%",
            "6",
        ],
    ]
    assert "without skill" not in table and "delta" not in table and "pass^k" not in table
    howto = text(section(page, "panel howto"))
    assert howto.startswith(
        "How to read this Triggers: each query runs K times with the skill installed beside "
        "the suite's other skills, and no run without it"
    )
    assert "Lift (delta)" not in howto and "pass^k is the chance" not in howto
    assert "false-trigger a should-not query's firing rate interval" in howto
    # Beside another layer, each keeps its own reading.
    pressure = pressure_document(pressure_scenario("aggregate", "steers", 3, 3, 3, (1.0,) * 3))
    both = render_html(
        [Document("p.json", pressure), Document("t.json", triggers_document())], cwd=tmp_path
    )
    howto = text(section(both, "panel howto"))
    assert "Lift (delta)" in howto and "Triggers: each query runs K times" in howto
