"""What a run saw never acts on the terminal: control characters are printed as escapes.

A model that answers with an escape sequence (clear the screen, retitle the window, the 8-bit
CSI), a carriage return that would overwrite the verdict, or a bidirectional override is shown
as text by every command: the pressure table's ``answer:`` lines, ``skilltest show`` of the
run's trace, error messages that quote a file.
"""

from __future__ import annotations

import io
import json
import re

import pytest

from skilltest.cli import main
from skilltest.cli.terminal import SafeStream, terminal_text
from tests.projects import demo_script, demo_suite, write_demo_project

HOSTILE = "\x1b[2J\x1b]0;T\x07\x9b6n\rPASS\u202eevil"
"""Clear the screen, set the window title, ask the terminal for the cursor (8-bit CSI), return
to the line's start to print over it, then reverse what follows."""
SHOWN = "\\u001b[2J\\u001b]0;T\\u0007\\u009b6n\\u000dPASS\\u202eevil"

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_control_characters_become_visible_escapes():
    assert terminal_text(HOSTILE) == SHOWN
    assert (
        terminal_text("tabs\tand\nlines stay; ünïcödé too") == "tabs\tand\nlines stay; ünïcödé too"
    )


def test_json_printed_through_the_terminal_stays_json():
    stream = io.StringIO()
    SafeStream(stream).write(json.dumps({"answer": HOSTILE}, ensure_ascii=False))
    assert not RAW.search(stream.getvalue())
    assert json.loads(stream.getvalue()) == {"answer": HOSTILE}


def test_a_hostile_answer_is_printed_as_text_by_pressure_and_show(tmp_path, capsys):
    # The YAML escapes \e, \a, \x9b, \r and \u202e put the raw characters in the answer.
    yaml_text = "\\e[2J\\e]0;T\\a\\x9b6n\\rPASS\\u202eevil"
    suite = write_demo_project(tmp_path, demo_suite(repetitions=4), demo_script(yaml_text))
    code = main(["pressure", str(suite), "--output-dir", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert code == 1  # the answer lacks count_over_time
    assert not RAW.search(out + err)
    # The answer line is one line: the carriage return is a space there.
    assert "  answer: \\u001b[2J\\u001b]0;T\\u0007\\u009b6n PASS\\u202eevil" in out.splitlines()

    trace = tmp_path / "out" / "demo" / "aggregate" / "with-skill-1.trace.jsonl"
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert HOSTILE in [event.get("text") for event in events]  # the trace keeps what was said
    assert main(["show", str(trace)]) == 0
    out, err = capsys.readouterr()
    assert not RAW.search(out + err)
    assert "\\u001b[2J\\u001b]0;T\\u0007\\u009b6n" in out


def test_an_error_quoting_a_file_prints_no_control_character(tmp_path, capsys):
    suite = tmp_path / "s.yaml"
    suite.write_text('skill: demo\nscenarios:\n  - id: "a\\e[2Jb"\n    prompt: p\n')
    assert main(["validate", str(suite)]) == 2
    out, err = capsys.readouterr()
    assert not RAW.search(out + err)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_the_streams_are_restored_after_a_command(stream, capsys):
    import sys

    before = getattr(sys, stream)
    main(["--version"])
    assert getattr(sys, stream) is before
