"""`skilltest show` checks a trace before printing it: a hand-edited line is refused with exit 2,
the file, the line, the place and what was expected, never a traceback part way through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from tests.projects import demo_script, demo_suite, write_demo_project


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("trace")
    suite = write_demo_project(folder, demo_suite(repetitions=1), demo_script("count_over_time"))
    main(["pressure", str(suite), "--output-dir", str(folder / "out")])
    return folder / "out" / "demo" / "aggregate" / "with-skill-1.trace.jsonl"


def edited(trace: Path, tmp_path: Path, kind: str, change) -> tuple[Path, int]:
    lines = [json.loads(line) for line in trace.read_text().splitlines()]
    number = next(n for n, line in enumerate(lines, start=1) if line.get("kind") == kind)
    change(lines[number - 1])
    path = tmp_path / "t.trace.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path, number


@pytest.mark.parametrize(
    ("kind", "change", "message"),
    [
        ("outcome", lambda o: o.update(score="high"),
         "#/score: 'high' is not valid here: 'high' is not of type 'number', 'null'"),
        ("outcome", lambda o: o.update(score=3), "#/score: 3 is greater than the maximum of 1"),
        ("event", lambda e: e.update(type="tool_call", name="Bash", input="rm -rf /"),
         "#/input: 'rm -rf /' is not valid here: 'rm -rf /' is not of type 'object', 'null'"),
        ("event", lambda e: e.update(text=5),
         "#/text: 5 is not valid here: 5 is not of type 'string'"),
        ("header", lambda h: h.update(rep=-1), "#/rep: -1 is less than the minimum of 0"),
    ],
    ids=["text score", "score above 1", "text tool input", "number text", "negative rep"],
)  # fmt: skip
def test_a_hand_edited_trace_is_refused_at_its_line(trace, tmp_path, capsys, kind, change, message):
    capsys.readouterr()
    path, number = edited(trace, tmp_path, kind, change)
    assert main(["show", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"skilltest: error: {path}:{number}#")
    assert message in err
    assert "Traceback" not in err and out == ""


def test_the_trace_as_written_shows(trace, capsys):
    capsys.readouterr()
    assert main(["show", str(trace)]) == 0
    assert "demo/aggregate  with-skill run 1" in capsys.readouterr().out
