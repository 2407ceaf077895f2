"""Single-turn runs through the ``claude`` CLI: ``-p --max-turns 1``, every tool disabled.

Each run gets a throwaway working directory and home (:mod:`skilltest.claude.isolation`), so the
user's own settings, skills, plugins, hooks and MCP servers stay out, and the CLI's bundled skills
and built-in plugins are turned off. ``--tools ""`` removes every tool from the request, so the
model cannot call one (it is not merely asked not to). The skill text is appended to the system
prompt in the with-skill arm.

The caller's credential never reaches the CLI: each run talks to a
:class:`~skilltest.credentials.CredentialPoint` of its own with a placeholder key, and the point
adds the credential on its way to the API. A runner given a run's endpoint (a judge asking
through it) uses that endpoint's placeholders as they are.

The CLI retries a failed model request itself; ``max_retries`` sets how often
(``CLAUDE_CODE_MAX_RETRIES``). A request refused with HTTP 401 or 403 stops the run at once:
no retry fixes a key.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
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
from skilltest.credentials import CredentialPoint
from skilltest.redact import CREDENTIAL_VARIABLES, Redactor
from skilltest.replay.proxy import upstream_of
from skilltest.runners.base import TurnRequest
from skilltest.transcript import AnsweredBy, Transcript
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
            env: More environment for the CLI (e.g. ``ANTHROPIC_BASE_URL``), or a run
                endpoint's whole environment (its URL and placeholder key).
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

    @contextlib.contextmanager
    def _endpoint(
        self,
    ) -> Iterator[tuple[dict[str, str], dict[str, str], Callable[[], AnsweredBy]]]:
        """The CLI's model variables for one run, the secrets to keep out of its output, and
        what answered the run (asked once it has ended).

        A given environment with keys of its own that are none of the caller's credentials is a
        run endpoint's (placeholders) and is used as it is; otherwise a credential point is
        opened for the run with the caller's credentials (and ``ANTHROPIC_BASE_URL``), and
        notes the emulator's mark on the answers it passes on.
        """
        caller = live_credentials()
        given = {
            name: self.extra_env[name] for name in CREDENTIAL_VARIABLES if self.extra_env.get(name)
        }
        real = {value for name, value in caller.items() if name in CREDENTIAL_VARIABLES}
        if given and not real.intersection(given.values()):
            env = dict(self.extra_env)
            yield env, {}, lambda: AnsweredBy.at(upstream_of(env))
            return
        credentials = {**caller, **self.extra_env}
        if not any(credentials.get(name) for name in CREDENTIAL_VARIABLES):
            yield credentials, {}, lambda: AnsweredBy.at(upstream_of(credentials))
            return
        settings = {
            key: value
            for key, value in self.extra_env.items()
            if key not in CREDENTIAL_VARIABLES and key != "ANTHROPIC_BASE_URL"
        }
        with CredentialPoint(credentials) as point:
            yield {**settings, **point.env()}, point.secrets(), point.answered_by

    async def run_turn(self, request: TurnRequest) -> Transcript:
        """Runs the CLI once; a crash, a timeout or an API error is a transcript with ``error``."""
        with self._endpoint() as (credentials, secrets, answered_by):
            transcript = await self._run(request, credentials, secrets)
            return replace(transcript, answered_by=answered_by())

    async def _run(
        self, request: TurnRequest, credentials: dict[str, str], secrets: dict[str, str]
    ) -> Transcript:
        shown = {name: credentials[name] for name in CREDENTIAL_VARIABLES if credentials.get(name)}
        redact = Redactor({**shown, **secrets})
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
