"""A repository with SKILL.md at its root is one skill, named by its front matter: `skilltest
init .` names its suites after it, and every layer and lint run green from that repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skilltest.claude.isolation import create_sandbox
from skilltest.cli import main
from skilltest.skills import load_skill, tree_files

SKILL = (
    "---\nname: tidy-commits\ndescription: Use when writing git commit messages. Writes a short "
    "imperative subject line under 50 characters, a blank line, then a body that explains "
    "why.\n---\n# Tidy commits\nWrite the subject in the imperative mood.\n"
)

WRITTEN = [
    "tests/skill-pressure/tidy-commits.yaml",
    "tests/model-scripts/tidy-commits.pressure.yaml",
    "tests/scenarios/tidy-commits.yaml",
    "tests/model-scripts/tidy-commits.scenarios.yaml",
    "tests/triggers/tidy-commits.yaml",
    "tests/model-scripts/tidy-commits.triggers.yaml",
]


def git_repository(folder: Path, skill_md: str) -> Path:
    """A git repository holding only SKILL.md at its root, committed."""
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_md)
    for command in (
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"],
    ):
        subprocess.run(command, cwd=folder, check=True, capture_output=True)
    return folder


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The repository, named unlike its skill, as the working directory, after `init .`."""
    root = git_repository(tmp_path / "ssr", SKILL)
    monkeypatch.chdir(root)
    return root


def test_init_names_the_suites_after_the_front_matter(repo, capsys):
    assert main(["init", "."]) == 0
    out = capsys.readouterr().out
    assert out.startswith("".join(f"wrote {path}\n" for path in WRITTEN))
    for layer in ("skill-pressure", "scenarios", "triggers"):
        text = (repo / "tests" / layer / "tidy-commits.yaml").read_text()
        assert "\nskill: tidy-commits\n" in text
        assert "tidy-commits (SKILL.md at the repository's root)" in text.splitlines()[0]
    assert not list(repo.glob("tests/*/ssr*"))


def test_pressure_and_lint_run_green_from_the_repository(repo, capsys):
    # A virtual environment links out of the repository; a run never copies it, so it is fine.
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "python").symlink_to(sys.executable)
    assert main(["init", "."]) == 0
    capsys.readouterr()
    assert main(["pressure"]) == 0
    assert "tidy-commits/example-request  steers" in capsys.readouterr().out
    # The folder is `ssr`, the name tidy-commits: the folder-name rule does not apply here.
    assert main(["lint"]) == 0
    assert capsys.readouterr().out == "1 skill, 0 plugins: no findings\n"


@pytest.mark.parametrize("skill_file", ["../../SKILL.md", "SKILL.md"])
def test_a_skill_file_naming_the_root_skill_names_it_by_its_front_matter(repo, capsys, skill_file):
    assert main(["init", "."]) == 0
    capsys.readouterr()
    suite = repo / "tests/skill-pressure/tidy-commits.yaml"
    text = suite.read_text().replace("skill: tidy-commits\n", f'skill_file: "{skill_file}"\n')
    suite.write_text(text)
    assert main(["pressure"]) == 0
    assert "tidy-commits/example-request  steers" in capsys.readouterr().out


@pytest.mark.cli
def test_scenarios_and_triggers_run_green_from_the_repository(repo, capsys, claude_bin):
    assert main(["init", "."]) == 0
    capsys.readouterr()
    assert main(["scenarios", "--claude", str(claude_bin)]) == 0
    out = capsys.readouterr().out
    assert "tidy-commits/example-task  improved" in out
    assert main(["triggers", "--claude", str(claude_bin)]) == 0
    out = capsys.readouterr().out
    assert "tidy-commits/fits-1" in out
    assert "tidy-commits: precision 12/12 100%" in out


def test_without_a_name_the_folder_name_made_safe_is_used_and_said(tmp_path, monkeypatch, capsys):
    nameless = SKILL.replace("name: tidy-commits\n", "")
    root = git_repository(tmp_path / "Tidy_Commits", nameless)
    monkeypatch.chdir(root)
    assert main(["init", "."]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == (
        f"note: {root}/SKILL.md: the skill at the repository's root has no name: in its front "
        "matter; named 'tidy-commits' after its folder"
    )
    assert (root / "tests/skill-pressure/tidy-commits.yaml").is_file()
    assert main(["pressure"]) == 0
    capsys.readouterr()
    assert main(["lint"]) == 1
    assert capsys.readouterr().out.splitlines()[:2] == [
        "SKILL.md:1: the front matter has no name",
        "  fix: add name: tidy-commits (the skill's name: it is at the repository's root)",
    ]


def test_a_run_installs_the_skill_without_the_repositorys_tests_and_ignored_files(tmp_path):
    root = git_repository(tmp_path / "ssr", SKILL)
    (root / "reference").mkdir()
    (root / "reference" / "subjects.md").write_text("imperative\n")
    (root / ".gitignore").write_text("*.log\nbuild-out/\n")
    for junk in ("debug.log", "build-out/x.txt", "tests/scenarios/output/t.json", ".venv/x"):
        (root / junk).parent.mkdir(parents=True, exist_ok=True)
        (root / junk).write_text("junk\n")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("\n")
    skill = load_skill(root / "SKILL.md")
    sandbox = create_sandbox(skill=skill)
    try:
        installed = sorted(
            path.relative_to(sandbox.skills_dir).as_posix()
            for path in sandbox.skills_dir.rglob("*")
            if path.is_file()
        )
    finally:
        sandbox.remove()
    assert installed == ["tidy-commits/SKILL.md", "tidy-commits/reference/subjects.md"]
    # What results record of the skill is what a run copies.
    assert list(tree_files(root)) == ["SKILL.md", "reference/subjects.md"]


def test_the_gate_finds_the_skill_fresh_until_a_file_of_it_changes(repo, capsys):
    assert main(["init", "."]) == 0
    assert main(["pressure", "--results", "out/pressure.json"]) == 0
    capsys.readouterr()
    # The results in out/, the suites' raw output in tests/: neither is the skill's.
    main(["gate", "out/pressure.json"])
    out = capsys.readouterr().out
    assert "PASS   fresh " in out
    (repo / "reference.md").write_text("More about subjects.\n")
    main(["gate", "out/pressure.json"])
    out = capsys.readouterr().out
    assert "BLOCK  fresh " in out
    assert "- out/pressure.json: skill .: reference.md added since the run" in out
