"""The ``PreToolUse`` hook that ends a trigger run at the tool call that decides it.

Stopping the CLI once its stream shows the deciding call is too late: by the time a line is read
and the process group is signalled, Claude Code has run the tool and sent its next request
(Claude Code 2.1.328 against the emulator did so in every run tried, even when stopped at the
first streamed event of the ``Skill`` block, ``--include-partial-messages``). A hook runs before
the tool does, and the CLI waits for it. For the call that fires the skill, and for the call
after the tool-call budget, this hook answers::

    {"continue": false, "stopReason": "...",
     "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", ...}}

``deny`` keeps the tool from running (a forked skill would start a subagent, a budget call a
command) and ``continue: false`` ends the session with ``terminal_reason: hook_stopped``: no
request follows the deciding one. Every other call is let through, unchanged. Inside a subagent
``continue: false`` ends only the subagent, so the hook also runs after each ``Agent`` call
(``PostToolUse``, ``PostToolUseFailure``) and, once the run is decided, ends the session there,
before the main agent asks the model again. (A background subagent's caller goes on beside it:
what it asks meanwhile cannot be held back.)

The verdict stays the stream watch's (:class:`~skilltest.triggers.watch.TriggerWatch`, which uses
the same :func:`fires`); the hook is only a brake. It keeps a file of its own per run: one line
per ``tool_use_id`` counted, then ``stop <reason>`` once the run is decided. The hook runs as a
script (``python -I hook.py``), outside the package: it imports the standard library only, so it
starts fast and needs no ``PYTHONPATH`` in the CLI's isolated environment. Whatever goes wrong in
it, it lets the call through (exit 0, nothing printed): an exit status of 2 would refuse the call
and tell the model, changing the run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TIMEOUT_S = 30
"""How long the CLI waits for the hook before letting the call through."""

FIRED = "skilltest: the skill fired; the trigger run ends at this call"
"""Why the hook ended a run at the skill (Claude Code shows it as the tool's error)."""
BUDGET = "skilltest: tool-call budget spent; the trigger run ends at this call"
"""Why the hook ended a run at the call after the budget."""
STOP = "stop "
"""How the line that records the decision in the calls file starts (the reason follows)."""
DELEGATIONS = "Agent|Task"
"""The tools that start a subagent (``Task`` is the Agent tool's former name)."""


def fires(name: str, tool: str, arguments: Mapping[str, Any]) -> bool:
    """Whether one tool call loads skill ``name``: the Skill tool for it, or a read of its
    ``SKILL.md`` (under ``.../<name>/SKILL.md``, where Claude Code installs it)."""
    if tool == "Skill":
        called = arguments.get("skill", arguments.get("command"))
        if not isinstance(called, str):
            return False
        called = called.strip().lstrip("/").split()[0] if called.strip() else ""
        return called == name or called.rsplit(":", 1)[-1] == name
    if tool == "Read":
        path = arguments.get("file_path")
        if not isinstance(path, str):
            return False
        parts = path.replace("\\", "/").rstrip("/").split("/")
        return len(parts) >= 2 and parts[-1] == "SKILL.md" and parts[-2] == name
    return False


def settings(skill: str, max_tool_calls: int, calls: Path) -> dict[str, Any]:
    """The ``--settings`` part that installs the hook for one run.

    Args:
        skill: The skill under test.
        max_tool_calls: Other tool calls allowed before the skill.
        calls: A file of the run's own where the hook counts calls (need not exist).
    """
    command = shlex.join(
        [
            sys.executable,
            "-I",  # the sandbox's working directory is not on the hook's import path
            str(Path(__file__).resolve()),
            "--skill",
            skill,
            "--max-tool-calls",
            str(max_tool_calls),
            "--calls",
            str(calls),
        ]
    )
    hook = {"type": "command", "command": command, "timeout": TIMEOUT_S}
    return {
        "hooks": {
            "PreToolUse": [{"matcher": "*", "hooks": [hook]}],
            # A subagent the skill fired in returns to its caller, which must not go on.
            "PostToolUse": [{"matcher": DELEGATIONS, "hooks": [hook]}],
            "PostToolUseFailure": [{"matcher": DELEGATIONS, "hooks": [hook]}],
        }
    }


def decide(
    payload: Mapping[str, Any], *, skill: str, max_tool_calls: int, calls: Path
) -> str | None:
    """Why the run ends here (:data:`FIRED`, :data:`BUDGET`), or ``None`` to let it go on.

    A ``PreToolUse`` call is counted in ``calls`` (once per ``tool_use_id``) and decided; once a
    call has decided the run (``stop <reason>`` in ``calls``), every later hook ends it too: a
    subagent's ``continue: false`` ends only the subagent, and the ``PostToolUse`` of the
    ``Agent`` call that started it then ends the session.
    """
    event = payload.get("hook_event_name", "PreToolUse")
    tool = str(payload.get("tool_name", ""))
    arguments = payload.get("tool_input")
    fired = event == "PreToolUse" and fires(
        skill, tool, arguments if isinstance(arguments, dict) else {}
    )
    try:
        return _recorded(calls, payload, fired=fired, max_tool_calls=max_tool_calls)
    except (OSError, ImportError):
        # No count to keep (an unwritable file, no fcntl): the skill still ends the run.
        return FIRED if fired else None


def _recorded(
    calls: Path, payload: Mapping[str, Any], *, fired: bool, max_tool_calls: int
) -> str | None:
    import fcntl  # POSIX only, like the CLI runs themselves; imported when a hook runs

    with calls.open("a+", encoding="utf-8") as file:
        # Calls of one message may be checked at once: one hook at a time reads and counts.
        fcntl.flock(file, fcntl.LOCK_EX)
        file.seek(0)
        lines = file.read().splitlines()
        decided = [line.removeprefix(STOP) for line in lines if line.startswith(STOP)]
        if decided:
            return decided[0]
        if payload.get("hook_event_name", "PreToolUse") != "PreToolUse":
            return None
        reason = FIRED if fired else None
        if reason is None:
            call_id = str(payload.get("tool_use_id") or "-")
            if call_id == "-" or call_id not in lines:
                file.write(f"{call_id}\n")
                lines.append(call_id)
            if len(lines) > max_tool_calls:
                reason = BUDGET
        if reason is not None:
            file.write(f"{STOP}{reason}\n")
        return reason


def answer(reason: str, event: object = "PreToolUse") -> dict[str, Any]:
    """The hook's output that ends the session (and, before a call, refuses it)."""
    output: dict[str, Any] = {"continue": False, "stopReason": reason}
    if event == "PreToolUse":
        output["hookSpecificOutput"] = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    return output


def main(argv: list[str] | None = None) -> int:
    """Reads one ``PreToolUse`` payload on stdin; prints :func:`answer` when the run ends."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--skill", required=True)
    parser.add_argument("--max-tool-calls", type=int, required=True)
    parser.add_argument("--calls", type=Path, required=True)
    try:
        args = parser.parse_args(argv)
    except SystemExit:
        return 0  # argparse's own status 2 would refuse the call
    with contextlib.suppress(Exception):
        payload = json.loads(sys.stdin.read())
        if isinstance(payload, dict):
            reason = decide(
                payload, skill=args.skill, max_tool_calls=args.max_tool_calls, calls=args.calls
            )
            if reason is not None:
                print(json.dumps(answer(reason, payload.get("hook_event_name", "PreToolUse"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
