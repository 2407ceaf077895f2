"""Choosing a backend and opening the runners a set of suites needs.

``anthropic``  the Anthropic SDK against the live API (or ``ANTHROPIC_BASE_URL``).
``claude``     the ``claude`` CLI for one turn, tools disabled, in a throwaway home.
``emulator``   the Anthropic SDK against the offline model emulator on loopback, answering from
               the suite's model script: a scripted stand-in, not a model.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skilltest.errors import CredentialsError, InputError
from skilltest.redact import CREDENTIAL_VARIABLES
from skilltest.runners.base import TurnRunner

if TYPE_CHECKING:  # the emulator is imported only when the emulator backend is used
    from skilltest.emulator import EmulatorServer, ModelScript
    from skilltest.runners.batch import BatchRunner

BACKENDS = ("anthropic", "claude", "emulator")

CREDENTIALS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
    "claude": CREDENTIAL_VARIABLES,
}
"""The variables that let each live backend reach the API (any one of them is enough)."""

_MISSING = {
    "anthropic": "--backend anthropic needs ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN)\n"
    "  fix: export ANTHROPIC_API_KEY=..., or use --backend emulator to run offline",
    "claude": "--backend claude needs ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or "
    "CLAUDE_CODE_OAUTH_TOKEN (each run gets a fresh home, so a login stored in ~/.claude is "
    "not used)\n  fix: export ANTHROPIC_API_KEY=... (or CLAUDE_CODE_OAUTH_TOKEN from "
    "`claude setup-token`), or use --backend emulator to run offline",
}


@dataclass(frozen=True)
class BackendChoice:
    """The backend a run uses and what to tell the user about it."""

    name: str
    """The backend's name, e.g. ``anthropic``, ``claude`` or ``emulator``."""
    notice: str | None = None
    """A line for stderr, e.g. that the model is a scripted stand-in."""


def choose_backend(
    requested: str | None,
    *,
    live: str,
    emulator_notice: str,
    environ: Mapping[str, str] | None = None,
) -> BackendChoice:
    """The backend asked for; else ``live`` when its credentials are set; else the emulator.

    Args:
        requested: ``--backend``, or ``None``.
        live: The layer's live backend (``anthropic`` for pressure, ``claude`` for scenarios).
        emulator_notice: What to tell the user when the emulator answers.
        environ: The environment (``os.environ`` by default).

    Raises:
        CredentialsError: a live backend was asked for without its credentials.
    """
    env = os.environ if environ is None else environ

    def has_credentials(backend: str) -> bool:
        return any(env.get(name) for name in CREDENTIALS[backend])

    if requested in CREDENTIALS and not has_credentials(requested):
        raise CredentialsError(_MISSING[requested])
    if requested == "emulator" or (requested is None and not has_credentials(live)):
        return BackendChoice("emulator", emulator_notice)
    return BackendChoice(requested or live)


PRESSURE_EMULATOR_NOTICE = (
    "skilltest: offline: answers come from the skilltest emulator, a scripted stand-in, not a "
    "model, so the numbers say nothing about how a real model behaves (no ANTHROPIC_API_KEY set, "
    "or --backend emulator). Set ANTHROPIC_API_KEY to test against Claude."
)


class _HasScript(Protocol):
    @property
    def path(self) -> Path: ...

    @property
    def model_script(self) -> Path | None: ...


class TurnRunnerPool:
    """Opens one runner per backend (one per model script for the emulator) and closes them."""

    def __init__(
        self,
        backend: BackendChoice,
        *,
        script: Path | None = None,
        claude: Path | None = None,
        timeout_s: float | None = None,
        max_retries: int | None = None,
        via: Callable[[str], str] | None = None,
        batch_dir: Path | None = None,
    ) -> None:
        """
        Args:
            backend: The chosen backend.
            script: ``--script``: one model script for every suite (emulator).
            claude: ``--claude``: the binary (claude backend).
            timeout_s: Time limit of one request (SDK) or one run (claude); default per runner.
            max_retries: Retries of a failed model request (the SDK's, or the claude CLI's own);
                default per runner.
            via: Given the model API's base URL, the base URL to send requests to instead (a
                recording proxy in front of it); SDK runners then name each run in a header.
            batch_dir: Where the emulator keeps its Message Batches, so that an emulator
                started again (a resumed ``--batch`` run) finds them; ``None``: in memory.
        """
        self.backend = backend
        self.via = via
        self.script = script
        self.claude = claude
        self.limits: dict[str, Any] = {}
        if timeout_s is not None:
            self.limits["timeout_s"] = timeout_s
        if max_retries is not None:
            self.limits["max_retries"] = max_retries
        self.batch_dir = batch_dir
        self._runners: dict[object, TurnRunner] = {}
        self._batch_runners: dict[str, BatchRunner] = {}
        self._servers: dict[Path, EmulatorServer] = {}
        self._scripts: dict[Path, ModelScript] = {}

    def check(self, suites: Sequence[_HasScript]) -> None:
        """Fails early on what would fail later: a suite without a model script, no claude.

        Raises:
            InputError: the emulator backend and a suite with no model script.
            ClaudeNotFoundError: the claude backend and no usable binary.
        """
        if self.backend.name == "emulator":
            from skilltest.emulator import ModelScript

            for suite in suites:
                path = self._script_for(suite)
                if path not in self._scripts:
                    self._scripts[path] = ModelScript.load(path)
        if self.backend.name == "claude":
            from skilltest.runners.claude_turn import ClaudeTurnRunner

            ClaudeTurnRunner.check(self.claude)

    def _script_for(self, suite: _HasScript) -> Path:
        script = self.script or suite.model_script
        if script is None:
            raise InputError(
                "the emulator backend needs a model script and this suite has none",
                location=f"{suite.path}#",
                fix="add `model_script: <path>` to the suite, pass --script FILE, "
                "or set ANTHROPIC_API_KEY to run live",
            )
        return script

    def runner_for(self, suite: _HasScript) -> TurnRunner:
        """The runner that answers this suite's requests (opened on first use)."""
        if self.backend.name == "emulator":
            key: object = self._script_for(suite)
        else:
            key = self.backend.name
        if key not in self._runners:
            self._runners[key] = self._open(key)
        return self._runners[key]

    def runner_key(self, suite: _HasScript) -> str:
        """What answers this suite: the backend's name, or with the emulator its script."""
        if self.backend.name == "emulator":
            return str(self._script_for(suite))
        return self.backend.name

    def batch_runner_for(self, suite: _HasScript) -> BatchRunner:
        """The Message Batches runner that answers this suite's requests (opened on first
        use): the live API's, or the emulator of the suite's script.

        Raises:
            InputError: a backend without batches (the claude CLI).
        """
        from skilltest.runners.batch import BatchRunner

        if self.backend.name not in ("anthropic", "emulator"):
            raise InputError(
                f"--backend {self.backend.name} has no Message Batches",
                location="--batch",
                fix="use --backend anthropic (live) or the emulator with --batch, or drop --batch",
            )
        key = self.runner_key(suite)
        if key not in self._batch_runners:
            limits = {k: v for k, v in self.limits.items() if k in ("timeout_s", "max_retries")}
            if self.backend.name == "anthropic":
                self._batch_runners[key] = BatchRunner(**limits)
            else:
                server = self._server(self._script_for(suite))
                self._batch_runners[key] = BatchRunner(
                    backend="emulator",
                    api_key="sk-emulator",
                    base_url=server.base_url,
                    name_runs=True,
                    **limits,
                )
        return self._batch_runners[key]

    def _server(self, path: Path) -> EmulatorServer:
        from skilltest.emulator import EmulatorServer, ModelScript
        from skilltest.emulator.per_run import PerRunModel

        if path not in self._servers:
            script = self._scripts.get(path) or ModelScript.load(path)
            server = EmulatorServer(
                PerRunModel(script), host="127.0.0.1", port=0, batch_dir=self.batch_dir
            )
            server.start()
            self._servers[path] = server
        return self._servers[path]

    def _open(self, key: object) -> TurnRunner:
        # The SDK takes seconds to import: only commands that send requests pay for it.
        from skilltest.replay.proxy import upstream_of
        from skilltest.runners.anthropic_api import AnthropicRunner

        if self.backend.name == "anthropic":
            if self.via is None:
                return AnthropicRunner(**self.limits)
            upstream = upstream_of(os.environ)
            return AnthropicRunner(
                base_url=self.via(upstream), answers_from=upstream, run_header=True, **self.limits
            )
        if self.backend.name == "claude":
            from skilltest.runners.claude_turn import ClaudeTurnRunner

            # The CLI retries by itself: --max-retries becomes its CLAUDE_CODE_MAX_RETRIES.
            return ClaudeTurnRunner(claude=self.claude, **self.limits)
        assert isinstance(key, Path)
        server = self._server(key)
        return AnthropicRunner(
            backend="emulator",
            api_key="sk-emulator",
            base_url=self.via(server.base_url) if self.via else server.base_url,
            answers_from=server.base_url,
            name_runs=True,
            run_header=self.via is not None,
            **self.limits,
        )

    async def aclose(self) -> None:
        """Closes every runner and stops every emulator server."""
        for runner in self._runners.values():
            await runner.aclose()
        self._runners.clear()
        for batches in self._batch_runners.values():
            await batches.aclose()
        self._batch_runners.clear()
        for server in self._servers.values():
            server.close()
        self._servers.clear()
