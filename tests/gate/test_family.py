"""The gate blocks on a regression only when it holds suite-wide (Holm, 5% family-wise)."""

from __future__ import annotations

from pathlib import Path

from skilltest.scenarios.outcome import Arm, RunRecord
from skilltest.scenarios.report import scenario_dict
from skilltest.scenarios.verdict import Thresholds, judge
from skilltest.stats.exact import difference_p_value
from tests.gate.test_gate import gate
from tests.report.documents import scenarios_document, write_results

THRESHOLDS = Thresholds(min_score=0.5)


def records(sid: str, arm: Arm, scores: list[float]) -> list[RunRecord]:
    return [
        RunRecord(
            scenario_id=sid,
            skill="lgtm",
            arm=arm,
            rep=rep,
            score=score,
            components={"required_tools": score},
            tool_calls=3,
        )
        for rep, score in enumerate(scores, start=1)
    ]


def scenario(sid: str, now: list[float], before: list[float]) -> dict:
    """A scenario judged by the layer's own function: with-skill and without-skill alike
    (``now`` both), the previous revision at ``before`` (``--against HEAD~1``)."""
    runs = (
        records(sid, Arm.WITH_SKILL, now)
        + records(sid, Arm.WITHOUT_SKILL, now)
        + records(sid, Arm.PREVIOUS, before)
    )
    verdict = judge(
        sid,
        "lgtm",
        runs,
        comparison=True,
        thresholds=THRESHOLDS,
        revisions=(("previous", "HEAD~1"),),
    )
    return scenario_dict(verdict)


HALF = [1.0] * 5 + [0.0] * 5
ALWAYS = [1.0] * 10


def test_the_regression_is_credible_on_its_own():
    # 5/10 against 10/10: the claim "dropped by more than 0.05" has p = 1.2% (at most 2.5%
    # for a regressed verdict); one scenario of three compared needs 5% / 6 = 0.83%.
    assert 0.0083 < difference_p_value(10, 10, 5, 10, 0.05) < 0.025
    dropped = scenario("dropped", HALF, ALWAYS)
    assert dropped["against"]["verdict"] == "regressed"


def test_a_regression_alone_blocks(tmp_path: Path, capsys):
    results = write_results(
        tmp_path / "r.json", scenarios_document(scenario("dropped", HALF, ALWAYS))
    )
    code, out, _ = gate(capsys, results)
    assert code == 1, out
    assert "BLOCK  regressions" in out
    assert "lgtm/dropped (scenarios): regressed against HEAD~1" in out


def test_a_regression_that_does_not_hold_suite_wide_is_listed_not_blocked(tmp_path: Path, capsys):
    document = scenarios_document(
        scenario("dropped", HALF, ALWAYS),
        scenario("steady", HALF, HALF),
        scenario("also-steady", ALWAYS, ALWAYS),
    )
    results = write_results(tmp_path / "r.json", document)
    code, out, _ = gate(capsys, results)
    assert "PASS   regressions" in out, out
    assert (
        "regressed in this scenario (p = 0.0116) but does not hold suite-wide (Holm, 5% "
        "family-wise over 3 compared scenarios): not blocking; more runs would tell "
        "(--per-scenario blocks on it)"
    ) in out
    code, out, _ = gate(capsys, results, "--per-scenario")
    assert "BLOCK  regressions" in out, out
    assert code == 1


def test_reports_say_which_decisions_hold_suite_wide(tmp_path: Path, capsys):
    from skilltest.cli import main

    document = scenarios_document(
        scenario("dropped", HALF, ALWAYS),
        scenario("steady", HALF, HALF),
        scenario("also-steady", ALWAYS, ALWAYS),
    )
    results = write_results(tmp_path / "r.json", document)
    line = (
        "against HEAD~1: 0 of 1 regressed hold suite-wide (Holm, 5% family-wise) over 3 scenarios"
    )
    assert main(["report", str(results), "--markdown", str(tmp_path / "r.md")]) in (0, 1)
    assert line in (tmp_path / "r.md").read_text().splitlines()
    assert main(["report", str(results), "--html", str(tmp_path / "r.html")]) in (0, 1)
    assert "0 of 1 regressed hold suite-wide" in (tmp_path / "r.html").read_text()
