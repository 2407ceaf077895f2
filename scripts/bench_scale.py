"""Benchmark of sharding: prints figures, asserts nothing but that the merge is the whole.

For the example pressure suites and a generated suite of 200 pressure scenarios, all on the
emulator, each run as a user runs it (``python -m skilltest`` in its own process):

- the unsharded run's wall time;
- for 2 and 4 shards run one after another: the sum of their wall times (what one machine
  would spend) and the longest shard (what a CI matrix of that many machines would take);
- the time ``skilltest merge`` takes, and whether the merged verdicts are the unsharded ones;
- the HTTP requests the example suites make directly and with ``--batch`` (in this process).

Then, side by side, how the cost grows with the suite (``--speed-only``: these alone):

- pressure CPU per request (the process's user + system time over its requests, on the
  emulator, K = 1) at 100 and at 1000 scenarios, and their ratio (target: within 1.2x);
- ``skilltest validate`` of the example suites against a bare ``python -c pass`` (target: 5x);
- the HTML report of the 100 and of the 1000 scenarios: its size, its size per scenario (target:
  flat), and the elements a browser builds at load with the page's script (a scenario's details
  are made when opened) and without it (everything).

    .venv/bin/python scripts/bench_scale.py [--scenarios 200] [-k 3] [-j 8] [--latency-ms 50]
    .venv/bin/python scripts/bench_scale.py --speed-only
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARDS = (2, 4)
sys.path.insert(0, str(ROOT))

from tests.generated import generated_project  # noqa: E402


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


def batch_request_counts(jobs: int) -> None:
    """Batch vs direct: how many HTTP requests a pressure run of the example suites makes
    through the Message Batches API (``skilltest pressure --batch``) and without it, against
    the emulator (``scripts/bench_batches.py`` measures more workloads and K)."""
    from bench_batches import example_workload, measure  # a sibling script

    with tempfile.TemporaryDirectory(prefix="skilltest-bench-scale-batch-") as tmp:
        folder = Path(tmp)
        workload = example_workload(folder)
        direct = measure(workload, "auto", batch=False, jobs=jobs, folder=folder)
        batched = measure(workload, "auto", batch=True, jobs=jobs, folder=folder)
    same = "same verdicts" if direct.verdicts == batched.verdicts else "VERDICTS DIFFER"
    print(
        f"batch: the example suites at -k auto, {direct.runs} runs: {direct.http} HTTP requests "
        f"direct (-j {jobs}), {batched.http} with --batch ({batched.breakdown}); {same}"
    )


def cpu_of(*args: str, cwd: Path) -> tuple[float, float]:
    """Runs ``python ARGS`` in its own process; returns its CPU seconds (user + system, its
    children included) and its wall seconds."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode not in (0, 1):
        raise SystemExit(f"python {' '.join(args)} exited {done.returncode}:\n{done.stderr}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return cpu, wall


def pressure_cpu(folder: Path, count: int) -> tuple[float, int, Path]:
    """CPU seconds per request of a pressure run of ``count`` generated scenarios (K = 1, both
    arms, no latency), its request count and its results file."""
    project = generated_project(folder / f"cpu-{count}", count, 1, 0)
    results = folder / f"cpu-{count}.json"
    cpu, _ = cpu_of(
        "-m", "skilltest", "pressure", "-j", "8", "--results", str(results), cwd=project
    )
    requests = 2 * count
    return cpu / requests, requests, results


def compile_skilltest() -> str:
    """Compiles skilltest's modules to bytecode, as installing a package does, so that the runs
    timed read it as an installed tool's do (an editable install has none until a first run
    writes it, and none at all where ``PYTHONDONTWRITEBYTECODE`` is set); says which."""
    import compileall

    import skilltest

    package = Path(skilltest.__file__).parent
    compileall.compile_dir(package, quiet=1)
    return "skilltest's bytecode compiled as an install leaves it"


def best_side_by_side(runs: int, first: list[str], second: list[str], cwd: Path) -> list[float]:
    """The best wall time of ``python FIRST`` and of ``python SECOND`` over ``runs`` runs each,
    taken in turn (one of each, then again), so that a machine busier for a while slows both."""
    walls: list[list[float]] = [[], []]
    for _ in range(runs):
        for wall, args in zip(walls, (first, second), strict=True):
            wall.append(cpu_of(*args, cwd=cwd)[1])
    return [min(wall) for wall in walls]


def libraries_of_validate() -> list[str]:
    """The modules outside skilltest that ``skilltest validate`` imports (from ``-X importtime``):
    the standard library and third-party part of its start, before any of skilltest's own code."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "skilltest", "validate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    modules = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            parts = name.split(".")
            outside = parts[0] not in {"skilltest", "sitecustomize", "_distutils_hack"}
            if outside and all(part.isidentifier() for part in parts):
                modules.append(name)
    return sorted(name for name in set(modules) if _importable(name))


def _importable(name: str) -> bool:
    """Whether ``name`` imports here (``-X importtime`` also lists what a module only tried)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def speed(folder: Path) -> None:
    """How saving, validating and the HTML report grow with the suite, side by side."""
    print("growth with the suite: pressure on the emulator (K = 1), validate, the HTML report")
    small, small_requests, small_results = pressure_cpu(folder, 100)
    large, large_requests, results = pressure_cpu(folder, 1000)
    print(
        f"  pressure CPU per request   100 scenarios {1000 * small:6.2f} ms ({small_requests} "
        f"requests)   1000 scenarios {1000 * large:6.2f} ms ({large_requests} requests)   "
        f"ratio {large / small:4.2f}x (target <= 1.2x)"
    )
    compiled = compile_skilltest()
    bare, validate = best_side_by_side(5, ["-c", "pass"], ["-m", "skilltest", "validate"], cwd=ROOT)
    print(
        f"  validate (example suites)  {1000 * validate:6.0f} ms wall   python -c pass "
        f"{1000 * bare:5.0f} ms   ratio {validate / bare:5.1f}x (target < 5x; best of 5 each, "
        f"taken in turn, {compiled})"
    )
    libraries = libraries_of_validate()
    bare, floor = best_side_by_side(
        5, ["-c", "pass"], ["-c", "import " + ", ".join(libraries)], cwd=ROOT
    )
    print(
        f"  validate's libraries       {1000 * floor:6.0f} ms wall   importing only the "
        f"{len(libraries)} modules outside skilltest that it imports: {floor / bare:4.1f}x "
        f"python -c pass"
    )
    hundred = html_report(small_results, folder / "report-100.html", 100)
    thousand = html_report(results, folder / "report-1000.html", 1000)
    print(
        f"  HTML bytes per scenario    1000 against 100: ratio "
        f"{thousand / 1000 / (hundred / 100):4.2f}x (target: flat, <= 1.05x); each scenario "
        f"past the 100th adds {(thousand - hundred) / 900:,.0f} bytes"
    )


class ElementCount(HTMLParser):
    """The elements of a page: all of them (what a browser without JavaScript builds), and
    those outside the bodies made when opened (``<noscript class="later">``: what a browser
    running the page's script builds at load)."""

    def __init__(self) -> None:
        super().__init__()
        self.total = 0
        self.at_load = 0
        self._later = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.total += 1
        self.at_load += self._later == 0
        if tag == "noscript" and ("class", "later") in attrs:
            self._later += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.total += 1
        self.at_load += self._later == 0

    def handle_endtag(self, tag: str) -> None:
        if tag == "noscript" and self._later:
            self._later -= 1


def html_report(results: Path, html: Path, scenarios: int) -> int:
    """Writes the HTML report of ``results`` as a user does and prints its size and elements;
    returns its bytes."""
    cpu_of("-m", "skilltest", "report", str(results), "--html", str(html), cwd=ROOT)
    count = ElementCount()
    count.feed(html.read_text(encoding="utf-8"))
    count.close()
    size = html.stat().st_size
    print(
        f"  HTML report, {scenarios:4} scenarios  {size / 1e6:5.2f} MB   "
        f"{size / scenarios:6,.0f} bytes per scenario   elements built at load: "
        f"{count.at_load:7,} with its script, {count.total:7,} without"
    )
    return size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200, help="generated scenarios (200)")
    parser.add_argument("-k", type=int, default=3, help="runs per arm of the generated suite (3)")
    parser.add_argument("-j", "--jobs", type=int, default=8, help="requests in flight (8)")
    parser.add_argument(
        "--latency-ms", type=int, default=50, help="emulator latency per answer (50)"
    )
    parser.add_argument(
        "--speed-only", action="store_true", help="only the growth figures (CPU, validate, HTML)"
    )
    args = parser.parse_args()
    if args.speed_only:
        with tempfile.TemporaryDirectory(prefix="skilltest-bench-speed-") as tmp:
            speed(Path(tmp))
        return
    with tempfile.TemporaryDirectory(prefix="skilltest-bench-scale-") as tmp:
        out = Path(tmp) / "results"
        out.mkdir()
        print("scale benchmark: pressure on the emulator, each run its own process")
        bench("examples", ROOT, out, ["-j", str(args.jobs)])
        project = generated_project(
            Path(tmp) / "generated", args.scenarios, args.k, args.latency_ms
        )
        bench("generated", project, out, ["-j", str(args.jobs)])
    batch_request_counts(args.jobs)
    with tempfile.TemporaryDirectory(prefix="skilltest-bench-speed-") as tmp:
        speed(Path(tmp))


if __name__ == "__main__":
    main()
