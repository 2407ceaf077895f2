"""Cassettes: a round trip, a file a reviewer can read, no secret ever written, clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from skilltest.errors import InputError
from skilltest.replay.cassette import SCHEMA_VERSION, Cassette, Exchange
from skilltest.replay.normalise import (
    BUILTIN_RULES,
    Rules,
    fingerprint,
    normalise_request,
)
from tests.replay.rename_column import recorded_requests, with_skill_cassette

API_KEY = "sk-ant-api03-Xq7pLm2Rt9Vw4Yz8Bc6Dn1Fg5Hj3Kk0Ls"


def streamed(text: str) -> dict[str, Any]:
    return {
        "status": 200,
        "headers": {"Content-Type": "text/event-stream", "request-id": "req_1"},
        "body": None,
        "events": [
            ["message_start", '{"type":"message_start","message":{"id":"msg_1"}}'],
            [
                "content_block_delta",
                json.dumps(
                    {"type": "content_block_delta", "delta": {"type": "text_delta", "text": text}}
                ),
            ],
            ["message_stop", '{"type":"message_stop"}'],
        ],
    }


def made_up_cassette(path: Path, **header: Any) -> Cassette:
    """An empty cassette of a made-up pressure scenario (suite s.yaml, skill k, scenario x, the
    with-skill arm); ``header`` adds to those fields or replaces them."""
    made_up = {
        "layer": "pressure",
        "suite": "s.yaml",
        "skill": "k",
        "scenario": "x",
        "arm": "with_skill",
    }
    return Cassette(path=path, **{**made_up, **header})


def make_cassette(path: Path, reps: int = 2) -> Cassette:
    cassette = with_skill_cassette(
        path,
        model="claude-opus-5-5",
        cli_version="2.1.328",
        recorded_at="2026-11-30T12:00:00Z",
        rules=[*BUILTIN_RULES, "ignore /system/2/text"],
    )
    for rep in range(reps):
        for step, request in enumerate(recorded_requests()):
            cassette.add(
                rep,
                Exchange(
                    step,
                    "model",
                    fingerprint(request),
                    request,
                    streamed(f"step {step}\nof rep {rep}"),
                    kind="main",
                ),
            )
        mcp = {"method": "tools/call", "params": {"name": "query_logs", "arguments": {"q": "x"}}}
        answers = [
            {"result": {"content": [{"type": "text", "text": "3 lines"}]}},
            {"error": {"code": -32602, "message": "bad"}},
        ]
        for step, answer in enumerate(answers):
            cassette.add(rep, Exchange(step, "mcp:telemetry", fingerprint(mcp), mcp, answer))
        counted = normalise_request(recorded_requests()[0], endpoint="/v1/messages/count_tokens")
        cassette.add(
            rep,
            Exchange(
                0,
                "model:count_tokens",
                fingerprint(counted),
                counted,
                {"status": 200, "headers": {}, "body": {"input_tokens": 21000}, "events": None},
                kind="count_tokens",
            ),
        )
    return cassette


def test_a_cassette_reads_back_as_written(tmp_path):
    written = make_cassette(tmp_path / "c.yaml")
    written.save()
    read = Cassette.load(tmp_path / "c.yaml")
    assert read.to_data() == written.to_data()
    assert read.repetitions[1][3].request == written.repetitions[1][3].request
    assert read.repetitions[0][0].response["headers"] == {
        "content-type": "text/event-stream",
        "request-id": "req_1",
    }
    assert read.repetitions[1][5].response == {"error": {"code": -32602, "message": "bad"}}
    assert read.repetitions[1][6].channel == "model:count_tokens"
    assert (read.skilltest_version, read.cli_version, read.recorded_at) == (
        "0.1.0",
        "2.1.328",
        "2026-11-30T12:00:00Z",
    )


def test_a_cassette_is_written_for_a_reviewer(tmp_path):
    cassette = make_cassette(tmp_path / "c.yaml")
    cassette.save()
    text = (tmp_path / "c.yaml").read_text()
    keys = [
        line.split(":")[0] for line in text.splitlines() if line and not line.startswith((" ", "-"))
    ]
    assert keys == [
        "schema_version",
        "skilltest_version",
        "layer",
        "suite",
        "skill",
        "scenario",
        "arm",
        "api",
        "model",
        "backend",
        "cli_version",
        "recorded_at",
        "rules",
        "repetitions",
    ]
    # The skill, loaded in step 1, reads as the SKILL.md it is (a block scalar, one line a line).
    assert (
        "          text: |\n            Base directory for this skill: {WORKDIR}/.claude/skills/safe-migrations\n"
        in text
    )
    assert "\n            # Safe PostgreSQL migrations\n" in text
    # The system prompt, the tools and each message are written once, then referred to.
    assert text.count("system: &system") == 1
    # (4 steps and a token count in each of 2 repetitions)
    assert text.count("system: *system") == 2 * 5 - 1
    assert text.count("tools: &tools") == 1
    assert text.count("- &m1") == 1
    assert text.count("- *m1") == 2 * 5 - 1
    assert "&id0" not in text
    # A reviewer reads the stream's text where it is.
    assert "step 1\\nof rep 0" in text
    # Saving leaves the cassette in memory as it was.
    assert (
        cassette.to_data()["repetitions"][0]["exchanges"][0]["request"]["system"]
        is cassette.repetitions[0][0].request["system"]
    )


def test_path_for_is_a_path_a_reviewer_can_guess(tmp_path):
    assert Cassette.path_for(tmp_path, "lgtm", "investigate-error-spike", "with_skill") == (
        tmp_path / "lgtm" / "investigate-error-spike" / "with_skill.yaml"
    )
    assert Cassette.path_for(tmp_path, "observability:log-triage", "..", "a/b") == (
        tmp_path / "observability_log-triage" / "_" / "a_b.yaml"
    )


def test_no_secret_is_ever_written(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    monkeypatch.setenv("TEAM_TOKEN", "ghp_team0token0value")
    rules = Rules.from_suite(
        {"redact": ["internal-hostname.corp", "$TEAM_TOKEN"]}, "s.yaml#/replay"
    )
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": f"my key is {API_KEY}, its tail {API_KEY[-20:]}"},
            {"role": "user", "content": "ssh internal-hostname.corp with ghp_team0token0value"},
        ],
    }
    request = normalise_request(body, rules=rules)
    cassette = made_up_cassette(tmp_path / "c.yaml", redact=rules.secrets)
    response = {
        "status": 200,
        "headers": {
            "authorization": f"Bearer {API_KEY}",
            "x-api-key": API_KEY,
            "set-cookie": "s=1",
            "retry-after": "3",
        },
        "body": {
            "content": [
                {
                    "type": "text",
                    "text": f"You said {API_KEY}; host internal-hostname.corp, token ghp_team0token0value",
                }
            ]
        },
        "events": None,
    }
    cassette.add(0, Exchange(0, "model", fingerprint(request), request, response))
    cassette.save()
    text = (tmp_path / "c.yaml").read_text()
    for secret in (
        API_KEY,
        API_KEY[-20:],
        API_KEY[10:30],
        "internal-hostname.corp",
        "ghp_team0token0value",
    ):
        assert secret not in text
    assert "authorization" not in text and "x-api-key" not in text and "set-cookie" not in text
    assert "retry-after: '3'" in text
    assert "[REDACTED:ANTHROPIC_API_KEY]" in text
    assert "ssh [REDACTED] with [REDACTED]" in text


def test_five_hundred_pressure_answers_load(tmp_path):
    system = (
        "# LGTM\n\nUse when the user asks about errors.\n"
        + "Aggregate before fetching raw lines.\n" * 40
    )
    cassette = made_up_cassette(tmp_path / "p.yaml", skill="lgtm")
    for rep in range(500):
        request = normalise_request(
            {
                "model": "m",
                "max_tokens": 1024,
                "system": system,
                "messages": [{"role": "user", "content": "Error spike in checkout?"}],
            }
        )
        answer = {
            "content": [
                {"type": "text", "text": f"Answer {rep}: run a LogQL rate() aggregation first."}
            ],
            "usage": {"input_tokens": 900, "output_tokens": 40},
        }
        cassette.add(
            rep,
            Exchange(
                0,
                "model",
                fingerprint(request),
                request,
                {"status": 200, "headers": {}, "body": answer, "events": None},
            ),
        )
    cassette.save()
    read = Cassette.load(tmp_path / "p.yaml")
    assert sorted(read.repetitions) == list(range(500))
    assert read.repetitions[499][0].response["body"]["content"][0]["text"].startswith("Answer 499:")
    # One copy of the system prompt, however many repetitions.
    assert (tmp_path / "p.yaml").read_text().count("Aggregate before fetching raw lines.") == 40


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


GOOD_HEAD = """\
schema_version: 1
layer: pressure
suite: s.yaml
skill: lgtm
scenario: x
arm: with_skill
repetitions:
- rep: 0
  exchanges:
  - step: 0
    channel: model
    fingerprint: sha256:0000000000000000000000000000000000000000000000000000000000000000
    request: {model: m}
"""


@pytest.mark.parametrize(
    ("text", "line", "message", "fix"),
    [
        (
            GOOD_HEAD + "    response: {status: 200\n",
            15,
            "the cassette is not valid YAML: while parsing a flow mapping started at line 14: did not find expected ',' or '}'",
            "undo the hand edit, or re-record the cassette with --record DIR",
        ),
        (
            GOOD_HEAD.replace("    channel: model\n", ""),
            10,
            "#/repetitions/0/exchanges/0: 'channel' is a required property",
            "expected an exchange: `step`, `channel`, `fingerprint`, `request` (the normalised request) and `response`, optionally `kind`; undo the hand edit, or re-record the cassette with --record DIR",
        ),
        (
            GOOD_HEAD + "    response: {status: ok}\n",
            14,
            "#/repetitions/0/exchanges/0/response/status: 'ok' is not of type 'integer'",
            "expected an HTTP status code; undo the hand edit, or re-record the cassette with --record DIR",
        ),
        (
            GOOD_HEAD.replace("schema_version: 1", "schema_version: 3") + "    response: {}\n",
            1,
            "cassette schema_version 3 is not 1 or 2",
            "upgrade skilltest to read it",
        ),
        (
            GOOD_HEAD.replace("schema_version: 1", "schema_version: 0") + "    response: {}\n",
            1,
            "cassette schema_version 0 is not 1 or 2",
            "re-record it with this version of skilltest (--record DIR)",
        ),
        (
            GOOD_HEAD + "    response: {}\n- rep: 0\n  exchanges: []\n",
            15,
            "repetition 0 is listed twice",
            "keep one entry per repetition, or re-record the cassette",
        ),
    ],
)
def test_a_broken_cassette_names_the_file_and_line(tmp_path, text, line, message, fix):
    path = write(tmp_path, text)
    with pytest.raises(InputError) as caught:
        Cassette.load(path)
    assert caught.value.location is not None
    assert caught.value.location.split(":")[:2] == [str(path), str(line)]
    assert caught.value.message == message
    assert caught.value.fix == fix


def test_a_missing_cassette_says_how_to_record_it(tmp_path):
    with pytest.raises(InputError) as caught:
        Cassette.load(tmp_path / "none.yaml")
    assert str(caught.value) == (
        f"{tmp_path / 'none.yaml'}: no such cassette\n"
        "  fix: record it with --record DIR (or --replay DIR --record-missing)"
    )


def test_the_written_cassette_matches_its_schema(tmp_path):
    import jsonschema

    from skilltest.suite.loader import load_schema

    cassette = make_cassette(tmp_path / "c.yaml", reps=1)
    cassette.save()
    data = yaml.safe_load((tmp_path / "c.yaml").read_text())
    jsonschema.Draft202012Validator(load_schema("cassette")).validate(data)
    assert data["schema_version"] == SCHEMA_VERSION


TRICKY_TEXTS = [
    "a\u2028b\nc",
    "x\x85y\nz",
    "a\rb\nc",
    "\r\nwindows\r\n",
    "\x1b[31mred\x1b[0m\nline 2",
    "trailing space \nnext",
    "\ttab\n\tx",
    "\ufeffbom",
    "🤖 emoji\nline",
    "",
    " lead",
    "- dash",
    "yes",
    "2026-11-30",
    "null",
    "1e3",
    "'single'\n\"double\"",
    "a: b\n#c",
    "ends\n\n\n",
    "\n\nleading newlines",
    "line\n  indented\n",
    "\x00nul",
    "%YAML\n---\n...\n",
]


def message_of(texts: list[str]) -> dict[str, Any]:
    """A message answering ``texts``, one text block each."""
    return {
        "content": [{"type": "text", "text": text} for text in texts],
        "usage": {"input_tokens": 1, "output_tokens": len(texts)},
    }


def texts_of(message: dict[str, Any]) -> list[str]:
    return [block["text"] for block in message["content"]]


def tricky_request() -> dict[str, Any]:
    """A request whose user message is one text block for each of :data:`TRICKY_TEXTS`."""
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": t} for t in TRICKY_TEXTS]}
        ],
    }


def test_every_text_reads_back_exactly(tmp_path):
    request = tricky_request()
    response = {
        "status": 200,
        "headers": {},
        "body": message_of([*TRICKY_TEXTS, "half \ud83e"]),
        "events": [["e", t] for t in TRICKY_TEXTS],
    }
    cassette = made_up_cassette(tmp_path / "c.yaml")
    cassette.add(0, Exchange(0, "model", fingerprint(request), request, response))
    cassette.save()
    read = Cassette.load(tmp_path / "c.yaml").repetitions[0][0]
    assert [block["text"] for block in read.request["messages"][0]["content"]] == TRICKY_TEXTS
    assert [data for _, data in read.response["events"]] == TRICKY_TEXTS
    # Half a character (a JavaScript string cut inside an emoji) is not UTF-8: it becomes U+FFFD.
    assert texts_of(read.response["body"]) == [*TRICKY_TEXTS, "half \ufffd"]


def test_a_cassette_of_megabytes_is_written_fast_and_reads_back_exactly(tmp_path):
    # Above LARGE_CASSETTE_CHARS libyaml writes the file; every text still reads back as it was.
    from skilltest.replay.cassette import LARGE_CASSETTE_CHARS

    big = "line of a long answer: ünïcödé, tabs\there, ${{x}} & *refs\n" * 20_000
    assert len(big) > LARGE_CASSETTE_CHARS
    request = tricky_request()
    response = {
        "status": 200,
        "headers": {},
        "body": message_of([*TRICKY_TEXTS, "half \ud83e", big]),
        "events": [["e", t] for t in [*TRICKY_TEXTS, big]],
    }
    cassette = made_up_cassette(tmp_path / "c.yaml")
    for rep in range(2):  # the second repetition shares the request's parts with the first
        cassette.add(rep, Exchange(0, "model", fingerprint(request), request, response))
    cassette.save()
    for rep in range(2):
        read = Cassette.load(tmp_path / "c.yaml").repetitions[rep][0]
        assert [block["text"] for block in read.request["messages"][0]["content"]] == TRICKY_TEXTS
        assert [data for _, data in read.response["events"]] == [*TRICKY_TEXTS, big]
        assert texts_of(read.response["body"]) == [*TRICKY_TEXTS, "half \ufffd", big]
