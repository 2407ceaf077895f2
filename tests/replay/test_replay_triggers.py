"""`skilltest triggers --record` and `--replay` end to end, through the real claude CLI.

The example trigger suites (a few of their queries, K=2) are recorded against the emulator once,
then replayed from copies of the recording: with no model script left in the suites and
``ANTHROPIC_BASE_URL`` at a closed port, only the cassettes can answer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from skilltest.replay.cassette import Cassette

from .examples import (
    copy_example_project,
    moved_results,
    only_cassettes_answer,
    record_examples,
    replayed_document,
    run_examples,
)
from .test_replay_pressure import snapshot

pytestmark = pytest.mark.cli

SUITES = ("lgtm", "safe-migrations")
# Fires at once, fires after a Glob call, a plain answer (in each suite), a near miss.
ONLY = ("--only", "loki-error-spike", "--only", "outage-traces", "--only", "capital-of-france")


def triggers(project: Path, claude: Path, *args: str | Path) -> int:
    # A few runs per query keep recording cheap; they decide no verdict, which is not what these
    # tests are about.
    return run_examples(
        "triggers", project, SUITES, claude, "--allow-inconclusive", *(str(a) for a in args)
    )


def comparable(results: Path, moved: tuple[Path, Path] | None = None) -> dict[str, Any]:
    """A results file without what differs from run to run: timings, where the transcripts went,
    the backend, the replay mode, the provenance, run ids, the request counts (only the
    emulator counts them) and what answered (the cassettes)."""
    document = moved_results(results, moved)
    for key in ("backend", "replay", "suite_files", "provenance"):
        document.pop(key, None)
    for suite in document["suites"]:
        suite.pop("suite", None)
        for query in suite["queries"]:
            for run in query["runs"]:
                for key in ("duration_s", "transcript", "trace", "requests", "id", "answered_by"):
                    run.pop(key)
    return document


def runs_of(results: Path) -> dict[tuple[str, str, str], list[dict[str, Any]]]:
    """Per (skill, variant, query), its runs."""
    return {
        (s["skill"], s["variant"], q["id"]): q["runs"]
        for s in json.loads(results.read_text())["suites"]
        for q in s["queries"]
    }


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """Copies of the example trigger suites and their skills, recorded once (K=2)."""
    project = tmp_path_factory.mktemp("examples")
    copy_example_project(project, "triggers", SUITES)
    record_examples(project, triggers, *ONLY, "-k", "2")
    return project


@pytest.fixture
def project(recorded, tmp_path) -> Path:
    return shutil.copytree(recorded, tmp_path / "project")


def test_one_cassette_per_skill_query_and_description(recorded):
    cassettes = recorded / "cassettes"
    assert sorted(str(p.relative_to(cassettes)) for p in cassettes.rglob("*.yaml")) == [
        "lgtm/capital-of-france/current.yaml",
        "lgtm/loki-error-spike/current.yaml",
        "lgtm/outage-traces/current.yaml",
        "safe-migrations/capital-of-france/current.yaml",
        "safe-migrations/loki-error-spike/current.yaml",
    ]
    cassette = Cassette.load(cassettes / "lgtm" / "outage-traces" / "current.yaml")
    assert (cassette.layer, cassette.skill, cassette.scenario, cassette.arm) == (
        "triggers",
        "lgtm",
        "outage-traces",
        "current",
    )
    assert cassette.suite.endswith("lgtm.yaml")
    assert sorted(cassette.repetitions) == [0, 1]
    # The Glob call, then the Skill call the run ended at: nothing was asked after it.
    for exchanges in cassette.repetitions.values():
        assert [(e.channel, e.step) for e in exchanges] == [("model", 0), ("model", 1)]
        last = exchanges[1].response["events"]
        assert '"name":"Skill"' in "".join(data for _, data in last).replace(" ", "")


def test_the_examples_replay_alike_offline_and_a_changed_query_misses(
    recorded, project, claude_bin, monkeypatch, capsys
):
    only_cassettes_answer(project, monkeypatch)
    cassettes = project / "cassettes"
    before = snapshot(cassettes)
    results = project / "replayed.json"
    code = triggers(
        project, claude_bin, *ONLY, "-k", "2", "--replay", cassettes,
        "--output-dir", project / "out-replay", "--results", results,
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert "replay backend (recorded answers)" in out
    document = replayed_document(results, cassettes)
    # Recorded against the emulator, replayed: still the scripted stand-in's numbers, and said so.
    provenance = document["provenance"]
    assert (provenance["backend"], provenance["recorded_with"]) == ("replay", ["emulator"])
    assert out.startswith("offline: ")
    # The model script's rule each answer came from is named where it was recorded: both files
    # read from the project here.
    moved = (recorded, project)
    assert comparable(results, moved) == comparable(project / "recorded.json", moved)
    assert snapshot(cassettes) == before
    # No emulator answered: it is what writes the requests it saw beside each transcript.
    assert not list((project / "out-replay").rglob("*.requests.json"))

    # The query changed since recording: its runs miss, with what differs; the others replay.
    suite = project / "lgtm.yaml"
    suite.write_text(suite.read_text().replace("checkout. Find", "checkout! Find"))
    code = triggers(
        project, claude_bin, *ONLY, "-k", "2", "--replay", cassettes,
        "--output-dir", project / "out-changed", "--results", results,
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 2, out
    assert out.splitlines()[-1] == "2 replay misses: re-record with --record (or --record-missing)"
    cassette = cassettes / "lgtm" / "loki-error-spike" / "current.yaml"
    miss = (
        f"replay miss: {cassette}, repetition 0, step 0: no recorded request matches; nearest is "
        "step 0:\n"
        '  /messages/0/content/2/text: differs: "…in checkout. Find…" -> "…in checkout! Find…"'
    )
    assert f"replay misses:\nlgtm/loki-error-spike (2 of 2 runs): {miss}\n" in out
    runs = runs_of(results)
    missed = runs[("lgtm", "current", "loki-error-spike")]
    assert [(run["ended"], run["reason"]) for run in missed] == [
        ("error", miss),
        ("error", miss.replace("repetition 0", "repetition 1")),
    ]
    assert json.loads(results.read_text())["replay"]["misses"] == [run["reason"] for run in missed]
    others = [key for key in runs if key != ("lgtm", "current", "loki-error-spike")]
    assert all(run["ended"] != "error" for key in others for run in runs[key])
    assert snapshot(cassettes) == before

    # A query nothing was recorded for.
    code = triggers(
        project, claude_bin, "--only", "server-haiku", "-k", "1", "--replay", cassettes,
        "--output-dir", project / "out-none", "--results", results,
    )  # fmt: skip
    assert code == 2, capsys.readouterr().out
    [run] = runs_of(results)[("lgtm", "current", "server-haiku")]
    assert run["reason"] == (
        f"replay miss: {cassettes}/lgtm/server-haiku/current.yaml, repetition 0, step 0: no "
        "cassette was recorded for this scenario and arm"
    )


def test_record_missing_records_only_what_the_cassettes_lack(project, claude_bin, capsys):
    cassettes = project / "cassettes"
    before = snapshot(cassettes)
    held = Cassette.load(cassettes / "lgtm" / "capital-of-france" / "current.yaml").repetitions
    # A third repetition of one query, and a candidate description of another.
    code = triggers(
        project, claude_bin, "--only", "capital-of-france", "-k", "3", "--replay", cassettes,
        "--record-missing", "--output-dir", project / "out-k3",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"2 cassette(s) written under {cassettes}" in out
    after = snapshot(cassettes)
    changed = {name for name in before if after[name] != before[name]}
    assert changed == {
        "lgtm/capital-of-france/current.yaml",
        "safe-migrations/capital-of-france/current.yaml",
    }
    grown = Cassette.load(cassettes / "lgtm" / "capital-of-france" / "current.yaml").repetitions
    assert sorted(grown) == [0, 1, 2]
    assert [[e.fingerprint for e in grown[rep]] for rep in (0, 1)] == [
        [e.fingerprint for e in held[rep]] for rep in (0, 1)
    ]

    lgtm = project / "lgtm.yaml"
    code = main(
        [
            "triggers", str(lgtm), "--skills-dir", str(project / "skills"),
            "--claude", str(claude_bin), "--only", "loki-error-spike", "-k", "1",
            "--compare-description", "--description", "Query Loki logs with LogQL.",
            "--replay", str(cassettes), "--record-missing", "--output-dir", str(project / "o"),
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1, out  # the candidate does not fire: a miss of the skill, not of the tape
    assert f"1 cassette(s) written under {cassettes}" in out
    candidate = cassettes / "lgtm" / "loki-error-spike" / "candidate.yaml"
    assert "- lgtm: Query Loki logs with LogQL." in candidate.read_text()
    assert Cassette.load(candidate).arm == "candidate"
    assert (
        snapshot(cassettes)["lgtm/loki-error-spike/current.yaml"]
        == after["lgtm/loki-error-spike/current.yaml"]
    )
