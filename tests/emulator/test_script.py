"""Loading model scripts: valid ones load as written, bad ones fail with file + pointer + fix."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from skilltest.emulator import ModelScript, Reply, ToolCall
from skilltest.emulator.batches import BatchBehaviour, BatchOutcome
from skilltest.emulator.described import DescribedCondition
from skilltest.emulator.script import model_script_schema
from skilltest.errors import InputError, ModelScriptError

HERE = Path(__file__).parent
SCRIPTS = HERE / "scripts"
REPO = HERE.parent.parent


def test_schema_is_valid_draft_2020_12_with_descriptions() -> None:
    schema = model_script_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for name in ("rule", "when", "reply", "fault"):
        for key, spec in schema["$defs"][name]["properties"].items():
            assert spec.get("description") or spec.get("$ref"), f"{name}.{key} undocumented"


def test_bash_script_loads_as_written() -> None:
    script = ModelScript.load(SCRIPTS / "bash_echo.yaml")

    assert script.source == str(SCRIPTS / "bash_echo.yaml")
    assert script.model == "claude-emulated"
    assert [rule.id for rule in script.rules] == ["call-bash", "after-bash"]
    call = script.rules[0]
    assert call.when.turn == frozenset({1})
    assert call.when.tools == ("Bash",)
    assert call.when.user is not None and call.when.user.matches("Please SAY HELLO")
    assert call.replies == (
        Reply(
            text="I will run echo.",
            tool_calls=(
                ToolCall(
                    "Bash",
                    {"command": "echo hello-from-emulator", "description": "Print a greeting"},
                ),
            ),
            stop_reason="tool_use",
        ),
    )
    assert script.default == Reply(text="No rule matched.", stop_reason="end_turn")


def test_every_key_of_the_format_loads() -> None:
    script = ModelScript.load(SCRIPTS / "everything.yaml")

    assert (script.seed, script.model) == (42, "stand-in-model")
    assert script.faults is not None and script.faults.latency_ms == 5
    varied = script.rules[0]
    assert varied.pick == "random" and len(varied.replies) == 3
    assert varied.replies[2].stop_reason == "tool_use"
    assert varied.fault is not None
    assert (varied.fault.failure, varied.fault.status, varied.fault.first_n) == ("status", 429, 1)
    assert varied.fault.retry_after_ms == 10
    assert script.rules[3].when.side_request == "title"
    assert script.rules[4].when.side_request is True
    described = script.rules[5]
    assert described.when.described == DescribedCondition(min_overlap=2)
    assert described.replies[0].tool_calls == (ToolCall("Skill", {"skill": "{described}"}),)
    assert script.default == Reply(text="default", stop_reason="max_tokens")
    assert script.batches == BatchBehaviour(polls=2, processing_ms=50, end="expired")
    assert script.rules[1].batch == BatchOutcome("errored", status=529, message="busy")
    assert script.rules[0].batch is None


@pytest.mark.parametrize(
    "path",
    sorted(
        [*SCRIPTS.glob("*.yaml"), *(REPO / "tests" / "model-scripts").glob("*.yaml")],
        key=str,
    ),
    ids=lambda path: path.name,
)
def test_every_script_in_the_repository_is_valid(path: Path) -> None:
    ModelScript.load(path)


def test_from_dict_names_its_source() -> None:
    with pytest.raises(ModelScriptError) as caught:
        ModelScript.from_dict({"schema_version": 2}, source="suite.yaml#/model_script")
    assert str(caught.value) == (
        "suite.yaml#/model_script#/schema_version: must be 1, got 2\n"
        "  fix: schema_version: 1 is the only version"
    )


def test_json_scripts_load_too(tmp_path: Path) -> None:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"schema_version": 1, "default": {"text": "hi"}}))
    assert ModelScript.load(path).default == Reply(text="hi")


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ModelScriptError) as caught:
        ModelScript.load(path)
    assert str(caught.value) == (
        f"{path}: file not found\n  fix: check the path (and the working directory)"
    )
    assert isinstance(caught.value, InputError)  # the CLI maps it to exit 2


RULE = "rules:\n  - id: r1\n"

BAD_SCRIPTS = [
    (
        "not-yaml",
        "schema_version: 1\nrules: [\n",
        ":3:1: YAML syntax error: expected the node content, but found '<stream end>'\n"
        "  fix: check indentation and quoting; quote patterns that contain ': ' or start with *",
    ),
    (
        "not-a-mapping",
        "- just a list\n",
        '#/: expected a mapping, got ["just a list"]\n  fix: write a mapping here',
    ),
    (
        "missing-version",
        "rules: []\n",
        "#/: the script is missing the required key 'schema_version'\n"
        "  fix: add 'schema_version: 1' at the top of the script",
    ),
    (
        "wrong-version",
        "schema_version: 2\n",
        "#/schema_version: must be 1, got 2\n  fix: schema_version: 1 is the only version",
    ),
    (
        "unknown-top-level-key",
        "schema_version: 1\nrule: []\n",
        "#/rule: unknown key 'rule'\n"
        "  fix: did you mean 'rules'? allowed keys here: batches, default, faults, model, "
        "rules, schema_version, seed",
    ),
    (
        "rules-not-a-list",
        "schema_version: 1\nrules: {id: r1}\n",
        '#/rules: expected a list, got {"id": "r1"}\n'
        "  fix: write rules as a list: 'rules:' then '- id: ...' entries",
    ),
    (
        "rule-without-id",
        "schema_version: 1\nrules:\n  - reply: {text: hi}\n",
        "#/rules/0: this rule is missing the required key 'id'\n"
        "  fix: give the rule a unique id, e.g. 'id: call-bash'",
    ),
    (
        "bad-rule-id",
        "schema_version: 1\nrules:\n  - id: 'has space'\n    reply: {text: hi}\n",
        '#/rules/0/id: "has space" is not a valid rule id\n'
        "  fix: use letters, digits and . _ : - (starting with a letter or digit)",
    ),
    (
        "duplicate-rule-id",
        "schema_version: 1\nrules:\n  - {id: a, reply: {text: x}}\n  - {id: a, reply: {text: y}}\n",
        "#/rules/1/id: duplicate rule id 'a' (also used by rule 0)\n"
        "  fix: give every rule a unique id",
    ),
    (
        "typo-in-when",
        f"schema_version: 1\n{RULE}    when: {{usr: hi}}\n    reply: {{text: x}}\n",
        "#/rules/0/when/usr: unknown key 'usr'\n"
        "  fix: did you mean 'user'? allowed keys here: agent, any_text, api, described, model, "
        "no_tools, side_request, skill, skill_loaded, system, tool_result, tools, turn, user",
    ),
    (
        "described-as-a-number",
        f"schema_version: 1\n{RULE}    when: {{described: 2}}\n    reply: {{text: x}}\n",
        "#/rules/0/when/described: expected a mapping, got 2\n"
        "  fix: write 'described: {min_overlap: 2}'",
    ),
    (
        "described-without-min-overlap",
        f"schema_version: 1\n{RULE}    when: {{described: {{}}}}\n    reply: {{text: x}}\n",
        "#/rules/0/when/described: this 'described' condition is missing the required key "
        "'min_overlap'\n  fix: say how many words must be shared, e.g. "
        "'described: {min_overlap: 2}'",
    ),
    (
        "described-min-overlap-zero",
        f"schema_version: 1\n{RULE}    when: {{described: {{min_overlap: 0}}}}\n"
        "    reply: {text: x}\n",
        "#/rules/0/when/described/min_overlap: 0 is too small\n  fix: use a value at least 1",
    ),
    (
        "placeholder-without-described",
        f"schema_version: 1\n{RULE}    when: {{turn: 1}}\n"
        "    reply: {tool_calls: [{name: Skill, input: {skill: '{described}'}}]}\n",
        "#/rules/0/reply: {described} names the skill a 'described' condition chose, "
        "but this reply has none\n"
        "  fix: add 'described: {min_overlap: N}' to the rule's 'when', or write the skill's name",
    ),
    (
        "placeholder-in-default",
        "schema_version: 1\ndefault: {text: 'Loading {described}.'}\n",
        "#/default: {described} names the skill a 'described' condition chose, "
        "but this reply has none\n"
        "  fix: add 'described: {min_overlap: N}' to the rule's 'when', or write the skill's name",
    ),
    (
        "typo-in-reply",
        f"schema_version: 1\n{RULE}    reply: {{txt: x}}\n",
        "#/rules/0/reply/txt: unknown key 'txt'\n"
        "  fix: did you mean 'text'? allowed keys here: stop_reason, text, thinking, tool_calls",
    ),
    (
        "no-reply",
        f"schema_version: 1\n{RULE}    when: {{turn: 1}}\n",
        "#/rules/0: rule 'r1' has neither 'reply' nor 'replies'\n"
        "  fix: give the rule either 'reply: {text: ...}' or 'replies: [...]', not both",
    ),
    (
        "reply-and-replies",
        f"schema_version: 1\n{RULE}    reply: {{text: x}}\n    replies: [{{text: y}}]\n",
        "#/rules/0: rule 'r1' has both 'reply' and 'replies'\n"
        "  fix: give the rule either 'reply: {text: ...}' or 'replies: [...]', not both",
    ),
    (
        "pick-without-replies",
        f"schema_version: 1\n{RULE}    reply: {{text: x}}\n    pick: random\n",
        "#/rules/0/pick: 'pick' only applies to 'replies'\n"
        "  fix: remove 'pick', or turn 'reply' into a list under 'replies'",
    ),
    (
        "bad-pick",
        f"schema_version: 1\n{RULE}    replies: [{{text: x}}]\n    pick: shuffle\n",
        '#/rules/0/pick: "shuffle" is not one of the allowed values\n'
        '  fix: use one of "cycle", "random"',
    ),
    (
        "empty-replies",
        f"schema_version: 1\n{RULE}    replies: []\n",
        "#/rules/0/replies: the list is empty\n  fix: give at least one item, or remove the key",
    ),
    (
        "turn-zero",
        f"schema_version: 1\n{RULE}    when: {{turn: 0}}\n    reply: {{text: x}}\n",
        "#/rules/0/when/turn: expected a positive integer or a list of them, got 0\n"
        "  fix: write e.g. 'turn: 1' or 'turn: [2, 3]' (1 is the first assistant response)",
    ),
    (
        "turn-text",
        f"schema_version: 1\n{RULE}    when: {{turn: first}}\n    reply: {{text: x}}\n",
        '#/rules/0/when/turn: expected a positive integer or a list of them, got "first"\n'
        "  fix: write e.g. 'turn: 1' or 'turn: [2, 3]' (1 is the first assistant response)",
    ),
    (
        "tools-not-a-list",
        f"schema_version: 1\n{RULE}    when: {{tools: Bash}}\n    reply: {{text: x}}\n",
        '#/rules/0/when/tools: expected a list, got "Bash"\n'
        "  fix: write tools as a list of names, e.g. 'tools: [Bash]'",
    ),
    (
        "unknown-side-request-kind",
        f"schema_version: 1\n{RULE}    when: {{side_request: titles}}\n    reply: {{text: x}}\n",
        '#/rules/0/when/side_request: expected true, false or a side-request kind, got "titles"\n'
        "  fix: use true or one of quota, title, name, tool_summary, progress_label, recap, "
        "suggestion, compact, route, model_choice, next_speaker, loop_check",
    ),
    (
        "invalid-regex",
        f"schema_version: 1\n{RULE}    when: {{user: '(unclosed'}}\n    reply: {{text: x}}\n",
        "#/rules/0/when/user: invalid regular expression '(unclosed': "
        "missing ) at position 9\n"
        "  fix: escape special characters with a backslash (in YAML double quotes, write \\\\)",
    ),
    (
        "catastrophic-regex",
        f"schema_version: 1\n{RULE}    when: {{system: '(a+)+$'}}\n    reply: {{text: x}}\n",
        "#/rules/0/when/system: pattern '(a+)+$' took longer than 1s to match "
        "(catastrophic backtracking)\n"
        "  fix: remove nested quantifiers such as (a+)+ or (.*)*, or anchor the pattern",
    ),
    (
        "regex-not-a-string",
        f"schema_version: 1\n{RULE}    when: {{user: 42}}\n    reply: {{text: x}}\n",
        "#/rules/0/when/user: expected a string, got 42\n  fix: quote the value in the YAML file",
    ),
    (
        "tool-call-without-name",
        f"schema_version: 1\n{RULE}    reply: {{tool_calls: [{{input: {{}}}}]}}\n",
        "#/rules/0/reply/tool_calls/0: this tool call is missing the required key 'name'\n"
        "  fix: name the tool, e.g. 'name: Bash'",
    ),
    (
        "bad-stop-reason",
        f"schema_version: 1\n{RULE}    reply: {{text: x, stop_reason: done}}\n",
        '#/rules/0/reply/stop_reason: "done" is not one of the allowed values\n'
        '  fix: use one of "end_turn", "tool_use", "max_tokens", "stop_sequence", '
        '"pause_turn", "refusal"',
    ),
    (
        "unsupported-status",
        "schema_version: 1\nfaults: {status: 418}\n",
        "#/faults/status: 418 is not one of the allowed values\n"
        "  fix: use one of 400, 401, 403, 404, 413, 429, 500, 529",
    ),
    (
        "two-failures",
        "schema_version: 1\nfaults: {status: 529, hang: true}\n",
        "#/faults: a fault can inject one failure, got status and hang\n"
        "  fix: keep one of status, malformed, truncated, midstream_error, hang "
        "(put the others on separate rules)",
    ),
    (
        "rate-without-failure",
        "schema_version: 1\nfaults: {latency_ms: 10, rate: 0.5}\n",
        "#/faults/rate: 'rate' has no failure to apply to\n"
        "  fix: add a failure (status, malformed, truncated, midstream_error or hang)",
    ),
    (
        "rate-above-one",
        "schema_version: 1\nfaults: {status: 500, rate: 1.5}\n",
        "#/faults/rate: 1.5 is too large\n  fix: use a value at most 1",
    ),
    (
        "negative-latency",
        "schema_version: 1\nfaults: {latency_ms: -1}\n",
        "#/faults/latency_ms: -1 is too small\n  fix: use a value at least 0",
    ),
    (
        "retry-after-on-500",
        "schema_version: 1\nfaults: {status: 500, retry_after_ms: 5}\n",
        "#/faults/retry_after_ms: 'retry_after_ms' only applies to status 429 and 529\n"
        "  fix: remove retry_after_ms, or use status: 429 or 529",
    ),
    (
        "hang-false",
        "schema_version: 1\nfaults: {hang: false}\n",
        "#/faults/hang: must be true, got false\n  fix: write true or remove the key",
    ),
    (
        "batch-end-unknown",
        "schema_version: 1\nbatches: {end: later}\n",
        '#/batches/end: "later" is not one of the allowed values\n'
        '  fix: use one of "expired", "canceled"',
    ),
    (
        "batch-polls-negative",
        "schema_version: 1\nbatches: {polls: -1}\n",
        "#/batches/polls: -1 is too small\n  fix: use a value at least 0",
    ),
    (
        "batch-result-unknown",
        f"schema_version: 1\n{RULE}    reply: {{text: x}}\n    batch: {{result: lost}}\n",
        '#/rules/0/batch/result: "lost" is not one of the allowed values\n'
        '  fix: use one of "errored", "expired", "canceled"',
    ),
    (
        "batch-status-without-error",
        f"schema_version: 1\n{RULE}    reply: {{text: x}}\n    batch: {{result: expired, status: 500}}\n",
        "#/rules/0/batch/status: 'status' only applies to result: errored\n"
        "  fix: remove 'status', or make the result errored",
    ),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [(text, expected) for _, text, expected in BAD_SCRIPTS],
    ids=[name for name, _, _ in BAD_SCRIPTS],
)
def test_bad_script_error_names_file_pointer_and_fix(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "model.yaml"
    path.write_text(text)

    with pytest.raises(ModelScriptError) as caught:
        ModelScript.load(path)

    assert str(caught.value) == f"{path}{expected}"
