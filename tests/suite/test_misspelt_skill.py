"""A skill name misspelt in a suite: every layer and `skilltest validate` say which skill was
meant, with the file and the place in it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skilltest.cli import main

SUITES = {
    "tests/skill-pressure/migrations.yaml": (
        "skill: safe-migration\n"
        "scenarios:\n  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n"
    ),
    "tests/scenarios/migrations.yaml": (
        "skill: safe-migration\nscenarios:\n"
        "  - {id: a, prompt: p, expected: {required_patterns: [x]}}\n"
    ),
    "tests/triggers/migrations.yaml": (
        "skill: safe-migration\nqueries:\n  - {id: a, query: q, should_trigger: true}\n"
    ),
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with skills/safe-migrations and skills/release-notes."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for name in ("safe-migrations", "release-notes"):
        folder = tmp_path / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {json.dumps(f'The {name} skill.')}\n---\n\nDo it.\n"
        )
    for path, text in SUITES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("layer", ["pressure", "scenarios", "triggers"])
def test_every_layer_asks_did_you_mean_the_skill_beside_it(repo, capsys, layer):
    suite = next(
        path for path in SUITES if f"/{'skill-pressure' if layer == 'pressure' else layer}/" in path
    )
    assert main([layer, suite]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"skilltest: error: {suite}#/skill: skill 'safe-migration' not found "
        "(did you mean 'safe-migrations'?); looked at:\n"
    )
    assert "  fix: name the skill safe-migrations (its folder), or create " in err


def test_validate_names_each_suite_and_the_skill_meant(repo, capsys):
    assert main(["validate"]) == 2
    out = capsys.readouterr().out
    for path in SUITES:
        assert f"FAIL {path}" in out
        assert (
            f"{path}#/skill: skill 'safe-migration' not found (did you mean 'safe-migrations'?)"
            in out
        )


def test_a_misspelt_skill_file_gets_the_path_meant(repo, capsys):
    suite = repo / "tests/skill-pressure/migrations.yaml"
    suite.write_text(
        "skill_file: ../../skills/safe-migration/SKILL.md\n"
        "scenarios:\n  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n"
    )
    assert main(["validate", str(suite.relative_to(repo))]) == 2
    out = capsys.readouterr().out
    assert (
        "skill 'safe-migration' not found (did you mean '../../skills/safe-migrations/SKILL.md'?)"
        in out
    )
    assert "fix: write skill_file: ../../skills/safe-migrations/SKILL.md" in out


def test_a_name_nothing_is_close_to_gets_no_guess(repo, capsys):
    (repo / "tests/triggers/migrations.yaml").write_text(
        "skill: nope\nqueries:\n  - {id: a, query: q, should_trigger: true}\n"
    )
    assert main(["triggers", "tests/triggers/migrations.yaml"]) == 2
    err = capsys.readouterr().err
    assert "skill 'nope' not found; looked at:" in err and "did you mean" not in err
