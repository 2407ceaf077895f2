"""Suites read only their own repository.

Every path a suite names (a pressure, scenario or trigger suite, a world file, a plugin's eval
cases) must resolve, symbolic links followed, inside the suite's repository, and no symbolic
link inside a folder a suite names may lead out of it: else a suite from an untrusted pull
request could have a run read ``/proc/self/environ``, ``/etc/passwd`` or a CI secret beside the
checkout, copy it into the agent's workspace or the model's prompt, and from there into a
cassette. Each case lays out a git repository in a temporary folder, with a secret file beside
it (outside), names the secret through one field in one way, and runs ``skilltest validate`` and
the command that runs the file: both end with exit 2 naming the field, where the path led and
the fix, and the secret is nowhere in what they print.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import SuiteError
from skilltest.suite.repository import Repository
from tests.projects import write_files

SECRET = "CI-DEPLOY-TOKEN-4b1d7c9e2f"
"""What the files outside the repository hold: it must never be printed."""

SKILL = "---\nname: demo\ndescription: Use for checking the demo service.\n---\nSay lgtm.\n"

GIT = "the git work tree holding the suite"


@dataclass(frozen=True)
class Layout:
    """The temporary folder: ``repo/`` (a git work tree, suites in ``repo/tests/``) and, beside
    it, the secret as a file (``secrets``, ``secrets.json``) and a folder (``outside/``, with a
    SKILL.md and a plugin manifest)."""

    tmp: Path
    repo: Path

    @property
    def tests(self) -> Path:
        return self.repo / "tests"


def lay_out(tmp_path: Path) -> Layout:
    tmp = tmp_path.resolve()
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "--quiet", str(repo)], check=True, capture_output=True)
    (tmp / "secrets").write_text(f"TOKEN={SECRET}\n")
    (tmp / "secrets.json").write_text(json.dumps({"tickets": [{"id": SECRET}]}))
    outside = tmp / "outside"
    (outside / ".claude-plugin").mkdir(parents=True)
    (outside / ".claude-plugin" / "plugin.json").write_text('{"name": "outside"}')
    (outside / "SKILL.md").write_text(f"---\nname: outside\ndescription: {SECRET}\n---\n{SECRET}")
    (outside / "notes.md").write_text(SECRET)
    (repo / "skills" / "demo").mkdir(parents=True)
    (repo / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    layout = Layout(tmp, repo)
    layout.tests.mkdir()
    (layout.tests / "model.yaml").write_text("schema_version: 1\ndefault: {text: lgtm}\n")
    # The links inside the repository that point out of it.
    (layout.tests / "leak").symlink_to(tmp / "secrets")
    (layout.tests / "leak.json").symlink_to(tmp / "secrets.json")
    (layout.tests / "leakdir").symlink_to(outside)
    return layout


# --- the fields --------------------------------------------------------------------------------

PRESSURE = """\
skill: demo
{field}
scenarios:
  - id: s
    prompt: "Check the demo service."
    with_skill: {{required_patterns: [lgtm]}}
"""

SCENARIOS = """\
skill: demo
{field}
scenarios:
  - id: s
    prompt: "Check the demo service."
    expected: {{required_patterns: [lgtm]}}
{scenario}"""

TRIGGERS = """\
skill: demo
{field}
queries:
  - {{id: q, query: "Check the demo service.", should_trigger: true}}
"""

WORLD = """\
services:
  - name: tickets
    hosts: [api.tickets.example.com]
    data: {value}
    routes:
      - {{method: GET, path: /tickets, action: list, collection: tickets}}
"""


@dataclass(frozen=True)
class Field:
    """A path field: where it is, what it names, the files a case writes and what runs them."""

    layer: str
    """``pressure``, ``scenarios``, ``triggers`` or ``world``."""
    pointer: str
    """Its JSON pointer."""
    kind: str
    """What it names: ``file``, ``folder``, ``skill`` (a path of a SKILL.md with a folder, as a
    distractor is written), ``fixture`` (a JSON file) or ``program`` (an MCP server's command or
    argument, where an absolute path is a program of the machine, not a file of the suite)."""
    top: str = ""
    """The line at the top of the suite (``{value}`` is the path)."""
    scenario: str = ""
    """The lines of the scenario (``{value}`` is the path)."""

    @property
    def name(self) -> str:
        return f"{self.layer}#{self.pointer}"

    def files(self, value: str) -> dict[str, str]:
        """The files this field's case writes in ``repo/tests/``."""
        top, scenario = self.top.format(value=value), self.scenario.format(value=value)
        if self.layer == "pressure":
            return {"suite.yaml": PRESSURE.format(field=top)}
        if self.layer == "triggers":
            return {"suite.yaml": TRIGGERS.format(field=top)}
        if self.layer == "world":
            suite = SCENARIOS.format(field="world: world.yaml", scenario="")
            return {"world.yaml": WORLD.format(value=value), "suite.yaml": suite}
        return {"suite.yaml": SCENARIOS.format(field=top, scenario=scenario)}

    def commands(self, claude: Path) -> list[list[str]]:
        """``validate``, and the layer command that reads the file."""
        if self.layer == "world":
            return [
                ["validate", "tests/world.yaml"],
                ["scenarios", "tests/suite.yaml", "--claude", str(claude)],
            ]
        layer = [self.layer, "tests/suite.yaml"]
        if self.layer != "pressure":
            layer += ["--claude", str(claude)]
        return [["validate", "tests/suite.yaml"], layer]

    def location(self, layout: Layout, command: str) -> str:
        if self.layer == "world":
            # `validate` names the world as given; a suite names it resolved.
            world = "tests/world.yaml" if command == "validate" else f"{layout.tests}/world.yaml"
            return f"{world}#{self.pointer}"
        return f"tests/suite.yaml#{self.pointer}"


FIELDS = [
    Field("pressure", "/skill_file", "file", top="skill_file: {value}"),
    Field("pressure", "/plugin", "folder", top="plugin: {value}"),
    Field("pressure", "/model_script", "file", top="model_script: {value}"),
    Field("scenarios", "/skill_file", "file", top="skill_file: {value}"),
    Field("scenarios", "/scenarios/0/skill_file", "file", scenario="    skill_file: {value}\n"),
    Field("scenarios", "/model_script", "file", top="model_script: {value}"),
    Field("scenarios", "/plugin", "folder", top="plugin: {value}"),
    Field("scenarios", "/world", "file", top="world: {value}"),
    Field("scenarios", "/scenarios/0/workspace", "folder", scenario="    workspace: {value}\n"),
    Field("scenarios", "/scenarios/0/setup", "file", scenario="    setup: {value}\n"),
    Field("scenarios", "/scenarios/0/resume", "file", scenario="    resume: {value}\n"),
    Field("scenarios", "/mocks", "folder", top="mocks: {value}"),
    Field("scenarios", "/scenarios/0/mocks/0", "folder", scenario="    mocks: [{value}]\n"),
    Field("scenarios", "/config/add_dirs/0", "folder", top="config: {{add_dirs: [{value}]}}"),
    Field(
        "scenarios",
        "/scenarios/0/config/add_dirs/0",
        "folder",
        scenario="    config: {{add_dirs: [{value}]}}\n",
    ),
    Field(
        "scenarios",
        "/config/mcp_servers/srv/command",
        "program",
        top="config: {{mcp_servers: {{srv: {{command: {value}}}}}}}",
    ),
    Field(
        "scenarios",
        "/config/mcp_servers/srv/args/0",
        "program",
        top="config: {{mcp_servers: {{srv: {{command: python3, args: [{value}]}}}}}}",
    ),
    Field(
        "scenarios",
        "/scenarios/0/checks/0/judge/baseline_file",
        "file",
        scenario="    checks:\n      - judge: {{criteria: c, dialect: plugin_eval, "
        "baseline_file: {value}}}\n",
    ),
    Field("world", "/services/0/data", "fixture"),
    Field("triggers", "/skill_file", "file", top="skill_file: {value}"),
    Field("triggers", "/model_script", "file", top="model_script: {value}"),
    Field("triggers", "/distractors/0", "skill", top="distractors: [{value}]"),
]
"""Every field of a suite, world or model script that names a path in the suite's
repository (a model script names none)."""


# --- the ways out -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Attack:
    """One way a path leads out of the repository."""

    name: str
    values: dict[str, str]
    """The path written, by the kind of field (``*`` for every kind)."""
    said: Callable[[Layout, str], str]
    """How the message says where the path led, given the path written."""

    def value(self, kind: str) -> str | None:
        return self.values.get(kind, self.values.get("*"))


def _resolved(target: Callable[[Layout, str], Path]) -> Callable[[Layout, str], str]:
    return lambda layout, value: f"{value!r} resolves to {target(layout, value)},"


def _outside(layout: Layout, value: str) -> Path:
    """Where a relative path or a link of :func:`lay_out` leads: beside the repository."""
    return layout.tmp / value.replace("../../", "").replace("leakdir", "outside").replace(
        "leak", "secrets"
    )


ATTACKS = [
    Attack(
        "/proc/self/environ",
        {"*": "/proc/self/environ", "program": ""},
        _resolved(lambda layout, value: Path(f"/proc/{os.getpid()}/environ")),
    ),
    Attack("/etc/passwd", {"*": "/etc/passwd", "program": ""}, lambda layout, v: f"{v!r} is"),
    Attack(
        "../../secrets",
        {
            "file": "../../secrets",
            "program": "../../secrets",
            "folder": "../../outside",
            "skill": "../../outside/SKILL.md",
            "fixture": "../../secrets.json",
        },
        _resolved(_outside),
    ),
    Attack(
        "a link inside the repository pointing outside",
        {
            "file": "leak",
            "program": "leak",
            "folder": "leakdir",
            "skill": "leakdir/SKILL.md",
            "fixture": "leak.json",
        },
        _resolved(_outside),
    ),
]

CASES = [
    pytest.param(field, attack, id=f"{field.name} {attack.name}")
    for field in FIELDS
    for attack in ATTACKS
    if attack.value(field.kind)
]
"""Each field, each way out. An MCP server's command or argument may be an absolute path (a
program of the machine, ``/usr/bin/python3``): only a relative one names a file of the suite."""


def refused(layout: Layout, location: str, said: str) -> str:
    """The whole message of a path refused."""
    return (
        f"skilltest: error: {location}: {said} outside the suite's repository {layout.repo} "
        f"({GIT})\n  fix: name a file or folder inside {layout.repo} (a suite reads only its "
        "own repository; a symbolic link there must point inside it too)\n"
    )


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out + err


def assert_refused(code: int, shown: str, expected: str, argv: list[str]) -> None:
    assert code == 2, (argv, shown)
    assert expected in shown, (argv, shown)
    assert "Traceback" not in shown
    assert SECRET not in shown


def assert_each_refuses(
    commands: list[list[str]], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each command ends with exit 2 and ``expected`` (the whole message), the secret unshown."""
    for argv in commands:
        code, shown = run(argv, capsys)
        assert_refused(code, shown, expected, argv)


def eval_commands(claude: Path) -> list[list[str]]:
    """``validate`` and ``scenarios`` of the eval folder ``plugin/evals``."""
    return [["validate", "plugin/evals"], ["scenarios", "plugin/evals", "--claude", str(claude)]]


@pytest.mark.parametrize(("field", "attack"), CASES)
def test_a_path_outside_the_repository_is_refused(
    field: Field, attack: Attack, tmp_path, fake_claude, monkeypatch, capsys
):
    layout = lay_out(tmp_path)
    value = attack.value(field.kind)
    assert value
    for name, text in field.files(value).items():
        (layout.tests / name).write_text(text)
    monkeypatch.chdir(layout.repo)
    said = attack.said(layout, value)
    for argv in field.commands(fake_claude):
        expected = refused(layout, field.location(layout, argv[0]), said)
        assert_each_refuses([argv], expected, capsys)


# --- links inside the folders a suite names -------------------------------------------------


@dataclass(frozen=True)
class Linked:
    """A folder a suite names, holding a link that leads out of the repository."""

    name: str
    files: dict[str, str]
    """The files of ``repo/`` (the suite is ``tests/suite.yaml``)."""
    link: str
    """The link, in ``repo/``, to ``secrets`` beside the repository."""
    command: str
    """The layer command that reads the suite (besides ``validate``)."""
    location: str
    """Where the message says the link was found."""
    shown_link: str = ""
    """The link as the message names it, when not ``{repo}/<link>``."""


def _plugin(name: str) -> dict[str, str]:
    return {
        f"{name}/.claude-plugin/plugin.json": '{"name": "demo-plugin"}',
        f"{name}/skills/demo/SKILL.md": SKILL,
    }


LINKED = [
    Linked(
        "a skill found by its name",
        {
            "skills/linked/SKILL.md": SKILL,
            "tests/suite.yaml": PRESSURE.format(field="").replace("demo", "linked", 1),
        },
        "skills/linked/references/notes.md",
        "pressure",
        "tests/suite.yaml#/skill",
    ),
    Linked(
        "a skill's folder, through a link to a folder inside the repository",
        {
            "skills/linked/SKILL.md": SKILL,
            "shared/README.md": "shared",
            "tests/suite.yaml": TRIGGERS.format(field="").replace("demo", "linked", 1),
        },
        "shared/leak.md",
        "triggers",
        "tests/suite.yaml#/skill",
        shown_link="skills/linked/shared/leak.md",
    ),
    Linked(
        "a distractor found by its name",
        {
            "skills/linked/SKILL.md": SKILL,
            "tests/suite.yaml": TRIGGERS.format(field="distractors: [linked]"),
        },
        "skills/linked/notes.md",
        "triggers",
        "tests/suite.yaml#/distractors/0",
    ),
    Linked(
        "a pressure suite's plugin",
        {**_plugin("plugin"), "tests/suite.yaml": PRESSURE.format(field="plugin: ../plugin")},
        "plugin/skills/demo/notes.md",
        "pressure",
        "tests/suite.yaml#/plugin",
    ),
    Linked(
        "a scenario suite's plugin",
        {
            **_plugin("plugin"),
            "tests/suite.yaml": SCENARIOS.format(field="plugin: ../plugin", scenario=""),
        },
        "plugin/hooks/notes.md",
        "scenarios",
        "tests/suite.yaml#/plugin",
    ),
    Linked(
        "a workspace",
        {
            "tests/fixture/README.md": "fixture",
            "tests/suite.yaml": SCENARIOS.format(field="", scenario="    workspace: fixture\n"),
        },
        "tests/fixture/data/notes.txt",
        "scenarios",
        "tests/suite.yaml#/scenarios/0/workspace",
    ),
    Linked(
        "a folder the agent may read",
        {
            "docs/README.md": "docs",
            "tests/suite.yaml": SCENARIOS.format(
                field="config: {add_dirs: [../docs]}", scenario=""
            ),
        },
        "docs/notes.md",
        "scenarios",
        "tests/suite.yaml#/config/add_dirs/0",
    ),
    Linked(
        "a mocks folder the suite names",
        {
            "tests/stubs/desk/lookup.md": "---\n---\nok",
            "tests/suite.yaml": SCENARIOS.format(field="mocks: stubs", scenario=""),
        },
        "tests/stubs/desk/assign.md",
        "scenarios",
        "tests/suite.yaml#/mocks",
    ),
    Linked(
        "the mocks folder beside the suite",
        {
            "tests/mocks/desk/lookup.md": "---\n---\nok",
            "tests/suite.yaml": SCENARIOS.format(field="", scenario=""),
        },
        "tests/mocks/desk/assign.md",
        "scenarios",
        "tests/mocks",
    ),
]


@pytest.mark.parametrize("case", LINKED, ids=[case.name for case in LINKED])
def test_a_link_out_of_the_repository_in_a_named_folder_is_refused(
    case: Linked, tmp_path, fake_claude, monkeypatch, capsys
):
    layout = lay_out(tmp_path)
    write_files(layout.repo, case.files)
    link = layout.repo / case.link
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(layout.tmp / "secrets")
    if case.shown_link:  # the skill reaches the link through a link to a folder in the repo
        (layout.repo / "skills" / "linked" / "shared").symlink_to(layout.repo / "shared")
    shown_link = layout.repo / (case.shown_link or case.link)
    location = case.location
    expected = (
        f"skilltest: error: {location}: {shown_link} is a symbolic link to {layout.tmp}/secrets, "
        f"outside the suite's repository {layout.repo} ({GIT})\n  fix: put the file itself "
        f"there, or point the link inside {layout.repo} (a suite reads only its own "
        "repository)\n"
    )
    monkeypatch.chdir(layout.repo)
    layer = [case.command, "tests/suite.yaml"]
    if case.command != "pressure":
        layer += ["--claude", str(fake_claude)]
    assert_each_refuses([["validate", "tests/suite.yaml"], layer], expected, capsys)


# --- a plugin's eval cases ------------------------------------------------------------------

EVAL_LINKS = [
    "plugin/evals/spike/prompt.md",
    "plugin/evals/spike/case.yaml",
    "plugin/evals/spike/graders/secret.md",
    "plugin/evals/mocks/desk/lookup.md",
    "plugin/evals/spike/mocks/desk/assign.md",
    "plugin/skills/demo/references/notes.md",
]
"""Files of an eval folder, or of the plugin holding it, that are links out of the repository."""


@pytest.mark.parametrize("link", EVAL_LINKS)
def test_a_link_out_of_the_repository_among_eval_cases_is_refused(
    link: str, tmp_path, fake_claude, monkeypatch, capsys
):
    layout = lay_out(tmp_path)
    plugin = write_files(layout.repo, _plugin("plugin")) / "plugin"
    case = plugin / "evals" / "spike"
    (case / "graders").mkdir(parents=True)
    if not link.endswith("prompt.md"):
        (case / "prompt.md").write_text("Check the demo service.")
    (case / "graders" / "said.md").write_text("---\ntype: regex\n---\nlgtm")
    path = layout.repo / link
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(layout.tmp / "secrets")
    # The plugin holds the eval folder: its links are checked first, the eval folder's then.
    where = plugin
    expected = (
        f"skilltest: error: {where}: {path} is a symbolic link to {layout.tmp}/secrets, outside "
        f"the suite's repository {layout.repo} ({GIT})\n  fix: put the file itself there, or "
        f"point the link inside {layout.repo} (a suite reads only its own repository)\n"
    )
    monkeypatch.chdir(layout.repo)
    assert_each_refuses(eval_commands(fake_claude), expected, capsys)


CONTEXT_FIELDS = {
    "context.scaffold_script": "context: {{scaffold_script: {value}}}",
    "context.history_file": "context: {{history_file: {value}}}",
    "context.add_dirs/0": "context: {{add_dirs: [{value}]}}",
}
"""The paths an eval case names, which Claude Code's plugin eval keeps inside the case folder
(or the plugin) with its own message."""


@pytest.mark.parametrize("key", list(CONTEXT_FIELDS))
@pytest.mark.parametrize("value", ["/proc/self/environ", "/etc/passwd", "../../../../secrets"])
def test_a_path_an_eval_case_names_outside_its_folder_is_refused(
    key: str, value: str, tmp_path, fake_claude, monkeypatch, capsys
):
    layout = lay_out(tmp_path)
    case = write_files(layout.repo, _plugin("plugin")) / "plugin" / "evals" / "spike"
    case.mkdir(parents=True)
    (case / "case.yaml").write_text(
        'schema_version: "1.0"\nname: spike\n'
        + CONTEXT_FIELDS[key].format(value=value)
        + "\nexecution: {prompt: Check the demo service.}\n"
        + "graders:\n  - {type: regex, name: said, pattern: lgtm}\n"
    )
    expected = (
        f'skilltest: error: {case}/case.yaml ({key}): case "spike": path '
        f'"{value}" escapes the case directory (`..` or an absolute path) — it must name '
        "something inside it\n"
    )
    monkeypatch.chdir(layout.repo)
    assert_each_refuses(eval_commands(fake_claude), expected, capsys)


# --- what stays allowed -----------------------------------------------------------------------


def test_paths_and_links_inside_the_repository_are_read(tmp_path, monkeypatch, capsys):
    """A skill named by a path from the repository's root, a link to a file elsewhere in the
    repository, a model script above the suite's folder: all inside, all read."""
    layout = lay_out(tmp_path)
    (layout.repo / "shared").mkdir()
    (layout.repo / "shared" / "model.yaml").write_text("schema_version: 1\ndefault: {text: lgtm}\n")
    (layout.tests / "script.yaml").symlink_to(layout.repo / "shared" / "model.yaml")
    (layout.repo / "skills" / "demo" / "references").mkdir()
    (layout.repo / "skills" / "demo" / "references" / "shared").symlink_to(layout.repo / "shared")
    (layout.tests / "suite.yaml").write_text(
        PRESSURE.format(field="skill_file: skills/demo/SKILL.md\nmodel_script: script.yaml")
    )
    (layout.tests / "other.yaml").write_text(
        PRESSURE.format(field=f"model_script: {layout.repo}/shared/model.yaml").replace(
            "id: s", "id: t"
        )
    )
    monkeypatch.chdir(layout.repo)
    code, shown = run(["validate", "tests/suite.yaml", "tests/other.yaml"], capsys)
    assert code == 0, shown
    assert "2 file(s) valid" in shown


def test_a_suite_in_no_git_work_tree_reads_the_current_folder_or_its_own(
    tmp_path, monkeypatch, capsys
):
    """Outside any git work tree the suite's repository is the current folder when the suite
    lies in it, else the suite's own folder."""
    project = tmp_path.resolve() / "project"
    (project / "skills" / "demo").mkdir(parents=True)
    (project / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    (project / "model.yaml").write_text("schema_version: 1\ndefault: {text: lgtm}\n")
    suite = project / "tests" / "suite.yaml"
    (suite.parent / "skills" / "demo").mkdir(parents=True)
    (suite.parent / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    suite.write_text(PRESSURE.format(field="model_script: ../model.yaml"))
    monkeypatch.chdir(project)
    code, shown = run(["validate", "tests/suite.yaml"], capsys)
    assert code == 0, shown
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, shown = run(["validate", str(suite)], capsys)
    assert code == 2
    assert (
        f"skilltest: error: {suite}#/model_script: '../model.yaml' resolves to "
        f"{project}/model.yaml, outside the suite's repository {project / 'tests'} (the "
        "suite's folder: it is in no git work tree)\n"
    ) in shown


def test_the_readme_shows_the_message_as_it_is_printed():
    """The README's example of a refused path is the message the rule prints for it."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index("**Suites read only their own repository.**")
    opening = readme.index("```\n", start) + 4
    shown = readme[opening : readme.index("\n```", opening)]
    repository = Repository(Path("/home/ci/work/repo"), GIT)
    with pytest.raises(SuiteError) as caught:
        repository.inside(
            Path("/home/ci/work/repo/tests/skill-pressure/../../../secrets"),
            written="../../../secrets",
            location="tests/skill-pressure/lgtm.yaml#/skill_file",
        )
    assert shown == f"skilltest: error: {caught.value}"


def test_a_git_folder_without_head_above_a_suite_is_no_repository(tmp_path, monkeypatch, capsys):
    """A ``.git`` folder holding no ``HEAD`` (what a sandbox leaves in the temporary directory
    as mount points for the hooks it protects) does not make the folder a repository: the
    suite's own folder is, and a path leaving it is refused as outside it."""
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    project = tmp_path.resolve() / "project"
    (project / "model.yaml").parent.mkdir(parents=True)
    (project / "model.yaml").write_text("schema_version: 1\ndefault: {text: lgtm}\n")
    suite = project / "tests" / "suite.yaml"
    (suite.parent / "skills" / "demo").mkdir(parents=True)
    (suite.parent / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    suite.write_text(PRESSURE.format(field="model_script: ../model.yaml"))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    code, shown = run(["validate", str(suite)], capsys)
    assert code == 2, shown
    assert f"outside the suite's repository {project / 'tests'}" in shown
    assert "(the suite's folder: it is in no git work tree)" in shown
