"""Benchmark of the trigger layer's early stop: prints figures, asserts nothing.

For a few queries of the lgtm trigger suite, each repetition runs twice through the real claude
CLI against the emulator, in one process, one run at a time: as a trigger run (stopped as soon as
it is known whether the skill fired) and as a full run of the same query (the same scenario and
turn budget, no early stop, as ``skilltest scenarios`` would run it). Per query and overall it
prints mean model requests, tokens (input with cached input included, and output) and wall time
per run, and how many times cheaper the trigger run is.

    SKILLTEST_CLAUDE=.tools/node_modules/.bin/claude \\
        .venv/bin/python scripts/bench_triggers.py [-k 3] [--query ID ...]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from skilltest.claude.binary import find_claude
from skilltest.scenarios.endpoints import EmulatorEndpoint
from skilltest.scenarios.outcome import Arm
from skilltest.scenarios.runner import ClaudeCliRunner, RunRequest
from skilltest.triggers.runs import scenario_of, trigger_run
from skilltest.triggers.suite import TriggerQuery, TriggerSuite, load_trigger_suite
from skilltest.triggers.verdict import TriggerRun
from skilltest.triggers.watch import TriggerWatch

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "tests" / "triggers" / "lgtm.yaml"
# Both kinds: fires at once, fires after a Glob call, a plain answer, a Bash call and no skill.
DEFAULT_QUERIES = ("loki-error-spike", "outage-traces", "capital-of-france", "python-index-error")


@dataclass(frozen=True)
class Cost:
    """Mean cost of one kind of run of one query."""

    requests: float
    """Model requests the emulator answered (main and side)."""
    tokens_in: float
    """Input tokens, cached input included."""
    tokens_out: float
    """Output tokens."""
    wall_s: float
    """Wall time of the CLI process."""
    fired: int
    """Runs in which the skill fired."""
    runs: int
    """Runs measured."""


def cost(runs: Sequence[TriggerRun]) -> Cost:
    """The mean cost of ``runs``."""

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) if values else float("nan")

    tokens = [run.tokens or {} for run in runs]
    return Cost(
        requests=mean([float(run.requests) for run in runs if run.requests is not None]),
        tokens_in=mean(
            [
                float(
                    t.get("input_tokens", 0)
                    + t.get("cache_creation_input_tokens", 0)
                    + t.get("cache_read_input_tokens", 0)
                )
                for t in tokens
            ]
        ),
        tokens_out=mean([float(t.get("output_tokens", 0)) for t in tokens]),
        wall_s=mean([run.duration_s for run in runs]),
        fired=sum(1 for run in runs if run.ended == "fired"),
        runs=len(runs),
    )


async def measure(
    suite: TriggerSuite, queries: Sequence[TriggerQuery], repetitions: int, output: Path
) -> dict[str, tuple[list[TriggerRun], list[TriggerRun]]]:
    """Per query id, its trigger runs and its full runs, taking turns (which goes first
    alternates) so that drift hits both alike."""
    runner = ClaudeCliRunner(find_claude(), EmulatorEndpoint())
    # One run first that is not counted: the first CLI start of a process pays for cold caches.
    warm_up = RunRequest(
        scenario_of(suite, queries[0], suite.skill),
        Arm.WITH_SKILL,
        0,
        suite_path=suite.path,
        output_dir=output / "warm-up",
        model_script=suite.model_script,
    )
    await runner.run(warm_up)
    measured: dict[str, tuple[list[TriggerRun], list[TriggerRun]]] = {}
    for query in queries:
        scenario = scenario_of(suite, query, suite.skill)
        stopped: list[TriggerRun] = []
        full: list[TriggerRun] = []
        for rep in range(repetitions):
            kinds = [("trigger", stopped), ("full", full)]
            for kind, runs in kinds if rep % 2 == 0 else kinds[::-1]:
                # A full run is judged by the same watch afterwards, but never stopped by it.
                watch = TriggerWatch(suite.skill.name, suite.max_tool_calls)
                request = RunRequest(
                    scenario,
                    Arm.WITH_SKILL,
                    rep,
                    suite_path=suite.path,
                    output_dir=output / kind,
                    model_script=suite.model_script,
                    stop_on=watch if kind == "trigger" else None,
                )
                outcome = await runner.run(request)
                if outcome.transcript.error is not None:
                    sys.exit(f"{query.id} ({kind} run {rep}): {outcome.transcript.error}")
                runs.append(trigger_run(rep, watch, outcome))
        measured[query.id] = (stopped, full)
    return measured


def ratio(full: float, trigger: float) -> str:
    return f"{full / trigger:5.1f}x" if trigger > 0 else "    -"


def report(measured: dict[str, tuple[list[TriggerRun], list[TriggerRun]]]) -> None:
    header = (
        f"  {'query':<20} {'run':<8} {'fired':>5} {'requests':>8} {'tokens in':>10} "
        f"{'tokens out':>10} {'wall':>7}"
    )
    print(header)
    every_trigger: list[TriggerRun] = []
    every_full: list[TriggerRun] = []
    rows = [*measured.items(), ("all queries", ([], []))]
    for query_id, (stopped, full) in rows:
        if query_id == "all queries":
            stopped, full = every_trigger, every_full
        else:
            every_trigger.extend(stopped)
            every_full.extend(full)
        a, b = cost(stopped), cost(full)
        for label, c in (("trigger", a), ("full", b)):
            print(
                f"  {query_id if label == 'trigger' else '':<20} {label:<8} "
                f"{c.fired:>2}/{c.runs:<2} {c.requests:>8.1f} {c.tokens_in:>10,.0f} "
                f"{c.tokens_out:>10,.0f} {c.wall_s:>6.2f}s"
            )
        print(
            f"  {'':<20} {'full ÷':<8} {'':>5} {ratio(b.requests, a.requests):>8} "
            f"{ratio(b.tokens_in, a.tokens_in):>10} {ratio(b.tokens_out, a.tokens_out):>10} "
            f"{ratio(b.wall_s, a.wall_s):>7}"
        )
    print(
        "  means per run; tokens in include cached input; 'full ÷': full run over trigger run "
        "(how many times cheaper the trigger run is)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", type=int, default=3, help="runs per query and kind (default 3)")
    parser.add_argument(
        "--query",
        action="append",
        dest="queries",
        help=f"a query id of {SUITE.name} (repeatable; default {', '.join(DEFAULT_QUERIES)})",
    )
    args = parser.parse_args()
    suite = load_trigger_suite(SUITE)
    wanted = args.queries or list(DEFAULT_QUERIES)
    by_id = {query.id: query for query in suite.queries}
    unknown = [name for name in wanted if name not in by_id]
    if unknown:
        sys.exit(f"no query {', '.join(unknown)} in {SUITE}; it has {', '.join(by_id)}")
    binary = find_claude()
    print(
        f"trigger runs beside full runs: {SUITE.relative_to(ROOT)}, claude {binary.version} "
        f"against the emulator, K={args.k} per query and kind, one run at a time"
    )
    with tempfile.TemporaryDirectory(prefix="skilltest-bench-triggers-") as output:
        measured = asyncio.run(
            measure(suite, [by_id[name] for name in wanted], args.k, Path(output))
        )
    report(measured)


if __name__ == "__main__":
    main()
