"""Pressure replay: single-turn answers straight from cassettes, without the SDK or HTTP.

A pressure run is one request. :class:`ReplayTurnRunner` builds the body the SDK runner would
have sent (:func:`skilltest.runners.messages.wire_body`), normalises it as the recording did, and
takes the answer its cassette recorded for that repetition: the message becomes the transcript
exactly as the SDK runner builds it. Retries replay as recorded: when the recording holds a 429
and then the answer, the answer counts; when it holds only failures, the run is the same error
the live run was.

A request the cassette does not hold is a miss: the run is ``error`` with the miss's explanation,
or, with ``--record-missing``, the fallback runner answers it live (through the recording proxy,
which writes it into the cassette).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path

from skilltest.replay.cassette import Cassette, Exchange
from skilltest.replay.match import Miss, Player, missing_cassette
from skilltest.replay.normalise import Rules, normalise_request, rules_in_force
from skilltest.replay.recorder import MODEL, CassetteKey
from skilltest.runners.base import TurnRequest, TurnRunner
from skilltest.runners.messages import api_error, retried, transcript_from_message, wire_body
from skilltest.transcript import Transcript
from skilltest.transcript.origin import (
    CASSETTE,
    AnsweredBy,
    emulator_mark,
    first_each,
    script_rule,
)

BACKEND = "replay"


class ReplayTurnRunner:
    """Answers single-turn requests from the cassettes under ``root``."""

    backend = BACKEND

    def __init__(
        self,
        root: Path,
        *,
        key_of: Callable[[str], CassetteKey],
        rules_of: Callable[[str], Rules],
        fallback: TurnRunner | None = None,
        max_retries: int = 4,
    ) -> None:
        """
        Args:
            root: The cassette folder (``--replay DIR``).
            key_of: The cassette of a request's ``run`` (``suite#scenario:arm``).
            rules_of: The suite's normalisation rules for a request's ``run``.
            fallback: Answers what the cassettes miss (``--record-missing``); ``None`` makes a
                miss the run's error.
            max_retries: How many retries the recording's runner made, for error texts.
        """
        self.root = root
        self.key_of = key_of
        self.rules_of = rules_of
        self.fallback = fallback
        self.max_retries = max_retries
        self.misses: list[Miss] = []
        self._cassettes: dict[CassetteKey, Cassette | None] = {}
        self._players: dict[tuple[CassetteKey, int], Player] = {}

    def _player(self, key: CassetteKey, rep: int, rules: Rules) -> Player | Miss:
        if key not in self._cassettes:
            path = Cassette.path_for(self.root, key.skill, key.scenario, key.arm)
            self._cassettes[key] = Cassette.load(path, layer="pressure") if path.is_file() else None
        cassette = self._cassettes[key]
        if cassette is None:
            path = Cassette.path_for(self.root, key.skill, key.scenario, key.arm)
            return missing_cassette(path, rep)
        if (key, rep) not in self._players:
            self._players[(key, rep)] = Player(cassette, rep, rules=rules_in_force(rules))
        return self._players[(key, rep)]

    async def run_turn(self, request: TurnRequest) -> Transcript:
        """The recorded answer to this repetition's request, or its miss."""
        assert request.run is not None, "replayed requests name their run"
        started = time.monotonic()
        key, rules = self.key_of(request.run), self.rules_of(request.run)
        player = self._player(key, request.rep, rules)
        answers: list[Exchange] = []
        miss: Miss | None = player if isinstance(player, Miss) else None
        if isinstance(player, Player):
            normalised = normalise_request(wire_body(request), rules=rules)
            while True:
                answer = player.answer(MODEL, normalised)
                if isinstance(answer, Miss):
                    miss = miss if answers else answer
                    break
                answers.append(answer)
                if not retried(int(answer.response.get("status") or 200)):
                    break
        if not answers:
            assert miss is not None
            if self.fallback is not None:
                return await self.fallback.run_turn(request)
            self.misses.append(miss)
            return Transcript(source=BACKEND, error=miss.message)
        cassette = self._cassettes.get(key)
        recorded = (cassette.backend if cassette is not None else None) or "unknown"
        marks = [emulator_mark(a.response.get("headers")) for a in answers]
        answered = AnsweredBy(CASSETTE, None, next((m for m in marks if m), None))
        transcript = self._transcript(answers[-1].response, started)
        answered_rules = first_each(
            (script_rule(a.response.get("headers")) for a in answers[-1:]), os.getcwd()
        )
        return replace(
            transcript, recorded_with=recorded, answered_by=answered, emulator_rules=answered_rules
        )

    def _transcript(self, response: Mapping[str, object], started: float) -> Transcript:
        latency = (time.monotonic() - started) * 1000
        status = int(str(response.get("status") or 200))
        body = response.get("body")
        if status != 200:
            return Transcript(
                source=BACKEND, error=api_error(status, body, self.max_retries), latency_ms=latency
            )
        if isinstance(body, Mapping):
            try:
                return transcript_from_message(body, source=BACKEND, latency_ms=latency)
            except TypeError:
                pass
        return Transcript(
            source=BACKEND,
            error=f"unreadable API reply (HTTP {status}) in the cassette",
            latency_ms=latency,
        )

    async def aclose(self) -> None:
        if self.fallback is not None:
            await self.fallback.aclose()
