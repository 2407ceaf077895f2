"""One conversation of one arm through an agent other than Claude Code, in a fresh sandbox.

The agent (:class:`skilltest.agents.base.TurnAgent`) says how it is isolated, started and
read; this runner does what every agent's run needs alike: a sandbox with the skills where the
agent reads them (none in the without-skill arm), the scenario's setup, the endpoint (whose key
is a placeholder: the real one never enters the sandbox), one process per user message in a
process group of its own (stopped, with everything it started, when the run ends, its time is
up or the request's stop check says so: a trigger run once it is decided), the transcript, and
the raw output kept as the Claude Code runner keeps it::

    <output>/<skill>/<scenario>/<arm>-<rep>.jsonl          what the agent printed, every turn
    <output>/<skill>/<scenario>/<arm>-<rep>.stderr.txt     what it printed on stderr
    <output>/<skill>/<scenario>/<arm>-<rep>.requests.json  the model requests (emulator only)

A controlled world runs as it does for Claude Code, in ``proxy-env`` mode: the agent's commands
get the world's proxy, CA and token variables (:meth:`TurnAgent.isolate`), its fakes answer on
the real hostnames and anything else is refused and recorded. Outcome checks and judges read the
run's workspace as they do Claude Code's; a ``plugin_eval`` check reads the run as Claude Code's
events would show it (:func:`~skilltest.transcript.model.claude_events`). What only Claude Code
has (plugins, ``mocks:``, a resumed session, extra folders) is refused
before any run by :func:`check_agent_scenarios`. The suite's stdio MCP servers and a world's
mock MCP servers run in the agent's own configuration, their calls read as
``mcp__server__tool``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from skilltest.agents.base import AgentBinary, RunFolders, TurnAgent
from skilltest.checks.evaluate import snapshot
from skilltest.claude.isolation import Sandbox, create_sandbox
from skilltest.claude.process import Invocation, ProcessOutput, run_conversation
from skilltest.errors import InputError
from skilltest.plugins import McpServer
from skilltest.redact import CREDENTIAL_VARIABLES, Redactor
from skilltest.report.files import write_json_atomic, write_text_atomic
from skilltest.runners.base import DEFAULT_MODEL
from skilltest.scenarios.runner import (
    Endpoint,
    RunOutcome,
    RunRequest,
    RunSite,
    finished_in_thread,
    model_hosts,
    outcome_checks,
    run_files,
    run_setup,
)
from skilltest.scenarios.suite import Scenario
from skilltest.scheduler import ProcessLine
from skilltest.transcript import Transcript
from skilltest.transcript.model import claude_events
from skilltest.world.instance import PROXY_ENV, WorldInstance
from skilltest.world.score import judge_world


def check_agent_scenarios(agent: TurnAgent, scenarios: Sequence[Scenario]) -> None:
    """Refuses, before any run, a scenario that asks for what only Claude Code runs.

    Raises:
        InputError: naming the scenario, what it asks for, and the fix.
    """
    for scenario in scenarios:
        if scenario.skip:
            continue
        asks = [
            what
            for what, present in (
                ("a plugin", scenario.plugin is not None),
                ("MCP mocks (mocks:)", bool(scenario.mocks)),
                ("a resumed session", scenario.resume is not None),
                ("add_dirs", bool(scenario.config.add_dirs)),
            )
            if present
        ]
        if asks:
            raise InputError(
                f"scenario {scenario.id!r} asks for {', '.join(asks)}, which skilltest runs "
                f"through Claude Code only; --agent {agent.name} cannot run it",
                location=scenario.location,
                fix=f"run it with --agent claude-code, or leave it out with --only (or skip: "
                f"in the suite) when running --agent {agent.name}",
            )


def mcp_calls_named(
    transcript: Transcript, agent: TurnAgent, servers: Sequence[McpServer]
) -> Transcript:
    """The transcript with each call of a run's MCP tool under the suite's name for it,
    ``mcp__server__tool`` (OpenCode names it ``server_tool``); the agent's own name is kept
    as the call's ``agent_name``."""
    if not servers:
        return transcript
    # The longest server name first: "desk_tools_x" belongs to "desk_tools" before "desk".
    prefixes = sorted(
        ((agent.mcp_tool(server.name, ""), server.name) for server in servers),
        key=lambda pair: -len(pair[0]),
    )
    calls = []
    for call in transcript.tool_calls:
        if not call.name.startswith("mcp__"):
            for prefix, server in prefixes:
                if call.name.startswith(prefix) and len(call.name) > len(prefix):
                    tool = call.name[len(prefix) :]
                    call = replace(call, name=f"mcp__{server}__{tool}", agent_name=call.name)
                    break
        calls.append(call)
    return replace(transcript, tool_calls=tuple(calls))


class AgentCliRunner:
    """Runs scenarios through a :class:`TurnAgent`'s CLI against an endpoint."""

    def __init__(
        self,
        agent: TurnAgent,
        binary: AgentBinary,
        endpoint: Endpoint,
        *,
        sandbox_base: Path | None = None,
        processes: int | None = None,
        on_first_start: Callable[[], object] | None = None,
        judge_model: str | None = None,
    ) -> None:
        from skilltest.checks.judge import ModelRunners

        self.agent = agent
        self.binary = binary
        self.endpoint = endpoint
        self.backend = endpoint.name
        self.cli_version: str | None = binary.version
        self.sandbox_base = sandbox_base
        self.line = ProcessLine(processes, on_first_start)
        self.judge_model = judge_model
        self.model_runners = ModelRunners()

    async def aclose(self) -> None:
        """Closes the clients the runs' judges asked through."""
        await self.model_runners.aclose()

    async def run(self, request: RunRequest) -> RunOutcome:
        turn = self.line.place()
        try:
            if turn is not None:
                async with turn:
                    return await self._run(request)
            return await self._run(request)
        finally:
            if turn is not None:
                turn.release()

    async def _run(self, request: RunRequest) -> RunOutcome:
        scenario = request.scenario
        sandbox = await finished_in_thread(
            lambda: create_sandbox(
                skills=request.installed,
                workspace=scenario.workspace,
                workspace_files=scenario.workspace_files,
                base=self.sandbox_base or self.agent.sandbox_base(),
            ),
            abandoned=Sandbox.remove,
        )
        try:
            if scenario.setup is not None:
                failed = await run_setup(scenario.setup, sandbox)
                if failed is not None:
                    return RunOutcome(Transcript(source=self.agent.name, error=failed))
            async with contextlib.AsyncExitStack() as stack:
                session = await stack.enter_async_context(self.endpoint.session(request, sandbox))
                world = (
                    stack.enter_context(
                        WorldInstance(
                            scenario.world,
                            profile=scenario.world_profile,
                            folder=sandbox.root / "world",
                            pass_through=model_hosts(session.env),
                            # The agent has no sandbox a world could confine: its commands
                            # follow the proxy variables.
                            mode=PROXY_ENV,
                        )
                    )
                    if scenario.world is not None
                    else None
                )
                servers = tuple(scenario.config.mcp_servers)
                if world is not None:
                    # The world's tokens are new in every run: never recorded, matched alike.
                    session.secrets.update(
                        WORLD_AGENT_TOKEN=world.agent_token,
                        WORLD_CONTROL_TOKEN=world.control_token,
                    )
                    servers = (*servers, *world.mcp_servers(beside=servers))
                folders = RunFolders(sandbox.root, sandbox.workdir, sandbox.home, sandbox.tmp)
                env = await asyncio.to_thread(
                    self.agent.isolate,
                    folders,
                    session.env,
                    model=scenario.config.model,
                    world=world.env() if world is not None else None,
                    mcp_servers=servers,
                )
                # After the agent set up its configuration: what a check calls created or
                # changed is what the run did.
                before = (
                    await asyncio.to_thread(snapshot, sandbox.workdir)
                    if scenario.expected.checks
                    else {}
                )
                outputs = await self._conversation(request, env, sandbox.workdir)
                secrets = {
                    name: session.env[name]
                    for name in CREDENTIAL_VARIABLES
                    if session.env.get(name)
                }
                redact = Redactor({**secrets, **session.secrets})
                stdout = redact("".join(output.stdout for output in outputs))
                stderr = redact("".join(output.stderr for output in outputs))
                transcript = mcp_calls_named(
                    self._transcript(scenario, outputs, stdout, stderr), self.agent, servers
                )
                # While the endpoint is open: a judge asks through it.
                checks = await outcome_checks(
                    request,
                    transcript,
                    RunSite(sandbox.workdir, env, before, claude_events(transcript)),
                    judge=lambda: self.model_runners.runner(session.env),
                    judge_model=self.judge_model or scenario.config.model or DEFAULT_MODEL,
                    redact=redact,
                    world=world,
                )
            if session.misses:
                transcript = replace(transcript, error=session.misses[0].message, ended=None)
            if session.recorded_with is not None:
                transcript = replace(transcript, recorded_with=session.recorded_with)
            transcript = replace(
                transcript, answered_by=session.answered_by(), cli_version=self.binary.version
            )
            paths = run_files(request, transcript=".jsonl")
            requests_path = None
            if paths is not None:
                write_text_atomic(paths[0], stdout)
                write_text_atomic(paths[1], stderr)
                if session.requests:
                    requests_path = paths[2]
                    write_json_atomic(
                        requests_path, json.loads(redact(json.dumps(session.requests)))
                    )
            outcome = RunOutcome(
                transcript=transcript,
                transcript_path=paths[0] if paths else None,
                stderr_path=paths[1] if paths else None,
                requests_path=requests_path,
                duration_s=sum(output.duration_s for output in outputs),
                warnings=self.agent.warnings(env),
                redact=redact,
                checks=checks,
            )
            if world is None:
                return outcome
            judged = judge_world(
                scenario.world_expected,
                calls=world.calls,
                violations=world.violations,
                # Each user message is a process of its own: the turns start with them.
                turn_starts=tuple(
                    output.turn_starts[0] for output in outputs if output.turn_starts
                ),
                final_text=transcript.final_answer,
                mode=world.mode,
                profile=scenario.world_profile,
                fault_profile_active=scenario.world_profile is not None,
                state_diff=world.state_diff(),
            )
            return replace(
                outcome, world=judged, warnings=(*outcome.warnings, *map(redact, world.errors))
            )
        finally:
            await finished_in_thread(sandbox.remove)

    async def _conversation(
        self, request: RunRequest, env: dict[str, str], workdir: Path
    ) -> list[ProcessOutput]:
        """Each user message as a process of its own, continuing the conversation; the turns
        share the scenario's time limit, and a turn that fails, or that the request's stop
        check stops, ends the run."""
        scenario = request.scenario
        outputs: list[ProcessOutput] = []
        session: str | None = None
        deadline = time.monotonic() + scenario.config.timeout_s
        for message in (scenario.prompt, *scenario.turns):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            output = await run_conversation(
                Invocation(
                    argv=self.agent.turn_argv(self.binary, message, session=session),
                    cwd=workdir,
                    env=env,
                    timeout_s=left,
                    stop_on=request.stop_on,
                    on_start=self.line.first_start,
                )
            )
            outputs.append(output)
            if (
                output.stopped_reason is not None
                or output.timed_out
                or output.start_error
                or output.exit_code not in (0, None)
            ):
                break
            session = session or self.agent.session_of(output.stdout)
            if session is None:
                break
        return outputs

    def _transcript(
        self, scenario: Scenario, outputs: list[ProcessOutput], stdout: str, stderr: str
    ) -> Transcript:
        """The run's transcript, with why it did not execute or was cut short."""
        last = outputs[-1] if outputs else None
        transcript = self.agent.parse(
            stdout,
            exit_code=last.exit_code if last is not None else None,
            stderr=stderr,
            prompt=scenario.prompt,
        )
        if last is None:
            return replace(transcript, error="the time limit fell before the first turn")
        if last.start_error is not None:
            return replace(transcript, error=f"{self.agent.name} did not start: {last.start_error}")
        if last.stopped_reason is not None:
            # The caller's stop check ended it (a trigger run, once decided): behaviour, not
            # an outage.
            return replace(transcript, error=None, ended=last.stopped_reason)
        limit = f"timed out after {scenario.config.timeout_s:g}s"
        if last.timed_out:
            running = transcript.running_call
            if running is not None:
                reason = (
                    f"cut off after {scenario.config.timeout_s:g} s while its {running.name} "
                    "call was still running"
                )
                return replace(transcript, error=None, ended=reason, hung=reason)
            if not scenario.score_partial:
                return replace(
                    transcript,
                    error=f"cut short: {limit} after {len(transcript.tool_calls)} tool calls, "
                    "before the agent finished (score_partial: true scores what it did)",
                )
            return replace(transcript, error=None, ended=limit)
        if transcript.error is None and len(outputs) < 1 + len(scenario.turns):
            return replace(
                transcript,
                error=f"{self.agent.name} printed no session id, so the scenario's follow-up "
                "turns could not be sent",
            )
        return transcript
