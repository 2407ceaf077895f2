"""microsoft/waza's ``eval.yaml`` runs through ``skilltest scenarios``: its task files, its
suite-wide and task graders as checks (text, file), the tasks' input files from ``fixtures/``
in both arms' working directory, on the real claude CLI against the emulator; a grader
skilltest has no check for (waza's own showcase has a ``code`` grader) is refused by name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from skilltest.scenarios.suite import load_scenario_suite

from ..layers import run_layer

SHOWCASE = Path(__file__).resolve().parents[1] / "fixtures" / "waza" / "grader-showcase"

# With the skill the stand-in names the web languages and writes the README from config.json
# (which it reads first: the input file is there); without it, it names others and leaves a TODO.
SCRIPT = r"""
schema_version: 1
model: claude-test-emulated
rules:
  - id: languages-with-skill
    when: {skill: general-coding-assistant, user: "programming languages"}
    reply: {text: "For web development: Python, JavaScript and TypeScript."}
  - id: languages-without
    when: {user: "programming languages"}
    reply: {text: "Ruby, PHP and Go."}
  - id: write-with-skill
    when: {skill: general-coding-assistant, tool_result: '"app_name": "grader-showcase"'}
    reply:
      text: "Writing it."
      tool_calls: [{name: Bash, input: {command: "printf '# Grader Showcase\\n\\nA demo of graders.\\n\\n## Installation\\n\\npip install .\\n' > README.md"}}]
  - id: write-without
    when: {tool_result: '"app_name": "grader-showcase"'}
    reply:
      text: "Writing it."
      tool_calls: [{name: Bash, input: {command: "printf '# Project\\n\\nTODO\\n' > README.md"}}]
  - id: read-config
    when: {user: "README", turn: 1}
    reply: {text: "Reading.", tool_calls: [{name: Bash, input: {command: "cat config.json"}}]}
default:
  text: "Done."
"""


@pytest.fixture
def showcase(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    shutil.copytree(SHOWCASE, tmp_path / "evals")
    (tmp_path / "script.yaml").write_text(SCRIPT)
    return tmp_path


def checks_of(results: dict, scenario: str, arm: str) -> dict[str, bool]:
    [found] = [s for s in results["scenarios"] if s["id"] == scenario]
    [run] = [run for run in found["runs"] if run["arm"] == arm]
    return {check["name"]: check["passed"] for check in run["checks"]}


@pytest.mark.cli
def test_the_waza_eval_runs_its_tasks_with_their_graders(showcase, claude_bin, monkeypatch, capsys):
    monkeypatch.chdir(showcase)
    code = run_layer(
        "scenarios", "evals/eval-text-file.yaml", showcase,
        "--claude", claude_bin, "--script", "script.yaml", "-j", "2",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err  # one trial per arm decides nothing
    assert (
        "evals/eval-text-file.yaml: read as a waza eval.yaml (scenario ids are the tasks' ids, "
        "each grader's patterns, files and rubric a check)\n"
    ) in captured.err
    results = read_results(showcase / "results.json", "scenarios")
    assert [s["id"] for s in results["scenarios"]] == ["regex-demo-001", "file-demo-001"]
    web = {f"no_critical_errors {n}": True for n in (1, 2, 3)}
    assert checks_of(results, "regex-demo-001", "with_skill") == {
        **web,
        "language_patterns 1": True,
        "language_patterns 2": True,
        "language_patterns 3": True,
        "language_patterns 4": True,
        "expected output_contains 'Python'": True,
        "expected output_contains 'JavaScript'": True,
    }
    assert checks_of(results, "regex-demo-001", "without_skill") == {
        **web,
        "language_patterns 1": True,
        "language_patterns 2": False,  # no word of the web
        "language_patterns 3": True,
        "language_patterns 4": True,
        "expected output_contains 'Python'": False,
        "expected output_contains 'JavaScript'": False,
    }
    # The file grader reads what the run left; config.json was in the working directory.
    readme = {f"readme_validation {n}": True for n in range(1, 6)}
    assert checks_of(results, "file-demo-001", "with_skill") == {**web, **readme}
    assert checks_of(results, "file-demo-001", "without_skill") == {
        **web,
        **readme,
        "readme_validation 3": False,  # no "Grader Showcase" title
        "readme_validation 4": False,  # no Installation section
        "readme_validation 5": False,  # a TODO
    }


def test_validate_names_the_format_and_a_code_grader_is_refused_by_name(
    showcase, monkeypatch, capsys
):
    monkeypatch.chdir(showcase)
    assert main(["validate", "evals/eval-text-file.yaml"]) == 0
    assert capsys.readouterr().out == (
        "ok   evals/eval-text-file.yaml (scenarios: waza eval.yaml)\n\n1 file(s) valid\n"
    )
    assert main(["scenarios", "evals/eval.yaml"]) == 2
    assert capsys.readouterr().err == (
        "skilltest: error: evals/eval.yaml#/graders/0/type: grader 'has_output' is of type "
        "'code': its assertions are the eval's own Python, which skilltest runs only when told "
        "to\n"
        "  fix: pass --allow-code-graders to run them (each after the run, in its working "
        "directory, in its own process, with a time limit), or rewrite the grader as a text, "
        "file, llm or action_sequence grader\n"
    )
    assert main(["validate", "--allow-code-graders", "evals/eval.yaml"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize(
    ("grader", "message"),
    [
        (
            "{type: script, name: custom_logic, config: {script: graders/g.py}}",
            "#/graders/0/type: grader 'custom_logic' is of type 'script': it would run a program "
            "of the eval's own, which skilltest does not run",
        ),
        (
            "{type: code, name: js, config: {language: javascript, assertions: ['output']}}",
            "#/graders/0/config/language: grader 'js' is a 'javascript' code grader: skilltest "
            "runs Python assertions only",
        ),
    ],
)
def test_script_and_javascript_graders_are_refused_even_when_code_graders_are_allowed(
    showcase, monkeypatch, capsys, grader, message
):
    monkeypatch.chdir(showcase)
    (showcase / "evals/eval-other.yaml").write_text(
        f"skill: general-coding-assistant\ngraders: [{grader}]\ntasks: [tasks/regex-task.yaml]\n"
    )
    assert main(["scenarios", "--allow-code-graders", "evals/eval-other.yaml"]) == 2
    assert f"evals/eval-other.yaml{message}" in capsys.readouterr().err


CODE_EVAL = """\
skill: general-coding-assistant
config: {trials_per_task: 1}
graders:
  - type: code
    name: web_answer
    config:
      assertions:
        - "len(output) > 0"
        - "'Python' in output and len(errors) == 0"
        - "no_such_name > 1"
tasks: [tasks/regex-task.yaml]
"""


@pytest.mark.cli
def test_allowed_code_graders_run_their_assertions_on_each_run(
    showcase, claude_bin, monkeypatch, capsys
):
    monkeypatch.chdir(showcase)
    (showcase / "evals/eval-code.yaml").write_text(CODE_EVAL)
    code = run_layer(
        "scenarios", "evals/eval-code.yaml", showcase,
        "--allow-code-graders", "--claude", claude_bin, "--script", "script.yaml",
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1, captured.out + captured.err  # one trial per arm decides nothing
    results = read_results(showcase / "results.json", "scenarios")
    assert {k: v for k, v in checks_of(results, "regex-demo-001", "with_skill").items()
            if k.startswith("web_answer")} == {
        "web_answer 1": True,
        "web_answer 2": True,
        "web_answer 3": False,  # it raises: a failed assertion, as in waza
    }  # fmt: skip
    assert {k: v for k, v in checks_of(results, "regex-demo-001", "without_skill").items()
            if k.startswith("web_answer")} == {
        "web_answer 1": True,
        "web_answer 2": False,  # "Ruby, PHP and Go."
        "web_answer 3": False,
    }  # fmt: skip
    [scenario] = results["scenarios"]
    [run] = [run for run in scenario["runs"] if run["arm"] == "with_skill"]
    raised = next(check for check in run["checks"] if check["name"] == "web_answer 3")
    assert "raised NameError: name 'no_such_name' is not defined" in raised["evidence"]


def test_an_llm_grader_is_a_judge_and_an_action_sequence_is_the_tool_ordering(
    showcase, monkeypatch, capsys
):
    from skilltest.formats.waza import eval_document
    from skilltest.suite.loader import read_yaml

    monkeypatch.chdir(showcase)
    task = Path("evals/tasks/regex-task.yaml")
    text = task.read_text()
    task.write_text(
        text + "  - name: quality\n    type: llm\n    rubric: The answer names web languages.\n"
    )
    eval_file = Path("evals/eval-text-file.yaml")
    document = eval_document(read_yaml(eval_file), eval_file)
    assert document["scenarios"][0]["checks"][-3] == {
        "judge": {
            "criteria": "The answer names web languages.",
            "focus": "trace",
            "name": "quality",
            "weight": 1.0,
        }
    }
    assert main(["validate", str(eval_file)]) == 0
    capsys.readouterr()
    task.write_text(
        text + "  - name: workflow\n    type: action_sequence\n    weight: 2\n"
        "    config: {matching_mode: in_order_match, expected_actions: [Read, Edit]}\n"
    )
    [scenario, *_] = eval_document(read_yaml(eval_file), eval_file)["scenarios"]
    assert scenario["expected"] == {"tool_ordering": [["Read", "Edit"]]}
    # The ordering weighs the grader's 2 beside the checks' own weights.
    assert scenario["weights"]["tool_ordering"] == 2.0
    assert scenario["weights"]["checks"] == sum(
        next(iter(check.values())).get("weight", 1.0) for check in scenario["checks"]
    )
    [loaded, *_] = load_scenario_suite(eval_file).scenarios
    assert loaded.expected.tool_ordering == (("Read", "Edit"),)
    task.write_text(
        text + "  - name: workflow\n    type: action_sequence\n"
        "    config: {matching_mode: any_order_match, expected_actions: [Read, Read, Edit]}\n"
    )
    [scenario, *_] = eval_document(read_yaml(eval_file), eval_file)["scenarios"]
    assert [c for c in scenario["checks"] if "tool_used" in c] == [
        {"tool_used": {"tool": "Read", "min": 2, "name": "workflow 1", "weight": 0.5}},
        {"tool_used": {"tool": "Edit", "min": 1, "name": "workflow 2", "weight": 0.5}},
    ]
    task.write_text(
        text + "  - name: workflow\n    type: action_sequence\n"
        "    config: {matching_mode: exact_match, expected_actions: [Read]}\n"
    )
    assert main(["scenarios", str(eval_file)]) == 2
    assert (
        "evals/tasks/regex-task.yaml#/graders/1/config/matching_mode: action_sequence grader "
        "'workflow' asks for matching_mode 'exact_match', which skilltest has no check for"
    ) in " ".join(capsys.readouterr().err.split())
