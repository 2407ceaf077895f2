"""The stop check: fired at any tool call, a budget stop after max_tool_calls other calls."""

import pytest

from skilltest.triggers.watch import TriggerWatch, fires


def call(tool_id: str, name: str, **arguments: object) -> dict:
    block = {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}
    return {"type": "assistant", "message": {"id": "m", "content": [block]}}


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("Skill", {"skill": "lgtm"}, True),
        ("Skill", {"skill": "/lgtm"}, True),
        ("Skill", {"skill": "observability:lgtm"}, True),
        ("Skill", {"command": "lgtm"}, True),
        ("Skill", {"skill": "lgtm-extra"}, False),
        ("Skill", {"skill": "safe-migrations"}, False),
        ("Read", {"file_path": "/tmp/x/work/.claude/skills/lgtm/SKILL.md"}, True),
        ("Read", {"file_path": "/tmp/x/work/.claude/skills/other/SKILL.md"}, False),
        ("Read", {"file_path": "/tmp/lgtm/README.md"}, False),
        ("Bash", {"command": "cat .claude/skills/lgtm/SKILL.md"}, False),
    ],
)
def test_what_counts_as_firing(tool, arguments, expected):
    assert fires("lgtm", tool, arguments) is expected


def test_the_skill_after_other_tool_calls_fires():
    watch = TriggerWatch("lgtm", max_tool_calls=3)
    assert watch(call("t1", "Bash", command="ls")) is None
    assert watch(call("t2", "Grep", pattern="error")) is None
    reason = watch(call("t3", "Skill", skill="lgtm"))
    assert reason == "the skill fired (Skill(lgtm), tool call 3)"
    assert watch.fired and not watch.budget
    assert [c.short() for c in watch.first_calls] == ["Bash(ls)", "Grep(error)", "Skill(lgtm)"]


def test_the_call_after_the_budget_stops_the_run_as_budget():
    watch = TriggerWatch("lgtm", max_tool_calls=3)
    for n in range(3):
        assert watch(call(f"t{n}", "Bash", command=f"echo {n}")) is None
    reason = watch(call("t3", "Bash", command="echo 3"))
    assert reason == "tool-call budget: 3 tool call(s) without the skill, then Bash(echo 3)"
    assert watch.budget and not watch.fired


def test_the_skill_as_the_call_after_the_budget_still_fires():
    watch = TriggerWatch("lgtm", max_tool_calls=3)
    for n in range(3):
        watch(call(f"t{n}", "Bash", command="ls"))
    assert watch(call("t3", "Skill", skill="lgtm")) is not None
    assert watch.fired


def test_a_repeated_line_counts_its_call_once():
    watch = TriggerWatch("lgtm", max_tool_calls=1)
    event = call("t1", "Bash", command="ls")
    assert watch(event) is None
    assert watch(event) is None
    assert len(watch.calls) == 1


def message(message_id: str, *blocks: dict) -> dict:
    return {"type": "assistant", "message": {"id": message_id, "content": list(blocks)}}


def tool_use(tool_id: str, name: str, **arguments: object) -> dict:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


def test_with_the_hook_the_watch_notes_the_decision_and_lets_the_cli_end_itself():
    watch = TriggerWatch("lgtm", max_tool_calls=3, hooked=True)
    assert watch(message("m1", tool_use("t1", "Skill", skill="lgtm"))) is None
    assert watch.fired and watch.reason == "the skill fired (Skill(lgtm), tool call 1)"
    # More lines of the same message (a parallel call), the tool result and the result: no stop.
    assert watch(message("m1", tool_use("t2", "Bash", command="ls"))) is None
    assert watch({"type": "user", "message": {"content": []}}) is None
    assert watch({"type": "result", "subtype": "success"}) is None
    assert not watch.overran


def test_with_the_hook_a_cli_that_asks_the_model_again_is_stopped_then():
    watch = TriggerWatch("lgtm", max_tool_calls=0, hooked=True)
    assert watch(message("m1", tool_use("t1", "Bash", command="ls"))) is None
    assert watch.budget
    reason = watch(message("m2", tool_use("t2", "Bash", command="ls -la")))
    assert reason == "tool-call budget: 0 tool call(s) without the skill, then Bash(ls)"
    assert watch.overran
    assert len(watch.calls) == 1  # what came after the decision is not counted


def test_a_decision_inside_a_subagent_stops_its_caller_without_a_warning():
    watch = TriggerWatch("lgtm", max_tool_calls=3, hooked=True)
    assert watch(message("m1", tool_use("t1", "Agent", prompt="look"))) is None
    inside = {**message("s1", tool_use("t2", "Skill", skill="lgtm")), "parent_tool_use_id": "t1"}
    assert watch(inside) is None and watch.fired
    # A background subagent's caller went on beside it: stopped, and no broken hook is implied.
    assert watch(message("m2", tool_use("t3", "Bash", command="ls"))) == watch.reason
    assert not watch.overran
