"""What the tests of the agents share: each agent's executable, found as ``--agent NAME`` finds
it, and a project holding the lgtm example skill and its model script."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from skilltest.agents import agent
from skilltest.errors import ConfigurationError

from ..conftest import REPO_ROOT


def installed_agent(name: str) -> Path:
    """The executable ``--agent NAME`` runs; without one the test fails naming the install
    (``make test`` installs every agent first), never skips."""
    try:
        return agent(name).find().path
    except ConfigurationError as exc:
        pytest.fail(f"--agent {name} needs its CLI, which is missing (run `make {name}`): {exc}")


@pytest.fixture
def lgtm_suite(tmp_path: Path) -> Path:
    """A repository holding the lgtm skill (``skills/``), its scenarios' model script and the
    example suite ``tests/scenarios/lgtm.yaml`` as it is, but for a time limit that a loaded
    machine's agent starts (one per user message) cannot reach; the suite's path."""
    project = tmp_path / "project"
    shutil.copytree(REPO_ROOT / "skills" / "lgtm", project / "skills" / "lgtm")
    (project / "tests" / "model-scripts").mkdir(parents=True)
    shutil.copyfile(
        REPO_ROOT / "tests" / "model-scripts" / "lgtm.scenarios.yaml",
        project / "tests" / "model-scripts" / "lgtm.scenarios.yaml",
    )
    (project / "tests" / "scenarios").mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    suite = project / "tests" / "scenarios" / "lgtm.yaml"
    example = (REPO_ROOT / "tests" / "scenarios" / "lgtm.yaml").read_text()
    suite.write_text(example.replace("timeout_ms: 120000", "timeout_ms: 900000"))
    return suite
