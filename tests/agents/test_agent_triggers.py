"""``skilltest triggers --agent opencode|codex|gemini``: the example trigger suites through the
real OpenCode, Codex and Gemini CLIs on the emulator, each run decided by that agent's firing rule
(OpenCode's ``skill`` call, Codex's read of ``SKILL.md``, Gemini CLI's ``activate_skill`` call)
with the verdicts Claude Code's runs get; and one model script under which the skill fires in one
agent and not in another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main

from ..conftest import REPO_ROOT
from .conftest import installed_agent

HERE = Path(__file__).parent
EXAMPLES = REPO_ROOT / "tests" / "triggers"


def triggers(*args: str, tmp_path: Path) -> tuple[int, dict]:
    results = tmp_path / "results.json"
    code = main(
        [
            "triggers",
            *args,
            "--skills-dir",
            str(REPO_ROOT / "skills"),
            "--backend",
            "emulator",
            "-j",
            "2",
            "--output-dir",
            str(tmp_path / "output"),
            "--results",
            str(results),
        ]
    )
    return code, json.loads(results.read_text())


def verdicts(document: dict) -> dict[str, str]:
    return {
        f"{suite['skill']}/{query['id']}": query["verdict"]
        for suite in document["suites"]
        for query in suite["queries"]
    }


@pytest.mark.slow
def test_the_example_trigger_suites_run_in_codex_with_every_query_passing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    installed_agent("codex")
    code, document = triggers(
        str(EXAMPLES / "lgtm.yaml"),
        str(EXAMPLES / "safe-migrations.yaml"),
        "--agent",
        "codex",
        tmp_path=tmp_path,
    )
    printed = capsys.readouterr()

    assert code == 0, printed.out + printed.err
    assert "codex 0.171.0, emulator backend (scripted stand-in model), 16 queries, K=6" in (
        printed.out
    )
    assert set(verdicts(document).values()) == {"pass"}
    assert len(verdicts(document)) == 16
    assert "lgtm: precision 24/24 100%" in printed.out
    runs = {
        (suite["skill"], query["id"]): query["runs"]
        for suite in document["suites"]
        for query in suite["queries"]
    }
    # Codex loads a skill by reading its SKILL.md through the shell: that read is the firing
    fired = runs["lgtm", "loki-error-spike"][0]
    assert fired["ended"] == "fired"
    assert fired["reason"].startswith("the skill fired (Bash(cat .agents/skills/lgtm/SKILL.md)")
    # the distractor's SKILL.md read is not the skill under test firing
    near_miss = runs["lgtm", "add-index-orders"][0]
    assert near_miss["ended"] == "not-fired"
    assert [c["input"]["command"] for c in near_miss["first_tool_calls"]] == [
        "cat .agents/skills/safe-migrations/SKILL.md"
    ]


@pytest.mark.slow
def test_the_lgtm_trigger_suite_runs_in_opencode_with_its_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    installed_agent("opencode")
    # Two of the suite's queries, as it is (K=6): a run of OpenCode starts slowly.
    code, document = triggers(
        str(EXAMPLES / "lgtm.yaml"),
        "--agent",
        "opencode",
        "--only",
        "loki-error-spike",
        "--only",
        "add-index-orders",
        tmp_path=tmp_path,
    )
    printed = capsys.readouterr()

    assert code == 0, printed.out + printed.err
    assert "opencode 1.18.33, emulator backend (scripted stand-in model), 2 queries, K=6" in (
        printed.out
    )
    assert verdicts(document) == {"lgtm/loki-error-spike": "pass", "lgtm/add-index-orders": "pass"}
    (suite,) = document["suites"]
    fired, near_miss = (query["runs"][0] for query in suite["queries"])
    assert fired["reason"] == "the skill fired (Skill(lgtm), tool call 1)"
    # OpenCode loaded the distractor with its skill tool: not the skill under test
    assert near_miss["ended"] == "not-fired"
    assert near_miss["first_tool_calls"][0] == {
        "name": "Skill",
        "input": {"skill": "safe-migrations"},
    }


@pytest.mark.slow
def test_the_lgtm_trigger_suite_runs_in_gemini_cli_with_its_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    installed_agent("gemini")
    # Two of the suite's queries, as it is (K=6).
    code, document = triggers(
        str(EXAMPLES / "lgtm.yaml"),
        "--agent",
        "gemini",
        "--only",
        "loki-error-spike",
        "--only",
        "add-index-orders",
        tmp_path=tmp_path,
    )
    printed = capsys.readouterr()

    assert code == 0, printed.out + printed.err
    assert "gemini 0.61.0, emulator backend (scripted stand-in model), 2 queries, K=6" in (
        printed.out
    )
    assert verdicts(document) == {"lgtm/loki-error-spike": "pass", "lgtm/add-index-orders": "pass"}
    assert "lgtm: precision 6/6 100%" in printed.out
    assert document["agent"] == {"name": "gemini", "version": "0.61.0"}
    (suite,) = document["suites"]
    fired, near_miss = (query["runs"][0] for query in suite["queries"])
    assert fired["ended"] == "fired"
    assert fired["reason"] == "the skill fired (Skill(lgtm), tool call 1)"
    # Gemini CLI activated the distractor: not the skill under test
    assert near_miss["ended"] == "not-fired"
    assert near_miss["first_tool_calls"][0] == {
        "name": "Skill",
        "input": {"skill": "safe-migrations"},
    }


@pytest.mark.slow
def test_a_model_script_can_fire_the_skill_in_claude_code_and_not_in_codex(
    claude_bin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    installed_agent("codex")
    suite = str(HERE / "triggers" / "by-api.yaml")

    claude_code, in_claude = triggers(suite, tmp_path=tmp_path / "claude")
    printed_claude = capsys.readouterr().out
    codex, in_codex = triggers(suite, "--agent", "codex", tmp_path=tmp_path / "codex")
    printed_codex = capsys.readouterr().out

    assert (claude_code, codex) == (0, 1)
    assert verdicts(in_claude) == {"lgtm/loki-error-spike": "pass"}
    assert verdicts(in_codex) == {"lgtm/loki-error-spike": "fail"}
    assert "lgtm/loki-error-spike  fire      6  6/6 100% [54%–100%]         pass" in printed_claude
    assert "lgtm/loki-error-spike  fire      6  0/6 0% [0%–46%]         miss" in printed_codex
    assert "misses (did not fire often enough, should have):" in printed_codex
    assert in_claude["agent"] == {"name": "claude-code", "version": in_claude["claude_version"]}
    assert (in_codex["agent"], in_codex["claude_version"]) == (
        {"name": "codex", "version": "0.171.0"},
        None,
    )


@pytest.mark.slow
def test_a_codex_trigger_run_names_codex_and_its_version_in_its_results_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    installed_agent("codex")
    junit = tmp_path / "junit.xml"
    code, document = triggers(
        str(HERE / "triggers" / "by-api.yaml"),
        "--agent",
        "codex",
        "-k",
        "2",
        "--allow-inconclusive",
        "--junit",
        str(junit),
        tmp_path=tmp_path,
    )
    printed, notes = capsys.readouterr()
    markdown, html = tmp_path / "report.md", tmp_path / "report.html"
    reported = main(
        ["report", str(tmp_path / "results.json"), "--markdown", str(markdown), "--html", str(html)]
    )

    assert (code, reported) == (0, 0)
    assert "skilltest: note: Codex's commands run in its own workspace-write sandbox" in notes
    assert printed.splitlines()[1].startswith("codex 0.171.0, emulator backend")
    assert document["agent"] == {"name": "codex", "version": "0.171.0"}
    assert document["provenance"]["agent"] == {"name": "codex", "version": "0.171.0"}
    assert (document["claude_version"], document["provenance"]["claude_version"]) == (None, None)
    shown = markdown.read_text()
    assert "; agent codex 0.171.0; skilltest " in shown
    assert "claude CLI" not in shown
    page = html.read_text()
    assert "codex 0.171.0" in page
    assert "claude CLI" not in page
    assert '<property name="agent" value="codex 0.171.0"' in junit.read_text()


@pytest.mark.parametrize("layer", ["triggers", "scenarios"])
def test_claude_versions_beside_another_agent_is_refused_before_any_run(
    layer: str, capsys: pytest.CaptureFixture[str]
):
    suite = (
        EXAMPLES / "lgtm.yaml" if layer == "triggers" else REPO_ROOT / "tests/scenarios/lgtm.yaml"
    )
    code = main(
        [
            layer,
            str(suite),
            "--skills-dir",
            str(REPO_ROOT / "skills"),
            "--agent",
            "codex",
            "--claude-versions",
            "2.1.328",
        ]
    )

    assert code == 2
    err = capsys.readouterr().err
    assert "--claude-versions runs versions of Claude Code; --agent codex runs another agent" in err
    assert "fix: leave out --claude-versions (--models runs its cells in codex)" in err


def test_a_dry_run_for_another_agent_says_its_estimate_assumes_claude_code(
    capsys: pytest.CaptureFixture[str],
):
    code = main(
        [
            "triggers",
            str(EXAMPLES / "lgtm.yaml"),
            "--skills-dir",
            str(REPO_ROOT / "skills"),
            "--agent",
            "codex",
            "--dry-run",
        ]
    )

    assert code == 0
    out = capsys.readouterr().out
    assert "--agent codex: the estimate assumes Claude Code's context and requests" in out
