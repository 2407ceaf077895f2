"""Whose answer it is, offline: the emulator names the rule of its model script that answered,
a run reads it back from the answer's header, and a failing run's reason says it."""

from __future__ import annotations

import json
import urllib.request

import pytest

from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.transcript.origin import (
    RULE_HEADER,
    ScriptRule,
    attribution,
    rules_of,
    script_rule,
)

SCRIPT = """\
schema_version: 1
rules:
  - id: with-webapp-testing
    when: {system: "webapp"}
    reply: {text: "Following the webapp-testing skill."}
default:
  text: "A plain answer."
"""


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            ScriptRule("with-webapp-testing", "tests/model-scripts/w.yaml", 3),
            "answered by the emulator's rule 'with-webapp-testing' (tests/model-scripts/w.yaml:3); "
            "offline, the model says what its script says: edit the rule or run with "
            "ANTHROPIC_API_KEY set",
        ),
        (
            ScriptRule(None, "tests/model-scripts/w.yaml", 7),
            "answered by the emulator's default reply (tests/model-scripts/w.yaml:7; no rule "
            "matched); offline, the model says what its script says: add a rule or run with "
            "ANTHROPIC_API_KEY set",
        ),
        (
            ScriptRule(None, "w.yaml"),
            "answered by the emulator's no-match reply (no rule of w.yaml matched, and it has no "
            "default); offline, the model says what its script says: add a rule or run with "
            "ANTHROPIC_API_KEY set",
        ),
    ],
)
def test_a_failing_runs_reason_names_the_rule_and_what_to_do(rule, expected):
    assert attribution([rule, rule]) == expected
    # Carried in a header and in a results file, it reads back the same.
    assert ScriptRule.from_header(rule.header()) == rule
    assert rules_of(json.loads(json.dumps([rule.to_dict()]))) == (rule,)


def test_a_real_models_answer_is_attributed_to_no_rule():
    assert attribution([]) is None
    assert script_rule({"content-type": "application/json"}) is None
    assert script_rule({RULE_HEADER: "not ours"}) is None
    assert rules_of(None) == ()  # a results file written before runs recorded rules


def test_a_rule_id_with_separators_survives_the_header():
    rule = ScriptRule("a; at=b:1", "dir with space/x.yaml", 12)
    assert script_rule({RULE_HEADER.upper(): rule.header()}) == rule


def test_every_emulator_answer_names_its_rule_and_line(tmp_path):
    path = tmp_path / "script.yaml"
    path.write_text(SCRIPT)
    script = ModelScript.load(path)
    assert [rule.line for rule in script.rules] == [3]
    assert script.default_line == 6
    with EmulatorServer(script, port=0) as server:
        for system, expected in (
            ("a webapp skill", ScriptRule("with-webapp-testing", str(path), 3)),
            ("nothing", ScriptRule(None, str(path), 6)),
        ):
            body = {
                "model": "m",
                "max_tokens": 10,
                "system": system,
                "messages": [{"role": "user", "content": "hi"}],
            }
            request = urllib.request.Request(
                server.base_url + "/v1/messages",
                data=json.dumps(body).encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(request) as answer:
                assert script_rule(dict(answer.headers)) == expected
        assert [seen.script_rule for seen in server.requests] == [
            ScriptRule("with-webapp-testing", str(path), 3),
            ScriptRule(None, str(path), 6),
        ]
