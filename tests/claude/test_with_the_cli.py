"""The isolation and process rules, proved with the real claude CLI against the emulator.

Each test runs the pinned CLI on loopback: what it refuses, what it prints and what it shows the
model are read from its own output and from the requests the emulator recorded.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from skilltest.claude.binary import find_claude
from skilltest.claude.isolation import (
    create_sandbox,
    init_event,
    init_warnings,
    isolated_env,
    isolation_flags,
)
from skilltest.claude.process import (
    Invocation,
    build_argv,
    run_conversation,
    unrecoverable_api_error,
)
from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.scenarios.endpoints import EmulatorEndpoint
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runner import ClaudeCliRunner, RunOutcome, RunRequest
from skilltest.scenarios.suite import load_scenario_suite
from skilltest.transcript.stream_json import parse_stream_json

pytestmark = pytest.mark.cli


def run_arm(claude: Path, suite_path: Path, arm: Arm) -> RunOutcome:
    """One run of the suite's only scenario through the scenario runner, as `scenarios` runs it."""
    suite = load_scenario_suite(suite_path)
    (scenario,) = suite.scenarios
    runner = ClaudeCliRunner(find_claude(claude), EmulatorEndpoint())
    request = RunRequest(
        scenario,
        arm,
        0,
        suite_path=suite.path,
        output_dir=suite_path.parent / "output",
        model_script=suite.model_script,
    )
    return asyncio.run(runner.run(request))


def write_suite(folder: Path, skill_md: str, script: dict, *, workspace: bool = False) -> Path:
    (folder / "skills" / "probe").mkdir(parents=True)
    (folder / "skills" / "probe" / "SKILL.md").write_text(skill_md)
    (folder / "probe.script.json").write_text(json.dumps({"schema_version": 1, **script}))
    lines = [
        "skill: probe",
        "model_script: probe.script.json",
        "scenarios:",
        "  - id: probe",
        "    prompt: probe please",
        "    expected: {required_tools: [Bash]}",
    ]
    if workspace:
        (folder / "workspace").mkdir()
        (folder / "workspace" / "inside.txt").write_text("INSIDE-THE-SANDBOX\n")
        lines.append("    workspace: workspace")
    (folder / "suite.yaml").write_text("\n".join(lines) + "\n")
    return folder / "suite.yaml"


def results(outcome: RunOutcome) -> list[tuple[str, bool, str]]:
    """Each tool call as (name, refused or failed, result), in order."""
    return [(c.name, c.is_error, c.result or "") for c in outcome.transcript.tool_calls]


# --- reads outside the sandbox ------------------------------------------------------------


def test_the_baseline_cannot_read_the_skill_from_the_checkout_but_reads_its_own_folder(
    claude_bin, tmp_path
):
    source = tmp_path / "skills" / "probe" / "SKILL.md"
    calls = [
        {"name": "Read", "input": {"file_path": str(source)}},
        {"name": "Bash", "input": {"command": f"cat {source}", "description": "skill source"}},
        {"name": "Grep", "input": {"pattern": "PROBE-BODY", "path": str(tmp_path)}},
        {"name": "Bash", "input": {"command": f"ls {source.parent}", "description": "list it"}},
        {"name": "Read", "input": {"file_path": "/etc/hostname"}},
        {"name": "Read", "input": {"file_path": "inside.txt"}},
        {"name": "Bash", "input": {"command": "cat inside.txt", "description": "inside"}},
        {"name": "Grep", "input": {"pattern": "INSIDE-THE"}},
    ]
    script = {
        "rules": [{"id": "probe", "when": {"turn": 1}, "reply": {"tool_calls": calls}}],
        "default": {"text": "done"},
    }
    skill_md = "---\nname: probe\ndescription: d\n---\nPROBE-BODY\n"
    suite = write_suite(tmp_path, skill_md, script, workspace=True)

    outcome = run_arm(claude_bin, suite, Arm.WITHOUT_SKILL)

    assert outcome.transcript.error is None
    seen = results(outcome)
    assert [(name, refused) for name, refused, _ in seen] == [
        ("Read", True),
        ("Bash", True),
        ("Grep", True),
        ("Bash", True),
        ("Read", True),
        ("Read", False),
        ("Bash", False),
        ("Grep", False),
    ]
    assert not any("PROBE-BODY" in result for _, _, result in seen)
    # The suite's folder is denied by name; any other path by the file tools' confinement.
    assert "denied by your permission settings" in seen[0][2]
    assert "has been denied" in seen[1][2]
    assert "blockFileToolReadsOutsideWorkingDirectories" in seen[4][2]
    assert "INSIDE-THE-SANDBOX" in seen[5][2] and "INSIDE-THE-SANDBOX" in seen[6][2]
    assert "inside.txt" in seen[7][2]


# --- what the model is shown --------------------------------------------------------------

LOAD = {
    "rules": [
        {
            "id": "load",
            "when": {"turn": 1},
            "reply": {"tool_calls": [{"name": "Skill", "input": {"skill": "probe"}}]},
        }
    ],
    "default": {"text": "done"},
}


@pytest.mark.parametrize(
    ("skill_md", "listed", "warnings"),
    [
        # No frontmatter: not in the init event's `skills`, but listed to the model by its
        # folder's name and first line, and loaded by the Skill tool.
        ("PROBE-BODY without any frontmatter.\n", True, []),
        # disable-model-invocation: in `skills`, never listed to the model.
        (
            "---\nname: probe\ndescription: d\ndisable-model-invocation: true\n---\nPROBE-BODY\n",
            False,
            [
                "the model was not shown skill 'probe': its SKILL.md sets "
                "disable-model-invocation: true, so only a /probe command in the prompt loads it"
            ],
        ),
    ],
    ids=["no-frontmatter", "model-invocation-disabled"],
)
def test_a_skill_warns_exactly_when_the_model_was_not_shown_it(
    claude_bin, tmp_path, skill_md, listed, warnings
):
    suite = write_suite(tmp_path, skill_md, LOAD)

    outcome = run_arm(claude_bin, suite, Arm.WITH_SKILL)

    assert outcome.requests_path is not None
    requests = json.loads(outcome.requests_path.read_text())
    first = json.dumps(next(r for r in requests if r["side_request"] is None)["body"])
    assert ("- probe: " in first) is listed
    assert list(outcome.warnings) == warnings
    # Without the requests (the live API) the init event and SKILL.md give the same answer.
    stdout = outcome.transcript_path.read_text() if outcome.transcript_path else ""
    init = init_event(stdout.splitlines())
    (scenario,) = load_scenario_suite(suite).scenarios
    assert init_warnings(init, [scenario.skill]) == warnings


# --- subagent text ------------------------------------------------------------------------


def subagent_script(background: bool) -> dict:
    agent = {
        "description": "Run sub echo",
        "prompt": "SUBTASK-MARKER: run echo from-subagent and report",
        "subagent_type": "general-purpose",
        "run_in_background": background,
    }
    return {
        "rules": [
            {
                "id": "sub-bash",
                "when": {"user": "SUBTASK-MARKER", "turn": 1},
                "reply": {
                    "text": "Subagent running a command.",
                    "tool_calls": [
                        {
                            "name": "Bash",
                            "input": {"command": "echo from-subagent", "description": "echo"},
                        }
                    ],
                },
            },
            {
                "id": "sub-done",
                "when": {"user": "SUBTASK-MARKER"},
                "reply": {"text": "Subagent result: from-subagent"},
            },
            {
                "id": "main",
                "when": {"turn": 1},
                "reply": {"tool_calls": [{"name": "Agent", "input": agent}]},
            },
        ],
        "default": {"text": "Main agent done."},
    }


def run_cli(claude: Path, script: dict, *, drop: str | None = None, env: dict | None = None):
    """One `claude -p` run with the scenario argv in a fresh sandbox; ``drop`` removes a flag."""
    sandbox = create_sandbox(skill=None)
    try:
        with EmulatorServer(ModelScript.from_dict({"schema_version": 1, **script})) as server:
            credentials = {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-x"}
            argv = build_argv(
                claude,
                prompt="probe",
                multi_turn=False,
                max_turns=8,
                allowed_tools=("Bash", "Agent"),
                disallowed_tools=(),
                model=None,
                isolation=isolation_flags("2.1.328", sandbox=sandbox),
            )
            invocation = Invocation(
                argv=tuple(arg for arg in argv if arg != drop),
                cwd=sandbox.workdir,
                env=isolated_env(
                    home=sandbox.home, tmp=sandbox.tmp, credentials={**credentials, **(env or {})}
                ),
                timeout_s=120,
                stop_on=unrecoverable_api_error,
            )
            output = asyncio.run(run_conversation(invocation))
            return output, server.requests
    finally:
        sandbox.remove()


SUBAGENT_TEXT = ("Subagent running a command.", "Subagent result: from-subagent")


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
def test_subagent_text_is_in_the_transcript_whichever_way_the_subagent_runs(claude_bin, background):
    output, _ = run_cli(claude_bin, subagent_script(background))
    transcript = parse_stream_json(output.stdout, exit_code=output.exit_code)

    assert transcript.error is None, transcript.error
    assert [t for t in transcript.assistant_text if t.startswith("Subagent")] == list(SUBAGENT_TEXT)
    assert "Main agent done." in transcript.assistant_text
    bash = next(call for call in transcript.tool_calls if call.name == "Bash")
    assert bash.parent_tool_use_id is not None and bash.result == "from-subagent"


def test_without_the_flag_a_foreground_subagent_says_nothing(claude_bin):
    # What scenario runs would record without --forward-subagent-text.
    output, _ = run_cli(claude_bin, subagent_script(False), drop="--forward-subagent-text")
    transcript = parse_stream_json(output.stdout, exit_code=output.exit_code)

    assert transcript.assistant_text == ("Main agent done.",)


# --- a refused key --------------------------------------------------------------------------


def test_a_refused_key_stops_the_run_in_seconds_despite_the_clis_retries(claude_bin):
    # No CLAUDE_CODE_MAX_RETRIES: the CLI's own default retries a 401 for about three minutes.
    script = {"faults": {"status": 401}, "default": {"text": "never"}}
    started = time.monotonic()
    output, requests = run_cli(claude_bin, script)

    assert time.monotonic() - started < 30
    assert output.stopped_reason is not None
    assert output.stopped_reason.startswith("the model API answered HTTP 401")
    assert output.stopped_reason.endswith("retrying cannot fix it")
    assert (output.exit_code, output.timed_out) == (None, False)
    assert '"subtype":"api_retry"' in output.stdout
    assert 1 <= len([r for r in requests if r.path == "/v1/messages"]) <= 3
