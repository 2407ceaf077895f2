"""The stop hook: what it answers Claude Code for each call, run as Claude Code runs it."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from skilltest.triggers import hook
from skilltest.triggers.hook import BUDGET, FIRED


def stop(reason: str) -> dict:
    """The answer that refuses the call and ends the session."""
    return {
        "continue": False,
        "stopReason": reason,
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        },
    }


def payload(tool: str, call_id: str, event: str = "PreToolUse", **arguments: object) -> str:
    """A hook payload as Claude Code 2.1.328 writes it on the hook's stdin."""
    return json.dumps(
        {
            "session_id": "58c6ba0c-0713-487d-8e62-9a8cdea04bc1",
            "cwd": "/tmp/skilltest-run-x/work",
            "permission_mode": "default",
            "hook_event_name": event,
            "tool_name": tool,
            "tool_input": arguments,
            "tool_use_id": call_id,
        }
    )


def run_hook(settings: dict, stdin: str) -> subprocess.CompletedProcess[str]:
    """The hook's command as the settings give it for the payload's event and tool, through a
    shell, with an environment as bare as the CLI's isolated one (no PYTHONPATH, no virtual
    environment on PATH); a call no matcher of its event names gets no answer."""
    try:
        sent = json.loads(stdin)
    except ValueError:
        sent = None
    event, tool = ("PreToolUse", "Bash")
    if isinstance(sent, dict):
        event, tool = sent["hook_event_name"], sent["tool_name"]
    entries = [
        entry
        for entry in settings["hooks"].get(event, [])
        if entry["matcher"] == "*" or tool in entry["matcher"].split("|")
    ]
    if not entries:
        return subprocess.CompletedProcess([], 0, "", "")
    [entry] = entries
    [command] = entry["hooks"]
    assert command["type"] == "command"
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/")}
    return subprocess.run(
        ["/bin/sh", "-c", command["command"]],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def answered(result: subprocess.CompletedProcess[str]) -> dict | None:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout) if result.stdout.strip() else None


def test_the_skill_ends_the_run_at_its_call_and_other_skills_go_through(tmp_path):
    def settings(name: str) -> dict:
        return hook.settings("lgtm", 3, tmp_path / f"{name}.txt")

    assert answered(run_hook(settings("a"), payload("Skill", "t1", skill="lgtm"))) == stop(FIRED)
    # A read of its SKILL.md fires too; a distractor and other tools go through, unanswered.
    read = payload("Read", "t1", file_path="/tmp/w/.claude/skills/lgtm/SKILL.md")
    assert answered(run_hook(settings("b"), read)) == stop(FIRED)
    other = settings("c")
    assert answered(run_hook(other, payload("Skill", "t1", skill="safe-migrations"))) is None
    assert answered(run_hook(other, payload("Bash", "t2", command="ls"))) is None


def test_the_call_after_the_budget_is_refused_and_ends_the_run(tmp_path):
    calls = tmp_path / "calls.txt"
    settings = hook.settings("lgtm", 2, calls)
    assert answered(run_hook(settings, payload("Bash", "t1", command="ls"))) is None
    assert answered(run_hook(settings, payload("Glob", "t2", pattern="*"))) is None
    # The same call checked twice counts once.
    assert answered(run_hook(settings, payload("Glob", "t2", pattern="*"))) is None
    stopped = answered(run_hook(settings, payload("Bash", "t3", command="rm -rf build")))
    assert stopped == stop(BUDGET)
    assert calls.read_text().splitlines() == ["t1", "t2", "t3", f"stop {BUDGET}"]


def test_the_skill_as_the_call_after_the_budget_still_fires(tmp_path):
    settings = hook.settings("lgtm", 1, tmp_path / "calls.txt")
    assert answered(run_hook(settings, payload("Bash", "t1", command="ls"))) is None
    assert answered(run_hook(settings, payload("Skill", "t2", skill="lgtm"))) == stop(FIRED)


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]"])
def test_a_payload_it_cannot_read_lets_the_call_through(tmp_path, stdin):
    # Exit 2 would refuse the call and tell the model: anything unexpected lets it through.
    result = run_hook(hook.settings("lgtm", 0, tmp_path / "calls.txt"), stdin)
    assert (result.returncode, result.stdout) == (0, "")


def test_a_count_it_cannot_keep_lets_the_call_through(tmp_path):
    settings = hook.settings("lgtm", 0, tmp_path / "missing" / "calls.txt")
    result = run_hook(settings, payload("Bash", "t1", command="ls"))
    assert (result.returncode, result.stdout) == (0, "")
    # Firing needs no count.
    assert answered(run_hook(settings, payload("Skill", "t2", skill="lgtm"))) == stop(FIRED)


def test_bad_arguments_let_the_call_through(tmp_path):
    script = Path(hook.__file__)
    result = subprocess.run(
        ["python3", "-I", str(script), "--max-tool-calls", "x"],
        input=payload("Skill", "t1", skill="lgtm"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "")


def test_the_hook_runs_outside_the_package_with_the_standard_library_only():
    # Claude Code starts it with the interpreter's -I: no PYTHONPATH, no working directory.
    source = Path(hook.__file__).read_text()
    imported = {
        line.split()[1].split(".")[0]
        for line in source.splitlines()
        if line.startswith(("import ", "from ")) or line.strip().startswith("import ")
    }
    assert "skilltest" not in imported


def test_once_a_subagent_fired_the_skill_its_caller_ends_too(tmp_path):
    # A subagent's `continue: false` ends only the subagent: the Agent call that started it
    # ends the session when it returns, before the main agent asks the model again.
    settings = hook.settings("lgtm", 3, tmp_path / "calls.txt")
    agent = payload("Agent", "t1", prompt="look at the logs")
    assert answered(run_hook(settings, agent)) is None
    assert answered(run_hook(settings, payload("Agent", "t1", "PostToolUse"))) is None
    assert answered(run_hook(settings, payload("Skill", "t2", skill="lgtm"))) == stop(FIRED)
    after = {"continue": False, "stopReason": FIRED}
    assert answered(run_hook(settings, payload("Agent", "t1", "PostToolUse"))) == after
    assert answered(run_hook(settings, payload("Agent", "t1", "PostToolUseFailure"))) == after
    # Any call after the decision is refused too; other tools' PostToolUse are not hooked.
    assert answered(run_hook(settings, payload("Bash", "t3", command="ls"))) == stop(FIRED)
    assert answered(run_hook(settings, payload("Bash", "t3", "PostToolUse"))) is None
