"""Where the model answers of a scenario run come from, and how the backend is chosen.

``claude``    the real CLI against the real Anthropic API, through a credential point of the
              run's own (:mod:`skilltest.credentials`): the CLI, and everything the agent
              runs, holds a placeholder key; the point adds the caller's credential.
``emulator``  the real CLI against an in-process emulator on loopback that answers from the
              suite's model script: a scripted stand-in, not a model. Used when no credentials
              are set, so ``make test-scenarios`` runs offline.

The emulator gets one server per run: the arms never share conversation state, and the requests
it records belong to exactly one run (the end-to-end tests read them to prove that only the
with-skill arm's requests list the skill).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skilltest.claude.isolation import Sandbox, live_credentials
from skilltest.credentials import CredentialPoint
from skilltest.errors import InputError
from skilltest.flow.options import Observer, RunOptions
from skilltest.flow.tape import Tape
from skilltest.redact import CREDENTIAL_VARIABLES
from skilltest.replay.proxy import upstream_of
from skilltest.scenarios.runner import Endpoint, EndpointSession, RunRequest
from skilltest.transcript import AnsweredBy
from skilltest.transcript.origin import first_each

if TYPE_CHECKING:
    from skilltest.agents.base import AgentBinary
    from skilltest.claude.binary import ClaudeBinary
    from skilltest.emulator import EmulatorServer, ModelScript
    from skilltest.replay.normalise import Rules

BACKENDS = ("claude", "emulator")

EMULATOR_API_KEY = "sk-skilltest-emulator"
"""The key the CLI sends to the emulator; never a real credential."""

EMULATOR_NOTICE = (
    "skilltest: offline: the real claude CLI runs against the offline model emulator, a scripted "
    "stand-in answering from each suite's model script, not Claude, so the numbers say nothing "
    "about how a real model behaves (no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or "
    "CLAUDE_CODE_OAUTH_TOKEN set, or --backend emulator). Set a credential (or pass --backend "
    "claude) to test against the real model."
)


class LiveEndpoint:
    """The real Anthropic API with the caller's credentials (``claude`` backend), which never
    reach the run: each run talks to a :class:`~skilltest.credentials.CredentialPoint` of its
    own with a placeholder key, and the point adds the credential on the way out."""

    name = "claude"

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.credentials = live_credentials(environ)

    @contextlib.asynccontextmanager
    async def session(
        self, request: RunRequest, sandbox: Sandbox | None = None
    ) -> AsyncIterator[EndpointSession]:
        """A credential point for this run, in front of the API (or the caller's
        ``ANTHROPIC_BASE_URL``): the CLI gets its URL and placeholders, the run's redactor
        and recordings the real values and the placeholders to keep out."""
        if not any(name in self.credentials for name in CREDENTIAL_VARIABLES):
            # Nothing to keep from the run: the CLI finds no credential either way.
            env = dict(self.credentials)
            yield EndpointSession(env=env, answered_by=lambda: AnsweredBy.at(upstream_of(env)))
            return
        with CredentialPoint(self.credentials) as point:
            # The point sees every answer: the emulator's mark on one is noted, whatever the
            # caller's ANTHROPIC_BASE_URL claims to be.
            yield EndpointSession(
                env=point.env(),
                secrets=point.secrets(),
                answered_by=point.answered_by,
                emulator_rules=point.emulator_rules,
            )


class EmulatorEndpoint:
    """An in-process emulator per run, answering from the suite's model script."""

    name = "emulator"

    def __init__(self, script_override: Path | None = None) -> None:
        """
        Args:
            script_override: ``--script``: one model script for every suite.
        """
        self.script_override = script_override
        self._scripts: dict[Path, ModelScript] = {}

    def script_path(self, suite_path: Path, model_script: Path | None) -> Path:
        """The model script a suite runs with.

        Raises:
            InputError: the suite has none and ``--script`` was not given.
        """
        script = self.script_override or model_script
        if script is None:
            raise InputError(
                "the emulator backend needs a model script and this suite names none",
                location=f"{suite_path}#",
                fix="add `model_script: <path relative to the suite>` to the suite, pass "
                "--script FILE, or set ANTHROPIC_API_KEY to run against the real model",
            )
        return script

    def load(self, suite_path: Path, model_script: Path | None) -> ModelScript:
        """Loads (once) and returns the suite's model script.

        Raises:
            ModelScriptError: the script is missing or not valid.
        """
        path = self.script_path(suite_path, model_script)
        if path not in self._scripts:
            from skilltest.emulator import ModelScript

            self._scripts[path] = ModelScript.load(path)
        return self._scripts[path]

    @contextlib.asynccontextmanager
    async def session(
        self, request: RunRequest, sandbox: Sandbox | None = None
    ) -> AsyncIterator[EndpointSession]:
        """Starts an emulator on a free loopback port for this run and stops it afterwards.

        Repetition ``r`` runs with the script's seed plus ``r``: the arms of one repetition see
        the same random choices, and ``pick: random`` replies differ between repetitions.
        """
        from skilltest.emulator import EmulatorServer
        from skilltest.emulator.server import MARK

        script = self.load(request.suite_path, request.model_script)
        script = dataclasses.replace(script, seed=script.seed + request.rep)
        with EmulatorServer(script, port=0) as server:
            session = EndpointSession(
                env={
                    "ANTHROPIC_BASE_URL": server.base_url,
                    "ANTHROPIC_API_KEY": EMULATOR_API_KEY,
                    # A scripted answer does not change on a retry: fail fast, not after minutes
                    # of back-off, when the script injects an API error.
                    "CLAUDE_CODE_MAX_RETRIES": "0",
                },
                # The server is the emulator, and it marks every answer it gives.
                answered_by=lambda: AnsweredBy.at(server.base_url, MARK),
                emulator_rules=lambda: first_each(
                    (seen.script_rule for seen in server.requests), os.getcwd()
                ),
            )
            try:
                yield session
            finally:
                session.requests.extend(_recorded_requests(server))


def _recorded_requests(server: EmulatorServer) -> list[dict[str, Any]]:
    """The requests the emulator saw and which rule answered each, as JSON-ready data."""
    return [dataclasses.asdict(recorded) for recorded in server.requests]


class _HasScript(Protocol):
    @property
    def path(self) -> Path: ...

    @property
    def model_script(self) -> Path | None: ...


def open_endpoint(backend: str, script: Path | None, suites: Sequence[_HasScript]) -> Endpoint:
    """The endpoint of a live or emulated backend; every suite's model script is loaded now, so
    that a bad or missing one is bad input before any run.

    Raises:
        InputError: the emulator and a suite without a model script.
        ModelScriptError: a model script that is not valid.
    """
    if backend == "claude":
        return LiveEndpoint()
    endpoint = EmulatorEndpoint(script)
    for suite in suites:
        endpoint.load(suite.path, suite.model_script)
    return endpoint


def taped(
    endpoint: Endpoint | None,
    tape: Tape,
    rules: Mapping[Path, Rules],
    *,
    model: str | None,
    cli_version: str | None,
    backend: str | None = None,
    layer: str = "scenarios",
    agent: str = "claude-code",
) -> Endpoint:
    """``endpoint`` behind the recording or replaying point the tape asks for (``endpoint`` is
    ``None`` when the cassettes alone answer); ``rules`` are each suite's replay rules, by its
    path; ``backend`` is what answers while recording, written into the cassettes; ``layer`` is
    what the cassettes record (``scenarios`` or ``triggers``); ``agent`` is whose CLI runs,
    written into the cassettes of an agent other than Claude Code and checked when replaying."""
    if tape.directory is None:
        assert endpoint is not None
        return endpoint
    from skilltest.replay.normalise import Rules
    from skilltest.replay.recorder import Recorder
    from skilltest.scenarios.replay import RecordingEndpoint, ReplayEndpoint

    def rules_of(request: RunRequest) -> Rules:
        return rules.get(request.suite_path, Rules())

    recorder = (
        Recorder(
            tape.directory,
            layer=layer,
            model=model,
            cli_version=cli_version,
            backend=backend,
            agent=None if agent == "claude-code" else agent,
        )
        if tape.recording
        else None
    )
    if not tape.replaying:
        assert endpoint is not None and recorder is not None
        return RecordingEndpoint(endpoint, recorder, rules_of=rules_of)
    return ReplayEndpoint(
        tape.directory,
        rules_of=rules_of,
        fallback=endpoint,
        recorder=recorder,
        layer=layer,
        agent=agent,
    )


@dataclass(frozen=True)
class CliBackend:
    """Where a layer that runs an agent's CLI gets its answers from."""

    binary: ClaudeBinary | AgentBinary
    """The ``claude`` binary every run uses (another agent's executable with ``--agent``)."""
    backend: str
    """``claude`` (the live API), ``emulator`` or ``replay``."""
    endpoint: Endpoint
    """What each run's CLI talks to."""


def cli_backend(
    options: RunOptions,
    suites: Sequence[_HasScript],
    observer: Observer,
    tape: Tape | None = None,
    rules: Mapping[Path, Rules] | None = None,
    layer: str = "scenarios",
    agent: str = "claude-code",
) -> CliBackend:
    """Finds ``claude`` (or the executable of ``agent``), chooses the backend (the cassettes
    alone when the tape replays without recording), opens its endpoint behind the tape (its
    cassettes of ``layer``), and tells the observer what it chose.

    Raises:
        ClaudeNotFoundError: no usable ``claude``.
        CredentialsError: a live backend asked for without credentials.
        InputError: a suite without the model script the emulator needs.
    """
    from skilltest.claude.binary import find_claude
    from skilltest.runners.backends import BackendChoice, choose_backend

    tape = tape or Tape()
    binary: ClaudeBinary | AgentBinary
    notice = EMULATOR_NOTICE
    if agent == "claude-code":
        binary = find_claude(options.claude)
    else:
        from skilltest.agents import agent as agent_named

        chosen = agent_named(agent)
        binary = chosen.find()
        notice = notice.replace("the real claude CLI", f"the real {chosen.title} CLI", 1)
    if tape.replay_only:
        choice = BackendChoice("replay")
    else:
        choice = choose_backend(options.backend, live="claude", emulator_notice=notice)
    speaks = None if agent == "claude-code" else chosen.model_api
    if speaks not in (None, "anthropic") and choice.name not in ("emulator", "replay"):
        raise InputError(
            f"--agent {agent} speaks the {speaks} API, which only the emulator (or a replay of "
            f"its recording) answers; --backend {choice.name} cannot serve it",
            fix="run it with --backend emulator (and --record DIR to replay it later with "
            "--replay DIR)",
        )
    endpoint = taped(
        open_endpoint(choice.name, options.script, suites) if choice.name != "replay" else None,
        tape,
        rules or {},
        model=options.model,
        cli_version=binary.version,
        backend=choice.name if choice.name != "replay" else None,
        layer=layer,
        agent=agent,
    )
    if choice.notice:
        observer.notice(choice.notice)
    if binary.warning:
        observer.notice(f"skilltest: warning: {binary.warning}")
    return CliBackend(binary, choice.name, endpoint)
