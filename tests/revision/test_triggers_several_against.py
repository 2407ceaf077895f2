"""`skilltest triggers --against REF --against REF`: the skill at each revision as an arm of
its own, each compared with the current skill per query.

A test repository holds three commits of one skill. The emulator's ``described`` condition
loads the skill whose listed description fits the query, so whether a query fires depends on
which revision's SKILL.md the sandbox installed: HEAD fires on both queries, HEAD~1 only on the
one that should not fire, HEAD~2 only on the one that should.
"""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from skilltest.report.provenance import Provenance
from skilltest.triggers.report import results_document
from skilltest.triggers.verdict import SuiteResult, against_revisions
from tests.gate.test_gate import blocked
from tests.layers import run_layer
from tests.report.documents import write_results
from tests.revision.test_triggers_against import API, _query

from .conftest import git

PROJECT = Path(__file__).with_name("triggers-against")
"""The suite (demo.yaml: ``aggregate`` should fire, ``tables`` should not) and the model
script (model.yaml)."""

SKILLS = (
    "Aggregate loki error counts by service.",  # HEAD~2: fires on aggregate only
    "Format markdown tables neatly.",  # HEAD~1: fires on tables only
    "Aggregate loki error counts and format markdown tables.",  # HEAD: fires on both
)


@pytest.fixture
def three(tmp_path: Path) -> Path:
    """The suite and model script, then one commit per description of ``SKILLS``."""
    root = shutil.copytree(PROJECT, tmp_path / "repo")
    git(root, "init", "-q")
    skill = root / "skills" / "demo" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    for description in SKILLS:
        skill.write_text(f"---\nname: demo\ndescription: {description}\n---\nBody.\n")
        git(root, "add", ".")
        git(root, "commit", "-q", "-m", description)
    return root


@pytest.mark.cli
def test_each_revision_is_compared_with_the_current_skill(three, tmp_path, capsys, claude_bin):
    markdown = tmp_path / "summary.md"
    html = tmp_path / "report.html"
    options = ["--claude", claude_bin, "--backend", "emulator", "-j", "2"]
    revisions = ["--against", "HEAD~1", "--against", "HEAD~2"]
    junit = tmp_path / "junit.xml"
    reports = ["--markdown", markdown, "--junit", junit]
    code = run_layer("triggers", three / "demo.yaml", tmp_path, *options, *revisions, *reports)
    out = capsys.readouterr().out
    # The current skill fires on the query that should not fire: a false trigger fails the run.
    assert code == 1, out
    lines = out.splitlines()
    # A column pair per REF: the rate at REF, then the current rate minus it.
    header = next(line for line in lines if line.startswith("query") and "vs HEAD~1" in line)
    assert header.split() == [
        "query",
        "expected",
        "current",
        "HEAD~1",
        "vs",
        "HEAD~1",
        "HEAD~2",
        "vs",
        "HEAD~2",
    ]
    aggregate = next(line for line in lines if line.startswith("demo/aggregate  fire"))
    assert aggregate.split("  ")[-1].strip().startswith("inconclusive +0%"), aggregate
    assert "0/6 0% [0%–46%]      improved +100% [+47%, +100%]" in aggregate
    tables = next(line for line in lines if line.startswith("demo/tables     no fire"))
    # HEAD~2 fired 0/6 on it, the current skill 6/6: regressed against HEAD~2 alone.
    assert "inconclusive +0% [-46%, +46%]" in tables
    assert tables.endswith("0/6 0% [0%–46%]      regressed +100% [+47%, +100%]"), tables
    # A count line per REF.
    assert "against HEAD~1: 1 improved, 0 neutral, 0 regressed, 1 inconclusive" in lines
    assert "against HEAD~2: 0 improved, 0 neutral, 1 regressed, 1 inconclusive" in lines
    # The skill at each REF ran as a variant of its own, listed but judging nothing.
    assert "demo/aggregate (previous)    fire      6  0/6 0% [0%–46%]             miss" in lines
    assert "demo/tables (previous-2)     no fire   6  0/6 0% [0%–46%]             pass" in lines

    results = tmp_path / "results.json"
    data = read_results(results, "triggers")
    suites = data["suites"]
    assert [s["variant"] for s in suites] == ["current", "previous", "previous-2"]
    assert [s["description"] for s in suites] == [SKILLS[2], SKILLS[1], SKILLS[0]]
    by_id = {q["id"]: q for q in suites[0]["queries"]}
    tables_revisions = by_id["tables"]["revisions"]
    assert [(r["ref"], r["arm"]) for r in tables_revisions] == [
        ("HEAD~1", "previous"),
        ("HEAD~2", "previous-2"),
    ]
    assert [r["against"]["verdict"] for r in tables_revisions] == ["inconclusive", "regressed"]
    assert tables_revisions[1]["against"]["delta"] == 1.0
    assert tables_revisions[1]["previous"]["fired"] == 0
    # A reader of one revision finds the first REF's comparison where it always was.
    assert by_id["tables"]["against"] == tables_revisions[0]["against"]
    assert by_id["aggregate"]["against"]["verdict"] == "improved"

    # The Markdown summary and the HTML report count each REF.
    summary = markdown.read_text()
    assert "against HEAD~1: 1 improved" in summary
    assert "against HEAD~2: 0 improved, 0 neutral, 1 regressed" in summary
    assert "HEAD~1: inconclusive +0% [-46%, +46%]; HEAD~2: regressed +100% [+47%, +100%]" in (
        summary
    )
    assert main(["report", str(results), "--html", str(html)]) == 0
    page = html.read_text()
    assert "against HEAD~1: 1 improved" in page
    assert "against HEAD~2: 0 improved, 0 neutral, 1 regressed" in page
    assert "HEAD~2: regressed +100% [+47%, +100%]" in page
    # JUnit: the current skill's queries only, each with a property per REF.
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert sorted(cases) == ["aggregate", "tables"]
    properties = {p.get("name"): p.get("value") for p in cases["tables"].iter("property")}
    assert properties == {
        "against HEAD~1": "inconclusive +0% [-46%, +46%]",
        "against HEAD~2": "regressed +100% [+47%, +100%]",
    }
    capsys.readouterr()

    # The gate reads each REF's comparison: the regression against the second REF is named
    # (not a blocker here, where the emulator answered).
    assert main(["gate", str(results), "--allow-offline"]) == 0
    gated = capsys.readouterr().out.splitlines()
    assert any(
        "demo/tables (triggers): regressed against HEAD~2: delta +100% [+47%, +100%] on the "
        "emulator: not a blocker" in line
        for line in gated
    ), gated
    assert not any("regressed against HEAD~1" in line for line in gated)
    # Each REF's comparison follows from the runs the file keeps, as the gate recomputes it.
    assert any("every figure, verdict and origin as written" in line for line in gated), gated


def test_the_gate_blocks_on_a_query_that_regressed_against_the_second_ref(tmp_path, capsys):
    # A should-not query that fires 6/6 now, as at HEAD~1, where HEAD~2 fired 0/6: regressed
    # against HEAD~2 alone.
    now = SuiteResult("demo.yaml", "demo", "current", "New.", (_query(False, 6, 6),))
    first = SuiteResult("demo.yaml", "demo", "previous", "Old.", (_query(False, 6, 6),))
    second = SuiteResult("demo.yaml", "demo", "previous-2", "Older.", (_query(False, 0, 6),))
    compared = against_revisions(
        now, [("previous", "HEAD~1", first), ("previous-2", "HEAD~2", second)]
    )
    document = results_document(
        [[compared, first, second]],
        {},
        complete=True,
        # A real model answered, at the Anthropic API.
        provenance=Provenance(run_id="r1", backend="claude", answered_by=(API,)),
    )
    results = write_results(tmp_path / "r.json", document)
    lines = blocked(capsys, results, "--no-stale-check", reasons=2)
    assert "         - demo/q (triggers): regressed against HEAD~2: delta +100% [+47%, +100%]" in (
        lines
    )
    assert not any("regressed against HEAD~1" in line for line in lines)
    # The current skill fires 6/6 on a query that should not fire: a false trigger too.
    assert any(line.startswith("         - demo/q (triggers): false-trigger: ") for line in lines)


def test_the_estimate_counts_a_variant_per_revision(three, capsys):
    code = main(
        [
            "triggers",
            str(three / "demo.yaml"),
            "--dry-run",
            "--against",
            "HEAD~1",
            "--against",
            "HEAD~2",
        ]
    )
    assert code == 0
    # 2 queries x 6 runs under each of 3 variants: the current skill and each REF's.
    assert re.search(r"demo\.yaml\s+2\s+36\s", capsys.readouterr().out)
