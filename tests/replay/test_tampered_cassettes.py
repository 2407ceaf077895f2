"""A cassette edited into something no model sent is refused when it is read, with exit 2, the
file, the line, the place and the fix: negative token counts, a stop reason that is not text, an
answer that is not a message, another layer's cassette. A replay never reports what the model
could not have said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from skilltest.cli import main
from skilltest.errors import InputError
from skilltest.replay.cassette import Cassette
from tests.projects import demo_script, demo_suite, write_demo_project


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """The demo pressure suite recorded on the emulator at K=1."""
    project = tmp_path_factory.mktemp("demo")
    suite = write_demo_project(project, demo_suite(repetitions=1), demo_script("count_over_time"))
    # One run per arm decides nothing (exit 1): what matters here is the cassettes.
    assert main(["pressure", str(suite), "--record", str(project / "cassettes")]) in (0, 1)
    return project


def tamper(project: Path, change) -> Path:
    path = project / "cassettes" / "demo" / "aggregate" / "with_skill.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def body(data):
    return data["repetitions"][0]["exchanges"][0]["response"]["body"]


CASES = [
    (
        "negative tokens",
        lambda d: body(d)["usage"].update(input_tokens=-5),
        "#/repetitions/0/exchanges/0/response/body/usage/input_tokens: -5 is less than the "
        "minimum of 0",
    ),
    (
        "a stop reason that is a number",
        lambda d: body(d).update(stop_reason=7),
        "#/repetitions/0/exchanges/0/response/body/stop_reason: 7 is not of type 'string', 'null'",
    ),
    (
        "an answer that is not a message",
        lambda d: d["repetitions"][0]["exchanges"][0]["response"].update(body="hello"),
        "#/repetitions/0/exchanges/0/response/body: 'hello' is not of type 'object', 'null'",
    ),
    (
        "a scenarios cassette",
        lambda d: d.update(layer="scenarios"),
        "a scenarios cassette, not a pressure one: it was recorded by `skilltest scenarios`",
    ),
]


@pytest.mark.parametrize(("change", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_tampered_cassette_ends_the_replay_with_exit_2(
    recorded, tmp_path, capsys, change, message
):
    import shutil

    project = shutil.copytree(recorded, tmp_path / "project")
    path = tamper(project, change)
    code = main(["pressure", str(project / "demo.yaml"), "--replay", str(project / "cassettes")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"skilltest: error: {path}:" in err
    assert message in err
    assert "re-record the cassette with --record DIR" in err or "folder of their own" in err
    assert "Traceback" not in err


STREAM = {
    "schema_version": 1,
    "layer": "scenarios",
    "suite": "s.yaml",
    "skill": "k",
    "scenario": "x",
    "arm": "with_skill",
    "repetitions": [
        {
            "rep": 0,
            "exchanges": [
                {
                    "step": 0,
                    "channel": "model",
                    "fingerprint": "sha256:" + "0" * 64,
                    "request": {},
                    "response": {"status": 200, "headers": {}, "body": None, "events": []},
                }
            ],
        }
    ],
}


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (
            ["message_start", json.dumps({"message": {"usage": {"input_tokens": -1}}})],
            "input_tokens -1 in the message_start event is not an integer >= 0",
        ),
        (
            ["message_delta", json.dumps({"delta": {"stop_reason": 3}, "usage": {}})],
            "stop_reason 3 in the message_delta event is not text",
        ),
        (["message_delta", "{not json"], "the message_delta event's data is not JSON"),
        (
            ["message_delta", json.dumps({"usage": {"output_tokens": 2.5}})],
            "output_tokens 2.5 in the message_delta event is not an integer >= 0",
        ),
    ],
)
def test_a_tampered_stream_is_refused_at_its_event(tmp_path, event, message):
    data = json.loads(json.dumps(STREAM))
    data["repetitions"][0]["exchanges"][0]["response"]["events"] = [["ping", "{}"], event]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(InputError) as refused:
        Cassette.load(path)
    assert str(refused.value).startswith(f"{path}:")
    assert f"#/repetitions/0/exchanges/0/response/events/1: {message}" in str(refused.value)
