"""When a skill fired under Codex: it read the skill's SKILL.md through a call that ran."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.agents.codex_events import parse_codex_events, skill_fired
from skilltest.transcript import ToolCall, Transcript

STREAMS = Path(__file__).resolve().parents[2] / "fixtures" / "agents" / "codex" / "streams"


def ran(command: str, *, status: str = "ran") -> Transcript:
    call = ToolCall(
        id="item_1",
        name="Bash",
        input={"command": command},
        result=None if status == "no-result" else "out",
        is_error=status == "failed",
    )
    return Transcript(source="codex", tool_calls=(call,))


def test_the_captured_skill_read_fires_the_skill_and_no_other():
    transcript = parse_codex_events((STREAMS / "skill-read.jsonl").read_text().splitlines())
    assert skill_fired(transcript, "greeting")
    assert not skill_fired(transcript, "other")
    assert transcript.skills_invoked == ("greeting",)


@pytest.mark.parametrize("case", ["plain", "shell-ok", "shell-fail", "patch", "turn-failed"])
def test_the_captured_runs_that_read_no_skill_fire_none(case):
    transcript = parse_codex_events((STREAMS / f"{case}.jsonl").read_text().splitlines())
    assert not skill_fired(transcript, "greeting")
    assert transcript.skills_invoked == ()


@pytest.mark.parametrize(
    ("command", "fired"),
    [
        ("cat .agents/skills/greeting/SKILL.md", True),
        ("sed -n '1,200p' .agents/skills/greeting/SKILL.md", True),
        ("head -n 40 /work/p/.agents/skills/greeting/SKILL.md", True),
        ("cd .agents/skills && cat greeting/SKILL.md", True),
        ("nl -ba .agents/skills/greeting/SKILL.md | head -50", True),
        ("cat ~/.agents/skills/greeting/SKILL.md", True),
        ('cat ".agents/skills/greeting/SKILL.md"', True),
        # Finding or listing the skill is not loading it.
        ("ls .agents/skills/greeting/SKILL.md", False),
        ("rg --files .agents/skills", False),
        ("grep -n description .agents/skills/greeting/SKILL.md", False),
        ("test -f .agents/skills/greeting/SKILL.md && echo yes", False),
        # Another skill's file, or another file of this skill.
        ("cat .agents/skills/greeting-extra/SKILL.md", False),
        ("cat .agents/skills/greeting/references/style.md", False),
        ("cat .agents/skills/greeting/SKILL.md.bak", False),
    ],
)
def test_a_shell_command_fires_the_skill_when_it_reads_its_skill_file(command, fired):
    assert skill_fired(ran(command), "greeting") is fired


@pytest.mark.parametrize("status", ["failed", "no-result"])
def test_a_read_that_failed_or_never_finished_does_not_fire(status):
    assert not skill_fired(ran("cat .agents/skills/greeting/SKILL.md", status=status), "greeting")


def test_a_read_tool_call_of_the_skill_file_fires_it():
    call = ToolCall(
        id="r", name="Read", input={"file_path": "/w/.agents/skills/greeting/SKILL.md"}, result="x"
    )
    assert skill_fired(Transcript(source="codex", tool_calls=(call,)), "greeting")
