"""Evaluating a run's checks once the agent has ended, in the run's own workspace.

:func:`evaluate` takes the scenario's checks and a :class:`RunView` (the working directory, the
files as they were before the run, the transcript, the environment the agent ran with) and
returns one :class:`~skilltest.checks.model.CheckResult` per check, in order. Files and patterns
are read here; a ``command`` runs in the working directory, with the run's environment (its
home, its temp folder and, in a controlled world, the world's proxy; never a credential), in a
process group of its own that is killed at its time limit; a ``judge`` asks the model through
:mod:`skilltest.checks.judge`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from skilltest.checks import plugin_eval
from skilltest.checks.model import (
    Check,
    CheckResult,
    Command,
    FileExists,
    FileMatches,
    FilesMatch,
    FinalAnswer,
    Judge,
    Match,
    MockCallsMatch,
    PatternCheck,
    PythonAssertion,
    ToolOrder,
    ToolRef,
    ToolUsed,
    TraceMatches,
)
from skilltest.errors import InputError
from skilltest.files import open_regular
from skilltest.groups import stop_group
from skilltest.patterns import Pattern, snippet
from skilltest.redact import CREDENTIAL_VARIABLES
from skilltest.transcript import ToolCall, Transcript
from skilltest.transcript.evidence import reads_the_skill

if TYPE_CHECKING:
    from skilltest.checks.judge import JudgeModel

MAX_FILE_BYTES = 1024 * 1024
"""The most of one file a check reads (the rest is left out, and said so)."""
MAX_FILES = 2000
"""The most files of the working directory a run's before-and-after comparison looks at."""
OUTPUT_SHOWN = 600
"""How much of a command's output its evidence keeps (the end, where errors are)."""

Snapshot = Mapping[str, tuple[int, int]]
"""A working directory's files: relative path -> (size, modification time in ns)."""


def snapshot(workdir: Path) -> dict[str, tuple[int, int]]:
    """The regular files under ``workdir`` (``.claude/`` and ``.git/`` left out), at most
    :data:`MAX_FILES`, with their size and modification time."""
    found: dict[str, tuple[int, int]] = {}
    for root, folders, files in os.walk(workdir):
        folders[:] = sorted(f for f in folders if f not in (".claude", ".git"))
        for name in sorted(files):
            path = Path(root) / name
            with contextlib.suppress(OSError):
                info = path.lstat()
                if path.is_file() and not path.is_symlink():
                    found[path.relative_to(workdir).as_posix()] = (info.st_size, info.st_mtime_ns)
            if len(found) >= MAX_FILES:
                return found
    return found


@dataclass(frozen=True)
class RunView:
    """What checks may look at in a finished run."""

    workdir: Path
    """The run's working directory, as the agent left it."""
    transcript: Transcript
    """The run's transcript."""
    before: Snapshot = field(default_factory=dict)
    """The working directory's files before the agent started."""
    env: Mapping[str, str] = field(default_factory=dict)
    """The environment the agent ran with (credentials are taken out for commands)."""
    mock_calls: str = ""
    """The calls the run made to mocked MCP tools, one JSON object a line."""
    events: tuple[Mapping[str, Any], ...] = ()
    """The run's stream-json events, as the CLI printed them (credentials redacted): what
    checks of dialect ``plugin_eval`` read."""
    mocks_active: bool = False
    """Whether the run had MCP mocks of a ``mocks/`` folder (a plugin eval ``mock_calls``
    target has nothing to read without them)."""

    def changed_files(self) -> list[str]:
        """The files the run created or changed, in path order."""
        after = snapshot(self.workdir)
        return sorted(path for path, stat in after.items() if self.before.get(path) != stat)

    def created_files(self) -> list[str]:
        """The files the run created (not those it only changed), in path order."""
        return plugin_eval.created_paths(self.before, snapshot(self.workdir))


def read_text(path: Path) -> str:
    """A file's text (bytes that are not UTF-8 replaced), at most :data:`MAX_FILE_BYTES`."""
    try:  # a FIFO or a device the agent left there is read as nothing, never waited on
        with open_regular(path) as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except InputError as exc:
        return f"(not readable: {exc})"
    text = raw[:MAX_FILE_BYTES].decode("utf-8", errors="replace")
    return text + ("\n… [cut: the file is larger]" if len(raw) > MAX_FILE_BYTES else "")


def inside(workdir: Path, relative: str) -> Path | None:
    """``workdir / relative`` when it stays inside ``workdir`` once links are followed."""
    path = workdir / relative
    try:
        path.resolve().relative_to(workdir.resolve())
    except ValueError:
        return None
    return path


def trace_text(transcript: Transcript, *, blind: bool = False, limit: int = 4000) -> str:
    """The run as text: each tool call (name, input as JSON, status and result) and the main
    agent's text, in order. ``blind`` leaves out what only the arm with the skill can do
    (``Skill`` calls and reads of the skill's files), for a judge who must not tell the arms
    apart."""
    lines: list[str] = []
    for call in transcript.tool_calls:
        if blind and (call.name == "Skill" or reads_the_skill(call)):
            continue
        who = "subagent " if call.parent_tool_use_id else ""
        lines.append(f"{who}call {call.name} {json.dumps(call.input, ensure_ascii=False)}")
        result = (call.result or "")[:limit]
        lines.append(f"  -> {call.status}: {result}")
    lines += [f"answer: {text}" for text in (transcript.answer_text or transcript.assistant_text)]
    return "\n".join(lines)


def _count(pattern: Pattern, text: str) -> tuple[int, str]:
    """Matches in ``text`` and the text around the first one."""
    found = pattern.count(text)
    first = pattern.search(text) if found else None
    shown = snippet(text, first.start(), first.end()) if first is not None else ""
    return found, shown


def _decided(match: Match, found: int, shown: str, where: str) -> tuple[bool, str]:
    passed = match.decides(found)
    if match.mode == "count":
        return passed, f"{found} match(es) in {where} (expected {match.count})"
    if found:
        return passed, f"matched in {where}: {shown!r}"
    return passed, f"no match in {where}"


def _pattern_result(check: PatternCheck, view: RunView) -> CheckResult:
    if isinstance(check, FinalAnswer):
        where, text = "the final answer", view.transcript.final_answer
    elif isinstance(check, TraceMatches):
        where, text = "the trace", trace_text(view.transcript)
    elif isinstance(check, MockCallsMatch):
        where, text = "the mock calls", view.mock_calls
    else:
        changed = view.changed_files()
        if not changed:
            return _result(check, check.match.decides(0), "the run created or changed no file")
        found, shown, first = 0, "", ""
        for relative in changed:
            path = inside(view.workdir, relative)
            if path is None:
                continue
            count, around = _count(check.pattern, f"{relative}\n{read_text(path)}")
            if count and not first:
                first, shown = relative, around
            found += count
        where = f"{len(changed)} changed file(s)" + (f" ({first})" if first else "")
        return _result(check, *_decided(check.match, found, shown, where))
    found, shown = _count(check.pattern, text)
    return _result(check, *_decided(check.match, found, shown, where))


def _file_result(check: FileExists | FileMatches, view: RunView) -> CheckResult:
    path = inside(view.workdir, check.path)
    exists = path is not None and path.exists()
    if isinstance(check, FileExists):
        if check.exists:
            return _result(check, exists, f"{check.path} {'exists' if exists else 'is missing'}")
        return _result(
            check, not exists, f"{check.path} {'exists' if exists else 'does not exist'}"
        )
    if path is None or not path.is_file():
        return _result(check, False, f"{check.path} is missing")
    found, shown = _count(check.pattern, read_text(path))
    return _result(check, *_decided(check.match, found, shown, check.path))


def _refers(call: ToolCall, ref: ToolRef | ToolUsed) -> bool:
    pattern = ref.input_match
    return call.answers_to(ref.tool) and (
        pattern is None or pattern.search(json.dumps(call.input, ensure_ascii=False)) is not None
    )


_Call = TypeVar("_Call")
"""A call as a check reads it: a transcript's tool call, or one a plugin eval wrote down."""


def _used_result(
    check: ToolUsed, calls: Sequence[_Call], refers: Callable[[_Call, ToolUsed], bool]
) -> CheckResult:
    """``tool_used``: how many of ``calls`` are to the tool, against the bounds."""
    count = sum(1 for call in calls if refers(call, check))
    high = "∞" if check.max is None else str(check.max)
    passed = count >= check.min and (check.max is None or count <= check.max)
    return _result(check, passed, f"{check.tool} called {count}x (expected {check.min}..{high})")


def _first_calls(
    check: ToolOrder, calls: Sequence[_Call], refers: Callable[[_Call, ToolRef], bool]
) -> dict[str, int | None]:
    """``tool_order``: the index of the first of ``calls`` to each side's tool (``None``: none)."""
    return {
        side: next((i for i, call in enumerate(calls) if refers(call, ref)), None)
        for side, ref in (("before", check.before), ("after", check.after))
    }


def _tool_result(check: ToolUsed | ToolOrder, transcript: Transcript) -> CheckResult:
    ran = [call for call in transcript.tool_calls if not call.refused]
    if isinstance(check, ToolUsed):
        return _used_result(check, ran, _refers)
    first = _first_calls(check, ran, _refers)
    if first["before"] is None:
        return _result(check, False, f"{check.before} never called")
    if first["after"] is None:
        return _result(check, False, f"{check.after} never called")
    passed = first["before"] < first["after"]
    order = "precedes" if passed else "does not precede"
    return _result(
        check,
        passed,
        f"{check.before} (call {first['before'] + 1}) {order} {check.after} "
        f"(call {first['after'] + 1})",
    )


async def _command_result(check: Command, view: RunView) -> CheckResult:
    env = {k: v for k, v in view.env.items() if k not in CREDENTIAL_VARIABLES}
    try:
        process = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            check.run,
            cwd=view.workdir,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return _result(check, False, "", error=f"the command could not start: {exc}")
    try:
        output, _ = await asyncio.wait_for(process.communicate(), check.timeout_s)
    except TimeoutError:
        await stop_group(process)
        return _result(check, False, f"still running after {check.timeout_s:g}s; killed")
    finally:
        if process.returncode is None:
            await stop_group(process)
    text = output.decode("utf-8", errors="replace").strip()
    tail = text[-OUTPUT_SHOWN:]
    passed = process.returncode == check.exit_code
    evidence = f"exit {process.returncode} (expected {check.exit_code})"
    return _result(check, passed, evidence + (f": {tail}" if tail else ""))


async def _assertion_result(check: PythonAssertion, view: RunView) -> CheckResult:
    from skilltest.checks.assertion import evaluate_expression, run_context

    passed, evidence, error = await evaluate_expression(
        check.expression,
        run_context(view.transcript, view.changed_files()),
        cwd=str(view.workdir),
        env={k: v for k, v in view.env.items() if k not in CREDENTIAL_VARIABLES},
        timeout_s=check.timeout_s,
    )
    return _result(check, passed, evidence, error=error)


def _result(check: Check, passed: bool, evidence: str, error: str | None = None) -> CheckResult:
    return CheckResult(
        name=check.name,
        kind=check.kind,
        passed=passed and error is None,
        evidence=evidence,
        veto=check.veto,
        weight=check.weight,
        error=error,
        scored=check.scored,
    )


# --- as Claude Code's plugin eval grades ----------------------------------------------------

NO_MOCKS = (
    "no mock stand-ins were active in this run (no mocks/ directory applies to this case) — a "
    "mock_calls grader has nothing to check"
)
"""Why a plugin eval ``mock_calls`` target fails in a run without mocks (the CLI's words)."""


def read_focus_file(view: RunView, relative: str) -> tuple[str | None, str]:
    """A file a plugin eval grader reads: its text, or ``None`` and why it cannot be read."""
    path = inside(view.workdir, relative)
    if path is None:
        return None, f"focus file {relative} leaves the run directory"
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None, f"focus file {relative} does not exist"
    except OSError as exc:
        return None, f"focus file {relative} is unreadable ({exc.strerror or exc})"
    media = plugin_eval.image_type(data)
    if media is not None:
        return None, f"file {relative} is an image ({media})"
    return data[:MAX_FILE_BYTES].decode("utf-8", errors="replace").removeprefix("\ufeff"), ""


def _js_decided(check: PatternCheck | FileMatches, text: str, where: str) -> CheckResult:
    pattern, match = check.pattern, check.match
    if match.mode == "contains":
        found = pattern.matches(text)
        return _result(
            check, found, f"matched {pattern.source}" if found else f"pattern not found in {where}"
        )
    if match.mode == "not_contains":
        found = pattern.matches(text)
        return _result(
            check,
            not found,
            "pattern found (expected absent)" if found else "pattern absent as expected",
        )
    count = pattern.count(text)
    return _result(check, count == match.count, f"found {count} matches (expected {match.count})")


def plugin_eval_result(check: Check, view: RunView) -> CheckResult:
    """One check of dialect ``plugin_eval`` (a judge aside), decided as the CLI decides it."""
    events = view.events
    if isinstance(check, FileExists):
        glob = plugin_eval.glob_pattern(check.path)
        found = any(glob.match(path) for path in view.created_files())
        if found == check.exists:
            state = "exists" if check.exists else "absent"
            return _result(check, True, f"{check.path} {state} as expected")
        expected = "present" if check.exists else "absent"
        state = "exists" if found else "missing"
        return _result(check, False, f"{check.path} {state} (expected {expected})")
    if isinstance(check, FileMatches):
        text, why = read_focus_file(view, check.path)
        if text is None:
            if why.endswith(")") and "is an image" in why:
                why += "; a regex grader needs text — grade what is visible with an llm grader"
            return _result(check, False, why)
        return _js_decided(check, text, f"file {check.path}")
    if isinstance(check, FilesMatch):
        return _js_decided(check, "\n".join(view.created_files()), "files")
    if isinstance(check, FinalAnswer):
        return _js_decided(check, plugin_eval.last_message(events), "last_message")
    if isinstance(check, TraceMatches):
        return _js_decided(check, plugin_eval.trace_text(events), "trace")
    if isinstance(check, MockCallsMatch):
        if not view.mocks_active:
            return _result(check, False, NO_MOCKS)
        return _js_decided(check, view.mock_calls, "mock_calls")
    if isinstance(check, ToolUsed | ToolOrder):
        return _written_tool_result(check, plugin_eval.written_calls(events))
    raise TypeError(f"no plugin_eval reading of a {check.kind} check")


def _written(call: plugin_eval.WrittenCall, ref: ToolRef | ToolUsed) -> bool:
    pattern = ref.input_match
    return call.name == ref.tool and (pattern is None or pattern.matches(call.input_text))


def _written_tool_result(
    check: ToolUsed | ToolOrder, calls: list[plugin_eval.WrittenCall]
) -> CheckResult:
    if isinstance(check, ToolUsed):
        return _used_result(check, calls, _written)
    first = _first_calls(check, calls, _written)
    if first["before"] is None:
        return _result(check, False, f'"before" tool {check.before.tool} never called')
    if first["after"] is None:
        return _result(check, False, f'"after" tool {check.after.tool} never called')
    before, after = check.before.tool, check.after.tool
    if first["before"] < first["after"]:
        return _result(check, True, f"{before}@{first['before']} precedes {after}@{first['after']}")
    return _result(
        check, False, f"{before}@{first['before']} does NOT precede {after}@{first['after']}"
    )


async def evaluate(
    checks: Sequence[Check],
    view: RunView,
    *,
    with_skill: bool,
    judge: JudgeModel | None = None,
) -> tuple[CheckResult, ...]:
    """Every check that applies to the run's arm, in order.

    Args:
        checks: The scenario's checks.
        view: The finished run.
        with_skill: Whether the run's arm has the skill (``arm: with`` checks apply then only).
        judge: Asks the model, for ``judge`` checks; without one, a judge check cannot be
            evaluated (its result says so, and the run is unscored).

    Raises:
        PatternError: a pattern exceeded its time limit on this run's text.
    """
    results: list[CheckResult | None] = []
    judged: dict[int, Judge] = {}
    for check in checks:
        if check.arm == "with" and not with_skill:
            continue
        if check.dialect == "plugin_eval" and not isinstance(check, Judge):
            results.append(plugin_eval_result(check, view))
        elif isinstance(check, FileExists | FileMatches):
            results.append(_file_result(check, view))
        elif isinstance(check, PatternCheck):
            results.append(_pattern_result(check, view))
        elif isinstance(check, ToolUsed | ToolOrder):
            results.append(_tool_result(check, view.transcript))
        elif isinstance(check, Command):
            # A command may change the files: the judges before it read them as they were.
            await _judge_all(judged, results, view, judge)
            results.append(await _command_result(check, view))
        elif isinstance(check, PythonAssertion):
            await _judge_all(judged, results, view, judge)
            results.append(await _assertion_result(check, view))
        elif isinstance(check, Judge):
            if judge is None:
                results.append(_result(check, False, "", error="no model to judge with"))
            else:
                # Asked side by side once the other checks are decided, in the checks' order.
                judged[len(results)] = check
                results.append(None)
    await _judge_all(judged, results, view, judge)
    return tuple(result for result in results if result is not None)


async def _judge_all(
    judged: dict[int, Judge],
    results: list[CheckResult | None],
    view: RunView,
    judge: JudgeModel | None,
) -> None:
    """Asks the ``judged`` checks side by side and puts each result in its place."""
    from skilltest.checks.judge import judge_check

    if not judged or judge is None:
        return
    checks = list(judged.items())
    judged.clear()
    answers = await asyncio.gather(*(judge_check(check, view, judge) for _, check in checks))
    for (index, _), answer in zip(checks, answers, strict=True):
        results[index] = answer
