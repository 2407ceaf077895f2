"""The recorder: each run's repetition goes into its cassette as the run ends, also when an
interrupt stops the writing."""

from __future__ import annotations

import pytest

from skilltest.errors import InputError
from skilltest.replay.cassette import Cassette
from skilltest.replay.proxy import RecordedExchange
from skilltest.replay.recorder import CassetteKey, Recorder

KEY = CassetteKey("lgtm", "spike", "with_skill")


def answer(text: str) -> RecordedExchange:
    body = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Error spike?"}],
    }
    response = {
        "status": 200,
        "headers": {"content-type": "application/json"},
        "body": {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 9, "output_tokens": 4},
        },
    }
    return RecordedExchange("run", "POST", "/v1/messages", body, response)


def texts(cassette: Cassette) -> dict[int, str]:
    return {
        rep: exchanges[0].response["body"]["content"][0]["text"]
        for rep, exchanges in cassette.repetitions.items()
    }


def test_a_run_whose_writing_was_interrupted_is_written_by_flush(tmp_path, monkeypatch):
    recorder = Recorder(tmp_path, layer="pressure", model="claude-sonnet-5-5")
    for rep in range(3):
        recorder.begin(KEY, rep)
        recorder.add(KEY, rep, answer(f"answer {rep}"))
    recorder.finish(KEY, 0, suite="suite.yaml")

    save = Cassette.save

    def interrupted(self: Cassette, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Cassette, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        recorder.finish(KEY, 1, suite="suite.yaml")  # the signal came while writing
    monkeypatch.setattr(Cassette, "save", save)
    assert texts(Cassette.load(recorder.path_for(KEY))) == {0: "answer 0"}

    assert recorder.flush() == [recorder.path_for(KEY)]
    # Repetition 2 has not ended (its run was still going): it is not written.
    assert texts(Cassette.load(recorder.path_for(KEY))) == {0: "answer 0", 1: "answer 1"}
    assert recorder.flush() == []


def test_a_run_whose_writing_failed_is_not_written_again(tmp_path):
    recorder = Recorder(tmp_path, layer="scenarios")
    (tmp_path / "lgtm" / "spike").mkdir(parents=True)
    recorder.path_for(KEY).write_text("schema_version: 1\nrepetitions: [\n")  # broken by hand
    recorder.begin(KEY, 0)
    recorder.add(KEY, 0, answer("answer 0"))
    with pytest.raises(InputError, match="not valid YAML"):
        recorder.finish(KEY, 0, suite="suite.yaml")
    assert recorder.flush() == []


def test_another_agents_runs_are_not_recorded_into_a_cassette_of_one_agent(tmp_path):
    def record(agent: str | None, rep: int) -> None:
        recorder = Recorder(tmp_path, layer="scenarios", agent=agent, cli_version="1.18.33")
        recorder.begin(KEY, rep)
        recorder.add(KEY, rep, answer("Aggregate first."))
        recorder.finish(KEY, rep, suite="tests/scenarios/lgtm.yaml")

    record("opencode", 0)
    path = Recorder(tmp_path, layer="scenarios").path_for(KEY)
    assert Cassette.load(path).agent == "opencode"
    assert "\nagent: opencode\ncli_version: 1.18.33\n" in path.read_text()

    with pytest.raises(InputError) as refused:
        record(None, 1)
    assert str(refused.value).startswith(
        f"{path}: {path} holds runs of opencode; this run is claude-code's"
    )
    assert refused.value.fix == "record each agent into a folder of its own"
    # The repetition recorded again by the same agent replaces its own.
    record("opencode", 0)
    assert sorted(Cassette.load(path).repetitions) == [0]
