"""Loading trigger suites: defaults, every refusal with its place and fix, other descriptions."""

from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import SuiteError
from skilltest.triggers.runs import with_description
from skilltest.triggers.suite import load_trigger_suite


def skill(root: Path, name: str, description: str) -> None:
    folder = root / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\nBody\n")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    skill(tmp_path, "alpha", "Use when investigating log error spikes.")
    skill(tmp_path, "beta", "Use for database migrations.")
    (tmp_path / "tests" / "triggers").mkdir(parents=True)
    return tmp_path


def write(project: Path, text: str) -> Path:
    path = project / "tests" / "triggers" / "alpha.yaml"
    path.write_text(text)
    return path


QUERIES = """\
queries:
  - {id: spike, query: "Error spike in the logs", should_trigger: true}
  - {id: trivia, query: "Capital of France?", should_trigger: false}
"""


def test_a_suite_loads_with_its_defaults(project):
    suite = load_trigger_suite(write(project, "skill: alpha\ndistractors: [beta]\n" + QUERIES))
    assert suite.skill.name == "alpha"
    assert [d.name for d in suite.distractors] == ["beta"]
    assert [(q.id, q.should_trigger) for q in suite.queries] == [
        ("spike", True),
        ("trivia", False),
    ]
    # No repetitions: adaptive (-k auto), each query until its verdict is decided.
    assert (suite.repetitions, suite.threshold, suite.max_tool_calls) == (None, 0.5, 3)
    assert suite.queries[1].location.endswith("alpha.yaml#/queries/1")


def test_skills_outside_a_skills_folder_are_named_by_their_skill_md(project):
    for name, words in (("gamma", "Query traces by duration."), ("delta", "Send emails.")):
        folder = project / "plugins" / "obs" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {words}\n---\n")
    text = (
        "skill_file: plugins/obs/skills/gamma/SKILL.md\n"
        'distractors: [beta, "../../plugins/obs/skills/delta/SKILL.md"]\n' + QUERIES
    )
    suite = load_trigger_suite(write(project, text))
    assert suite.skill.name == "gamma"
    assert suite.skill.skill_file == project / "plugins/obs/skills/gamma/SKILL.md"
    assert [d.name for d in suite.distractors] == ["beta", "delta"]
    with pytest.raises(SuiteError) as raised:
        load_trigger_suite(write(project, "distractors: [beta]\n" + QUERIES))
    assert str(raised.value) == (
        f"{project / 'tests/triggers/alpha.yaml'}#: the suite names no skill\n"
        "  fix: add skill: <name> (skills/<name>/SKILL.md) or skill_file: <path to its SKILL.md>"
    )
    with pytest.raises(Exception) as missing:
        load_trigger_suite(write(project, "skill_file: plugins/none/SKILL.md\n" + QUERIES))
    assert str(missing.value).startswith(
        f"{project / 'tests/triggers/alpha.yaml'}#/skill_file: skill 'none' not found; looked at:"
    )


def test_k_and_model_from_the_command_line_win(project):
    path = write(project, "skill: alpha\nrepetitions: 5\nmodel: m-suite\n" + QUERIES)
    suite = load_trigger_suite(path, repetitions=2, model="m-cli")
    assert (suite.repetitions, suite.model) == (2, "m-cli")


def test_a_distractor_named_like_the_skill_is_refused_at_load(project, capsys):
    path = write(project, "skill: alpha\ndistractors: [beta, alpha]\n" + QUERIES)
    code = main(["triggers", str(path), "--claude", str(project / "no-claude")])
    err = capsys.readouterr().err
    assert code == 2
    assert f"{path}#/distractors/1" in err
    assert "distractor 'alpha' has the name of the skill under test" in err
    assert "fix: a distractor is another skill" in err
    assert "Traceback" not in err


def test_a_distractor_named_twice_is_refused(project):
    path = write(project, "skill: alpha\ndistractors: [beta, beta]\n" + QUERIES)
    with pytest.raises(SuiteError) as caught:
        load_trigger_suite(path)
    assert caught.value.location == f"{path}#/distractors/1"
    assert "named twice (first at /distractors/0)" in caught.value.message


def test_duplicate_query_ids_are_refused(project):
    path = write(
        project,
        "skill: alpha\nqueries:\n"
        '  - {id: a, query: "x", should_trigger: true}\n'
        '  - {id: a, query: "y", should_trigger: false}\n',
    )
    with pytest.raises(SuiteError) as caught:
        load_trigger_suite(path)
    assert caught.value.location == f"{path}#/queries/1/id"


def test_a_query_without_should_trigger_is_a_schema_error(project, capsys):
    path = write(project, 'skill: alpha\nqueries:\n  - {id: a, query: "x"}\n')
    assert main(["validate", str(path)]) == 2
    out = capsys.readouterr().out
    assert f"{path}#/queries/0" in out
    assert "'should_trigger' is a required property" in out


def test_validate_knows_trigger_suites(project, capsys):
    path = write(project, "skill: alpha\n" + QUERIES)
    assert main(["validate", str(path)]) == 0
    assert f"ok   {path} (triggers)" in capsys.readouterr().out


def test_another_description_replaces_only_the_front_matter_description():
    text = "---\nname: alpha\ndescription: old one\nlicense: MIT\n---\n# Alpha\n\nBody: x\n"
    changed = with_description(text, "New: with a colon")
    assert changed == (
        "---\nname: alpha\ndescription: 'New: with a colon'\nlicense: MIT\n---\n# Alpha\n\nBody: x\n"
    )


def test_a_description_is_added_to_a_skill_without_front_matter():
    assert with_description("# Alpha\n", "Use it") == "---\ndescription: Use it\n---\n# Alpha\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--description", "x" * 1025], "the description has 1025 characters"),
        (["--description", "  "], "the description has 0 characters"),
        (["--compare-description"], "--compare-description needs the description"),
        (["--description-file", "missing.txt"], "missing.txt: no such description file"),
        (
            ["--description-file", "/dev/zero"],
            "/dev/zero: cannot read the description file: it is "
            "a character device, not a regular file",
        ),
    ],
)
def test_bad_descriptions_exit_2(project, capsys, args, message, monkeypatch):
    monkeypatch.chdir(project)
    write(project, "skill: alpha\n" + QUERIES)
    assert main(["triggers", *args]) == 2
    assert message in capsys.readouterr().err


def test_another_description_for_suites_of_two_skills_is_refused(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    write(project, "skill: alpha\n" + QUERIES)
    (project / "tests" / "triggers" / "beta.yaml").write_text("skill: beta\n" + QUERIES)
    assert main(["triggers", "--description", "Use it"]) == 2
    err = capsys.readouterr().err
    assert "another description is for one skill, and these suites test alpha, beta" in err
    assert "skilltest triggers alpha --description" in err


def test_a_suite_adds_its_own_replay_rules(project):
    rules = (
        "replay:\n  ignore: [/system/2/text]\n"
        "  normalise: [{pattern: 'trace_id=[0-9a-f]+', replacement: 'trace_id={TRACE}'}]\n"
    )
    suite = load_trigger_suite(write(project, "skill: alpha\n" + rules + QUERIES))
    assert suite.replay.ignore == ("/system/2/text",)
    assert suite.replay.normalise == (("trace_id=[0-9a-f]+", "trace_id={TRACE}"),)


def test_a_replay_rule_that_does_not_compile_is_refused_with_its_place(project):
    path = write(
        project, "skill: alpha\nreplay:\n  normalise: [{pattern: '(unclosed'}]\n" + QUERIES
    )
    with pytest.raises(SuiteError) as caught:
        load_trigger_suite(path)
    assert caught.value.location == f"{path}#/replay/normalise/0"


@pytest.mark.parametrize(
    ("args", "message", "fix"),
    [
        (["--record", "c", "--replay", "c"], "--record and --replay exclude each other", "record"),
        (["--record-missing"], "--record-missing needs --replay DIR", "--replay DIR"),
        (["--replay", "nowhere"], "no cassette folder at nowhere", "skilltest triggers --record"),
        (
            ["--replay", "c", "--against", "HEAD"],
            "--against runs the previous revision live; it does not record or replay",
            "drop the cassette options",
        ),
    ],
)
def test_bad_tape_options_exit_2_before_any_run(project, capsys, monkeypatch, args, message, fix):
    monkeypatch.chdir(project)
    (project / "c").mkdir()
    write(project, "skill: alpha\n" + QUERIES)
    # No claude is needed to refuse them.
    assert main(["triggers", *args, "--claude", str(project / "no-claude")]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "fix: " in err and fix in err.split("fix: ", 1)[1]
    assert "Traceback" not in err
