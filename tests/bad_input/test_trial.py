"""Hostile inputs given to the command line, as a person or a CI job would give them: each ends
with its documented exit code and a message naming the file, without hanging, with no
traceback, and writes nothing outside the run's own folders.

Every case runs ``python -m skilltest`` in a fresh folder with its own HOME and TMPDIR, so what
a command writes can be seen whole.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.bad_input.commands import clean_env, skilltest
from tests.projects import demo_script, demo_suite, write_demo_project


@dataclass(frozen=True)
class Case:
    """One hostile input: how to lay it out, the command, what it must end with."""

    name: str
    setup: Callable[[Path], list[str]]
    """Writes the files into the folder; returns the command's arguments."""
    exit_code: int
    message: str
    """What stdout or stderr must hold (``{dir}`` is the folder)."""
    writes: tuple[str, ...] = ()
    """What the command may write in the folder (globs), beside the files of the setup."""


def fifo(root: Path, name: str) -> Path:
    path = root / name
    os.mkfifo(path)
    return path


def deep(root: Path, name: str, line: bool = False) -> Path:
    nested = "[" * 100_000 + "]" * 100_000
    text = '{"type": "assistant", "message": ' + nested + "}\n" if line else nested
    (root / name).write_text(text)
    return root / name


def demo(root: Path) -> Path:
    return write_demo_project(root, demo_suite(repetitions=1), demo_script("count_over_time"))


REPO = Path(__file__).resolve().parents[2]
SCORE = ["score", "--scenario", str(REPO / "tests" / "scenarios" / "lgtm.yaml"), "--id",
         "investigate-error-spike", "--skills-dir", str(REPO / "skills")]  # fmt: skip
"""``skilltest score`` with a scenario of the example suite; the transcript comes last."""


CASES = [
    Case("validate /dev/zero", lambda r: ["validate", "/dev/zero"], 2,
         "/dev/zero: cannot read the file: it is a character device, not a regular file"),
    Case("score /dev/zero", lambda r: [*SCORE, "/dev/zero"], 2,
         "/dev/zero: cannot read the transcript: it is a character device"),
    Case("show /dev/zero", lambda r: ["show", "/dev/zero"], 2, "it is a character device"),
    Case("report /dev/zero", lambda r: ["report", "/dev/zero"], 2,
         "/dev/zero: cannot read the results file: it is a character device"),
    Case("gate /dev/zero", lambda r: ["gate", "/dev/zero"], 2, "it is a character device"),
    Case("compare /dev/zero", lambda r: ["compare", "/dev/zero", "/dev/zero"], 2,
         "it is a character device"),
    Case("triggers --description-file /dev/zero",
         lambda r: ["triggers", str(demo(r).parent), "--description-file", "/dev/zero"], 2,
         "/dev/zero: cannot read the description file: it is a character device"),
    Case("validate a FIFO", lambda r: ["validate", str(fifo(r, "s.yaml"))], 2,
         "{dir}/s.yaml: cannot read the file: it is a named pipe (FIFO), not a regular file"),
    Case("pressure on a FIFO suite", lambda r: ["pressure", str(fifo(r, "s.yaml"))], 2,
         "it is a named pipe (FIFO)"),
    Case("report on a FIFO", lambda r: ["report", str(fifo(r, "r.json"))], 2,
         "it is a named pipe (FIFO)"),
    Case("show a FIFO", lambda r: ["show", str(fifo(r, "t.jsonl"))], 2, "named pipe"),
    Case("score a FIFO", lambda r: [*SCORE, str(fifo(r, "t.ndjson"))], 2, "named pipe"),
    Case("report JSON 100,000 deep", lambda r: ["report", str(deep(r, "r.json"))], 2,
         "the results file is nested deeper than 200 levels"),
    Case("gate JSON 100,000 deep", lambda r: ["gate", str(deep(r, "r.json"))], 2,
         "nested deeper than 200 levels"),
    Case("compare JSON 100,000 deep", lambda r: ["compare", str(deep(r, "a.json")),
         str(deep(r, "b.json"))], 2, "nested deeper than 200 levels"),
    Case("show JSON 100,000 deep", lambda r: ["show", str(deep(r, "t.jsonl"))], 2,
         "line 1 is not JSON"),
    Case("score a transcript line 100,000 deep",
         lambda r: [*SCORE, str(deep(r, "t.ndjson", line=True))], 1,
         "lgtm/investigate-error-spike: score 0.00"),
    Case("-j 100000 on two runs", lambda r: ["pressure", str(demo(r)), "-j", "100000"], 1,
         "demo/aggregate"),
    Case("pressure --resume-batch /dev/zero",
         lambda r: ["pressure", str(demo(r)), "--resume-batch", "/dev/zero"], 2,
         "/dev/zero: cannot read the resume file: it is a character device"),
    Case("pressure --resume-batch a FIFO",
         lambda r: ["pressure", str(demo(r)), "--resume-batch", str(fifo(r, "b.json"))], 2,
         "{dir}/b.json: cannot read the resume file: it is a named pipe (FIFO)"),
    Case("pressure --resume-batch JSON 100,000 deep",
         lambda r: ["pressure", str(demo(r)), "--resume-batch", str(deep(r, "b.json"))], 2,
         "the resume file is nested deeper than 200 levels"),
]  # fmt: skip


def snapshot(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*")}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_hostile_input_ends_as_documented(case: Case, tmp_path: Path) -> None:
    root, home, temp = tmp_path / "work", tmp_path / "home", tmp_path / "tmp"
    for folder in (root, home, temp):
        folder.mkdir()
    argv = case.setup(root)
    before = snapshot(tmp_path)
    done = skilltest(argv, root, clean_env(tmp_path))
    said = done.stdout + done.stderr
    assert done.returncode == case.exit_code, said
    assert case.message.format(dir=root) in said
    assert "Traceback" not in said
    written = snapshot(tmp_path) - before
    allowed = {Path("work") / glob for glob in case.writes}
    assert {p for p in written if not any(p.match(str(a)) for a in allowed)} == set()
