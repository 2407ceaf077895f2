"""Benchmark of the trigger layer's early stop: prints figures, asserts nothing.

For a few queries of the lgtm trigger suite, each repetition runs three times through the real
claude CLI against the emulator, in one process, one run at a time (which kind goes first turns
round): as a trigger run stopped by its PreToolUse hook at the deciding call (``hook``, what
``skilltest triggers`` does), as a trigger run stopped once the stream shows that call (``stream``,
what it did before the hook: by then the CLI has usually run the call and asked the model again),
and as a full run of the same query (the same scenario and turn budget, no early stop, as
``skilltest scenarios`` would run it). Per query and overall it prints mean model requests, tokens
(input with cached input included, and output) and wall time per run, and how many times
cheaper each kind of trigger run is than the full run.

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
from dataclasses import dataclass, replace
from pathlib import Path

from skilltest.claude.binary import find_claude
from skilltest.scenarios.endpoints import EmulatorEndpoint
from skilltest.scenarios.runner import ClaudeCliRunner
from skilltest.triggers.runs import trigger_request, trigger_run
from skilltest.triggers.suite import TriggerQuery, TriggerSuite, load_trigger_suite
from skilltest.triggers.verdict import TriggerRun

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


KINDS = ("hook", "stream", "full")
"""The kinds of run measured: stopped by the hook, stopped by the stream watch, not stopped."""

Measured = dict[str, dict[str, list[TriggerRun]]]
"""Per query id, per kind, its runs."""


async def measure(
    suite: TriggerSuite, queries: Sequence[TriggerQuery], repetitions: int, output: Path
) -> Measured:
    """Per query id, its runs of each kind (:data:`KINDS`), taking turns (which goes first
    rotates) so that drift hits all alike."""
    runner = ClaudeCliRunner(find_claude(), EmulatorEndpoint())
    # One run first that is not counted: the first CLI start of a process pays for cold caches.
    warm_up, _ = trigger_request(suite, queries[0], suite.skill, 0, output_dir=output / "warm-up")
    await runner.run(warm_up)
    measured: Measured = {}
    for query in queries:
        runs: dict[str, list[TriggerRun]] = {kind: [] for kind in KINDS}
        for rep in range(repetitions):
            turn = rep % len(KINDS)
            for kind in KINDS[turn:] + KINDS[:turn]:
                calls = output / f"calls-{query.id}-{rep}.txt" if kind == "hook" else None
                request, watch = trigger_request(
                    suite, query, suite.skill, rep, output_dir=output / kind, calls=calls
                )
                if kind == "full":
                    # Judged from its transcript afterwards, never stopped.
                    request = replace(request, stop_on=None)
                outcome = await runner.run(request)
                if outcome.transcript.error is not None:
                    sys.exit(f"{query.id} ({kind} run {rep}): {outcome.transcript.error}")
                runs[kind].append(trigger_run(rep, watch, outcome))
        measured[query.id] = runs
    return measured


def ratio(full: float, trigger: float) -> str:
    return f"{full / trigger:5.1f}x" if trigger > 0 else "    -"


def report(measured: Measured) -> None:
    header = (
        f"  {'query':<20} {'run':<13} {'fired':>5} {'requests':>8} {'tokens in':>10} "
        f"{'tokens out':>10} {'wall':>7}"
    )
    print(header)
    every: dict[str, list[TriggerRun]] = {kind: [] for kind in KINDS}
    for query_id, runs in [*measured.items(), ("all queries", every)]:
        if runs is not every:
            for kind in KINDS:
                every[kind].extend(runs[kind])
        costs = {kind: cost(runs[kind]) for kind in KINDS}
        for n, kind in enumerate(KINDS):
            c = costs[kind]
            print(
                f"  {query_id if n == 0 else '':<20} {kind:<13} "
                f"{c.fired:>2}/{c.runs:<2} {c.requests:>8.1f} {c.tokens_in:>10,.0f} "
                f"{c.tokens_out:>10,.0f} {c.wall_s:>6.2f}s"
            )
        full = costs["full"]
        for kind in ("stream", "hook"):
            c = costs[kind]
            print(
                f"  {'':<20} {'full ÷ ' + kind:<13} {'':>5} {ratio(full.requests, c.requests):>8} "
                f"{ratio(full.tokens_in, c.tokens_in):>10} "
                f"{ratio(full.tokens_out, c.tokens_out):>10} {ratio(full.wall_s, c.wall_s):>7}"
            )
    print(
        "  means per run; tokens in include cached input; hook: stopped by the PreToolUse hook at "
        "the deciding call (skilltest triggers now); stream: stopped once the stream showed that "
        "call (before the hook); full: not stopped; 'full ÷': how many times cheaper"
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
        f"trigger runs (hook, stream) beside full runs: {SUITE.relative_to(ROOT)}, "
        f"claude {binary.version} against the emulator, K={args.k} per query and kind, "
        "one run at a time"
    )
    with tempfile.TemporaryDirectory(prefix="skilltest-bench-triggers-") as output:
        measured = asyncio.run(
            measure(suite, [by_id[name] for name in wanted], args.k, Path(output))
        )
    report(measured)


if __name__ == "__main__":
    main()
