"""How output is read: a file line by line, a string without a copy, every format recognised."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from skilltest.transcript import Transcript
from skilltest.transcript.stream_json import load_transcript, parse_cli_output, parse_stream_json

from .test_stream_json import CC, INIT, assistant, corpus_files, lines, result, text, tool_result
from .test_stream_json import tool_use as use

BIG_RESULT = "".join(
    f"2025-06-01T12:00:{i % 60:02d}Z ERROR request failed\n" for i in range(25_000)
)
"""About 1 MB of a command's output: one tool result, on one line of its own."""


def big_transcript() -> str:
    """A stream-json output: a Bash call with a big result, then real events, 5 MB in all."""
    head = lines(INIT, assistant(use("t1", "Bash", command="cat app.log")))
    ordinary = (CC / "success_bash_tool_use.ndjson").read_text(encoding="utf-8")
    body = lines(tool_result("t1", BIG_RESULT), assistant(text("Found it.")), result())
    return head + body + ordinary * (4_000_000 // len(ordinary))


def traced(call: Callable[[], Transcript]) -> tuple[Transcript, int, int]:
    """The transcript, the peak of memory allocated while it was read and what it keeps."""
    gc.collect()
    tracemalloc.start()
    try:
        transcript = call()
        gc.collect()
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return transcript, peak, kept


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_a_file_reads_as_its_text_does(path: Path) -> None:
    assert load_transcript(path) == parse_cli_output(path.read_bytes().decode("utf-8"))


def test_a_big_file_is_read_one_line_at_a_time(tmp_path: Path) -> None:
    output = big_transcript()
    path = tmp_path / "big.ndjson"
    path.write_text(output, encoding="utf-8")
    longest = max(len(line) for line in output.split("\n"))

    transcript, peak, kept = traced(lambda: load_transcript(path))

    assert transcript.tool_calls[0].result == BIG_RESULT
    assert transcript.malformed_lines == 0
    assert len(output) > 4 * longest
    # Reading the whole file (and splitting it) would take several times the file's size.
    assert peak < 2 * longest + kept + 1_000_000, (peak, longest, kept)


@pytest.mark.parametrize("parse", [parse_cli_output, parse_stream_json])
def test_a_big_string_is_read_without_a_second_copy(parse: Callable[[str], Transcript]) -> None:
    output = big_transcript()
    longest = max(len(line) for line in output.split("\n"))

    transcript, peak, kept = traced(lambda: parse(output))

    assert transcript.tool_calls[0].result == BIG_RESULT
    assert peak < 2 * longest + kept + 1_000_000, (peak, longest, kept)


READ = {
    "file": lambda output, tmp_path: load_transcript(write(tmp_path, output)),
    "text": lambda output, tmp_path: parse_cli_output(output),
}


def write(folder: Path, output: str) -> Path:
    path = folder / "out.txt"
    path.write_bytes(output.encode("utf-8"))
    return path


EVENTS = [INIT, assistant(text("Hi.")), result()]


@pytest.mark.parametrize("how", READ)
@pytest.mark.parametrize(
    "output",
    [
        pytest.param(json.dumps(EVENTS), id="json-verbose"),
        pytest.param(json.dumps(EVENTS, indent=2) + "\n", id="json-verbose-indented"),
        pytest.param(lines(*EVENTS), id="stream-json"),
        pytest.param(lines(*EVENTS).replace("\n", "\r\n"), id="stream-json-crlf"),
        pytest.param("\n\n  " + lines(*EVENTS) + "\n \n", id="stream-json-blank-lines"),
    ],
)
def test_every_way_of_printing_the_events_reads_the_same(
    how: str, output: str, tmp_path: Path
) -> None:
    t = READ[how](output, tmp_path)

    assert (t.assistant_text, t.malformed_lines, t.error) == (("Hi.",), 0, None)
    assert t.session_id == "s-1"


@pytest.mark.parametrize("how", READ)
def test_only_a_newline_ends_a_line(how: str, tmp_path: Path) -> None:
    said = "one\u2028two\x85three\rfour"
    event = json.dumps(assistant(text(said)), ensure_ascii=False).replace(", ", ",\r ")
    t = READ[how](lines(INIT, event, result()), tmp_path)

    assert "\r" in event
    assert (t.assistant_text, t.malformed_lines) == ((said,), 0)


@pytest.mark.parametrize("how", READ)
@pytest.mark.parametrize(
    ("first", "malformed"),
    [
        ('{"type": "system", "subtype": "in', 1),  # cut inside a string
        ('{"type": "system",', 1),  # cut where the value would go on
        ("[", 1),
    ],
)
def test_a_broken_first_line_is_counted_and_the_rest_is_read(
    how: str, first: str, malformed: int, tmp_path: Path
) -> None:
    t = READ[how](lines(first, *EVENTS), tmp_path)

    assert (t.assistant_text, t.malformed_lines, t.error) == (("Hi.",), malformed, None)


@pytest.mark.parametrize("how", READ)
@pytest.mark.parametrize(
    ("output", "answer"),
    [
        ("{not json} is what the model said.\n", "{not json} is what the model said."),
        ("[1, 2]\nThe list above.\n", "[1, 2]\nThe list above."),
    ],
)
def test_text_that_is_not_events_is_the_plain_text_answer(
    how: str, output: str, answer: str, tmp_path: Path
) -> None:
    t = READ[how](output, tmp_path)

    assert (t.assistant_text, t.results, t.error) == ((answer,), (), None)
