"""`skilltest init`: a skill's first suites, green offline at once, every TODO listed by
`skilltest validate`. The scenario and trigger suites run through the real claude CLI in
tests/test_first_hour.py; here the pressure suite runs, and everything written is read back."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.emulator.described import DescribedCondition
from skilltest.scaffold import Answers, read_target, render_scaffold
from skilltest.scaffold.words import should_not_requests, should_trigger_requests
from skilltest.skills import Skill

from ..conftest import REPO_ROOT

PLUGIN = REPO_ROOT / "tests" / "fixtures" / "plugins" / "observability"

SKILLS = {
    "flaky-tests": (
        "Quarantine and fix flaky tests: rerun the failing test in isolation, bisect its "
        "ordering, then fix the shared state. Use when the user reports a test that fails "
        "intermittently in CI."
    ),
    "release-notes": "Write release notes from merged pull requests and their labels.",
    "sql-review": "Review SQL queries for missing indexes and N+1 patterns.",
}


def write_skill(root: Path, name: str, description: str) -> Path:
    folder = root / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {json.dumps(description)}\n---\n\n# {name}\n\n"
        "1. **Reproduce first.** Run the one test alone, a hundred times, before changing it.\n"
    )
    return folder


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with three skills, as the working directory."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for name, description in SKILLS.items():
        write_skill(tmp_path, name, description)
    monkeypatch.chdir(tmp_path)
    return tmp_path


WRITTEN = [
    "tests/skill-pressure/flaky-tests.yaml",
    "tests/model-scripts/flaky-tests.pressure.yaml",
    "tests/scenarios/flaky-tests.yaml",
    "tests/model-scripts/flaky-tests.scenarios.yaml",
    "tests/triggers/flaky-tests.yaml",
    "tests/model-scripts/flaky-tests.triggers.yaml",
    "skilltest.mk",
]


def test_init_writes_three_suites_their_scripts_a_makefile_and_ignore_entries(repo, capsys):
    assert main(["init", "skills/flaky-tests"]) == 0
    out = capsys.readouterr().out
    assert out == (
        "".join(f"wrote {path}\n" for path in WRITTEN)
        + "added to .gitignore: /tests/scenarios/output/ /tests/triggers/output/\n"
        "\n"
        "next:\n"
        "  skilltest pressure && skilltest scenarios && skilltest triggers   # green offline, on the emulator\n"
        "  skilltest validate   # the TODOs to fill in: your own requests and what a good answer shows\n"
        "  include skilltest.mk from your Makefile for `make skilltest`\n"
    )
    assert (repo / ".gitignore").read_text() == (
        "# skilltest: raw output of scenario and trigger runs (transcripts, traces)\n"
        "/tests/scenarios/output/\n"
        "/tests/triggers/output/\n"
    )
    triggers = (repo / "tests/triggers/flaky-tests.yaml").read_text()
    # The repository's other skills are the distractors, by name: they are in skills/.
    assert "skill: flaky-tests\ndistractors: [release-notes, sql-review]\n" in triggers
    assert (
        '  - {id: unrelated-1, query: "What is the capital of France?", should_trigger: false}'
        in triggers
    )
    scenarios = (repo / "tests/scenarios/flaky-tests.yaml").read_text()
    assert "    checks:\n" in scenarios and "      - file_matches: {" in scenarios
    assert "skilltest-pressure:" in (repo / "skilltest.mk").read_text()


def test_what_init_wrote_runs_green_and_validate_lists_each_todo(repo, capsys):
    assert main(["init", "skills/flaky-tests"]) == 0
    capsys.readouterr()
    assert main(["pressure"]) == 0
    out = capsys.readouterr().out
    assert "flaky-tests/example-request  steers" in out
    assert main(["validate"]) == 2
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:7] == [
        "TODO tests/skill-pressure/flaky-tests.yaml (pressure): 2 to fill in",
        "TODO tests/scenarios/flaky-tests.yaml (scenarios): 3 to fill in",
        "TODO tests/triggers/flaky-tests.yaml (triggers): 2 to fill in",
        "TODO tests/model-scripts/flaky-tests.pressure.yaml (model-script): 1 to fill in",
        "TODO tests/model-scripts/flaky-tests.scenarios.yaml (model-script): 1 to fill in",
        "ok   tests/model-scripts/flaky-tests.triggers.yaml (model-script)",
        "",
    ]
    assert lines[7:11] == [
        "tests/skill-pressure/flaky-tests.yaml:9: TODO: a request where flaky-tests should change the answer (this one is made from its description)",
        '  fix: fill in `prompt: "Quarantine and fix flaky tests: rerun the failing…` below it, then delete the TODO line',
        "tests/skill-pressure/flaky-tests.yaml:12: TODO: what an answer that follows flaky-tests says, as regexes (this one only finds the skill's name)",
        '  fix: fill in `required_patterns: ["(?i)flaky-tests\\\\s+skill"]` below it, then delete the TODO line',
    ]
    # The model script's answer is the suite's example too: offline it is what the run reads.
    assert (
        "tests/model-scripts/flaky-tests.pressure.yaml:10: TODO: what a model that follows "
        "flaky-tests answers: offline this stand-in says it, so make it say what the suite's "
        "required_patterns look for"
    ) in lines
    assert lines[-1] == "9 TODO(s) left in 5 file(s)"
    # Filled in (the TODO lines deleted), the suites are valid.
    for path in repo.glob("tests/*/*.yaml"):
        text = "".join(line for line in path.read_text().splitlines(True) if "# TODO:" not in line)
        path.write_text(text)
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.endswith("\n6 file(s) valid\n")


def test_validate_of_one_suite_lists_the_todos_of_the_model_script_it_runs_on(repo, capsys):
    assert main(["init", "skills/flaky-tests"]) == 0
    capsys.readouterr()
    assert main(["validate", "tests/skill-pressure/flaky-tests.yaml"]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        "TODO tests/skill-pressure/flaky-tests.yaml (pressure): 2 to fill in",
        "TODO tests/model-scripts/flaky-tests.pressure.yaml (model-script of "
        "tests/skill-pressure/flaky-tests.yaml): 1 to fill in",
    ]
    assert lines[-1] == "3 TODO(s) left in 2 file(s)"
    # Named with its suite, the script's TODOs are listed once.
    assert main(["validate", "tests/skill-pressure/flaky-tests.yaml", "tests/model-scripts"]) == 2
    assert capsys.readouterr().out.splitlines()[-1] == "4 TODO(s) left in 3 file(s)"


def test_what_the_author_answers_replaces_the_examples_and_their_todos(repo, capsys):
    target = read_target(Path("skills/flaky-tests"), repo)
    answers = {
        "flaky-tests": Answers(
            request="CI fails now and then on test_checkout; what do I do?",
            phrase="run it alone",
        )
    }
    for generated in render_scaffold(target, answers):
        path = repo / generated.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(generated.text)
    pressure = (repo / "tests/skill-pressure/flaky-tests.yaml").read_text()
    assert "# TODO" not in pressure
    assert 'prompt: "CI fails now and then on test_checkout; what do I do?"' in pressure
    assert 'required_patterns: ["(?i)run\\\\s+it\\\\s+alone"]' in pressure
    assert main(["pressure"]) == 0
    assert "flaky-tests/example-request  steers" in capsys.readouterr().out


def test_init_never_overwrites_a_suite(repo, capsys):
    existing = repo / "tests" / "triggers" / "flaky-tests.yaml"
    existing.parent.mkdir(parents=True)
    existing.write_text("mine\n")
    assert main(["init", "skills/flaky-tests"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"skilltest: error: {existing}: 1 file(s) skilltest init would write exist already: "
        "tests/triggers/flaky-tests.yaml\n"
        "  fix: move them aside, or pass --force to overwrite them\n"
    )
    assert sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()) == [
        ".git/HEAD",
        "skills/flaky-tests/SKILL.md",
        "skills/release-notes/SKILL.md",
        "skills/sql-review/SKILL.md",
        "tests/triggers/flaky-tests.yaml",
    ]
    assert main(["init", "skills/flaky-tests", "--force"]) == 0
    assert existing.read_text() != "mine\n"


def test_an_existing_gitignore_and_makefile_snippet_are_kept(repo, capsys):
    (repo / ".gitignore").write_text("/tests/scenarios/output/\nnode_modules")
    (repo / "skilltest.mk").write_text("# mine\n")
    assert main(["init", "skills/release-notes"]) == 0
    out = capsys.readouterr().out
    assert "kept  skilltest.mk (already there)\n" in out
    assert "added to .gitignore: /tests/triggers/output/\n" in out
    assert (repo / ".gitignore").read_text() == (
        "/tests/scenarios/output/\nnode_modules\n\n"
        "# skilltest: raw output of scenario and trigger runs (transcripts, traces)\n"
        "/tests/triggers/output/\n"
    )
    assert (repo / "skilltest.mk").read_text() == "# mine\n"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["skills/nope"],
            "skilltest: error: skills/nope: no such skill or plugin folder\n"
            "  fix: name a skill folder (skilltest init skills/<name>) or a plugin folder\n",
        ),
        (
            ["skills"],
            "skilltest: error: {repo}/skills: not a skill folder (no SKILL.md) and not a plugin (no .claude-plugin/plugin.json)\n"
            "  fix: name a skill folder (skilltest init skills/<name>) or a plugin folder\n",
        ),
        (
            [],
            "skilltest: error: {repo}: 3 skills or plugins below {repo} (skills/flaky-tests, skills/release-notes, skills/sql-review): which one?\n"
            "  fix: name a skill folder (skilltest init skills/<name>) or a plugin folder\n",
        ),
    ],
    ids=["missing", "not-a-skill", "which-one"],
)
def test_what_init_cannot_scaffold_exits_2_with_the_fix(repo, capsys, args, expected):
    assert main(["init", *args]) == 2
    assert capsys.readouterr().err == expected.format(repo=repo)


def test_a_skill_without_a_description_is_refused(repo, capsys):
    folder = repo / "skills" / "bare"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: bare\n---\nbody\n")
    assert main(["init", "skills/bare"]) == 2
    assert capsys.readouterr().err.startswith(
        f"skilltest: error: {folder / 'SKILL.md'}: the skill has no description in its front matter"
    )


def test_the_only_skill_of_a_repository_needs_no_name(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    write_skill(tmp_path, "sql-review", SKILLS["sql-review"])
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert (tmp_path / "tests/skill-pressure/sql-review.yaml").is_file()


def test_a_skill_outside_skills_is_named_by_its_file(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    folder = tmp_path / "tools" / "sql-review"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: sql-review\ndescription: {SKILLS['sql-review']}\n---\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["init", "tools/sql-review"]) == 0
    for layer in ("skill-pressure", "scenarios", "triggers"):
        text = (tmp_path / "tests" / layer / "sql-review.yaml").read_text()
        assert 'skill_file: "tools/sql-review/SKILL.md"\n' in text
    capsys.readouterr()
    assert main(["pressure"]) == 0


@pytest.fixture
def venv_python_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plugin's .mcp.json runs `python3`: the one first on PATH must have the mcp SDK."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def test_a_plugin_gets_suites_for_each_of_its_skills(
    tmp_path, monkeypatch, capsys, venv_python_first
):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    shutil.copytree(PLUGIN, tmp_path / "plugins" / "observability")
    monkeypatch.chdir(tmp_path)
    assert main(["init", "plugins/observability"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "wrote tests/skill-pressure/log-triage.yaml\n"
        "wrote tests/model-scripts/log-triage.pressure.yaml\n"
        "wrote tests/skill-pressure/trace-latency.yaml\n"
        "wrote tests/model-scripts/trace-latency.pressure.yaml\n"
        "wrote tests/scenarios/observability.yaml\n"
        "wrote tests/model-scripts/observability.scenarios.yaml\n"
        "wrote tests/triggers/log-triage.yaml\n"
    )
    scenarios = (tmp_path / "tests/scenarios/observability.yaml").read_text()
    assert 'plugin: "../../plugins/observability"\n' in scenarios
    assert (
        "  - id: log-triage-example\n" in scenarios
        and "  - id: trace-latency-example\n" in scenarios
    )
    triggers = (tmp_path / "tests/triggers/log-triage.yaml").read_text()
    assert (
        'skill_file: "plugins/observability/skills/log-triage/SKILL.md"\n'
        'distractors: ["plugins/observability/skills/trace-latency/SKILL.md"]\n'
    ) in triggers
    assert main(["pressure"]) == 0
    assert "observability:" not in capsys.readouterr().err
    assert main(["validate"]) == 2
    out = capsys.readouterr().out
    assert "TODO tests/scenarios/observability.yaml (scenarios): 6 to fill in" in out
    assert "FAIL" not in out


# -- requests the emulator's stand-in decides as the suite says --------------------------------


def skill_of(name: str, description: str) -> Skill:
    return Skill(
        name=name, skill_file=Path(f"skills/{name}/SKILL.md"), text="", description=description
    )


def test_requests_fire_the_skill_and_not_its_neighbours():
    skill = skill_of("flaky-tests", SKILLS["flaky-tests"])
    neighbours = [skill_of(n, d) for n, d in SKILLS.items() if n != "flaky-tests"]
    requests = should_trigger_requests(skill, neighbours)
    assert requests == [
        "Quarantine and fix flaky tests: rerun the failing test in isolation, bisect its ordering, then fix the shared state.",
        "Help me with this: a test that fails intermittently in CI.",
    ]
    listing = [(s.name, s.description or "") for s in (skill, *neighbours)]
    for request in requests:
        assert DescribedCondition(2).best(request, listing).skill == "flaky-tests"
    for request in should_not_requests(skill, neighbours):
        assert DescribedCondition(2).best(request, listing) is None


def test_a_description_no_request_tells_apart_is_refused(repo, capsys):
    write_skill(repo, "flaky-tests-2", SKILLS["flaky-tests"])
    assert main(["init", "skills/flaky-tests-2"]) == 2
    assert capsys.readouterr().err == (
        f"skilltest: error: {repo / 'skills/flaky-tests-2/SKILL.md'}: the description of "
        "flaky-tests-2 shares its words with those of flaky-tests, release-notes, sql-review: "
        "nothing in it tells a request for this skill from one for them\n"
        "  fix: say in the description what this skill is for that the others are not, then "
        "run skilltest init again\n"
    )


def test_on_a_terminal_init_asks_and_enter_keeps_the_example(repo, capsys, monkeypatch):
    typed = iter(["CI fails now and then on test_checkout; what now?", ""])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(typed))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["init", "skills/flaky-tests"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        f"flaky-tests: {SKILLS['flaky-tests']}\n"
        "A request where flaky-tests should change what the agent does?\n"
        "  [Enter keeps: Quarantine and fix flaky tests: rerun the failing test in isolation, "
        "bisect its ordering, then fix the shared state.]\n"
        "Words an answer that follows flaky-tests contains? (commas between several)\n"
        "  [Enter keeps: flaky-tests skill (a placeholder)]\n"
    )
    pressure = (repo / "tests/skill-pressure/flaky-tests.yaml").read_text()
    assert 'prompt: "CI fails now and then on test_checkout; what now?"' in pressure
    assert pressure.count("# TODO:") == 1  # the pattern kept its example, and its TODO
    assert main(["pressure"]) == 0
    # --no-input asks nothing, terminal or not.
    monkeypatch.setattr("builtins.input", lambda prompt="": pytest.fail("asked"))
    assert main(["init", "skills/sql-review", "--no-input"]) == 0


def test_on_a_terminal_comma_separated_words_are_one_pattern_each_and_the_prompt_keeps_its_stop(
    repo, capsys, monkeypatch
):
    typed = iter(["CI fails now and then on test_checkout", "context, outline"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(typed))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["init", "skills/flaky-tests"]) == 0
    capsys.readouterr()
    pressure = (repo / "tests/skill-pressure/flaky-tests.yaml").read_text()
    assert 'required_patterns: ["(?i)context", "(?i)outline"]' in pressure
    assert "# TODO:" not in pressure
    scenarios = (repo / "tests/scenarios/flaky-tests.yaml").read_text()
    assert (
        'prompt: "CI fails now and then on test_checkout. Write your plan to NOTES.md."'
        in scenarios
    )
    assert 'required_patterns: ["(?i)context", "(?i)outline"]' in scenarios
    assert (
        '      - file_matches: {name: "the plan follows flaky-tests (context)", path: NOTES.md, '
        'pattern: "(?i)context"}\n'
        '      - file_matches: {name: "the plan follows flaky-tests (outline)", path: NOTES.md, '
        'pattern: "(?i)outline"}\n'
    ) in scenarios
    # The model script's answer holds both words: the suite runs green.
    assert main(["pressure"]) == 0
    assert "flaky-tests/example-request  steers" in capsys.readouterr().out
