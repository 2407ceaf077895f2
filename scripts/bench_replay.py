"""Benchmark of record and replay: prints figures, asserts nothing.

1. Pressure replay: a generated suite of 50 scenarios x 2 arms x K=5 (500 answers) is recorded
   once against the emulator, then ``skilltest pressure --replay`` is timed as a whole command,
   start-up included (target: under 2 s), beside the start-up alone (``skilltest pressure
   --help``).
2. Scenario replay: the example scenario suites at K=1 through the real claude CLI against the
   emulator, then replaying their recording, side by side: the command's wall time and the sum
   of its CLI runs' own durations (target: replay adds no more than 10%).

Every figure is the best of ``--repeat`` runs (the least disturbed by other work on the machine).

    SKILLTEST_CLAUDE=.tools/node_modules/.bin/claude \\
        .venv/bin/python scripts/bench_replay.py [--scenarios 50] [-k 5] [--repeat 3] [--no-cli]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKILLTEST = [sys.executable, "-m", "skilltest"]
SCENARIO_SUITES = [
    ROOT / "tests" / "scenarios" / f"{name}.yaml" for name in ("lgtm", "safe-migrations")
]
"""The example scenario suites (their fixtures are files; nothing else answers but the model)."""

SKILL = """\
---
name: bench
description: Investigate incidents by aggregating first. Use when the user asks about errors.
---
# Bench

Aggregate with count_over_time before fetching raw lines.
"""

SCRIPT = """\
schema_version: 1
rules:
  - id: with-skill
    when: {system: "Aggregate with count_over_time"}
    reply: {text: "Start with sum by (level) (count_over_time({app=\\"checkout\\"} [5m]))."}
default: {text: "I would grep the error logs."}
"""


def pressure_project(folder: Path, scenarios: int) -> Path:
    """A skill, a model script and a suite of ``scenarios`` scenarios; the suite's path."""
    (folder / "skills" / "bench").mkdir(parents=True)
    (folder / "skills" / "bench" / "SKILL.md").write_text(SKILL)
    (folder / "model.yaml").write_text(SCRIPT)
    lines = ["skill: bench", "model_script: model.yaml", "scenarios:"]
    for i in range(scenarios):
        lines += [
            f"  - id: incident-{i:02d}",
            f'    prompt: "Error spike number {i} in checkout. How do you investigate?"',
            '    without_skill: {expected_patterns: ["(?i)grep"]}',
            '    with_skill: {required_patterns: ["count_over_time"], anti_patterns: ["rm -rf"]}',
        ]
    suite = folder / "bench.yaml"
    suite.write_text("\n".join(lines) + "\n")
    return suite


def timed(args: list[str], *, env: dict[str, str] | None = None) -> tuple[float, int]:
    """Wall time of a whole command (a fresh interpreter, start-up included) and its exit code."""
    started = time.perf_counter()
    done = subprocess.run(
        args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(args)} failed with exit {done.returncode}:\n{done.stderr[-2000:]}")
    return wall, done.returncode


def best(args: list[str], repeat: int, *, env: dict[str, str] | None = None) -> float:
    return min(timed(args, env=env)[0] for _ in range(repeat))


def offline_env() -> dict[str, str]:
    """No credentials and an API address nothing listens on: a replay must need neither."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
    }
    env["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
    return env


def bench_pressure(scenarios: int, k: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = pressure_project(folder, scenarios)
        cassettes = folder / "cassettes"
        answers = scenarios * 2 * k
        record = [*SKILLTEST, "pressure", str(suite), "-k", str(k), "-j", "16"]
        recorded, _ = timed([*record, "--record", str(cassettes)], env=offline_env())
        replay = [*SKILLTEST, "pressure", str(suite), "-k", str(k), "--replay", str(cassettes)]
        results = folder / "replayed.json"
        replayed = best([*replay, "--results", str(results)], repeat, env=offline_env())
        misses = json.loads(results.read_text())["replay"]["misses"]
        if misses:
            sys.exit(f"{len(misses)} replay misses; the figures would mean nothing: {misses[0]}")
        start_up = best([*SKILLTEST, "pressure", "--help"], repeat)
        size = sum(p.stat().st_size for p in cassettes.rglob("*.yaml"))
    print(
        f"pressure replay: {scenarios} scenarios x 2 arms x K={k} = {answers} answers "
        f"({scenarios * 2} cassettes, {size / 1e6:.1f} MB)"
    )
    print(f"  record against the emulator (-j 16)   {recorded:6.2f} s")
    print(
        f"  skilltest pressure --replay            {replayed:6.2f} s   (target < 2.00 s, "
        "the whole command)"
    )
    print(
        f"    of which start-up (pressure --help)  {start_up:6.2f} s   "
        f"replay itself {replayed - start_up:.2f} s, "
        f"{1000 * (replayed - start_up) / answers:.2f} ms per answer"
    )


def durations(results: Path) -> dict[tuple[str, str, int], float]:
    """Each CLI run's own wall time in a scenarios results file."""
    document = json.loads(results.read_text())
    return {
        (s["id"], run["arm"], run["rep"]): run["duration_s"] or 0.0
        for s in document["scenarios"]
        for run in s["runs"]
    }


def bench_scenarios(repeat: int) -> None:
    from skilltest.claude.binary import find_claude

    binary = find_claude(None)
    walls: dict[str, list[float]] = {"emulator": [], "replay": []}
    runs: dict[str, dict[tuple[str, str, int], float]] = {"emulator": {}, "replay": {}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cassettes, out = folder / "cassettes", folder / "out"
        modes = {"emulator": [], "replay": ["--replay", str(cassettes)]}
        base = [*SKILLTEST, "scenarios", *map(str, SCENARIO_SUITES), "-k", "1"]
        base += ["--claude", str(binary.path), "--output-dir", str(out), "--allow-inconclusive"]
        recorded, _ = timed([*base, "--record", str(cassettes)], env=offline_env())
        # The two modes take turns, so that other work on the machine weighs on both alike.
        for n in range(repeat):
            for mode, extra in modes.items():
                results = folder / f"{mode}-{n}.json"
                shutil.rmtree(out, ignore_errors=True)
                wall, _ = timed([*base, *extra, "--results", str(results)], env=offline_env())
                document = json.loads(results.read_text())
                if document.get("replay") and document["replay"]["misses"]:
                    sys.exit(f"replay missed: {document['replay']['misses'][0]}")
                walls[mode].append(wall)
                for run, seconds in durations(results).items():
                    runs[mode][run] = min(seconds, runs[mode].get(run, seconds))
    e_wall, r_wall = min(walls["emulator"]), min(walls["replay"])
    e_runs, r_runs = sum(runs["emulator"].values()), sum(runs["replay"].values())
    print(
        f"scenario replay: the example suites at K=1 ({len(runs['replay'])} claude "
        f"{binary.version} runs, -j 4), best of {repeat} (each run's best for the sum)"
    )
    print(f"  record against the emulator          {recorded:6.2f} s")
    print(f"  {'':34s}  command    sum of CLI runs")
    print(f"  against the emulator               {e_wall:7.2f} s   {e_runs:7.2f} s")
    print(f"  replaying the recording            {r_wall:7.2f} s   {r_runs:7.2f} s")
    print(
        f"  replay / emulator                  {r_wall / e_wall:7.2f}     {r_runs / e_runs:7.2f}"
        "     (target <= 1.10)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=50)
    parser.add_argument("-k", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-cli", action="store_true", help="skip the scenario benchmark")
    args = parser.parse_args()
    bench_pressure(args.scenarios, args.k, args.repeat)
    if not args.no_cli:
        bench_scenarios(args.repeat)


if __name__ == "__main__":
    main()
