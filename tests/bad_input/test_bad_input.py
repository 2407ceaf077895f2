"""The bad-input corpus: every file is refused with exit 2, the file and the place named, a fix.

Each file below is small and wrong in one way. ``skilltest validate FILE`` refuses it, and so
does running it (``pressure`` or ``scenarios``, which fail before any model is called): exit 2, a
message that names the file and the place in it (``#/json/pointer`` or ``:line:column``), a
``fix:`` line, no traceback. A suite that points to a broken model script is refused at the
script's place. ``skills/demo/SKILL.md`` is the skill the suites name, found beside them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.limits import MAX_YAML_BYTES

CORPUS = Path(__file__).resolve().parent

EXPECTED: list[tuple[str, str]] = [
    (
        "model-scripts/m-alias-bomb.yaml",
        "m-alias-bomb.yaml:6:8: aliases repeat more than 10,000 values (*d alone stands for 7,381)",
    ),
    (
        "model-scripts/m-deep-tool-input.yaml",
        "m-deep-tool-input.yaml:5:254: nested deeper than 64 levels",
    ),
    (
        "model-scripts/m-duplicate-key.yaml",
        "m-duplicate-key.yaml:4:3: duplicate key 'text' (first at line 3)",
    ),
    (
        "model-scripts/m-duplicate-rule-id.yaml",
        "m-duplicate-rule-id.yaml#/rules/1/id: duplicate rule id 'one' (also used by rule 0)",
    ),
    (
        "model-scripts/m-invalid-regex.yaml",
        "m-invalid-regex.yaml#/rules/0/when/user: invalid regular expression '(abc': missing ) at position 4",
    ),
    (
        "model-scripts/m-no-schema-version.yaml",
        "m-no-schema-version.yaml#/: the script is missing the required key 'schema_version'",
    ),
    (
        "model-scripts/m-non-utf8.yaml",
        "m-non-utf8.yaml:2:20: not UTF-8: byte 0xef cannot be decoded",
    ),
    (
        "model-scripts/m-pick-without-replies.yaml",
        "m-pick-without-replies.yaml#/rules/0/pick: 'pick' only applies to 'replies'",
    ),
    (
        "model-scripts/m-rate-nan.yaml",
        "m-rate-nan.yaml#/faults/rate: nan is not a number a threshold, weight or limit can be",
    ),
    (
        "model-scripts/m-rate-without-failure.yaml",
        "m-rate-without-failure.yaml#/faults/rate: 'rate' has no failure to apply to",
    ),
    (
        "model-scripts/m-reply-and-replies.yaml",
        "m-reply-and-replies.yaml#/rules/0: rule 'one' has both 'reply' and 'replies'",
    ),
    (
        "model-scripts/m-reply-unknown-key.yaml",
        "m-reply-unknown-key.yaml#/rules/0/reply/txt: unknown key 'txt'",
    ),
    (
        "model-scripts/m-retry-after-on-400.yaml",
        "m-retry-after-on-400.yaml#/faults/retry_after_ms: 'retry_after_ms' only applies to status 429 and 529",
    ),
    (
        "model-scripts/m-rule-without-id.yaml",
        "m-rule-without-id.yaml#/rules/0: this rule is missing the required key 'id'",
    ),
    (
        "model-scripts/m-rule-without-reply.yaml",
        "m-rule-without-reply.yaml#/rules/0: rule 'one' has neither 'reply' nor 'replies'",
    ),
    (
        "model-scripts/m-schema-version-2.yaml",
        "m-schema-version-2.yaml#/schema_version: must be 1, got 2",
    ),
    (
        "model-scripts/m-seed-string.yaml",
        'm-seed-string.yaml#/seed: expected an integer, got "lucky"',
    ),
    (
        "model-scripts/m-stop-reason-unknown.yaml",
        'm-stop-reason-unknown.yaml#/default/stop_reason: "tired" is not one of the allowed values',
    ),
    (
        "model-scripts/m-two-failures.yaml",
        "m-two-failures.yaml#/faults: a fault can inject one failure, got status and hang",
    ),
    ("model-scripts/m-unknown-top-key.yaml", "m-unknown-top-key.yaml#/rulez: unknown key 'rulez'"),
    (
        "model-scripts/m-yaml-syntax.yaml",
        "m-yaml-syntax.yaml:5:1: YAML syntax error: found unexpected end of stream",
    ),
    (
        "pressure/p-alias-bomb.yaml",
        "p-alias-bomb.yaml:5:8: aliases repeat more than 10,000 values (*d alone stands for 7,381)",
    ),
    (
        "pressure/p-bad-flag.yaml",
        "p-bad-flag.yaml#/scenarios/0/pattern_flags/0: 'LOUD' is not valid here: 'LOUD' is not one of ['IGNORECASE', 'MULTILINE', 'DOTALL', 'VERBOSE', 'ignorecase', 'multiline', 'dotall', 'verbose']",
    ),
    (
        "pressure/p-catastrophic-anti-pattern.yaml",
        "p-catastrophic-anti-pattern.yaml#/scenarios/0/with_skill/anti_patterns/0: pattern '(a|aa)+$' took longer than 1s to match (catastrophic backtracking)",
    ),
    (
        "pressure/p-catastrophic-regex.yaml",
        "p-catastrophic-regex.yaml#/scenarios/0/with_skill/required_patterns/0: pattern '(a+)+$' took longer than 1s to match (catastrophic backtracking)",
    ),
    (
        "pressure/p-comments-only.yaml",
        "p-comments-only.yaml#: the file is empty (or holds only comments)",
    ),
    ("pressure/p-deep-nesting.yaml", "p-deep-nesting.yaml:5:72: nested deeper than 64 levels"),
    (
        "pressure/p-duplicate-id.yaml",
        "p-duplicate-id.yaml#/scenarios/1/id: duplicate scenario id 'one' (first used at /scenarios/0)",
    ),
    (
        "pressure/p-duplicate-key-prompt.yaml",
        "p-duplicate-key-prompt.yaml:5:5: duplicate key 'prompt' (first at line 4)",
    ),
    (
        "pressure/p-duplicate-key-top.yaml",
        "p-duplicate-key-top.yaml:3:1: duplicate key 'skill' (first at line 1)",
    ),
    (
        "pressure/p-empty-prompt.yaml",
        "p-empty-prompt.yaml#/scenarios/0/prompt: '' should be non-empty",
    ),
    ("pressure/p-empty.yaml", "p-empty.yaml#: the file is empty (or holds only comments)"),
    (
        "pressure/p-flags-not-a-list.yaml",
        "p-flags-not-a-list.yaml#/pattern_flags: 'IGNORECASE' is not valid here: 'IGNORECASE' is not of type 'array'",
    ),
    (
        "pressure/p-id-with-space.yaml",
        "p-id-with-space.yaml#/scenarios/0/id: 'one two' does not match '^[A-Za-z0-9][A-Za-z0-9._-]*$'",
    ),
    (
        "pressure/p-invalid-regex.yaml",
        "p-invalid-regex.yaml#/scenarios/0/with_skill/required_patterns/0: invalid regular expression '(abc': missing ) at position 4",
    ),
    (
        "pressure/p-list-not-mapping.yaml",
        "p-list-not-mapping.yaml#: [{'id': 'one', 'prompt': 'p', 'with_skill': {'required_patterns': ['a']}}] is not valid here: [{'id': 'one', 'prompt': 'p', 'with_skill': {'required_patterns': ['a']}}] is not of type 'object'",
    ),
    (
        "pressure/p-malformed-model-script.yaml",
        "m-reply-unknown-key.yaml#/rules/0/reply/txt: unknown key 'txt'",
    ),
    (
        "pressure/p-match-timeout-zero.yaml",
        "p-match-timeout-zero.yaml#/match_timeout_s: 0 is less than or equal to the minimum of 0",
    ),
    (
        "pressure/p-max-tokens-negative.yaml",
        "p-max-tokens-negative.yaml#/max_tokens: -5 is less than the minimum of 1",
    ),
    ("pressure/p-missing-id.yaml", "p-missing-id.yaml#/scenarios/0: 'id' is a required property"),
    (
        "pressure/p-missing-model-script.yaml",
        "p-missing-model-script.yaml#/model_script: model script 'nowhere.yaml' not found",
    ),
    (
        "pressure/p-missing-prompt.yaml",
        "p-missing-prompt.yaml#/scenarios/0: 'prompt' is a required property",
    ),
    (
        "pressure/p-missing-skill-file.yaml",
        "p-missing-skill-file.yaml#/skill_file: skill 'nope' not found; looked at:",
    ),
    (
        "pressure/p-missing-skill.yaml",
        "p-missing-skill.yaml#/skill: skill 'nope' not found; looked at:",
    ),
    (
        "pressure/p-missing-with-skill.yaml",
        "p-missing-with-skill.yaml#/scenarios/0: 'with_skill' is a required property",
    ),
    (
        "pressure/p-model-script-number.yaml",
        "p-model-script-number.yaml#/model_script: 3 is not valid here: 3 is not of type 'string'",
    ),
    (
        "pressure/p-no-pattern.yaml",
        "p-no-pattern.yaml#/scenarios/0/with_skill: not valid here: expected a mapping with `required_patterns` and/or `anti_patterns`, at least one pattern in all",
    ),
    ("pressure/p-no-scenarios.yaml", "p-no-scenarios.yaml#: 'scenarios' is a required property"),
    ("pressure/p-no-skill.yaml", "p-no-skill.yaml#: the suite names no skill"),
    ("pressure/p-non-utf8.yaml", "p-non-utf8.yaml:4:41: not UTF-8: byte 0xe9 cannot be decoded"),
    (
        "pressure/p-pattern-number.yaml",
        "p-pattern-number.yaml#/scenarios/0/with_skill/required_patterns/0: 42 is not valid here: 42 is not of type 'string'",
    ),
    (
        "pressure/p-patterns-string.yaml",
        "p-patterns-string.yaml#/scenarios/0/with_skill/required_patterns: 'aggregat' is not valid here: 'aggregat' is not of type 'array'",
    ),
    (
        "pressure/p-prompt-number.yaml",
        "p-prompt-number.yaml#/scenarios/0/prompt: 42 is not valid here: 42 is not of type 'string'",
    ),
    (
        "pressure/p-python-tag.yaml",
        "p-python-tag.yaml:4:13: YAML value not allowed: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'",
    ),
    (
        "pressure/p-recursive-alias.yaml",
        "p-recursive-alias.yaml:5:23: the alias *t repeats a value that contains it (endless)",
    ),
    (
        "pressure/p-repetitions-above-bound.yaml",
        "p-repetitions-above-bound.yaml#/repetitions: 1001 is greater than the maximum of 1000",
    ),
    (
        "pressure/p-repetitions-huge-in-scenario.yaml",
        "p-repetitions-huge-in-scenario.yaml#/scenarios/0/repetitions: 1000000000000 is greater than the maximum of 1000",
    ),
    (
        "pressure/p-repetitions-string.yaml",
        "p-repetitions-string.yaml#/repetitions: '3' is not valid here: '3' is not of type 'integer'",
    ),
    (
        "pressure/p-repetitions-zero.yaml",
        "p-repetitions-zero.yaml#/repetitions: 0 is less than the minimum of 1",
    ),
    (
        "pressure/p-scalar-document.yaml",
        "p-scalar-document.yaml#: 'just a sentence' is not valid here: 'just a sentence' is not of type 'object'",
    ),
    (
        "pressure/p-scenarios-empty.yaml",
        "p-scenarios-empty.yaml#/scenarios: [] should be non-empty",
    ),
    (
        "pressure/p-scenarios-mapping.yaml",
        "p-scenarios-mapping.yaml#/scenarios: {'one': {'prompt': 'p', 'with_skill': {'required_patterns': ['a']}}} is not valid here: {'one': {'prompt': 'p', 'with_skill': {'required_patterns': ['a']}}} is not of type 'array'",
    ),
    (
        "pressure/p-schema-version-2.yaml",
        "p-schema-version-2.yaml#/schema_version: 2 is not valid here: 1 was expected",
    ),
    ("pressure/p-skill-empty.yaml", "p-skill-empty.yaml#/skill: '' should be non-empty"),
    (
        "pressure/p-skip-number.yaml",
        "p-skip-number.yaml#/scenarios/0/skip: 3 is not valid here: 3 is not of type 'boolean', 'string'",
    ),
    (
        "pressure/p-temperature-inf.yaml",
        "p-temperature-inf.yaml#/scenarios/0/temperature: inf is not a number a threshold, weight or limit can be",
    ),
    (
        "pressure/p-threshold-above-one.yaml",
        "p-threshold-above-one.yaml#/threshold: 1.5 is greater than the maximum of 1",
    ),
    (
        "pressure/p-threshold-nan.yaml",
        "p-threshold-nan.yaml#/threshold: nan is not a number a threshold, weight or limit can be",
    ),
    (
        "pressure/p-unknown-scenario-key.yaml",
        "p-unknown-scenario-key.yaml#/scenarios/0: Additional properties are not allowed ('promt' was unexpected; did you mean 'prompt'?)",
    ),
    (
        "pressure/p-unknown-top-key.yaml",
        "p-unknown-top-key.yaml#: Additional properties are not allowed ('repetition' was unexpected; did you mean 'repetitions'?)",
    ),
    (
        "pressure/p-unknown-with-skill-key.yaml",
        "p-unknown-with-skill-key.yaml#/scenarios/0/with_skill: Additional properties are not allowed ('required_pattern' was unexpected; did you mean 'required_patterns'?)",
    ),
    ("pressure/p-utf16.yaml", "p-utf16.yaml:1:1: not UTF-8: byte 0xff cannot be decoded"),
    (
        "pressure/p-without-skill-list.yaml",
        "p-without-skill-list.yaml#/scenarios/0/without_skill: ['grep'] is not valid here: ['grep'] is not of type 'object', 'null'",
    ),
    (
        "pressure/p-yaml-colon-in-pattern.yaml",
        "p-yaml-colon-in-pattern.yaml:7:21: YAML syntax error: mapping values are not allowed here",
    ),
    (
        "pressure/p-yaml-tab-indent.yaml",
        "p-yaml-tab-indent.yaml:3:1: YAML syntax error: found character '\\t' that cannot start any token",
    ),
    (
        "pressure/p-yaml-two-documents.yaml",
        "p-yaml-two-documents.yaml:6:1: YAML syntax error: expected a single document in the stream, but found another document",
    ),
    (
        "pressure/p-yaml-unclosed-flow.yaml",
        "p-yaml-unclosed-flow.yaml:5:15: YAML syntax error: expected ',' or ']', but got ':'",
    ),
    (
        "pressure/p-yaml-unquoted-star.yaml",
        "p-yaml-unquoted-star.yaml:5:39: YAML syntax error: expected alphabetic or numeric character, but found '.'",
    ),
    (
        "scenarios/s-alias-bomb.yaml",
        "s-alias-bomb.yaml:5:8: aliases repeat more than 10,000 values (*d alone stands for 7,381)",
    ),
    (
        "scenarios/s-allowed-tools-string.yaml",
        "s-allowed-tools-string.yaml#/scenarios/0/config/allowed_tools: 'Bash' is not valid here: 'Bash' is not of type 'array'",
    ),
    (
        "scenarios/s-bad-flag.yaml",
        "s-bad-flag.yaml#/pattern_flags/0: 'UNICODE' is not valid here: 'UNICODE' is not one of ['IGNORECASE', 'MULTILINE', 'DOTALL', 'VERBOSE', 'ignorecase', 'multiline', 'dotall', 'verbose']",
    ),
    (
        "scenarios/s-catastrophic-regex.yaml",
        "s-catastrophic-regex.yaml#/scenarios/0/expected/anti_patterns/0: pattern '(.*a){20}$' took longer than 1s to match (catastrophic backtracking)",
    ),
    (
        "scenarios/s-comparison-string.yaml",
        "s-comparison-string.yaml#/comparison: 'no' is not valid here: 'no' is not of type 'boolean'",
    ),
    ("scenarios/s-deep-nesting.yaml", "s-deep-nesting.yaml:67:129: nested deeper than 64 levels"),
    (
        "scenarios/s-duplicate-id.yaml",
        "s-duplicate-id.yaml#/scenarios/1/id: duplicate scenario id 'one' (first used at /scenarios/0)",
    ),
    (
        "scenarios/s-duplicate-key-expected.yaml",
        "s-duplicate-key-expected.yaml:6:5: duplicate key 'expected' (first at line 5)",
    ),
    ("scenarios/s-empty.yaml", "s-empty.yaml#: the file is empty (or holds only comments)"),
    (
        "scenarios/s-invalid-regex.yaml",
        "s-invalid-regex.yaml#/scenarios/0/expected/required_patterns/0: invalid regular expression 'lgtm[': unterminated character set at position 5",
    ),
    (
        "scenarios/s-list-not-mapping.yaml",
        "s-list-not-mapping.yaml#: [{'id': 'one', 'prompt': 'p'}] is not valid here: [{'id': 'one', 'prompt': 'p'}] is not of type 'object'",
    ),
    (
        "scenarios/s-malformed-model-script.yaml",
        "m-reply-and-replies.yaml#/rules/0: rule 'one' has both 'reply' and 'replies'",
    ),
    (
        "scenarios/s-max-turns-zero.yaml",
        "s-max-turns-zero.yaml#/config/max_turns: 0 is less than the minimum of 1",
    ),
    (
        "scenarios/s-min-score-nan.yaml",
        "s-min-score-nan.yaml#/min_score: nan is not a number a threshold, weight or limit can be",
    ),
    (
        "scenarios/s-missing-model-script.yaml",
        "s-missing-model-script.yaml#/model_script: model script 'nowhere.yaml' not found",
    ),
    (
        "scenarios/s-missing-prompt.yaml",
        "s-missing-prompt.yaml#/scenarios/0: 'prompt' is a required property",
    ),
    (
        "scenarios/s-missing-skill-file.yaml",
        "s-missing-skill-file.yaml#/skill_file: skill 'nope' not found; looked at:",
    ),
    (
        "scenarios/s-missing-skill.yaml",
        "s-missing-skill.yaml#/skill: skill 'nope' not found; looked at:",
    ),
    (
        "scenarios/s-missing-workspace.yaml",
        "s-missing-workspace.yaml#/scenarios/0/workspace: workspace folder ",
    ),
    (
        "scenarios/s-no-rubric.yaml",
        "s-no-rubric.yaml#/scenarios/0/expected: the scenario defines no rubric component, so no run could ever be scored",
    ),
    ("scenarios/s-no-skill.yaml", "s-no-skill.yaml#/scenarios/0: no skill named for this scenario"),
    ("scenarios/s-non-utf8.yaml", "s-non-utf8.yaml:4:41: not UTF-8: byte 0x96 cannot be decoded"),
    (
        "scenarios/s-ordering-one-tool.yaml",
        "s-ordering-one-tool.yaml#/scenarios/0/expected/tool_ordering/0: ['Bash'] is too short",
    ),
    (
        "scenarios/s-repetitions-above-bound.yaml",
        "s-repetitions-above-bound.yaml#/scenarios/0/repetitions: 100000 is greater than the maximum of 1000",
    ),
    (
        "scenarios/s-scenario-skill-file-missing.yaml",
        "s-scenario-skill-file-missing.yaml#/scenarios/0/skill_file: skill 'demo' not found; looked at:",
    ),
    (
        "scenarios/s-timeout-too-small.yaml",
        "s-timeout-too-small.yaml#/scenarios/0/config/timeout_ms: 10 is less than the minimum of 1000",
    ),
    (
        "scenarios/s-turns-string.yaml",
        "s-turns-string.yaml#/scenarios/0/turns: 'Now check the latency.' is not valid here: 'Now check the latency.' is not of type 'array'",
    ),
    (
        "scenarios/s-unknown-expected-key.yaml",
        "s-unknown-expected-key.yaml#/scenarios/0/expected: Additional properties are not allowed ('required_tool' was unexpected; did you mean 'required_tools'?)",
    ),
    (
        "scenarios/s-weights-negative.yaml",
        "s-weights-negative.yaml#/scenarios/0/weights/required_tools: -1 is less than the minimum of 0",
    ),
    (
        "scenarios/s-yaml-syntax.yaml",
        "s-yaml-syntax.yaml:5:37: YAML syntax error: expected ',' or ']', but got '}'",
    ),
]
"""(file, the start of its error: the file's name, the place, the message)."""


def commands(name: str, claude: Path) -> list[list[str]]:
    """``validate``, and the command that runs the file when it is a suite."""
    runs = [["validate", name]]
    if name.startswith("pressure/"):
        runs.append(["pressure", name])
    elif name.startswith("scenarios/"):
        runs.append(["scenarios", name, "--claude", str(claude)])
    return runs


def test_the_corpus_is_every_file_and_large_enough():
    files = sorted(
        str(path.relative_to(CORPUS))
        for path in CORPUS.rglob("*.yaml")
        if "skills" not in path.relative_to(CORPUS).parts
    )
    assert files == sorted(name for name, _ in EXPECTED)
    assert len(files) >= 60
    for _, expected in EXPECTED:  # each names a file and a place in it
        assert re.match(r"[\w.-]+\.yaml(#|:\d+:\d+: )", expected), expected


@pytest.mark.parametrize(("name", "expected"), EXPECTED, ids=[n for n, _ in EXPECTED])
def test_bad_input_exits_2_naming_file_place_and_fix(
    name, expected, fake_claude, monkeypatch, capsys
):
    monkeypatch.chdir(CORPUS)
    for argv in commands(name, fake_claude):
        code = main(argv)
        out, err = capsys.readouterr()
        shown = out + err
        assert code == 2, (argv, shown)
        assert "Traceback" not in shown
        assert re.search(r"^skilltest: error: (\S*/)?" + re.escape(expected), shown, re.M), (
            argv,
            shown,
        )
        assert "\n  fix: " in shown, (argv, shown)


def test_a_suite_over_the_size_limit_is_refused_with_the_limit(tmp_path, monkeypatch, capsys):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("demo")
    suite = tmp_path / "huge.yaml"
    scenario = "  - {id: s%d, prompt: p, with_skill: {required_patterns: [a]}}\n"
    lines = ["skill: demo\nscenarios:\n"]
    size, index = len(lines[0]), 0
    while size <= MAX_YAML_BYTES:
        lines.append(scenario % index)
        size += len(lines[-1])
        index += 1
    suite.write_text("".join(lines))
    monkeypatch.chdir(tmp_path)
    for argv in (["validate", "huge.yaml"], ["pressure", "huge.yaml"]):
        assert main(argv) == 2
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        assert (
            "skilltest: error: huge.yaml: the file is 2.0 MiB, more than the 2 MiB a suite or "
            "model script may be\n  fix: split it into several files (a folder of suites runs as "
            "one)\n"
        ) in out + err
