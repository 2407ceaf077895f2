"""`skilltest pressure` when the API answers with something that is not a message.

The real Anthropic SDK against the emulator on loopback, which sends a body that is not JSON for
one scenario's prompt (``fault: {malformed: true}``): that scenario's runs are errors that say
what came back, and the others still get their verdicts.
"""

from __future__ import annotations

import re
from pathlib import Path

from skilltest.cli import main
from skilltest.report.files import read_results
from tests.projects import write_demo_project

SUITE = """\
skill: demo
model_script: model.yaml
repetitions: 11
scenarios:
  - id: first
    prompt: "First question"
    with_skill: {required_patterns: ["(?i)count_over_time"]}
  - id: broken
    prompt: "Broken question"
    with_skill: {required_patterns: ["(?i)count_over_time"]}
  - id: last
    prompt: "Last question"
    with_skill: {required_patterns: ["(?i)count_over_time"]}
"""

SCRIPT = """\
schema_version: 1
rules:
  - id: cut-json
    when: {user: "Broken"}
    reply: {text: "count_over_time"}
    fault: {malformed: true}
  - id: with-skill
    when: {system: "DEMO SKILL"}
    reply: {text: "Use count_over_time first."}
default: {text: "I would grep the error logs."}
"""


def test_a_reply_that_is_not_json_is_an_error_run_and_the_suite_goes_on(tmp_path: Path, capsys):
    suite = write_demo_project(tmp_path, SUITE, SCRIPT)
    results = tmp_path / "results.json"

    code = main(["pressure", str(suite), "--results", str(results)])

    out, err = capsys.readouterr()
    assert code == 1  # an `error` scenario fails the run; bad input (2) or a crash it is not
    assert "Traceback" not in out + err
    assert re.search(r"demo/first\s+steers\s", out)
    assert re.search(r"demo/broken\s+error\s", out)
    assert re.search(r"demo/last\s+steers\s", out)
    document = read_results(results, "pressure")
    assert document["complete"] is True
    broken = next(s for s in document["scenarios"] if s["id"] == "broken")
    errors = [run["error"] for run in broken["runs"]]
    assert len(errors) == 22
    for error in errors:
        assert error.startswith("unreadable API reply (HTTP 200): ")
        assert '; body: \'{"id": "msg_' in error
    assert "with_skill run 1: unreadable API reply (HTTP 200)" in out
