"""Benchmark of how promptly a stop signal ends a run: prints figures, asserts nothing.

Runs ``skilltest scenarios`` on the example suite without a world (``tests/scenarios/lgtm.yaml``)
and on the one in a controlled world (``tests/scenarios/tickets.yaml``: fakes, the world's proxy,
its wiring run), and ``skilltest triggers`` on ``tests/triggers/lgtm.yaml``, all through the real
``claude`` CLI against the emulator, and sends SIGINT at several moments: half a second after
the first, second or fourth run's sandbox appears (in a world the first run is its wiring run),
and as the fourth appears. The three commands take turns at each moment, so the load of the
machine falls on them alike; ``--against DIR`` measures another checkout's ``src`` in turn.
Printed: the seconds from the signal to the command's exit, median and worst per command, the
world's median over the world-less one's, and whether the results file said ``interrupted`` and
no sandbox was left.

    .venv/bin/python scripts/bench_stop.py [--repeats 2] [--against ../main/src]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

COMMANDS = {
    "scenarios": ["scenarios", str(REPO / "tests" / "scenarios" / "lgtm.yaml")],
    "scenarios in a world": ["scenarios", str(REPO / "tests" / "scenarios" / "tickets.yaml")],
    "triggers": ["triggers", str(REPO / "tests" / "triggers" / "lgtm.yaml")],
}


MOMENTS = ((1, 0.5), (2, 0.5), (4, 0.0), (4, 0.5))
"""When SIGINT goes: this many seconds after the nth run's sandbox appears."""


def stop_once(
    argv: list[str], nth: int, after: float, source: Path
) -> tuple[float, int, bool, int]:
    """Starts the command, sends SIGINT ``after`` seconds once ``nth`` run sandboxes were seen;
    the seconds to its exit, its exit code, whether its results say interrupted, and how many
    sandboxes it left."""
    temp = Path(tempfile.mkdtemp(prefix="bench-stop-", dir="/tmp"))  # sockets need short paths
    try:
        results = temp / "r.json"
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(TMPDIR=str(temp), PYTHONPATH=str(source))
        process = subprocess.Popen(
            [sys.executable, "-m", "skilltest", *argv, "--backend", "emulator", "-j", "2",
             "-k", "3", "--results", str(results), "--output-dir", str(temp / "out")],
            cwd=temp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        seen: set[Path] = set()
        while len(seen) < nth and process.poll() is None:
            seen.update(temp.glob("skilltest-run-*"))
            time.sleep(0.01)
        time.sleep(after)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=600)
        took = time.monotonic() - sent
        interrupted = results.exists() and json.loads(results.read_text()).get("interrupted")
        return took, process.returncode, bool(interrupted), len(list(temp.glob("skilltest-run-*")))
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument(
        "--against", type=Path, help="another checkout's src, measured in turn with this one's"
    )
    args = parser.parse_args()
    if not os.environ.get("SKILLTEST_CLAUDE") and shutil.which("claude") is None:
        print("bench_stop: no claude CLI (set SKILLTEST_CLAUDE or run make claude)")
        return 0
    sources = {"this": REPO / "src", **({"against": args.against} if args.against else {})}
    for label, source in sources.items():
        print(f"bench_stop: {label} = skilltest from {source}")
    print("claude against the emulator (offline), -j 2, -k 3, SIGINT")
    stops: dict[tuple[str, str], list[float]] = {(n, s): [] for n in COMMANDS for s in sources}
    faults: list[str] = []
    for repeat in range(args.repeats):
        for nth, after in MOMENTS:
            names = list(COMMANDS) if repeat % 2 == 0 else list(reversed(COMMANDS))
            for name in names:
                for label in sources if repeat % 2 == 0 else reversed(sources):
                    took, code, interrupted, left = stop_once(
                        COMMANDS[name], nth, after, sources[label]
                    )
                    stops[name, label].append(took)
                    moment = f"{after:g}s after run {nth}'s sandbox"
                    print(f"  {label:7} {name:21} SIGINT {moment}: exit {code} in {took:.2f}s, "
                          f"interrupted {interrupted}, {left} sandboxes left")  # fmt: skip
                    if code != 130 or not interrupted or left:
                        faults.append(f"{label} {name} {moment}")
    median = {key: statistics.median(seconds) for key, seconds in stops.items()}
    for (name, label), seconds in stops.items():
        print(
            f"stop after SIGINT, {label} {name}: median {median[name, label]:.2f}s, worst "
            f"{max(seconds):.2f}s over {len(seconds)} stops (target <= 2s)"
        )
    for label in sources:
        world, plain = median["scenarios in a world", label], median["scenarios", label]
        print(f"{label}: a world's stop over a world-less one's: {world / plain:.2f}x")
    if "against" in sources:
        for name in COMMANDS:
            ratio = median[name, "this"] / median[name, "against"]
            print(f"{name}: this stop over the other checkout's: {ratio:.2f}x")
    print("every stop wrote interrupted results and left no sandbox" if not faults else
          f"stops that did not: {', '.join(faults)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
