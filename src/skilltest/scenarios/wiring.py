"""The canary of a controlled world: proof, before anything writes, that the agent reaches the fake.

The world's health is never in doubt (the fakes run in this process), but where the agent sends
its requests is: a skill pointed at the real service, a client that ignores the proxy, a wrong
token variable. So before the first scenario of a suite that expects writes, one read-only run
asks the agent to look up each service's canary record, which exists only in the fake. When the
fake did not record that read, the suite stops before anything could write (seed 001's check).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from skilltest.errors import ConfigurationError
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runner import RunRequest, ScenarioRunner
from skilltest.scenarios.suite import Scenario, ScenarioSuite

CANARY_ID = "world-canary"
"""The id the canary run is kept under (``output/<skill>/world-canary/``)."""


def expects_writes(scenario: Scenario) -> bool:
    """Whether a scenario could write to its world (it lists or forbids writes)."""
    expected = scenario.world_expected
    return scenario.world is not None and bool(expected.writes or expected.forbidden)


def canary_prompt(host: str, method: str, path: str) -> str:
    """What the canary run asks: one read of a record that exists only in the fake."""
    return (
        f"Look up the record at https://{host}{path} ({method}) and tell me what it holds. "
        "This is a read-only check: change nothing."
    )


async def check_wiring(
    suites: Sequence[ScenarioSuite], runner: ScenarioRunner, output_dir: Path | None = None
) -> list[str]:
    """Runs the canary of every suite that expects writes; returns one line per canary read.

    ``output_dir`` keeps the canary's raw output as the suite's runs are kept (``output/``
    beside the suite file by default).

    Raises:
        ConfigurationError: a canary read the fake never saw: the traffic went elsewhere.
    """
    seen: list[str] = []
    for suite in suites:
        first = next((s for s in suite.scenarios if not s.skip and expects_writes(s)), None)
        if first is None or first.world is None:
            continue
        for service in first.world.services:
            if service.canary is None:
                continue
            method, path = service.canary
            host = service.hosts[0]
            scenario = dataclasses.replace(
                first,
                id=CANARY_ID,
                prompt=canary_prompt(host, method, path),
                turns=(),
                world_profile=None,
                world_expected=dataclasses.replace(
                    first.world_expected, writes=(), forbidden=(), claims=()
                ),
            )
            outcome = await runner.run(
                RunRequest(
                    scenario,
                    Arm.WITH_SKILL,
                    0,
                    suite_path=suite.path,
                    output_dir=output_dir or suite.output_folder,
                    model_script=suite.model_script,
                )
            )
            world = outcome.world
            calls = world.calls if world is not None else ()
            if not any(call.get("method") == method and call.get("path") == path for call in calls):
                made = [
                    f"{c.get('method')} {c.get('host')}{c.get('path')} -> {c.get('status')}"
                    for c in calls
                ]
                escaped = [
                    f"{v.get('host')} ({v.get('reason')})"
                    for v in (world.egress_violations if world is not None else ())
                ]
                what = (
                    "the fake saw " + "; ".join(made) if made else "the fake saw no call at all"
                ) + ("; refused destinations: " + "; ".join(escaped) if escaped else "")
                transcript = outcome.transcript_path or "(no transcript kept)"
                raise ConfigurationError(
                    f"world canary: the agent's read of {method} {path} never reached the fake "
                    f"{service.name} ({what}), so its writes would not either; nothing that "
                    f"writes was started. Transcript: {transcript}\n"
                    "  fix: make the skill call the service's real hostname "
                    f"({', '.join(service.hosts)}) with the token in "
                    f"${service.auth_env or 'its variable'}, through the proxy the run sets "
                    "(HTTPS_PROXY); a client that ignores it needs Claude Code's sandbox "
                    "(install bubblewrap and socat)"
                )
            seen.append(f"world canary: {method} {host}{path} reached the fake {service.name}")
    return seen
