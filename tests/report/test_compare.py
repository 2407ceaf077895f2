"""`skilltest compare OLD.json NEW.json`: verdict changes, changes with intervals, new and
vanished scenarios; text, Markdown, JSON; exit 0, or 2 for bad input."""

from __future__ import annotations

import json
import re

import pytest

from skilltest.cli import main
from tests.report.documents import pressure_document, scenario, scenarios_document

OLD = scenarios_document(
    scenario("steady", "improved", True, (0.5, 0.3, 0.7), (0.3, 0.1, 0.5), (0.2, -0.1, 0.5)),
    scenario("gone", "neutral", True, (0.9, 0.8, 0.95), (0.9, 0.8, 0.95), (0.0, -0.05, 0.05)),
)
NEW = scenarios_document(
    scenario(
        "steady",
        "regressed",
        False,
        (0.8, 0.6, 0.9),
        (0.2, 0.1, 0.4),
        (0.6, 0.3, 0.8),
        reasons=("made up for the test",),
    ),
    scenario("fresh", "improved", True, (1.0, 0.34, 1.0), (0.0, 0.0, 0.66), (1.0, 0.07, 1.0)),
)
# Hand-computed: with-skill 0.8 [0.6, 0.9] - 0.5 [0.3, 0.7] = 0.3, low 0.3 - hypot(0.2, 0.2) =
# 0.0172, high 0.3 + hypot(0.1, 0.2) = 0.5236; delta 0.6 [0.3, 0.8] - 0.2 [-0.1, 0.5] = 0.4,
# low 0.4 - hypot(0.3, 0.3) = -0.0243, high 0.4 + hypot(0.2, 0.3) = 0.7606.


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.json").write_text(json.dumps(OLD))
    (tmp_path / "new.json").write_text(json.dumps(NEW))
    return tmp_path


def test_text_shows_changes_with_intervals_and_new_and_vanished(files, capsys):
    assert main(["compare", "old.json", "new.json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "scenarios: old.json → new.json"
    row = next(line for line in lines if line.startswith("lgtm/steady"))
    assert re.split(r"\s{2,}", row.strip()) == [
        "lgtm/steady",
        "improved",
        "regressed (FAIL)",
        "0.50 → 0.80",
        "+0.30 [+0.02, +0.52]",
        "+0.40 [-0.02, +0.76]",
    ]
    assert "new: lgtm/fresh (improved)" in lines
    assert "vanished: lgtm/gone (neutral)" in lines
    assert lines[-1] == (
        "1 compared: 1 verdict(s) changed (1 now failing, 0 now passing); 1 new, 1 vanished"
    )


def test_json_has_the_hand_computed_intervals(files, capsys):
    assert main(["compare", "old.json", "new.json", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["schema_version"], data["layer"]) == (1, "scenarios")
    (steady,) = data["scenarios"]
    assert steady["name"] == "lgtm/steady"
    assert steady["verdict_changed"] is True
    assert (steady["old"]["verdict"], steady["new"]["verdict"]) == ("improved", "regressed")
    change = steady["with_skill_change"]
    assert change["value"] == pytest.approx(0.3)
    assert (change["ci_low"], change["ci_high"]) == (
        pytest.approx(0.0172, abs=1e-4),
        pytest.approx(0.5236, abs=1e-4),
    )
    lift = steady["lift_change"]
    assert lift["value"] == pytest.approx(0.4)
    assert (lift["ci_low"], lift["ci_high"]) == (
        pytest.approx(-0.0243, abs=1e-4),
        pytest.approx(0.7606, abs=1e-4),
    )
    assert [s["name"] for s in data["added"]] == ["lgtm/fresh"]
    assert [s["name"] for s in data["vanished"]] == ["lgtm/gone"]
    assert data["summary"] == {
        "compared": 1,
        "verdict_changed": 1,
        "newly_failing": 1,
        "newly_passing": 0,
        "added": 1,
        "vanished": 1,
    }


def test_markdown_file(files, capsys):
    assert main(["compare", "old.json", "new.json", "--markdown", "cmp.md"]) == 0
    assert capsys.readouterr().out == "wrote cmp.md\n"
    assert (files / "cmp.md").read_text().splitlines() == [
        "## skilltest compare: scenarios",
        "",
        "`old.json` → `new.json`",
        "",
        "- OLD old.json: backend claude, model claude-sonnet-4-5-20250929, claude CLI 2.1.328, "
        "skilltest 0.1.0, date 2026-12-01T09:00:00Z",
        "- NEW new.json: backend claude, model claude-sonnet-4-5-20250929, claude CLI 2.1.328, "
        "skilltest 0.1.0, date 2026-12-01T09:00:00Z",
        "",
        "**1 compared: 1 verdict(s) changed (1 now failing, 0 now passing); 1 new, 1 vanished**",
        "",
        "| scenario | old verdict | new verdict | with skill: old → new | change | delta change |",
        "| --- | --- | --- | --- | --- | --- |",
        "| `lgtm/steady` | improved | regressed (FAIL) | 0.50 → 0.80 | +0.30 [+0.02, +0.52] "
        "| +0.40 [-0.02, +0.76] |",
        "",
        "change: NEW minus OLD [Newcombe interval]; delta change: the change of with-skill minus "
        "without-skill [the same square-and-add interval]; each file's own interval levels",
        "",
        "### New",
        "",
        "- `lgtm/fresh` (improved)",
        "",
        "### Vanished",
        "",
        "- `lgtm/gone` (neutral)",
    ]


def test_different_layers_are_bad_input(files, capsys):
    (files / "pressure.json").write_text(json.dumps(pressure_document()))
    assert main(["compare", "old.json", "pressure.json"]) == 2
    err = capsys.readouterr().err
    assert "old.json holds scenarios results and pressure.json pressure results" in err
    assert "fix: compare two results files of the same layer" in err


def test_an_unreadable_file_is_bad_input(files, capsys):
    (files / "broken.json").write_text("{")
    assert main(["compare", "old.json", "broken.json"]) == 2
    assert "broken.json:1:2: the results file is not valid JSON" in capsys.readouterr().err


def test_each_file_says_what_produced_it_and_an_offline_one_says_so(files, capsys):
    emulated = {**OLD, "provenance": {**OLD["provenance"], "backend": "emulator", "models": []}}
    (files / "old.json").write_text(json.dumps(emulated))
    assert main(["compare", "old.json", "new.json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:4] == [
        "scenarios: old.json → new.json",
        "OLD old.json: offline: these numbers come from the skilltest emulator, a scripted "
        "stand-in, not a model; they say nothing about how a real model behaves",
        "OLD old.json: backend emulator (offline: a scripted stand-in), model none reported, "
        "claude CLI 2.1.328, skilltest 0.1.0, date 2026-12-01T09:00:00Z",
        "NEW new.json: backend claude, model claude-sonnet-4-5-20250929, claude CLI 2.1.328, "
        "skilltest 0.1.0, date 2026-12-01T09:00:00Z",
    ]
    assert main(["compare", "old.json", "new.json", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["provenance"]
    assert (data["old"]["origin"], data["new"]["origin"]) == ("offline", "live")
    assert data["new"]["command"] == ["skilltest", "scenarios", "lgtm"]


def test_two_offline_files_say_it_once(files, capsys):
    for name, document in (("old.json", OLD), ("new.json", NEW)):
        emulated = {**document["provenance"], "backend": "emulator"}
        (files / name).write_text(json.dumps({**document, "provenance": emulated}))
    assert main(["compare", "old.json", "new.json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        "OLD and NEW: offline: these numbers come from the skilltest emulator, a scripted "
        "stand-in, not a model; they say nothing about how a real model behaves"
    )
    assert lines[2].startswith("OLD old.json: backend emulator (offline: a scripted stand-in)")
