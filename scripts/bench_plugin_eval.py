"""skilltest scenarios against the pinned CLI's own ``claude plugin eval``, side by side.

Both tools run the observability example's eval folder (3 cases x 2 arms x RUNS runs, judge
graders, MCP mocks) against one emulator on loopback, in interleaved pairs (which tool goes
first alternates), at ``-j 1`` and ``-j 4``. Printed per concurrency: the median wall time and
the median CPU time of each tool (its process and its children, from
``resource.getrusage(RUSAGE_CHILDREN)`` around each run), and skilltest's ratios to the CLI
(targets: wall at or below 0.7x, CPU at or below 1.1x). Then the pressure layer's stop
latency: SIGINT sent while its first requests are in flight (the emulator answers slowly),
the time until the process has exited, median of a few.

The floor: one more skilltest run at ``-j 1`` through a wrapper that logs when each ``claude -p``
child starts and ends. The sum of those walls is the time spent inside the CLI's own runs, which
neither tool can shorten; divided by the CLI's median wall it is the lowest wall ratio skilltest
could reach at ``-j 1`` if everything outside the runs cost nothing.

    python scripts/bench_plugin_eval.py [--pairs N] [--runs N] [--jobs 1,4] [--stops N]

The machine's load moves both tools alike: read the ratios, not the absolute figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "tests" / "fixtures" / "plugins" / "observability"
sys.path.insert(0, str(REPO / "src"))

from skilltest.claude.binary import resolve_claude  # noqa: E402
from skilltest.emulator import EmulatorServer, ModelScript  # noqa: E402

WALL_TARGET = 0.7
CPU_TARGET = 1.1


def bare_env(home: Path, base_url: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "ANTHROPIC_API_KEY": "sk-emulator",
        "ANTHROPIC_BASE_URL": base_url,
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def fresh_copy(into: Path) -> Path:
    if into.exists():
        shutil.rmtree(into)
    into.mkdir(parents=True)
    target = into / "observability"
    shutil.copytree(
        PLUGIN, target, ignore=shutil.ignore_patterns("output", "results", "__pycache__")
    )
    return target


def measured(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system of the children) and the exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        sys.stderr.write(f"{argv[:3]} exit {done.returncode}: {done.stderr[-1500:]}\n")
    return wall, cpu, done.returncode


def cli_run(claude: Path, work: Path, home: Path, url: str, runs: int, jobs: int) -> tuple:
    plugin = fresh_copy(work)
    argv = [str(claude), "plugin", "eval", str(plugin), "--trust-plugin", "--no-publish"]
    argv += ["--allow-tools", "Write", "--scaffold", "--runs", str(runs), "-j", str(jobs)]
    argv += ["--json", str(work / "plugin-eval.json")]
    return measured(argv, bare_env(home, url), work)


def skilltest_run(claude: Path, work: Path, home: Path, url: str, runs: int, jobs: int) -> tuple:
    plugin = fresh_copy(work)
    argv = [sys.executable, "-m", "skilltest", "scenarios", str(plugin / "evals")]
    argv += ["--backend", "claude", "--claude", str(claude), "-k", str(runs), "-j", str(jobs)]
    argv += ["--output-dir", str(work / "output"), "--results", str(work / "results.json")]
    env = {**bare_env(home, url), "PYTHONPATH": str(REPO / "src")}
    return measured(argv, env, work)


def compare(
    claude: Path, root: Path, url: str, *, pairs: int, runs: int, jobs: int
) -> dict[str, float]:
    home = root / "home"
    home.mkdir(exist_ok=True)
    walls: dict[str, list[float]] = {"cli": [], "skilltest": []}
    cpus: dict[str, list[float]] = {"cli": [], "skilltest": []}
    tools = {"cli": cli_run, "skilltest": skilltest_run}
    for pair in range(pairs):
        order = ("cli", "skilltest") if pair % 2 == 0 else ("skilltest", "cli")
        for name in order:
            wall, cpu, _ = tools[name](claude, root / name, home, url, runs, jobs)
            walls[name].append(wall)
            cpus[name].append(cpu)
            print(f"  -j {jobs} pair {pair + 1} {name:9} wall {wall:7.1f}s cpu {cpu:7.1f}s")
    wall = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    wall_ratio, cpu_ratio = wall["skilltest"] / wall["cli"], cpu["skilltest"] / cpu["cli"]
    print(
        f"-j {jobs}: claude plugin eval wall {wall['cli']:.1f}s cpu {cpu['cli']:.1f}s | "
        f"skilltest scenarios wall {wall['skilltest']:.1f}s cpu {cpu['skilltest']:.1f}s | "
        f"wall {wall_ratio:.2f}x (target <= {WALL_TARGET}x) "
        f"cpu {cpu_ratio:.2f}x (target <= {CPU_TARGET}x)"
    )
    return wall


def floor(claude: Path, root: Path, url: str, *, runs: int, cli_wall: float) -> None:
    """One skilltest run at ``-j 1`` with each ``claude -p`` child timed by a wrapper."""
    log = root / "child-walls.txt"
    wrapper = root / "claude-timed"
    real = shlex.quote(str(claude))
    wrapper.write_text(
        "#!/bin/sh\n"
        f'case "$1" in -p) ;; *) exec {real} "$@" ;; esac\n'
        "started=$(date +%s%N)\n"
        f'{real} "$@"\n'
        "code=$?\n"
        f'echo "$started $(date +%s%N)" >> {shlex.quote(str(log))}\n'
        "exit $code\n"
    )
    wrapper.chmod(0o755)
    wall, _, _ = skilltest_run(wrapper, root / "floor", root / "home", url, runs, 1)
    spans = [line.split() for line in log.read_text().splitlines() if line.strip()]
    inside = sum(int(end) - int(start) for start, end in spans) / 1e9
    print(
        f"floor at -j 1: skilltest wall {wall:.1f}s, of which {inside:.1f}s "
        f"({100 * inside / wall:.0f}%) inside {len(spans)} claude -p runs | "
        f"those runs alone are {inside / cli_wall:.2f}x the CLI's median wall "
        f"(the lowest ratio reachable with nothing outside the runs)"
    )


def pressure_stop(root: Path, stops: int) -> None:
    """SIGINT while the first requests are in flight: seconds until the process exited."""
    folder = root / "pressure"
    folder.mkdir(exist_ok=True)
    skill = folder / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text("---\nname: demo\ndescription: demo\n---\nDEMO SKILL: count_over_time\n")
    (folder / "model.yaml").write_text(
        "schema_version: 1\nfaults: {latency_ms: 3000}\n"
        'rules:\n  - id: with-skill\n    when: {system: "DEMO SKILL"}\n'
        '    reply: {text: "count_over_time"}\ndefault: {text: "grep"}\n'
    )
    (folder / "demo.yaml").write_text(
        "skill: demo\nmodel_script: model.yaml\nrepetitions: 3\nscenarios:\n"
        "  - id: s0\n    prompt: p0\n    with_skill: {required_patterns: [count_over_time]}\n"
    )
    latencies = []
    for _ in range(stops):
        results = folder / "r.json"
        results.unlink(missing_ok=True)
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "skilltest",
                "pressure",
                str(folder / "demo.yaml"),
                "--results",
                str(results),
            ],
            env={**os.environ, "PYTHONPATH": str(REPO / "src")},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while not results.exists() and process.poll() is None:
            time.sleep(0.02)
        time.sleep(0.5)  # the SDK importing, the first requests going out
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        process.wait(timeout=300)
        latencies.append(time.monotonic() - sent)
    shown = ", ".join(f"{s:.2f}" for s in latencies)
    print(
        f"pressure stop after SIGINT: median {statistics.median(latencies):.2f}s "
        f"(target <= 2s; {shown})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="runs per case and arm")
    parser.add_argument("--jobs", default="1,4")
    parser.add_argument("--stops", type=int, default=3)
    args = parser.parse_args()
    claude = resolve_claude(None).absolute()
    script = ModelScript.load(PLUGIN / "evals" / "model-script.yaml")
    with tempfile.TemporaryDirectory(prefix="bench-plugin-eval-") as tmp:
        root = Path(tmp)
        with EmulatorServer(script, host="127.0.0.1", port=0) as server:
            cli_walls: dict[int, float] = {}
            for jobs in (int(j) for j in args.jobs.split(",")):
                cli_walls[jobs] = compare(
                    claude, root, server.base_url, pairs=args.pairs, runs=args.runs, jobs=jobs
                )["cli"]
            if 1 in cli_walls:
                floor(claude, root, server.base_url, runs=args.runs, cli_wall=cli_walls[1])
        pressure_stop(root, args.stops)
    return 0


if __name__ == "__main__":
    sys.exit(main())
