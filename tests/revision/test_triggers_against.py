"""`skilltest triggers --against REF`: the skill at a git revision as the comparison arm.

A test repository holds two commits of one skill. The emulator's ``described`` condition loads
the skill whose listed description fits the query, so whether a query fires depends on which
revision's SKILL.md the sandbox installed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from skilltest.report.provenance import Provenance
from skilltest.revision import PREVIOUS
from skilltest.transcript.origin import AnsweredBy
from skilltest.triggers.report import results_document
from skilltest.triggers.suite import TriggerQuery
from skilltest.triggers.verdict import (
    QueryResult,
    SuiteResult,
    TriggerRun,
    against_previous,
    against_query,
)
from tests.gate.test_gate import blocked
from tests.layers import run_layer
from tests.report.documents import write_results

from .conftest import git

OLD_SKILL = "---\nname: demo\ndescription: Format markdown tables neatly.\n---\nBody.\n"
NEW_SKILL = "---\nname: demo\ndescription: Aggregate loki error counts by service.\n---\nBody.\n"

PROJECT = Path(__file__).with_name("triggers-against")
"""The suite (demo.yaml) and the model script (model.yaml) the test repository holds."""


@pytest.mark.cli
def test_against_a_revision_reads_each_query_by_its_kind(repo, tmp_path, capsys, claude_bin):
    results = tmp_path / "results.json"
    markdown = tmp_path / "summary.md"
    junit = tmp_path / "junit.xml"
    before = git(repo, "status", "--porcelain")
    options = ["--claude", claude_bin, "--backend", "emulator", "-j", "2", "--against", "HEAD~1"]
    reports = ["--markdown", markdown, "--junit", junit]
    code = run_layer("triggers", repo / "demo.yaml", tmp_path, *options, *reports)
    out = capsys.readouterr().out
    # Both queries pass under the current skill; the old one's misses do not fail the run.
    assert code == 0, out
    # 6/6 minus 0/6: the exact interval [+0.47, +1.00] lies above the band, improved. The
    # should-not query fires 0/6 now and 6/6 at HEAD~1: delta -100%, improved too.
    against_lines = [line for line in out.splitlines() if "improved" in line]
    assert any(
        line.startswith("demo/aggregate") and "improved +100% [+47%, +100%]" in line
        for line in against_lines
    ), out
    assert any(
        line.startswith("demo/tables") and "improved -100% [-100%, -47%]" in line
        for line in against_lines
    ), out
    assert "against HEAD~1: 2 improved, 0 neutral, 0 regressed" in out.splitlines()

    data = read_results(results, "triggers")
    current, previous = data["suites"]
    assert (current["variant"], previous["variant"]) == ("current", "previous")
    assert previous["description"] == "Format markdown tables neatly."
    by_id = {q["id"]: q for q in current["queries"]}
    assert by_id["aggregate"]["against"]["verdict"] == "improved"
    assert by_id["aggregate"]["against"]["delta"] == 1.0
    assert by_id["tables"]["against"]["verdict"] == "improved"
    assert by_id["tables"]["against"]["delta"] == -1.0
    assert by_id["tables"]["against"]["ci"][1] == pytest.approx(-0.4707, abs=1e-3)
    assert data["comparison"] is None
    # The Markdown summary counts the revision deltas as for the other layers.
    summary = markdown.read_text()
    assert "against HEAD~1: 2 improved" in summary
    assert "| `demo/tables` | pass | 0% [0%–46%] | improved -100% [-100%, -47%] |" in summary
    # The skill at REF is the yardstick, not a result: its misses are not listed as failing.
    assert "**2 queries**: 2 pass" in summary
    assert "(previous)" not in summary
    # The gate reads the trigger results: nothing regressed against HEAD~1. They come from the
    # emulator: refused as such, and gated only with --allow-offline.
    assert main(["gate", str(results)]) == 1
    assert "produced by the emulator, a scripted stand-in" in capsys.readouterr().out
    assert main(["gate", str(results), "--allow-offline"]) == 0, capsys.readouterr().out
    # JUnit has the current skill's queries only, all passing.
    cases = ET.parse(junit).getroot().iter("testcase")
    assert sorted(case.get("name") for case in cases) == ["aggregate", "tables"]
    assert 'failures="0"' in junit.read_text()
    # The revision was read with git archive: the work tree is as it was.
    assert git(repo, "status", "--porcelain") == before


def test_a_bad_ref_is_bad_input(repo, capsys):
    code = main(["triggers", str(repo / "demo.yaml"), "--against", "no-such-ref"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--against no-such-ref" in err
    assert "not a folder nor a revision" in err


def test_against_refuses_another_description(repo, capsys):
    code = main(
        ["triggers", str(repo / "demo.yaml"), "--against", "HEAD~1", "--description", "Other."]
    )
    assert code == 2
    assert "does not take another description" in capsys.readouterr().err


API = AnsweredBy.at("https://api.anthropic.com")
"""What answered each run: the Anthropic API."""


def _query(should_trigger: bool, fired: int, k: int = 3) -> QueryResult:
    runs = tuple(
        TriggerRun(rep=rep, ended="fired" if rep < fired else "not-fired", answered_by=API)
        for rep in range(k)
    )
    query = TriggerQuery(id="q", query="q", should_trigger=should_trigger, location="suite#/q")
    return QueryResult(query=query, runs=runs, threshold=0.5)


@pytest.mark.parametrize(
    ("should_trigger", "now", "before", "verdict"),
    [
        (True, 3, 0, "improved"),
        (True, 0, 3, "regressed"),
        (False, 0, 3, "improved"),
        (False, 3, 0, "regressed"),
        (False, 1, 2, "inconclusive"),
    ],
)
def test_the_verdict_reads_the_delta_by_the_query_kind(should_trigger, now, before, verdict):
    against = against_query("HEAD~1", _query(should_trigger, now), _query(should_trigger, before))
    assert against.verdict == verdict
    # The delta is always current minus REF, whatever the kind.
    assert against.delta.value == pytest.approx((now - before) / 3)


def test_the_gate_blocks_on_a_query_that_regressed_against_ref(tmp_path, capsys):
    now, before = _query(False, 6, 6), _query(False, 0, 6)
    current = SuiteResult("demo.yaml", "demo", "current", "New.", (now,))
    previous = SuiteResult("demo.yaml", "demo", PREVIOUS, "Old.", (before,))
    document = results_document(
        [[against_previous("HEAD~1", current, previous), previous]],
        {},
        complete=True,
        # A real model answered, at the Anthropic API.
        provenance=Provenance(run_id="r1", backend="claude", answered_by=(API,)),
    )
    # The suite is not on disk: the file's figures are checked, not its files.
    results = write_results(tmp_path / "r.json", document)
    lines = blocked(capsys, results, "--no-stale-check", reasons=2)
    # A should-not query that now fires 6/6 where REF fired 0/6: delta +100%, regressed; and
    # its own interval lies above the threshold: a false trigger.
    assert "         - demo/q (triggers): regressed against HEAD~1: delta +100% [+47%, +100%]" in (
        lines
    )
    assert any(line.startswith("         - demo/q (triggers): false-trigger: ") for line in lines)
