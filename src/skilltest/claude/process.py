"""Running one conversation with the real ``claude`` CLI.

A run is one process in its own process group: when it exceeds its timeout, when a line it
printed says that going on is pointless (:attr:`Invocation.stop_on`, e.g.
:func:`unrecoverable_api_error`), or when the suite is interrupted, the whole group is stopped
and what it printed so far is kept. Once a run is over, nothing it started lives on: the
commands its Bash tool ran in sessions of their own are found by the mark in their environment
(:func:`skilltest.groups.kill_marked`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..groups import KILL_GRACE_S, MARK, kill_marked, new_mark, signal_group, stop_group

ORPHAN_GRACE_S = 1.0
"""How long a tool the CLI left behind may keep its output open once the CLI has exited."""

CHUNK = 1024 * 1024
"""Bytes read from the CLI's stdout at a time."""

UNRECOVERABLE_STATUSES = frozenset({401, 403})
"""HTTP statuses of the model API that no retry fixes (a missing, wrong or unauthorised key)."""

StopCheck = Callable[[dict[str, Any]], str | None]
"""Reads one stdout event; a returned reason stops the run."""


@dataclass(frozen=True)
class Invocation:
    """Everything needed to start one conversation."""

    argv: tuple[str, ...]
    """The command line, binary first."""
    cwd: Path
    """The working directory."""
    env: Mapping[str, str]
    """The whole environment (nothing is inherited)."""
    timeout_s: float
    """Wall-time limit for the conversation."""
    follow_ups: tuple[str, ...] = ()
    """User messages sent through stdin (``--input-format stream-json``) after each result; the
    first message is then also sent on stdin."""
    first_message: str | None = None
    """The first user message when it goes through stdin; ``None`` when it is in ``argv``."""
    stop_on: StopCheck | None = None
    """Called with every stdout event (a JSON object); the first reason it returns stops the
    process group, and the output keeps what was printed up to then
    (:attr:`ProcessOutput.stopped_reason`)."""
    on_start: Callable[[], object] | None = None
    """Called once the process has started."""


@dataclass(frozen=True)
class ProcessOutput:
    """What one ``claude`` process printed and how it ended."""

    stdout: str
    """Everything on stdout (stream-json lines)."""
    stderr: str
    """Everything on stderr."""
    exit_code: int | None
    """The exit status; ``None`` when the process was killed by us."""
    timed_out: bool
    """Whether the run exceeded its time limit."""
    duration_s: float
    """Wall time."""
    start_error: str | None = None
    """Why the process could not be started at all."""
    stopped_reason: str | None = None
    """Why :attr:`Invocation.stop_on` stopped the run; ``None`` when it was not stopped."""
    turn_starts: tuple[float, ...] = ()
    """When each user message was sent (``time.monotonic()``): the prompt first, then each
    follow-up; a fake service's calls are placed in the user turn they happened in by these."""
    at_limit: str | None = None
    """With :attr:`timed_out`: what stdout held when the time limit fell. What follows it is
    what the CLI printed while it was being stopped (the commands it started are stopped
    with it, and their results are printed as they die: ``Exit code 137``)."""


def user_message_line(text: str) -> str:
    """One ``--input-format stream-json`` line carrying a user message."""
    message = {"type": "user", "message": {"role": "user", "content": text}}
    return json.dumps(message, ensure_ascii=False) + "\n"


def unrecoverable_api_error(event: Mapping[str, Any]) -> str | None:
    """A :data:`StopCheck`: the CLI retrying a model request that failed with HTTP 401 or 403.

    The CLI retries those like an overload (ten times over about three minutes by default), but
    a key that is missing, wrong or not allowed stays so: waiting only turns an authentication
    error into a time-out.
    """
    if event.get("type") != "system" or event.get("subtype") != "api_retry":
        return None
    status = event.get("error_status")
    if status not in UNRECOVERABLE_STATUSES:
        return None
    error = event.get("error")
    kind = f" ({error})" if isinstance(error, str) and error else ""
    return f"the model API answered HTTP {status}{kind}; retrying cannot fix it"


def _event(line: bytes) -> dict[str, Any] | None:
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None


def _is_turn_result(event: Mapping[str, Any]) -> bool:
    """Whether an event ends a user turn (a background subagent's extra result does not)."""
    if event.get("type") != "result":
        return False
    origin = event.get("origin")
    return not (isinstance(origin, dict) and origin.get("kind") == "task-notification")


async def _exited(process: asyncio.subprocess.Process) -> None:
    """Returns once the process has exited. (``Process.wait`` also waits for its pipes to
    close, which a tool the process started may hold open after it is gone.)"""
    while process.returncode is None:
        await asyncio.sleep(0.1)


async def run_conversation(invocation: Invocation) -> ProcessOutput:
    """Runs one ``claude`` process to the end, feeding follow-up turns after each result.

    Never raises for a failing process: a crash, a timeout, a stop asked for by
    :attr:`Invocation.stop_on` or a missing binary come back in the :class:`ProcessOutput`.
    Cancellation (Ctrl-C) kills the process group and propagates.
    """
    started = time.monotonic()
    uses_stdin = invocation.first_message is not None
    mark = new_mark()
    try:
        process = await asyncio.create_subprocess_exec(
            *invocation.argv,
            cwd=invocation.cwd,
            env={**invocation.env, MARK: mark},
            stdin=asyncio.subprocess.PIPE if uses_stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcessOutput("", "", None, False, time.monotonic() - started, str(exc))
    if invocation.on_start is not None:
        invocation.on_start()

    stdout_chunks: list[bytes] = []
    stderr_chunks: list[bytes] = []
    pending = list(invocation.follow_ups)
    stopping: list[asyncio.Future[None]] = []
    stopped_reason: str | None = None
    turn_starts: list[float] = [] if uses_stdin else [started]

    async def send(text: str) -> None:
        assert process.stdin is not None
        turn_starts.append(time.monotonic())
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            process.stdin.write(user_message_line(text).encode())
            await process.stdin.drain()

    def close_stdin() -> None:
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()

    async def read_stdout() -> None:
        # Chunks, not readline(): a line longer than any buffer limit (a huge tool result) is
        # kept whole, and the end of each turn is still seen.
        assert process.stdout is not None
        pending_line = bytearray()
        while chunk := await process.stdout.read(CHUNK):
            stdout_chunks.append(chunk)
            searched = len(pending_line)  # no newline before this point
            pending_line += chunk
            while (end := pending_line.find(b"\n", searched)) >= 0:
                line = bytes(pending_line[: end + 1])
                del pending_line[: end + 1]
                searched = 0
                await on_line(line)

    async def on_line(line: bytes) -> None:
        nonlocal stopped_reason
        watch = invocation.stop_on is not None and stopped_reason is None
        # Only lines that can end a turn are parsed for the turn logic; a stop check sees all.
        if not watch and not (uses_stdin and b'"result"' in line):
            return
        event = _event(line)
        if event is None:
            return
        if watch and invocation.stop_on is not None:
            stopped_reason = invocation.stop_on(event)
            if stopped_reason is not None:
                close_stdin()
                # Stopped beside the reader, which drains the pipe until the group is gone.
                stopping.append(asyncio.ensure_future(stop_group(process)))
                return
        if uses_stdin and stopped_reason is None and _is_turn_result(event):
            if pending:
                await send(pending.pop(0))
            else:
                close_stdin()

    async def read_stderr() -> None:
        assert process.stderr is not None
        while chunk := await process.stderr.read(65536):
            stderr_chunks.append(chunk)

    async def converse() -> None:
        if invocation.first_message is not None:
            await send(invocation.first_message)
        readers: asyncio.Future[Any] = asyncio.gather(read_stdout(), read_stderr())
        exited: asyncio.Future[Any] = asyncio.ensure_future(_exited(process))
        for each in (readers, exited):  # an outcome nobody waits for is not an error to log
            each.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            await asyncio.wait((readers, exited), return_when=asyncio.FIRST_COMPLETED)
            if not readers.done():
                # The CLI is gone (killed, crashed) while a tool it started still holds its
                # pipes: what is left of its output comes at once, or the tool is killed.
                try:
                    await asyncio.wait_for(asyncio.shield(readers), ORPHAN_GRACE_S)
                except TimeoutError:
                    signal_group(process, signal.SIGKILL)
            await readers
        finally:
            readers.cancel()
            exited.cancel()
        await process.wait()
        for stop in stopping:
            await stop

    timed_out = False
    at_limit: bytes | None = None
    task = asyncio.ensure_future(converse())
    try:
        await asyncio.wait_for(asyncio.shield(task), invocation.timeout_s)
    except TimeoutError:
        timed_out = True
        at_limit = b"".join(stdout_chunks)
        await stop_group(process)
        try:  # the readers finish once the pipes close
            await asyncio.wait_for(task, KILL_GRACE_S * 2)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.shield(stop_group(process))
        raise
    finally:
        close_stdin()
        for stop in stopping:
            if not stop.done():
                await asyncio.shield(stop)
        # Commands the CLI started in sessions of their own outlive its group. Finding them
        # reads every process's environment: in a thread, while the loop goes on.
        await asyncio.shield(asyncio.to_thread(kill_marked, mark))
    return ProcessOutput(
        stdout=b"".join(stdout_chunks).decode("utf-8", errors="replace"),
        stderr=b"".join(stderr_chunks).decode("utf-8", errors="replace"),
        exit_code=None if timed_out or stopped_reason is not None else process.returncode,
        timed_out=timed_out,
        duration_s=time.monotonic() - started,
        stopped_reason=stopped_reason,
        turn_starts=tuple(turn_starts),
        at_limit=None if at_limit is None else at_limit.decode("utf-8", errors="replace"),
    )


def build_argv(
    binary: Path,
    *,
    prompt: str,
    multi_turn: bool,
    max_turns: int,
    allowed_tools: Sequence[str],
    disallowed_tools: Sequence[str],
    model: str | None,
    isolation: Sequence[str],
    plugin_dirs: Sequence[Path] = (),
    mcp_config: Path | None = None,
    resume: Path | None = None,
    add_dirs: Sequence[Path] = (),
    append_system_prompt: str | None = None,
) -> tuple[str, ...]:
    """The ``claude -p`` command line for one conversation.

    ``resume`` continues a saved session (a ``.jsonl`` file: ``--resume`` reads it wherever it
    is); ``add_dirs`` are folders the agent may also read (``--add-dir``);
    ``append_system_prompt`` is added to the CLI's system prompt.

    ``plugin_dirs`` are loaded with the CLI's own plugin loading (``--plugin-dir``: skills,
    agents, commands, hooks); ``mcp_config`` names the JSON file of the run's MCP servers
    (``--mcp-config``), the only servers the isolation's ``--strict-mcp-config`` lets in (it
    also keeps a plugin's own servers out, which is why they travel in that file too).

    With follow-up turns the prompt goes through stdin (``--input-format stream-json``), so that
    each later message joins the same conversation. ``--allowedTools`` takes a variadic list, so
    the prompt comes last, after ``--``.

    ``--forward-subagent-text``: the CLI prints a background subagent's text anyway, but a
    foreground subagent's only with this flag; with it, what a subagent says is in the
    transcript whichever way the model chose to start it.
    """
    argv = [str(binary), "-p"]
    if multi_turn:
        argv += ["--input-format", "stream-json"]
    argv += ["--output-format", "stream-json", "--verbose", "--forward-subagent-text"]
    argv += ["--max-turns", str(max_turns)]
    if allowed_tools:
        argv += ["--allowedTools", ",".join(allowed_tools)]
    if disallowed_tools:
        argv += ["--disallowedTools", ",".join(disallowed_tools)]
    if model:
        argv += ["--model", model]
    for folder in plugin_dirs:
        argv += ["--plugin-dir", str(folder)]
    if mcp_config is not None:
        argv += ["--mcp-config", str(mcp_config)]
    if resume is not None:
        argv += ["--resume", str(resume)]
    for folder in add_dirs:
        argv += ["--add-dir", str(folder)]
    if append_system_prompt:
        argv += ["--append-system-prompt", append_system_prompt]
    argv += list(isolation)
    if not multi_turn:
        # After ``--`` a prompt that starts with a dash is still the prompt.
        argv += ["--", prompt]
    return tuple(argv)
