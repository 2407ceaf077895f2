"""Benchmark of the pressure layer's concurrency: prints figures, asserts nothing.

Runs the 8 example scenarios x 2 arms x K=5 (80 requests) against the emulator, which waits 1 s
before every answer, at -j 16 and at -j 1, side by side in one run. The emulator runs in its own
process so that the CPU time printed is the toolkit's own.

    .venv/bin/python scripts/bench_pressure.py [--jobs 16] [-k 5] [--latency-ms 1000] [--no-serial]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pressure_examples import SUITES, write_merged_script

from skilltest.pressure.runs import run_suites, total_runs
from skilltest.pressure.suite import Overrides, load_pressure_suite
from skilltest.runners.anthropic_api import AnthropicRunner


def merged_script(latency_ms: int, folder: Path) -> Path:
    """One model script answering every example suite, with latency on every request."""
    return write_merged_script(folder / "bench.yaml", faults={"latency_ms": latency_ms})


def start_emulator(script: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skilltest",
            "emulator",
            "serve",
            "--script",
            str(script),
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"http://[\d.]+:\d+", line)
    if match is None:
        process.kill()
        raise SystemExit(f"emulator did not start: {line!r}")
    return process, match.group(0)


def measure(base_url: str, k: int, jobs: int) -> tuple[float, float, int]:
    suites = [load_pressure_suite(p, overrides=Overrides(repetitions=k)) for p in SUITES]
    requests = total_runs(suites, skill_only=False)

    async def go() -> None:
        runner = AnthropicRunner(backend="emulator", api_key="sk-bench", base_url=base_url)
        try:
            results = await run_suites(suites, lambda _: runner, jobs=jobs)
        finally:
            await runner.aclose()
        errors = sum(1 for r in results for run in r.runs if not run.completed)
        if errors:
            raise SystemExit(f"{errors} runs failed; the figures would mean nothing")

    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - wall, time.process_time() - cpu, requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--latency-ms", type=int, default=1000)
    parser.add_argument("--no-serial", action="store_true", help="skip the -j 1 run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        process, base_url = start_emulator(merged_script(args.latency_ms, Path(folder)))
        try:
            measure(base_url, 1, 4)  # warm-up: imports, connection pool
            wall, cpu, requests = measure(base_url, args.k, args.jobs)
            serial = None if args.no_serial else measure(base_url, args.k, 1)
        finally:
            process.terminate()
            process.wait(timeout=10)
    ideal = math.ceil(requests / args.jobs) * args.latency_ms / 1000
    print(f"pressure benchmark: {requests} requests, {args.latency_ms} ms emulator latency each")
    print(
        f"  -j {args.jobs:<3} wall {wall:6.2f} s   ideal {ideal:5.2f} s   "
        f"wall/ideal {wall / ideal:.2f}   (target <= 1.20)"
    )
    if serial is not None:
        s_wall = serial[0]
        print(f"  -j 1   wall {s_wall:6.2f} s   speed-up at -j {args.jobs}: {s_wall / wall:.1f}x")
    print(
        f"  toolkit CPU per request: {1000 * cpu / requests:.2f} ms (emulator in its own process)"
    )


if __name__ == "__main__":
    main()
