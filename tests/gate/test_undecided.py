"""`skilltest gate` blocks when no scenario of a real run is decided, and says so."""

from __future__ import annotations

import json

from skilltest.cli import main
from tests.gate.test_gate import SKILL, gate
from tests.projects import demo_script, write_demo_project

SUITE = """\
skill: demo
model_script: model.yaml
repetitions: 2
scenarios:
  - id: aggregate-first
    prompt: "Error spike in checkout. How do you investigate?"
    with_skill: {required_patterns: ["(?i)aggregate"]}
"""


def test_a_run_where_nothing_is_decided_blocks_unless_allowed(tmp_path, capsys):
    suite = write_demo_project(tmp_path, SUITE, demo_script("Aggregate first."), skill=SKILL)
    results = tmp_path / "results.json"
    main(["pressure", str(suite), "--results", str(results)])
    capsys.readouterr()
    verdicts = [s["verdict"] for s in json.loads(results.read_text())["scenarios"]]
    assert verdicts == ["inconclusive"]  # two runs per arm decide nothing

    code, out, _ = gate(capsys, results, "--allow-offline")
    assert code == 1, out
    assert (
        "         - no scenario decided: 0 of 1 have a verdict other than inconclusive, error "
        "or skipped; run more runs (-k auto) or pass --allow-undecided"
    ) in out.splitlines()

    code, out, _ = gate(capsys, results, "--allow-offline", "--allow-undecided")
    assert code == 0, out
