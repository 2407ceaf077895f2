"""The secrets a suite declares stay out of everything written, in every layer.

A suite lists values that are not credentials but must not be kept (a customer's name in a
fixture, a token of the service a skill talks to) under ``replay: {redact: [...]}``: a literal,
or ``$NAME`` for the value of an environment variable. A controlled world names the variable
its service's token travels in (``auth: {env: TICKETS_API_TOKEN}``): the run's agent gets a
token of its own there, and the caller's real value of that variable is a secret too.

Each layer runs a suite as a person runs it (``python -m skilltest``, the real ``claude`` CLI
against the model emulator, every output asked for) where each such value reaches the run every
way it can: the suite's prompt holds the literal, the workspace file the agent reads holds all of
them, the agent echoes them in its commands and the model repeats them in its answer. No form of
any of them is then in the terminal, the results, JUnit, Markdown, HTML, the traces, the kept
transcripts or the cassettes.
"""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.leaks import leaks

pytestmark = pytest.mark.cli

RUN_S = 240.0
"""A command still running after this long hangs."""


def _value(prefix: str) -> str:
    return prefix + base64.urlsafe_b64encode(secrets.token_bytes(18)).decode()


LITERAL = _value("acme-customer-")
"""A value the suite redacts as written."""
FROM_ENV = _value("svc-")
"""The value of ``$DEMO_SERVICE_TOKEN``, which the suite redacts by name."""
WORLD_REAL = _value("tkt-")
"""The caller's own ``$TICKETS_API_TOKEN``, the variable the suite's world names."""

VALUES = {
    "replay.redact literal": LITERAL,
    "$DEMO_SERVICE_TOKEN": FROM_ENV,
    "$TICKETS_API_TOKEN (the world's variable)": WORLD_REAL,
}
"""Each value, by what declares it (only a scenario suite has a world)."""

SKILL = "---\nname: demo\ndescription: Use for checking the demo service notes.\n---\nSay lgtm.\n"

SAID = f"lgtm. The notes say {LITERAL} {FROM_ENV} {WORLD_REAL}."
"""What the model answers: every value, as it read them."""

SCRIPT = f"""\
schema_version: 1
rules:
  - id: read
    when: {{turn: 1, tools: [Bash]}}
    reply:
      text: "Reading the notes of {LITERAL}."
      tool_calls:
        - name: Bash
          input: {{description: notes, command: "cat notes.txt; echo {LITERAL} | base64"}}
  - id: trigger
    when: {{turn: 1, tools: [Skill]}}
    reply:
      text: "{SAID}"
      tool_calls: [{{name: Skill, input: {{skill: demo}}}}]
  - id: answer
    when: {{tool_result: "."}}
    reply: {{text: "{SAID}"}}
default: {{text: "{SAID}"}}
"""

REDACT = f'replay: {{redact: ["{LITERAL}", $DEMO_SERVICE_TOKEN]}}'

WORLD = """\
services:
  - name: tickets
    hosts: [api.tickets.example.com]
    auth: {env: TICKETS_API_TOKEN}
    routes:
      - {method: GET, path: "/tickets/{id}", action: get, collection: tickets}
    data:
      tickets:
        - {id: INC-1042, owner: payments-team}
"""

SUITES = {
    "scenarios": f"""\
skill: demo
model_script: script.yaml
world: world.yaml
repetitions: 1
{REDACT}
config: {{max_turns: 4, timeout_ms: 120000, allowed_tools: [Bash, Read]}}
scenarios:
  - id: notes
    prompt: "Check the demo service notes for {LITERAL}."
    workspace: workspace
    expected: {{required_patterns: [notes]}}
    checks:
      - final_answer: {{pattern: lgtm}}
      - command: {{run: "cat notes.txt", exit_code: 0}}
""",
    "triggers": f"""\
skill: demo
model_script: script.yaml
repetitions: 1
{REDACT}
queries:
  - {{id: notes, query: "Check the demo service notes for {LITERAL}.", should_trigger: true}}
""",
    "pressure": f"""\
skill: demo
model_script: script.yaml
repetitions: 1
{REDACT}
scenarios:
  - id: notes
    prompt: "Check the demo service notes for {LITERAL}."
    with_skill: {{required_patterns: [lgtm]}}
""",
}

OPTIONS = {
    "scenarios": ["--skill-only", "--record", "cassettes", "--claude"],
    "triggers": ["--record", "cassettes", "--claude"],
    "pressure": ["--skill-only", "--allow-inconclusive", "--record", "cassettes"],
}
"""What each layer runs with beyond the outputs (``--claude`` takes the binary)."""


def run_layer(layer: str, root: Path, claude: Path) -> subprocess.CompletedProcess[str]:
    subprocess.run(["git", "init", "--quiet", str(root)], check=True, capture_output=True)
    (root / "skills" / "demo").mkdir(parents=True)
    (root / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    (root / "workspace").mkdir()
    (root / "workspace" / "notes.txt").write_text(f"{LITERAL}\n{FROM_ENV}\n{WORLD_REAL}\n")
    (root / "world.yaml").write_text(WORLD)
    (root / "script.yaml").write_text(SCRIPT)
    (root / "suite.yaml").write_text(SUITES[layer])
    home, temp = root / "home", root / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("ANTHROPIC_", "CLAUDE_"))
    }
    env.pop("GITHUB_STEP_SUMMARY", None)
    env.update(
        HOME=str(home),
        TMPDIR=str(temp),
        DEMO_SERVICE_TOKEN=FROM_ENV,
        TICKETS_API_TOKEN=WORLD_REAL,
    )
    outputs = ["--results", "out/results.json", "--junit", "out/junit.xml"]
    outputs += ["--markdown", "out/summary.md", "--report", "out/report.html"]
    outputs += ["--output-dir", "out/runs"]
    options = [*OPTIONS[layer], *([str(claude)] if OPTIONS[layer][-1] == "--claude" else [])]
    try:
        return subprocess.run(
            [sys.executable, "-m", "skilltest", layer, "suite.yaml", *options, *outputs],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"skilltest {layer}: still running after {RUN_S:g} s")


PROJECT = ("SKILL.md", "suite.yaml", "script.yaml", "world.yaml", "notes.txt")
"""The project's own files, which hold the values: what the test wrote, not the run."""


def written(root: Path) -> dict[str, str]:
    """Every file the run wrote (the project's own files and the run's HOME and TMPDIR
    aside), by path."""
    kept = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if relative.parts[0] in (".git", "home", "tmp", "workspace", "skills"):
            continue
        if path.is_file() and not path.is_symlink() and path.name not in PROJECT:
            kept[str(relative)] = path.read_bytes().decode("utf-8", "replace")
    return kept


@pytest.mark.parametrize("layer", ["scenarios", "triggers", "pressure"])
def test_the_secrets_a_suite_declares_are_in_nothing_written(tmp_path, claude_bin, layer):
    done = run_layer(layer, tmp_path, claude_bin)
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said
    assert done.returncode in (0, 1), said
    texts = {"stdout": done.stdout, "stderr": done.stderr, **written(tmp_path)}
    expected = {"out/results.json", "out/junit.xml", "out/summary.md", "out/report.html"}
    assert expected <= set(texts), sorted(texts)
    assert any(name.startswith("cassettes/") for name in texts), sorted(texts)
    if layer != "pressure":
        assert any(name.startswith("out/runs/") for name in texts), sorted(texts)
    # The values did reach the run: they are there, redacted, where the model repeated them.
    assert any("[REDACTED" in text for text in texts.values())
    declared = VALUES if layer == "scenarios" else {k: VALUES[k] for k in list(VALUES)[:2]}
    found = {
        name: {label: forms for label, value in declared.items() if (forms := leaks(text, value))}
        for name, text in texts.items()
    }
    assert {name: forms for name, forms in found.items() if forms} == {}
