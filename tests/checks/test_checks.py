"""Outcome checks: read from a suite with their place in errors, evaluated against a finished
run in a real working directory (files, a real command, patterns, tool calls, a judge)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from skilltest.checks.evaluate import RunView, evaluate, snapshot
from skilltest.checks.judge import JUDGE_MARK, JudgeModel, judge_prompt, parse_vote
from skilltest.checks.model import Judge, Match, Vote, describe, parse_checks
from skilltest.errors import InputError, SuiteError
from skilltest.transcript import ToolCall, Transcript, Usage
from tests.answers import ListedAnswers

WHERE = "suite.yaml#/scenarios/0/checks"


def checks(*entries: dict[str, Any]) -> Any:
    return parse_checks(list(entries), WHERE)


def run_of(*calls: ToolCall, answer: str = "Done.", subagent: str = "") -> Transcript:
    texts = (subagent, answer) if subagent else (answer,)
    return Transcript(source="test", tool_calls=calls, assistant_text=texts, answer_text=(answer,))


def evaluate_now(found: Any, view: RunView, *, with_skill: bool = True, judge: Any = None) -> Any:
    return asyncio.run(evaluate(found, view, with_skill=with_skill, judge=judge))


# --- reading --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"file_exist": {"path": "a"}}, f"{WHERE}/0/file_exist: unknown check 'file_exist'"),
        ({"file_exists": {}}, f"{WHERE}/0/file_exists/path: the file_exists check needs path"),
        (
            {"file_exists": {"path": "../etc/passwd"}},
            f"{WHERE}/0/file_exists/path: '../etc/passwd' leaves the run's working directory",
        ),
        (
            {"file_matches": {"path": "a", "pattern": "x", "match": "some"}},
            f"{WHERE}/0/file_matches/match: 'some' is not a match mode",
        ),
        (
            {"command": {"run": "true", "timeout": 5}},
            f"{WHERE}/0/command/timeout: unknown field 'timeout' of a command check",
        ),
        (
            {"tool_used": {"tool": "Bash", "min": 3, "max": 1}},
            f"{WHERE}/0/tool_used/max: max 1 is below min 3",
        ),
        (
            {"judge": {"criteria": "ok", "focus": "everything"}},
            f"{WHERE}/0/judge/focus: 'everything' is not something a judge reads",
        ),
        (
            {"final_answer": {"pattern": "(x"}},
            f"{WHERE}/0/final_answer/pattern: invalid regular expression '(x'",
        ),
        ({"command": {"run": "true", "arm": "without"}}, f"{WHERE}/0/command/arm: 'without'"),
        ([{"file_exists": {"path": "a"}}], f"{WHERE}/0: a check is a mapping with one key"),
    ],
)
def test_a_bad_check_names_its_place_and_the_fix(entry, message):
    with pytest.raises(InputError) as caught:
        checks(entry)
    assert str(caught.value).startswith(message)
    assert "\n  fix: " in str(caught.value)


def test_two_checks_of_one_name_are_refused():
    with pytest.raises(SuiteError, match="two checks are named 'file_exists a'"):
        checks({"file_exists": {"path": "a"}}, {"file_exists": {"path": "a", "veto": True}})


@pytest.mark.parametrize(
    ("text", "found", "passes"),
    [
        ("contains", 1, True),
        ("contains", 0, False),
        ("not_contains", 0, True),
        ("not_contains", 2, False),
        ("count:2", 2, True),
        ("count:2", 3, False),
        ("count:0", 0, True),
    ],
)
def test_match_modes(text, found, passes):
    assert Match.parse(text, WHERE).decides(found) is passes


@pytest.mark.parametrize(
    ("entry", "described"),
    [
        ({"file_exists": {"path": "NOTES.md"}}, "NOTES.md exists"),
        ({"file_exists": {"path": "tmp", "exists": False}}, "tmp does not exist"),
        (
            {"file_matches": {"path": "a.py", "pattern": "x", "match": "not_contains"}},
            "a.py does not match x",
        ),
        (
            {"files_match": {"pattern": "TODO", "match": "count:0"}},
            "the files the run created or changed matches TODO exactly 0 time(s)",
        ),
        ({"final_answer": {"pattern": "done"}}, "the final answer matches done"),
        ({"trace_matches": {"pattern": "pytest"}}, "the run's tool calls and text matches pytest"),
        ({"mock_calls_match": {"pattern": "get"}}, "the calls to MCP mocks matches get"),
        ({"command": {"run": "make test"}}, "make test exits with 0 within 60 s"),
        ({"tool_used": {"tool": "Bash", "min": 1, "max": 3}}, "Bash called 1-3 time(s)"),
        (
            {"tool_used": {"tool": "Bash", "input_match": "pytest"}},
            "Bash called at least 1 time(s) with input matching pytest",
        ),
        ({"tool_order": {"before": "Read", "after": "Edit"}}, "Read before Edit"),
        (
            {"judge": {"criteria": "Names the service.", "votes": 5, "focus": {"file": "a.md"}}},
            "a judge model (5 votes, reading a.md): Names the service.",
        ),
    ],
)
def test_reports_describe_what_each_check_asks(entry, described):
    [check] = checks(entry)
    assert describe(check) == described


# --- evaluating ----------------------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "README.md").write_text("untouched\n")
    return folder


def test_file_checks_read_the_workspace_as_the_run_left_it(workdir):
    before = snapshot(workdir)
    (workdir / "NOTES.md").write_text("## Summary\nThe checkout service fails.\nTODO later\n")
    view = RunView(workdir, run_of(), before=before)
    found = evaluate_now(
        checks(
            {"file_exists": {"path": "NOTES.md"}},
            {"file_exists": {"path": "secrets.txt", "exists": False}},
            {"file_matches": {"path": "NOTES.md", "pattern": "^## Summary", "match": "contains"}},
            {"file_matches": {"path": "missing.md", "pattern": ".", "match": "not_contains"}},
            {"files_match": {"pattern": "TODO", "match": "not_contains"}},
            {"files_match": {"pattern": "untouched", "match": "count:0"}},
        ),
        view,
    )
    assert [(r.name, r.passed, r.evidence) for r in found] == [
        ("file_exists NOTES.md", True, "NOTES.md exists"),
        ("file_exists secrets.txt", True, "secrets.txt does not exist"),
        (
            "file_matches NOTES.md",
            True,
            "matched in NOTES.md: '## Summary The checkout service fails. T…'",
        ),
        ("file_matches missing.md", False, "missing.md is missing"),
        (
            "files_match 'TODO' not_contains",
            False,
            "matched in 1 changed file(s) (NOTES.md): '…y The checkout service fails. TODO later '",
        ),
        # README.md did not change, so it is not among the run's files.
        ("files_match 'untouched' count:0", True, "0 match(es) in 1 changed file(s) (expected 0)"),
    ]


def test_a_command_runs_in_the_workspace_without_credentials(workdir):
    (workdir / "test_ok.sh").write_text('test -f NOTES.md && test -z "$ANTHROPIC_API_KEY"\n')
    env = {"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-ant-secret-value-0123456789"}
    found = checks(
        {"command": {"run": "bash test_ok.sh"}}, {"command": {"run": "exit 3", "exit_code": 3}}
    )
    view = RunView(workdir, run_of(), env=env)
    assert [r.passed for r in evaluate_now(found, view)] == [False, True]
    (workdir / "NOTES.md").write_text("x")
    first = evaluate_now(found, view)[0]
    assert (first.passed, first.evidence) == (True, "exit 0 (expected 0)")


def test_a_command_past_its_time_limit_fails_and_is_killed_with_its_children(workdir):
    # The command and its child in the background would each sleep ten minutes; the length,
    # with a fraction of its own, tells them from any other process.
    length = f"600.{time.time_ns() % 10**9:09d}"
    script = f"sleep {length} & sleep {length}"
    found = checks({"command": {"run": script, "timeout_s": 0.5}})
    started = time.monotonic()
    [result] = evaluate_now(found, RunView(workdir, run_of(), env={"PATH": "/usr/bin:/bin"}))
    assert time.monotonic() - started < 300  # cut at its limit, not waited for
    assert (result.passed, result.evidence) == (False, "still running after 0.5s; killed")
    assert running(f"sleep {length}") == []


def running(command: str) -> list[int]:
    """The live processes whose command line is ``command`` (an ended one, not yet reaped,
    is not live)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if cmdline == command and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def test_answer_trace_and_tool_checks_read_what_happened(workdir):
    calls = (
        ToolCall("1", "Read", {"file_path": "app.log"}, result="ERROR x"),
        ToolCall("2", "Bash", {"command": "pytest -q"}, result="1 failed", is_error=True),
        ToolCall("3", "Edit", {"file_path": "app.py"}, result="ok"),
        ToolCall("4", "Bash", {"command": "pytest -q"}, result="1 passed"),
        ToolCall("5", "Write", {"file_path": "x"}, result="denied", is_error=True, refused=True),
    )
    view = RunView(workdir, run_of(*calls, answer="Fixed; tests pass.", subagent="internal note"))
    found = evaluate_now(
        checks(
            {"final_answer": {"pattern": "(?i)tests pass"}},
            {"final_answer": {"pattern": "internal note"}},
            {"trace_matches": {"pattern": "pytest", "match": "count:2"}},
            {"tool_used": {"tool": "Bash", "input_match": "pytest", "min": 1, "max": 2}},
            {"tool_used": {"tool": "Write"}},
            {"tool_order": {"before": "Read", "after": {"tool": "Edit", "input_match": "app.py"}}},
            {"tool_order": {"before": "Edit", "after": "Read"}},
        ),
        view,
    )
    assert [(r.passed, r.evidence) for r in found] == [
        (True, "matched in the final answer: 'Fixed; tests pass.'"),
        (False, "no match in the final answer"),
        (True, "2 match(es) in the trace (expected 2)"),
        (True, "Bash called 2x (expected 1..2)"),
        (False, "Write called 0x (expected 1..∞)"),
        (True, "Read (call 1) precedes Edit(app.py) (call 3)"),
        (False, "Edit (call 3) does not precede Read (call 1)"),
    ]


def test_with_only_checks_skip_the_arm_without_the_skill(workdir):
    found = checks(
        {"file_exists": {"path": "README.md", "arm": "with", "name": "only with"}},
        {"file_exists": {"path": "README.md"}},
    )
    view = RunView(workdir, run_of())
    assert len(evaluate_now(found, view, with_skill=True)) == 2
    assert [r.name for r in evaluate_now(found, view, with_skill=False)] == [
        "file_exists README.md"
    ]


# --- the judge -----------------------------------------------------------------------------------


PASS = '{"verdict": "pass", "reason": "It names checkout."}'
FAIL = '{"verdict": "fail", "reason": "No service named."}'


def judged(*answers: str | None, votes: int = 3, **spec: Any) -> tuple[Any, ListedAnswers]:
    judge = ListedAnswers(*answers, usage=Usage(input_tokens=100, output_tokens=10))
    found = checks(
        {"judge": {"criteria": "The summary names the failing service.", "votes": votes, **spec}}
    )
    calls = (
        ToolCall("1", "Skill", {"skill": "probe"}, result="loaded"),
        ToolCall("2", "Bash", {"command": "ls"}, result="a"),
    )
    view = RunView(Path("."), run_of(*calls, answer="checkout is failing"))
    [result] = evaluate_now(found, view, judge=JudgeModel(judge, "claude-judge"))
    return result, judge


def test_the_majority_of_votes_decides_and_a_split_is_said():
    result, judge = judged(PASS, FAIL, PASS)
    assert result.passed
    assert result.evidence == (
        "2 pass, 1 fail of 3 vote(s) (split vote); agreement 67%; e.g. 'It names checkout.'"
    )
    assert result.tokens == {"input": 300, "output": 30}
    assert [v.verdict for v in result.votes] == ["pass", "fail", "pass"]
    request = judge.requests[0]
    assert request.system is not None and request.system.startswith(JUDGE_MARK)
    assert request.model == "claude-judge"
    assert "The summary names the failing service." in request.prompt
    assert "checkout is failing" in request.prompt


def test_a_tie_fails_and_answers_without_a_verdict_are_no_votes():
    result, _ = judged(PASS, "I think so.", FAIL, votes=3)
    assert not result.passed
    assert result.evidence.startswith(
        "1 pass, 1 fail of 3 vote(s) (split vote); agreement 50%; 1 gave no verdict"
    )


def test_a_judge_whose_every_call_failed_is_an_error_not_a_failure():
    result, _ = judged(None, None, votes=2)
    assert result.error == "every judge call failed: model API error: HTTP 529"


def test_the_judge_never_sees_the_arm_nor_the_skill_loading():
    _, judge = judged(PASS, votes=1, focus="trace")
    prompt = judge.requests[0].prompt
    assert '"command": "ls"' in prompt
    assert "Skill" not in prompt and "probe" not in prompt
    for label in ("with-skill", "without-skill", "with_skill", "baseline"):
        assert label not in prompt


@pytest.mark.parametrize(
    ("text", "vote"),
    [
        (PASS, Vote("pass", "It names checkout.")),
        ("  FAIL: nothing named", Vote("fail", "FAIL: nothing named")),
        (
            "```json\n" + json.dumps({"verdict": "FAIL", "reason": "no"}) + "\n```",
            Vote("fail", "no"),
        ),
        ("maybe", Vote(None, "no verdict in the answer: 'maybe'")),
    ],
)
def test_votes_are_read_from_json_or_a_first_word(text, vote):
    assert parse_vote(text) == vote


def test_a_judge_reads_a_file_when_asked(tmp_path):
    (tmp_path / "NOTES.md").write_text("the checkout service")
    [check] = checks({"judge": {"criteria": "names it", "focus": {"file": "NOTES.md"}}})
    assert isinstance(check, Judge)
    prompt = judge_prompt(check, RunView(tmp_path, run_of()))
    assert "The file NOTES.md:\n<run>\nthe checkout service\n</run>" in prompt


class _SlowJudge:
    """Answers PASS after a pause, counting how many calls are in flight at once."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0

    async def run_turn(self, request: Any) -> Transcript:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        await asyncio.sleep(0.05)
        self.in_flight -= 1
        return Transcript(source="judge", assistant_text=(PASS,))

    async def aclose(self) -> None:
        pass


def test_a_run_s_judge_votes_and_judge_checks_are_asked_side_by_side():
    judge = _SlowJudge()
    found = checks(
        {"judge": {"criteria": "Names the service.", "votes": 3}},
        {"final_answer": {"pattern": "checkout"}},
        {"judge": {"criteria": "Says what failed.", "votes": 3}},
    )
    view = RunView(Path("."), run_of(answer="checkout is failing"))
    results = evaluate_now(found, view, judge=JudgeModel(judge, "claude-judge"))
    # In the checks' order, every vote cast, all six in flight at once.
    assert [r.kind for r in results] == ["judge", "final_answer", "judge"]
    assert all(r.passed for r in results)
    assert [len(r.votes) for r in results if r.kind == "judge"] == [3, 3]
    assert judge.most == 6


# --- python_assertion (waza's code grader) --------------------------------------------------------


def test_a_python_assertion_sees_the_run_as_wazas_code_grader_does(workdir):
    call = ToolCall(id="1", name="Bash", input={"command": "ls"}, result="boom", is_error=True)
    found = checks(
        {"python_assertion": {"expression": "'tests pass' in output.lower()"}},
        {
            "python_assertion": {
                "expression": "tool_calls[0]['name'] == 'Bash' and len(errors) == 1"
            }
        },
        {"python_assertion": {"expression": "'NOTES.md' in outcome['files']"}},
        {"python_assertion": {"expression": "open('/etc/passwd')"}},
    )
    (workdir / "NOTES.md").write_text("x")
    view = RunView(workdir, run_of(call, answer="Fixed; tests pass."))
    results = evaluate_now(found, view)
    assert [(r.passed, r.evidence) for r in results] == [
        (True, "'tests pass' in output.lower() is true"),
        (True, "tool_calls[0]['name'] == 'Bash' and len(errors) == 1 is true"),
        (True, "'NOTES.md' in outcome['files'] is true"),
        # No builtins but waza's few: the eval's code cannot open files.
        (False, "open('/etc/passwd') raised NameError: name 'open' is not defined"),
    ]
    assert describe(found[0]) == "'tests pass' in output.lower() is true (Python, within 60 s)"


def test_a_python_assertion_past_its_time_limit_fails_and_is_killed(workdir):
    found = checks({"python_assertion": {"expression": "10 ** 10 ** 9 > 0", "timeout_s": 0.5}})
    started = time.monotonic()
    [result] = evaluate_now(found, RunView(workdir, run_of()))
    assert time.monotonic() - started < 60
    assert (result.passed, result.evidence) == (False, "still running after 0.5s; killed")


def test_a_python_assertion_that_is_not_an_expression_is_refused_where_it_is_written():
    with pytest.raises(SuiteError) as caught:
        checks({"python_assertion": {"expression": "x = 1"}})
    assert str(caught.value).startswith(
        f"{WHERE}/0/python_assertion/expression: 'x = 1' is not a Python expression"
    )
