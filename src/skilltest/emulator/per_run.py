"""One stand-in state per run, so that answers never depend on the order runs arrive in.

Concurrent runs share one server. If they shared one :class:`ScriptedModel` too, ``pick: cycle``,
``pick: random``, ``first_n`` and ``rate`` would depend on which request happened to arrive
first, and ``-j 8`` would not give what ``-j 1`` gives. A client that names its run in the
request's ``metadata.user_id`` (see :func:`run_metadata`) gets a model of its own: seeded with the
script's seed plus the repetition index, its ``cycle`` rules starting at reply number
*repetition*, its faults counted for that run alone. Requests that name no run share one model.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from typing import Any

from skilltest.emulator.prompt_cache import PromptCache
from skilltest.emulator.script import ModelScript
from skilltest.emulator.scripted_model import Answer, ScriptedModel
from skilltest.model_apis import AgentName, ApiFamily

_PREFIX = "skilltest-run:"


def run_metadata(run: str, rep: int) -> dict[str, str]:
    """The request ``metadata`` naming one run; ``rep`` counts repetitions from 0."""
    return {"user_id": f"{_PREFIX}{rep}:{run}"}


def _run_of(body: Mapping[str, Any]) -> tuple[str, int] | None:
    metadata = body.get("metadata")
    user = metadata.get("user_id") if isinstance(metadata, Mapping) else None
    if not isinstance(user, str) or not user.startswith(_PREFIX):
        return None
    rep, _, _ = user[len(_PREFIX) :].partition(":")
    return (user, int(rep)) if rep.isdigit() else None


class PerRunModel:
    """A responder for :class:`EmulatorServer` that keeps one :class:`ScriptedModel` per run."""

    def __init__(self, script: ModelScript) -> None:
        self.script = script
        self._cache = PromptCache()  # like the real one, shared across runs
        self._shared = ScriptedModel(script, cache=self._cache)
        self._models: dict[str, ScriptedModel] = {}
        self._lock = threading.Lock()

    def answer(
        self,
        body: Mapping[str, Any],
        *,
        api: ApiFamily = "anthropic",
        agent: AgentName | None = None,
    ) -> Answer:
        """Answers with the model of the run the request names, or the shared one."""
        run = _run_of(body)
        if run is None:
            return self._shared.answer(body, api=api, agent=agent)
        key, rep = run
        with self._lock:
            model = self._models.get(key)
            if model is None:
                seeded = dataclasses.replace(self.script, seed=self.script.seed + rep)
                model = self._models[key] = ScriptedModel(
                    seeded, cycle_start=rep, cache=self._cache
                )
        return model.answer(body, api=api, agent=agent)
