"""Record and replay for the scenario layer: endpoints that put a proxy between the claude CLI and
its model, and a relay between the CLI and each of its MCP servers.

:class:`RecordingEndpoint` wraps the endpoint a run would use anyway (the live API or the
emulator): the CLI's ``ANTHROPIC_BASE_URL`` points at a :class:`RecordingProxy` in front of it,
each MCP server is started through the relay in ``record`` mode, and when the run ends its
repetition is written into its cassette.

:class:`ReplayEndpoint` answers from the cassettes: the proxy serves the recorded model
exchanges, and each MCP server is replaced by the relay in ``replay`` mode, which starts no
server. With a fallback endpoint (``--record-missing``) a run whose repetition was never
recorded runs live and is recorded, and a run that misses part way goes live from the miss on.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

from skilltest.claude.isolation import Sandbox, denied_folders, user_home_folder
from skilltest.names import child
from skilltest.plugins import McpServer
from skilltest.replay.cassette import Cassette
from skilltest.replay.match import Miss, Player, missing_cassette, other_agent
from skilltest.replay.normalise import Rules, RunPaths, normalise_request, rules_in_force
from skilltest.replay.proxy import RecordingProxy, upstream_of
from skilltest.replay.recorder import CassetteKey, Recorder, agent_name
from skilltest.scenarios.runner import Endpoint, EndpointSession, RunRequest, protected_paths

REPLAY_API_KEY = "sk-skilltest-replay"
"""The key the CLI sends to the replaying proxy; never a real credential."""

RELAY = (sys.executable, "-m", "skilltest.replay.mcp_relay")
"""How a run starts the MCP relay."""


def cassette_key(request: RunRequest) -> CassetteKey:
    """The cassette of a run: ``<root>/<skill>/<scenario>/<arm>.yaml`` (``cassette_arm`` in place
    of the arm when the request names one)."""
    arm = request.cassette_arm or request.arm.value
    return CassetteKey(request.scenario.label, request.scenario.id, arm)


def run_paths(sandbox: Sandbox | None, request: RunRequest | None = None) -> RunPaths | None:
    """The run's own paths, and the folders its settings deny reading (the user's home, the
    skill's and the suite's repositories), which recordings hold as placeholders."""
    if sandbox is None:
        return None
    user_home = user_home_folder()
    denied = denied_folders(sandbox, protected_paths(request)) if request is not None else []
    return RunPaths(
        workdir=str(sandbox.workdir),
        home=str(sandbox.home),
        tmp=str(sandbox.tmp),
        root=str(sandbox.root),
        user_home=str(user_home) if user_home in denied else None,
        repos=tuple(str(folder) for folder in denied if folder != user_home),
    )


def _paths_json(paths: RunPaths | None) -> str:
    return json.dumps(dataclasses.asdict(paths) if paths is not None else {})


def _relay_recording(
    server: McpServer, log: Path, paths: RunPaths | None, rules: Rules
) -> McpServer:
    return dataclasses.replace(
        server,
        command=RELAY[0],
        args=(
            *RELAY[1:],
            "record",
            "--log",
            str(log),
            "--paths-json",
            _paths_json(paths),
            "--rules-json",
            _rules_json(rules),
            "--",
            server.command,
            *server.args,
        ),
    )


def _rules_json(rules: Rules) -> str:
    return json.dumps(
        {
            "ignore": list(rules.ignore),
            "normalise": [{"pattern": p, "replacement": r} for p, r in rules.normalise],
            "redact": list(rules.redact),
        }
    )


def _relay_replaying(
    server: McpServer, exchanges: Path, misses: Path, paths: RunPaths | None, rules: Rules
) -> McpServer:
    return dataclasses.replace(
        server,
        command=RELAY[0],
        args=(
            *RELAY[1:],
            "replay",
            "--exchanges",
            str(exchanges),
            "--misses",
            str(misses),
            "--paths-json",
            _paths_json(paths),
            "--rules-json",
            _rules_json(rules),
        ),
    )


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError, RecursionError):
            entry = json.loads(line)
            if isinstance(entry, dict):
                entries.append(entry)
    return entries


def _record(
    recorder: Recorder,
    key: CassetteKey,
    rep: int,
    exchange: Any,
    rules: Rules,
    secrets: Mapping[str, str],
) -> None:
    """Adds one exchange to a run's cassette, the secrets the run has met so far kept out."""
    recorder.protect(key, rep, secrets.values())
    recorder.add(key, rep, exchange, rules=rules)


def _finish(
    recorder: Recorder,
    key: CassetteKey,
    request: RunRequest,
    rules: Rules,
    secrets: Mapping[str, str],
) -> None:
    """Closes a run's cassette: the suite it came from, its rules with the run's secrets."""
    recorder.finish(
        key, request.rep, suite=str(request.suite_path), rules=rules.with_secrets(secrets.values())
    )


class RecordingEndpoint:
    """Runs against ``inner`` and records every exchange into cassettes."""

    def __init__(
        self,
        inner: Endpoint,
        recorder: Recorder,
        *,
        rules_of: Callable[[RunRequest], Rules],
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.recorder = recorder
        self.rules_of = rules_of

    @contextlib.asynccontextmanager
    async def session(
        self, request: RunRequest, sandbox: Sandbox | None = None
    ) -> AsyncIterator[EndpointSession]:
        key, rules, paths = (
            cassette_key(request),
            self.rules_of(request),
            run_paths(sandbox, request),
        )
        self.recorder.begin(key, request.rep, paths=paths, rules=rules)
        logs: dict[str, Path] = {}
        secrets: dict[str, str] = {}

        def on_exchange(exchange: Any) -> None:
            _record(self.recorder, key, request.rep, exchange, rules, secrets)

        def wrap(server: McpServer) -> McpServer:
            assert sandbox is not None
            log = sandbox.root / f"mcp-{len(logs)}.jsonl"
            logs[server.name] = log
            return _relay_recording(server, log, paths, rules)

        async with self.inner.session(request, sandbox) as inner:
            secrets.update(inner.secrets)  # a credential point's: the real key, the placeholder
            upstream = upstream_of(inner.env)
            with RecordingProxy(upstream, on_exchange=on_exchange) as proxy:
                session = dataclasses.replace(
                    inner,
                    env={**inner.env, "ANTHROPIC_BASE_URL": proxy.base_url},
                    wrap_server=wrap if sandbox is not None else None,
                    secrets=secrets,
                )
                try:
                    yield session
                finally:
                    inner.requests[:] = session.requests
        self.recorder.protect(key, request.rep, secrets.values())
        for name, log in logs.items():
            self.recorder.add_mcp(key, request.rep, name, _read_jsonl(log))
        _finish(self.recorder, key, request, rules, secrets)


class ReplayEndpoint:
    """Answers from the cassettes under ``root``; ``fallback`` records what they miss."""

    name = "replay"

    def __init__(
        self,
        root: Path,
        *,
        rules_of: Callable[[RunRequest], Rules],
        fallback: Endpoint | None = None,
        recorder: Recorder | None = None,
        layer: str = "scenarios",
        agent: str = "claude-code",
    ) -> None:
        """
        Args:
            root: The cassette folder (``--replay DIR``).
            rules_of: The suite's normalisation rules of a run.
            fallback: The endpoint that answers what the cassettes miss (``--record-missing``).
            recorder: Where what the fallback answers is recorded.
            layer: The layer whose cassettes these are (``scenarios`` or ``triggers``).
            agent: The agent whose CLI the runs start; a cassette of another agent's runs is
                a miss, whatever its requests.
        """
        self.root = root
        self.layer = layer
        self.agent = agent
        self.rules_of = rules_of
        self.fallback = fallback
        self.recorder = recorder
        self._cassettes: dict[CassetteKey, Cassette | None] = {}

    def cassette(self, key: CassetteKey) -> Cassette | None:
        """The cassette of a key, loaded once; ``None`` when there is none."""
        if key not in self._cassettes:
            path = Cassette.path_for(self.root, key.skill, key.scenario, key.arm)
            self._cassettes[key] = Cassette.load(path, layer=self.layer) if path.is_file() else None
        return self._cassettes[key]

    @contextlib.asynccontextmanager
    async def session(
        self, request: RunRequest, sandbox: Sandbox | None = None
    ) -> AsyncIterator[EndpointSession]:
        key, rules, paths = (
            cassette_key(request),
            self.rules_of(request),
            run_paths(sandbox, request),
        )
        cassette = self.cassette(key)
        path = Cassette.path_for(self.root, key.skill, key.scenario, key.arm)
        upfront: Miss | None = None
        if cassette is not None and agent_name(cassette.agent) != self.agent:
            upfront = other_agent(path, request.rep, agent_name(cassette.agent), self.agent)
            cassette = None
        recorded = cassette is not None and request.rep in cassette.repetitions
        if (
            upfront is None
            and not recorded
            and self.fallback is not None
            and self.recorder is not None
        ):
            # Nothing of this repetition was recorded: the whole run goes live, recorded.
            live = RecordingEndpoint(self.fallback, self.recorder, rules_of=lambda _: rules)
            async with live.session(request, sandbox) as session:
                yield session
            return
        # A repetition the cassette lacks is the player's own miss ("repetition 2 was not
        # recorded (the cassette holds repetitions 0-1)").
        player = (
            Player(cassette, request.rep, rules=rules_in_force(rules))
            if cassette is not None
            else None
        )
        if player is None and upfront is None:
            upfront = missing_cassette(path, request.rep)
        async with contextlib.AsyncExitStack() as stack:
            upstream: str | None = None
            secrets: dict[str, str] = {}
            inner_env: dict[str, str] = {}
            if self.fallback is not None and self.recorder is not None and recorded:
                inner = await stack.enter_async_context(self.fallback.session(request, sandbox))
                upstream, inner_env = upstream_of(inner.env), inner.env
                secrets.update(inner.secrets)
                self.recorder.begin(key, request.rep, paths=paths, rules=rules)
            recorder = self.recorder

            def on_exchange(ex: Any) -> None:
                if recorder is not None and upstream is not None:
                    _record(recorder, key, request.rep, ex, rules, secrets)

            proxy = stack.enter_context(
                RecordingProxy(
                    upstream,
                    on_exchange=on_exchange,
                    player=player or _EmptyPlayer(upfront),
                    normalise=lambda body, api_path: normalise_request(
                        body if isinstance(body, dict) else {},
                        paths=paths,
                        rules=rules.with_secrets(secrets.values()),
                        endpoint=api_path,
                    ),
                )
            )
            misses_log = sandbox.root / "mcp-misses.jsonl" if sandbox is not None else None

            def wrap(server: McpServer) -> McpServer:
                assert sandbox is not None and misses_log is not None
                exchanges = child(
                    sandbox.root, f"mcp-recorded-{server.name}.json", what="the MCP server name"
                )
                recorded_mcp = [
                    {
                        "method": exchange.request.get("method"),
                        "params": exchange.request.get("params"),
                        "response": exchange.response,
                    }
                    for exchange in (cassette.repetitions.get(request.rep, []) if cassette else [])
                    if exchange.channel == f"mcp:{server.name}"
                ]
                exchanges.write_text(json.dumps(recorded_mcp), encoding="utf-8")
                return _relay_replaying(server, exchanges, misses_log, paths, rules)

            session = EndpointSession(
                # The cassette's answers (with the emulator's mark when it answered the
                # recording), or the upstream's once a miss went live.
                answered_by=proxy.answered_by,
                emulator_rules=proxy.emulator_rules,
                env={
                    **{k: v for k, v in inner_env.items() if k != "ANTHROPIC_BASE_URL"},
                    "ANTHROPIC_BASE_URL": proxy.base_url,
                    "ANTHROPIC_API_KEY": inner_env.get("ANTHROPIC_API_KEY", REPLAY_API_KEY),
                    # A replayed answer is the same on a retry; a live one may not be.
                    "CLAUDE_CODE_MAX_RETRIES": inner_env.get("CLAUDE_CODE_MAX_RETRIES", "0"),
                },
                wrap_server=wrap if sandbox is not None else None,
                secrets=secrets,
                recorded_with=(cassette.backend or "unknown") if recorded and cassette else None,
            )
            try:
                yield session
            finally:
                session.misses.extend(proxy.misses if upstream is None else [])
                if misses_log is not None:
                    session.misses.extend(
                        Miss(
                            cassette=path,
                            rep=request.rep,
                            step=0,
                            channel="mcp",
                            message=str(entry.get("message")),
                        )
                        for entry in _read_jsonl(misses_log)
                    )
        if upstream is not None and self.recorder is not None and proxy.live:
            _finish(self.recorder, key, request, rules, secrets)


class _EmptyPlayer:
    """A player for a repetition nothing was recorded for: every request is the same miss."""

    def __init__(self, miss: Miss | None) -> None:
        assert miss is not None
        self.miss = miss

    def answer(self, channel: str, normalised: Any) -> Miss:
        return self.miss
