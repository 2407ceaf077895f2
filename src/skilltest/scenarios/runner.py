"""One conversation of one arm through the real ``claude`` CLI, in a fresh sandbox.

Where the model lives is an :class:`Endpoint`: the live API with the user's credentials
(``claude`` backend) or an in-process emulator answering from a model script (``emulator``
backend). Either way the same CLI runs with the same flags, so a scenario's transcript never
depends on where the answers came from.

Raw output is kept per run under the output folder::

    <output>/<skill>/<scenario>/<arm>-<rep>.ndjson         what the CLI printed (stream-json)
    <output>/<skill>/<scenario>/<arm>-<rep>.stderr.txt     what it printed on stderr
    <output>/<skill>/<scenario>/<arm>-<rep>.requests.json  the model requests (emulator only)

Credentials are replaced by ``[REDACTED:<VARIABLE>]`` before anything is written or parsed.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import os
import shutil
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from skilltest.checks.evaluate import Snapshot, snapshot
from skilltest.checks.model import CheckResult
from skilltest.claude.binary import ClaudeBinary
from skilltest.claude.isolation import (
    Baseline,
    Sandbox,
    ancestor_leaks,
    confinement_warnings,
    create_sandbox,
    init_event,
    init_warnings,
    install_plugin,
    install_plugin_servers,
    isolated_env,
    isolation_flags,
    loaded,
    write_mcp_config,
)
from skilltest.claude.process import (
    Invocation,
    ProcessOutput,
    StopCheck,
    build_argv,
    run_conversation,
    unrecoverable_api_error,
)
from skilltest.names import child
from skilltest.plugins import McpServer
from skilltest.redact import CREDENTIAL_VARIABLES, Redactor
from skilltest.report.files import write_json_atomic, write_text_atomic
from skilltest.runners.base import DEFAULT_MODEL
from skilltest.scenarios.mocks import AgentRelay, RunMocks, mocks_for, run_mocks
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.suite import DEFAULT_ALLOWED_TOOLS, Scenario
from skilltest.scheduler import ProcessLine, Turn
from skilltest.skills import Skill
from skilltest.transcript import AnsweredBy, Transcript
from skilltest.transcript.model import ApiRetry, call_argument
from skilltest.transcript.origin import ScriptRule
from skilltest.transcript.stream_json import parse_stream_json, stream_events
from skilltest.world.calls import mock_call_lines
from skilltest.world.instance import WorldInstance
from skilltest.world.score import WorldOutcome, judge_world

_T = TypeVar("_T")


@dataclass(frozen=True)
class RunRequest:
    """One repetition of one arm of one scenario."""

    scenario: Scenario
    """What to run."""
    arm: Arm
    """With or without the skill."""
    rep: int
    """Repetition number, from 0."""
    suite_path: Path
    """The suite file (for messages)."""
    output_dir: Path | None = None
    """Where this run's raw output is kept; ``None`` keeps nothing."""
    model_script: Path | None = None
    """The emulator's model script for this suite."""
    stop_on: StopCheck | None = None
    """A caller's own early stop (the trigger layer stops once it knows whether the skill
    fired): checked after the unrecoverable-API-error check; a run it stops ends as
    ``Transcript.ended`` with its reason, not as an error."""
    previous: Skill | None = None
    """The skill at the ``--against`` REF of this run's arm (``previous``, ``previous-2``...):
    it is installed in place of the skill under test, as the with-skill arm installs the
    current one."""
    settings: Mapping[str, object] | None = None
    """More ``--settings`` for this run (the trigger layer's stop hook)."""
    cassette_arm: str | None = None
    """The name of this run's cassette in its scenario's folder instead of the arm's (the
    trigger layer's ``current`` or ``candidate``)."""

    @property
    def installed(self) -> tuple[Skill, ...]:
        """The skills this run installs (not a plugin's): the scenario's skills for the
        with-skill arm, the same with the previous revision's skill under test for
        ``previous``, none for the without-skill arm."""
        scenario = self.scenario
        if self.arm == Arm.WITH_SKILL:
            return scenario.skills
        if self.arm.revision and self.previous is not None:
            under_test = scenario.skill.skill_file
            return tuple(
                self.previous if skill.skill_file == under_test else skill
                for skill in scenario.skills
            )
        return ()


@dataclass(frozen=True)
class RunOutcome:
    """What one run produced, before scoring."""

    transcript: Transcript
    """The parsed output; ``error`` is set for a run that did not execute."""
    transcript_path: Path | None = None
    """The raw stream-json output, as kept."""
    stderr_path: Path | None = None
    """The CLI's stderr, as kept."""
    requests_path: Path | None = None
    """The model requests the emulator recorded."""
    duration_s: float = 0.0
    """Wall time of the CLI process."""
    warnings: tuple[str, ...] = ()
    """Isolation problems seen in this run."""
    loaded: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """What the CLI said it loaded: ``skills``, ``plugins``, ``mcp_servers`` (with status)."""
    world: WorldOutcome | None = None
    """What the controlled world saw and what it makes of it, when the scenario has one."""
    redact: Callable[[str], str] | None = None
    """The run's redaction (credentials and the world's tokens), for what is written from the
    outcome later: the world's calls and the trace."""
    checks: tuple[CheckResult, ...] = ()
    """What each of the scenario's outcome checks found in the run's workspace."""


def run_files(request: RunRequest, *, transcript: str) -> tuple[Path, Path, Path] | None:
    """Where a run's transcript (its file name ending ``transcript``), stderr and model
    requests are kept: ``OUTPUT/SKILL/SCENARIO/ARM-REP.*``; ``None`` without an output folder."""
    if request.output_dir is None:
        return None
    skill_folder = child(request.output_dir, request.scenario.label, what="the skill name")
    folder = child(skill_folder, request.scenario.id, what="the scenario id")
    stem = f"{request.arm.label}-{request.rep}"
    return (
        folder / f"{stem}{transcript}",
        folder / f"{stem}.stderr.txt",
        folder / f"{stem}.requests.json",
    )


def protected_paths(request: RunRequest) -> tuple[Path, ...]:
    """What a run's agent must not read: the skills' sources, the plugin's, and the suite's
    repository (each denied through its git repository)."""
    plugin = request.scenario.plugin
    return (
        *(s.directory for s in request.scenario.skills),
        *((plugin.root,) if plugin is not None else ()),
        request.suite_path,
    )


def model_hosts(env: Mapping[str, str]) -> tuple[str, ...]:
    """The model API's host, which a world's proxy lets through untouched."""
    url = urlsplit(env.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com")
    return (url.netloc,) if url.netloc else ()


@dataclass(frozen=True)
class RunSite:
    """What a run's outcome checks read besides its transcript."""

    workdir: Path
    """The agent's working directory, as the run left it."""
    env: Mapping[str, str]
    """The run's environment (a ``command`` check runs with it)."""
    before: Snapshot
    """The working directory before the run (what a check calls created or changed)."""
    events: tuple[Mapping[str, Any], ...]
    """The run's events as Claude Code's stream-json prints them (credentials redacted): what
    a ``plugin_eval`` check reads."""


async def outcome_checks(
    request: RunRequest,
    transcript: Transcript,
    site: RunSite,
    *,
    judge: Callable[[], Awaitable[Any]],
    judge_model: str,
    redact: Redactor,
    world: WorldInstance | None,
    mocks: RunMocks | None = None,
) -> tuple[CheckResult, ...]:
    """A run's outcome checks, evaluated in its workspace (none for a run that did not execute:
    it is unscored anyway), and the veto of a run a mock aborted; whichever agent ran it.

    Args:
        judge: Opens the one-turn runner a ``judge`` check asks through (the run's endpoint),
            called only when the scenario has one.
        judge_model: The model a judge asks for.
    """
    expected = request.scenario.expected
    if transcript.error is not None:
        return ()
    aborted = mocks.aborted() if mocks is not None else None
    vetoes = (replace(aborted, evidence=redact(aborted.evidence)),) if aborted else ()
    if not expected.checks:
        return vetoes
    from skilltest.checks import plugin_eval
    from skilltest.checks.evaluate import RunView, evaluate
    from skilltest.checks.judge import JudgeModel

    asks = None
    if any(check.kind == "judge" for check in expected.checks):
        asks = JudgeModel(await judge(), judge_model)
    # Checks that only the arm with the skill gets still apply to every arm when nothing
    # else is scored: a scenario must score both arms to compare them.
    with_skill = request.arm != Arm.WITHOUT_SKILL or (
        not expected.defined and all(check.arm == "with" for check in expected.checks)
    )
    mock_lines = [mock_call_lines(world.calls)] if world is not None else []
    if mocks is not None:
        mock_lines.append(plugin_eval.mock_calls_text(site.events, mocks.records()))
    view = RunView(
        workdir=site.workdir,
        transcript=transcript,
        before=site.before,
        env=site.env,
        mock_calls="\n".join(line for line in mock_lines if line),
        events=site.events,
        mocks_active=mocks is not None,
    )
    results = await evaluate(expected.checks, view, with_skill=with_skill, judge=asks)
    return vetoes + tuple(
        replace(
            result,
            evidence=redact(result.evidence),
            error=None if result.error is None else redact(result.error),
        )
        for result in results
    )


def allowed_tools(
    rules: Sequence[str], servers: Sequence[McpServer], *, explicit: bool
) -> tuple[str, ...]:
    """The ``--allowedTools`` rules of a run: the scenario's, and, unless it gave its own,
    every tool of the run's MCP servers (``mcp__<server>``), the same in both arms."""
    if explicit:
        return tuple(rules)
    return (*rules, *(f"mcp__{server.name}" for server in servers))


def timed_out(
    transcript: Transcript,
    stdout: str,
    limit_s: float,
    *,
    score_partial: bool = False,
    at_limit: str | None = None,
) -> Transcript:
    """A run its time limit cut short: whose the wait was decides whether it counts.

    A tool call the agent made that was still running (a ``tool_use`` with no result: a Bash
    command that hangs, a request without a time-out) is the agent's own doing: the run is
    scored and fails, its reason naming the call (:attr:`Transcript.hung`), unless the CLI was
    retrying a failing model request at the end (a subagent's, beside the call): an outage.
    Otherwise the run was waiting on the model API or on the CLI itself, and is unscored: the
    model API failing until the limit (the CLI retrying a 429 storm, a 529 or a 401) is an
    outage, with what the API answered; a model that never answered, or a run cut off between
    tool calls while the model (or the CLI) took its time, never finished its task, unless the
    scenario says ``score_partial: true``, which scores it on what it did.

    What was going on is read from ``at_limit``, what stdout held when the limit fell (default:
    all of it): once stopped, the CLI prints the results of the commands it had started as they
    die, which would hide the hang.
    """
    limit = f"timed out after {limit_s:g}s"
    then = stdout if at_limit is None else at_limit
    retry = retrying_at_end(then)
    if retry is not None:
        status = f"HTTP {retry.error_status}" if retry.error_status is not None else "no answer"
        kind = f" ({retry.error})" if retry.error else ""
        count = len(transcript.api_retries)
        return replace(
            transcript,
            error=f"model API failing: {status}{kind}, the CLI had retried {count} "
            f"{'time' if count == 1 else 'times'} when the run {limit}",
        )
    running = (transcript if at_limit is None else parse_stream_json(at_limit)).running_call
    if running is not None:
        shown = call_argument(running.input, 80)
        reason = (
            f"cut off after {limit_s:g} s while its {running.name} call"
            + (f" `{shown}`" if shown else "")
            + " was still running"
        )
        return replace(transcript, error=None, ended=reason, hung=reason)
    if not transcript.tool_calls and not transcript.assistant_text:
        seen = f"; {transcript.error}" if transcript.error else ""
        return replace(
            transcript,
            error=f"{limit} before the model answered (waiting on the model API or the CLI "
            f"itself, no tool call of the agent's running){seen}",
        )
    if not score_partial:
        return replace(
            transcript,
            error=f"cut short: {limit} after {len(transcript.tool_calls)} tool calls, waiting on "
            "the model API or the CLI itself (no tool call of the agent's running), before the "
            "agent finished (score_partial: true scores what it did)",
        )
    return replace(
        transcript,
        error=None,
        ended=f"{limit} (process group killed; scored on its "
        f"{len(transcript.tool_calls)} tool calls)",
    )


def retrying_at_end(stdout: str) -> ApiRetry | None:
    """The CLI's retry of a failing model request, when that is the last thing it printed."""
    for line in _lines_from_the_end(stdout):
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(event, dict) or event.get("type") not in ("system", "assistant", "user"):
            continue
        if event.get("type") == "system" and event.get("subtype") == "api_retry":
            status = event.get("error_status")
            error = event.get("error")
            return ApiRetry(
                error=error if isinstance(error, str) else None,
                error_status=status if isinstance(status, int) else None,
            )
        if event.get("type") == "system" and event.get("subtype") not in ("init", None):
            continue
        return None
    return None


def _lines_from_the_end(text: str) -> Iterator[str]:
    """The non-blank lines of ``text``, stripped, last first, without splitting all of it.

    Only "\\n" ends a line, as in the stream-json reader: U+2028 and the other breaks
    ``str.splitlines`` knows may stand unescaped inside a JSON string.
    """
    end = len(text)
    while end >= 0:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end].strip()
        end = start - 1
        if line:
            yield line


OWN_STOP = "stopped by the caller: "
"""Marks a stop that :attr:`RunRequest.stop_on` asked for (behaviour, not an outage)."""
MOCK_STOP = "stopped: "
"""Marks a stop a mock asked for by aborting the run (behaviour: the run is vetoed)."""
SETUP_TIMEOUT_S = 120.0
"""How long a scenario's ``setup`` script may take."""


def _stop_check(own: StopCheck | None, mocks: RunMocks | None = None) -> StopCheck:
    """The API-error check, then a mock's abort, then the caller's own check, whose reasons
    are marked as its."""
    if own is None and mocks is None:
        return unrecoverable_api_error

    def check(event: dict[str, Any]) -> str | None:
        reason = unrecoverable_api_error(event)
        if reason is not None:
            return reason
        if mocks is not None:
            aborted = mocks.stop_reason(event)
            if aborted is not None:
                return MOCK_STOP + aborted
        asked = own(event) if own is not None else None
        return None if asked is None else OWN_STOP + asked

    return check


async def run_setup(script: Path, sandbox: Sandbox) -> str | None:
    """Runs a scenario's ``setup`` script with bash in the run's working directory, with a
    plain environment (the run's home and temp folder, no credential) and a time limit; returns
    why it failed, or ``None``."""
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(sandbox.home),
        "TMPDIR": str(sandbox.tmp),
        "TERM": "dumb",
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    try:
        process = await asyncio.create_subprocess_exec(
            "bash",
            str(script),
            cwd=sandbox.workdir,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return f"setup {script.name} could not start: {exc}"
    try:
        _, stderr = await asyncio.wait_for(process.communicate(), SETUP_TIMEOUT_S)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, 9)
        await process.wait()
        return f"setup {script.name} still running after {SETUP_TIMEOUT_S:g}s; killed"
    if process.returncode != 0:
        tail = stderr.decode("utf-8", errors="replace").strip()[-500:]
        return f"setup {script.name} failed (exit {process.returncode})" + (
            f": {tail}" if tail else ""
        )
    return None


@dataclass(frozen=True)
class PreparedRun:
    """What a run's sandbox holds before its process starts."""

    plugin_dirs: tuple[Path, ...]
    """The plugin copies the CLI loads (``--plugin-dir``)."""
    servers: tuple[McpServer, ...]
    """The MCP servers the run gets, before any endpoint or world adds its own."""
    mocks: RunMocks | None
    """The run's mocks, their specs written."""
    before: Snapshot
    """The workspace's files as they were (for the outcome checks)."""
    resume: Path | None
    """The run's copy of the session it resumes."""
    add_dirs: tuple[Path, ...]
    """The run's copies of the folders the agent may also read."""
    warnings: list[str]
    """What above the sandbox the CLI may load."""


async def finished_in_thread(
    work: Callable[[], _T], *, abandoned: Callable[[_T], object] | None = None
) -> _T:
    """``work()`` run in a thread, off the event loop.

    A caller cancelled meanwhile (Ctrl-C), once or again while it unwinds, still waits for the
    thread to end (a run's files are quick to make or remove), and hands what it made to
    ``abandoned``, so that a sandbox made for a run that never came is not left behind, nor one
    removed while its files are still being written. The work is a future of the executor, not a
    task: nothing that cancels every task can lose what it made.
    """
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(None, contextvars.copy_context().run, work)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        while not future.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([future])
        if abandoned is not None and not future.cancelled() and future.exception() is None:
            abandoned(future.result())
        raise


class ScenarioRunner(Protocol):
    """Anything that runs one conversation and returns its transcript."""

    backend: str
    """``claude`` or ``emulator`` (or a test double's name)."""
    cli_version: str | None
    """The ``claude`` version the runs use, recorded with the results."""

    async def run(self, request: RunRequest) -> RunOutcome:
        """Runs one conversation; failures come back as a transcript with ``error`` set."""
        ...


@dataclass
class EndpointSession:
    """The model endpoint for one run: what the CLI needs in its environment."""

    env: dict[str, str]
    """``ANTHROPIC_BASE_URL``, credentials and retry settings."""
    requests: list[Any] = field(default_factory=list)
    """The model requests the endpoint saw (the emulator fills this in)."""
    wrap_server: Callable[[McpServer], McpServer] | None = None
    """What the run's MCP servers become (a recording or replaying relay in front of each)."""
    misses: list[Any] = field(default_factory=list)
    """Replay misses of the run: requests no cassette holds (the run is then unscored)."""
    secrets: dict[str, str] = field(default_factory=dict)
    """The run's own secrets, by name, added once known (a controlled world's tokens): a
    recording keeps them out of its cassette, a replay matches them as the recording did."""
    recorded_with: str | None = None
    """A replayed run: the backend its cassette was recorded with (``unknown`` when the cassette
    does not say); ``None`` for a run that is not replayed."""
    answered_by: Callable[[], AnsweredBy | None] = field(default=lambda: None)
    """What answered the run's model requests (where they went, the emulator's mark), asked
    once the session has ended; ``None`` when the endpoint cannot tell."""
    emulator_rules: Callable[[], tuple[ScriptRule, ...]] = field(default=lambda: ())
    """Offline: the rules of the emulator's model script that answered the run's model
    requests, asked once the session has ended; empty when no emulator said."""


class Endpoint(Protocol):
    """Where the model answers come from."""

    name: str
    """The backend's name."""

    def session(
        self, request: RunRequest, sandbox: Sandbox | None = None
    ) -> contextlib.AbstractAsyncContextManager[EndpointSession]:
        """Opens the endpoint for one run (``sandbox``: the run's folders, whose paths a
        recording replaces by placeholders)."""
        ...


class ClaudeCliRunner:
    """Runs scenarios through the real ``claude`` CLI against an endpoint."""

    def __init__(
        self,
        binary: ClaudeBinary,
        endpoint: Endpoint,
        *,
        sandbox_base: Path | None = None,
        judge_model: str | None = None,
        processes: int | None = None,
        on_first_start: Callable[[], object] | None = None,
        baseline: Baseline = "clean",
    ) -> None:
        """
        Args:
            binary: The CLI.
            endpoint: Where the model answers come from.
            sandbox_base: Where sandboxes are created (the system temp folder by default).
            judge_model: The model ``judge`` checks ask (default: the scenario's model, else
                :data:`~skilltest.runners.base.DEFAULT_MODEL`).
            processes: The most CLI processes at once (``-j``), whatever the number of runs
                under way: a run prepares its sandbox before it waits for one, and is checked,
                judged and cleared away after its process has ended, beside the next run's
                process. Processes start in the order the runs did. ``None``: each run
                takes a process as it comes.
            on_first_start: Called once the first run's process has started: what the command
                does beside its runs (importing what its judges and verdicts need) then leaves
                the command's own start to itself.
            baseline: ``clean`` (both arms without the CLI's bundled skills and built-in
                plugins) or ``bundled`` (both arms with them, as ``claude plugin eval``'s).
        """
        self.baseline = baseline
        self.binary = binary
        self.endpoint = endpoint
        self.backend = endpoint.name
        self.cli_version: str | None = binary.version
        self.sandbox_base = sandbox_base
        self.judge_model = judge_model
        self.line = ProcessLine(processes, on_first_start)
        from skilltest.checks.judge import ModelRunners

        self.model_runners = ModelRunners(claude=binary.path)

    async def aclose(self) -> None:
        """Closes the clients the runs' judges and agent responders asked through."""
        await self.model_runners.aclose()

    async def run(self, request: RunRequest) -> RunOutcome:
        # The run's place among the processes is taken now, so that runs start their processes
        # in the order they were started, however long each takes to prepare.
        turn = self.line.place()
        try:
            return await self._run(request, turn)
        finally:
            if turn is not None:
                turn.release()

    async def _run(self, request: RunRequest, turn: Turn | None) -> RunOutcome:
        scenario = request.scenario
        plugin = scenario.plugin
        # The files of a run are made and removed in a thread: the event loop goes on reading
        # the other runs' processes and starting the next one meanwhile.
        sandbox = await finished_in_thread(
            lambda: create_sandbox(
                skills=request.installed if plugin is None else (),
                workspace=scenario.workspace,
                workspace_files=scenario.workspace_files,
                base=self.sandbox_base,
            ),
            abandoned=Sandbox.remove,
        )
        try:
            if scenario.setup is not None:
                failed = await run_setup(scenario.setup, sandbox)
                if failed is not None:
                    return RunOutcome(Transcript(source=self.backend, error=failed))
            prepared = await finished_in_thread(lambda: self._prepare(request, sandbox))
            servers, mocks, warnings = prepared.servers, prepared.mocks, prepared.warnings
            async with contextlib.AsyncExitStack() as stack:
                if turn is not None:
                    await stack.enter_async_context(turn)
                session = await stack.enter_async_context(self.endpoint.session(request, sandbox))
                if session.wrap_server is not None:
                    servers = tuple(session.wrap_server(server) for server in servers)
                world = (
                    stack.enter_context(
                        WorldInstance(
                            scenario.world,
                            profile=scenario.world_profile,
                            folder=sandbox.root / "world",
                            pass_through=model_hosts(session.env),
                        )
                    )
                    if scenario.world is not None
                    else None
                )
                if world is not None:
                    # The world's tokens are new in every run: never recorded, matched alike.
                    session.secrets.update(
                        WORLD_AGENT_TOKEN=world.agent_token,
                        WORLD_CONTROL_TOKEN=world.control_token,
                    )
                    # Added after any replay wrapping: mocks are the world's, live in every mode.
                    servers = (*servers, *world.mcp_servers(beside=servers))
                relay = None
                if mocks is not None:
                    # Live in every mode too; an agent responder's requests go through the
                    # endpoint, so they are recorded and replayed as the agent's are.
                    servers = (*servers, *mocks.servers)
                    if mocks.relay is not None:
                        relay = await stack.enter_async_context(
                            AgentRelay(
                                mocks,
                                functools.partial(self._model_runner, session),
                                self._judge_model(request),
                            )
                        )
                env = isolated_env(
                    home=sandbox.home,
                    credentials={**session.env, **(world.env() if world is not None else {})},
                    tmp=sandbox.tmp,
                )
                config = scenario.config
                # The scenario's variables never replace the isolation's own or a credential.
                env = {**config.env, **env}
                rules = allowed_tools(
                    config.allowed_tools,
                    servers,
                    explicit=(config.allowed_tools is not DEFAULT_ALLOWED_TOOLS),
                )
                if mocks is not None:
                    # Mocked tools are allowed whatever the scenario lists, as plugin eval does.
                    rules = (
                        *rules,
                        *(f"mcp__{m.name}" for m in mocks.servers if f"mcp__{m.name}" not in rules),
                    )
                argv = build_argv(
                    self.binary.path,
                    prompt=scenario.prompt,
                    multi_turn=bool(scenario.turns),
                    max_turns=config.max_turns,
                    allowed_tools=rules,
                    disallowed_tools=config.disallowed_tools,
                    model=config.model,
                    isolation=isolation_flags(
                        self.binary.version,
                        sandbox=sandbox,
                        protected=protected_paths(request),
                        extra={
                            **(world.settings() if world is not None else {}),
                            **(request.settings or {}),
                        },
                        bundled=self.baseline == "bundled",
                    ),
                    plugin_dirs=prepared.plugin_dirs,
                    mcp_config=write_mcp_config(servers, sandbox),
                    resume=prepared.resume,
                    add_dirs=prepared.add_dirs,
                    append_system_prompt=config.append_system_prompt,
                )
                output = await run_conversation(
                    Invocation(
                        argv=argv,
                        cwd=sandbox.workdir,
                        env=env,
                        timeout_s=config.timeout_s,
                        first_message=scenario.prompt if scenario.turns else None,
                        follow_ups=scenario.turns,
                        stop_on=_stop_check(request.stop_on, mocks),
                        on_start=self.line.first_start,
                    )
                )
                # The next run's process may start: what is left of this one (its checks and
                # judges, its files) goes on beside it.
                if turn is not None:
                    turn.release()
                # The world's tokens are the run's own, and stay out of what is stored too.
                secrets = {name: env[name] for name in CREDENTIAL_VARIABLES if env.get(name)}
                redact = Redactor({**secrets, **session.secrets})
                transcript, stdout, stderr = await asyncio.to_thread(
                    self._transcript, request, output, redact, session
                )
                # While the endpoint is open: a judge asks through it (recorded, replayed,
                # answered by the emulator like the agent's requests).
                checks = await self._checks(
                    request,
                    transcript,
                    sandbox,
                    env,
                    prepared.before,
                    session,
                    redact,
                    world,
                    mocks,
                    stdout,
                )
            if session.misses:
                # What the CLI (or a judge) made of a refused request is beside the point: the
                # cassette is stale. The endpoint knows its misses once it is closed.
                transcript = replace(transcript, error=session.misses[0].message, ended=None)
            if session.recorded_with is not None:
                transcript = replace(transcript, recorded_with=session.recorded_with)
            transcript = replace(
                transcript,
                answered_by=session.answered_by(),
                emulator_rules=session.emulator_rules(),
            )
            outcome = await asyncio.to_thread(
                self._outcome,
                request,
                output,
                transcript,
                (stdout, stderr),
                redact,
                session,
                warnings,
            )
            if relay is not None and relay.errors:
                outcome = replace(outcome, warnings=(*outcome.warnings, *map(redact, relay.errors)))
            outcome = replace(outcome, checks=checks)
            if world is None:
                return outcome
            transcript = outcome.transcript
            judged = judge_world(
                scenario.world_expected,
                calls=world.calls,
                violations=world.violations,
                turn_starts=output.turn_starts,
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

    def _prepare(self, request: RunRequest, sandbox: Sandbox) -> PreparedRun:
        """What a run needs in its sandbox before its process starts (blocking file work, done
        in a thread)."""
        scenario = request.scenario
        plugin_dirs, servers = self._plugin_parts(request, sandbox)
        mocks = run_mocks(
            mocks_for(
                scenario.mocks, scenario.plugin, plugin_servers=self._gets_plugin_servers(request)
            ),
            sandbox.root,
            relay=sandbox.root / "relay.sock",
        )
        if mocks is not None:
            # A mock stands in for the plugin's server of that name: only one answers.
            servers = tuple(s for s in servers if s.name not in mocks.stands_in_for)
        return PreparedRun(
            plugin_dirs=plugin_dirs,
            servers=(*servers, *scenario.config.mcp_servers),
            mocks=mocks,
            before=snapshot(sandbox.workdir) if scenario.expected.checks else {},
            resume=self._resume_copy(scenario.resume, sandbox),
            add_dirs=self._add_dir_copies(scenario.config.add_dirs, sandbox),
            warnings=[
                f"{path} is above the sandbox and may be loaded by the CLI"
                for path in ancestor_leaks(sandbox.workdir)
            ],
        )

    @staticmethod
    def _resume_copy(session_file: Path | None, sandbox: Sandbox) -> Path | None:
        """A copy of the session a run resumes, in the run's folder (the CLI may write to the
        file it resumes; the suite's stays as it is)."""
        if session_file is None:
            return None
        target = sandbox.root / "resume" / session_file.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(session_file, target)
        return target

    @staticmethod
    def _add_dir_copies(folders: Sequence[Path], sandbox: Sandbox) -> tuple[Path, ...]:
        """Copies of the folders the agent may also read, beside its working directory: the
        originals sit in the suite's repository, which the run's confinement keeps out."""
        copies = []
        for index, folder in enumerate(folders):
            target = sandbox.root / "add-dirs" / f"{index}-{folder.name}"
            shutil.copytree(folder, target, symlinks=False)
            copies.append(target)
        return tuple(copies)

    def _judge_model(self, request: RunRequest) -> str:
        """The model judges and agent responders ask for."""
        return self.judge_model or request.scenario.config.model or DEFAULT_MODEL

    async def _model_runner(self, session: EndpointSession) -> Any:
        """A one-turn runner through the run's own endpoint (the command's, for every run that
        has the same endpoint)."""
        return await self.model_runners.runner(session.env)

    @staticmethod
    def _gets_plugin_servers(request: RunRequest) -> bool:
        """Whether the run's arm gets the plugin's MCP servers (and the mocks standing in
        for them)."""
        if request.scenario.plugin is None:
            return False
        return request.arm == Arm.WITH_SKILL or request.scenario.plugin_mcp == "both"

    async def _checks(
        self,
        request: RunRequest,
        transcript: Transcript,
        sandbox: Sandbox,
        env: Mapping[str, str],
        before: Snapshot,
        session: EndpointSession,
        redact: Redactor,
        world: WorldInstance | None,
        mocks: RunMocks | None = None,
        stdout: str = "",
    ) -> tuple[CheckResult, ...]:
        """The scenario's outcome checks, evaluated in the run's workspace (none for a run that
        did not execute: it is unscored anyway), and the veto of a run a mock aborted."""
        return await outcome_checks(
            request,
            transcript,
            RunSite(sandbox.workdir, env, before, tuple(stream_events(stdout))),
            judge=lambda: self._model_runner(session),
            judge_model=self._judge_model(request),
            redact=redact,
            world=world,
            mocks=mocks,
        )

    @staticmethod
    def _plugin_parts(
        request: RunRequest, sandbox: Sandbox
    ) -> tuple[tuple[Path, ...], tuple[McpServer, ...]]:
        """The plugin folders the run loads and the plugin's MCP servers it gets.

        The with-skill arm loads the whole plugin (a copy in its working directory) and gets its
        servers; the without-skill arm gets only the servers (``plugin_mcp: both``), from a copy
        without the plugin's skills, agents, commands or hooks.
        """
        plugin = request.scenario.plugin
        if plugin is None:
            return (), ()
        # plugin_servers: mocked starts none of the plugin's own: a mock stands in for each
        # server that has one, and the others are left out (as plugin eval leaves them out).
        own = request.scenario.plugin_servers == "all"
        if request.arm == Arm.WITH_SKILL:
            folder, servers = install_plugin(plugin, sandbox)
            return (folder,), servers if own else ()
        if request.scenario.plugin_mcp == "both" and own:
            return (), install_plugin_servers(plugin, sandbox)
        return (), ()

    def _transcript(
        self,
        request: RunRequest,
        output: ProcessOutput,
        redact: Redactor,
        session: EndpointSession,
    ) -> tuple[Transcript, str, str]:
        """The run's transcript, and its stdout and stderr redacted: parsed, and with why it did
        not execute or was cut short."""
        stdout, stderr = redact(output.stdout), redact(output.stderr)
        transcript = parse_stream_json(
            stdout, exit_code=output.exit_code, stderr=stderr, prompt=request.scenario.prompt
        )
        if output.start_error is not None:
            transcript = replace(transcript, error=f"claude did not start: {output.start_error}")
        elif (
            output.stopped_reason is not None
            and request.stop_on is not None
            and (output.stopped_reason.startswith(OWN_STOP))
        ):
            transcript = replace(
                transcript, error=None, ended=output.stopped_reason.removeprefix(OWN_STOP)
            )
        elif output.stopped_reason is not None and output.stopped_reason.startswith(MOCK_STOP):
            # Behaviour, not an outage: the run is scored, and the mock's veto zeroes it.
            transcript = replace(
                transcript, error=None, ended=output.stopped_reason.removeprefix(MOCK_STOP)
            )
        elif output.stopped_reason is not None:
            count = len(transcript.api_retries)
            transcript = replace(
                transcript,
                error=f"{output.stopped_reason} (stopped after the CLI's {count} "
                f"{'retry' if count == 1 else 'retries'})",
                ended=None,
            )
        elif output.timed_out:
            scenario = request.scenario
            transcript = timed_out(
                transcript,
                stdout,
                scenario.config.timeout_s,
                score_partial=scenario.score_partial,
                at_limit=None if output.at_limit is None else redact(output.at_limit),
            )
        return transcript, stdout, stderr

    def _outcome(
        self,
        request: RunRequest,
        output: ProcessOutput,
        transcript: Transcript,
        streams: tuple[str, str],
        redact: Redactor,
        session: EndpointSession,
        warnings: list[str],
    ) -> RunOutcome:
        """The run's outcome once its endpoint is closed: its output kept, what the CLI loaded,
        what looked wrong about its isolation."""
        stdout, stderr = streams
        scenario = request.scenario
        with_skill = request.arm == Arm.WITH_SKILL
        plugin = scenario.plugin
        installed: list[Skill] = []
        if with_skill:
            installed = list(plugin.skills if plugin is not None else scenario.skills)
        elif plugin is None:
            installed = list(request.installed)
        init = init_event(stdout.splitlines())
        warnings = [
            *warnings,
            *init_warnings(
                init,
                installed,
                requests=session.requests,
                plugins=(plugin.name,) if with_skill and plugin is not None else (),
                bundled=self.baseline == "bundled",
            ),
            *confinement_warnings(),
        ]
        paths = run_files(request, transcript=".ndjson")
        requests_path = None
        if paths is not None:
            write_text_atomic(paths[0], stdout)
            write_text_atomic(paths[1], stderr)
            if session.requests:
                requests_path = paths[2]
                write_json_atomic(requests_path, json.loads(redact(json.dumps(session.requests))))
        return RunOutcome(
            transcript=transcript,
            transcript_path=paths[0] if paths else None,
            stderr_path=paths[1] if paths else None,
            requests_path=requests_path,
            duration_s=output.duration_s,
            warnings=tuple(warnings),
            loaded=loaded(init),
            redact=redact,
        )
