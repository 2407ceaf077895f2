"""`skilltest lint` over snapshots of public skill repositories (tests/lint/fixtures/README.md
says what each holds and why): exactly the real breakage is reported, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from skilltest.cli import main

FIXTURES = Path(__file__).with_name("fixtures")

CASE = "whose name differs in case (found on macOS and Windows, not on Linux)"


@pytest.mark.parametrize(
    ("repository", "code", "expected"),
    [
        (
            "anthropics-skills",
            1,
            # The links to REFERENCE.md and FORMS.md fail on Linux; the claude-api description
            # is over the format's limit; the template's name is not its folder's. Not reported:
            # the glob shared/managed-agents-*.md, scripts/office/soffice.py named in prose and
            # run with python, eval-viewer/generate_review.py run with python, and the
            # marketplace's three strict: false plugins are plugins (3, not 0).
            f"skills/pdf/SKILL.md:8: REFERENCE.md: no such file in skills/pdf; the file is reference.md, {CASE}\n"
            "  fix: write reference.md, or rename the file to REFERENCE.md\n"
            f"skills/pdf/SKILL.md:8: FORMS.md: no such file in skills/pdf; the file is forms.md, {CASE}\n"
            "  fix: write forms.md, or rename the file to FORMS.md\n"
            "skills/claude-api/SKILL.md:3: description is 1068 characters long, more than the 1024 allowed\n"
            "  fix: shorten it to what decides when the skill applies; move details to the body\n"
            "template/SKILL.md:2: name 'template-skill' does not match the skill's folder 'template'\n"
            "  fix: rename one of the two; Claude Code lists the skill as 'template', after its folder\n"
            "\n"
            "18 skills, 3 plugins, 1 marketplace: 4 findings\n",
        ),
        (
            "obra-superpowers",
            0,
            # A plugin at the root that its own marketplace lists: one plugin, its 14 skills.
            "14 skills, 1 plugin, 1 marketplace: no findings\n",
        ),
    ],
)
def test_lint_reports_exactly_the_real_breakage(repository, code, expected, capsys, monkeypatch):
    monkeypatch.chdir(FIXTURES / repository)
    assert main(["lint"]) == code
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (expected, "")


def test_one_plugin_of_the_anthropic_marketplace(capsys, monkeypatch):
    monkeypatch.chdir(FIXTURES / "anthropics-skills")
    assert main(["lint", "--plugin", "example-skills"]) == 0
    assert capsys.readouterr().out == "12 skills, 1 plugin, 1 marketplace: no findings\n"
