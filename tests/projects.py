"""Projects on disk as the commands read them: a skill folder, and the demo project that the
in-process pressure tests run on the emulator.

The demo project is ``skills/demo/SKILL.md`` (its text says ``DEMO SKILL``), a model script
``model.yaml`` that answers a system prompt holding ``DEMO SKILL`` (the with-skill arm) one way
and anything else (the bare model) another, and a suite ``demo.yaml`` naming both.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

DEMO_SKILL = "DEMO SKILL: aggregate first."

MODEL_SCRIPTS = Path(__file__).resolve().parent / "model-scripts"
"""The example suites' model scripts."""


def make_repository(folder: Path) -> Path:
    """Makes ``folder`` a git work tree (the repository its suites read their files from);
    returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "--quiet", str(folder)], check=True, capture_output=True)
    return folder


def model_script_beside(text: str, script: str, folder: Path) -> str:
    """An example suite's ``text``, which names ``../model-scripts/<script>``, naming a copy of
    that script in ``folder`` instead: a suite reads only files of its own repository, so a
    suite copied into a temporary folder takes its script along. The copy is JSON, which a
    folder's suites are never taken for."""
    copy = folder / (Path(script).stem + ".json")
    folder.mkdir(parents=True, exist_ok=True)
    copy.write_text(json.dumps(yaml.safe_load((MODEL_SCRIPTS / script).read_text())))
    assert f"../model-scripts/{script}" in text
    return text.replace(f"../model-scripts/{script}", copy.name)


def write_skill(root: Path, text: str, name: str = "demo") -> Path:
    """Writes ``root/skills/<name>/SKILL.md`` holding ``text``; returns its path."""
    path = root / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def demo_suite(repetitions: int = 2) -> str:
    """One scenario: the skill steers to count_over_time, the bare model greps (RED)."""
    return f"""\
skill: demo
model_script: model.yaml
repetitions: {repetitions}
scenarios:
  - id: aggregate
    prompt: "Error spike in checkout. How do you investigate?"
    without_skill: {{expected_patterns: ["(?i)grep"]}}
    with_skill: {{required_patterns: ["(?i)count_over_time"], anti_patterns: ["(?i)rm -rf"]}}
"""


def numbered_suite(count: int, repetitions: int) -> str:
    """Scenarios ``s0``, ``s1``, ... that pass on count_over_time: many runs, to stop part way."""
    head = f"skill: demo\nmodel_script: model.yaml\nrepetitions: {repetitions}\nscenarios:\n"
    return head + "".join(
        f"  - id: s{i}\n    prompt: p{i}\n    with_skill: {{required_patterns: [count_over_time]}}\n"
        for i in range(count)
    )


def demo_script(with_text: str, faults: str = "") -> str:
    """The with-skill arm answers ``with_text``, the bare model greps; ``faults`` is a YAML line
    such as ``faults: {latency_ms: 700}``."""
    return f"""\
schema_version: 1
{faults}
rules:
  - id: with-skill
    when: {{system: "DEMO SKILL"}}
    reply: {{text: "{with_text}"}}
default: {{text: "I would grep the error logs."}}
"""


def write_demo_project(folder: Path, suite: str, script: str, skill: str = DEMO_SKILL) -> Path:
    """Writes the skill, ``model.yaml`` and ``demo.yaml`` into ``folder``; returns the suite."""
    write_skill(folder, skill)
    (folder / "model.yaml").write_text(script)
    path = folder / "demo.yaml"
    path.write_text(suite)
    return path


def write_files(folder: Path, files: dict[str, str]) -> Path:
    """Writes each of ``files`` (a path relative to ``folder`` -> its text); returns ``folder``."""
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder
