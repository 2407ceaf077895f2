"""Benchmark of sharding: prints figures, asserts nothing but that the merge is the whole.

For the example pressure suites and a generated suite of 200 pressure scenarios, all on the
emulator, each run as a user runs it (``python -m skilltest`` in its own process):

- the unsharded run's wall time;
- for 2 and 4 shards run one after another: the sum of their wall times (what one machine
  would spend) and the longest shard (what a CI matrix of that many machines would take);
- the time ``skilltest merge`` takes, and whether the merged verdicts are the unsharded ones.

    .venv/bin/python scripts/bench_scale.py [--scenarios 200] [-k 3] [-j 8] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARDS = (2, 4)


def skilltest(*args: str, cwd: Path) -> float:
    """Runs ``skilltest ARGS`` in its own process; returns its wall time in seconds."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "skilltest", *args], cwd=cwd, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):  # 1: a failing scenario, still a finished run
        raise SystemExit(f"skilltest {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    return wall


def generated_project(folder: Path, count: int, k: int, latency_ms: int) -> Path:
    """A skill, its emulator script (``latency_ms`` before every answer) and a suite of
    ``count`` scenarios with K fixed at ``k``; returns the project folder."""
    skill = folder / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\nname: demo\ndescription: Aggregate logs first.\n---\nDEMO SKILL: aggregate first.\n"
    )
    (folder / "model.yaml").write_text(
        "schema_version: 1\n"
        f"faults: {{latency_ms: {latency_ms}}}\n"
        "rules:\n"
        "  - id: with-skill\n"
        '    when: {system: "DEMO SKILL"}\n'
        '    reply: {text: "sum by (level) (count_over_time({app=\\"x\\"}[5m]))"}\n'
        'default: {text: "I would grep the error logs."}\n'
    )
    scenarios = "".join(
        f"  - id: s{i:03d}\n    prompt: Investigate error spike {i}.\n"
        "    with_skill: {required_patterns: [count_over_time]}\n"
        for i in range(count)
    )
    suite = folder / "tests" / "skill-pressure" / "generated.yaml"
    suite.parent.mkdir(parents=True)
    suite.write_text(
        f"skill: demo\nmodel_script: ../../model.yaml\nrepetitions: {k}\nscenarios:\n{scenarios}"
    )
    return folder


def verdicts(path: Path) -> list[tuple[str, str, str]]:
    return [(s["skill"], s["id"], s["verdict"]) for s in json.loads(path.read_text())["scenarios"]]


def bench(name: str, cwd: Path, out: Path, options: list[str]) -> None:
    """One workload: unsharded, then 2 and 4 shards one after another, then their merges."""
    whole = out / f"{name}-whole.json"
    wall = skilltest("pressure", *options, "--results", str(whole), cwd=cwd)
    scenarios = len(verdicts(whole))
    print(f"{name}: {scenarios} scenarios, {' '.join(options) or 'the suites as they are'}")
    print(f"  unsharded            wall {wall:6.2f} s")
    for count in SHARDS:
        walls, files = [], []
        for index in range(1, count + 1):
            results = out / f"{name}-{index}-of-{count}.json"
            walls.append(
                skilltest(
                    "pressure",
                    *options,
                    "--shard",
                    f"{index}/{count}",
                    "--results",
                    str(results),
                    cwd=cwd,
                )
            )
            files.append(str(results))
        merged = out / f"{name}-merged-{count}.json"
        merge = skilltest("merge", *files, "-o", str(merged), cwd=cwd)
        same = "yes" if verdicts(merged) == verdicts(whole) else "NO"
        print(
            f"  {count} shards in turn   sum {sum(walls):6.2f} s   longest {max(walls):6.2f} s "
            f"(a CI matrix of {count})   merge {merge:5.2f} s   merged verdicts = unsharded: "
            f"{same}"
        )


def batch_request_counts() -> None:
    """Batch vs direct: how many HTTP requests a pressure run makes through the Message Batches
    API (``skilltest pressure --batch``) and without it, for the same suites. Prints that batch
    is not available while ``skilltest pressure`` has no ``--batch``."""
    from skilltest.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    pressure = commands.choices["pressure"]
    if not any("--batch" in action.option_strings for action in pressure._actions):
        print("batch: not available (skilltest pressure has no --batch)")
        return
    # Fill in with --batch: the same suites run with and without it, and the requests each made.
    print("batch: --batch exists; its request counts are not measured here yet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200, help="generated scenarios (200)")
    parser.add_argument("-k", type=int, default=3, help="runs per arm of the generated suite (3)")
    parser.add_argument("-j", "--jobs", type=int, default=8, help="requests in flight (8)")
    parser.add_argument(
        "--latency-ms", type=int, default=50, help="emulator latency per answer (50)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skilltest-bench-scale-") as tmp:
        out = Path(tmp) / "results"
        out.mkdir()
        print("scale benchmark: pressure on the emulator, each run its own process")
        bench("examples", ROOT, out, ["-j", str(args.jobs)])
        project = generated_project(
            Path(tmp) / "generated", args.scenarios, args.k, args.latency_ms
        )
        bench("generated", project, out, ["-j", str(args.jobs)])
    batch_request_counts()


if __name__ == "__main__":
    main()
