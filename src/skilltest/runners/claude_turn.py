"""Single-turn runs through the ``claude`` CLI: ``-p --max-turns 1``, every tool disabled.

Each run gets a throwaway working directory and home (:mod:`skilltest.claude.isolation`), so the
user's own settings, skills, plugins, hooks and MCP servers stay out, and the CLI's bundled skills
and built-in plugins are turned off. ``--tools ""`` removes every tool from the request, so the
model cannot call one (it is not merely asked not to). The skill text is appended to the system
prompt in the with-skill arm.

The CLI retries a failed model request itself; ``max_retries`` sets how often
(``CLAUDE_CODE_MAX_RETRIES``). A request refused with HTTP 401 or 403 stops the run at once:
no retry fixes a key.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from skilltest.claude.binary import ClaudeBinary, find_claude
from skilltest.claude.isolation import (
    create_sandbox,
    isolated_env,
    isolation_flags,
    live_credentials,
)
from skilltest.claude.process import Invocation, run_conversation, unrecoverable_api_error
from skilltest.redact import Redactor
from skilltest.runners.base import TurnRequest
from skilltest.transcript import Transcript
from skilltest.transcript.stream_json import parse_stream_json

DEFAULT_TIMEOUT_S = 300.0

DEFAULT_MAX_RETRIES = 4
"""Retries of a failed model request, as the SDK runner's default (the CLI's own is 10, about
three minutes of back-off)."""


class ClaudeTurnRunner:
    """Answers single-turn requests by running ``claude -p``."""

    backend = "claude"

    def __init__(
        self,
        *,
        claude: Path | None = None,
        timeout_s: float | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        env: dict[str, str] | None = None,
    ) -> None:
        """
        Args:
            claude: The binary (``--claude``); found as :func:`find_claude` does otherwise.
            timeout_s: Wall-time limit of one run.
            max_retries: Retries of a failed model request (``CLAUDE_CODE_MAX_RETRIES``).
            env: More environment for the CLI (e.g. ``ANTHROPIC_BASE_URL``).
        """
        self.binary: ClaudeBinary = find_claude(claude)
        if self.binary.warning:
            print(f"skilltest: warning: {self.binary.warning}", file=sys.stderr)
        self.timeout_s = timeout_s or DEFAULT_TIMEOUT_S
        self.max_retries = max_retries
        self.extra_env = env or {}

    @staticmethod
    def check(claude: Path | None) -> None:
        """Fails early when no usable binary exists (``ClaudeNotFoundError``)."""
        find_claude(claude)

    def command(self, request: TurnRequest) -> tuple[str, ...]:
        """The command line of one run."""
        command = [
            str(self.binary.path),
            "-p",
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
            *isolation_flags(self.binary.version),
        ]
        if request.system:
            command += ["--append-system-prompt", request.system]
        # After ``--`` a prompt that starts with a dash is still the prompt.
        return (*command, "--", request.prompt)

    async def run_turn(self, request: TurnRequest) -> Transcript:
        """Runs the CLI once; a crash, a timeout or an API error is a transcript with ``error``."""
        credentials = {**live_credentials(), **self.extra_env}
        redact = Redactor.for_environment(credentials)
        sandbox = create_sandbox(skill=None)
        try:
            output = await run_conversation(
                Invocation(
                    argv=self.command(request),
                    cwd=sandbox.workdir,
                    env=isolated_env(
                        home=sandbox.home,
                        tmp=sandbox.tmp,
                        credentials={
                            **credentials,
                            "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(request.max_tokens),
                            "CLAUDE_CODE_MAX_RETRIES": str(self.max_retries),
                        },
                    ),
                    timeout_s=self.timeout_s,
                    stop_on=unrecoverable_api_error,
                )
            )
        finally:
            sandbox.remove()
        transcript = parse_stream_json(
            redact(output.stdout), exit_code=output.exit_code, stderr=redact(output.stderr)
        )
        error = transcript.error
        if output.start_error:
            error = f"claude could not start: {output.start_error}"
        elif output.stopped_reason:
            error = f"{output.stopped_reason}; the claude run was stopped"
        elif output.timed_out:
            error = (
                f"claude did not finish within {self.timeout_s:g}s; its process group was killed"
            )
        return replace(
            transcript,
            source="claude-cli",
            error=error,
            cli_version=transcript.cli_version or self.binary.version,
            latency_ms=output.duration_s * 1000,
        )

    async def aclose(self) -> None:
        return None
