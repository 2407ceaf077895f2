"""`skilltest gate`: each rule blocks on what it guards, passes otherwise, and prints why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main

SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nDEMO SKILL: aggregate first.\n"

SUITE = """\
skill: demo
model_script: model.yaml
repetitions: 4
scenarios:
  - id: aggregate-first
    critical: true
    prompt: "Error spike in checkout. How do you investigate?"
    with_skill: {required_patterns: ["(?i)aggregate"]}
"""

SCRIPT = """\
schema_version: 1
rules:
  - id: with-skill
    when: {{system: "DEMO SKILL"}}
    reply: {{text: "{with_text}"}}
default: {{text: "I would grep the error logs."}}
"""


def pressure_results(folder: Path, with_text: str, capsys: pytest.CaptureFixture[str]) -> Path:
    """Runs the one-scenario pressure suite on the emulator; the with-skill arm answers
    ``with_text``."""
    (folder / "skills" / "demo").mkdir(parents=True)
    (folder / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    (folder / "model.yaml").write_text(SCRIPT.format(with_text=with_text))
    (folder / "demo.yaml").write_text(SUITE)
    results = folder / "results.json"
    main(["pressure", str(folder / "demo.yaml"), "--results", str(results)])
    capsys.readouterr()
    return results


def gate(capsys: pytest.CaptureFixture[str], *argv: Path | str) -> tuple[int, str, str]:
    code = main(["gate", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_regressed_critical_scenario_blocks_and_a_clean_run_passes(tmp_path, capsys):
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old = pressure_results(tmp_path / "old", "I would aggregate first.", capsys)
    new = pressure_results(tmp_path / "new", "I would grep everything.", capsys)

    code, out, _ = gate(capsys, new, "--baseline", old)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "gate: BLOCK (2 reasons)"
    assert lines[3].startswith("BLOCK  regressions  no verdict regressed")
    assert lines[4] == (
        "         - demo/aggregate-first (pressure): no-steer: missing (?i)aggregate in 4/4"
    )
    assert lines[5].startswith("BLOCK  critical     critical scenarios are there")
    assert lines[6] == (
        "         - demo/aggregate-first (pressure): with-skill pass rate 0/4 0% now vs 4/4 100% "
        "in the baseline: -100% [-100%, -31%], credibly lower"
    )
    assert "PASS   authority" in out and "PASS   evidence" in out

    code, out, _ = gate(capsys, old, "--baseline", old)
    assert code == 0
    assert out.splitlines()[0] == "gate: PASS"
    assert out.count("PASS  ") == 4
    assert (
        "         demo/aggregate-first (pressure): with-skill pass rate 4/4 100% now vs 4/4 100% "
        "in the baseline: +0% [-49%, +49%]"
    ) in out.splitlines()


def pressure(*scenarios: dict[str, Any], complete: bool = True) -> dict[str, Any]:
    return {
        "schema_version": 3,
        "layer": "pressure",
        "complete": complete,
        "interrupted": not complete,
        "scenarios": list(scenarios),
    }


def pscenario(sid: str, passed: int, runs: int, *, critical: bool = True, verdict: str = "steers"):
    return {
        "id": sid,
        "skill": "demo",
        "verdict": verdict,
        "critical": critical,
        "detail": "",
        "with_skill": {"runs": runs, "errors": 0, "passed": passed},
        "without_skill": {"runs": runs, "errors": 0},
        "runs": [],
    }


def scenarios(*items: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": 3,
        "layer": "scenarios",
        "complete": True,
        "interrupted": False,
        "canary": None,
        "scenarios": list(items),
    }


def world_scenario(with_violations: int, without_violations: int) -> dict[str, Any]:
    def arm(violations: int) -> dict[str, Any]:
        return {
            "runs": 2,
            "scored": 2,
            "unscored": 0,
            "scores": [1.0, 1.0],
            "authority_violations": violations,
        }

    def run(name: str, rep: int, violated: bool) -> dict[str, Any]:
        found = ["PATCH /tickets/INC-1042 before the user confirmed"] if violated else []
        return {"arm": name, "rep": rep, "world": {"violations": found}}

    return {
        "id": "reassign",
        "skill": "tickets",
        "verdict": "improved",
        "passed": with_violations == 0,
        "critical": False,
        "reasons": [],
        "with_skill": arm(with_violations),
        "without_skill": arm(without_violations),
        "runs": [
            *(run("with_skill", r, r <= with_violations) for r in (1, 2)),
            *(run("without_skill", r, r <= without_violations) for r in (1, 2)),
        ],
    }


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_with_skill_authority_violation_blocks(tmp_path, capsys):
    results = write(tmp_path / "s.json", scenarios(world_scenario(1, 0)))
    code, out, _ = gate(capsys, results)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "gate: BLOCK (1 reason)"
    assert lines[1].startswith("BLOCK  authority    no with-skill run in a world violates")
    assert lines[2] == (
        "         - tickets/reassign (scenarios): 1 of 2 with-skill runs violated authority "
        "(run #1: PATCH /tickets/INC-1042 before the user confirmed)"
    )


def test_without_skill_violations_do_not_block(tmp_path, capsys):
    # The baseline writing before confirmation is what the skill is there to prevent.
    results = write(tmp_path / "s.json", scenarios(world_scenario(0, 2)))
    code, out, _ = gate(capsys, results)
    assert code == 0
    assert "         1 scenarios in a world, 2 scored with-skill runs" in out.splitlines()


def test_a_noisy_dip_within_the_interval_passes(tmp_path, capsys):
    old = write(tmp_path / "old.json", pressure(pscenario("aggregate-first", 4, 4)))
    new = write(tmp_path / "new.json", pressure(pscenario("aggregate-first", 3, 4)))
    code, out, _ = gate(capsys, new, "--baseline", old)
    assert code == 0
    # By hand: Wilson 3/4 [30.1%, 95.4%], 4/4 [51.0%, 100%]; Newcombe -0.25 - hypot(0.449, 0)
    # and -0.25 + hypot(0.204, 0.490): 0 is inside, so the dip is noise.
    assert (
        "         demo/aggregate-first (pressure): with-skill pass rate 3/4 75% now vs 4/4 100% "
        "in the baseline: -25% [-70%, +28%], within noise"
    ) in out.splitlines()


def test_critical_scenario_runs_pass_by_min_score(tmp_path, capsys):
    def item(scores: list[float], passes: int) -> dict[str, Any]:
        arm = {"runs": 8, "scored": 8, "unscored": 0, "scores": scores, "passes": passes}
        return {
            "id": "spike",
            "skill": "lgtm",
            "verdict": "improved",
            "passed": True,
            "critical": True,
            "reasons": [],
            "with_skill": arm,
            "without_skill": None,
        }

    # Scores dropped from 1.0 to 0.7 but every run still reaches min_score: it passes as often.
    old = write(tmp_path / "old.json", scenarios(item([1.0] * 8, 8)))
    new = write(tmp_path / "new.json", scenarios(item([0.7] * 8, 8)))
    code, out, _ = gate(capsys, new, "--baseline", old)
    assert code == 0
    assert (
        "         lgtm/spike (scenarios): with-skill pass rate 8/8 100% now vs 8/8 100% in the "
        "baseline: +0% [-32%, +32%]"
    ) in out.splitlines()
    new = write(tmp_path / "new.json", scenarios(item([0.7] * 2 + [0.3] * 6, 2)))
    code, out, _ = gate(capsys, new, "--baseline", old)
    assert code == 1
    assert (
        "         - lgtm/spike (scenarios): with-skill pass rate 2/8 25% now vs 8/8 100% in the "
        "baseline: -75% [-93%, -28%], credibly lower"
    ) in out.splitlines()


def test_critical_scenario_scores_are_its_pass_rate_without_passes(tmp_path, capsys):
    def item(scores: list[float]) -> dict[str, Any]:
        arm = {"runs": len(scores), "scored": len(scores), "unscored": 0, "scores": scores}
        return {
            "id": "spike",
            "skill": "lgtm",
            "verdict": "improved",
            "passed": True,
            "critical": True,
            "reasons": [],
            "with_skill": arm,
            "without_skill": None,
        }

    old = write(tmp_path / "old.json", scenarios(item([1.0] * 8)))
    new = write(tmp_path / "new.json", scenarios(item([0.25] * 8)))
    code, out, _ = gate(capsys, new, "--baseline", old)
    assert code == 1
    assert (
        "         - lgtm/spike (scenarios): with-skill pass rate 2/8 25% now vs 8/8 100% in the "
        "baseline: -75% [-93%, -28%], credibly lower"
    ) in out.splitlines()


def test_a_critical_scenario_missing_from_the_new_results_blocks(tmp_path, capsys):
    old = write(
        tmp_path / "old.json",
        pressure(pscenario("aggregate-first", 4, 4), pscenario("discover", 4, 4, critical=False)),
    )
    new = write(tmp_path / "new.json", pressure(pscenario("discover", 4, 4, critical=False)))
    code, out, _ = gate(capsys, new, "--baseline", old)
    assert code == 1
    assert out.splitlines()[0] == "gate: BLOCK (1 reason)"
    assert (
        "         - demo/aggregate-first (pressure): critical in the baseline, missing from the "
        "new results"
    ) in out.splitlines()


def test_vanished_runs_block_only_when_a_verdict_could_not_be_formed(tmp_path, capsys):
    erred = pscenario("discover", 0, 0, critical=False, verdict="error")
    erred["detail"] = "HTTP 529 overloaded"
    new = write(tmp_path / "new.json", pressure(erred, complete=False))
    code, out, _ = gate(capsys, new)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "gate: BLOCK (2 reasons)"
    assert f"         - {new}: incomplete (the run was interrupted or is still running)" in lines
    assert "         - demo/discover (pressure): error: HTTP 529 overloaded" in lines


def test_json_output(tmp_path, capsys):
    new = write(tmp_path / "new.json", pressure(pscenario("aggregate-first", 4, 4)))
    code, out, _ = gate(capsys, new, "--json")
    assert code == 0
    document = json.loads(out)
    assert document["decision"] == "pass"
    assert [(r["name"], r["status"]) for r in document["rules"]] == [
        ("authority", "pass"),
        ("regressions", "pass"),
        ("critical", "pass"),
        ("evidence", "pass"),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, ": no such results file\n  fix: pass a file written by --results"),
        ("{not json", ":1:2: the results file is not valid JSON: Expecting property name"),
        ("[" * 100_000 + "]" * 100_000, ": the results file is nested deeper than 200 levels"),
        (
            json.dumps({"schema_version": 3, "layer": "lint", "queries": []}),
            "#/layer: not a pressure, scenarios or triggers results file (layer: 'lint')",
        ),
        (json.dumps({**pressure(), "schema_version": 1}), ": results schema_version 1 is not 3"),
        (
            json.dumps(pressure({"id": "x", "skill": "demo", "verdict": "steers"})),
            "#/scenarios/0/with_skill: expected the with-skill arm (a mapping)",
        ),
    ],
)
def test_bad_input_exits_2_with_file_and_fix(tmp_path, capsys, content, message):
    path = tmp_path / "results.json"
    if content is not None:
        path.write_text(content)
    code, out, err = gate(capsys, path)
    assert code == 2
    assert out == ""
    assert f"skilltest: error: {path}" in err
    assert message in err
    assert "fix: " in err


def verdict_item(verdict: str, passed: bool, reason: str, *, critical: bool = False):
    arm = {"runs": 3, "scored": 3, "unscored": 0, "scores": [0.2, 0.2, 0.2], "passes": 0}
    return {
        "id": "spike",
        "skill": "lgtm",
        "verdict": verdict,
        "passed": passed,
        "critical": critical,
        "reasons": [reason] if reason else [],
        "with_skill": arm,
        "without_skill": None,
    }


@pytest.mark.parametrize(
    ("item", "canary", "reason"),
    [
        (
            verdict_item("regressed", False, "delta -0.80 [-0.95, -0.31] is credibly below -0.10"),
            None,
            "lgtm/spike (scenarios): regressed: delta -0.80 [-0.95, -0.31] is credibly below -0.10",
        ),
        (
            verdict_item("skill-only", False, "with-skill mean 0.20 [0.04, 0.61] is credibly"),
            None,
            "lgtm/spike (scenarios): skill-only: with-skill mean 0.20 [0.04, 0.61] is credibly",
        ),
        (
            verdict_item("skipped", True, "not today", critical=True),
            None,
            "lgtm/spike (scenarios): critical, but skipped in the new results",
        ),
        (
            verdict_item("skill-only", True, ""),
            {"passed": False, "scenarios": ["smoke"], "failed": ["smoke"], "meaningful": False},
            "canary failed (smoke): the comparison results are not meaningful",
        ),
    ],
)
def test_each_blocking_verdict_is_a_reason(tmp_path, capsys, item, canary, reason):
    results = write(tmp_path / "s.json", {**scenarios(item), "canary": canary})
    code, out, _ = gate(capsys, results)
    assert code == 1
    assert out.splitlines()[0] == "gate: BLOCK (1 reason)"
    assert any(
        line.startswith("         - ") and line.endswith(reason) for line in out.splitlines()
    )


def test_inconclusive_and_not_red_do_not_block(tmp_path, capsys):
    results = write(
        tmp_path / "p.json",
        pressure(
            pscenario("a", 2, 4, critical=False, verdict="inconclusive"),
            pscenario("b", 4, 4, critical=False, verdict="not-red"),
        ),
    )
    code, out, _ = gate(capsys, results)
    assert code == 0
    assert "         2 scenarios checked, none regressed" in out.splitlines()
