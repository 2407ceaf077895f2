"""Record and replay of OpenAI's Responses API and Chat Completions, through the real openai SDK:
what is recorded replays to the same answers, a cassette says which API it holds, and a request
that differs is a miss."""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.replay.cassette import Cassette
from skilltest.replay.match import Player
from skilltest.replay.normalise import fingerprint, normalise_request
from skilltest.replay.proxy import RecordingProxy
from skilltest.replay.recorder import CassetteKey, Recorder

SCRIPT = {
    "schema_version": 1,
    "rules": [
        {
            "id": "call",
            "when": {"turn": 1},
            "reply": {
                "text": "Looking.",
                "tool_calls": [{"name": "Bash", "input": {"command": "ls"}}],
            },
        },
        {"id": "answer", "when": {"turn": 2}, "reply": {"text": "One file."}},
    ],
}
KEY = CassetteKey(skill="lgtm", scenario="listing", arm="with_skill")
TOOLS = {
    "responses": [{"type": "function", "name": "exec_command", "parameters": {}}],
    "chat": [{"type": "function", "function": {"name": "bash", "parameters": {}}}],
}


def conversation(client: openai.OpenAI, api: str, stream: bool) -> list[str]:
    """Two turns (a call, then its output), each answer as text the test can compare."""
    tools = TOOLS[api]
    if api == "responses":
        history: list = [
            {"role": "user", "content": "list the files"},
            {"role": "developer", "content": "<current_date>2026-12-05</current_date>"},
        ]
        answers = []
        for _ in range(2):
            if stream:
                with client.responses.stream(model="m", input=history, tools=tools) as events:
                    kinds = [event.type for event in events]
                    response = events.get_final_response()
                answers.append(" ".join(kinds))
            else:
                response = client.responses.create(model="m", input=history, tools=tools)
            answers.append(response.model_dump_json(exclude={"created_at"}))
            history += [item.model_dump(exclude_none=True) for item in response.output]
            calls = [item for item in response.output if item.type == "function_call"]
            history += [
                {"type": "function_call_output", "call_id": c.call_id, "output": "total 4"}
                for c in calls
            ]
        return answers
    messages: list = [{"role": "user", "content": "list the files"}]
    answers = []
    for _ in range(2):
        if stream:
            chunks = list(
                client.chat.completions.create(
                    model="m", messages=messages, tools=tools, stream=True
                )
            )
            answers.append(json.dumps([c.model_dump(exclude={"created"}) for c in chunks]))
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            calls = [
                tc
                for c in chunks
                if c.choices
                for tc in c.choices[0].delta.tool_calls or []
                if tc.id
            ]
            call_ids = [tc.id for tc in calls]
        else:
            completion = client.chat.completions.create(model="m", messages=messages, tools=tools)
            answers.append(completion.model_dump_json(exclude={"created"}))
            text = completion.choices[0].message.content or ""
            call_ids = [tc.id for tc in completion.choices[0].message.tool_calls or []]
        calls_sent = [
            {"id": i, "type": "function", "function": {"name": "bash", "arguments": "{}"}}
            for i in call_ids
        ]
        messages.append({"role": "assistant", "content": text, "tool_calls": calls_sent or None})
        messages += [{"role": "tool", "tool_call_id": i, "content": "total 4"} for i in call_ids]
        messages = [{k: v for k, v in m.items() if v is not None} for m in messages]
    return answers


def normaliser(body, path):
    return normalise_request(body if isinstance(body, dict) else {}, endpoint=path)


@pytest.mark.parametrize("api", ["responses", "chat"])
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
def test_a_recorded_conversation_replays_to_the_same_answers(tmp_path: Path, api, stream):
    recorder = Recorder(tmp_path, layer="scenarios", backend="emulator")
    recorder.begin(KEY, 0)
    with (
        EmulatorServer(ModelScript.from_dict(SCRIPT)) as emulator,
        RecordingProxy(emulator.base_url, on_exchange=lambda e: recorder.add(KEY, 0, e)) as proxy,
    ):
        live = conversation(
            openai.OpenAI(base_url=proxy.base_url + "/v1", api_key="sk-x", max_retries=0),
            api,
            stream,
        )
    path = recorder.finish(KEY, 0, suite="suite.yaml")
    assert path is not None
    text = path.read_text()
    assert "schema_version: 2\n" in text and f"api: {api}\n" in text
    assert "sk-x" not in text
    cassette = Cassette.load(path, layer="scenarios")
    assert cassette.api == api
    exchanges = cassette.repetitions[0]
    assert [e.request["endpoint"] for e in exchanges] == [
        f"/v1/{'responses' if api == 'responses' else 'chat/completions'}"
    ] * 2
    assert "stream" not in exchanges[0].request
    if api == "responses":
        assert "{DATE}" in json.dumps(exchanges[0].request)
        assert "call_1" in json.dumps(exchanges[1].request)  # the call id, renumbered

    with RecordingProxy(
        None, on_exchange=lambda e: None, player=Player(cassette, 0), normalise=normaliser
    ) as replaying:
        client = openai.OpenAI(base_url=replaying.base_url + "/v1", api_key="sk-y", max_retries=0)
        replayed = conversation(client, api, stream)
        assert replaying.misses == []
    assert replayed == live


def test_a_request_the_cassette_does_not_hold_is_a_miss_naming_the_field(tmp_path: Path):
    recorder = Recorder(tmp_path, layer="scenarios", backend="emulator")
    with (
        EmulatorServer(ModelScript.from_dict(SCRIPT)) as emulator,
        RecordingProxy(emulator.base_url, on_exchange=lambda e: recorder.add(KEY, 0, e)) as proxy,
    ):
        client = openai.OpenAI(base_url=proxy.base_url + "/v1", api_key="sk-x", max_retries=0)
        client.responses.create(model="m", input="list the files")
    cassette = Cassette.load(recorder.finish(KEY, 0, suite="suite.yaml"))
    with RecordingProxy(
        None, on_exchange=lambda e: None, player=Player(cassette, 0), normalise=normaliser
    ) as replaying:
        client = openai.OpenAI(base_url=replaying.base_url + "/v1", api_key="sk-x", max_retries=0)
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model="m", input="delete the files")
        (miss,) = replaying.misses
    assert miss.message.startswith("replay miss: ")
    assert "/input" in miss.message


@pytest.mark.parametrize(
    ("api", "volatile"),
    [
        (
            "responses",
            {
                "stream": True,
                "store": False,
                "prompt_cache_key": "019a",
                "client_metadata": {"x": "1"},
            },
        ),
        ("chat", {"stream": True, "stream_options": {"include_usage": True}, "user": "u1"}),
    ],
)
def test_fields_that_do_not_shape_the_answer_leave_the_fingerprint_alone(api, volatile):
    path = "/v1/responses" if api == "responses" else "/v1/chat/completions"
    body = (
        {"model": "m", "input": "hi"}
        if api == "responses"
        else {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    )
    plain = fingerprint(normalise_request(body, endpoint=path))
    assert fingerprint(normalise_request({**body, **volatile}, endpoint=path)) == plain
    assert fingerprint(normalise_request({**body, "model": "n"}, endpoint=path)) != plain
    # the same body sent to another API is another request
    other = "/v1/chat/completions" if api == "responses" else "/v1/responses"
    assert fingerprint(normalise_request(body, endpoint=other)) != plain


def test_a_version_1_cassette_still_reads_as_the_messages_api(tmp_path: Path):
    cassette = Cassette(
        path=tmp_path / "c.yaml", layer="pressure", suite="s.yaml", skill="k", scenario="s", arm="a"
    )
    text = cassette.dumps().replace("schema_version: 2\n", "schema_version: 1\n")
    text = text.replace("api: anthropic\n", "")
    assert "api:" not in text
    assert Cassette.loads(text, tmp_path / "c.yaml").api == "anthropic"
