"""Benchmark of ``skilltest pressure --batch``: prints figures, asserts nothing.

For the example pressure suites and a generated suite of 200 scenarios, each at -k auto and at a
fixed K, runs the suite directly and through the Message Batches API against the emulator (the
real SDK on loopback, as the live API would be spoken to) and prints, side by side, the HTTP
requests the API received (for batches: creations, retrieves, result reads; the SDK retrieves a
batch once more before reading its results) and the wall time. The verdicts of the two runs are
compared too.

Wall time here is the toolkit's own: the emulator answers at once and ends a batch by its first
poll. Against the live API a direct request takes seconds and a batch minutes to hours (billed
at half the price), so the offline wall times say what the toolkit costs, not how long a live
run waits.

    .venv/bin/python scripts/bench_batches.py [--scenarios 200] [-k 3] [--jobs 4]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml
from pressure_examples import SUITES, write_merged_script

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.pressure import PressureOptions, PressureResults, run
from skilltest.report.outputs import Outputs

SKILL = """\
---
name: bench
description: Investigate incidents by aggregating first. Use when the user asks about errors.
---
# Bench

BENCH SKILL: count before you fetch raw lines.
"""


@dataclass(frozen=True)
class Workload:
    """A set of suites and the model script that answers them."""

    name: str
    suites: tuple[Path, ...]
    script: Path


@dataclass(frozen=True)
class Measured:
    """One run of a workload, direct or batched."""

    workload: str
    k: str
    mode: str
    runs: int
    http: int
    """HTTP requests the API received."""
    breakdown: str
    """For batches: creations, polls and result reads."""
    wall_s: float
    verdicts: tuple[tuple[str, str], ...]


def example_workload(folder: Path) -> Workload:
    """The example suites, answered by one script that merges theirs (one base URL)."""
    path = write_merged_script(folder / "examples.model.yaml")
    return Workload(f"example suites ({len(SUITES)} files)", tuple(SUITES), path)


def generated_workload(folder: Path, scenarios: int) -> Workload:
    """``scenarios`` scenarios of one suite: the skill steers every one of them."""
    root = folder / "generated"
    (root / "skills" / "bench").mkdir(parents=True)
    (root / "skills" / "bench" / "SKILL.md").write_text(SKILL)
    script = root / "model.yaml"
    script.write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "rules": [
                    {
                        "id": "with-skill",
                        "when": {"system": "BENCH SKILL"},
                        "reply": {"text": "count_over_time first, then a sample"},
                    }
                ],
                "default": {"text": "I would grep the logs."},
            }
        )
    )
    suite = root / "bench.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "skill": "bench",
                "scenarios": [
                    {
                        "id": f"s{i:03d}",
                        "prompt": f"Error spike number {i} in checkout. How do you investigate?",
                        "with_skill": {"required_patterns": ["count_over_time"]},
                    }
                    for i in range(scenarios)
                ],
            }
        )
    )
    return Workload(f"generated ({scenarios} scenarios)", (suite,), script)


@contextlib.contextmanager
def api_at(base_url: str) -> Iterator[None]:
    """The anthropic backend pointed at ``base_url`` for the duration."""
    saved = {name: os.environ.get(name) for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")}
    os.environ.update({"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-bench"})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def measure(workload: Workload, k: int | str, *, batch: bool, jobs: int, folder: Path) -> Measured:
    """Runs the workload once, directly or in batches, against a fresh emulator."""
    script = ModelScript.load(workload.script)
    with EmulatorServer(script) as server, api_at(server.base_url):
        options = PressureOptions(
            suites=workload.suites,
            backend="anthropic",
            repeat=k,
            jobs=jobs,
            batch=batch,
            poll_interval_s=0.05,
            allow_inconclusive=True,
            outputs=_results_in(folder / f"{'batch' if batch else 'direct'}-{k}.json"),
        )
        started = time.perf_counter()
        results = run(options)
        wall = time.perf_counter() - started
        calls = server.requests
    return Measured(
        workload=workload.name,
        k=str(k),
        mode="batch" if batch else "direct",
        runs=sum(len(s.runs) for s in results.scenarios),
        http=len(calls),
        breakdown=_breakdown(calls) if batch else "",
        wall_s=wall,
        verdicts=_verdicts(results),
    )


def _results_in(path: Path) -> Outputs:
    return Outputs(results=path)


def _breakdown(calls: Sequence[object]) -> str:
    creates = polls = reads = 0
    for call in calls:
        method, path = getattr(call, "method", ""), getattr(call, "path", "")
        if method == "POST" and path == "/v1/messages/batches":
            creates += 1
        elif path.endswith("/results"):
            reads += 1
        elif method == "GET":
            polls += 1
    return f"{creates} create, {polls} retrieve, {reads} results"


def _verdicts(results: PressureResults) -> tuple[tuple[str, str], ...]:
    return tuple((s.scenario.id, s.verdict) for s in results.scenarios)


def bench_batches(
    *, scenarios: int = 200, k: int = 3, jobs: int = 4
) -> list[tuple[Measured, Measured]]:
    """Direct and batched runs of the example suites and of a generated suite of ``scenarios``
    scenarios, each at -k auto and at ``k``; returns (direct, batch) pairs."""
    pairs = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        workloads = [example_workload(folder), generated_workload(folder, scenarios)]
        # Warm-up: the SDK's import and first connection are paid once, outside the figures.
        measure(workloads[0], 1, batch=False, jobs=jobs, folder=folder / "warm")
        measure(workloads[0], 1, batch=True, jobs=jobs, folder=folder / "warm")
        for workload in workloads:
            for repeat in ("auto", k):
                place = folder / workload.name.split()[0] / str(repeat)
                direct = measure(workload, repeat, batch=False, jobs=jobs, folder=place)
                batched = measure(workload, repeat, batch=True, jobs=jobs, folder=place)
                pairs.append((direct, batched))
    return pairs


def render(pairs: Sequence[tuple[Measured, Measured]], jobs: int) -> str:
    """The table the benchmark prints."""
    lines = [
        "pressure --batch benchmark: HTTP requests the API received and wall time, direct run "
        f"(-j {jobs}) vs batch run, on the emulator",
        f"  {'workload':<28} {'K':<5} {'mode':<7} {'runs':>6} {'HTTP':>6}  {'wall':>7}  detail",
    ]
    for direct, batched in pairs:
        for m in (direct, batched):
            lines.append(
                f"  {m.workload:<28} {m.k:<5} {m.mode:<7} {m.runs:>6} {m.http:>6}  "
                f"{m.wall_s:6.2f}s  {m.breakdown}"
            )
        same = "same verdicts" if direct.verdicts == batched.verdicts else "VERDICTS DIFFER"
        lines.append(
            f"  {'':<28} {'':<5} {'ratio':<7} {'':>6} {direct.http / batched.http:5.1f}x  "
            f"{batched.wall_s / direct.wall_s:6.2f}x  {same} (HTTP: direct / batch; wall: batch / "
            "direct)"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=200)
    parser.add_argument("-k", type=int, default=3, help="the fixed K measured beside -k auto")
    parser.add_argument("--jobs", type=int, default=4, help="-j of the direct runs")
    args = parser.parse_args()
    print(render(bench_batches(scenarios=args.scenarios, k=args.k, jobs=args.jobs), args.jobs))


if __name__ == "__main__":
    main()
