"""Runs of the example suites that several test files read, made once per test session.

The README shows what ``make test-scenarios`` prints, and the scenario layer's end-to-end test
checks that same run's scores against the hand-checked rubric; the committed cassettes replay the
example trigger suites, and the merge test compares sharded replays with that same whole run.
Each such run goes through the real ``claude`` CLI once per session, when a test first reads it;
its readers only read what it printed and wrote, and none may change its files.

Under pytest-xdist every worker has a session of its own, so the files that read one run are
handed to one worker together (:func:`work_unit`, which the scheduler in ``tests/conftest.py``
uses); a test file that reads a run without being listed among its :data:`READERS` is refused
when the suite is collected.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import REPO_ROOT
from .replay.examples import claude_or_skip, closed_port

CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
"""What a developer's shell may hold that no run of the suite may see."""

READERS: Mapping[str, tuple[str, ...]] = {
    "example_scenarios": ("tests/scenarios/test_e2e.py", "tests/test_readme.py"),
    "example_triggers_replayed": (
        "tests/replay/test_committed_cassettes.py",
        "tests/merge/test_merge_layers.py",
    ),
}
"""Each shared run (by the name of its fixture) and the test files that read it."""

RUN_TIMEOUT_S = 900.0
"""A bound for a hung run only: on a loaded machine the example suites take minutes."""


@dataclass(frozen=True)
class LayerRun:
    """A layer run as a user starts it from a terminal: what it printed and what it wrote."""

    argv: tuple[str, ...]
    """The ``skilltest`` arguments it ran with, its results and output folder among them."""
    code: int
    """Its exit code."""
    out: str
    """What it printed on stdout."""
    err: str
    """What it printed on stderr."""
    results: Path
    """Its results file (``--results``)."""
    output: Path
    """The folder its raw transcripts went to (``--output-dir``)."""


def offline_environment(**extra: str) -> dict[str, str]:
    """This process's environment without credentials, a model endpoint or a CI step summary,
    with ``extra`` set."""
    dropped = {*CREDENTIALS, "ANTHROPIC_BASE_URL", "GITHUB_STEP_SUMMARY"}
    return {**{k: v for k, v in os.environ.items() if k not in dropped}, **extra}


def run_from_repository(
    folder: Path, layer: str, *options: str, env: Mapping[str, str]
) -> LayerRun:
    """``python -m skilltest LAYER *OPTIONS`` from the repository's root, as ``make`` runs it,
    with its results and raw transcripts in ``folder``; fails the test if it hangs."""
    results, output = folder / "results.json", folder / "output"
    argv = (layer, *options, "--results", str(results), "--output-dir", str(output))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "skilltest", *argv],
            cwd=REPO_ROOT,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"skilltest {' '.join(argv)}: still running after {RUN_TIMEOUT_S:g} s")
    return LayerRun(argv, done.returncode, done.stdout, done.stderr, results, output)


def example_scenarios(folders: pytest.TempPathFactory) -> Callable[[], LayerRun]:
    """The example scenario suites as ``make test-scenarios`` runs them (the real CLI against
    the emulator, each suite's own K, ``-j 4``), made when first called."""

    @functools.cache
    def run() -> LayerRun:
        env = offline_environment(SKILLTEST_CLAUDE=str(claude_or_skip()))
        return run_from_repository(folders.mktemp("example-scenarios"), "scenarios", env=env)

    return run


def example_triggers_replayed(folders: pytest.TempPathFactory) -> Callable[[], LayerRun]:
    """The example trigger suites replayed from the committed cassettes through the real CLI,
    the API at a closed port so that nothing but the cassettes can answer; made when first
    called."""

    @functools.cache
    def run() -> LayerRun:
        env = offline_environment(
            SKILLTEST_CLAUDE=str(claude_or_skip()), ANTHROPIC_BASE_URL=closed_port()
        )
        folder = folders.mktemp("example-triggers-replayed")
        return run_from_repository(folder, "triggers", "--replay", "tests/cassettes", env=env)

    return run


def work_unit(path: str) -> str:
    """What the xdist scheduler hands to one worker for the test file ``path``: the file itself,
    or the name of the shared run it reads, so that all of that run's readers go together."""
    for name, readers in READERS.items():
        if path in readers:
            return name
    return path


def check_readers(items: list[pytest.Item]) -> None:
    """Refuses a collected test that reads a shared run from a file not among its readers."""
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        for name, readers in READERS.items():
            if name in getattr(item, "fixturenames", ()) and path not in readers:
                raise pytest.UsageError(
                    f"{item.nodeid} reads the shared run {name!r}, but {path} is not among its "
                    f"readers: add it to READERS in tests/example_runs.py, so that its readers "
                    "run on one xdist worker and the run is made once"
                )
