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


def payload(tool: str, call_id: str, **arguments: object) -> str:
    """A PreToolUse payload as Claude Code 2.1.328 writes it on the hook's stdin."""
    return json.dumps(
        {
            "session_id": "58c6ba0c-0713-487d-8e62-9a8cdea04bc1",
            "cwd": "/tmp/skilltest-run-x/work",
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": arguments,
            "tool_use_id": call_id,
        }
    )


def run_hook(settings: dict, stdin: str) -> subprocess.CompletedProcess[str]:
    """The hook's command as the settings give it, through a shell, with an environment as bare
    as the CLI's isolated one (no PYTHONPATH, no virtual environment on PATH)."""
    [entry] = settings["hooks"]["PreToolUse"]
    [command] = entry["hooks"]
    assert entry["matcher"] == "*" and command["type"] == "command"
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
    settings = hook.settings("lgtm", 3, tmp_path / "calls.txt")
    assert answered(run_hook(settings, payload("Skill", "t1", skill="lgtm"))) == stop(FIRED)
    # A read of its SKILL.md fires too; a distractor and other tools go through, unanswered.
    read = payload("Read", "t2", file_path="/tmp/w/.claude/skills/lgtm/SKILL.md")
    assert answered(run_hook(settings, read)) == stop(FIRED)
    assert answered(run_hook(settings, payload("Skill", "t3", skill="safe-migrations"))) is None
    assert answered(run_hook(settings, payload("Bash", "t4", command="ls"))) is None


def test_the_call_after_the_budget_is_refused_and_ends_the_run(tmp_path):
    calls = tmp_path / "calls.txt"
    settings = hook.settings("lgtm", 2, calls)
    assert answered(run_hook(settings, payload("Bash", "t1", command="ls"))) is None
    assert answered(run_hook(settings, payload("Glob", "t2", pattern="*"))) is None
    # The same call checked twice counts once.
    assert answered(run_hook(settings, payload("Glob", "t2", pattern="*"))) is None
    stopped = answered(run_hook(settings, payload("Bash", "t3", command="rm -rf build")))
    assert stopped == stop(BUDGET)
    assert calls.read_text().split() == ["t1", "t2", "t3"]
    # The skill as the call after the budget still fires.
    assert answered(run_hook(settings, payload("Skill", "t4", skill="lgtm"))) == stop(FIRED)


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
