"""Replaying: which recorded answer a request gets, and what each kind of miss says, word for word."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skilltest.replay.cassette import Cassette, Exchange
from skilltest.replay.match import Miss, Player, diff, missing_cassette
from skilltest.replay.normalise import BUILTIN_RULES, fingerprint
from tests.replay.rename_column import recorded_requests, with_skill_cassette

CASSETTE = Path("tests/cassettes/safe-migrations/rename-column/with_skill.yaml")
WHERE = f"replay miss: {CASSETTE}, repetition 0"


def exchange(step: int, request: dict[str, Any], status: int = 200, **kw: Any) -> Exchange:
    return Exchange(
        step=step,
        channel=kw.pop("channel", "model"),
        fingerprint=fingerprint(request),
        request=request,
        response={"status": status, "headers": {}, "body": {"n": step}, "events": None},
        **kw,
    )


@pytest.fixture(scope="module")
def requests() -> list[dict[str, Any]]:
    return recorded_requests()


@pytest.fixture
def cassette(requests) -> Cassette:
    tape = with_skill_cassette(CASSETTE, rules=list(BUILTIN_RULES))
    for step, request in enumerate(requests):
        tape.add(0, exchange(step, request))
    return tape


def replay_with(
    cassette: Cassette, requests: list[dict[str, Any]], step: int, edit: Callable[[Any], None]
) -> Exchange | Miss:
    """Replays the steps before ``step`` as recorded, then ``step`` edited."""
    player = Player(cassette, 0)
    for before in requests[:step]:
        assert isinstance(player.answer("model", before), Exchange)
    changed = copy.deepcopy(requests[step])
    edit(changed)
    return player.answer("model", changed)


def edit_text(pointer: list[Any], old: str, new: str) -> Callable[[Any], None]:
    def edit(request: Any) -> None:
        node = request
        for part in pointer[:-1]:
            node = node[part]
        assert old in node[pointer[-1]]
        node[pointer[-1]] = node[pointer[-1]].replace(old, new)

    return edit


def set_model(request: Any) -> None:
    request["model"] = "claude-sonnet-5-5"


MISSES = {
    "skill listing changed": (
        0,
        edit_text(
            ["messages", 1, "content", 0, "text"], "tables. Use when", "tables. Always use it when"
        ),
        f"{WHERE}, step 0: no recorded request matches; nearest is step 0:\n"
        '  /messages/1/content/0/text: skill listing changed: "…tables. Use when…" -> "…tables. Always use it when…"',
    ),
    "system prompt changed": (
        0,
        edit_text(["system", 2, "text"], "using your own judgment", "following the skill"),
        f"{WHERE}, step 0: no recorded request matches; nearest is step 0:\n"
        '  /system/2/text: system prompt changed: "…their goals, using your own judgment along…" -> "…their goals, following the skill along…"',
    ),
    "skill content changed": (
        1,
        edit_text(
            ["messages", 3, "content", 1, "text"],
            "Production tables are large and busy.",
            "Production tables are huge.",
        ),
        f"{WHERE}, step 1: no recorded request matches; nearest is step 1:\n"
        '  /messages/3/content/1/text: skill content changed: "…tables are large and busy. A…" -> "…tables are huge. A…"',
    ),
    "tool result differs": (
        2,
        edit_text(
            ["messages", 5, "content", 0, "content", 0, "text"],
            "\ndb/migrate/20240105090500_create_users.rb",
            "",
        ),
        f"{WHERE}, step 2: no recorded request matches; nearest is step 2:\n"
        '  /messages/5/content/0/content/0/text: tool result differs: "…create_orders.rb\\ndb/migrate/20240105090500_create_users.…" -> "…create_orders.rb"',
    ),
    "model changed": (
        3,
        set_model,
        f"{WHERE}, step 3: no recorded request matches; nearest is step 3:\n"
        '  /model: model changed: "claude-opus-5-5" -> "claude-sonnet-5-5"',
    ),
}


@pytest.mark.parametrize("case", list(MISSES))
def test_a_miss_says_what_changed(cassette, requests, case):
    step, edit, expected = MISSES[case]
    miss = replay_with(cassette, requests, step, edit)
    assert isinstance(miss, Miss)
    assert (miss.cassette, miss.rep, miss.step, miss.channel) == (CASSETTE, 0, step, "model")
    assert miss.message == expected
    assert str(miss) == expected


def test_a_repetition_not_recorded(cassette, requests):
    cassette.add(1, exchange(0, requests[0]))
    cassette.add(2, exchange(0, requests[0]))
    miss = Player(cassette, 4).answer("model", requests[0])
    assert isinstance(miss, Miss)
    assert miss.message == (
        f"replay miss: {CASSETTE}, repetition 4, step 0: repetition 4 was not recorded "
        "(the cassette holds repetitions 0-2)"
    )


def test_a_missing_cassette():
    path = Path("tests/cassettes/lgtm/spike/without_skill.yaml")
    miss = missing_cassette(path, 2)
    assert miss == Miss(
        cassette=path,
        rep=2,
        step=0,
        channel="model",
        message=f"replay miss: {path}, repetition 2, step 0: no cassette was recorded for this "
        "scenario and arm",
    )


def test_a_recorded_retry_replays_in_order():
    request = {
        "model": "m",
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }
    tape = Cassette(
        path=CASSETTE, layer="pressure", suite="s", skill="k", scenario="x", arm="with_skill"
    )
    tape.add(0, exchange(0, request, status=429))
    tape.add(0, exchange(1, request, status=200))
    player = Player(tape, 0)
    first, second, third = (player.answer("model", request) for _ in range(3))
    assert isinstance(first, Exchange) and first.response["status"] == 429
    assert isinstance(second, Exchange) and second.response["status"] == 200
    assert isinstance(third, Miss)
    assert third.message == (
        f"replay miss: {CASSETTE}, repetition 0, step 2: this request was recorded twice and "
        "already served (recorded at step 0, 1); the run sent it once more"
    )
    assert player.misses == [third]


def test_requests_in_another_order_find_their_answers(requests):
    title = {
        "model": "m",
        "system": [{"type": "text", "text": 'Return JSON with a single "title" field'}],
    }
    tape = Cassette(path=CASSETTE, layer="scenarios", suite="s", skill="k", scenario="x", arm="a")
    tape.add(0, exchange(0, requests[0], kind="main"))
    tape.add(0, exchange(1, title, kind="side:title"))
    tape.add(0, exchange(0, {"method": "tools/list", "params": {}}, channel="mcp:telemetry"))
    player = Player(tape, 0)
    got_title = player.answer("model", title)
    assert isinstance(got_title, Exchange) and got_title.kind == "side:title"
    assert [e.kind for e in player.unserved()] == ["main", None]
    got_tools = player.answer("mcp:telemetry", {"method": "tools/list", "params": {}})
    assert isinstance(got_tools, Exchange) and got_tools.channel == "mcp:telemetry"
    got_main = player.answer("model", requests[0])
    assert isinstance(got_main, Exchange) and got_main.kind == "main"
    assert player.unserved() == []


def test_a_miss_on_an_mcp_channel_names_it():
    tape = Cassette(path=CASSETTE, layer="scenarios", suite="s", skill="k", scenario="x", arm="a")
    tape.add(
        0,
        exchange(
            0,
            {"method": "tools/call", "params": {"name": "query_logs", "arguments": {"q": "a"}}},
            channel="mcp:telemetry",
        ),
    )
    player = Player(tape, 0)
    miss = player.answer(
        "mcp:telemetry",
        {"method": "tools/call", "params": {"name": "query_logs", "arguments": {"q": "b"}}},
    )
    assert isinstance(miss, Miss)
    assert miss.message == (
        f"replay miss: {CASSETTE}, repetition 0, step 0 (mcp:telemetry): no recorded request "
        'matches; nearest is step 0:\n  /params/arguments/q: differs: "a" -> "b"'
    )
    other = player.answer("mcp:github", {"method": "tools/list", "params": {}})
    assert isinstance(other, Miss)
    assert other.message == (
        f"replay miss: {CASSETTE}, repetition 0, step 0 (mcp:github): nothing was recorded on "
        "the channel mcp:github"
    )


def test_a_run_longer_than_its_recording_compares_with_the_closest(cassette, requests):
    player = Player(cassette, 0)
    for request in requests:
        assert isinstance(player.answer("model", request), Exchange)
    longer = copy.deepcopy(requests[-1])
    longer["messages"].append({"role": "user", "content": [{"type": "text", "text": "and now?"}]})
    miss = player.answer("model", longer)
    assert isinstance(miss, Miss)
    assert miss.message == (
        f"{WHERE}, step 4: no recorded request matches (all 4 recorded requests served); "
        "nearest is step 3:\n"
        '  /messages/8: differs: (absent) -> {"content":[{"text":"and now?","type":"text"}],"role":"u…'
    )


def test_nearest_is_the_most_similar_when_no_step_is_left(requests):
    tape = Cassette(path=CASSETTE, layer="scenarios", suite="s", skill="k", scenario="x", arm="a")
    for step in (5, 6):  # recorded at other steps than the one asked
        tape.add(0, exchange(step, requests[step - 4]))
    near = copy.deepcopy(requests[2])
    near["max_tokens"] = 1
    miss = Player(tape, 0).answer("model", near)
    assert isinstance(miss, Miss)
    assert miss.message.endswith("nearest is step 6:\n  /max_tokens: differs: 128000 -> 1")


def test_a_miss_says_when_the_rules_changed(cassette, requests):
    player = Player(cassette, 0, rules=[*BUILTIN_RULES[:-1], "ignore /system/2/text"])
    changed = copy.deepcopy(requests[0])
    changed["model"] = "x"
    miss = player.answer("model", changed)
    assert isinstance(miss, Miss)
    assert miss.message.endswith(
        "\n  note: the cassette was recorded under other normalisation rules (now also ignore "
        "/system/2/text; no longer agent-ids): re-record it"
    )


def test_players_serve_concurrent_requests_once_each():
    request = {"model": "m", "messages": []}
    tape = Cassette(path=CASSETTE, layer="pressure", suite="s", skill="k", scenario="x", arm="a")
    for step in range(20):
        tape.add(0, exchange(step, request))
    player = Player(tape, 0)
    answers: list[Any] = []
    threads = [
        threading.Thread(target=lambda: answers.append(player.answer("model", request)))
        for _ in range(20)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(a.step for a in answers) == list(range(20))


@pytest.mark.parametrize(
    ("recorded", "now", "expected"),
    [
        ({"a": "short"}, {"a": "shirt"}, ['/a: differs: "short" -> "shirt"']),
        (
            {"a": "x" * 30 + " the old words here " + "y" * 30},
            {"a": "x" * 30 + " the new words here " + "y" * 30},
            ['/a: differs: "…xxxxxxxxxxx the old words…" -> "…xxxxxxxxxxx the new words…"'],
        ),
        ({"a": [1, 2]}, {"a": [1, 2, 3]}, ["/a/2: differs: (absent) -> 3"]),
        ({"a/b": {"~": 1}}, {"a/b": {"~": True}}, ["/a~1b/~0: differs: 1 -> true"]),
        (
            {"tools": [{"name": "Bash"}]},
            {"tools": [{"name": "Sh"}]},
            ['/tools/0/name: tools changed: "Bash" -> "Sh"'],
        ),
        (
            {str(i): i for i in range(8)},
            {str(i): -i for i in range(8)},
            [f"/{i}: differs: {i} -> {-i}" for i in range(1, 6)] + ["… and 2 more fields"],
        ),
    ],
)
def test_diff_lines(recorded, now, expected):
    assert diff(recorded, now) == expected


CODEX_SKILLS = (
    "<skills_instructions>\n## Skills\n### Available skills\n- imagegen: Generate images. "
    "(file: r0/imagegen/SKILL.md)\n- lgtm: {} (file: r1/lgtm/SKILL.md)\n### How to use skills\n"
    "- Discovery: read the file. {}\n</skills_instructions>"
)
OPENCODE_SKILLS = (
    "Skills load when a task matches.\n<available_skills>\n  <skill>\n    <name>lgtm</name>\n"
    "    <description>{}</description>\n  </skill>\n</available_skills>\nBe concise. {}"
)


def responses_request(developer: str, output: str = "total 4") -> dict[str, Any]:
    return {
        "endpoint": "/v1/responses",
        "instructions": "You are Codex.",
        "input": [
            {"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": developer},
            ]},
            {"type": "function_call_output", "call_id": "call_1", "output": output},
        ],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("recorded", "now", "why"),
    [
        (
            responses_request(CODEX_SKILLS.format("Investigate incidents.", "")),
            responses_request(CODEX_SKILLS.format("Always investigate incidents.", "")),
            "/input/0/content/0/text: skill listing changed",
        ),
        (
            responses_request(CODEX_SKILLS.format("Investigate.", "Read it whole.")),
            responses_request(CODEX_SKILLS.format("Investigate.", "Read it all.")),
            "/input/0/content/0/text: system prompt changed",
        ),
        (
            responses_request("x", output="total 4"),
            responses_request("x", output="total 5"),
            "/input/1/output: tool result differs",
        ),
        (
            {"instructions": "You are Codex."},
            {"instructions": "You are Codex, a coding agent."},
            "/instructions: system prompt changed",
        ),
        (
            {"system": [{"type": "text", "text": OPENCODE_SKILLS.format("Investigate.", "")}]},
            {"system": [{"type": "text", "text": OPENCODE_SKILLS.format("Always.", "")}]},
            "/system/0/text: skill listing changed",
        ),
        (
            {"system": [{"type": "text", "text": OPENCODE_SKILLS.format("Investigate.", "")}]},
            {"system": [{"type": "text", "text": OPENCODE_SKILLS.format("Investigate.", "Go.")}]},
            "/system/0/text: system prompt changed",
        ),
    ],
)
def test_a_miss_says_what_changed_in_codex_and_opencode_terms(recorded, now, why):
    (line,) = diff(recorded, now)
    assert line.startswith(why + ": "), line
