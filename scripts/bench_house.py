"""Benchmark of start-up time and of the memory a large transcript takes: prints figures,
asserts nothing.

1. Start-up: the wall time of ``skilltest --help`` (what every command pays before it does
   anything), the median of ``--runs`` runs, beside ``python -c pass`` as the floor.
   Target: under 0.3 s.
2. Memory: the peak resident memory (``ru_maxrss`` of the child process) of ``skilltest score``
   on a generated stream-json transcript of ``--size-mb`` MB, built from the real events of the
   Claude Code 2.1.328 corpus: a Bash call whose tool result is one line of ``--big-line-mb`` MB
   of log text, then the corpus's events repeated to the size. Written to a temporary folder
   and removed after. Target: a peak under 250 MB for 100 MB.

MB here are 10^6 bytes.

    .venv/bin/python scripts/bench_house.py [--runs 11] [--size-mb 100] [--big-line-mb 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "claude-code-2.1.328"
"""The repository's copy of the real Claude Code 2.1.328 stream-json corpus."""
BASH_RUN = CORPUS / "success_bash_tool_use.ndjson"
"""A run with one Bash call; its tool result becomes the big line."""
SUITE = ROOT / "tests" / "scenarios" / "lgtm.yaml"
SCENARIO = "investigate-error-spike"
SKILLTEST = Path(sys.executable).with_name("skilltest")

HELP_TARGET_S = 0.3
PEAK_TARGET_MB = 250.0
MB = 1e6


def wall_times(argv: list[str], runs: int) -> list[float]:
    """Wall time of each of ``runs`` runs of ``argv`` (after one unmeasured warm-up run)."""
    times = []
    for index in range(runs + 1):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        if index:
            times.append(time.perf_counter() - started)
    return times


def bench_start_up(runs: int) -> None:
    floor = wall_times([sys.executable, "-c", "pass"], runs)
    command = wall_times([str(SKILLTEST), "--help"], runs)
    print(f"start-up: wall time, median of {runs} runs (min-max)")
    for label, times in (("python -c pass", floor), ("skilltest --help", command)):
        print(
            f"  {label:<18} {statistics.median(times):6.3f} s  ({min(times):.3f}-{max(times):.3f})"
        )
    median = statistics.median(command)
    verdict = "met" if median < HELP_TARGET_S else "NOT met"
    print(f"  target: skilltest --help under {HELP_TARGET_S} s: {verdict}")
    print(f"  above the interpreter's floor: {median - statistics.median(floor):.3f} s")


LOG_LINE = "2025-06-01T12:00:00.000Z ERROR payments-api request failed status=503 latency_ms=%d\n"
PLACEHOLDER = "\x00big tool result\x00"


def log_chunks(size: int) -> Iterator[str]:
    """About ``size`` characters of ASCII log lines, as a command printing a log shows them, in
    chunks (the benchmark itself stays small: a child's peak counts its parent's pages)."""
    written = 0
    while written < size:
        chunk = "".join(LOG_LINE % (1000 + i % 9000) for i in range(10_000))[: size - written]
        written += len(chunk)
        yield chunk


def write_transcript(path: Path, size_mb: float, big_line_mb: float) -> tuple[int, int]:
    """Writes the generated transcript; returns its size and its longest line, in bytes."""
    run = [json.loads(line) for line in BASH_RUN.read_text(encoding="utf-8").splitlines()]
    files = [f for f in sorted(CORPUS.glob("*.ndjson")) if not f.name.endswith(".stdin.ndjson")]
    ordinary = "".join(f.read_text(encoding="utf-8").rstrip("\n") + "\n" for f in files)
    size = longest = 0
    with path.open("wb") as out:
        for event in run:
            for block in event.get("message", {}).get("content", []):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    block["content"] = PLACEHOLDER
            line = json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"
            before, found, after = line.partition(json.dumps(PLACEHOLDER)[1:-1])
            big = (json.dumps(chunk)[1:-1] for chunk in log_chunks(int(big_line_mb * MB)))
            length = 0
            for part in [before, *big, after] if found else [line]:
                length += out.write(part.encode())
            size += length
            longest = max(longest, length)
        data = ordinary.encode()
        while size < size_mb * MB:
            size += out.write(data)
    return size, longest


def peak_of(argv: list[str]) -> tuple[float, float]:
    """The peak resident memory of the child running ``argv`` (bytes) and its wall time."""
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, 1):  # 1 is a score below the scenario's min_score
            errors.seek(0)
            sys.exit(f"{' '.join(argv)} failed ({child.returncode}): {errors.read().decode()}")
    # ru_maxrss is in KiB on Linux, in bytes on macOS.
    return usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024.0), wall


def bench_memory(size_mb: float, big_line_mb: float) -> None:
    with tempfile.TemporaryDirectory(prefix="skilltest-bench-") as folder:
        path = Path(folder) / "big.ndjson"
        size, longest = write_transcript(path, size_mb, big_line_mb)
        score = [str(SKILLTEST), "score", "--scenario", str(SUITE), "--id", SCENARIO]
        peak, wall = peak_of([*score, str(path)])
        floor, _ = peak_of([*score, str(BASH_RUN)])
    print()
    print(f"memory: skilltest score on a generated stream-json transcript ({SUITE.name})")
    print(f"  transcript          {size / MB:8.1f} MB")
    print(f"  largest line        {longest / MB:8.1f} MB (one Bash tool result)")
    print(f"  peak (ru_maxrss)    {peak / MB:8.1f} MB, {peak / size:.2f}x the file")
    print(f"  wall time           {wall:8.2f} s (the command, start-up included)")
    print(f"  the same command    {floor / MB:8.1f} MB on {BASH_RUN.name} (its floor)")
    above = peak - floor
    print(f"  peak above that     {above / MB:8.1f} MB, {above / longest:.2f}x the largest line")
    verdict = "met" if peak < PEAK_TARGET_MB * MB else "NOT met"
    print(f"  target: peak under {PEAK_TARGET_MB:g} MB: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11, help="start-up runs (11)")
    parser.add_argument("--size-mb", type=float, default=100.0, help="transcript size (100)")
    parser.add_argument("--big-line-mb", type=float, default=20.0, help="big tool result (20)")
    args = parser.parse_args()
    if not SKILLTEST.exists():
        sys.exit(f"no skilltest next to {sys.executable}: run make install")
    bench_start_up(args.runs)
    bench_memory(args.size_mb, args.big_line_mb)


if __name__ == "__main__":
    main()
