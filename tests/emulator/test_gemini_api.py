"""The emulator's Gemini API as Gemini CLI speaks it: ``generateContent`` and its SSE stream,
function calls sent as the tools the request declares, function responses read as the next
turn's tool results, usage, countTokens, Gemini CLI's helper requests, errors and faults."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from skilltest.emulator import EmulatorServer, ModelScript

GEMINI_CLI = {"User-Agent": "GeminiCLI/0.61.0/gemini-3.8-flash (linux; x64; terminal)"}
TOOLS = [
    {
        "functionDeclarations": [
            {"name": "run_shell_command", "parametersJsonSchema": {"type": "object"}},
            {"name": "activate_skill", "parametersJsonSchema": {"type": "object"}},
        ]
    }
]
LISTING = (
    "# Available Agent Skills\n\n<available_skills>\n  <skill>\n    <name>greeting</name>\n"
    "    <description>Greets the team.</description>\n    <location>/w/.gemini/skills/greeting"
    "/SKILL.md</location>\n  </skill>\n</available_skills>"
)

SCRIPT = {
    "schema_version": 1,
    "rules": [
        {
            "id": "load",
            "when": {"turn": 1, "user": "greet", "skill": "greeting", "api": "gemini"},
            "reply": {
                "thinking": "The greeting skill fits.",
                "text": "Loading the greeting skill.",
                "tool_calls": [{"name": "Skill", "input": {"skill": "greeting"}}],
            },
        },
        {
            "id": "run",
            "when": {"skill_loaded": "greeting", "turn": 2, "agent": "gemini"},
            "reply": {"tool_calls": [{"name": "Bash", "input": {"command": "echo hi"}}]},
        },
        {
            "id": "report",
            "when": {"tool_result": "Output: hi"},
            "reply": {"text": "It printed hi. " + "x" * 60},
        },
        {
            "id": "boom",
            "when": {"user": "overload"},
            "reply": {"text": "no"},
            "fault": {"status": 429},
        },
        {
            "id": "cut",
            "when": {"user": "cut"},
            "reply": {"text": "no"},
            "fault": {"truncated": True},
        },
    ],
    "default": {"text": "default answer"},
}


@pytest.fixture
def server():
    with EmulatorServer(ModelScript.from_dict(SCRIPT)) as running:
        yield running


def post(
    server: EmulatorServer, method: str, body: Any, *, model: str = "gemini-3.8-flash"
) -> tuple[int, bytes]:
    suffix = "?alt=sse" if method == "streamGenerateContent" else ""
    request = urllib.request.Request(
        f"{server.base_url}/v1beta/models/{model}:{method}{suffix}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "x-goog-api-key": "fake", **GEMINI_CLI},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def chunks(raw: bytes) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in raw.decode().split("\r\n")
        if line.startswith("data: ")
    ]


def first_request(prompt: str = "greet the team") -> dict[str, Any]:
    return {
        "contents": [
            {
                "role": "user",
                "parts": [{"text": "<session_context>...</session_context>"}, {"text": prompt}],
            }
        ],
        "systemInstruction": {"parts": [{"text": "You are Gemini CLI.\n" + LISTING}]},
        "tools": TOOLS,
    }


def test_an_answer_carries_thought_text_and_the_scripted_call_as_the_declared_tool(server):
    status, raw = post(server, "generateContent", first_request())

    assert status == 200
    answer = json.loads(raw)
    (candidate,) = answer["candidates"]
    assert candidate["finishReason"] == "STOP"
    assert candidate["content"]["role"] == "model"
    assert candidate["content"]["parts"] == [
        {"text": "The greeting skill fits.", "thought": True},
        {"text": "Loading the greeting skill."},
        {"functionCall": {"name": "activate_skill", "args": {"name": "greeting"}}},
    ]
    usage = answer["usageMetadata"]
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"]
    assert answer["modelVersion"] == "gemini-3.8-flash"
    (seen,) = server.requests
    assert (seen.api, seen.agent, seen.rule_id) == ("gemini", "gemini", "load")


def test_the_function_response_sent_back_is_the_next_turns_tool_result_and_loads_the_skill(server):
    body = first_request()
    body["contents"] += [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "id": "c1",
                        "name": "activate_skill",
                        "args": {"name": "greeting"},
                    }
                }
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "c1",
                        "name": "activate_skill",
                        "response": {"output": '<activated_skill name="greeting">'},
                    }
                }
            ],
        },
    ]
    status, raw = post(server, "streamGenerateContent", body)

    assert status == 200
    (only,) = chunks(raw)
    assert only["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "run_shell_command", "args": {"command": "echo hi"}}}
    ]
    assert only["candidates"][0]["finishReason"] == "STOP"
    assert "usageMetadata" in only
    assert server.requests[-1].rule_id == "run"


def test_a_streamed_answer_sends_its_text_in_pieces_that_add_up_and_ends_with_usage(server):
    body = first_request("report")
    body["contents"] += [
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}}]},
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "run_shell_command",
                        "response": {"output": "Output: hi\nProcess Group PGID: 1"},
                    }
                }
            ],
        },
    ]
    status, raw = post(server, "streamGenerateContent", body)

    assert status == 200
    sent = chunks(raw)
    assert len(sent) > 2
    text = "".join(
        part.get("text", "")
        for chunk in sent
        for part in chunk["candidates"][0]["content"]["parts"]
    )
    assert text == "It printed hi. " + "x" * 60
    assert sent[-1]["candidates"][0]["finishReason"] == "STOP"
    assert "usageMetadata" in sent[-1] and "usageMetadata" not in sent[0]


def test_count_tokens_answers_the_estimate(server):
    status, raw = post(
        server, "countTokens", {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    )

    assert status == 200
    assert json.loads(raw)["totalTokens"] > 0


@pytest.mark.parametrize(
    ("system", "user", "expected"),
    [
        (
            "You are a specialized Task Routing AI. Your sole function ...",
            "fix it",
            {"complexity_score": 10},
        ),
        (
            "You are the **Lead Orchestrator** for an AI system. ...",
            "fix it",
            {"model_choice": "flash"},
        ),
        (
            "You are a diagnostic agent that determines whether a conversational AI ...",
            "go",
            {"unproductive_state_confidence": 0},
        ),
    ],
)
def test_gemini_clis_helper_requests_get_json_answers_that_keep_a_run_going(
    server, system, user, expected
):
    body = {
        "contents": [{"role": "user", "parts": [{"text": user}]}],
        "systemInstruction": {"parts": [{"text": system}]},
        "generationConfig": {"responseMimeType": "application/json"},
    }
    status, raw = post(server, "generateContent", body, model="gemini-3.5-flash-lite")

    assert status == 200
    text = json.loads(raw)["candidates"][0]["content"]["parts"][0]["text"]
    assert expected.items() <= json.loads(text).items()
    assert server.requests[-1].rule_id.startswith("side:")


def test_a_fault_is_a_google_api_error(server):
    status, raw = post(server, "generateContent", first_request("overload"))

    assert status == 429
    assert json.loads(raw)["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert json.loads(raw)["error"]["code"] == 429


def test_a_truncated_stream_stops_after_its_first_chunk(server):
    with pytest.raises(http.client.IncompleteRead) as cut:
        post(server, "streamGenerateContent", first_request("cut"))

    assert len(chunks(cut.value.partial)) == 1


def test_a_request_without_contents_is_a_400_in_google_form(server):
    status, raw = post(server, "generateContent", {"messages": []})

    assert status == 400
    assert json.loads(raw)["error"] == {
        "code": 400,
        "message": "the body must be a JSON object with 'contents'",
        "status": "INVALID_ARGUMENT",
    }


@pytest.mark.parametrize(
    ("call", "sent"),
    [
        (
            {"name": "Read", "input": {"file_path": "a.txt", "offset": 3, "limit": 2}},
            {"name": "read_file", "args": {"file_path": "a.txt", "start_line": 3, "end_line": 4}},
        ),
        (
            {"name": "Write", "input": {"file_path": "a.txt", "content": "x"}},
            {"name": "write_file", "args": {"file_path": "a.txt", "content": "x"}},
        ),
        (
            {"name": "Glob", "input": {"pattern": "*.py", "path": "src"}},
            {"name": "glob", "args": {"pattern": "*.py", "dir_path": "src"}},
        ),
        (
            {"name": "Grep", "input": {"pattern": "TODO"}},
            {"name": "grep_search", "args": {"pattern": "TODO"}},
        ),
        (
            {"name": "WebFetch", "input": {"url": "https://example.com", "prompt": "summarise"}},
            {"name": "web_fetch", "args": {"prompt": "https://example.com summarise"}},
        ),
    ],
)
def test_a_scripted_call_is_sent_as_gemini_clis_own_tool(call, sent):
    names = ["run_shell_command", "read_file", "write_file", "glob", "grep_search", "web_fetch"]
    script = {"schema_version": 1, "rules": [{"id": "r", "reply": {"tool_calls": [call]}}]}
    body = {
        "contents": [{"role": "user", "parts": [{"text": "go"}]}],
        "tools": [{"functionDeclarations": [{"name": name} for name in names]}],
    }
    with EmulatorServer(ModelScript.from_dict(script)) as running:
        status, raw = post(running, "generateContent", body)

    assert status == 200
    (part,) = json.loads(raw)["candidates"][0]["content"]["parts"]
    assert part == {"functionCall": sent}
