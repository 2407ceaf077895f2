"""The public harnesses' suites run unchanged: copies in both formats under tests/public-formats/.

``lgtm-pressure.yaml`` is a pressure suite as the LGTM skill repository writes it;
``honeycomb-scenarios.yaml`` a scenario suite as Honeycomb's agent-skill plugin writes it (no
top-level skill, a canary, a core subset, the plugin's MCP tools among the allowed tools). Neither
holds a skilltest-only key: the emulator's answers come with ``--script``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from skilltest.scenarios.suite import load_scenario_suite
from tests.layers import run_layer

from .conftest import REPO_ROOT

FORMATS = REPO_ROOT / "tests" / "public-formats"
LGTM_PRESSURE = FORMATS / "lgtm-pressure.yaml"
HONEYCOMB = FORMATS / "honeycomb-scenarios.yaml"
SCRIPTS = FORMATS / "model-scripts"
SEED_KEYS = (
    'prompt_suffix: "Describe your reasoning and what you would do. Do not call any tools."\n'
    "baseline_red: expected_patterns\n"
)


def honeycomb_options(claude_bin: Path, *more: str) -> list[str | Path]:
    """The scenario options of a Honeycomb run through the real CLI on its model script."""
    return ["--script", SCRIPTS / "honeycomb-scenarios.yaml", "--claude", claude_bin, *more]


def verdicts(results: Path, layer: str) -> dict[str, dict]:
    return {s["id"]: s for s in read_results(results, layer)["scenarios"]}


def test_every_public_format_file_is_valid(monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    assert main(["validate", "tests/public-formats"]) == 0
    out = capsys.readouterr().out
    assert "ok   tests/public-formats/lgtm-pressure.yaml (pressure)" in out
    assert "ok   tests/public-formats/honeycomb-scenarios.yaml (scenarios)" in out
    assert "4 file(s) valid" in out


def test_the_lgtm_pressure_suite_runs_unchanged(tmp_path, capsys):
    results = tmp_path / "results.json"
    script = SCRIPTS / "lgtm-pressure.yaml"
    code = main(
        ["pressure", str(LGTM_PRESSURE), "--script", str(script), "--results", str(results)]
    )
    out = capsys.readouterr().out
    assert code == 0
    by_id = verdicts(results, "pressure")
    assert {i: s["verdict"] for i, s in by_id.items()} == {
        "aggregation-before-raw-fetch": "steers",
        "discovery-before-querying": "steers",
        "jq-extraction": "steers",
        # The baseline names p95 beside the average: it passes the with-skill criteria.
        "percentiles-for-latency": "not-red",
    }
    assert {s["skill"] for s in by_id.values()} == {"lgtm"}  # skill_file, from the repository root
    assert "lgtm/percentiles-for-latency: baseline run 1 passes without the skill" in out


def test_the_lgtm_runner_s_meaning_is_two_keys_away(tmp_path, capsys):
    """With the LGTM runner's suffix and its RED (the baseline matched expected_patterns), the
    latency baseline that averages is RED, and the scenario steers."""
    suite = tmp_path / "lgtm-pressure.yaml"
    shutil.copytree(
        REPO_ROOT / "skills" / "lgtm", tmp_path / "lgtm"
    )  # a suite reads its own folder
    text = LGTM_PRESSURE.read_text().replace(
        "skill_file: skills/lgtm/SKILL.md", "skill_file: lgtm/SKILL.md"
    )
    suite.write_text(SEED_KEYS + text)
    results = tmp_path / "results.json"
    script = SCRIPTS / "lgtm-pressure.yaml"
    code = main(["pressure", str(suite), "--script", str(script), "--results", str(results)])
    assert code == 0
    by_id = verdicts(results, "pressure")
    assert {s["verdict"] for s in by_id.values()} == {"steers"}
    latency = by_id["percentiles-for-latency"]["without_skill"]
    assert latency["red"] == latency["runs"]
    assert latency["expected_rate"] == 1.0


def test_the_honeycomb_suite_loads_unchanged():
    suite = load_scenario_suite(HONEYCOMB)
    by_id = {s.id: s for s in suite.scenarios}
    assert list(by_id) == [
        "canary-skill-loads",
        "error-rate-breakdown",
        "slow-endpoint-heatmap",
        "slo-burn-triage",
    ]
    # No top-level skill: each scenario tests (and installs) the skills it expects.
    assert [s.name for s in by_id["error-rate-breakdown"].skills] == [
        "honeycomb-investigate",
        "honeycomb-query",
    ]
    assert by_id["error-rate-breakdown"].skills[1].skill_file == (
        FORMATS / "skills" / "honeycomb-query" / "SKILL.md"
    )
    assert [s.name for s in by_id["slow-endpoint-heatmap"].skills] == ["honeycomb-query"]
    flags = {i: (s.canary, s.core, s.comparison) for i, s in by_id.items()}
    assert flags == {
        "canary-skill-loads": (True, False, False),
        "error-rate-breakdown": (False, True, True),
        "slow-endpoint-heatmap": (False, True, True),
        "slo-burn-triage": (False, False, True),
    }
    assert "mcp__honeycomb__run_query" in by_id["canary-skill-loads"].config.allowed_tools
    assert by_id["canary-skill-loads"].config.max_turns == 6
    # The plugin's MCP tool, with no server: the mocks/ folder beside the suite stands in for it.
    [honeycomb] = by_id["canary-skill-loads"].mocks
    assert (honeycomb.name, [t.name for t in honeycomb.tools]) == ("honeycomb", ["run_query"])
    assert by_id["error-rate-breakdown"].expected_skills == (
        "honeycomb-investigate",
        "honeycomb-query",
    )


@pytest.mark.cli
def test_the_honeycomb_suite_runs_unchanged_through_the_cli(claude_bin, tmp_path, capsys):
    """Its core subset and canary, through the real claude CLI against the emulator."""
    options = honeycomb_options(claude_bin, "--comparison-only", "-k", "3", "-j", "2")
    code = run_layer("scenarios", HONEYCOMB, tmp_path, *options)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "canary: 1 of 1 passed; the comparison results are meaningful" in out
    document = read_results(tmp_path / "results.json", "scenarios")
    assert document["canary"] == {
        "passed": True,
        "scenarios": ["canary-skill-loads"],
        "failed": [],
        "meaningful": True,
    }
    by_id = {s["id"]: s for s in document["scenarios"]}
    assert list(by_id) == ["canary-skill-loads", "error-rate-breakdown", "slow-endpoint-heatmap"]
    assert [run["arm"] for run in by_id["canary-skill-loads"]["runs"]] == ["with_skill"] * 3
    breakdown = by_id["error-rate-breakdown"]
    assert (breakdown["verdict"], breakdown["passed"]) == ("improved", True)
    with_run = next(r for r in breakdown["runs"] if r["arm"] == "with_skill")
    without_run = next(r for r in breakdown["runs"] if r["arm"] == "without_skill")
    # Both expected skills were installed, listed, and loaded in the with-skill arm only.
    assert {"honeycomb-investigate", "honeycomb-query"} <= set(with_run["skills_available"])
    assert with_run["skills_invoked"] == ["honeycomb-investigate", "honeycomb-query"]
    assert not {"honeycomb-investigate", "honeycomb-query"} & set(without_run["skills_available"])
    assert by_id["slow-endpoint-heatmap"]["verdict"] == "improved"


# Each run's score as Honeycomb's evaluator (tests/scenarios/evaluator.py of
# github.com/honeycombio/agent-skill) adds it up for the emulator's answers: required tools 0.30,
# required patterns 0.25, anti-patterns 0.20, tool ordering 0.15, recommended tools 0.10, an
# empty section full credit.
HONEYCOMB_SCORES = {
    ("canary-skill-loads", "with_skill"): 1.0,
    ("error-rate-breakdown", "with_skill"): 1.0,
    # --limit 5000 hits the anti-pattern, no pattern matched, no Skill call (recommended):
    # 0.30 (no required tools) + 0.15 (no ordering).
    ("error-rate-breakdown", "without_skill"): 0.45,
    ("slow-endpoint-heatmap", "with_skill"): 1.0,
    # AVG(duration_ms) hits the anti-pattern, neither pattern matched: 0.30 + 0.15 + 0.10.
    ("slow-endpoint-heatmap", "without_skill"): 0.55,
    ("slo-burn-triage", "with_skill"): 1.0,
    # No burn-alerts query, nothing else asked: 0.30 + 0.20 + 0.15 + 0.10, a pass at 0.6.
    ("slo-burn-triage", "without_skill"): 0.75,
}
# The same runs under skilltest's scoring: the empty sections left out, the rest renormalised.
SKILLTEST_SCORES = {
    **{key: 1.0 for key, value in HONEYCOMB_SCORES.items() if value == 1.0},
    ("error-rate-breakdown", "without_skill"): 0.0,
    ("slow-endpoint-heatmap", "without_skill"): 0.0,
    ("slo-burn-triage", "without_skill"): 0.0,
}


def run_scores(results: Path) -> dict[tuple[str, str], float]:
    document = read_results(results, "scenarios")
    scores: dict[tuple[str, str], float] = {}
    for scenario in document["scenarios"]:
        for run in scenario["runs"]:
            scores[(scenario["id"], run["arm"])] = run["score"]
    return scores


@pytest.mark.cli
def test_the_honeycomb_suite_scores_as_its_own_evaluator_and_as_today_when_asked(
    claude_bin, tmp_path, capsys
):
    """The file's shape picks Honeycomb's scoring, announced; `scoring: skilltest` gives today's
    renormalised scores. Every run through the real claude CLI against the emulator."""
    options = honeycomb_options(claude_bin, "-k", "1", "-j", "2", "--allow-inconclusive")
    summary = tmp_path / "summary.md"
    code = run_layer(
        "scenarios", HONEYCOMB, tmp_path / "honeycomb", *options, "--markdown", summary
    )
    out, err = capsys.readouterr()
    assert (
        "scoring: honeycomb (empty sections count as full credit, fixed weights, as honeycomb's "
        "evaluator)\n"
    ) in summary.read_text()
    assert code == 0, out
    assert (
        "honeycomb-scenarios.yaml: scoring: honeycomb (empty sections count as full credit, fixed "
        "weights, as honeycomb's evaluator); chosen from the file's shape (Honeycomb's agent-skill"
        " scenarios): write `scoring: skilltest` in the suite to leave empty sections out instead"
    ) in " ".join(err.split())
    # docs/scenarios.md shows the announcement as printed from the repository's root.
    docs = " ".join((REPO_ROOT / "docs" / "scenarios.md").read_text().split())
    shown = " ".join(err.replace(f"{REPO_ROOT}/", "").split())
    announced = shown[shown.index("tests/public-formats/honeycomb-scenarios.yaml: scoring") :]
    assert announced[: announced.index(" instead") + len(" instead")] in docs
    results = tmp_path / "honeycomb" / "results.json"
    assert run_scores(results) == HONEYCOMB_SCORES
    about = read_results(results, "scenarios")["scenarios"][0]["scenario"]
    assert about["scoring"] == "honeycomb"
    # The gate judges the file again from its runs, as they were scored: it agrees.
    main(["gate", str(results)])
    assert (
        "4 scenarios and 7 runs recomputed from the files: every figure, verdict and origin as "
        "written"
    ) in " ".join(capsys.readouterr().out.split())

    copy = tmp_path / "suite"
    shutil.copytree(FORMATS, copy, ignore=shutil.ignore_patterns("output"))
    suite = copy / "honeycomb-scenarios.yaml"
    suite.write_text("scoring: skilltest\n" + HONEYCOMB.read_text())
    code = run_layer("scenarios", suite, tmp_path / "skilltest", *options)
    out, err = capsys.readouterr()
    assert code == 0, out
    assert "scoring: honeycomb" not in out + err
    results = tmp_path / "skilltest" / "results.json"
    assert run_scores(results) == SKILLTEST_SCORES
    about = read_results(results, "scenarios")["scenarios"][0]["scenario"]
    assert about["scoring"] == "skilltest"


@pytest.mark.cli
def test_a_suite_file_named_with_a_commit_runs_as_it_validates(claude_bin, tmp_path, capsys):
    """`core@9d1d0ce.yml` (a file named after the commit it was taken from) is valid, and its
    runs are kept under the safe name derived from it, `core-9d1d0ce`."""
    copy = tmp_path / "suite"
    shutil.copytree(FORMATS, copy, ignore=shutil.ignore_patterns("output"))
    suite = copy / "core@9d1d0ce.yml"
    (copy / "honeycomb-scenarios.yaml").rename(suite)
    assert main(["validate", str(suite)]) == 0
    assert f"ok   {suite} (scenarios)" in capsys.readouterr().out
    options = honeycomb_options(claude_bin, "-k", "1", "--only", "canary-skill-loads")
    code = run_layer("scenarios", suite, tmp_path, *options)
    out = capsys.readouterr().out
    assert code == 0, out
    [scenario] = read_results(tmp_path / "results.json", "scenarios")["scenarios"]
    assert (scenario["skill"], scenario["verdict"]) == ("core-9d1d0ce", "skill-only")
    assert (tmp_path / "output" / "core-9d1d0ce" / "canary-skill-loads").is_dir()


def plugin_repository(root: Path) -> Path:
    """Honeycomb's layout: the plugin in `honeycomb/`, the suite under `tests/scenarios/`."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    plugin = root / "honeycomb"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text('{"name": "honeycomb"}\n')
    shutil.copytree(FORMATS / "skills", plugin / "skills")
    definitions = root / "tests" / "scenarios" / "definitions"
    definitions.mkdir(parents=True)
    shutil.copytree(FORMATS / "mocks", definitions / "mocks")
    suite = definitions / "core_scenarios.yml"
    shutil.copy(HONEYCOMB, suite)
    return suite


def test_a_suite_that_names_no_skill_tests_the_plugin_it_lives_in(tmp_path):
    suite = plugin_repository(tmp_path / "agent-skill")
    loaded = load_scenario_suite(suite)
    plugin = tmp_path / "agent-skill" / "honeycomb"
    assert loaded.plugin_found == plugin.resolve()
    breakdown = loaded.scenarios[1]
    assert breakdown.plugin is not None and breakdown.plugin.name == "honeycomb"
    assert [s.name for s in breakdown.skills] == ["honeycomb-investigate", "honeycomb-query"]
    # --plugin-dir names another; a suite in no plugin tests the skills beside it, as before.
    assert load_scenario_suite(HONEYCOMB).plugin_found is None


@pytest.mark.cli
def test_the_plugin_found_is_announced_and_loaded_in_the_run(claude_bin, tmp_path, capsys):
    suite = plugin_repository(tmp_path / "agent-skill")
    options = honeycomb_options(claude_bin, "-k", "1", "--only", "canary-skill-loads")
    code = run_layer("scenarios", suite, tmp_path, *options)
    out, err = capsys.readouterr()
    plugin = (tmp_path / "agent-skill" / "honeycomb").resolve()
    assert f"testing the plugin it lives in, {plugin} (--plugin-dir names another)" in " ".join(
        err.split()
    )
    assert code == 0, out
    [scenario] = read_results(tmp_path / "results.json", "scenarios")["scenarios"]
    [run] = scenario["runs"]
    assert "honeycomb:honeycomb-investigate" in run["skills_available"], run["skills_available"]
