"""Eval case folders read as Claude Code's plugin eval reads them: case.yaml, prompt.md and
graders/*.md combined, and every mistake named with its file, its place and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.errors import InputError
from skilltest.evalcases import find_cases, read_case

from ..projects import write_files

EXAMPLE = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability" / "evals"


HEAD = 'schema_version: "1.0"\nname: one\n'
CASE = HEAD + 'execution: {prompt: "Do it."}\n'
GRADER = "graders:\n  - {name: g, type: regex, pattern: x}\n"


def test_the_example_cases_read_as_written():
    cases = [read_case(folder) for folder in find_cases(EXAMPLE)]
    assert [case.name for case in cases] == ["error-spike", "no-action", "slow-checkout"]
    spike, no_action, slow = cases
    # graders/*.md in file-name order, each named after its file, its body the pattern.
    assert [g.name for g in spike.graders][:3] == [
        "answer-names-service",
        "asked-the-server",
        "counts-first",
    ]
    counts = spike.graders[2]
    assert (counts.type, counts.fields) == (
        "regex",
        {"target": "trace", "flags": "i", "pattern": "COUNT_OVER_TIME\\("},
    )
    assert spike.execution.allowed_tools == ("Write",) and spike.runs == 2
    assert spike.graders[-1].weight == 2.0
    # case.yaml and prompt.md together: the markdown wins, graders come from case.yaml.
    assert no_action.execution.max_turns == 3 and no_action.runs == 1
    assert no_action.execution.prompt == "In one sentence: what is LogQL? Do not run anything."
    assert no_action.graders[0].arm == "both"
    assert slow.context.scaffold_script == (EXAMPLE / "slow-checkout" / "scaffold.sh").resolve()
    assert slow.execution.timeout_seconds == 180 and slow.tags == ("latency",)


def test_a_grader_file_without_frontmatter_is_not_a_grader(tmp_path):
    case = write_files(
        tmp_path / "c",
        {
            "prompt.md": "Do it.",
            "graders/a.md": "---\ntype: llm\n---\nGood.",
            "graders/NOTES.md": "just notes",
        },
    )
    assert [g.name for g in read_case(case).graders] == ["a"]
    assert read_case(case).graders[0].fields == {"criteria": "Good."}


def test_markdown_adds_its_disallowed_tools_and_graders_to_case_yaml(tmp_path):
    case = write_files(
        tmp_path / "c",
        {
            "case.yaml": HEAD + "execution: {prompt: x, disallowed_tools: [Bash]}\n" + GRADER,
            "prompt.md": "---\ndisallowed_tools: [Write]\nmodel: haiku\n---\nThe prompt.",
            "graders/b.md": "---\ntype: tool_used\ntool: Read\n---\n",
        },
    )
    found = read_case(case)
    assert found.execution.disallowed_tools == ("Bash", "Write")
    assert (found.execution.model, found.execution.prompt) == ("haiku", "The prompt.")
    assert [g.name for g in found.graders] == ["g", "b"]


@pytest.mark.parametrize(
    ("files", "where", "message"),
    [
        ({"case.yaml": "- a list"}, "case.yaml#", "case.yaml must be a YAML object"),
        (
            {"case.yaml": "name: x\n"},
            "case.yaml#/schema_version",
            'missing required field schema_version (e.g. "1.0")',
        ),
        (
            {"case.yaml": 'schema_version: "2.0"\n'},
            "case.yaml#/schema_version",
            'schema_version "2.0" requires a newer Claude Code (this binary supports up to 1.x)',
        ),
        (
            {"case.yaml": 'schema_version: "v1"\n'},
            "case.yaml#/schema_version",
            'schema_version "v1" is not a valid version string',
        ),
        (
            {"case.yaml": CASE + "runs: 51\n" + GRADER},
            "case.yaml#/runs",
            "51 is greater than the maximum of 50",
        ),
        (
            {"case.yaml": CASE + "graders:\n  - {name: g, type: regex, pattern: x, flags: q}\n"},
            "case.yaml#/graders/0/flags",
            "'q' does not match",
        ),
        (
            {"case.yaml": CASE + "graders:\n  - {name: g, type: regex, pattern: x, match: some}\n"},
            "case.yaml#/graders/0/match",
            "not valid here: expected contains, not_contains or count:N",
        ),
        (
            {"case.yaml": CASE + "graders:\n  - {name: g, type: llm, criteria: x, pattern: y}\n"},
            "case.yaml#/graders/0",
            "Additional properties are not allowed ('pattern' was unexpected)",
        ),
        (
            {"case.yaml": CASE + "graders:\n  - {name: g, type: grep}\n"},
            "case.yaml#/graders/0/type",
            "'grep' is not valid here",
        ),
        ({"case.yaml": CASE + "graders: []\n"}, "case.yaml#/graders", "[] should be non-empty"),
        (
            {
                "case.yaml": CASE
                + "graders:\n  - {name: g, type: llm, criteria: x}\n  - {name: g, type: llm, criteria: y}\n"
            },
            "case.yaml#/graders/1",
            'duplicate grader name "g"',
        ),
        (
            {"case.yaml": 'schema_version: "1.0"\n' + GRADER},
            "case.yaml",
            "execution.prompt is required (a prompt.md body, or execution.prompt in case.yaml)",
        ),
        (
            {"case.yaml": 'schema_version: "1.0"\ncontext: {history_file: h.jsonl}\n' + GRADER},
            "case.yaml",
            "context.history_file requires execution.prompt",
        ),
        (
            {"case.yaml": HEAD + "execution: {prompt: x, env: {HOME: /}}\n" + GRADER},
            "case.yaml",
            'execution.env key "HOME" is not allowed — only EVAL_* keys can be set from case.yaml',
        ),
        (
            {"case.yaml": CASE + "context: {scaffold_script: ../up.sh}\n" + GRADER},
            "case.yaml (context.scaffold_script)",
            'case "one": path "../up.sh" escapes the case directory',
        ),
        (
            {"case.yaml": CASE + "context: {scaffold_script: setup.sh}\n" + GRADER},
            "case.yaml (context.scaffold_script)",
            'case "one": path "setup.sh" does not exist',
        ),
        (
            {"case.yaml": CASE + "graders:\n  - {name: g, type: regex, pattern: '(x'}\n"},
            "case.yaml#/graders/0 (pattern)",
            "invalid regular expression '(x'",
        ),
        (
            {
                "case.yaml": CASE
                + "graders:\n  - {name: g, type: tool_used, tool: Bash, min: 3, max: 1}\n"
            },
            "case.yaml#/graders/0",
            "max 1 is below min 3",
        ),
        (
            {
                "case.yaml": CASE
                + "graders:\n  - {name: g, type: baseline, baseline_file: b.jsonl, criteria: x}\n"
            },
            "case.yaml#/graders/0 (baseline_file)",
            'case "g": path "b.jsonl" does not exist',
        ),
        (
            {"prompt.md": "---\nmax_turn: 3\n---\nDo it."},
            "prompt.md:2",
            'unknown frontmatter key "max_turn" (expected one of: schema_version, name',
        ),
        (
            {"prompt.md": "---\nmax_turns: 300\n---\nDo it."},
            "prompt.md#/max_turns",
            "300 is greater than the maximum of 200",
        ),
        (
            {"prompt.md": "---\nmax_turns: 3\nDo it."},
            "prompt.md:1",
            'unterminated frontmatter (opening "---" with no closing "---")',
        ),
        (
            {"prompt.md": "---\n- a\n---\nDo it."},
            "prompt.md:2",
            "frontmatter must be a YAML object",
        ),
        ({"prompt.md": "---\nmax_turns: [\n---\nDo it."}, "prompt.md:2:13", "YAML syntax error"),
        (
            {"prompt.md": "Do it.", "graders/g.md": "---\nweight: 1\n---\nx"},
            "graders/g.md:1",
            'frontmatter must include "type:" (regex | tool_order | tool_used | file_exists | llm | baseline)',
        ),
        (
            {"prompt.md": "Do it.", "graders/g.md": "---\ntype: regex\n---\n"},
            "graders/g.md#",
            "'pattern' is a required property",
        ),
        ({"prompt.md": "Do it."}, "prompt.md", "the case has no grader (at least one is required)"),
        (
            {
                "prompt.md": "TODO: describe what the agent should do",
                "graders/g.md": "---\ntype: llm\n---\nok",
            },
            "prompt.md",
            "the prompt is still the blank `init` template",
        ),
        (
            {
                "prompt.md": "Do it.",
                "graders/g.md": "---\ntype: llm\n---\nTODO: describe what a successful response looks like",
            },
            "graders/g.md",
            'grader "g" is still the blank `init` template',
        ),
    ],
)
def test_a_bad_case_names_its_file_place_and_fix(tmp_path, files, where, message):
    case = write_files(tmp_path / "c", files)
    with pytest.raises(InputError) as caught:
        read_case(case)
    text = str(caught.value)
    assert text.startswith(f"{case / where}: ") or text.startswith(f"{case}/{where}: "), text
    assert message in text
    assert "\n  fix: " in text


def test_cases_are_found_below_an_eval_folder_but_not_in_mocks_or_results(tmp_path):
    write_files(
        tmp_path,
        {
            "a/case.yaml": CASE + GRADER,
            "group/b/prompt.md": "x",
            "mocks/s/prompt.md": "x",
            "results/r/case.yaml": "x",
            ".hidden/case.yaml": "x",
        },
    )
    assert find_cases(tmp_path) == [tmp_path / "a", tmp_path / "group" / "b"]
