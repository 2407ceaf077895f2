"""Revision deltas (``--against REF``) in the HTML report and in JUnit XML."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from skilltest.pressure.report import junit_cases as pressure_junit_cases
from skilltest.pressure.suite import PressureScenario
from skilltest.pressure.verdict import ArmStats, ScenarioResult
from skilltest.report.html import render_html
from skilltest.report.junit import render_junit
from skilltest.report.markdown import Document
from skilltest.revision import Against
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.report import junit_cases as scenario_junit_cases
from skilltest.scenarios.verdict import judge
from skilltest.stats import EMPTY, Interval, wilson
from skilltest.triggers.report import junit_cases as trigger_junit_cases
from skilltest.triggers.suite import TriggerQuery
from skilltest.triggers.verdict import QueryResult, SuiteResult, TriggerRun
from tests.report.documents import pressure_document, pressure_scenario
from tests.report.test_markdown_against import DOCUMENT, against
from tests.scenarios.test_report import record


def verdict_rows(page: str) -> list[str]:
    table = page.split('<table class="verdicts">', 1)[1].split("</table>", 1)[0]
    return re.findall(r"<tr.*?</tr>", table)


def cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)]


def test_the_verdict_table_has_a_vs_ref_column_and_the_counts_a_line_per_revision(tmp_path):
    page = render_html([Document("-", DOCUMENT)], cwd=tmp_path)
    header, *rows = verdict_rows(page)
    assert cells(header)[5] == "vs HEAD~1"
    assert [cells(row)[0] for row in rows] == ["lgtm/aggregate", "lgtm/steady", "lgtm/extract"]
    assert [cells(row)[5] for row in rows] == [
        "improved +100% [+39%, +100%]",
        "inconclusive +0% [-43%, +43%]",
        "regressed -100% [-100%, -39%]",
    ]
    assert (
        '<p class="counts against">'
        "against HEAD~1: 1 improved, 0 neutral, 1 regressed, 1 inconclusive</p>"
    ) in page


def test_without_against_the_table_has_no_vs_column(tmp_path):
    document = pressure_document(
        pressure_scenario("aggregate", "steers", 5, 5, 5, (1.0, 0.39, 1.0))
    )
    page = render_html([Document("-", document)], cwd=tmp_path)
    assert "vs " not in cells(verdict_rows(page)[0])[5]
    assert "counts against" not in page


def test_shards_against_different_revisions_name_the_revision_in_each_cell(tmp_path):
    other = pressure_document(
        {
            **against(
                pressure_scenario("steady", "steers", 5, 5, 5, (1.0, 0.39, 1.0)),
                5,
                "neutral",
                (0.0, -0.05, 0.05),
            ),
            "id": "other",
        }
    )
    other["scenarios"][0]["against"]["ref"] = "v1.0"
    page = render_html([Document("a.json", DOCUMENT), Document("b.json", other)], cwd=tmp_path)
    header, *rows = verdict_rows(page)
    assert cells(header)[5] == "vs previous revision"
    assert cells(rows[0])[5] == "HEAD~1: improved +100% [+39%, +100%]"
    assert cells(rows[-1])[5] == "v1.0: neutral +0% [-5%, +5%]"
    assert "against v1.0: 0 improved, 1 neutral, 0 regressed</p>" in page


def test_an_errored_previous_revision_shows_its_verdict_without_a_delta(tmp_path):
    document = pressure_document(
        against(
            pressure_scenario("aggregate", "steers", 5, 5, 5, (1.0, 0.39, 1.0)), 0, "error", None
        )
    )
    page = render_html([Document("-", document)], cwd=Path(tmp_path))
    assert cells(verdict_rows(page)[1])[5] == "error"


def properties(xml: str) -> dict[str, str]:
    case = ET.fromstring(xml).find("testsuite/testcase")
    assert case is not None
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def system_out(xml: str) -> str:
    out = ET.fromstring(xml).find("testsuite/testcase/system-out")
    assert out is not None
    return out.text or ""


def test_junit_of_a_scenario_run_against_a_revision_carries_the_against_verdict():
    verdict = judge(
        "spike",
        "lgtm",
        [record(Arm.WITH_SKILL, rep, 1.0) for rep in range(3)]
        + [record(Arm.WITHOUT_SKILL, rep, 0.0) for rep in range(3)],
        comparison=True,
    )
    regressed = dataclasses.replace(
        verdict, against=Against("HEAD~1", Interval(-0.5, -0.9, -0.1), "regressed")
    )
    xml = render_junit("s", scenario_junit_cases([regressed]))
    assert properties(xml) == {"against HEAD~1": "regressed -0.50 [-0.90, -0.10]"}
    assert system_out(xml).splitlines()[-1] == "against HEAD~1: regressed -0.50 [-0.90, -0.10]"
    # Without --against: no properties element at all.
    plain = render_junit("s", scenario_junit_cases([verdict]))
    assert ET.fromstring(plain).find("testsuite/testcase/properties") is None


def test_junit_of_a_pressure_run_against_a_revision_carries_the_against_verdict():
    scenario = PressureScenario(
        id="aggregate",
        name=None,
        prompt="How?",
        required_patterns=(),
        anti_patterns=(),
        expected_patterns=(),
        repetitions=5,
        model=None,
        threshold=0.8,
        max_tokens=100,
        temperature=None,
        location="s.yaml#/scenarios/0",
    )
    result = ScenarioResult(
        scenario=scenario,
        skill="lgtm",
        verdict="steers",
        with_skill=ArmStats(runs=5, errors=0, passed=5, rate=wilson(5, 5), expected=EMPTY),
        without_skill=None,
        runs=(),
        detail="",
        against=Against("HEAD~1", Interval(1.0, 0.3855, 1.0), "improved"),
    )
    xml = render_junit("p", pressure_junit_cases([result], strict=False))
    assert properties(xml) == {"against HEAD~1": "improved +100% [+39%, +100%]"}
    assert system_out(xml).splitlines() == [
        "steers",
        "against HEAD~1: improved +100% [+39%, +100%]",
    ]


def test_junit_of_a_trigger_run_against_a_revision_carries_the_against_verdict():
    query = QueryResult(
        query=TriggerQuery("direct", "Error spike", True, "t.yaml#/queries/0"),
        runs=(TriggerRun(rep=0, ended="fired"),),
        threshold=0.5,
        against=Against("HEAD~1", Interval(1.0, 0.2, 1.0), "improved"),
    )
    suite = SuiteResult(
        suite="t.yaml", skill="alpha", variant="current", description=None, queries=(query,)
    )
    xml = render_junit("t", trigger_junit_cases([suite]))
    assert properties(xml) == {"against HEAD~1": "improved +100% [+20%, +100%]"}
    assert system_out(xml).splitlines()[-1] == "against HEAD~1: improved +100% [+20%, +100%]"
