"""The protocol every single-turn runner satisfies.

A runner takes a :class:`TurnRequest` and returns a :class:`~skilltest.transcript.Transcript`.
A run that could not execute (an API error after retries, a crashed process) comes back as a
transcript with ``error`` set rather than as an exception, so one bad run never stops a suite.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol

from skilltest.transcript import Transcript

DEFAULT_MODEL = os.environ.get("SKILLTEST_MODEL", "claude-sonnet-5-5")
"""The model a one-turn request asks for when neither the suite nor the command names one
(``SKILLTEST_MODEL`` sets another)."""


@dataclass(frozen=True)
class TurnRequest:
    """One prompt, one answer, no tools."""

    prompt: str
    """The user message."""
    system: str | None
    """The system prompt: the skill text in the with-skill arm, ``None`` without it."""
    model: str
    """The model name passed to the backend."""
    max_tokens: int = 1024
    """Upper bound on the answer's length."""
    temperature: float | None = None
    """Sampling temperature; ``None`` leaves the backend's default."""
    run: str | None = None
    """Names the run (suite, scenario, arm) for backends that keep state per run."""
    rep: int = 0
    """The repetition, counted from 0."""


class TurnRunner(Protocol):
    """A backend that answers single-turn requests."""

    backend: str
    """The backend's name as chosen with ``--backend``."""

    async def run_turn(self, request: TurnRequest) -> Transcript:
        """Answers one request; failures come back as a transcript with ``error`` set."""
        ...

    async def aclose(self) -> None:
        """Releases connections, processes and servers."""
        ...
