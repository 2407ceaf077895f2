"""What produced a run, on everything a person reads: an emulator run's results file, JUnit,
Markdown and HTML carry the offline notice and the provenance (backend, model as the API named
it, CLI and toolkit versions, date, suite checksums, command line), and each run has an id."""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET

import pytest

from skilltest.cli import main
from skilltest.report.provenance import (
    Provenance,
    backend_text,
    duration_text,
    notice,
    provenance_of,
    summary,
)
from skilltest.transcript.origin import AnsweredBy
from tests.pressure.test_pressure_cli import workspace

WITH_TEXT = 'Aggregate first: sum(count_over_time({app=\\"checkout\\"}[5m])).'
NOTICE = (
    "offline: these numbers come from the skilltest emulator, a scripted stand-in, not a model; "
    "they say nothing about how a real model behaves"
)


def run_emulated(tmp_path, capsys, monkeypatch) -> tuple[list[str], str]:
    workspace(tmp_path, with_text=WITH_TEXT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    # 11 runs per arm: the fewest that can show a pass rate of at least 0.7 (steers at 0.8).
    argv = ["pressure", "demo.yaml", "-k", "11", "--results", "out/p.json", "--junit", "out/p.xml"]
    argv += ["--markdown", "out/p.md", "--report", "out/p.html"]
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 0, out
    return argv, out


def test_an_emulator_run_says_so_everywhere_with_what_produced_it(tmp_path, capsys, monkeypatch):
    argv, out = run_emulated(tmp_path, capsys, monkeypatch)
    assert out.splitlines()[0] == NOTICE

    document = json.loads((tmp_path / "out" / "p.json").read_text())
    provenance = document["provenance"]
    checksum = "sha256:" + hashlib.sha256((tmp_path / "demo.yaml").read_bytes()).hexdigest()
    assert provenance["origin"] == "offline"
    assert (provenance["backend"], provenance["recorded_with"]) == ("emulator", [])
    assert provenance["models"] == ["claude-sonnet-5-5"]  # as the emulator's answers named it
    assert provenance["claude_version"] is None  # the SDK backend runs no CLI
    assert provenance["skilltest_version"] == "0.1.0"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", provenance["started_at"])
    # When the results were written last (the end) and the wall time since the start.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", provenance["finished_at"])
    assert provenance["started_at"] <= provenance["finished_at"]
    assert isinstance(provenance["duration_s"], float) and 0 <= provenance["duration_s"] < 60
    assert provenance["suites"] == [{"path": "demo.yaml", "sha256": checksum}]
    assert provenance["command"] == ["skilltest", *argv]
    ids = [run["id"] for s in document["scenarios"] for run in s["runs"]]
    assert len(ids) == len(set(ids)) == 22
    assert ids[0] == f"{provenance['run_id']}/pressure/demo/aggregate/with_skill/1"
    assert document["scenarios"][0]["passed"] is True

    suite = ET.parse(tmp_path / "out" / "p.xml").getroot().find("testsuite")
    assert suite is not None
    properties = {p.get("name"): p.get("value") for p in suite.findall("properties/property")}
    assert properties["notice"] == NOTICE
    assert (properties["origin"], properties["backend"]) == ("offline", "emulator")
    assert properties["model"] == "claude-sonnet-5-5 (as the stand-in named itself)"
    assert properties["skilltest_version"] == "0.1.0"
    assert properties["date"] == provenance["started_at"]
    assert properties["suite demo.yaml"] == checksum
    assert properties["command"] == "skilltest " + " ".join(argv)
    assert properties["run_id"] == provenance["run_id"]

    markdown = (tmp_path / "out" / "p.md").read_text().splitlines()
    assert markdown[2] == (
        "> **offline**: these numbers come from the skilltest emulator, a scripted stand-in, not "
        "a model; they say nothing about how a real model behaves"
    )
    assert markdown[4] == (
        "produced by: backend emulator (offline: a scripted stand-in); model claude-sonnet-5-5 "
        f"(as the stand-in named itself); claude CLI -; skilltest 0.1.0; date "
        f"{provenance['started_at']}; suites `demo.yaml {checksum[:19]}`; command "
        f"`skilltest {' '.join(argv)}`; run id {provenance['run_id']}"
    )

    html = (tmp_path / "out" / "p.html").read_text()
    assert html.index('<p class="offline" role="note"><strong>offline</strong>: these numbers') < (
        html.index('<section class="layer"')
    )
    assert "<tr><th>backend</th><td>emulator (offline: a scripted stand-in)</td></tr>" in html
    assert f"<tr><th>suites</th><td>demo.yaml {checksum[:19]}</td></tr>" in html
    assert f"<tr><th>date</th><td>{provenance['started_at']}</td></tr>" in html
    duration = duration_text(provenance["duration_s"])
    assert f"<tr><th>duration</th><td>{duration}</td></tr>" in html


API = AnsweredBy.at("https://api.anthropic.com")


def test_a_live_run_has_no_offline_notice():
    live = Provenance(
        run_id="x", backend="anthropic", models=("claude-sonnet-4-5",), answered_by=(API,)
    )
    assert live.origin == "live"
    assert notice(live) is None
    document = {"layer": "pressure", "provenance": live.to_dict()}
    assert provenance_of(document) == live


@pytest.mark.parametrize(
    ("answered", "models", "origin"),
    [
        # The public API, and no answer of the stand-in's: live.
        ((API,), ("claude-sonnet-4-5-20250929",), "live"),
        # The emulator's mark on an answer, wherever it came from and whatever the backend.
        ((AnsweredBy.at("http://127.0.0.1:4000", "0.1.0"),), ("claude-sonnet-4-5",), "offline"),
        ((AnsweredBy.at("https://gateway.example/anthropic", "0.1.0"),), (), "offline"),
        # A model the stand-in's scripts name, even at the API's own address.
        ((API,), ("claude-sonnet-4-5-emulated",), "offline"),
        ((API,), ("skilltest-emulator",), "offline"),
        # Anywhere but the API, without the mark: nobody can tell what answered.
        ((AnsweredBy.at("http://localhost:4000"),), ("claude-sonnet-4-5",), "unknown"),
        ((AnsweredBy.at("http://[::1]:4000"),), ("claude-sonnet-4-5",), "unknown"),
        ((AnsweredBy.at("https://gateway.example/v1"),), ("claude-sonnet-4-5",), "unknown"),
        ((API, AnsweredBy.at("http://10.0.0.7:8080")), ("claude-sonnet-4-5",), "unknown"),
        # Nothing recorded of what answered: not live on its backend's word.
        ((), ("claude-sonnet-4-5",), "unknown"),
    ],
)
def test_the_origin_is_what_answered_never_the_backend(answered, models, origin):
    provenance = Provenance(run_id="x", backend="claude", models=models, answered_by=answered)
    assert provenance.origin == origin
    assert provenance_of({"layer": "scenarios", "provenance": provenance.to_dict()}) == provenance


def test_an_unknown_address_is_named_and_credentials_in_it_are_not():
    gateway = AnsweredBy.at("https://user:sk-secret@gateway.example:8443/v1/?key=sk-secret")
    assert (gateway.endpoint, gateway.base_url) == ("other", "https://gateway.example:8443/v1")
    provenance = Provenance(run_id="x", backend="claude", answered_by=(gateway,))
    assert notice(provenance) == (
        "origin unknown: the runs' requests went to https://gateway.example:8443/v1 (other), not "
        "the Anthropic API, and no answer said what answered there; they may come from a "
        "scripted stand-in"
    )
    assert backend_text(provenance) == "claude (at https://gateway.example:8443/v1 (other))"


def test_the_wall_time_reads_back_and_files_without_it_say_not_recorded():
    timed = Provenance(
        run_id="x", backend="claude", finished_at="2026-12-01T09:02:05Z", duration_s=125.4
    )
    assert provenance_of({"layer": "scenarios", "provenance": timed.to_dict()}) == timed
    older = {"run_id": "x", "backend": "claude", "started_at": "2026-12-01T09:00:00Z"}
    read = provenance_of({"layer": "scenarios", "provenance": older})
    assert (read.finished_at, read.duration_s) == (None, None)
    assert duration_text(read.duration_s) == "not recorded"
    nonsense = {**older, "duration_s": "soon", "finished_at": 7}
    read = provenance_of({"layer": "scenarios", "provenance": nonsense})
    assert (read.finished_at, read.duration_s) == (None, None)


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.0123, "12 ms"), (2.44, "2.4 s"), (12.4, "12 s"), (185, "3 min 05 s"), (3725, "1 h 02 min")],
)
def test_a_wall_time_reads_as_people_write_it(seconds, shown):
    assert duration_text(seconds) == shown


def test_files_written_before_provenance_are_offline_on_their_word_else_unknown():
    # Believing a file that says it is a stand-in's can only block a release; one that says it
    # is live does not show what answered it.
    assert provenance_of({"layer": "pressure", "backend": "emulator"}).origin == "offline"
    assert provenance_of({"layer": "pressure", "backend": "anthropic"}).origin == "unknown"
    # Replayed from cassettes nobody knows the origin of: neither live nor offline for sure.
    assert provenance_of({"layer": "pressure", "backend": "replay"}).origin == "unknown"
    assert provenance_of({"layer": "pressure"}).origin == "unknown"


def test_each_run_of_a_run_has_its_own_id_and_two_runs_differ(tmp_path, capsys, monkeypatch):
    run_emulated(tmp_path, capsys, monkeypatch)
    first = json.loads((tmp_path / "out" / "p.json").read_text())
    assert main(["pressure", "demo.yaml", "-k", "11", "--results", "out/q.json"]) == 0
    capsys.readouterr()
    second = json.loads((tmp_path / "out" / "q.json").read_text())
    ids = {run["id"] for d in (first, second) for s in d["scenarios"] for run in s["runs"]}
    assert len(ids) == 44


def test_another_agent_is_named_with_its_version_and_older_files_read_without_one():
    codex = Provenance(run_id="x", backend="emulator", agent="codex", agent_version="0.171.0")
    read = provenance_of({"layer": "triggers", "provenance": codex.to_dict()})
    assert read == codex
    assert codex.to_dict()["agent"] == {"name": "codex", "version": "0.171.0"}
    assert "agent codex 0.171.0" in summary(read)
    assert "claude CLI" not in summary(read)
    claude = Provenance(
        run_id="x", backend="emulator", claude_version="2.1.328", agent="claude-code"
    )
    assert "claude CLI 2.1.328" in summary(claude)
    # A file written before the agent was recorded reads as Claude Code's, without one.
    older = {k: v for k, v in claude.to_dict().items() if k != "agent"}
    read = provenance_of({"layer": "scenarios", "provenance": older})
    assert (read.agent, read.agent_version, read.claude_version) == (None, None, "2.1.328")
    assert "claude CLI 2.1.328" in summary(read)
    # Without provenance, the file's top-level agent still names it.
    bare = provenance_of(
        {"layer": "scenarios", "agent": {"name": "opencode", "version": "1.18.33"}}
    )
    assert "agent opencode 1.18.33" in summary(bare)
