"""The HTML report: a row and a section per scenario, the plots, the run timelines, escaping."""

from __future__ import annotations

import json
import re

from skilltest.report.html import render_html
from skilltest.report.markdown import Document
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


def verdict_rows(page: str) -> list[str]:
    table = page.split('<table class="verdicts">', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr class="(?:passed|failed)">.*?</tr>', table)


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
    assert '<td class="verdict">improved</td>' in scenario_rows[0]
    assert scenario_rows[1].startswith('<tr class="failed">')
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
    assert ">tool_selection</text>" in bars and ">1.00</text>" in bars and ">n/a</text>" in bars


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
    assert run.startswith("<summary>with skill run #0 (score 0.75)</summary>")
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
    assert "<summary>with skill run #1 (passed)</summary>" in page
    assert "Use rate() first." in page and "matched: rate\\(" in page
    assert "<summary>without skill run #1 (error)</summary>" in page
    assert "HTTP 529: overloaded" in page


def test_untrusted_text_is_escaped_everywhere(tmp_path):
    document = scenarios_document(REGRESSED)
    write_transcripts(tmp_path, document)
    document["scenarios"][0]["skill"] = '"><script>x()</script>'
    page = render_html([Document("s.json", document)], cwd=tmp_path)
    assert "<script" not in page.lower()
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
        {"rep": 1, "ended": "fired", "reason": "Skill lgtm called", "transcript": None},
    ]
    page = render_html([Document("t.json", document)], cwd=tmp_path)
    assert "<summary>run #1 (fired)</summary>" in page
    assert '<p class="note">Skill lgtm called</p>' in page
    assert 'class="error"' not in page
