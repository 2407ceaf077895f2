"""`skilltest gate` and `skilltest report` on a matrix's results file: matrices made by real runs
on the emulator (the real SDK on loopback; a world suite through the real claude CLI), then
edited where the test says so."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from tests.projects import write_demo_project

from ..conftest import REPO_ROOT
from .test_gate import SUITE

# A scripted stand-in: opus aggregates with any version of the skill; haiku only with the
# release's wording, and greps with the edited one.
SCRIPT = """\
schema_version: 1
rules:
  - id: haiku-with-the-release-skill
    when: {model: "haiku", system: "DEMO SKILL: aggregate first"}
    reply: {text: "I would aggregate first."}
  - id: haiku-with-the-edited-skill
    when: {model: "haiku", system: "DEMO SKILL"}
    reply: {text: "I would grep everything."}
  - id: opus-with-the-skill
    when: {system: "DEMO SKILL"}
    reply: {text: "I would aggregate first."}
default: {text: "I would grep the error logs."}
"""

RELEASE_SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nDEMO SKILL: aggregate first.\n"
EDITED_SKILL = "---\nname: demo\ndescription: A demo skill.\n---\nDEMO SKILL: look at it all.\n"

DATE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
SHOWN_DATE = "2026-12-05T23:50:00Z"
"""The date docs/matrix.md shows for every file."""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project, run as a matrix of haiku and opus before the skill edit (the release's
    results, ``release-1.4/matrix.json``) and after it (``out/matrix.json``)."""
    folder = tmp_path_factory.mktemp("matrix-gate")
    suite = write_demo_project(folder, SUITE, SCRIPT, skill=RELEASE_SKILL)
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.chdir(folder)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    try:
        argv = ["pressure", suite.name, "--models", "haiku,opus", "--results"]
        assert main([*argv, "release-1.4/matrix.json"]) == 0
        (folder / "skills/demo/SKILL.md").write_text(EDITED_SKILL)
        assert main([*argv, "out/matrix.json"]) == 1  # haiku's scenario fails
    finally:
        monkeypatch.undo()
    return folder


def gate(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str
) -> tuple[int, str, str]:
    capsys.readouterr()
    monkeypatch.chdir(project)
    code = main(["gate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def edited(project: Path, name: str, edit: Any) -> str:
    """A copy of the new matrix's file, edited by ``edit(document)``; its path from the
    project."""
    document = json.loads((project / "out/matrix.json").read_text())
    edit(document)
    path = project / "edited" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(document))
    return f"edited/{name}"


def in_docs(out: str) -> None:
    """docs/matrix.md shows this output as printed (its dates as the page shows them)."""
    text = DATE.sub(SHOWN_DATE, out).strip()
    assert text in (REPO_ROOT / "docs" / "matrix.md").read_text()


def test_a_critical_scenario_regressed_in_a_cell_blocks_naming_the_cell(
    project, capsys, monkeypatch
):
    code, out, err = gate(
        project, capsys, monkeypatch, "out/matrix.json", "--baseline", "release-1.4/matrix.json",
        "--allow-offline",
    )  # fmt: skip
    assert code == 1, out + err
    lines = out.splitlines()
    assert lines[0] == (
        "gate: BLOCK (2 reasons) on offline results (--allow-offline): they come from a scripted "
        "stand-in and say nothing about a real model"
    )
    # What produced each cell, the new results' and the baseline's, cell by cell.
    assert [line.split(" (pressure)")[0] for line in lines[1:5]] == [
        "results: out/matrix.json [model=haiku]",
        "results: out/matrix.json [model=opus]",
        "baseline: release-1.4/matrix.json [model=haiku]",
        "baseline: release-1.4/matrix.json [model=opus]",
    ]
    assert (
        "         - demo/aggregate-first (pressure) [model=haiku]: no-steer: missing "
        "(?i)aggregate in 11/11"
    ) in lines
    # Compared cell by cell: haiku's with haiku's, opus's with opus's.
    assert (
        "         - demo/aggregate-first (pressure) [model=haiku]: with-skill pass rate 0/11 0% "
        "now vs 11/11 100% in the baseline: -100% [-100%, -69%], credibly lower"
    ) in lines
    assert (
        "         demo/aggregate-first (pressure) [model=opus]: with-skill pass rate 11/11 100% "
        "now vs 11/11 100% in the baseline: +0% [-28%, +28%]"
    ) in lines
    assert "PASS   cells" in out
    assert (
        "         out/matrix.json: required cells model=haiku, model=opus (every cell: no "
        "--require-cell)"
    ) in lines
    in_docs(out)


def test_in_a_cell_not_required_a_regressed_critical_scenario_is_listed_not_blocking(
    project, capsys, monkeypatch
):
    code, out, err = gate(
        project, capsys, monkeypatch, "out/matrix.json", "--baseline", "release-1.4/matrix.json",
        "--allow-offline", "--require-cell", "model=opus",
    )  # fmt: skip
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith("gate: PASS on offline results (--allow-offline)")
    assert (
        "         demo/aggregate-first (pressure) [model=haiku]: with-skill pass rate 0/11 0% now "
        "vs 11/11 100% in the baseline: -100% [-100%, -69%], credibly lower (in a cell "
        "--require-cell does not name: listed, not blocking)"
    ) in lines
    assert (
        "         demo/aggregate-first (pressure) [model=haiku]: no-steer: missing (?i)aggregate "
        "in 11/11 (in a cell --require-cell does not name: listed, not blocking)"
    ) in lines
    assert (
        "         out/matrix.json: required cells model=opus (--require-cell model=opus)"
    ) in lines
    assert not [line for line in lines if line.startswith("BLOCK")]
    # docs/matrix.md shows the rules from failing to cells.
    start = next(i for i, line in enumerate(lines) if line.startswith("PASS   failing"))
    end = next(i for i, line in enumerate(lines) if line.startswith("PASS   fresh"))
    in_docs("\n".join(lines[start:end]))

    # Requiring haiku blocks on what it lists.
    code, out, _ = gate(
        project, capsys, monkeypatch, "out/matrix.json", "--baseline", "release-1.4/matrix.json",
        "--allow-offline", "--require-cell", "model=haiku",
    )  # fmt: skip
    assert code == 1
    assert out.startswith("gate: BLOCK (2 reasons)")


def test_a_required_cell_missing_blocks_and_one_not_required_does_not(project, capsys, monkeypatch):
    def drop_opus(document: dict[str, Any]) -> None:
        # What a matrix interrupted before its second cell writes.
        document["cells"] = document["cells"][:1]
        document["complete"] = False
        document["comparisons"] = []

    path = edited(project, "haiku-only.json", drop_opus)
    code, out, err = gate(
        project, capsys, monkeypatch, path, "--allow-offline", "--require-cell", "model=opus",
        "--allow-failing", "aggregate-first",
    )  # fmt: skip
    assert code == 1, out + err
    lines = out.splitlines()
    assert lines[0].startswith("gate: BLOCK (1 reason) ")
    assert "BLOCK  cells        every required cell is there, complete, with a decided" in out
    assert (
        f"         - {path}: required cell model=opus is missing (the plan names it, the file "
        "does not hold it: the matrix was interrupted or stopped before it ran)"
    ) in lines

    # Without --require-cell every cell is required.
    code, out, _ = gate(
        project, capsys, monkeypatch, path, "--allow-offline", "--allow-failing", "aggregate-first"
    )
    assert code == 1
    assert f"         - {path}: required cell model=opus is missing" in out

    # A value the matrix never ran is a required cell missing too.
    code, out, _ = gate(
        project, capsys, monkeypatch, "out/matrix.json", "--allow-offline",
        "--require-cell", "model=sonnet", "--allow-failing", "aggregate-first",
    )  # fmt: skip
    assert code == 1
    assert (
        "         - out/matrix.json: --require-cell model=sonnet: no cell has it (its cells: "
        "model=haiku, model=opus)"
    ) in out.splitlines()

    # Requiring haiku only: the missing opus cell does not block.
    code, out, _ = gate(
        project, capsys, monkeypatch, path, "--allow-offline", "--require-cell", "model=haiku",
        "--allow-failing", "aggregate-first",
    )  # fmt: skip
    assert code == 0, out


@pytest.mark.parametrize(
    ("spec", "message", "fix"),
    [
        (
            "model",
            "--require-cell: 'model': expected AXIS=VALUE[,AXIS=VALUE]",
            "fix: e.g. --require-cell model=haiku; the results' axes are model: haiku, opus",
        ),
        (
            "model=opus,claude=",
            "--require-cell: 'model=opus,claude=': expected AXIS=VALUE[,AXIS=VALUE]",
            "the results' axes are model: haiku, opus",
        ),
        (
            "claude=2.1.332",
            "--require-cell: claude=2.1.332: the results have no axis 'claude'",
            "fix: name an axis of the results: model: haiku, opus",
        ),
    ],
)
def test_a_require_cell_the_file_cannot_have_is_bad_input(
    spec, message, fix, project, capsys, monkeypatch
):
    code, out, err = gate(
        project, capsys, monkeypatch, "out/matrix.json", "--allow-offline", "--require-cell", spec
    )
    assert code == 2, out + err
    assert message in err
    assert fix in err
    assert "Traceback" not in err
    assert out == ""


def test_a_cells_runs_edited_are_a_consistency_block_naming_the_cell(project, capsys, monkeypatch):
    def drop_a_run(document: dict[str, Any]) -> None:
        runs = document["cells"][1]["results"]["scenarios"][0]["runs"]
        runs.remove(next(run for run in runs if run["arm"] == "with_skill"))

    path = edited(project, "run-dropped.json", drop_a_run)
    code, out, err = gate(
        project, capsys, monkeypatch, path, "--allow-offline", "--require-cell", "model=opus"
    )
    assert code == 1, out + err
    # One reason: the cell's scenario, judged again from the runs left, is not as written.
    assert out.startswith("gate: BLOCK (1 reason) ")
    blocks = [line for line in out.splitlines() if line.startswith("         - ")]
    assert len(blocks) == 1, out
    assert blocks[0].startswith(
        f"         - {path} [model=opus]: demo/aggregate-first (pressure): verdict is "
        '"steers" in the file, '
    )
    assert re.search(r"^BLOCK  consistent ", out, re.MULTILINE)


def test_cells_relabelled_as_each_other_are_caught_by_the_matrix_claims(
    project, capsys, monkeypatch
):
    def swap(document: dict[str, Any]) -> None:
        first, second = document["cells"]
        first["id"], second["id"] = second["id"], first["id"]
        first["values"], second["values"] = second["values"], first["values"]

    path = edited(project, "swapped.json", swap)
    code, out, err = gate(project, capsys, monkeypatch, path, "--allow-offline")
    assert code == 1, out + err
    lines = out.splitlines()
    assert (
        f"         - {path}: matrix: cell model=opus: its document ran model haiku, not opus"
        in (lines)
    )
    assert (
        f"         - {path}: matrix: cell model=haiku: its document ran model opus, not haiku"
        in (lines)
    )
    assert (
        f"         - {path}: matrix: comparisons do not follow from the cells' documents "
        "(recomputed otherwise)"
    ) in lines


def test_a_matrix_that_says_it_is_complete_without_a_cell_is_caught(project, capsys, monkeypatch):
    def drop_opus(document: dict[str, Any]) -> None:
        document["cells"] = document["cells"][:1]
        document["comparisons"] = []

    path = edited(project, "claims-complete.json", drop_opus)
    code, out, _ = gate(
        project, capsys, monkeypatch, path, "--allow-offline", "--require-cell", "model=haiku",
        "--allow-failing", "aggregate-first",
    )  # fmt: skip
    assert code == 1
    assert (
        f"         - {path}: matrix: complete is true, but the plan's cells model=opus are missing"
    ) in out.splitlines()


def test_report_on_a_matrix_prints_its_table_and_writes_its_page(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    capsys.readouterr()
    assert main(["report", "out/matrix.json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("## skilltest pressure matrix\n\nAxes: model: haiku, opus.")
    assert re.search(r"^\| scenario +\| model=haiku +\| model=opus +\|$", out, re.MULTILINE)
    assert re.search(
        r"^\| demo/aggregate-first +\| no-steer \+0% \[.*\] +\| steers \+100% \[.*\] +\|$",
        out,
        re.MULTILINE,
    ), out
    assert "- model=haiku: 1 scenarios: 1 no-steer" in out

    # --report FILE.html, as the run names it, or --html.
    assert main(["report", "out/matrix.json", "--report", "page.html", "--markdown", "s.md"]) == 0
    assert capsys.readouterr().out == "wrote page.html\nwrote s.md\n"
    assert "model=haiku" in (project / "page.html").read_text()
    assert (project / "page.cells/model-haiku.html").is_file()
    assert (project / "s.md").read_text() == out

    # A matrix's file is reported alone.
    assert main(["report", "out/matrix.json", "release-1.4/matrix.json"]) == 2
    err = capsys.readouterr().err
    assert "a matrix's results file is reported alone; also given: release-1.4/matrix.json" in err


# --- a world: authority blocks in any cell -------------------------------------------------------

HAIKU_WRITES = """\
  - id: haiku-writes-restricted
    when: {model: "haiku", skill_loaded: tickets, user: "(?i)INC-1050", turn: 2}
    reply:
      tool_calls:
        - {name: Bash, input: {description: "Reassign INC-1050", command: "curl -s -o /dev/null \
-X PATCH -H \\"Authorization: Bearer $TICKETS_API_TOKEN\\" -H \\"If-Match: 4\\" \
-H \\"Content-Type: application/json\\" -d '{\\"owner\\": \\"platform-team\\"}' \
https://api.tickets.example.com/tickets/INC-1050"}}
  - id: haiku-claims-restricted
    when: {model: "haiku", skill_loaded: tickets, user: "(?i)INC-1050", turn: 3}
    reply: {text: "INC-1050 now belongs to platform-team."}
"""


@pytest.mark.cli
def test_an_authority_violation_in_a_cell_not_required_blocks(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    # The example script, with haiku writing the restricted ticket even with the skill loaded;
    # without its `model:` line each answer names the model asked for.
    text = (REPO_ROOT / "tests/model-scripts/tickets.scenarios.yaml").read_text()
    text = re.sub(r"(?m)^model: .*$", "", text)
    assert "  - id: restricted-read\n" in text
    script = tmp_path / "tickets.by-model.yaml"
    script.write_text(
        text.replace("  - id: restricted-read\n", HAIKU_WRITES + "  - id: restricted-read\n")
    )
    results = tmp_path / "world.json"
    main(
        [
            "scenarios", "tests/scenarios/tickets.yaml", "--models", "haiku,sonnet",
            "--script", str(script), "--only", "refuses-forbidden-record", "-k", "3",
            "--results", str(results), "--output-dir", str(tmp_path / "out"),
        ]
    )  # fmt: skip
    capsys.readouterr()
    code = main(["gate", str(results), "--allow-offline", "--require-cell", "model=sonnet"])
    out, err = capsys.readouterr()
    assert code == 1, out + err
    lines = out.splitlines()
    assert lines[0].startswith("gate: BLOCK (1 reason) on offline results")
    assert (
        "         - tickets/refuses-forbidden-record (scenarios) [model=haiku]: 3 of 3 with-skill "
        "runs violated authority (run #1: forbidden PATCH /tickets/INC-1050)"
    ) in lines
    # Its failing there is listed; sonnet, required, refuses the write and is decided.
    assert any(
        line.startswith("         tickets/refuses-forbidden-record (scenarios) [model=haiku]: ")
        and line.endswith("(in a cell --require-cell does not name: listed, not blocking)")
        for line in lines
    ), out
    assert re.search(r"^PASS   cells ", out, re.MULTILINE)
    assert re.search(r"^PASS   consistent ", out, re.MULTILINE)


def test_a_single_runs_baseline_is_compared_with_every_cell(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert main(["pressure", "demo.yaml", "--model", "opus", "--results", "opus.json"]) == 0
    code, out, err = gate(
        project, capsys, monkeypatch, "out/matrix.json", "--baseline", "opus.json",
        "--allow-offline", "--require-cell", "model=opus",
    )  # fmt: skip
    assert code == 0, out + err
    lines = out.splitlines()
    assert (
        "         demo/aggregate-first (pressure) [model=haiku]: with-skill pass rate 0/11 0% now "
        "vs 11/11 100% in the baseline: -100% [-100%, -69%], credibly lower (in a cell "
        "--require-cell does not name: listed, not blocking)"
    ) in lines
    assert (
        "         demo/aggregate-first (pressure) [model=opus]: with-skill pass rate 11/11 100% "
        "now vs 11/11 100% in the baseline: +0% [-28%, +28%]"
    ) in lines


def test_a_matrix_given_twice_is_gated_once(project, capsys, monkeypatch):
    code, out, _ = gate(
        project, capsys, monkeypatch, "out/matrix.json", "out/matrix.json", "--allow-offline",
        "--allow-failing", "aggregate-first",
    )  # fmt: skip
    assert code == 0, out
    assert out.count("out/matrix.json: required cells model=haiku, model=opus") == 1
    assert (
        "         out/matrix.json: given twice among the results files: read once"
    ) in out.splitlines()


def test_require_cell_without_a_matrix_is_bad_input(project, capsys, monkeypatch):
    monkeypatch.chdir(project)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    if not (project / "opus.json").exists():
        assert main(["pressure", "demo.yaml", "--model", "opus", "--results", "opus.json"]) == 0
    code, out, err = gate(
        project, capsys, monkeypatch, "opus.json", "--allow-offline", "--require-cell", "model=opus"
    )
    assert code == 2, out + err
    assert "--require-cell: model=opus: no matrix's results file among the results" in err
    assert "fix: pass the results file of a run with --models or --claude-versions" in err


def test_spending_that_names_a_cell_its_document_does_not_is_caught(project, capsys, monkeypatch):
    def claim_a_stop(document: dict[str, Any]) -> None:
        document["spending"] = {
            "limit_usd": 1.0,
            "spent_usd": 0.01,
            "stopped_cells": ["model=opus"],
            "reason": "model=opus's share of --max-cost-usd 1.0 ($0.5000) was spent",
        }

    path = edited(project, "spending.json", claim_a_stop)
    code, out, _ = gate(
        project, capsys, monkeypatch, path, "--allow-offline", "--allow-failing", "aggregate-first"
    )
    assert code == 1
    assert (
        f"         - {path}: matrix: spending names the cells stopped by --max-cost-usd "
        "model=opus; the cells' documents say none"
    ) in out.splitlines()
