"""`skilltest pressure --record` and `--replay` end to end: the example suites recorded against the
emulator through the real SDK, then replayed with nothing to answer but the cassettes.

A replay has no key, no model script and an ``ANTHROPIC_BASE_URL`` that points at a closed port,
so a request that went anywhere would fail its run; it imports neither the SDK nor the emulator.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from skilltest.replay.cassette import Cassette
from skilltest.runners.base import DEFAULT_MODEL
from tests.projects import demo_script, numbered_suite, write_demo_project

from ..conftest import REPO_ROOT
from .examples import closed_port, copy_example_suites, only_cassettes_answer, replayed_document

SKILLS = REPO_ROOT / "skills"
SUMMARY = re.compile(r"^(\d+) replay miss(es)?: re-record with --record \(or --record-missing\)$")


def comparable(results: Path) -> dict[str, Any]:
    """A results file without what a replay may change: timings, the backend, the replay mode,
    the provenance, the runs' ids (each run's own) and what answered them (the cassettes)."""
    document = json.loads(results.read_text())
    document.pop("backend")
    document.pop("replay")
    document.pop("provenance")
    for scenario in document["scenarios"]:
        for run in scenario["runs"]:
            run.pop("latency_ms")
            run.pop("id")
            run.pop("answered_by")
    return document


def snapshot(cassettes: Path) -> dict[str, tuple[int, bytes]]:
    """Every cassette's modification time and bytes."""
    return {
        str(path.relative_to(cassettes)): (path.stat().st_mtime_ns, path.read_bytes())
        for path in sorted(cassettes.rglob("*.yaml"))
    }


def pressure(*args: str | Path) -> int:
    return main(["pressure", *(str(a) for a in args)])


def test_example_suites_replay_without_emulator_key_or_sdk_and_ten_times_alike(
    tmp_path, capsys, monkeypatch
):
    suites, cassettes = tmp_path / "suites", tmp_path / "cassettes"
    copy_example_suites(suites, "pressure", ("lgtm", "safe-migrations"))
    recorded = tmp_path / "recorded.json"
    # -k auto, the suites' default: how many runs a scenario takes is decided by the answers.
    code = pressure(suites, "--skills-dir", SKILLS, "--record", cassettes, "--results", recorded)
    assert code == 0, capsys.readouterr().out
    assert "16 cassette(s) written under" in capsys.readouterr().out
    assert json.loads(recorded.read_text())["replay"] == {
        "mode": "record",
        "directory": str(cassettes),
        "misses": [],
    }

    only_cassettes_answer(suites, monkeypatch)
    probe = (
        "import json, sys\n"
        "from skilltest.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "heavy = {'anthropic', 'httpx2', 'skilltest.emulator'}\n"
        "loaded = sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy)\n"
        "print(json.dumps({'code': code, 'loaded': loaded}))\n"
    )
    replayed = tmp_path / "replayed.json"
    args = ["pressure", str(suites), "--skills-dir", str(SKILLS), "--replay", str(cassettes)]
    done = subprocess.run(
        [sys.executable, "-c", probe, *args, "--results", str(replayed)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ANTHROPIC_BASE_URL": closed_port()},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"code": 0, "loaded": []}
    assert "emulator" not in done.stderr  # no notice: nothing is emulated
    assert "replay miss" not in done.stdout
    document = replayed_document(replayed, cassettes)
    # Recorded against the emulator, replayed: still the scripted stand-in's numbers.
    provenance = document["provenance"]
    assert (provenance["backend"], provenance["recorded_with"]) == ("replay", ["emulator"])
    assert provenance["origin"] == "offline"
    assert json.loads(recorded.read_text())["provenance"]["origin"] == "offline"
    assert done.stdout.splitlines()[0].startswith(
        "offline: these numbers come from cassettes recorded against the skilltest emulator"
    )
    assert comparable(replayed) == comparable(recorded)

    before = snapshot(cassettes)
    files = [tmp_path / f"replay-{n}.json" for n in range(10)]
    for results in files:
        code = pressure(suites, "--skills-dir", SKILLS, "--replay", cassettes, "--results", results)
        assert code == 0, capsys.readouterr().out
        assert results.exists()
    first = comparable(files[0])
    assert all(comparable(results) == first for results in files[1:])
    assert first == comparable(recorded)
    assert snapshot(cassettes) == before  # a replay writes nothing


@pytest.fixture(scope="module")
def recorded_lgtm(tmp_path_factory) -> Path:
    """The lgtm pressure suite with a copy of its skill, recorded at K=2 (the template each test
    copies)."""
    project = tmp_path_factory.mktemp("lgtm")
    shutil.copytree(SKILLS / "lgtm", project / "skills" / "lgtm")
    copy_example_suites(project, "pressure", ("lgtm",))
    code = pressure(project / "lgtm.yaml", "--record", project / "cassettes", "-k", "2")
    assert code in (0, 1)  # percentiles-for-latency is inconclusive at K=2
    return project


@pytest.fixture
def lgtm(recorded_lgtm, tmp_path) -> Path:
    return shutil.copytree(recorded_lgtm, tmp_path / "project")


def edit_description(project: Path) -> None:
    skill = project / "skills" / "lgtm" / "SKILL.md"
    text = skill.read_text()
    assert "\ndescription: Investigate production incidents" in text
    skill.write_text(
        text.replace("description: Investigate", "description: Always use it to investigate")
    )


def test_a_skill_edit_misses_the_with_skill_arms_only_and_record_missing_reruns_them(lgtm, capsys):
    recorded = snapshot(lgtm / "cassettes")
    edit_description(lgtm)
    results = lgtm / "replayed.json"
    code = pressure(
        lgtm / "lgtm.yaml", "--replay", lgtm / "cassettes", "-k", "2", "--results", results
    )
    out = capsys.readouterr().out
    assert code == 2, out
    assert out.splitlines()[-1] == "8 replay misses: re-record with --record (or --record-missing)"
    document = json.loads(results.read_text())
    assert len(document["replay"]["misses"]) == 8
    for scenario in document["scenarios"]:
        runs = {
            arm: [r for r in scenario["runs"] if r["arm"] == arm]
            for arm in ("with_skill", "without_skill")
        }
        assert len(runs["with_skill"]) == len(runs["without_skill"]) == 2
        for run in runs["with_skill"]:
            cassette = lgtm / "cassettes" / "lgtm" / scenario["id"] / "with_skill.yaml"
            assert run["error"].startswith(
                f"replay miss: {cassette}, repetition {run['rep'] - 1}, step 0: no recorded "
                "request matches; nearest is step 0:\n"
            )
            # The pressure layer sends the skill as the system prompt.
            assert "  /system/0/text: system prompt changed: " in run["error"]
            assert '-> "…tm\\ndescription: Always use it to investiga…"' in run["error"]
        for run in runs["without_skill"]:  # still replayed, and scored
            assert run["error"] is None
            assert run["output"]
    assert snapshot(lgtm / "cassettes") == recorded

    # Only the with-skill arms go live again; the without-skill cassettes stay as they were.
    code = pressure(
        lgtm / "lgtm.yaml", "--replay", lgtm / "cassettes", "--record-missing", "-k", "2"
    )
    out = capsys.readouterr().out
    assert code in (0, 1), out
    assert "4 cassette(s) written under" in out
    assert "replay miss" not in out
    rerecorded = snapshot(lgtm / "cassettes")
    changed = {name for name in recorded if rerecorded[name] != recorded[name]}
    assert changed == {f"lgtm/{s}/with_skill.yaml" for s in SCENARIOS_LGTM}

    again = lgtm / "again.json"
    code = pressure(
        lgtm / "lgtm.yaml", "--replay", lgtm / "cassettes", "-k", "2", "--results", again
    )
    out = capsys.readouterr().out
    assert code in (0, 1), out
    assert json.loads(again.read_text())["replay"]["misses"] == []
    assert all(
        run["error"] is None
        for s in json.loads(again.read_text())["scenarios"]
        for run in s["runs"]
    )


SCENARIOS_LGTM = (
    "aggregation-before-raw-fetch",
    "discovery-before-querying",
    "jq-extraction",
    "percentiles-for-latency",
)


@pytest.mark.parametrize(
    ("change", "args", "message"),
    [
        (
            "delete",
            ("--only", "jq-extraction"),
            "replay miss: {cassettes}/lgtm/jq-extraction/without_skill.yaml, repetition 0, step 0: "
            "no cassette was recorded for this scenario and arm",
        ),
        (
            None,
            ("--only", "jq-extraction", "-k", "3"),
            "replay miss: {cassettes}/lgtm/jq-extraction/without_skill.yaml, repetition 2, step 0: "
            "repetition 2 was not recorded (the cassette holds repetitions 0-1)",
        ),
        (
            None,
            ("--only", "jq-extraction", "--model", "claude-opus-5-5"),
            "replay miss: {cassettes}/lgtm/jq-extraction/without_skill.yaml, repetition 0, step 0: "
            "no recorded request matches; nearest is step 0:\n"
            f'  /model: model changed: "{DEFAULT_MODEL}" -> "claude-opus-5-5"',
        ),
    ],
    ids=["no-cassette", "repetition-not-recorded", "model-changed"],
)
def test_each_miss_is_the_run_error_in_the_results_file(lgtm, capsys, change, args, message):
    cassettes = lgtm / "cassettes"
    if change == "delete":
        (cassettes / "lgtm" / "jq-extraction" / "without_skill.yaml").unlink()
    results = lgtm / "replayed.json"
    code = pressure(
        lgtm / "lgtm.yaml", "--replay", cassettes, "--results", results, "-k", "2", *args
    )
    out = capsys.readouterr().out
    assert code == 2, out
    assert SUMMARY.match(out.splitlines()[-1])
    (scenario,) = json.loads(results.read_text())["scenarios"]
    errors = [r["error"] for r in scenario["runs"] if r["arm"] == "without_skill" and r["error"]]
    assert errors[0] == message.format(cassettes=cassettes)
    assert errors[0] in json.loads(results.read_text())["replay"]["misses"]


def test_a_recording_stopped_by_sigterm_keeps_every_repetition_that_finished(tmp_path):
    script = demo_script("count_over_time", faults="faults: {latency_ms: 400}")
    suite = write_demo_project(tmp_path, numbered_suite(6, repetitions=2), script)
    cassettes, results = tmp_path / "cassettes", tmp_path / "results.json"
    command = [sys.executable, "-m", "skilltest", "pressure", str(suite), "-j", "2"]
    process = subprocess.Popen(
        [*command, "--record", str(cassettes), "--results", str(results)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(cassettes.rglob("*.yaml"))) < 3:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert "Traceback" not in err
    assert not [p for p in cassettes.rglob("*") if p.is_file() and p.suffix != ".yaml"]
    kept = {}
    for path in cassettes.rglob("*.yaml"):
        cassette = Cassette.load(path)
        for rep, exchanges in cassette.repetitions.items():
            # One answer per run, as recorded.
            assert [e.response["status"] for e in exchanges] == [200]
            kept[(cassette.scenario, cassette.arm, rep)] = exchanges[0].response["body"]
    document = json.loads(results.read_text())
    assert (document["complete"], document["interrupted"]) == (False, True)
    finished = {
        (scenario["id"], run["arm"], run["rep"] - 1): run["output"]
        for scenario in document["scenarios"]
        for run in scenario["runs"]
    }
    assert 3 <= len(kept) < 24  # the runs that ended, not all of them
    for run, output in finished.items():  # every finished scenario's runs among them
        assert kept[run]["content"][0]["text"] == output
