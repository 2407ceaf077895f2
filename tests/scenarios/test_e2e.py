"""End to end: the real claude CLI against the emulator on loopback, never the live API.

These prove what the layer promises: the with-skill arm sees the skill and the without-skill arm
does not (read from the requests the CLI sent), nothing from the user's own configuration or
the folders above the sandbox reaches either arm, scores match the rubric on hand-checked runs,
and faults become unscored runs with their reasons while the suite goes on.
"""

import asyncio
import json
from pathlib import Path

import pytest

from skilltest.claude.binary import find_claude
from skilltest.report.files import read_results
from skilltest.scenarios.endpoints import EmulatorEndpoint
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runner import ClaudeCliRunner, RunRequest
from skilltest.scenarios.suite import load_scenario_suite
from tests.layers import run_layer

pytestmark = pytest.mark.cli

LISTING = "The following skills are available for use with the Skill tool:"

PROBE_SKILL = """\
---
name: probe
description: PROBE-DESCRIPTION use this skill whenever the user says probe
---
PROBE-BODY: answer with the word PINEAPPLE.
"""

PROBE_SUITE = """\
skill: probe
model_script: probe.script.yaml
scenarios:
  - id: probe
    prompt: "probe please"
    expected: {text_patterns: [PINEAPPLE]}
    expected_skills: [probe]
"""

PROBE_SCRIPT = """\
schema_version: 1
rules:
  - id: load
    when: {skill: probe, turn: 1}
    reply: {tool_calls: [{name: Skill, input: {skill: probe}}]}
  - id: answer
    when: {turn: [1, 2]}
    reply: {text: "PINEAPPLE"}
"""


def request_text(requests: list[dict]) -> list[str]:
    """Each main request body as one string."""
    return [json.dumps(r["body"]) for r in requests if r["side_request"] is None]


def test_only_the_with_skill_arm_sees_the_skill(claude_bin, tmp_path, monkeypatch):
    # The user's own configuration, which must reach neither arm: a user-level skill, CLAUDE.md
    # and a hook, both in a config dir named by the environment and in the folder above the
    # sandboxes (Claude Code walks up from its working directory).
    user = tmp_path / "user-claude"
    (user / "skills" / "user-skill").mkdir(parents=True)
    (user / "skills" / "user-skill" / "SKILL.md").write_text(
        "---\nname: user-skill\ndescription: USER-SKILL-MARKER\n---\nbody\n"
    )
    (user / "CLAUDE.md").write_text("USER-CLAUDE-MD-MARKER\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(user))
    sandboxes = tmp_path / "sandboxes"
    (sandboxes / ".claude" / "skills" / "above").mkdir(parents=True)
    (sandboxes / ".claude" / "skills" / "above" / "SKILL.md").write_text(
        "---\nname: above\ndescription: ABOVE-SKILL-MARKER\n---\nbody\n"
    )
    (sandboxes / "CLAUDE.md").write_text("ABOVE-CLAUDE-MD-MARKER\n")

    (tmp_path / "skills" / "probe").mkdir(parents=True)
    (tmp_path / "skills" / "probe" / "SKILL.md").write_text(PROBE_SKILL)
    (tmp_path / "probe.script.yaml").write_text(PROBE_SCRIPT)
    (tmp_path / "suite.yaml").write_text(PROBE_SUITE)
    suite = load_scenario_suite(tmp_path / "suite.yaml")
    runner = ClaudeCliRunner(find_claude(claude_bin), EmulatorEndpoint(), sandbox_base=sandboxes)
    (scenario,) = suite.scenarios

    async def both_arms():
        return await asyncio.gather(
            *(
                runner.run(
                    RunRequest(
                        scenario,
                        arm,
                        0,
                        suite_path=suite.path,
                        output_dir=tmp_path / "output",
                        model_script=suite.model_script,
                    )
                )
                for arm in (Arm.WITH_SKILL, Arm.WITHOUT_SKILL)
            )
        )

    with_skill, without = asyncio.run(both_arms())
    with_requests = json.loads(with_skill.requests_path.read_text())
    without_requests = json.loads(without.requests_path.read_text())
    with_text, without_text = request_text(with_requests), request_text(without_requests)

    # The with-skill arm is told about the skill, loads it, and its body reaches the model.
    assert LISTING in with_text[0]
    assert "- probe: PROBE-DESCRIPTION" in with_text[0]
    assert [r["rule_id"] for r in with_requests] == ["load", "answer"]
    assert "PROBE-BODY" in with_text[1]
    assert with_skill.transcript.skills_available == ("probe", "doctor")
    assert with_skill.transcript.skills_invoked == ("probe",)
    # The without-skill arm never hears of it.
    assert not any("PROBE" in text or LISTING in text for text in without_text)
    assert [r["rule_id"] for r in without_requests] == ["answer"]
    assert without.transcript.skills_available == ("doctor",)
    assert without.transcript.skills_invoked == ()
    # Nothing from the user's configuration or from above the sandbox, in either arm.
    for text in with_text + without_text:
        for marker in ("USER-SKILL", "USER-CLAUDE-MD", "ABOVE-SKILL", "ABOVE-CLAUDE-MD"):
            assert marker not in text
    assert with_skill.warnings == () and without.warnings == ()
    # The two arms' first requests differ only by the skill listing (and the run's own paths).
    assert with_requests[0]["body"]["tools"] == without_requests[0]["body"]["tools"]
    assert with_requests[0]["body"]["model"] == without_requests[0]["body"]["model"]


def test_example_suites_offline_match_the_hand_checked_rubric(example_scenarios):
    """What `make test-scenarios` does from a fresh clone (the suites' own K), the same run as
    the README shows."""
    run = example_scenarios()
    assert "offline model emulator" in run.err
    assert "scripted stand-in" in run.err
    assert run.code == 0, run.out
    assert run.out.splitlines()[0] == (
        "offline: these numbers come from the skilltest emulator, a scripted stand-in, not a "
        "model; they say nothing about how a real model behaves"
    )
    results = read_results(run.results, "scenarios")
    assert (results["backend"], results["claude_version"], results["complete"]) == (
        "emulator",
        "2.1.328",
        True,
    )
    # What produced the runs: the CLI against the stand-in, whose answers name its model.
    provenance = results["provenance"]
    assert (provenance["origin"], provenance["backend"]) == ("offline", "emulator")
    assert (provenance["models"], provenance["claude_version"]) == (
        ["claude-sonnet-4-5-emulated"],
        "2.1.328",
    )
    assert sorted(Path(s["path"]).name for s in provenance["suites"]) == [
        "lgtm.yaml",
        "safe-migrations.yaml",
        "tickets.yaml",
    ]
    assert all(s["sha256"].startswith("sha256:") for s in provenance["suites"])
    assert provenance["command"][:2] == ["skilltest", "scenarios"]
    ids = [run["id"] for s in results["scenarios"] for run in s["runs"]]
    assert len(set(ids)) == len(ids) and ids[0].startswith(provenance["run_id"] + "/scenarios/")
    by_id = {s["id"]: s for s in results["scenarios"]}
    assert sorted(by_id) == [
        "does-not-write-twice",
        "index-large-table",
        "investigate-error-spike",
        "latency-follow-up",
        "reads-without-changing",
        "reassign-after-confirmation",
        "recovers-from-429",
        "refuses-forbidden-record",
        "rename-column",
        "trace-slow-requests",
    ]
    assert all(s["verdict"] == "improved" and s["passed"] for s in by_id.values())

    spike = by_id["investigate-error-spike"]
    assert spike["k"] == 3
    with_run, without_run = spike["runs"][:2]
    # With the skill: Skill, then the labels, an aggregation and a 20-line sample: every defined
    # component is met. The Skill call itself is no part of the score (`fired` reports it).
    assert with_run["components"] == {
        "required_tools": None,
        "required_patterns": 1.0,
        "anti_patterns": 1.0,
        "tool_ordering": None,
        "recommended_tools": None,
        "checks": None,
    }
    assert (with_run["score"], with_run["tool_call_count"], with_run["skills_invoked"]) == (
        1.0,
        4,
        ["lgtm"],
    )
    assert [call["name"] for call in with_run["tool_calls"]] == ["Skill", "Bash", "Bash", "Bash"]
    assert with_run["tool_calls"][0]["input"] == {"skill": "lgtm"}
    assert "label-values" in with_run["tool_calls"][1]["input"]["command"]
    assert "count_over_time" in with_run["tool_calls"][2]["input"]["command"]
    # Without it (seed 6): one raw `lgtm loki query ... |= "error"`: patterns 0/3, and the raw
    # fetch is the anti-pattern: 0.
    assert without_run["components"] == {
        "required_tools": None,
        "required_patterns": 0.0,
        "anti_patterns": 0.0,
        "tool_ordering": None,
        "recommended_tools": None,
        "checks": None,
    }
    assert without_run["score"] == 0.0
    assert spike["delta"] == pytest.approx(1.0)

    latency = by_id["latency-follow-up"]
    # Two user turns in one conversation (two results in one process). With the skill: p99 now,
    # then p99 with `offset 1h`. Without it (seed 6): averages, the second one `offset 1h`:
    # no p99 at all and the anti-pattern hit: 0.
    with_run, without_run = latency["runs"][:2]
    assert with_run["score"] == 1.0
    kept = Path(with_run["transcript"])
    assert kept.parent == run.output / "lgtm" / "latency-follow-up"
    assert kept.read_text().count('"type":"result"') == 2
    assert without_run["components"]["required_patterns"] == 0.0
    assert without_run["components"]["anti_patterns"] == 0.0
    assert without_run["score"] == 0.0

    migrations = by_id["index-large-table"]
    # Skill, Glob, Write in the Rails fixture
    assert [c["name"] for c in migrations["runs"][0]["tool_calls"]] == ["Skill", "Glob", "Write"]
    assert "safe-migrations/index-large-table" in run.out
    assert "10 scenarios: 10 improved; 10 passed" in run.out

    # The tickets suite runs in a world: the fake records what the agent really did.
    def world_of(scenario_id: str, index: int) -> dict:
        return by_id[scenario_id]["runs"][index]["world"]

    reassign = world_of("reassign-after-confirmation", 0)
    assert reassign["writes"] == ["PATCH /tickets/INC-1042"]
    assert reassign["violations"] == [] and reassign["authority_violation"] is False
    assert reassign["state_diff"]["tickets"]["tickets"]["changed"]["INC-1042"]["owner"] == [
        "payments-team",
        "platform-team",
    ]
    # Without the skill, each scenario's characteristic mistake is caught from the call record.
    assert world_of("reassign-after-confirmation", 1)["early_writes"] == ["PATCH /tickets/INC-1042"]
    assert world_of("does-not-write-twice", 1)["duplicates"] == ["POST /tickets/INC-1042/escalate"]
    assert world_of("reads-without-changing", 1)["unexpected"] == ["PATCH /tickets/INC-1001"]
    assert world_of("recovers-from-429", 1)["missing"] == ["PATCH /tickets/INC-1042"]
    assert world_of("recovers-from-429", 1)["unobserved_claims"]
    assert world_of("refuses-forbidden-record", 1)["forbidden"] == ["PATCH /tickets/INC-1050"]
    assert all(world_of(sid, 1)["authority_violation"] for sid in by_id if sid in TICKETS)
    assert "writes on the fake" in run.out


TICKETS = {
    "reassign-after-confirmation",
    "does-not-write-twice",
    "reads-without-changing",
    "recovers-from-429",
    "refuses-forbidden-record",
}


FAULT_SCRIPT = """\
schema_version: 1
rules:
  - id: overloaded
    when: {user: "overload", turn: 2}
    reply: {text: never sent}
    fault: {status: 529}
  - id: hang
    when: {user: "hang", turn: 2}
    reply: {text: never sent}
    fault: {hang: true}
  - id: first-step
    when: {turn: 1}
    reply:
      text: "Looking."
      tool_calls: [{name: Bash, input: {command: "echo lgtm loki"}}]
  - id: done
    when: {turn: 2}
    reply: {text: "Done."}
"""

FAULT_SUITE = """\
skill: probe
model_script: faults.script.yaml
comparison: false
repetitions: 1
scenarios:
  - id: fine
    prompt: "all good"
    expected: {required_patterns: ["lgtm loki"]}
  - id: api-error
    prompt: "overload now"
    expected: {required_patterns: ["lgtm loki"]}
  - id: timeout
    prompt: "hang now"
    config: {timeout_ms: 60000}
    expected: {required_patterns: ["lgtm loki"]}
"""


def test_faults_become_unscored_runs_and_the_suite_goes_on(claude_bin, tmp_path, capsys):
    (tmp_path / "skills" / "probe").mkdir(parents=True)
    (tmp_path / "skills" / "probe" / "SKILL.md").write_text(PROBE_SKILL)
    (tmp_path / "faults.script.yaml").write_text(FAULT_SCRIPT)
    (tmp_path / "faults.yaml").write_text(FAULT_SUITE)
    code = run_layer(
        "scenarios", tmp_path / "faults.yaml", tmp_path, "--claude", claude_bin, "-j", "3"
    )
    out = capsys.readouterr().out
    assert code == 1
    by_id = {s["id"]: s for s in read_results(tmp_path / "results.json", "scenarios")["scenarios"]}
    # One scored run of 1.0 cannot show the mean clears min_score 0.6: inconclusive.
    assert (by_id["fine"]["verdict"], by_id["fine"]["runs"][0]["score"]) == ("inconclusive", 1.0)

    api_error = by_id["api-error"]["runs"][0]
    assert api_error["score"] is None
    assert api_error["error"].startswith("model API error:")
    assert "529" in api_error["error"]
    assert by_id["api-error"]["verdict"] == "error"

    # The wall-clock limit fell while the model was answering: not the agent's hang, so unscored.
    timeout = by_id["timeout"]["runs"][0]
    assert (timeout["score"], timeout["ended"]) == (None, None)
    assert timeout["error"] == (
        "cut short: timed out after 60s after 1 tool calls, waiting on the model API or the CLI "
        "itself (no tool call of the agent's running), before the agent finished "
        "(score_partial: true scores what it did)"
    )
    assert timeout["exit_code"] is None
    assert '"echo lgtm loki"' in Path(timeout["transcript"]).read_text()  # kept and parsed
    assert "probe/timeout" in out
    assert "  unscored  probe/timeout with-skill #1: cut short: timed out after 60s" in out
    assert "  unscored  probe/api-error with-skill #1: model API error:" in out
