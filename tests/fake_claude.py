"""A stand-in for the ``claude`` binary in process-level tests (the real one is tested end to end).

It prints stream-json like Claude Code 2.1.328. What it does is chosen by the prompt (the last
argument), or ``multiturn`` when the prompt comes on stdin:

``echo``       init (listing the skills in ``.claude/skills`` of the cwd), a Bash call whose
               command holds ``$ANTHROPIC_API_KEY``, its result, a text, a success result
``multiturn``  per stdin message: an assistant text ``turn N: <message>`` and a result; a
               message ``big N`` first prints a tool result line of N megabytes
``hang``       init, one tool call, then starts a child in its process group and sleeps; the
               child's pid goes to ``$FAKE_CHILD_PID_FILE`` (in the cwd when unset), its own
               to ``$FAKE_PID_FILE`` when set
``stubborn``   init, one tool call, then ignores SIGTERM (a CLI slow to stop) and sleeps; its own
               pid goes to ``$FAKE_PID_FILE`` (``claude.pid`` in the cwd when unset)
``auth``       init, then an ``api_retry`` event (HTTP 401) every 0.2 s for a minute, as the CLI
               retrying a refused key; a child in its process group as for ``hang``
``crash``      a line on stderr, exit status 3, no result
``version``    (``--version``) prints ``$FAKE_CLAUDE_VERSION`` or 2.1.328
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def emit(event: dict) -> None:
    sys.stdout.write(json.dumps(event) + "\n")
    sys.stdout.flush()


def init() -> None:
    skills_dir = Path.cwd() / ".claude" / "skills"
    skills = sorted(p.name for p in skills_dir.iterdir()) if skills_dir.is_dir() else []
    emit(
        {
            "type": "system",
            "subtype": "init",
            "cwd": str(Path.cwd()),
            "session_id": "fake-session",
            "tools": ["Bash", "Read", "Skill"],
            "model": "fake-model",
            "claude_code_version": "2.1.328",
            "skills": [*skills, "doctor"],
            "plugins": [],
            "argv": sys.argv[1:],
            "home": os.environ.get("HOME"),
        }
    )


def assistant(*blocks: dict) -> None:
    emit(
        {
            "type": "assistant",
            "message": {
                "id": f"msg_{time.time_ns()}",
                "model": "fake-model",
                "content": list(blocks),
            },
            "parent_tool_use_id": None,
        }
    )


def tool_result(tool_id: str, text: str) -> None:
    emit(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": text}],
            },
        }
    )


def result(text: str, index: int = 0) -> None:
    emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": text,
            "num_turns": 1,
            "total_cost_usd": 0.001,
            "result_index": index,
        }
    )


def main() -> int:
    if "--version" in sys.argv:
        print(f"{os.environ.get('FAKE_CLAUDE_VERSION', '2.1.328')} (Claude Code)")
        return 0
    multi = "--input-format" in sys.argv
    mode = "multiturn" if multi else sys.argv[-1]
    if mode == "crash":
        sys.stderr.write("fatal: something broke\n")
        return 3
    init()
    if mode == "echo":
        key = os.environ.get("ANTHROPIC_API_KEY", "")
        command = f"curl -H 'x-api-key: {key}' https://example.invalid; lgtm loki query"
        assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}})
        tool_result("t1", f"HOME={os.environ.get('HOME')}")
        assistant({"type": "text", "text": "done"})
        result("done")
        return 0
    if mode == "multiturn":
        for number, line in enumerate(sys.stdin, start=1):
            message = json.loads(line)["message"]["content"]
            if message.startswith("big "):
                tool_result("t-big", "x" * int(float(message.split()[1]) * 1024 * 1024))
            assistant({"type": "text", "text": f"turn {number}: {message}"})
            result(f"turn {number}", index=number - 1)
        return 0
    if mode == "hang":
        assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep"}})
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        pid_file = Path(os.environ.get("FAKE_CHILD_PID_FILE", "child.pid"))
        pid_file.write_text(str(child.pid))
        if "FAKE_PID_FILE" in os.environ:
            Path(os.environ["FAKE_PID_FILE"]).write_text(str(os.getpid()))
        time.sleep(300)
        return 0
    if mode == "stubborn":
        assistant({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep"}})
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        Path(os.environ.get("FAKE_PID_FILE", "claude.pid")).write_text(str(os.getpid()))
        time.sleep(300)
        return 0
    if mode == "auth":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
        Path(os.environ.get("FAKE_CHILD_PID_FILE", "child.pid")).write_text(str(child.pid))
        for attempt in range(1, 3001):  # ten minutes
            event = {"type": "system", "subtype": "api_retry", "attempt": attempt}
            emit(
                {
                    **event,
                    "max_retries": 3000,
                    "error_status": 401,
                    "error": "authentication_failed",
                }
            )
            time.sleep(0.2)
        return 1
    sys.stderr.write(f"unknown mode {mode!r}\n")
    return 4


if __name__ == "__main__":
    raise SystemExit(main())
