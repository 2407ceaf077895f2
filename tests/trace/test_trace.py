"""Traces of scenario runs (fake claude binary): written beside each transcript, listed in the
results file, free of secrets, shown by ``skilltest show``; bad traces exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from skilltest.trace.record import fixture_checksum, write_trace

KEY = "sk-test-trace-0123456789abcdefghij"

SUITE = """\
skill: demo
repetitions: 1
scenarios:
  - id: uses-lgtm
    prompt: echo
    workspace: ../../fixture
    expected: {required_patterns: ["lgtm loki"], anti_patterns: ["rm -rf"]}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    (tmp_path / "fixture").mkdir()
    (tmp_path / "fixture" / "notes.txt").write_text("checkout errors\n")
    (tmp_path / "tests" / "scenarios").mkdir(parents=True)
    (tmp_path / "tests" / "scenarios" / "demo.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    # The fake agent puts this key in its Bash command: it must not reach the trace.
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return tmp_path


def run_suite(fake_claude: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["scenarios", "--claude", str(fake_claude), "--results", "results.json"])
    return code, capsys.readouterr().out


def test_each_run_writes_a_trace_listed_in_the_results_file(project, fake_claude, capsys):
    code, out = run_suite(fake_claude, capsys)
    assert code == 1, out  # one run per arm cannot decide: inconclusive

    (scenario,) = read_results(project / "results.json", "scenarios")["scenarios"]
    traces = {run["arm"]: Path(run["trace"]) for run in scenario["runs"]}
    assert traces == {
        "with_skill": Path("tests/scenarios/output/demo/uses-lgtm/with-skill-0.trace.jsonl"),
        "without_skill": Path("tests/scenarios/output/demo/uses-lgtm/without-skill-0.trace.jsonl"),
    }
    text = traces["with_skill"].read_text()
    lines = [json.loads(line) for line in text.splitlines()]

    head = lines[0]
    assert head["schema_version"] == 1
    assert (head["suite"], head["scenario"], head["arm"], head["rep"]) == (
        "demo",
        "uses-lgtm",
        "with_skill",
        0,
    )
    assert head["cli_version"] == "2.1.328" and head["model"] == "fake-model"
    assert head["toolkit_version"] and head["prompts"] == ["echo"]
    assert head["fixture_checksum"] == fixture_checksum(project / "fixture", [])
    assert head["fixture_checksum"].startswith("sha256:")

    events = [line for line in lines if line["kind"] == "event"]
    assert [e["n"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events] == [
        "user",
        "model_response",
        "tool_call",
        "model_response",
        "assistant_text",
        "result",
    ]
    call = events[2]
    assert call["name"] == "Bash" and call["result"].startswith("HOME=")
    # The agent holds the run's placeholder key, never the real one, and the trace redacts both.
    assert "[REDACTED:ANTHROPIC_API_KEY_PLACEHOLDER]" in call["input"]["command"]

    outcome = lines[-1]
    assert outcome["kind"] == "outcome"
    assert outcome["score"] == 1.0
    assert outcome["components"]["required_patterns"] == 1.0
    assert outcome["cost_usd"] == 0.001 and outcome["retries"] == 0
    assert outcome["tokens"] == {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}

    for path in traces.values():
        trace = path.read_text()
        assert KEY not in trace and KEY[7:19] not in trace


def test_cost_per_passing_run_in_results_and_summary(project, fake_claude, capsys):
    _, out = run_suite(fake_claude, capsys)
    (scenario,) = read_results(project / "results.json", "scenarios")["scenarios"]
    # The fake CLI reports $0.001 per run and both runs pass.
    assert scenario["with_skill"]["cost_per_pass"] == pytest.approx(0.001)
    assert scenario["without_skill"]["cost_per_pass"] == pytest.approx(0.001)
    assert (
        "cost per passing run: with-skill $0.0010 (1 passing run); "
        "without-skill $0.0010 (1 passing run)"
    ) in out


def test_show_prints_the_timeline(project, fake_claude, capsys):
    run_suite(fake_claude, capsys)
    trace = "tests/scenarios/output/demo/uses-lgtm/with-skill-0.trace.jsonl"
    assert main(["show", trace]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "demo/uses-lgtm  with-skill run 1"
    assert out[1].startswith(
        "model fake-model, claude 2.1.328, skilltest 0.1.0, claude backend, 20"
    )
    assert not out[2].startswith("offline")  # a live backend (here a fake of the real CLI)
    assert out[2].startswith("fixture sha256:")
    assert "1. user (turn 1): echo" in out
    tool = next(line for line in out if line.startswith("3. tool Bash "))
    assert "[REDACTED:ANTHROPIC_API_KEY_PLACEHOLDER]" in tool and " -> HOME=" in tool
    assert "5. assistant: done" in out
    assert "6. result: success after 1 turn(s)" in out
    assert out[-3:] == [
        "score 1.00",
        "components: required_patterns 1.00, anti_patterns 1.00",
        out[-1],
    ]
    assert out[-1].startswith("tokens: 0 in, 0 out; cost $0.0010; duration ")
    assert out[-1].endswith(" s; 0 retries")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such trace"),
        ("\udcff", ":1: not UTF-8: byte 0xff cannot be decoded"),
        ("", "the trace is empty"),
        ('{"schema_version": 1}\nnot json\n', ":2: line 2 is not JSON"),
        ('{"schema_version": 1}\n[1, 2]\n', ":2: line 2 is not a JSON object"),
        ('{"kind": "header"}\n', ":1: line 1 has no schema_version; this skilltest reads"),
        ('{"schema_version": 99}\n', ":1: line 1 has schema_version 99; this skilltest reads"),
    ],
)
def test_a_bad_trace_exits_2_with_the_place_and_a_fix(tmp_path, capsys, content, message):
    path = tmp_path / "run.trace.jsonl"
    if content is not None:
        path.write_bytes(content.encode("utf-8", "surrogateescape"))
    assert main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"skilltest: error: {path}" in err and message in err
    assert "\n  fix: " in err and "Traceback" not in err


def test_write_trace_redacts_credentials_and_the_runs_own_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    world_token = "world-agent-token-abcdefghijklmnop"

    def run_redactor(text: str) -> str:
        return text.replace(world_token, "[REDACTED:WORLD_AGENT_TOKEN]")

    lines = [
        {"schema_version": 1, "kind": "header"},
        {"kind": "event", "n": 1, "type": "http", "body": {"note": world_token, "key": KEY}},
    ]
    text = write_trace(tmp_path / "t.trace.jsonl", lines, run_redactor).read_text()
    assert world_token not in text and KEY not in text
    assert "[REDACTED:WORLD_AGENT_TOKEN]" in text and "[REDACTED:ANTHROPIC_API_KEY]" in text


def test_fixture_checksum_changes_with_a_fixture_edit(tmp_path):
    (tmp_path / "w").mkdir()
    (tmp_path / "w" / "a.txt").write_text("one")
    world = tmp_path / "world.yaml"
    world.write_text("services: []\n")
    before = fixture_checksum(tmp_path / "w", [world])
    assert before == fixture_checksum(tmp_path / "w", [world])
    (tmp_path / "w" / "a.txt").write_text("two")
    assert fixture_checksum(tmp_path / "w", [world]) != before
    assert fixture_checksum(None, []) is None


def test_markdown_and_html_give_the_cost_per_passing_run(project, fake_claude, capsys):
    options = ["--results", "results.json", "--markdown", "summary.md", "--report", "r.html"]
    code = main(["scenarios", "--claude", str(fake_claude), *options])
    capsys.readouterr()
    assert code == 1
    line = (
        "cost per passing run: with skill $0.0010 (1 passing run); "
        "without skill $0.0010 (1 passing run)"
    )
    assert line in (project / "summary.md").read_text()
    assert f'<p class="counts cost">{line}</p>' in (project / "r.html").read_text()


@pytest.mark.parametrize(
    ("costs", "passes", "shown"),
    [
        ([], 2, "with-skill cost unknown (no run reported one)"),
        ([0.5, 0.25], 0, "with-skill no passing run ($0.7500 spent)"),
        ([0.0, 0.0], 2, "with-skill $0 (the backend reported a cost of 0)"),
        ([0.5, 0.25], 3, "with-skill $0.2500 (3 passing runs)"),
    ],
)
def test_cost_per_pass_says_what_is_known(costs, passes, shown):
    from skilltest.report.text import cost_per_pass

    assert cost_per_pass("with-skill", costs, passes) == shown


@pytest.mark.parametrize(
    ("costs", "passes", "shown"),
    [
        (
            [0.5, 0.25],
            0,
            "with-skill no passing run (nothing spent: the emulator charges nothing; "
            "$0.7500 at list prices)",
        ),
        (
            [0.5, 0.25],
            3,
            "with-skill nothing spent: the emulator charges nothing ($0.2500 at list prices; "
            "3 passing runs)",
        ),
        ([], 2, "with-skill cost unknown (no run reported one)"),
    ],
)
def test_an_offline_runs_cost_says_nothing_was_spent(costs, passes, shown):
    from skilltest.report.text import cost_per_pass

    assert cost_per_pass("with-skill", costs, passes, offline=True) == shown


def test_a_trace_that_cannot_be_written_is_a_warning_on_the_run(
    project, fake_claude, capsys, monkeypatch
):
    import skilltest.scenarios.runs as run_module

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(run_module, "write_trace", full_disk)
    code, out = run_suite(fake_claude, capsys)
    assert code == 1, out  # inconclusive, as with the trace: the runs are still scored
    (scenario,) = read_results(project / "results.json", "scenarios")["scenarios"]
    for run in scenario["runs"]:
        assert run["score"] == 1.0 and run["trace"] is None
        assert run["warnings"] == ["trace not written: [Errno 28] No space left on device"]
