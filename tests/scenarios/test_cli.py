"""``skilltest scenarios`` and ``skilltest score`` as a user runs them (fake claude binary)."""

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results

SUITE = """\
skill: demo
repetitions: 2
scenarios:
  - id: uses-lgtm
    prompt: echo
    expected: {required_patterns: ["lgtm loki"], anti_patterns: ["rm -rf"]}
  - id: wants-read
    prompt: echo
    expected: {required_tools: [Read]}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    (tmp_path / "tests" / "scenarios").mkdir(parents=True)
    (tmp_path / "tests" / "scenarios" / "demo.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-only-not-a-key")
    return tmp_path


def test_a_suite_run_prints_the_table_and_writes_results_and_junit(project, fake_claude, capsys):
    code = main(
        [
            "scenarios",
            "--claude",
            str(fake_claude),
            "-j",
            "2",
            "--results",
            "results.json",
            "--junit",
            "junit.xml",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1  # wants-read fails: the agent never reads
    assert "claude 2.1.328, claude backend (real model), 2 scenarios, -j 2" in out
    row = next(line for line in out.splitlines() if line.startswith("demo/uses-lgtm"))
    # The fake CLI does the same in both arms: no effect, which 2 runs per arm cannot call
    # neutral (both arms pass every run: a pass delta of 0.00 with a wide exact interval).
    assert row.split()[1:6] == ["inconclusive", "2/2", "|", "2/2", "+0.00"]
    assert "INCONCLUSIVE" in row
    failing = next(line for line in out.splitlines() if line.startswith("demo/wants-read"))
    # A with-skill mean below min_score fails whatever more runs would show.
    assert "FAIL" in failing and "with-skill mean 0.00 is below 0.60" in failing
    assert "2 scenarios: 2 inconclusive; 0 passed" in out
    assert "1 inconclusive: the intervals do not decide yet" not in out
    assert "2 inconclusive: the intervals do not decide yet" in out
    assert "required_tools 0/1 (missing 'Read')" in out

    results = read_results(project / "results.json", "scenarios")
    assert (results["layer"], results["claude_version"], results["complete"]) == (
        "scenarios",
        "2.1.328",
        True,
    )
    first = results["scenarios"][0]
    assert (first["id"], first["verdict"], first["passed"], first["delta"]) == (
        "uses-lgtm",
        "inconclusive",
        False,
        0.0,
    )
    # Both arms pass every run: ties inform, so enough such runs show the arms within the
    # neutral band (75 per arm; the projection looks at 20, 30, 45, 67, then 100).
    assert (first["result"], first["runs_to_decide"]) == ("inconclusive", 100)
    # What the suite asked, for reports: the prompt, the turns, the rubric and the bars.
    assert first["scenario"] == {
        "name": None,
        "prompt": "echo",
        "turns": [],
        "expected": {
            "required_tools": [],
            "required_patterns": ["lgtm loki"],
            "text_patterns": [],
            "anti_patterns": ["rm -rf"],
            "vetoes": [],
            "tool_ordering": [],
            "recommended_tools": [],
            "pattern_scope": "tools",
            "expect_no_action": False,
            "require_success": False,
        },
        "checks": [],
        "world": None,
        "min_score": 0.6,
        "min_delta": -0.05,
        "expected_skills": [],
        "require_skills_fired": True,
        "scoring": "skilltest",
        "scoring_means": "empty sections left out, the others' weights renormalised",
    }
    assert first["with_skill"]["scores"] == [1.0, 1.0]
    run = first["runs"][0]
    assert run["components"] == {
        "required_tools": None,
        "required_patterns": 1.0,
        "anti_patterns": 1.0,
        "tool_ordering": None,
        "recommended_tools": None,
        "checks": None,
    }
    assert run["transcript"].endswith("tests/scenarios/output/demo/uses-lgtm/with-skill-0.ndjson")
    assert Path(run["transcript"]).is_file()
    assert "sk-test-only-not-a-key" not in (project / "results.json").read_text()
    assert "sk-test-only-not-a-key" not in Path(run["transcript"]).read_text()

    junit = ET.parse(project / "junit.xml").getroot()
    cases = {case.get("name"): case for case in junit.iter("testcase")}
    assert cases["uses-lgtm"].find("failure") is not None  # inconclusive fails by default
    assert cases["wants-read"].find("failure") is not None
    assert cases["wants-read"].get("classname") == "scenarios.demo"


def test_exit_0_when_every_scenario_passes(project, fake_claude, capsys):
    suite = project / "tests" / "scenarios" / "demo.yaml"
    code = main(
        [
            "scenarios",
            str(suite),
            "--claude",
            str(fake_claude),
            "-k",
            "1",
            "--min-score",
            "0",
            "--allow-inconclusive",
        ]
    )
    assert code == 0


def test_schema_error_exits_2_without_a_traceback(project, fake_claude, capsys):
    bad = project / "bad.yaml"
    bad.write_text(
        "skill: demo\nscenarios:\n  - {id: a, prompt: p, expected: {required_tool: [X]}}\n"
    )
    code = main(["scenarios", str(bad), "--claude", str(fake_claude)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"skilltest: error: {bad}#/scenarios/0/expected: Additional properties" in err
    assert "Traceback" not in err


def test_missing_claude_exits_2_with_the_install_command(project, capsys):
    code = main(["scenarios", "--claude", str(project / "no-claude")])
    err = capsys.readouterr().err
    assert code == 2
    assert "skilltest setup" in err


def test_unknown_version_warns_and_is_recorded(project, fake_claude, capsys, monkeypatch):
    other = fake_claude.with_name("claude-next")
    other.write_text(fake_claude.read_text().replace("exec", "FAKE_CLAUDE_VERSION=2.2.0 exec"))
    other.chmod(0o755)
    main(["scenarios", "--claude", str(other), "-k", "1", "--results", "r.json"])
    err = capsys.readouterr().err
    assert "warning: claude at" in err and "is version 2.2.0, not one of 2.1.328" in err
    results = json.loads((project / "r.json").read_text())
    assert (results["claude_version"], results["known_claude_version"]) == ("2.2.0", False)


def test_backend_claude_without_credentials_is_bad_input(project, fake_claude, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code = main(["scenarios", "--backend", "claude", "--claude", str(fake_claude)])
    assert code == 2
    assert "--backend claude needs ANTHROPIC_API_KEY" in capsys.readouterr().err


def test_no_credentials_means_the_emulator_and_a_model_script(
    project, fake_claude, capsys, monkeypatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    code = main(["scenarios", "--claude", str(fake_claude)])
    err = capsys.readouterr().err
    assert code == 2
    assert "the emulator backend needs a model script and this suite names none" in err


def test_score_an_existing_transcript(project, fake_claude, capsys):
    main(["scenarios", "--claude", str(fake_claude), "-k", "1"])
    capsys.readouterr()
    kept = project / "tests/scenarios/output/demo/uses-lgtm/without-skill-0.ndjson"
    suite = project / "tests/scenarios/demo.yaml"
    assert main(["score", str(kept), "--scenario", str(suite), "--id", "uses-lgtm"]) == 0
    assert capsys.readouterr().out.startswith("demo/uses-lgtm: score 1.00: required_patterns 1/1")
    assert main(["score", str(kept), "--scenario", str(suite), "--id", "wants-read", "--json"]) == 1
    card = json.loads(capsys.readouterr().out)
    assert (card["scenario"], card["score"], card["components"]["tool_ordering"]) == (
        "wants-read",
        0.0,
        None,
    )
    assert card["components"]["required_tools"]["missing"] == ["Read"]
    assert main(["score", str(kept), "--scenario", str(suite), "--id", "nope"]) == 2
    assert "no scenario with id 'nope'" in capsys.readouterr().err


HANGING_SUITE = """\
skill: demo
repetitions: 1
scenarios:
  - {id: quick, prompt: echo, expected: {required_patterns: ["lgtm"]}}
  - {id: slow, prompt: hang, config: {timeout_ms: 120000}, expected: {required_patterns: ["x"]}}
"""


@pytest.mark.parametrize(
    ("sig", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)],
    ids=["ctrl-c", "sigterm", "sighup"],
)
def test_stopping_keeps_finished_scenarios_kills_the_children_and_removes_sandboxes(
    project, fake_claude, tmp_path, sig, code
):
    suite = project / "tests" / "scenarios" / "demo.yaml"
    suite.write_text(HANGING_SUITE)
    results = project / "results.json"
    temp = tmp_path / "temp"  # where the run sandboxes go
    temp.mkdir()
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-test-only-not-a-key", "TMPDIR": str(temp)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skilltest",
            "scenarios",
            "--claude",
            str(fake_claude),
            "-j",
            "4",
            "--allow-inconclusive",
            "--results",
            str(results),
        ],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120  # a hang bound only
    # The file exists from the start (an empty, incomplete document); wait for a scenario, and
    # for the hanging CLI to have started its own child (the fake writes its pid in its cwd).
    pid_files: list[Path] = []
    while time.monotonic() < deadline:
        pid_files = list(temp.glob("skilltest-run-*/work/child.pid"))
        if (
            pid_files
            and pid_files[0].read_text()
            and results.exists()
            and read_results(results, "scenarios")["scenarios"]
        ):
            break
        time.sleep(0.1)
    assert pid_files, "the hanging run never started"
    child = int(pid_files[0].read_text())
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    assert process.returncode == code, err
    data = read_results(results, "scenarios")
    assert (data["complete"], data["interrupted"]) == (False, True)
    assert [s["id"] for s in data["scenarios"]] == ["quick"]
    assert "interrupted; 1 of 2 scenario(s) finished" in err
    assert "demo/quick" in out
    assert "Traceback" not in err
    # The CLI's own child (started in the CLI's process group) is gone, and so is its sandbox.
    assert not _alive(child)
    assert list(temp.glob("skilltest-run-*")) == []


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a parent to reap it does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def test_files_that_name_no_skill_keep_their_scenarios_apart_by_file(project, fake_claude, capsys):
    """Public suites name no skill (each scenario lists the skills it expects) and reuse ids
    from file to file: each scenario is shown and kept under its file's name."""
    folder = project / "tests" / "scenarios"
    (folder / "demo.yaml").unlink()
    for name in ("logs", "traces"):
        (folder / f"{name}.yaml").write_text(
            "repetitions: 1\nscenarios:\n"
            "  - {id: smoke, prompt: echo, expected_skills: [demo],"
            ' expected: {required_patterns: ["lgtm loki"]}}\n'
        )
    assert main(["validate", str(folder)]) == 0
    capsys.readouterr()
    main(["scenarios", "--claude", str(fake_claude), "--results", "results.json"])
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines() if "/smoke " in line] == [
        "logs/smoke",
        "traces/smoke",
    ]
    results = read_results(project / "results.json", "scenarios")
    assert [(s["skill"], s["id"]) for s in results["scenarios"]] == [
        ("logs", "smoke"),
        ("traces", "smoke"),
    ]
    assert [s["expected_skills"] for s in results["scenarios"]] == [["demo"], ["demo"]]
    kept = sorted(p.relative_to(folder / "output").parts[:2] for p in folder.glob("output/*/*"))
    assert kept == [("logs", "smoke"), ("traces", "smoke")]
