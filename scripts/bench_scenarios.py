"""Benchmark of the scenario layer: prints figures, asserts nothing.

1. Parser throughput: every stream-json file of the Claude Code 2.1.328 corpus, concatenated
   and repeated to a large input, parsed by ``parse_stream_json`` (MB/s).
2. Concurrency: the shipped example suites through the real claude CLI against the emulator,
   at -j 1 and at -j 4, the suite's wall time beside the sum of its CLI runs' wall times.

    SKILLTEST_CLAUDE=.tools/node_modules/.bin/claude \\
        .venv/bin/python scripts/bench_scenarios.py [-k 1] [--jobs 1 4] [--parse-mb 64]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from skilltest.claude.binary import find_claude
from skilltest.scenarios.endpoints import EmulatorEndpoint
from skilltest.scenarios.runner import ClaudeCliRunner
from skilltest.scenarios.runs import run_suites
from skilltest.scenarios.suite import Overrides, load_scenario_suite
from skilltest.scenarios.verdict import ScenarioVerdict
from skilltest.suite.loader import discover_suites
from skilltest.transcript.stream_json import parse_stream_json

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "claude-code-2.1.328"
"""The repository's copy of the real Claude Code 2.1.328 stream-json corpus."""


def corpus_text(target_mb: float) -> tuple[str, int]:
    """The corpus's stream-json files concatenated, repeated to about ``target_mb``."""
    files = sorted(CORPUS.glob("*.ndjson"))
    files = [f for f in files if not f.name.endswith(".stdin.ndjson")]
    if not files:
        sys.exit(f"no corpus at {CORPUS}")
    once = "".join(f.read_text(encoding="utf-8").rstrip("\n") + "\n" for f in files)
    copies = max(1, round(target_mb * 1e6 / len(once.encode())))
    return once * copies, len(files) * copies


def bench_parser(target_mb: float) -> None:
    text, runs = corpus_text(target_mb)
    size_mb = len(text.encode()) / 1e6
    lines = text.count("\n")
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        transcript = parse_stream_json(text)
        best = min(best, time.perf_counter() - started)
    print("parser throughput (parse_stream_json on the 2.1.328 corpus, best of 3)")
    print(f"  input      {size_mb:8.1f} MB, {lines:,} lines ({runs:,} corpus runs concatenated)")
    print(f"  time       {best:8.2f} s")
    print(f"  throughput {size_mb / best:8.1f} MB/s, {lines / best:,.0f} lines/s")
    print(f"  parsed     {len(transcript.results):,} result events (ids repeat across copies)")


def run_suites_once(jobs: int, repetitions: int) -> tuple[float, float, int, list[ScenarioVerdict]]:
    """Wall time of the example suites at ``-j jobs`` and the sum of their CLI runs."""
    paths = discover_suites(
        [], ROOT / "tests" / "scenarios", example="tests/scenarios/<skill>.yaml"
    )
    suites = [load_scenario_suite(p, overrides=Overrides(repetitions=repetitions)) for p in paths]
    runner = ClaudeCliRunner(find_claude(), EmulatorEndpoint())
    with tempfile.TemporaryDirectory(prefix="skilltest-bench-") as output:
        started = time.perf_counter()
        verdicts = asyncio.run(run_suites(suites, runner, jobs=jobs, output_dir=Path(output)))
        wall = time.perf_counter() - started
    runs = [run for verdict in verdicts for run in verdict.runs]
    return wall, sum(run.duration_s for run in runs), len(runs), verdicts


def bench_concurrency(jobs_list: list[int], repetitions: int) -> None:
    binary = find_claude()
    print()
    print(
        f"example suites through claude {binary.version} against the emulator "
        f"(K={repetitions}, both arms)"
    )
    rows = []
    for jobs in jobs_list:
        wall, total, count, verdicts = run_suites_once(jobs, repetitions)
        unscored = sum(1 for v in verdicts for r in v.runs if r.score is None)
        rows.append((jobs, count, wall, total, unscored))
    print(
        f"  {'jobs':>4}  {'runs':>4}  {'suite wall':>10}  {'sum of runs':>11}  {'overlap':>7}  "
        f"{'per run':>7}  unscored"
    )
    for jobs, count, wall, total, unscored in rows:
        print(
            f"  {jobs:>4}  {count:>4}  {wall:>9.1f}s  {total:>10.1f}s  {total / wall:>6.2f}x  "
            f"{total / count:>6.2f}s  {unscored}"
        )
    if len(rows) > 1:
        base = rows[0][2]
        for jobs, _, wall, _, _ in rows[1:]:
            print(f"  -j {jobs} finishes the suite {base / wall:.2f}x faster than -j {rows[0][0]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", type=int, default=1, help="runs per arm (default 1)")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4], help="-j values (1 4)")
    parser.add_argument("--parse-mb", type=float, default=64.0, help="parser input size (64)")
    parser.add_argument("--no-cli", action="store_true", help="only the parser benchmark")
    args = parser.parse_args()
    bench_parser(args.parse_mb)
    if not args.no_cli:
        bench_concurrency(args.jobs, args.k)


if __name__ == "__main__":
    main()
