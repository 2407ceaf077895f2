"""A run's MCP mocks (``mocks/<server>/<tool>.md``): their servers, their relay, their calls.

For each run, :func:`run_mocks` writes each mock's spec into the run's folder and gives the
``--mcp-config`` entries that start it (``python -m skilltest.evalcases.mock_server``) under
the name its tools have in Claude Code: a mock named after one of the plugin's servers stands
in for it as ``plugin_<plugin>_<server>`` (so its tools are
``mcp__plugin_<plugin>_<server>__<tool>``, as in an installed plugin) in the arms that get the
plugin's servers, and any other mock is a server of its own, in every arm.

An agent responder asks the model through :class:`AgentRelay`: a Unix socket in the run's
folder, answered in this process through the run's own endpoint (the emulator offline, a
recording or replaying proxy, the live API), as a judge asks. Its requests are therefore
recorded into and replayed from the run's cassette with the agent's.

The calls are what the mock servers appended to the run's calls file (:meth:`RunMocks.records`):
``mock_calls`` checks read them, and a call a mock aborted (a broken ``expect:`` guard, an
agent's ``ABORT:``) vetoes the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skilltest.checks.model import CheckResult
from skilltest.evalcases.mock_server import ABORTED, AGENT_FAILED, write_spec
from skilltest.evalcases.mocks import MockServer
from skilltest.evalcases.responder import Answered, parse_reply, system_prompt, user_prompt
from skilltest.evalcases.suite import registered_name
from skilltest.plugins import McpServer, Plugin

if TYPE_CHECKING:
    from skilltest.runners.base import TurnRunner

MOCK_SERVER = (sys.executable, "-m", "skilltest.evalcases.mock_server")
"""How a run starts one mock server."""
RESPONDER_MAX_TOKENS = 4096
"""The longest answer an agent responder is asked for."""


@dataclass(frozen=True)
class MockInRun:
    """One mock server in one run."""

    mock: MockServer
    """The mocks folder it serves."""
    registered: str
    """Its name in the run's ``--mcp-config`` (its tools are ``mcp__<registered>__<tool>``)."""
    stands_in: bool
    """Whether it stands in for a server of the plugin."""


def mocks_for(
    mocks: Sequence[MockServer], plugin: Plugin | None, *, plugin_servers: bool
) -> tuple[MockInRun, ...]:
    """The mocks one arm gets: every mock of its own, and the stand-ins for the plugin's
    servers when the arm gets those (``plugin_servers``)."""
    found = []
    for mock in mocks:
        registered, stands_in = registered_name(plugin, mock.name)
        if stands_in and not plugin_servers:
            continue
        found.append(MockInRun(mock, registered, stands_in))
    return tuple(found)


@dataclass
class RunMocks:
    """The mocks of one run, and what they were asked."""

    mocks: tuple[MockInRun, ...]
    """The run's mocks."""
    calls: Path
    """The file their servers append calls to."""
    nonce: str
    """The run's mark in an aborted call's answer."""
    servers: tuple[McpServer, ...] = ()
    """Their ``--mcp-config`` entries."""
    relay: Path | None = None
    """The agent relay's socket, when an agent answers a tool."""
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    """What a mock server shows the relay."""

    @property
    def stands_in_for(self) -> frozenset[str]:
        """The registered names of the plugin servers the mocks replace."""
        return frozenset(m.registered for m in self.mocks if m.stands_in)

    def records(self) -> list[dict[str, Any]]:
        """Every call the mock servers answered, in the order they wrote them."""
        try:
            text = self.calls.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        records = []
        for line in text.splitlines(keepends=True):
            if not line.endswith("\n"):
                continue  # cut short by a server stopped mid-write: never answered
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("nonce") == self.nonce:
                    records.append(record)
        return records

    def aborted(self) -> CheckResult | None:
        """The veto of a run a mock aborted, or ``None``."""
        for record in self.records():
            if record.get("verdict") == "abort":
                reason = (
                    f"mocks/{record.get('server')}/{record.get('tool')}: {record.get('output')}"
                )
                return CheckResult(
                    name="mock abort",
                    kind="mock_abort",
                    passed=False,
                    evidence=f"a mock aborted the run: {reason}",
                    veto=True,
                )
        return None

    def stop_reason(self, event: Mapping[str, Any]) -> str | None:
        """Why to stop the run now: an answer says a mock aborted it."""
        if event.get("type") != "user":
            return None
        text = json.dumps(event.get("message"), ensure_ascii=False)
        mark = f"{ABORTED} {self.nonce}"
        if mark not in text:
            return None
        start = text.index(mark) + len(mark)
        reason = text[start:].split('"', 1)[0].lstrip(": ")
        return f"a mock aborted the run: {reason}"


def run_mocks(
    mocks: tuple[MockInRun, ...], folder: Path, *, relay: Path | None = None
) -> RunMocks | None:
    """Writes the specs of a run's mocks into ``folder`` and returns how the run starts them
    (``None`` without mocks)."""
    if not mocks:
        return None
    nonce = secrets.token_hex(6)
    found = RunMocks(mocks=mocks, calls=folder / "mock-calls.jsonl", nonce=nonce)
    needs_relay = any(m.mock.has_agent() for m in mocks)
    found.relay = relay if needs_relay else None
    servers = []
    for each in mocks:
        spec = write_spec(
            each.mock,
            folder / "mocks" / f"{each.registered}.json",
            registered=each.registered,
            nonce=nonce,
            calls=found.calls,
            relay=found.relay,
            token=found.token,
        )
        servers.append(
            McpServer(
                name=each.registered,
                command=MOCK_SERVER[0],
                args=(*MOCK_SERVER[1:], "--spec", str(spec)),
                origin=each.mock.location,
            )
        )
    found.servers = tuple(servers)
    return found


class AgentRelay:
    """Answers the agent responders of one run's mocks through the run's model endpoint."""

    def __init__(
        self, mocks: RunMocks, runner: Callable[[], Awaitable[TurnRunner]], model: str
    ) -> None:
        """
        Args:
            mocks: The run's mocks (their relay socket and token).
            runner: Gives what asks the model (:func:`skilltest.checks.judge.judge_runner`),
                when the first call comes; its owner closes it.
            model: The model an agent responder asks for.
        """
        assert mocks.relay is not None
        self.mocks = mocks
        self.runner = runner
        self.model = model
        self.by_server = {m.mock.name: m.mock for m in mocks.mocks}
        self.history: dict[str, list[Answered]] = {}
        self.server: asyncio.AbstractServer | None = None
        self.errors: list[str] = []

    async def __aenter__(self) -> AgentRelay:
        assert self.mocks.relay is not None
        self.server = await asyncio.start_unix_server(self._handle, path=str(self.mocks.relay))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.server is not None:
            self.server.close()
            with contextlib.suppress(Exception):
                await self.server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = json.loads(await reader.readline())
            verdict, text = await self.answer(request)
            writer.write((json.dumps({"verdict": verdict, "text": text}) + "\n").encode())
            await writer.drain()
        except (OSError, ValueError) as exc:
            self.errors.append(f"agent relay: {exc}")
        finally:
            writer.close()

    async def answer(self, request: Mapping[str, Any]) -> tuple[str, str]:
        """One call's answer from the model playing the server."""
        from skilltest.runners.base import TurnRequest

        if request.get("token") != self.mocks.token:
            return "tool_error", "the relay refused a request without the run's token"
        server, tool = str(request.get("server")), str(request.get("tool"))
        mock = self.by_server.get(server)
        responder = mock.responders.get(tool) if mock is not None else None
        if responder is None or responder.kind != "agent":
            return "tool_error", f"no agent mock for {server}/{tool}"
        arguments = request.get("input") or {}
        history = self.history.setdefault(server, [])
        asked = TurnRequest(
            prompt=user_prompt(tool, arguments, history),
            system=system_prompt(server, responder.abort_when, responder.text),
            model=self.model,
            max_tokens=RESPONDER_MAX_TOKENS,
        )
        reply = await (await self.runner()).run_turn(asked)
        if reply.error is not None:
            self.errors.append(f"mocks/{server}/{tool}: the model call failed: {reply.error}")
            answered = Answered(tool, arguments, "tool_error", f"{AGENT_FAILED} (model_call)")
        else:
            verdict, text = parse_reply(reply.text, can_abort=responder.abort_when is not None)
            answered = Answered(tool, arguments, verdict, text)
        history.append(answered)
        return answered.verdict, answered.output
