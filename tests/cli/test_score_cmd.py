"""`skilltest score`: a kept transcript scored against one scenario, the skill fired beside it."""

from __future__ import annotations

import json

import pytest

from skilltest.cli import main

from ..conftest import CORPUS

CC = CORPUS / "claude-code-2.1.328"

# Skill requirements in the public harnesses' shape: scored by the old rubric, indicators now.
SUITE = """\
skill: probe-skill
scenarios:
  - id: uses-the-skill
    prompt: p
    expected:
      required_tools: [Skill]
      tool_ordering: [["Skill(no-such-skill)", Bash]]
      text_patterns: ["Used the skill"]
"""


@pytest.fixture
def suite(tmp_path, monkeypatch):
    for name in ("probe-skill", "no-such-skill"):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_text(f"---\nname: {name}\n---\nbody\n")
    (tmp_path / "suite.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    return tmp_path / "suite.yaml"


@pytest.mark.parametrize(
    ("transcript", "fired"),
    [
        ("skill_invoke_project_skill.ndjson", "probe-skill yes, no-such-skill no"),
        # The Skill call failed (unknown skill): it did not fire and earned nothing.
        ("skill_invoke_unknown_skill.ndjson", "probe-skill no, no-such-skill no"),
    ],
)
def test_expected_skills_are_shown_beside_the_score(suite, capsys, transcript, fired):
    code = main(["score", str(CC / transcript), "--scenario", str(suite), "--id", "uses-the-skill"])

    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    # Bash was never called: the ordering's rest ("Bash was called") is what is scored, and the
    # Skill requirements are not: 0.25 / (0.25 + 0.15).
    assert lines[0] == (
        "probe-skill/uses-the-skill: score 0.62: required_patterns 1/1"
        " | tool_ordering 0/1 (missing 'Bash', closest 'no Bash call')"
    )
    assert lines[1] == f"expected skills fired: {fired} (an indicator, not part of the score)"


def test_the_json_card_says_which_skills_fired(suite, capsys):
    code = main(
        [
            "score",
            str(CC / "skill_invoke_project_skill.ndjson"),
            "--scenario",
            str(suite),
            "--id",
            "uses-the-skill",
            "--json",
        ]
    )

    card = json.loads(capsys.readouterr().out)
    assert (code, card["score"]) == (0, 0.625)
    assert card["skills_fired"] == {"probe-skill": True, "no-such-skill": False}
    assert card["components"]["required_tools"] is None
