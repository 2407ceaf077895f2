"""Hostile files and paths that used to break a run, be replaced, or be accepted although wrong:
output paths that are devices or named pipes, control bytes in YAML, huge integers, deep JSON,
over-long ids, files that are not skills, results files without their runs' fields, worlds
claiming the model API's host. Each ends with its documented exit code and a message naming the
file, the place and the fix, without hanging, with no traceback, and writes nothing outside the
run's own folders.

Every case runs ``python -m skilltest`` in a fresh folder with its own HOME and TMPDIR, as
``test_trial.py`` does.
"""

from __future__ import annotations

import fnmatch
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.bad_input.commands import clean_env, skilltest
from tests.bad_input.test_trial import demo, fifo, snapshot
from tests.report.documents import (
    IMPROVED,
    pressure_document,
    pressure_scenario,
    scenarios_document,
    triggers_document,
)

NULL_DEVICE = os.makedev(1, 3)
"""The device numbers of /dev/null: a node made with them in the test's folder is a device the
test may break (the bug replaced the device with a regular file)."""


@dataclass(frozen=True)
class Case:
    """One hostile input: how to lay it out, the command, what it must end with."""

    name: str
    setup: Callable[[Path], list[str]]
    """Writes the files into the folder; returns the command's arguments."""
    exit_code: int
    message: str
    """What stdout or stderr must hold (``{dir}`` is the folder)."""
    after: Callable[[Path], None] = lambda root: None
    """Checks the folder once the command ended (a FIFO is still a FIFO)."""
    writes: tuple[str, ...] = ()
    """What the command may write in the folder (globs), beside the files of the setup."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables set for the command (``{dir}`` is the folder)."""


def run_case(case: Case, tmp_path: Path) -> None:
    root, home, temp = tmp_path / "work", tmp_path / "home", tmp_path / "tmp"
    for folder in (root, home, temp):
        folder.mkdir()
    argv = case.setup(root)
    before = snapshot(tmp_path)
    env = clean_env(tmp_path, **{key: value.format(dir=root) for key, value in case.env.items()})
    done = skilltest(argv, root, env)
    said = done.stdout + done.stderr
    assert done.returncode == case.exit_code, said
    assert case.message.format(dir=root) in said, said
    assert "Traceback" not in said
    case.after(root)
    written = snapshot(tmp_path) - before
    # A glob's `*` spans folders here: `traces/**` allows every file under traces/.
    allowed = [f"work/{glob}" for glob in case.writes]
    assert {
        p for p in written if not any(fnmatch.fnmatch(p.as_posix(), a) for a in allowed)
    } == set()


# --- output paths ----------------------------------------------------------------------------


def device(root: Path, name: str) -> Path:
    """A character device like /dev/null, made in the test's folder (needs root's mknod)."""
    path = root / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, NULL_DEVICE)
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


def null_link(root: Path, name: str) -> Path:
    """A symbolic link to /dev/null: a write through it must leave both as they are."""
    path = root / name
    path.symlink_to("/dev/null")
    return path


def results(root: Path, name: str = "r.json") -> Path:
    """A pressure results file (the report, compare and merge commands read one)."""
    path = root / name
    scenario = pressure_scenario("aggregate", "steers", 3, 3, 3, (1.0, 0.3, 1.0))
    path.write_text(json.dumps(pressure_document(scenario)))
    return path


def still_fifo(name: str) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        assert stat.S_ISFIFO(os.lstat(root / name).st_mode), f"{name} was replaced"

    return check


def still_device(name: str) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        assert stat.S_ISCHR(os.lstat(root / name).st_mode), f"{name} was replaced"

    return check


def still_null_link(name: str) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        assert os.path.islink(root / name), f"{name} was replaced"
        assert stat.S_ISCHR(os.stat("/dev/null").st_mode)

    return check


def demo_with(
    option: str, make: Callable[[Path, str], Path], name: str
) -> Callable[[Path], list[str]]:
    return lambda r: ["pressure", str(demo(r)), option, str(make(r, name))]


def fifo_refused(name: str) -> str:
    return f"cannot write {{dir}}/{name}: it is a named pipe (FIFO), not a regular file"


def device_refused(name: str) -> str:
    return f"cannot write {{dir}}/{name}: it is a character device, not a regular file"


OUTPUT_CASES = [
    Case("pressure --results a FIFO", demo_with("--results", fifo, "r.json"), 2,
         "argument --results: " + fifo_refused("r.json"), still_fifo("r.json")),
    Case("pressure --junit a FIFO", demo_with("--junit", fifo, "j.xml"), 2,
         "argument --junit: " + fifo_refused("j.xml"), still_fifo("j.xml")),
    Case("pressure --markdown a FIFO", demo_with("--markdown", fifo, "s.md"), 2,
         "argument --markdown: " + fifo_refused("s.md"), still_fifo("s.md")),
    Case("pressure --report a FIFO", demo_with("--report", fifo, "r.html"), 2,
         "argument --report: " + fifo_refused("r.html"), still_fifo("r.html")),
    Case("pressure --results a device", demo_with("--results", device, "null"), 2,
         "argument --results: " + device_refused("null"), still_device("null")),
    Case("pressure --junit a link to /dev/null", demo_with("--junit", null_link, "j.xml"), 2,
         "argument --junit: " + device_refused("j.xml"), still_null_link("j.xml")),
    Case("scenarios --results a FIFO",
         lambda r: ["scenarios", str(demo(r)), "--results", str(fifo(r, "r.json"))], 2,
         "argument --results: " + fifo_refused("r.json"), still_fifo("r.json")),
    Case("triggers --junit a device",
         lambda r: ["triggers", str(demo(r).parent), "--junit", str(device(r, "null"))], 2,
         "argument --junit: " + device_refused("null"), still_device("null")),
    Case("merge -o a device",
         lambda r: ["merge", str(results(r)), "-o", str(device(r, "full"))], 2,
         "argument -o/--output: " + device_refused("full"), still_device("full")),
    Case("merge -o a FIFO",
         lambda r: ["merge", str(results(r)), "-o", str(fifo(r, "m.json"))], 2,
         "argument -o/--output: " + fifo_refused("m.json"), still_fifo("m.json")),
    Case("compare --markdown a FIFO",
         lambda r: ["compare", str(results(r)), str(results(r, "n.json")), "--markdown",
                    str(fifo(r, "c.md"))], 2,
         "argument --markdown: " + fifo_refused("c.md"), still_fifo("c.md")),
    Case("report --markdown a device",
         lambda r: ["report", str(results(r)), "--markdown", str(device(r, "null"))], 2,
         "argument --markdown: " + device_refused("null"), still_device("null")),
    Case("report --html a link to /dev/null",
         lambda r: ["report", str(results(r)), "--html", str(null_link(r, "r.html"))], 2,
         "argument --html/--report: " + device_refused("r.html"), still_null_link("r.html")),
    Case("GITHUB_STEP_SUMMARY a FIFO", lambda r: (fifo(r, "summary"), ["pressure", str(demo(r))])[1],
         2, "GITHUB_STEP_SUMMARY={dir}/summary: cannot write the file: it is a named pipe (FIFO)",
         still_fifo("summary"), env={"GITHUB_STEP_SUMMARY": "{dir}/summary"}),
]  # fmt: skip


@pytest.mark.parametrize("case", OUTPUT_CASES, ids=[case.name for case in OUTPUT_CASES])
def test_an_output_that_is_not_a_regular_file_is_refused_and_left_alone(
    case: Case, tmp_path: Path
) -> None:
    run_case(case, tmp_path)


def test_a_trace_that_is_a_fifo_is_refused_at_its_write(tmp_path: Path) -> None:
    """A file a run writes in a folder it was given (``--output-dir``) is checked as it is
    written: the run ends with exit 2 naming it, and the FIFO is left as it is."""
    trace = "traces/demo/aggregate/with-skill-1.trace.jsonl"

    def setup(root: Path) -> list[str]:
        (root / trace).parent.mkdir(parents=True)
        fifo(root, trace)
        return ["pressure", str(demo(root)), "--output-dir", "traces"]

    run_case(
        Case("pressure --output-dir with a FIFO in place of a trace", setup, 2,
             f"{trace}: cannot write the file: it is a named pipe (FIFO)",
             still_fifo(trace), writes=("traces/**",)),
        tmp_path,
    )  # fmt: skip


# --- compare --markdown ----------------------------------------------------------------------

BEACON = (
    "x`\n![b](https://evil.example/b.png) <img src=x onerror=alert(1)> [l](https://evil.example)"
)
"""An id that leaves a code span: a backtick, a new line, an image beacon, HTML and a link."""


def hostile_id_results(root: Path) -> list[str]:
    for name in ("old.json", "new.json"):
        scenario = pressure_scenario(BEACON, "steers", 3, 3, 3, (1.0, 0.3, 1.0))
        (root / name).write_text(json.dumps(pressure_document(scenario)))
    return ["compare", "old.json", "new.json", "--markdown", "c.md"]


def id_stays_code(root: Path) -> None:
    lines = (root / "c.md").read_text().splitlines()
    row = next(line for line in lines if "lgtm/x" in line)
    assert row.startswith(
        "| ``lgtm/x` ![b](https://evil.example/b.png) <img src=x onerror=alert(1)> "
        "[l](https://evil.example)`` | steers | steers |"
    )
    # Outside that one code span, nothing of the id is left to make a link, an image or HTML.
    assert not [line for line in lines if line != row and ("evil" in line or "<img" in line)]


def test_compare_markdown_keeps_a_hostile_id_in_its_code_span(tmp_path: Path) -> None:
    run_case(
        Case("compare --markdown with a backtick and a new line in an id", hostile_id_results,
             0, "wrote c.md", id_stays_code, writes=("c.md",)),
        tmp_path,
    )  # fmt: skip


# --- control bytes in YAML, numbers too long, JSON too deep, files that are not skills ------

REPO = Path(__file__).resolve().parents[2]


def with_byte(source: Path, byte: str, name: str) -> Callable[[Path], Path]:
    """``source`` copied into the folder with ``byte`` put in the middle of its third line."""

    def write(root: Path) -> Path:
        lines = source.read_text().splitlines(keepends=True)
        lines[2] = lines[2][:4] + byte + lines[2][4:]
        (root / name).write_text("".join(lines))
        return root / name

    return write


PRESSURE_SUITE = REPO / "tests" / "skill-pressure" / "lgtm.yaml"
SCENARIO_SUITE = REPO / "tests" / "scenarios" / "lgtm.yaml"
TRIGGER_SUITE = REPO / "tests" / "triggers" / "lgtm.yaml"
WORLD = REPO / "tests" / "world" / "worlds" / "tickets.yaml"


def demo_script_with_esc(root: Path) -> list[str]:
    suite = demo(root)
    text = (root / "model.yaml").read_text().replace("rules:", "rules: \x1b[31m", 1)
    (root / "model.yaml").write_text(text)
    return ["pressure", str(suite)]


def results_with_long_number(root: Path, name: str = "r.json") -> Path:
    path = results(root, name)
    path.write_text(path.read_text().replace('"k": 3', '"k": ' + "9" * 5000, 1))
    return path


def deep_plugin(root: Path) -> Path:
    (root / "p" / ".claude-plugin").mkdir(parents=True)
    (root / "p" / ".claude-plugin" / "plugin.json").write_text("[" * 100_000 + "]" * 100_000)
    return root / "p"


LONG_NUMBER = "r.json:1:{col}: the results file holds a number of more than 4300 digits"
COL = len(json.dumps(pressure_document(pressure_scenario("aggregate", "steers", 3, 3, 3,
          (1.0, 0.3, 1.0)))).split('"k": 3')[0]) + len('"k": ') + 1  # fmt: skip
"""Where the long number starts in the one-line results file."""

READ_CASES = [
    *(Case(f"validate a pressure suite with {label}",
           lambda r, b=byte: ["validate", str(with_byte(PRESSURE_SUITE, b, "s.yaml")(r))], 2,
           f"{{dir}}/s.yaml:3:5: character U+{ord(byte):04X} is not allowed in YAML")
      for label, byte in (("NUL", "\x00"), ("SOH", "\x01"), ("ESC", "\x1b"))),
    Case("validate a scenario suite with ESC",
         lambda r: ["validate", str(with_byte(SCENARIO_SUITE, "\x1b", "s.yaml")(r))], 2,
         "{dir}/s.yaml:3:5: character U+001B is not allowed in YAML"),
    Case("validate a trigger suite with NUL",
         lambda r: ["validate", str(with_byte(TRIGGER_SUITE, "\x00", "t.yaml")(r))], 2,
         "{dir}/t.yaml:3:5: character U+0000 is not allowed in YAML"),
    Case("world serve a world with SOH",
         lambda r: ["world", "serve", str(with_byte(WORLD, "\x01", "w.yaml")(r))], 2,
         "{dir}/w.yaml:3:5: character U+0001 is not allowed in YAML"),
    Case("pressure with a model script holding ESC", demo_script_with_esc, 2,
         "{dir}/model.yaml:3:8: character U+001B is not allowed in YAML"),
    Case("report a 5,000-digit number",
         lambda r: ["report", str(results_with_long_number(r))], 2, LONG_NUMBER.format(col=COL)),
    Case("gate a 5,000-digit number",
         lambda r: ["gate", str(results_with_long_number(r))], 2, LONG_NUMBER.format(col=COL)),
    Case("compare a 5,000-digit number",
         lambda r: ["compare", str(results(r, "old.json")), str(results_with_long_number(r))],
         2, LONG_NUMBER.format(col=COL)),
    Case("merge a 5,000-digit number",
         lambda r: ["merge", str(results_with_long_number(r)), "-o", "m.json"], 2,
         LONG_NUMBER.format(col=COL)),
    Case("lint a plugin.json 100,000 deep", lambda r: ["lint", str(deep_plugin(r))], 1,
         "p/.claude-plugin/plugin.json: nested too deeply to read"),
    Case("lint /dev/zero", lambda r: ["lint", "/dev/zero"], 2,
         "/dev/zero: not a skill folder or file: it is a character device"),
    Case("lint a FIFO", lambda r: ["lint", str(fifo(r, "SKILL.md"))], 2,
         "{dir}/SKILL.md: not a skill folder or file: it is a named pipe (FIFO)"),
]  # fmt: skip


@pytest.mark.parametrize("case", READ_CASES, ids=[case.name for case in READ_CASES])
def test_a_hostile_file_read_ends_as_documented(case: Case, tmp_path: Path) -> None:
    run_case(case, tmp_path)


# --- results files whose runs are empty or lack their fields --------------------------------


def empty_runs(layer: str, run: dict[str, object]) -> Callable[[Path], Path]:
    """A ``layer`` results file whose every scenario (or query) has the one run ``run``."""

    def write(root: Path, name: str = "r.json") -> Path:
        if layer == "triggers":
            document = triggers_document()
            for query in document["suites"][0]["queries"]:
                query["runs"] = [dict(run)]
        else:
            make = pressure_document if layer == "pressure" else scenarios_document
            scenario = (
                pressure_scenario("aggregate", "steers", 3, 3, 3, (1.0, 0.3, 1.0))
                if layer == "pressure"
                else IMPROVED
            )
            document = make({**scenario, "runs": [dict(run)]})
        (root / name).write_text(json.dumps(document))
        return root / name

    return write


READERS: dict[str, Callable[[Path], list[str]]] = {
    "report": lambda path: ["report", str(path)],
    "compare": lambda path: ["compare", str(path), str(path)],
    "gate": lambda path: ["gate", str(path), "--allow-offline"],
    "merge": lambda path: ["merge", str(path), "-o", "m.json"],
}
"""Every command that reads a results file, given one."""

RUNS = {
    "pressure": ("{}", "scenarios/0/runs/0: 'arm' is a required property"),
    "scenarios": ("{}", "scenarios/0/runs/0: 'arm' is a required property"),
    "triggers": ("{}", "suites/0/queries/0/runs/0: 'rep' is a required property"),
    "scenarios without rep": (
        '{"arm": "with_skill", "score": 1.0}',
        "scenarios/0/runs/0: 'rep' is a required property",
    ),
    "pressure with an arm of no layer": (
        '{"arm": "both", "rep": 0, "passed": true}',
        "scenarios/0/runs/0/arm: 'both' is not valid here: 'both' is not one of "
        "['with_skill', 'without_skill', 'previous']",
    ),
}
"""A layer's file (its name's first word), the run each of its scenarios has, what is said."""

EMPTY_RUN_CASES = [
    Case(f"{command} of {layer} results whose runs are {run}",
         lambda r, c=command, f=layer, x=run: READERS[c](
             empty_runs(f.split()[0], json.loads(x))(r)), 2, f"{{dir}}/r.json#/{said}")
    for command in READERS
    for layer, (run, said) in RUNS.items()
]  # fmt: skip


@pytest.mark.parametrize("case", EMPTY_RUN_CASES, ids=[case.name for case in EMPTY_RUN_CASES])
def test_a_results_file_with_empty_runs_is_refused_by_every_reader(
    case: Case, tmp_path: Path
) -> None:
    run_case(case, tmp_path)


def trace_with(root: Path, change: Callable[[list[dict[str, object]]], None]) -> list[str]:
    """A run's trace (written by a pressure run) changed by ``change``; ``show`` of it."""
    done = skilltest(["pressure", str(demo(root)), "--output-dir", "out"], root, clean_env(root))
    assert done.returncode == 1, done.stderr
    written = root / "out" / "demo" / "aggregate" / "with-skill-1.trace.jsonl"
    lines = [json.loads(line) for line in written.read_text().splitlines()]
    change(lines)
    (root / "t.trace.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return ["show", "t.trace.jsonl"]


SHOW_CASES = [
    Case("show a trace with an empty line object",
         lambda r: trace_with(r, lambda lines: lines.insert(1, {})), 2,
         "t.trace.jsonl:2: line 2 is not a header, event or outcome (its kind is missing)",
         writes=("out/**",)),
    Case("show a trace of only its header",
         lambda r: trace_with(r, lambda lines: lines.__delitem__(slice(1, None))), 2,
         "t.trace.jsonl: the trace has no outcome line", writes=("out/**",)),
]  # fmt: skip


@pytest.mark.parametrize("case", SHOW_CASES, ids=[case.name for case in SHOW_CASES])
def test_a_trace_with_an_empty_line_or_without_its_outcome_is_refused(
    case: Case, tmp_path: Path
) -> None:
    run_case(case, tmp_path)


# --- an id of 10,000 characters, which would name cassettes, traces and transcripts ----------

LONG_ID = "a" * 10_000

SCENARIO_SUITE_TEXT = """\
skill: demo
model_script: model.yaml
repetitions: 1
scenarios:
  - id: {id}
    prompt: "Error spike in checkout. How do you investigate?"
    expected: {{text_patterns: [count_over_time]}}
"""

TRIGGER_SUITE_TEXT = """\
skill: demo
model_script: model.yaml
queries:
  - id: {id}
    query: "Error spike in checkout. How do you investigate?"
    should_trigger: true
"""


def long_id(layer: str, *options: str) -> Callable[[Path], list[str]]:
    """A ``layer`` suite (of the demo project) whose one scenario or query has a 10,000-character
    id; the command that runs it with ``options``."""

    def setup(root: Path) -> list[str]:
        suite = demo(root)
        if layer == "pressure":
            suite.write_text(suite.read_text().replace("id: aggregate", f"id: {LONG_ID}"))
        else:
            text = SCENARIO_SUITE_TEXT if layer == "scenarios" else TRIGGER_SUITE_TEXT
            suite.write_text(text.format(id=LONG_ID))
        return [layer, str(suite), *options]

    return setup


def too_long(pointer: str) -> str:
    return f"{{dir}}/demo.yaml#/{pointer}/0/id: '{'a' * 78}… is too long"


LONG_ID_CASES = [
    *(Case(f"{layer} {' '.join(options)} with a 10,000-character id", long_id(layer, *options),
           2, too_long("queries" if layer == "triggers" else "scenarios"))
      for layer in ("pressure", "scenarios", "triggers")
      for options in (("--record", "cassettes"), ("--output-dir", "out"))),
    Case("validate a scenario suite with a 10,000-character id",
         lambda r: ["validate", long_id("scenarios")(r)[1]], 2, too_long("scenarios")),
]  # fmt: skip


@pytest.mark.parametrize("case", LONG_ID_CASES, ids=[case.name for case in LONG_ID_CASES])
def test_an_id_too_long_to_name_a_file_is_refused_where_it_is_written(
    case: Case, tmp_path: Path
) -> None:
    run_case(case, tmp_path)
