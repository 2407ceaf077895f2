"""A skill author's first hour, as a stranger to this repository lives it: in an empty git
repository holding one skill, skilltest is installed from a wheel into a fresh virtual
environment, `skilltest setup` installs the pinned Claude Code CLI with npm, `skilltest init`
writes the suites, and the three layers run green offline; git sees only what init wrote.

Slow (a minute): it builds the wheel, makes a virtual environment and runs npm. The wheel is
installed with --no-deps into a virtual environment that sees this one's packages for the
dependencies (a .pth line), so no index is needed; skilltest itself, with its package data, is
the wheel's copy, never this checkout. npm installs from its own cache when it has the package
(--prefer-offline), else from the registry.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

pytestmark = [pytest.mark.cli, pytest.mark.slow]

SKILL = """\
---
name: flaky-tests
description: "Quarantine and fix flaky tests: rerun the failing test alone, bisect the test order, then remove the shared state. Use when a test fails intermittently in CI."
---

# Flaky tests

1. **Reproduce first.** Run the one test alone a hundred times before changing anything.
2. **Bisect the order.** Run the suite in halves until the test that leaks state is found.
"""


def run(command: list[str], cwd: Path, env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{command} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """skilltest as a wheel, built from this checkout without the network."""
    out = tmp_path_factory.mktemp("wheel")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(REPO_ROOT),
        ],
        cwd=out,
        env=dict(os.environ),
    )
    (found,) = out.glob("skilltest-*.whl")
    return found


def test_from_an_empty_repository_to_green_suites(wheel, tmp_path):
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("needs node and npm: skilltest setup installs Claude Code with npm")
    venv = tmp_path / "venv"
    # Without a pip of its own (seconds of CPU to install): this environment's pip installs
    # into it (--python).
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300
    )
    python = venv / "bin" / "python"
    purelib = Path(
        run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            cwd=tmp_path,
            env=dict(os.environ),
        ).strip()
    )
    # The dependencies come from this environment; skilltest itself only from the wheel.
    (purelib / "zz-dependencies.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ],
        cwd=tmp_path,
        env=dict(os.environ),
    )
    skilltest = str(venv / "bin" / "skilltest")

    repo = tmp_path / "my-skills"
    (repo / "skills" / "flaky-tests").mkdir(parents=True)
    (repo / "skills" / "flaky-tests" / "SKILL.md").write_text(SKILL)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "SKILLTEST_", "CLAUDE_CODE_", "VIRTUAL_ENV"))
    }
    # No claude but the one setup installs: not this checkout's .tools/, not one on PATH.
    path = [p for p in env["PATH"].split(os.pathsep) if not (Path(p) / "claude").exists()]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["SKILLTEST_CACHE_DIR"] = str(tmp_path / "cache")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    run([*git, "init", "-q"], cwd=repo, env=env)
    run([*git, "add", "-A"], cwd=repo, env=env)
    run([*git, "commit", "-q", "-m", "a skill"], cwd=repo, env=env)

    where = run([str(python), "-c", "import skilltest; print(skilltest.__file__)"], repo, env)
    assert Path(where.strip()).is_relative_to(venv)

    out = run([skilltest, "setup"], repo, env)
    cached = tmp_path / "cache" / "claude-code-2.1.328" / "node_modules" / ".bin" / "claude"
    assert out.startswith(f"claude 2.1.328 installed at {cached}\n")

    out = run([skilltest, "init", "skills/flaky-tests"], repo, env)
    written = sorted(
        line.removeprefix("wrote ") for line in out.splitlines() if line.startswith("wrote ")
    )
    assert written == [
        "skilltest.mk",
        "tests/model-scripts/flaky-tests.pressure.yaml",
        "tests/model-scripts/flaky-tests.scenarios.yaml",
        "tests/model-scripts/flaky-tests.triggers.yaml",
        "tests/scenarios/flaky-tests.yaml",
        "tests/skill-pressure/flaky-tests.yaml",
        "tests/triggers/flaky-tests.yaml",
    ]

    assert "flaky-tests/example-request  steers" in run([skilltest, "pressure"], repo, env)
    scenarios = run([skilltest, "scenarios"], repo, env)
    # Offline, and said so first; then the CLI the setup installed answered.
    assert scenarios.startswith("offline: these numbers come from the skilltest emulator")
    assert scenarios.splitlines()[1].startswith("claude 2.1.328, emulator backend")
    assert "1 scenarios: 1 improved; 1 passed" in scenarios
    triggers = run([skilltest, "triggers"], repo, env)
    assert "4 queries: 4 pass" in triggers

    # The runs kept their raw output, which the ignore entries init wrote keep out of git.
    assert list((repo / "tests" / "scenarios" / "output").rglob("*.ndjson"))
    status = run([*git, "status", "--porcelain", "--untracked-files=all"], repo, env)
    assert sorted(line[3:] for line in status.splitlines()) == sorted([".gitignore", *written])
