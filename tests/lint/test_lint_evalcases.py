"""`skilltest lint` on a plugin's eval cases: what `claude plugin eval` would refuse, and what it
accepts but cannot work (a key it ignores, a grader no run can pass), each with its place and fix."""

from __future__ import annotations

import shutil

import pytest

from skilltest.cli import main

from ..conftest import REPO_ROOT

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "plugins" / "observability"


def test_broken_eval_cases_are_findings(tmp_path, capsys: pytest.CaptureFixture[str]):
    plugin = tmp_path / "observability"
    shutil.copytree(FIXTURE, plugin, ignore=shutil.ignore_patterns("output", "results"))
    evals = plugin / "evals"
    (evals / "typo").mkdir()
    (evals / "typo" / "case.yaml").write_text(
        'schema_version: "1.0"\nexecution: {prompt: Go., max_turn: 3}\n'
        "graders:\n"
        "  - {name: notes, type: file_exists, path: NOTES.md}\n"
        "  - {name: ran-bash, type: tool_used, tool: Bash}\n"
        "  - {name: never-bash, type: tool_used, tool: Bash, min: 0, max: 0}\n"
    )
    (evals / "bad-grader" / "graders").mkdir(parents=True)
    (evals / "bad-grader" / "prompt.md").write_text("Go.")
    (evals / "bad-grader" / "graders" / "g.md").write_text(
        "---\ntype: regex\ntarget: stdout\n---\nx"
    )
    (evals / "bad-grader" / "mocks" / "wx").mkdir(parents=True)
    (evals / "bad-grader" / "mocks" / "wx" / "get.md").write_text("---\ntype: agent\n---\n")
    code = main(["lint", "--no-mcp", str(plugin)])
    out = capsys.readouterr().out
    typo = evals / "typo" / "case.yaml"
    mock = evals / "bad-grader" / "mocks" / "wx" / "get.md"
    assert code == 1
    assert out.split("\nnote: ")[0] == "\n".join(
        [
            f"{mock}: mocks/wx/get.md: an agent responder needs a description of "
            "the server it plays as its body",
            "  fix: describe the server and the world it serves below the frontmatter",
            f"{evals / 'bad-grader' / 'graders' / 'g.md'}#/target: not valid here: expected "
            "last_message, trace, files, mock_calls or {source: file, path: PATH}",
            "  fix: expected last_message, trace, files, mock_calls or {source: file, path: PATH}",
            f"{typo}#/execution/max_turn: unknown key 'max_turn': claude plugin eval ignores it",
            "  fix: did you mean 'max_turns'? known keys: prompt, max_turns, timeout_seconds, "
            "model, allowed_tools, disallowed_tools, artifact_publish, growthbook_overrides, "
            "append_system_prompt, env",
            f'{typo}#/graders/0: grader "notes" cannot pass with the granted tools: it checks a '
            "file the run creates, but no tool the run may use can create one",
            "  fix: add Write (or Edit / Bash) to the case's allowed_tools",
            f'{typo}#/graders/1: grader "ran-bash" cannot pass with the granted tools: it needs a '
            "Bash call in the trace, but Bash is not granted, so the run withholds it from the "
            "model and no call can occur",
            "  fix: add Bash to the case's allowed_tools (or mock it under mocks/), or drop the "
            "grader",
        ]
    )
    assert out.endswith("2 skills, 1 plugin, 5 eval cases: 5 findings\n")
