"""Record and replay for the pressure layer: which cassette a run belongs to, and the recording
proxies in front of each upstream.

A pressure run names itself ``<suite file>#<scenario>:<arm>`` (``TurnRequest.run``); its cassette
is ``<root>/<skill>/<scenario>/<arm>.yaml`` and its repetition ``TurnRequest.rep``. While
recording, the SDK runner sends every request through a :class:`RecordingProxy` with that name in
a header; as soon as a run has its answer, its repetition is written into its cassette, so an
interrupted recording keeps every repetition that finished.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skilltest.pressure.suite import PressureSuite
from skilltest.pressure.verdict import WITH_SKILL, WITHOUT_SKILL
from skilltest.replay.normalise import Rules
from skilltest.replay.proxy import RecordedExchange, RecordingProxy
from skilltest.replay.recorder import CassetteKey, Recorder
from skilltest.runners.base import TurnRequest, TurnRunner
from skilltest.transcript import Transcript
from skilltest.transcript.origin import EMULATOR_HEADER, RULE_HEADER


def run_name(suite: PressureSuite, scenario_id: str, arm: str) -> str:
    """The ``run`` a pressure request carries (see :mod:`skilltest.pressure.runs`)."""
    return f"{suite.path}#{scenario_id}:{arm}"


class PressureCassettes:
    """Maps pressure runs to their cassettes and suite rules."""

    def __init__(self, suites: Sequence[PressureSuite]) -> None:
        self.keys: dict[str, CassetteKey] = {}
        self.rules: dict[str, Rules] = {}
        self.suite_of: dict[str, PressureSuite] = {}
        for suite in suites:
            for scenario in suite.scenarios:
                for arm in (WITH_SKILL, WITHOUT_SKILL):
                    run = run_name(suite, scenario.id, arm)
                    self.keys[run] = CassetteKey(suite.skill.name, scenario.id, arm)
                    self.rules[run] = suite.replay
                    self.suite_of[run] = suite

    def key_of(self, run: str) -> CassetteKey:
        """The cassette of a run."""
        return self.keys[run]

    def rules_of(self, run: str) -> Rules:
        """The normalisation rules of a run's suite."""
        return self.rules[run]


class PressureRecording:
    """The recording side of a pressure command: proxies, the recorder, finished scenarios."""

    def __init__(
        self, root: Path, suites: Sequence[PressureSuite], *, model: str, backend: str
    ) -> None:
        self.cassettes = PressureCassettes(suites)
        self.recorder = Recorder(root, layer="pressure", model=model, backend=backend)
        self._proxies: dict[str, RecordingProxy] = {}

    def via(self, upstream: str) -> str:
        """The base URL of a recording proxy in front of ``upstream`` (one per upstream)."""
        if upstream not in self._proxies:
            proxy = RecordingProxy(upstream, on_exchange=self._exchange)
            self._proxies[upstream] = proxy.start()
        return self._proxies[upstream].base_url

    def _exchange(self, recorded: RecordedExchange) -> None:
        if recorded.run is None or "|" not in recorded.run:
            return
        run, _, rep = recorded.run.rpartition("|")
        key = self.cassettes.keys.get(run)
        if key is not None and rep.isdigit():
            self.recorder.add(key, int(rep), recorded, rules=self.cassettes.rules[run])

    def runner(self, inner: TurnRunner) -> TurnRunner:
        """``inner``, each run of which is written into its cassette as soon as it ends."""
        return _WritingRunner(inner, self)

    def ended(self, run: str | None, rep: int) -> None:
        """Writes a run's repetition into its cassette (nothing when nothing was recorded)."""
        key = self.cassettes.keys.get(run or "")
        if key is None or run is None:
            return
        suite = self.cassettes.suite_of[run]
        self.recorder.finish(key, rep, suite=str(suite.path), rules=self.cassettes.rules[run])

    def answered(
        self,
        request: TurnRequest,
        body: Mapping[str, Any],
        message: Mapping[str, Any],
        *,
        mark: str | None = None,
        rule: str | None = None,
    ) -> None:
        """A run answered through a Message Batch: its request and message written into its
        cassette as the exchange of the same request sent directly would be, so that a replay
        (which sends nothing) finds it; ``mark``: the emulator's, when the batch's results
        carried it; ``rule``: the emulator's naming of the rule that answered (its
        :data:`RULE_HEADER`)."""
        run = request.run or ""
        key = self.cassettes.keys.get(run)
        if key is None:
            return
        exchange = RecordedExchange(
            run=f"{run}|{request.rep}",
            method="POST",
            path="/v1/messages",
            body=dict(body),
            response={
                "status": 200,
                # In the order the emulator sends them: a direct recording keeps the same.
                "headers": {
                    **({EMULATOR_HEADER: mark} if mark is not None else {}),
                    **({RULE_HEADER: rule} if rule is not None else {}),
                    "content-type": "application/json",
                },
                "body": dict(message),
            },
        )
        self.recorder.begin(key, request.rep, rules=self.cassettes.rules[run])
        self.recorder.add(key, request.rep, exchange, rules=self.cassettes.rules[run])
        self.ended(run, request.rep)

    def close(self) -> None:
        """Stops every proxy."""
        for proxy in self._proxies.values():
            proxy.close()
        self._proxies.clear()


class _WritingRunner:
    """A turn runner whose runs are written into their cassettes as they end."""

    def __init__(self, inner: TurnRunner, recording: PressureRecording) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.recording = recording

    async def run_turn(self, request: TurnRequest) -> Transcript:
        transcript = await self.inner.run_turn(request)
        self.recording.ended(request.run, request.rep)
        return transcript

    async def aclose(self) -> None:
        await self.inner.aclose()
