"""A scenario run in a controlled world (the real claude CLI against the emulator) writes a
trace with the HTTP calls its fake received and the world's verdict; the world's agent token, which the agent
prints and sends in a request body (merged into the record, so in the state diff), is redacted
in the trace and in the results file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main
from tests.world.test_world_scenarios import (
    ISOLATION_SCENARIO,
    LOAD_SKILL,
    TICKETS_WORLD,
    run_suite,
    scenario_results,
    write_suite,
)

pytestmark = pytest.mark.cli

# The agent leaks its token twice: on stdout (the tool result) and in the PATCH body, which the
# fake records and merges into the record (so it is in the state diff too).
COMMAND = """\
echo "token=$TICKETS_API_TOKEN"
curl -s -o /dev/null -w "HTTP %{http_code}\\n" -X PATCH -H "Authorization: Bearer $TICKETS_API_TOKEN" -H "If-Match: 3" -H "Content-Type: application/json" -d "{\\"owner\\": \\"platform-team\\", \\"note\\": \\"$TICKETS_API_TOKEN\\"}" https://api.tickets.example.com/tickets/INC-1042
"""

RULES = (
    LOAD_SKILL
    + f"""\
  - id: patch
    when: {{skill_loaded: tickets, turn: 2}}
    reply:
      tool_calls: [{{name: Bash, input: {{description: "Reassign INC-1042", command: {json.dumps(COMMAND)}}}}}]
  - id: done
    when: {{skill_loaded: tickets, turn: 3}}
    reply: {{text: "INC-1042 now belongs to platform-team."}}
"""
)

REDACTED = "[REDACTED:WORLD_AGENT_TOKEN]"


def test_a_world_run_traces_http_calls_and_redacts_the_worlds_token(claude_bin, tmp_path, capsys):
    # A world without a canary: no canary run comes first, the one with-skill run is all.
    suite = write_suite(tmp_path, ISOLATION_SCENARIO, RULES, world=TICKETS_WORLD)

    code = run_suite(claude_bin, suite, "--skill-only", "-k", "1")
    out = capsys.readouterr().out
    assert code in (0, 1), out
    (run,) = scenario_results(suite)["runs"]
    world = run["world"]
    assert world["state_diff"], world
    # Before redaction the fake's record held the token the agent sent.
    assert REDACTED in json.dumps(world["state_diff"])

    trace = Path(run["trace"])
    text = trace.read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["fixture_checksum"].startswith("sha256:")
    http = [e for e in lines if e.get("type") == "http"]
    assert [(e["method"], e["host"], e["path"], e["status"]) for e in http] == [
        ("PATCH", "api.tickets.example.com", "/tickets/INC-1042", 200)
    ]
    call = next(e for e in lines if e.get("type") == "tool_call" and e["name"] == "Bash")
    assert f"token={REDACTED}" in call["result"]
    outcome = lines[-1]
    assert REDACTED in json.dumps(outcome["world"]["state_diff"])
    assert outcome["world"]["authority_violation"] is False
    assert set(outcome["world"]["scores"]) >= {"task", "safety"}
    # No token-like value of the run is left anywhere: every token= line is the placeholder.
    for line in text.splitlines():
        assert "token=" not in line or f"token={REDACTED}" in line

    assert main(["show", str(trace)]) == 0
    shown = capsys.readouterr().out
    assert "http PATCH api.tickets.example.com/tickets/INC-1042 -> 200" in shown
    assert "world: " in shown and "; no violations" in shown
