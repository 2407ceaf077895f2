"""One set of rules reads every API: the model-script conditions on Messages, Responses and Chat
requests alike, the API and agent conditions, and what Codex and OpenCode really sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.emulator import ModelScript, RequestView, ScriptedModel
from skilltest.emulator.script import ToolCall
from skilltest.emulator.tool_names import as_offered
from skilltest.model_apis import agent_of

AGENTS = Path(__file__).resolve().parent.parent / "fixtures" / "agents"

# One conversation, three APIs: a system prompt, a user prompt, a Bash call and its result.
MESSAGES = {
    "model": "m-1",
    "system": "You are terse.",
    "tools": [{"name": "Bash", "input_schema": {}}],
    "messages": [
        {"role": "user", "content": "list the files"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "total 4"}],
        },
    ],
}
RESPONSES = {
    "model": "m-1",
    "instructions": "You are terse.",
    "tools": [{"type": "function", "name": "Bash", "parameters": {}}],
    "input": [
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "list the files"}],
        },
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Listing."}],
        },
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "Bash",
            "arguments": '{"command": "ls"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "total 4"},
    ],
}
CHAT = {
    "model": "m-1",
    "tools": [{"type": "function", "function": {"name": "Bash", "parameters": {}}}],
    "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "text", "text": "list the files"}]},
        {
            "role": "assistant",
            "content": "Listing.",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "Bash", "arguments": '{"command": "ls"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "total 4"},
    ],
}
BODIES = {"anthropic": MESSAGES, "responses": RESPONSES, "chat": CHAT}


@pytest.mark.parametrize("api", list(BODIES))
def test_every_api_gives_the_same_view_of_one_conversation(api):
    view = RequestView.from_body(BODIES[api], api=api)
    assert view.model == "m-1"
    assert view.system_text == "You are terse."
    assert view.user_text == "list the files"
    assert view.turn == 2
    assert view.tool_result_text == "total 4"
    assert view.tool_names == ("Bash",)
    assert view.api == api
    assert '{"command": "ls"}' in view.all_text and "Listing." in view.all_text


CONDITIONS = [
    ({"user": "list the"}, True),
    ({"user": "delete"}, False),
    ({"system": "terse"}, True),
    ({"any_text": "total 4"}, True),
    ({"turn": 2}, True),
    ({"turn": 1}, False),
    ({"tool_result": "total \\d"}, True),
    ({"tools": ["Bash"]}, True),
    ({"tools": ["Read"]}, False),
    ({"no_tools": True}, False),
    ({"model": "^m-1$"}, True),
]


@pytest.mark.parametrize("api", list(BODIES))
@pytest.mark.parametrize(("when", "holds"), CONDITIONS, ids=[json.dumps(c[0]) for c in CONDITIONS])
def test_a_condition_holds_alike_on_every_api(api, when, holds):
    script = ModelScript.from_dict(
        {"schema_version": 1, "rules": [{"id": "r", "when": when, "reply": {"text": "x"}}]}
    )
    assert (script.select(RequestView.from_body(BODIES[api], api=api)) is not None) is holds


@pytest.mark.parametrize(
    ("when", "api", "agent", "holds"),
    [
        ({"api": "responses"}, "responses", None, True),
        ({"api": "responses"}, "chat", None, False),
        ({"api": ["chat", "anthropic"]}, "anthropic", None, True),
        ({"agent": "codex"}, "responses", "codex", True),
        ({"agent": "codex"}, "responses", None, False),
        ({"agent": ["opencode", "claude-code"]}, "chat", "opencode", True),
        ({"api": "chat", "agent": "opencode"}, "responses", "opencode", False),
    ],
)
def test_the_api_and_agent_conditions(when, api, agent, holds):
    script = ModelScript.from_dict(
        {"schema_version": 1, "rules": [{"id": "r", "when": when, "reply": {"text": "x"}}]}
    )
    view = RequestView.from_body(BODIES[api], api=api, agent=agent)
    assert (script.select(view) is not None) is holds


@pytest.mark.parametrize(
    ("headers", "agent"),
    [
        (
            {
                "originator": "codex_exec",
                "user-agent": "codex_exec/0.171.0 (Debian 12.0.0; x86_64)",
            },
            "codex",
        ),
        ({"User-Agent": "opencode/1.18.33 ai-sdk/openai-compatible/1.0.0"}, "opencode"),
        ({"user-agent": "claude-cli/2.1.328 (external, sdk-cli)"}, "claude-code"),
        ({"user-agent": "OpenAI/Python 3.63.0"}, None),
        ({}, None),
    ],
)
def test_the_agent_is_told_by_its_headers(headers, agent):
    assert agent_of(headers) == agent


def requests_of(agent: str) -> list[dict]:
    path = AGENTS / agent / "requests.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_codex_requests_show_its_skill_listing_turns_and_the_skill_it_read():
    views = [
        RequestView.from_body(r["body"], api=r["api"], agent=r["agent"])
        for r in requests_of("codex")
    ]
    assert [view.turn for view in views] == [1, 2, 3]
    assert {view.agent for view in views} == {"codex"}
    assert "greeting" in views[0].skills_listed
    listing = dict(views[0].skill_listing)
    assert listing["greeting"] == (
        "Greets the team with the house greeting. Use when asked to greet someone."
    )
    assert views[0].user_text == "Greet the team using the greeting skill."
    assert "exec_command" in views[0].tool_names
    assert views[0].skills_loaded == frozenset()
    assert views[1].skills_loaded == {"greeting"}  # it ran `cat .agents/skills/greeting/SKILL.md`
    assert "hello from skilltest" in (views[2].tool_result_text or "")


def test_opencode_requests_show_its_title_side_request_listing_and_the_skill_it_read():
    requests = requests_of("opencode")
    views = [RequestView.from_body(r["body"], api=r["api"], agent=r["agent"]) for r in requests]
    assert views[0].side_request == "title"
    assert [r["rule_id"] for r in requests] == [
        "side:title",
        "read-skill",
        "run-greeting",
        "answer",
    ]
    main = views[1:]
    assert [view.turn for view in main] == [1, 2, 3]
    assert "greeting" in main[0].skills_listed and "bash" in main[0].tool_names
    assert main[1].skills_loaded == {"greeting"}


def test_opencodes_skill_tool_loads_a_listed_skill():
    body = json.loads(json.dumps(requests_of("opencode")[2]["body"]))
    call = body["messages"][-2]["tool_calls"][0]
    call["function"] = {"name": "skill", "arguments": '{"name": "greeting"}'}
    view = RequestView.from_body(body, api="chat")
    assert view.skills_loaded == {"greeting"}
    body["messages"][-1]["content"] = "Error: skill not found"
    call["function"] = {"name": "skill", "arguments": '{"name": "other"}'}
    assert RequestView.from_body(body, api="chat").skills_loaded == frozenset()


@pytest.mark.parametrize(
    ("offered", "expected"),
    [
        (("Bash", "Read"), ToolCall("Bash", {"command": "ls", "description": "list"})),
        (("exec_command", "write_stdin"), ToolCall("exec_command", {"cmd": "ls"})),
        (("read", "bash"), ToolCall("bash", {"command": "ls"})),
        (("Other",), ToolCall("Bash", {"command": "ls", "description": "list"})),
        ((), ToolCall("Bash", {"command": "ls", "description": "list"})),
    ],
)
def test_a_scripted_bash_call_is_sent_as_the_shell_tool_offered(offered, expected):
    assert (
        as_offered(ToolCall("Bash", {"command": "ls", "description": "list"}), offered) == expected
    )


@pytest.mark.parametrize(
    ("offered", "expected"),
    [
        # Claude Code and Codex (its namespace tool aside) offer the suite's own name.
        (("mcp__desk__lookup", "Bash"), "mcp__desk__lookup"),
        # OpenCode names a server's tool server_tool, every other character made "_".
        (("bash", "desk_lookup"), "desk_lookup"),
        (("bash", "help_desk_look_up"), None),
    ],
)
def test_a_scripted_mcp_call_is_sent_as_the_agent_names_the_servers_tool(offered, expected):
    name = "mcp__help.desk__look-up" if expected is None else "mcp__desk__lookup"
    sent = as_offered(ToolCall(name, {"id": "INC-1"}), offered)
    assert sent == ToolCall(expected or "mcp__help.desk__look-up", {"id": "INC-1"})


def test_a_scripted_mcp_call_to_a_server_with_dots_reaches_opencode():
    sent = as_offered(ToolCall("mcp__help.desk__look-up", {}), ("bash", "help_desk_look-up"))
    assert sent.name == "help_desk_look-up"


def test_a_scripted_call_reaches_each_agent_as_its_own_tool():
    script = ModelScript.from_dict(
        {
            "schema_version": 1,
            "rules": [
                {
                    "id": "read",
                    "reply": {"tool_calls": [{"name": "Read", "input": {"file_path": "/a"}}]},
                }
            ],
        }
    )
    chat = {**CHAT, "tools": [{"type": "function", "function": {"name": "read"}}]}
    answer = ScriptedModel(script).answer(chat, api="chat", agent="opencode")
    (block,) = answer.message.data["content"]
    assert (block["name"], block["input"]) == ("read", {"filePath": "/a"})
    answer = ScriptedModel(script).answer(MESSAGES | {"tools": [{"name": "Read"}]})
    (block,) = answer.message.data["content"]
    assert (block["name"], block["input"]) == ("Read", {"file_path": "/a"})
