"""Running one claude process: command line, follow-up turns, timeouts that kill the group."""

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import replace
from pathlib import Path

import pytest

from skilltest.claude.binary import find_claude
from skilltest.claude.process import (
    Invocation,
    build_argv,
    run_conversation,
    unrecoverable_api_error,
    user_message_line,
)
from skilltest.errors import ClaudeNotFoundError


def invocation(binary: Path, cwd: Path, prompt: str, **kwargs) -> Invocation:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), **kwargs.pop("env", {})}
    turns = kwargs.pop("turns", ())
    return Invocation(
        argv=(str(binary), "-p", "--output-format", "stream-json", "--verbose", "--", prompt)
        if not turns
        else (str(binary), "-p", "--input-format", "stream-json"),
        cwd=cwd,
        env=env,
        timeout_s=kwargs.pop("timeout_s", 30.0),
        first_message=prompt if turns else None,
        follow_ups=tuple(turns[1:]),
    )


def assert_gone(pid: int) -> None:
    """Waits for a process to end (a zombie nobody reaps counts as ended), a minute at most."""
    status = Path(f"/proc/{pid}/status")
    for _ in range(600):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if status.exists() and "\nState:\tZ" in status.read_text():
            return
        time.sleep(0.1)
    pytest.fail(f"process {pid} survived")


CONVERSATION = {
    "prompt": "-looks like a flag",
    "multi_turn": False,
    "max_turns": 8,
    "allowed_tools": ("Bash", "Bash(git *)"),
    "disallowed_tools": ("WebFetch",),
    "model": "haiku",
    "isolation": ("--setting-sources", "project"),
}
"""The options of one conversation, as the scenario runner passes them to ``build_argv``."""


def test_command_line_puts_the_prompt_last_after_a_double_dash():
    argv = build_argv(Path("/bin/claude"), **CONVERSATION)
    assert argv == (
        "/bin/claude",
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--forward-subagent-text",
        "--max-turns",
        "8",
        "--allowedTools",
        "Bash,Bash(git *)",
        "--disallowedTools",
        "WebFetch",
        "--model",
        "haiku",
        "--setting-sources",
        "project",
        "--",
        "-looks like a flag",
    )


def test_multi_turn_sends_the_prompt_on_stdin():
    argv = build_argv(Path("claude"), **{**CONVERSATION, "prompt": "first", "multi_turn": True})
    assert argv[:4] == ("claude", "-p", "--input-format", "stream-json")
    assert "first" not in argv and "--" not in argv
    assert user_message_line("first") == (
        '{"type": "user", "message": {"role": "user", "content": "first"}}\n'
    )


def test_a_conversation_runs_to_its_result(fake_claude, tmp_path):
    output = asyncio.run(run_conversation(invocation(fake_claude, tmp_path, "echo")))
    assert output.exit_code == 0
    assert not output.timed_out
    assert output.stdout.count("\n") == 5
    assert '"subtype": "success"' in output.stdout


def test_follow_up_turns_are_sent_after_each_result(fake_claude, tmp_path):
    turns = ("first question", "second question", "third question")
    output = asyncio.run(run_conversation(invocation(fake_claude, tmp_path, turns[0], turns=turns)))
    assert output.exit_code == 0
    assert "turn 1: first question" in output.stdout
    assert "turn 2: second question" in output.stdout
    assert "turn 3: third question" in output.stdout
    assert output.stdout.count('"type": "result"') == 3


def test_a_line_larger_than_any_buffer_is_kept_whole_and_the_next_turn_still_goes(
    fake_claude, tmp_path
):
    turns = ("big 3.5", "after the big one")
    invocation_ = invocation(fake_claude, tmp_path, turns[0], turns=turns)
    output = asyncio.run(run_conversation(replace(invocation_, timeout_s=30)))
    assert not output.timed_out
    assert output.exit_code == 0
    assert "turn 2: after the big one" in output.stdout
    big = next(line for line in output.stdout.splitlines() if "t-big" in line)
    assert big.count("x") == int(3.5 * 1024 * 1024)


def test_timeout_kills_the_process_group_and_keeps_the_output(fake_claude, tmp_path):
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    output = asyncio.run(
        run_conversation(
            invocation(
                fake_claude,
                tmp_path,
                "hang",
                timeout_s=5.0,  # time enough, on a busy machine too, to start and print
                env={"FAKE_CHILD_PID_FILE": str(pid_file)},
            )
        )
    )
    assert time.monotonic() - started < 150  # the fake sleeps 300 s: cut at the limit
    assert output.timed_out
    assert output.exit_code is None
    assert '"name": "Bash"' in output.stdout  # what it printed before the timeout is kept
    assert_gone(int(pid_file.read_text()))  # the child of the killed process is gone too


def test_a_stop_check_stops_the_process_group_at_the_first_line_it_names(fake_claude, tmp_path):
    pid_file = tmp_path / "child.pid"
    seen: list[str] = []

    def stop_on(event: dict) -> str | None:
        seen.append(str(event.get("subtype")))
        return unrecoverable_api_error(event)

    started = time.monotonic()
    output = asyncio.run(
        run_conversation(
            replace(
                invocation(
                    fake_claude, tmp_path, "auth", env={"FAKE_CHILD_PID_FILE": str(pid_file)}
                ),
                stop_on=stop_on,
            )
        )
    )
    # The fake retries a 401 for ten minutes; the stop ends it at the first retry.
    assert time.monotonic() - started < 300
    assert output.stopped_reason == (
        "the model API answered HTTP 401 (authentication_failed); retrying cannot fix it"
    )
    assert (output.exit_code, output.timed_out) == (None, False)
    assert seen[:2] == ["init", "api_retry"]
    assert '"error_status": 401' in output.stdout  # what it printed up to then is kept
    assert_gone(int(pid_file.read_text()))


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (
            {"type": "system", "subtype": "api_retry", "error_status": 403, "error": "forbidden"},
            "the model API answered HTTP 403 (forbidden); retrying cannot fix it",
        ),
        (
            {"type": "system", "subtype": "api_retry", "error_status": 401},
            "the model API answered HTTP 401; retrying cannot fix it",
        ),
        ({"type": "system", "subtype": "api_retry", "error_status": 529}, None),
        ({"type": "system", "subtype": "api_retry", "error_status": None}, None),
        ({"type": "assistant", "error_status": 401}, None),
    ],
)
def test_only_a_retried_401_or_403_is_unrecoverable(event: dict, reason: str | None):
    assert unrecoverable_api_error(event) == reason


def test_a_stop_check_that_never_fires_changes_nothing(fake_claude, tmp_path):
    turns = ("first question", "second question")
    base = invocation(fake_claude, tmp_path, turns[0], turns=turns)
    output = asyncio.run(run_conversation(replace(base, stop_on=unrecoverable_api_error)))
    assert (output.exit_code, output.stopped_reason) == (0, None)
    assert output.stdout.count('"type": "result"') == 2


def test_a_crash_comes_back_with_status_and_stderr(fake_claude, tmp_path):
    output = asyncio.run(run_conversation(invocation(fake_claude, tmp_path, "crash")))
    assert (output.exit_code, output.stdout) == (3, "")
    assert output.stderr == "fatal: something broke\n"


def test_a_binary_that_does_not_start(tmp_path):
    output = asyncio.run(run_conversation(invocation(tmp_path / "missing", tmp_path, "echo")))
    assert output.start_error is not None and "missing" in output.start_error


def test_cancelling_a_run_kills_its_process_group(fake_claude, tmp_path):
    pid_file = tmp_path / "child.pid"

    async def cancel_after_start() -> None:
        task = asyncio.ensure_future(
            run_conversation(
                invocation(
                    fake_claude, tmp_path, "hang", env={"FAKE_CHILD_PID_FILE": str(pid_file)}
                )
            )
        )
        for _ in range(1200):  # a minute at most
            if pid_file.exists():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_after_start())
    child = int(pid_file.read_text())
    assert_gone(child)


def test_a_second_cancel_while_a_run_is_stopping_kills_its_process_group(fake_claude, tmp_path):
    # The CLI ignores SIGTERM; the second Ctrl-C comes while the run waits for it to exit. The
    # event loop then closes without waiting: the group must not outlive it.
    pid_file = tmp_path / "claude.pid"

    async def cancel_twice() -> None:
        task = asyncio.ensure_future(
            run_conversation(
                invocation(fake_claude, tmp_path, "stubborn", env={"FAKE_PID_FILE": str(pid_file)})
            )
        )
        for _ in range(1200):  # a minute at most
            if pid_file.exists():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        await asyncio.sleep(0.3)  # stopping: SIGTERM sent and ignored
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(cancel_twice())
        assert_gone(int(pid_file.read_text()))
    finally:
        with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_find_claude_reads_the_version_and_warns_on_an_unknown_one(fake_claude, monkeypatch):
    known = find_claude(fake_claude)
    assert (known.version, known.known, known.warning) == ("2.1.328", True, None)
    other = fake_claude.with_name("claude-other")
    other.write_text(fake_claude.read_text().replace("exec", "FAKE_CLAUDE_VERSION=9.9.9 exec"))
    other.chmod(0o755)
    unknown = find_claude(other)
    assert (unknown.version, unknown.known) == ("9.9.9", False)
    assert unknown.warning is not None
    assert "version 9.9.9, not one of 2.1.328; running it anyway" in unknown.warning


def test_a_missing_binary_says_how_to_install_the_pinned_one(tmp_path):
    with pytest.raises(ClaudeNotFoundError) as caught:
        find_claude(tmp_path / "nope")
    assert "skilltest setup" in str(caught.value)


def test_a_killed_cli_does_not_wait_for_the_tool_it_left_running(fake_claude, tmp_path):
    # kill -9 of the CLI alone: its tool still holds the output pipe. The run ends about at once
    # (not when the tool would), with the CLI's status, and the tool is killed with it.
    pid_file, child_file = tmp_path / "claude.pid", tmp_path / "child.pid"
    env = {"FAKE_PID_FILE": str(pid_file), "FAKE_CHILD_PID_FILE": str(child_file)}

    async def kill_the_cli() -> tuple[object, float]:
        task = asyncio.ensure_future(
            run_conversation(invocation(fake_claude, tmp_path, "hang", env=env))
        )
        for _ in range(1200):  # a minute at most
            if pid_file.exists() and pid_file.read_text():
                break
            await asyncio.sleep(0.05)
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        killed = time.monotonic()
        output = await asyncio.wait_for(task, 200)
        return output, time.monotonic() - killed

    output, after = asyncio.run(kill_the_cli())
    assert output.exit_code == -signal.SIGKILL
    assert '"name": "Bash"' in output.stdout or '"name":"Bash"' in output.stdout
    assert after < 150  # the tool would have held it for 300 s
    assert_gone(int(child_file.read_text()))
