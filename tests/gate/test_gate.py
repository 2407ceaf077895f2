"""`skilltest gate`: each rule blocks on what it guards, passes otherwise, and prints why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import gate_cmd, main
from skilltest.gate import ResultsFile, load_results
from tests.projects import demo_script, write_demo_project
from tests.report.documents import (
    pressure_document,
    provenance,
    scenarios_document,
    write_results,
)

SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nDEMO SKILL: aggregate first.\n"

SUITE = """\
skill: demo
model_script: model.yaml
repetitions: 11
scenarios:
  - id: aggregate-first
    critical: true
    prompt: "Error spike in checkout. How do you investigate?"
    with_skill: {required_patterns: ["(?i)aggregate"]}
"""


def pressure_results(folder: Path, with_text: str, capsys: pytest.CaptureFixture[str]) -> Path:
    """Runs the one-scenario pressure suite on the emulator; the with-skill arm answers
    ``with_text``."""
    suite = write_demo_project(folder, SUITE, demo_script(with_text), skill=SKILL)
    results = folder / "results.json"
    main(["pressure", str(suite), "--results", str(results)])
    capsys.readouterr()
    return results


@pytest.fixture
def as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results documents written by hand for one rule hold no runs their figures follow from,
    and name suite and skill files that are not on disk: the gate takes their figures as written
    and compares no files. What the ``fresh`` and ``consistent`` rules check is tested on files
    real runs wrote (tests/gate/test_trust.py)."""

    def written(path: Path, **_: Any) -> ResultsFile:
        return load_results(path, claims=False, stale_check=False)

    monkeypatch.setattr(gate_cmd, "load_results", written)


def gate(capsys: pytest.CaptureFixture[str], *argv: Path | str) -> tuple[int, str, str]:
    code = main(["gate", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def blocked(capsys: pytest.CaptureFixture[str], *argv: Path | str, reasons: int) -> list[str]:
    """Runs the gate, which must block (exit 1) for ``reasons`` reasons; its output lines."""
    code, out, _ = gate(capsys, *argv)
    assert code == 1, out
    lines = out.splitlines()
    assert lines[0] == f"gate: BLOCK ({reasons} reason{'s' if reasons > 1 else ''})"
    return lines


def test_a_regressed_critical_scenario_blocks_and_a_clean_run_passes(tmp_path, capsys):
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old = pressure_results(tmp_path / "old", "I would aggregate first.", capsys)
    new = pressure_results(tmp_path / "new", "I would grep everything.", capsys)

    # Emulator runs: the gate gates on them only when told to, and says what they are.
    code, out, _ = gate(capsys, new, "--baseline", old, "--allow-offline")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        "gate: BLOCK (2 reasons) on offline results (--allow-offline): they come from a scripted "
        "stand-in and say nothing about a real model"
    )
    assert lines[1].startswith(
        f"results: {new} (pressure): backend emulator (offline: a scripted stand-in), model "
        "claude-sonnet-5-5 (as the stand-in named itself), skilltest 0.1.0, date 20"
    )
    assert lines[2].startswith(f"baseline: {old} (pressure): backend emulator")
    assert lines[3].startswith("PASS   offline      the results come from a real model")
    assert lines[4] == (
        f"         allowed (--allow-offline): {new}: produced by the emulator, a scripted "
        "stand-in: its numbers say nothing about a real model"
    )
    assert lines[8] == (
        "BLOCK  failing      no scenario fails (passed: false), unless allowed with "
        "--allow-failing ID"
    )
    assert lines[9] == (
        "         - demo/aggregate-first (pressure): no-steer: missing (?i)aggregate in 11/11"
    )
    assert lines[12].startswith("BLOCK  critical     critical scenarios are there, decided")
    assert lines[13] == (
        "         - demo/aggregate-first (pressure): with-skill pass rate 0/11 0% now vs 11/11 100% "
        "in the baseline: -100% [-100%, -69%], credibly lower"
    )
    assert any(line.startswith("PASS   authority") for line in lines)
    assert any(line.startswith("PASS   evidence") for line in lines)

    code, out, _ = gate(capsys, old, "--baseline", new, "--allow-offline")
    assert code == 0
    assert out.splitlines()[0].startswith("gate: PASS on offline results (--allow-offline)")
    assert out.count("\nPASS  ") == 8
    assert (
        "         demo/aggregate-first (pressure): with-skill pass rate 11/11 100% now vs 0/11 0% "
        "in the baseline: +100% [+69%, +100%]"
    ) in out.splitlines()


def live(backend: str = "anthropic") -> dict[str, Any]:
    """A live run's provenance, as results files record it."""
    return provenance("pressure", backend)


pressure = pressure_document


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


def scored_arm(scores: list[float], passes: int | None = None) -> dict[str, Any]:
    """A with-skill arm of scenario results; ``passes`` counts the runs that reached min_score."""
    arm = {"runs": len(scores), "scored": len(scores), "unscored": 0, "scores": scores}
    return arm if passes is None else {**arm, "passes": passes}


def spike(verdict: str, passed: bool, with_skill: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The scenario lgtm/spike, skill-only, not critical unless ``fields`` say so."""
    return {
        "id": "spike",
        "skill": "lgtm",
        "verdict": verdict,
        "passed": passed,
        "critical": False,
        "reasons": [],
        "with_skill": with_skill,
        "without_skill": None,
        **fields,
    }


def scenarios(*items: dict[str, Any]) -> dict[str, Any]:
    """A complete scenarios results file of a live run of the claude CLI."""
    return {**scenarios_document(*items), "canary": None}


write = write_results


def world_scenario(with_violations: int, without_violations: int) -> dict[str, Any]:
    def arm(violations: int) -> dict[str, Any]:
        return {**scored_arm([1.0, 1.0]), "authority_violations": violations}

    def run(name: str, rep: int, violated: bool) -> dict[str, Any]:
        found = ["PATCH /tickets/INC-1042 before the user confirmed"] if violated else []
        return {"arm": name, "rep": rep, "world": {"violations": found}}

    return {
        "id": "reassign",
        "skill": "tickets",
        "verdict": "improved",
        "passed": True,  # what the authority rule reads is the runs' violations
        "critical": False,
        "reasons": [],
        "with_skill": arm(with_violations),
        "without_skill": arm(without_violations),
        "runs": [
            *(run("with_skill", r, r < with_violations) for r in (0, 1)),
            *(run("without_skill", r, r < without_violations) for r in (0, 1)),
        ],
    }


def critical_spike(scores: list[float], passes: int | None = None) -> dict[str, Any]:
    return scenarios_document(spike("improved", True, scored_arm(scores, passes), critical=True))


def test_a_with_skill_authority_violation_blocks(tmp_path, capsys, as_written):
    results = write(tmp_path / "s.json", scenarios(world_scenario(1, 0)))
    code, out, _ = gate(capsys, results)
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "gate: BLOCK (1 reason)"
    assert lines[1] == (
        f"results: {results} (scenarios): backend claude, model claude-sonnet-4-5-20250929, "
        "claude CLI 2.1.328, skilltest 0.1.0, date 2026-12-01T09:00:00Z"
    )
    assert lines[4].startswith("BLOCK  authority    no with-skill run in a world violates")
    assert lines[5] == (
        "         - tickets/reassign (scenarios): 1 of 2 with-skill runs violated authority "
        "(run #1: PATCH /tickets/INC-1042 before the user confirmed)"
    )


def test_without_skill_violations_do_not_block(tmp_path, capsys, as_written):
    # The baseline writing before confirmation is what the skill is there to prevent.
    results = write_results(tmp_path / "s.json", scenarios_document(world_scenario(0, 2)))
    code, out, _ = gate(capsys, results)
    assert code == 0
    assert "         1 scenarios in a world, 2 scored with-skill runs" in out.splitlines()


@pytest.mark.parametrize(
    ("old", "new", "exit_code", "line"),
    [
        pytest.param(
            pressure_document(pscenario("aggregate-first", 4, 4)),
            pressure_document(pscenario("aggregate-first", 3, 4)),
            0,
            # The exact interval of 3/4 against 4/4 (checked against enumerating every table in
            # tests/test_stats_exact.py): 0 is inside, so the dip is noise.
            "         demo/aggregate-first (pressure): with-skill pass rate 3/4 75% now vs 4/4 100% "
            "in the baseline: -25% [-81%, +39%], within noise",
            id="a-noisy-dip-within-the-interval-passes",
        ),
        pytest.param(
            critical_spike([1.0] * 8, passes=8),
            critical_spike([0.7] * 8, passes=8),
            0,
            # Scores dropped from 1.0 to 0.7 but every run still reaches min_score: it passes as
            # often.
            "         lgtm/spike (scenarios): with-skill pass rate 8/8 100% now vs 8/8 100% in the "
            "baseline: +0% [-37%, +37%]",
            id="runs-pass-by-min-score-not-by-their-scores",
        ),
        pytest.param(
            critical_spike([1.0] * 8, passes=8),
            critical_spike([0.7] * 2 + [0.3] * 6, passes=2),
            1,
            "         - lgtm/spike (scenarios): with-skill pass rate 2/8 25% now vs 8/8 100% in the "
            "baseline: -75% [-97%, -29%], credibly lower",
            id="fewer-runs-reaching-min-score-block",
        ),
        pytest.param(
            critical_spike([1.0] * 8),
            critical_spike([0.25] * 8),
            1,
            "         - lgtm/spike (scenarios): with-skill pass rate 2/8 25% now vs 8/8 100% in the "
            "baseline: -75% [-93%, -28%], credibly lower",
            id="without-passes-the-scores-are-the-pass-rate",
        ),
    ],
)
def test_a_critical_scenario_against_the_baseline(
    tmp_path, capsys, as_written, old, new, exit_code, line
):
    baseline = write_results(tmp_path / "old.json", old)
    results = write_results(tmp_path / "new.json", new)
    code, out, _ = gate(capsys, results, "--baseline", baseline)
    assert code == exit_code
    assert line in out.splitlines()


def test_a_critical_scenario_missing_from_the_new_results_blocks(tmp_path, capsys, as_written):
    old = write_results(
        tmp_path / "old.json",
        pressure_document(
            pscenario("aggregate-first", 4, 4), pscenario("discover", 4, 4, critical=False)
        ),
    )
    new = write_results(
        tmp_path / "new.json", pressure_document(pscenario("discover", 4, 4, critical=False))
    )
    assert (
        "         - demo/aggregate-first (pressure): critical in the baseline, missing from the "
        "new results"
    ) in blocked(capsys, new, "--baseline", old, reasons=1)


def test_vanished_runs_block_only_when_a_verdict_could_not_be_formed(tmp_path, capsys, as_written):
    erred = pscenario("discover", 0, 0, critical=False, verdict="error")
    erred["detail"] = "HTTP 529 overloaded"
    new = write_results(tmp_path / "new.json", pressure_document(erred, complete=False))
    lines = blocked(capsys, new, reasons=2)
    assert f"         - {new}: incomplete (the run was interrupted or is still running)" in lines
    assert "         - demo/discover (pressure): error: HTTP 529 overloaded" in lines


def test_json_output(tmp_path, capsys, as_written):
    new = write_results(
        tmp_path / "new.json", pressure_document(pscenario("aggregate-first", 4, 4))
    )
    code, out, _ = gate(capsys, new, "--json")
    assert code == 0
    document = json.loads(out)
    assert document["decision"] == "pass"
    assert [(r["name"], r["status"]) for r in document["rules"]] == [
        ("offline", "pass"),
        ("authority", "pass"),
        ("failing", "pass"),
        ("regressions", "pass"),
        ("critical", "pass"),
        ("evidence", "pass"),
        ("fresh", "pass"),
        ("consistent", "pass"),
    ]
    assert document["offline_allowed"] is False
    [read] = document["files"]
    assert (read["role"], read["path"], read["layer"]) == ("results", str(new), "pressure")
    assert read["provenance"]["backend"] == "anthropic"
    assert read["provenance"]["origin"] == "live"


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
            json.dumps(pressure_document({"id": "x", "skill": "demo", "verdict": "steers"})),
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
    reasons = [reason] if reason else []
    arm = scored_arm([0.2, 0.2, 0.2], passes=0)
    return spike(verdict, passed, arm, critical=critical, reasons=reasons)


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
def test_each_blocking_verdict_is_a_reason(tmp_path, capsys, as_written, item, canary, reason):
    results = write_results(tmp_path / "s.json", {**scenarios_document(item), "canary": canary})
    lines = blocked(capsys, results, "--allow-undecided", reasons=1)
    assert any(line.startswith("         - ") and line.endswith(reason) for line in lines)


def test_inconclusive_and_not_red_do_not_block(tmp_path, capsys, as_written):
    results = write_results(
        tmp_path / "p.json",
        pressure_document(
            pscenario("a", 2, 4, critical=False, verdict="inconclusive"),
            pscenario("b", 4, 4, critical=False, verdict="not-red"),
        ),
    )
    code, out, _ = gate(capsys, results)
    assert code == 0
    assert "         2 scenarios checked, 0 failing" in out.splitlines()
