"""``python_assertion`` checks: a Python expression about the finished run, as waza's ``code``
grader evaluates its ``assertions``.

The expression is evaluated in a separate Python process (``python -I``, no builtins but the
few waza's grader offers), in the run's working directory, with the run's environment less its
credentials and a time limit; a process still running then is killed with its group. It sees
the run as waza's grader does:

``output``
    the final answer (str)
``outcome``
    ``{"files": [...]}``: the files the run created or changed
``transcript``
    the run's messages and tool calls in order, each ``{"type": ..., "content": ...}``
``tool_calls``
    each call as ``{"name", "input", "result", "is_error"}``
``errors``
    the transcript entries whose type or content mentions an error
``duration_ms``
    the run's wall time as the CLI reported it (0 when it did not)

and ``len``, ``any``, ``all``, ``str``, ``int``, ``float``, ``bool``, ``list``, ``dict`` and
``re``. It passes when the expression is true; one that raises fails with the exception.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping
from typing import Any

from skilltest.groups import stop_group
from skilltest.transcript.model import Transcript

WRAPPER = r"""
import json, re, sys
data = json.loads(sys.stdin.read())
context = dict(data["context"])
context.update(len=len, any=any, all=all, str=str, int=int, float=float, bool=bool,
               list=list, dict=dict, re=re)
try:
    verdict = "" if eval(data["expression"], {"__builtins__": {}}, context) else "fail"
except Exception as exc:
    verdict = f"{type(exc).__name__}: {exc}"
print(json.dumps({"result": verdict}))
"""
"""The program the expression runs in; it prints ``""`` (true), ``"fail"`` or the exception."""


def run_context(transcript: Transcript, changed: list[str]) -> dict[str, Any]:
    """What an expression sees of a run (see the module docstring)."""
    entries: list[dict[str, Any]] = [
        {"type": "assistant", "content": text} for text in transcript.assistant_text
    ]
    calls = [
        {"name": call.name, "input": call.input, "result": call.result, "is_error": call.is_error}
        for call in transcript.tool_calls
    ]
    entries += [
        {"type": "tool_error" if call["is_error"] else "tool_call", "content": call}
        for call in calls
    ]
    entries += [{"type": "api_error", "content": text} for text in transcript.api_errors]
    errors = [
        entry
        for entry in entries
        if "error" in entry["type"] or "error" in str(entry.get("content", "")).lower()
    ]
    final = transcript.final_result
    return {
        "output": transcript.final_answer,
        "outcome": {"files": changed},
        "transcript": entries,
        "tool_calls": calls,
        "errors": errors,
        "duration_ms": int(final.duration_ms or 0) if final is not None else 0,
    }


async def evaluate_expression(
    expression: str,
    context: Mapping[str, Any],
    *,
    cwd: str,
    env: Mapping[str, str],
    timeout_s: float,
) -> tuple[bool, str, str | None]:
    """Runs ``expression`` against ``context``: ``(passed, evidence, error)``; ``error`` when
    the process could not start or answered nothing readable (the run is then unscored)."""
    payload = json.dumps({"expression": expression, "context": context}, default=str)
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-I",
            "-c",
            WRAPPER,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return False, "", f"Python could not start: {exc}"
    try:
        out, err = await asyncio.wait_for(process.communicate(payload.encode()), timeout_s)
    except TimeoutError:
        await stop_group(process)
        return False, f"still running after {timeout_s:g}s; killed", None
    finally:
        if process.returncode is None:
            await stop_group(process)
    try:
        verdict = json.loads(out.decode("utf-8", errors="replace"))["result"]
    except (ValueError, KeyError, TypeError):
        shown = err.decode("utf-8", errors="replace").strip()[-300:]
        return False, "", f"the assertion's Python answered nothing readable: {shown}"
    if verdict == "":
        return True, f"{expression} is true", None
    if verdict == "fail":
        return False, f"{expression} is false", None
    return False, f"{expression} raised {verdict}", None
