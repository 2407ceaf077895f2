"""Rule matching as pure functions: what rules see of a request, and which rule answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.emulator import ModelScript, RequestView, ScriptedModel, classify_side_request
from skilltest.errors import ModelScriptError

REQUESTS = Path(__file__).parent / "requests"


def real_request(name: str) -> dict[str, Any]:
    """A request body Claude Code 2.1.328 sent (long texts trimmed)."""
    body: dict[str, Any] = json.loads((REQUESTS / f"cc-2.1.328-{name}.json").read_text())
    return body


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 100, "messages": list(messages), **extra}


def script(*rules: dict[str, Any], **top: Any) -> ModelScript:
    return ModelScript.from_dict({"schema_version": 1, "rules": list(rules), **top})


def chosen(model_script: ModelScript, request: dict[str, Any]) -> str | None:
    rule = model_script.select(RequestView.from_body(request))
    return rule.id if rule else None


# --- what Claude Code's real requests look like to a rule ------------------------------------


def test_first_request_of_claude_code_with_a_project_skill() -> None:
    view = RequestView.from_body(real_request("skill-listed"))

    assert view.turn == 1
    assert view.user_text == "use the probe"  # the attribution <system-reminder> is left out
    assert view.skills_listed == {"probe-skill"}
    assert view.skills_loaded == frozenset()
    assert view.tool_result_text is None
    assert "Bash" in view.tool_names and "Skill" in view.tool_names
    assert "You are a Claude agent" in view.system_text
    assert "# Environment" in view.system_text  # the role=system message counts as system
    assert view.side_request is None


def test_request_after_the_skill_tool_call_sees_the_skill_loaded() -> None:
    view = RequestView.from_body(real_request("skill-loaded"))

    assert view.turn == 2
    assert view.skills_loaded == {"probe-skill"}
    assert view.tool_result_text == "Launching skill: probe-skill"
    # The SKILL.md body injected next to the tool result is not user-authored text.
    assert view.user_text == "use the probe"
    assert "SKILL BODY MARKER" in view.all_text


def test_request_after_a_bash_call_sees_the_tool_result() -> None:
    view = RequestView.from_body(real_request("bash-result"))

    assert (view.turn, view.tool_result_text, view.user_text) == (2, "hi-probe", "run echo")
    assert view.skills_listed == frozenset()
    assert '"command": "echo hi-probe"' in view.all_text


def test_slash_command_counts_as_the_skill_loaded() -> None:
    view = RequestView.from_body(real_request("slash-command"))

    assert view.turn == 1
    assert view.skills_loaded == {"probe-skill"}
    assert "<command-args>some args</command-args>" in view.user_text
    assert "SKILL BODY MARKER" not in view.user_text


def test_skill_conditions_on_real_requests() -> None:
    rules = script(
        {"id": "follow", "when": {"skill_loaded": "probe-skill"}, "reply": {"text": "x"}},
        {"id": "load", "when": {"skill": "probe-skill", "turn": 1}, "reply": {"text": "x"}},
        {"id": "other-skill", "when": {"skill": "lgtm"}, "reply": {"text": "x"}},
    )
    assert chosen(rules, real_request("skill-listed")) == "load"
    assert chosen(rules, real_request("skill-loaded")) == "follow"
    assert chosen(rules, real_request("bash-result")) is None


# --- each condition ---------------------------------------------------------------------------

TOOL_TURN = [
    user("please run it"),
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "running"},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
        ],
    },
    {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": "a.txt"}],
            }
        ],
    },
]


@pytest.mark.parametrize(
    ("when", "request_body", "expected"),
    [
        ({"user": "(?i)^PLEASE"}, body(user("please run it")), True),
        ({"user": "bye"}, body(user("please run it")), False),
        ({"system": "reviewer"}, body(user("x"), system="You are a reviewer."), True),
        (
            {"system": "reviewer"},
            body(
                user("x"),
                system=[{"type": "text", "text": "A"}, {"type": "text", "text": "reviewer"}],
            ),
            True,
        ),
        ({"system": "reviewer"}, body(user("x")), False),
        ({"any_text": "a\\.txt"}, body(*TOOL_TURN), True),
        ({"any_text": "nowhere"}, body(*TOOL_TURN), False),
        ({"turn": 1}, body(user("x")), True),
        ({"turn": 2}, body(*TOOL_TURN), True),
        ({"turn": [1, 3]}, body(*TOOL_TURN), False),
        ({"tool_result": "^a\\.txt$"}, body(*TOOL_TURN), True),
        ({"tool_result": "."}, body(user("x")), False),
        ({"tools": ["Bash"]}, body(user("x"), tools=[{"name": "Bash"}, {"name": "Read"}]), True),
        ({"tools": ["Bash", "Edit"]}, body(user("x"), tools=[{"name": "Bash"}]), False),
        ({"no_tools": True}, body(user("x")), True),
        ({"no_tools": True}, body(user("x"), tools=[{"name": "Bash"}]), False),
        ({"no_tools": False}, body(user("x"), tools=[{"name": "Bash"}]), True),
        ({"model": "^claude-test$"}, body(user("x")), True),
        ({"model": "opus"}, body(user("x")), False),
        ({}, body(user("anything")), True),
    ],
)
def test_condition(when: dict[str, Any], request_body: dict[str, Any], expected: bool) -> None:
    rules = script({"id": "r", "when": when, "reply": {"text": "x"}})
    assert (chosen(rules, request_body) == "r") is expected


def test_all_conditions_must_hold() -> None:
    rules = script({"id": "r", "when": {"user": "run", "turn": 1}, "reply": {"text": "x"}})
    assert chosen(rules, body(user("run"))) == "r"
    assert chosen(rules, body(*TOOL_TURN)) is None  # user matches, but it is turn 2


def test_latest_user_text_is_the_last_prompt_not_an_earlier_one() -> None:
    request = body(*TOOL_TURN, {"role": "assistant", "content": "done"}, user("now explain"))
    view = RequestView.from_body(request)
    assert (view.user_text, view.turn, view.tool_result_text) == ("now explain", 3, None)


def test_skill_listed_in_a_system_reminder_and_plugin_skill_names() -> None:
    listing = (
        "<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n"
        "- review: Review code.\n- probe-plugin:plugin-probe: Probe: with a colon.\n\n"
        "Other text\n- not-a-skill: after the blank line\n</system-reminder>"
    )
    view = RequestView.from_body(body(user(listing)))
    assert view.skills_listed == {"review", "probe-plugin:plugin-probe"}
    rules = script({"id": "r", "when": {"skill": "plugin-probe"}, "reply": {"text": "x"}})
    assert chosen(rules, body(user(listing))) == "r"


def test_failed_skill_call_does_not_load_the_skill() -> None:
    request = body(
        user("go"),
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": "nope"}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "<tool_use_error>Unknown skill: nope</tool_use_error>",
                    "is_error": True,
                }
            ],
        },
    )
    assert RequestView.from_body(request).skills_loaded == frozenset()


def test_first_matching_rule_wins() -> None:
    rules = script(
        {"id": "narrow", "when": {"user": "deploy", "turn": 1}, "reply": {"text": "a"}},
        {"id": "broad", "when": {"user": "deploy"}, "reply": {"text": "b"}},
    )
    assert chosen(rules, body(user("deploy now"))) == "narrow"


def test_a_pattern_that_times_out_on_a_request_names_the_rule() -> None:
    # Passes the load-time probes, but backtracks catastrophically on this particular text.
    rules = script({"id": "slow", "when": {"user": "(x+x+)+y"}, "reply": {"text": "a"}})
    with pytest.raises(ModelScriptError) as caught:
        chosen(rules, body(user("x" * 5000)))
    assert str(caught.value).startswith(
        "<inline>#/rules/0/when/user: pattern '(x+x+)+y' took longer than 1s to match"
    )


# --- side requests ----------------------------------------------------------------------------

SIDE_REQUESTS = [
    ("quota", {"max_tokens": 1, "messages": [user("quota")]}),
    (
        "title",
        body(
            user("<session>\nfix the login bug\n</session>"),
            system=[{"type": "text", "text": 'Name it. Return JSON with a single "title" field.'}],
        ),
    ),
    (
        "tool_summary",
        body(
            user("Tools completed:\n\nLabel:"),
            system="Write a short summary label describing what these tool calls accomplished.",
        ),
    ),
    (
        "suggestion",
        body(
            user("hi"),
            user(
                "[SUGGESTION MODE: Suggest what the user might naturally type next into Claude Code.]"
            ),
        ),
    ),
    (
        "recap",
        body(
            user(
                "The user stepped away and is coming back. Recap in under 40 words, 1-2 plain sentences."
            )
        ),
    ),
    (
        "compact",
        body(
            user(
                "Your task is to create a detailed summary of the conversation so far, paying close attention"
            )
        ),
    ),
]


@pytest.mark.parametrize(("kind", "request_body"), SIDE_REQUESTS, ids=[k for k, _ in SIDE_REQUESTS])
def test_side_requests_are_recognised(kind: str, request_body: dict[str, Any]) -> None:
    assert classify_side_request(request_body) == kind


@pytest.mark.parametrize("name", ["skill-listed", "skill-loaded", "bash-result", "slash-command"])
def test_main_requests_of_claude_code_are_not_side_requests(name: str) -> None:
    assert classify_side_request(real_request(name)) is None


def test_a_user_asking_for_a_summary_is_not_a_side_request() -> None:
    assert (
        classify_side_request(body(user("Please summarise this conversation and a title"))) is None
    )


def test_rules_see_side_requests_only_when_they_opt_in() -> None:
    quota = {"max_tokens": 1, "messages": [user("quota")]}
    rules = script(
        {"id": "everything", "reply": {"text": "main"}},
        {"id": "titles", "when": {"side_request": "title"}, "reply": {"text": "t"}},
        {"id": "any-side", "when": {"side_request": True}, "reply": {"text": "s"}},
    )
    assert chosen(rules, body(user("hello"))) == "everything"
    assert chosen(rules, quota) == "any-side"
    title = SIDE_REQUESTS[1][1]
    assert chosen(rules, title) == "titles"


# --- replies: cycle, random, default, side-request defaults --------------------------------


def answer_texts(model: ScriptedModel, request: dict[str, Any], n: int) -> list[str]:
    texts = []
    for _ in range(n):
        content = model.answer(request).message.data["content"]
        texts.append(content[0]["text"] if content else "")
    return texts


def test_cycle_takes_replies_in_order_and_wraps() -> None:
    rules = script({"id": "r", "replies": [{"text": "a"}, {"text": "b"}, {"text": "c"}]})
    assert answer_texts(ScriptedModel(rules), body(user("x")), 5) == ["a", "b", "c", "a", "b"]


def test_random_pick_is_reproducible_with_the_seed_and_varies_with_it() -> None:
    def draws(seed: int) -> list[str]:
        rules = script(
            {"id": "r", "pick": "random", "replies": [{"text": str(i)} for i in range(10)]},
            seed=seed,
        )
        return answer_texts(ScriptedModel(rules), body(user("x")), 12)

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)
    assert len(set(draws(7))) > 3


def test_default_reply_and_the_no_match_notice() -> None:
    with_default = script({"id": "r", "when": {"user": "zzz"}, "reply": {"text": "x"}})
    model = ScriptedModel(
        ModelScript.from_dict({"schema_version": 1, "default": {"text": "fallback"}})
    )
    assert answer_texts(model, body(user("hi")), 1) == ["fallback"]
    answer = ScriptedModel(with_default).answer(body(user("hi")))
    assert answer.rule_id is None
    assert "No rule of the model script matched" in answer.message.data["content"][0]["text"]


def test_side_requests_get_built_in_answers_by_default() -> None:
    model = ScriptedModel(script({"id": "catch-all", "reply": {"text": "main answer"}}))
    quota = model.answer({"model": "m", "max_tokens": 1, "messages": [user("quota")]})
    assert (quota.rule_id, quota.side_request) == ("side:quota", "quota")
    assert quota.message.data["stop_reason"] == "max_tokens"
    title = model.answer(SIDE_REQUESTS[1][1])
    assert json.loads(title.message.data["content"][0]["text"]) == {
        "title": "Scripted emulator session"
    }


def test_first_n_fault_fails_the_first_requests_then_answers() -> None:
    rules = script({"id": "r", "reply": {"text": "ok"}, "fault": {"status": 529, "first_n": 2}})
    model = ScriptedModel(rules)
    labels = [model.answer(body(user("x"))).fault.label for _ in range(4)]
    assert labels == ["status 529", "status 529", None, None]


def test_rate_fault_is_seeded() -> None:
    def pattern(seed: int) -> list[bool]:
        rules = script(
            {"id": "r", "reply": {"text": "ok"}, "fault": {"status": 500, "rate": 0.5}}, seed=seed
        )
        model = ScriptedModel(rules)
        return [model.answer(body(user("x"))).fault.failure is not None for _ in range(40)]

    assert pattern(1) == pattern(1)
    assert 5 < sum(pattern(1)) < 35


def test_rule_fault_wins_over_global_fault_and_latencies_add() -> None:
    rules = script(
        {"id": "r", "reply": {"text": "ok"}, "fault": {"latency_ms": 20, "hang": True}},
        faults={"latency_ms": 5, "status": 500},
    )
    decision = ScriptedModel(rules).answer(body(user("x"))).fault
    assert (decision.latency_ms, decision.failure) == (25, "hang")
