"""Writing cassettes while runs go: a cassette per (skill, scenario, arm), an entry per repetition.

The recording proxies hand over every exchange of a run as it happens; when the run ends, its
repetition is written into its cassette (the file is rewritten atomically, so an interrupted
suite keeps every repetition that finished). A repetition recorded again replaces the old one;
the others stay, which is what ``--record-missing`` needs.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.model_apis import api_of_path
from skilltest.replay.cassette import Cassette, Exchange
from skilltest.replay.normalise import (
    Rules,
    RunPaths,
    fingerprint,
    normalise_mcp,
    normalise_request,
    rules_in_force,
)
from skilltest.replay.proxy import RecordedExchange
from skilltest.transcript.origin import emulator_mark

NO_RULES = Rules()
"""A suite without ``replay:`` rules."""

MODEL = "model"
"""The channel of the model API's exchanges."""

EMULATOR = "emulator"
"""What a cassette names as its backend when the skilltest emulator answered it."""


@dataclass(frozen=True)
class CassetteKey:
    """Which cassette: ``<root>/<skill>/<scenario>/<arm>.yaml``."""

    skill: str
    """The skill under test (or the plugin's name)."""
    scenario: str
    """The scenario id."""
    arm: str
    """``with_skill`` or ``without_skill``."""


@dataclass
class _Run:
    paths: RunPaths | None
    rules: Rules
    exchanges: list[Exchange] = field(default_factory=list)
    ended: tuple[str, Rules] | None = None
    """The suite and its rules once the run has ended: its repetition is due in the cassette."""
    api: str | None = None
    """The model API the run's requests went to (``anthropic``, ``responses``, ``chat``)."""


def channel_of(path: str) -> str:
    """The channel a model API path is recorded under (``count_tokens`` keeps its own steps)."""
    return f"{MODEL}:count_tokens" if path.endswith("/count_tokens") else MODEL


def to_exchange(
    recorded: RecordedExchange, step: int, *, paths: RunPaths | None, rules: Rules
) -> Exchange:
    """A proxied model exchange as a cassette holds it: normalised request, fingerprint."""
    from skilltest.emulator.side_requests import classify_side_request

    body = recorded.body if isinstance(recorded.body, Mapping) else {}
    normalised = normalise_request(body, paths=paths, rules=rules, endpoint=recorded.path)
    side = classify_side_request(body) if recorded.path.endswith("/v1/messages") else None
    kind = (
        "count_tokens"
        if recorded.path.endswith("/count_tokens")
        else (f"side:{side}" if side else "main")
    )
    return Exchange(
        step=step,
        channel=channel_of(recorded.path),
        fingerprint=fingerprint(normalised),
        request=normalised,
        response=dict(recorded.response),
        kind=kind,
    )


def mcp_exchanges(
    server: str,
    entries: Sequence[Mapping[str, Any]],
    *,
    paths: RunPaths | None,
    rules: Rules,
) -> list[Exchange]:
    """What the MCP relay logged for one server, as cassette exchanges in order."""
    exchanges = []
    for step, entry in enumerate(entries):
        normalised = normalise_mcp(
            str(entry.get("method")), entry.get("params"), paths=paths, rules=rules
        )
        exchanges.append(
            Exchange(
                step=step,
                channel=f"mcp:{server}",
                fingerprint=fingerprint(normalised),
                request=normalised,
                response=dict(entry.get("response") or {}),
                kind=str(entry.get("method")),
            )
        )
    return exchanges


def merged_backend(old: str | None, new: str | None, *, others: bool) -> str | None:
    """What a cassette says answered it after a repetition recorded with ``new`` joins
    repetitions (``others``) recorded with ``old``: a stand-in's answers anywhere make the whole
    cassette offline, and answers of unknown origin keep it unknown."""
    if not others or old == new:
        return new
    if EMULATOR in (old, new):
        return EMULATOR
    return None if old is None else new


def agent_name(agent: str | None) -> str:
    """The agent a cassette's ``agent`` names (``None``: Claude Code's runs)."""
    return agent or "claude-code"


def others_of(cassette: Cassette, rep: int) -> bool:
    """Whether the cassette holds repetitions besides ``rep``."""
    return any(r != rep for r in cassette.repetitions)


class Recorder:
    """Collects the exchanges of running runs and writes each repetition into its cassette."""

    def __init__(
        self,
        root: Path,
        *,
        layer: str,
        model: str | None = None,
        cli_version: str | None = None,
        backend: str | None = None,
        agent: str | None = None,
    ) -> None:
        """
        Args:
            root: The cassette folder (``--record DIR``).
            layer: ``pressure``, ``scenarios`` or ``triggers``.
            model: The model asked for, written into each cassette.
            cli_version: The version of the agent's CLI (scenario and trigger layers).
            agent: The agent whose CLI runs when it is not Claude Code (``opencode``,
                ``codex``), written into each cassette.
            backend: The backend that answers (``emulator`` for the scripted stand-in), written
                into each cassette so that its replays are known as offline or live; a
                repetition whose answers carry the emulator's mark is written as the
                emulator's whatever this says.
        """
        self.root = root
        self.layer = layer
        self.model = model
        self.backend = backend
        self.cli_version = cli_version
        self.agent = agent
        self._lock = threading.Lock()
        self._runs: dict[tuple[CassetteKey, int], _Run] = {}
        self._cassettes: dict[CassetteKey, Cassette] = {}
        self.written: set[Path] = set()

    def path_for(self, key: CassetteKey) -> Path:
        """The cassette file of a key."""
        return Cassette.path_for(self.root, key.skill, key.scenario, key.arm)

    def begin(
        self, key: CassetteKey, rep: int, *, paths: RunPaths | None = None, rules: Rules = NO_RULES
    ) -> None:
        """A run starts: its exchanges are collected from now on (replacing any earlier try)."""
        with self._lock:
            self._runs[(key, rep)] = _Run(paths, rules)

    def protect(self, key: CassetteKey, rep: int, values: Iterable[str]) -> None:
        """Keeps more values of a run out of its cassette (its own secrets, known once the run
        has started: a controlled world's tokens)."""
        with self._lock:
            run = self._runs.get((key, rep))
            if run is not None:
                run.rules = run.rules.with_secrets(values)

    def add(
        self, key: CassetteKey, rep: int, recorded: RecordedExchange, *, rules: Rules = NO_RULES
    ) -> None:
        """One model exchange of a run (from the recording proxy's thread); ``rules`` apply
        when the run was not begun with its own."""
        if recorded.method not in ("POST",) or recorded.response.get("status") == 0:
            return  # reads and unreachable upstreams are nothing a model answered
        with self._lock:
            run = self._runs.setdefault((key, rep), _Run(None, rules))
            channel = channel_of(recorded.path)
            run.api = api_of_path(recorded.path) or run.api
            step = sum(1 for e in run.exchanges if e.channel == channel)
            run.exchanges.append(to_exchange(recorded, step, paths=run.paths, rules=run.rules))

    def add_mcp(
        self, key: CassetteKey, rep: int, server: str, entries: Sequence[Mapping[str, Any]]
    ) -> None:
        """What the MCP relay logged for one server of a run."""
        with self._lock:
            run = self._runs.setdefault((key, rep), _Run(None, NO_RULES))
            run.exchanges.extend(mcp_exchanges(server, entries, paths=run.paths, rules=run.rules))

    def finish(
        self, key: CassetteKey, rep: int, *, suite: str, rules: Rules = NO_RULES
    ) -> Path | None:
        """Writes the run's repetition into its cassette; ``None`` when nothing was recorded.

        The run has ended from here on: when an interrupt (Ctrl-C, SIGTERM) stops the writing,
        :meth:`flush` writes it.
        """
        with self._lock:
            run = self._runs.get((key, rep))
            if run is None or not run.exchanges:
                self._runs.pop((key, rep), None)
                return None
            run.ended = (suite, rules)
            try:
                path = self._write(key, rep, run)
            except Exception:
                del self._runs[(key, rep)]  # a failure, not an interrupt: not written again
                raise
            del self._runs[(key, rep)]
            return path

    def flush(self) -> list[Path]:
        """Writes the repetitions of the runs that ended but are not written yet (an interrupt
        came while their cassette was written); the runs still going are left out."""
        with self._lock:
            written = []
            for (key, rep), run in list(self._runs.items()):
                if run.ended is not None:
                    written.append(self._write(key, rep, run))
                    del self._runs[(key, rep)]
            return written

    def _write(self, key: CassetteKey, rep: int, run: _Run) -> Path:
        assert run.ended is not None
        suite, rules = run.ended
        cassette = self._cassettes.get(key)
        if cassette is None:
            path = self.path_for(key)
            cassette = (
                Cassette.load(path, layer=self.layer)
                if path.is_file()
                else Cassette(
                    path=path,
                    layer=self.layer,
                    suite=suite,
                    skill=key.skill,
                    scenario=key.scenario,
                    arm=key.arm,
                )
            )
            if cassette.layer != self.layer:
                raise InputError(
                    f"{path} holds a {cassette.layer} cassette of the same skill and scenario "
                    f"id; this {self.layer} run would overwrite it",
                    location=str(path),
                    fix="give one of the two scenarios another id, or record this layer into "
                    "another folder",
                )
            self._cassettes[key] = cassette
        from skilltest import __version__

        if run.api is not None and run.api != cassette.api and others_of(cassette, rep):
            raise InputError(
                f"{cassette.path} holds {cassette.api} exchanges; this run spoke {run.api}",
                location=str(cassette.path),
                fix="record each API (each agent) into a folder of its own",
            )
        if cassette.agent != self.agent and others_of(cassette, rep):
            raise InputError(
                f"{cassette.path} holds runs of {agent_name(cassette.agent)}; this run is "
                f"{agent_name(self.agent)}'s",
                location=str(cassette.path),
                fix="record each agent into a folder of its own",
            )
        cassette.suite = suite
        cassette.api = run.api or cassette.api
        cassette.agent = self.agent
        cassette.model = self.model or cassette.model
        others = any(r != rep for r in cassette.repetitions)
        # What answered, not what the run was told it talks to: an answer with the emulator's
        # mark makes the repetition the stand-in's, whatever the backend was called.
        marked = any(emulator_mark(e.response.get("headers")) for e in run.exchanges)
        answered = EMULATOR if marked else self.backend
        cassette.backend = merged_backend(cassette.backend, answered, others=others)
        cassette.cli_version = self.cli_version or cassette.cli_version
        cassette.skilltest_version = __version__
        cassette.recorded_at = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        cassette.rules = rules_in_force(rules)
        cassette.redact = rules.secrets
        cassette.repetitions[rep] = run.exchanges
        cassette.save()
        self.written.add(cassette.path)
        return cassette.path
