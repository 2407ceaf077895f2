"""Single-turn runs through the ``claude`` CLI: ``-p --max-turns 1``, every tool disabled.

Each run gets a throwaway working directory and home, so the user's own settings, skills,
plugins, hooks and MCP servers stay out; the CLI's bundled skills and built-in plugins are turned
off too. The skill text is appended to the system prompt in the with-skill arm.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import warnings
from dataclasses import replace
from pathlib import Path

from skilltest.runners.base import TurnRequest
from skilltest.runners.claude_binary import KNOWN_VERSIONS, claude_version, resolve_claude
from skilltest.scenarios.isolation import (
    create_sandbox,
    isolated_env,
    isolation_flags,
    live_credentials,
)
from skilltest.transcript import Transcript

DEFAULT_TIMEOUT_S = 300.0


class ClaudeTurnRunner:
    """Answers single-turn requests by running ``claude -p``."""

    backend = "claude"

    def __init__(
        self,
        *,
        claude: Path | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        env: dict[str, str] | None = None,
    ) -> None:
        self.claude = resolve_claude(claude)
        self.version = claude_version(self.claude)
        if self.version not in KNOWN_VERSIONS:
            warnings.warn(
                f"claude {self.version} has not been verified with skilltest "
                f"(known: {', '.join(sorted(KNOWN_VERSIONS))})",
                stacklevel=2,
            )
        self.timeout_s = timeout_s
        self.extra_env = env or {}

    @staticmethod
    def check(claude: Path | None) -> None:
        """Fails early when no usable binary exists (``ClaudeNotFoundError``)."""
        claude_version(resolve_claude(claude))

    def command(self, request: TurnRequest) -> list[str]:
        """The command line of one run."""
        command = [
            str(self.claude),
            "-p",
            request.prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--max-turns",
            "1",
            "--tools",
            "",
            "--model",
            request.model,
            "--no-session-persistence",
            *isolation_flags(self.version),
        ]
        if request.system:
            command += ["--append-system-prompt", request.system]
        return command

    async def run_turn(self, request: TurnRequest) -> Transcript:
        """Runs the CLI once; a crash, a timeout or an API error is a transcript with ``error``."""
        from skilltest.transcript.stream_json import parse_stream_json

        started = time.monotonic()
        sandbox = create_sandbox(skill=None)
        try:
            credentials = {
                **live_credentials(),
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(request.max_tokens),
                **self.extra_env,
            }
            process = await asyncio.create_subprocess_exec(
                *self.command(request),
                cwd=sandbox.workdir,
                env=isolated_env(home=sandbox.home, credentials=credentials),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            timed_out = False
            try:
                stdout, stderr = await asyncio.wait_for(process.communicate(), self.timeout_s)
            except TimeoutError:
                timed_out = True
                _kill_group(process.pid)
                stdout, stderr = await process.communicate()
            except asyncio.CancelledError:
                _kill_group(process.pid)
                raise
        finally:
            sandbox.remove()
        transcript = parse_stream_json(
            stdout.decode("utf-8", "replace"),
            exit_code=process.returncode,
            stderr=stderr.decode("utf-8", "replace"),
        )
        error = transcript.error
        if timed_out:
            error = (
                f"claude did not finish within {self.timeout_s:g}s; its process group was killed"
            )
        return replace(
            transcript,
            error=error,
            cli_version=transcript.cli_version or self.version,
            latency_ms=(time.monotonic() - started) * 1000,
        )

    async def aclose(self) -> None:
        return None


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
