"""`skilltest gate` checks what a results file says about itself: what answered its runs (the
emulator's mark, whatever ``--backend`` says), whether its suite and skill are the files on
disk, and whether its figures follow from its runs. Each case is a results file a real run
wrote, then edited by hand or left behind by files that changed since."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.report.files import read_results
from tests.gate.test_gate import SKILL, SUITE, gate
from tests.projects import demo_script, numbered_suite, write_demo_project

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
STAND_IN = "a scripted stand-in"


def pressure_run(
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *options: str,
    suite: str = SUITE,
    with_text: str = "I would aggregate first.",
) -> Path:
    """Runs a pressure suite of the demo project in ``folder``, from there (so that the results
    name its files relative to it, as a run in a repository does); returns its results file."""
    folder.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(folder)
    write_demo_project(folder, suite, demo_script(with_text), skill=SKILL)
    main(["pressure", "demo.yaml", "--results", "results.json", *options])
    capsys.readouterr()
    return folder / "results.json"


def edited(source: Path, change: Callable[[dict[str, Any]], None], name: str) -> Path:
    """A copy of a results file with ``change`` made to its document, beside it."""
    document = json.loads(source.read_text())
    change(document)
    target = source.with_name(name)
    target.write_text(json.dumps(document))
    return target


def reasons(out: str) -> list[str]:
    return [line.removeprefix("         - ") for line in out.splitlines() if "         - " in line]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[EmulatorServer]:
    """``skilltest emulator serve`` as a user starts it: the demo project's model script on a
    port of its own, answering whoever points ``ANTHROPIC_BASE_URL`` at it."""
    (tmp_path / "served.yaml").write_text(demo_script("I would aggregate first."))
    with EmulatorServer(ModelScript.load(tmp_path / "served.yaml")) as server:
        yield server


# --- origin: what answered, not --backend ------------------------------------------------------


def test_a_served_emulator_behind_backend_anthropic_is_offline(
    tmp_path, served, monkeypatch, capsys
):
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", served.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-any-key-the-emulator-takes")
    write_demo_project(folder, SUITE, demo_script("unused"), skill=SKILL)
    code = main(["pressure", "demo.yaml", "--backend", "anthropic", "--results", "results.json"])
    out = capsys.readouterr().out
    assert code == 0
    said = (
        f"the skilltest emulator, {STAND_IN}, at {served.base_url} (its answers carry its mark), "
        "although the run's backend was anthropic"
    )
    assert out.splitlines()[0] == (
        f"offline: these numbers come from {said}, not a model; they say nothing about how a "
        "real model behaves"
    )
    provenance = read_results(folder / "results.json", "pressure")["provenance"]
    assert (provenance["backend"], provenance["origin"]) == ("anthropic", "offline")
    assert provenance["answered_by"] == [
        {"endpoint": "loopback", "base_url": served.base_url, "emulator": "0.1.0"}
    ]

    code, out, _ = gate(capsys, "results.json")
    assert code == 1, out
    assert reasons(out) == [
        f"results.json: answered by {said}: its numbers say nothing about a real model; "
        "--allow-offline gates on it anyway"
    ]
    assert out.splitlines()[1].startswith(
        "results: results.json (pressure): backend anthropic (offline: answered by the "
        "skilltest emulator, a scripted stand-in), model claude-sonnet-5-5"
    )


def test_a_served_emulator_behind_backend_claude_is_offline(
    claude_bin, tmp_path, monkeypatch, capsys
):
    script = ModelScript.load(REPO_ROOT / "tests" / "model-scripts" / "lgtm.scenarios.yaml")
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "results.json"
    with EmulatorServer(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-any-key-the-emulator-takes")
        argv = ["scenarios", "tests/scenarios/lgtm.yaml", "--only", "investigate-error-spike"]
        argv += ["-k", "1", "--backend", "claude", "--claude", str(claude_bin)]
        main([*argv, "--results", str(results), "--output-dir", str(tmp_path / "out")])
    out = capsys.readouterr().out
    said = (
        f"the skilltest emulator, {STAND_IN}, at {server.base_url} (its answers carry its mark), "
        "although the run's backend was claude"
    )
    assert f"offline: these numbers come from {said}, not a model" in out
    document = read_results(results, "scenarios")
    assert document["provenance"]["models"] == ["claude-sonnet-4-5-emulated"]
    assert {run["answered_by"]["emulator"] for run in document["scenarios"][0]["runs"]} == {"0.1.0"}

    # One run per arm decides nothing: only the origin stands between the run and a release.
    code, out, _ = gate(capsys, results, "--allow-undecided")
    assert code == 1, out
    assert reasons(out) == [
        f"{results}: answered by {said}: its numbers say nothing about a real model; "
        "--allow-offline gates on it anyway"
    ]
    code, out, _ = gate(capsys, results, "--allow-undecided", "--allow-offline")
    assert code == 0, out


def test_cassettes_recorded_from_a_served_emulator_replay_as_offline(
    tmp_path, served, monkeypatch, capsys
):
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    write_demo_project(folder, SUITE, demo_script("unused"), skill=SKILL)
    with monkeypatch.context() as live:
        live.setenv("ANTHROPIC_BASE_URL", served.base_url)
        live.setenv("ANTHROPIC_API_KEY", "sk-any-key-the-emulator-takes")
        recorded = ["pressure", "demo.yaml", "--backend", "anthropic", "--record", "tapes"]
        assert main([*recorded, "--results", "recorded.json"]) == 0
    cassette = (folder / "tapes" / "demo" / "aggregate-first" / "with_skill.yaml").read_text()
    # What answered the recording, whatever it was told it talked to; and the mark itself.
    assert "\nbackend: emulator\n" in cassette
    assert "x-skilltest-emulator: 0.1.0" in cassette
    capsys.readouterr()

    assert main(["pressure", "demo.yaml", "--replay", "tapes", "--results", "replayed.json"]) == 0
    assert capsys.readouterr().out.startswith(
        "offline: these numbers come from cassettes recorded against the skilltest emulator"
    )
    code, out, _ = gate(capsys, "replayed.json")
    assert code == 1, out
    assert reasons(out) == [
        "replayed.json: replayed from cassettes recorded against the emulator, a scripted "
        "stand-in: its numbers say nothing about a real model; --allow-offline gates on it anyway"
    ]


def test_a_relabelled_backend_is_still_the_emulator(tmp_path, monkeypatch, capsys):
    results = pressure_run(tmp_path, monkeypatch, capsys)

    def relabel(document: dict[str, Any]) -> None:
        document["backend"] = "anthropic"
        document["provenance"].update(backend="anthropic", origin="live")

    relabelled = edited(results, relabel, "relabelled.json")
    code, out, _ = gate(capsys, relabelled)
    assert code == 1, out
    lines = reasons(out)
    assert lines[0].startswith(
        f"{relabelled}: answered by the skilltest emulator, a scripted stand-in, at "
        "http://127.0.0.1:"
    )
    assert lines[0].endswith(
        "(its answers carry its mark), although the run's backend was anthropic: its numbers "
        "say nothing about a real model; --allow-offline gates on it anyway"
    )
    assert lines[1:] == [
        f'{relabelled}: provenance: origin is "live" in the file, "offline" from its runs'
    ]


# --- consistent: every figure from the runs ----------------------------------------------------


def test_passed_flipped_on_failing_scenarios_blocks_each(tmp_path, monkeypatch, capsys):
    # Five scenarios whose with-skill answers miss the required pattern in 3 of 3 runs.
    suite = numbered_suite(5, 3)
    results = pressure_run(tmp_path, monkeypatch, capsys, suite=suite, with_text="grep it")
    verdicts = [s["verdict"] for s in read_results(results, "pressure")["scenarios"]]
    assert verdicts == ["no-steer"] * 5

    def flip(document: dict[str, Any]) -> None:
        for scenario in document["scenarios"]:
            scenario["passed"] = True

    flipped = edited(results, flip, "flipped.json")
    code, out, _ = gate(capsys, flipped, "--allow-offline")
    assert code == 1, out
    assert out.splitlines()[0].startswith("gate: BLOCK (5 reasons)")
    assert "PASS   failing      no scenario fails" in out  # what the file says, believed
    assert reasons(out) == [
        f"{flipped}: demo/s{i} (pressure): passed is true in the file, false from its runs"
        for i in range(5)
    ]
    # As the run wrote it, the same scenarios fail.
    code, out, _ = gate(capsys, results, "--allow-offline")
    assert code == 1
    assert "PASS   consistent" in out and "BLOCK  failing" in out


def test_a_verdict_edited_on_0_of_1_against_0_of_1_blocks(
    claude_bin, tmp_path, monkeypatch, capsys
):
    (tmp_path / "silent.yaml").write_text(
        "schema_version: 1\nmodel: claude-sonnet-4-5-emulated\n"
        "default: {text: I would look at the logs.}\n"
    )
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "results.json"
    argv = ["scenarios", "tests/scenarios/lgtm.yaml", "--only", "investigate-error-spike", "-k"]
    argv += ["1", "--script", str(tmp_path / "silent.yaml"), "--claude", str(claude_bin)]
    main([*argv, "--results", str(results), "--output-dir", str(tmp_path / "out")])
    capsys.readouterr()
    (scenario,) = read_results(results, "scenarios")["scenarios"]
    assert (scenario["with_skill"]["passes"], scenario["without_skill"]["passes"]) == (0, 0)
    assert (scenario["verdict"], scenario["passed"]) == ("inconclusive", False)

    def improve(document: dict[str, Any]) -> None:
        document["scenarios"][0].update(verdict="improved", passed=True, result="pass")
        document["summary"].update(passed=1, failed=0)

    code, out, _ = gate(capsys, edited(results, improve, "improved.json"), "--allow-offline")
    assert code == 1, out
    assert reasons(out) == [
        f"{tmp_path / 'improved.json'}: lgtm/investigate-error-spike (scenarios): verdict is "
        '"improved" in the file, "inconclusive" from its runs (and 2 more: passed, result)',
        f"{tmp_path / 'improved.json'}: summary: passed is 1 in the file, 0 from its runs (and "
        "1 more: failed)",
    ]


def test_runs_copied_under_new_ids_count_once(tmp_path, monkeypatch, capsys):
    baseline = pressure_run(tmp_path / "old", monkeypatch, capsys)
    results = pressure_run(tmp_path / "new", monkeypatch, capsys)

    def new_ids(document: dict[str, Any]) -> None:
        old = document["provenance"]["run_id"]
        document["provenance"]["run_id"] = "c0ffeec0ffee"
        for scenario in document["scenarios"]:
            for run in scenario["runs"]:
                run["id"] = run["id"].replace(old, "c0ffeec0ffee")

    copy = edited(results, new_ids, "copy.json")
    # Two projects, each run from its own folder: their files are not where the gate runs.
    argv = [results, copy, "--baseline", baseline, "--allow-offline", "--no-stale-check"]
    code, out, _ = gate(capsys, *argv)
    assert code == 0, out
    lines = out.splitlines()
    assert (
        f"         demo/aggregate-first (pressure) in {copy}: its 22 runs are already in "
        f"{results} under other ids: counted once"
    ) in lines
    assert (
        "         2 results files complete, 1 scenarios with a verdict, 22 runs each counted once"
        in lines
    )
    assert (
        "         demo/aggregate-first (pressure): with-skill pass rate 11/11 100% now vs 11/11 "
        "100% in the baseline: +0% [-28%, +28%]"
    ) in lines

    def repeat(document: dict[str, Any]) -> None:
        runs = document["scenarios"][0]["runs"]
        runs.append({**runs[0], "id": runs[0]["id"] + "-again"})

    code, out, _ = gate(capsys, edited(results, repeat, "repeated.json"), "--allow-offline")
    assert code == 1
    first = json.loads(results.read_text())["scenarios"][0]["runs"][0]["id"]
    assert reasons(out) == [
        f"{results.with_name('repeated.json')}: demo/aggregate-first (pressure): run "
        f"{first}-again holds what run {first} holds: the same run under another id (and 9 "
        "more: k, lift_ci[0], with_skill.runs, with_skill.passed, …)"
    ]


# --- fresh: the files on disk are the ones the runs read ---------------------------------------


def test_a_suite_or_skill_changed_since_the_run_makes_results_stale(tmp_path, monkeypatch, capsys):
    results = pressure_run(tmp_path, monkeypatch, capsys)
    code, out, _ = gate(capsys, "results.json", "--allow-offline")
    assert code == 0, out
    assert "         1 suite files and 1 skill folders on disk as the runs read them" in out

    skill = tmp_path / "skills" / "demo"
    (skill / "SKILL.md").write_text(SKILL + "Also grep.\n")
    (skill / "references").mkdir()
    (skill / "references" / "queries.md").write_text("count_over_time\n")
    suite = tmp_path / "demo.yaml"
    then = "sha256:" + hashlib.sha256(suite.read_bytes()).hexdigest()
    suite.write_text(suite.read_text().replace("repetitions: 11", "repetitions: 12"))
    now = "sha256:" + hashlib.sha256(suite.read_bytes()).hexdigest()
    # A run's own byproducts are not the skill: the run copies none of them.
    (skill / "__pycache__").mkdir()
    (skill / "__pycache__" / "x.pyc").write_bytes(b"\0")

    code, out, _ = gate(capsys, "results.json", "--allow-offline")
    assert code == 1, out
    assert reasons(out) == [
        f"results.json: suite demo.yaml changed since the run ({then[:19]} then, {now[:19]} now)",
        "results.json: skill skills/demo: SKILL.md changed, references/queries.md added since "
        "the run",
    ]
    assert (
        "         fix: rerun the suite with the files as they are now, or pass --no-stale-check "
        "to gate without comparing them"
    ) in out.splitlines()

    code, out, _ = gate(capsys, "results.json", "--allow-offline", "--no-stale-check")
    assert code == 0, out
    assert "         not checked (--no-stale-check): the results may be of other files" in out

    (skill / "references" / "queries.md").unlink()
    (skill / "SKILL.md").unlink()
    code, out, _ = gate(capsys, results, "--allow-offline")
    assert "SKILL.md removed since the run" in out


def test_results_that_do_not_record_their_skills_have_unknown_freshness(
    tmp_path, monkeypatch, capsys
):
    results = pressure_run(tmp_path, monkeypatch, capsys)
    older = edited(results, lambda d: d["provenance"].pop("trees"), "older.json")
    code, out, _ = gate(capsys, older, "--allow-offline")
    assert code == 1, out
    assert reasons(out) == [
        f"{older}: freshness unknown: the file does not record its skills' checksums (written "
        "before skilltest recorded them)"
    ]
    assert (
        "         fix: rerun the suite with this version, or pass --no-stale-check to gate "
        "without comparing them"
    ) in out.splitlines()


def test_an_edited_trigger_query_and_its_metrics_block(claude_bin, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "results.json"
    argv = ["triggers", "tests/triggers/lgtm.yaml", "--only", "capital-of-france", "-k", "2"]
    argv += ["--claude", str(claude_bin), "--output-dir", str(tmp_path / "out")]
    argv += ["--allow-inconclusive"]  # two runs decide nothing; the figures are what is checked
    assert main([*argv, "--results", str(results)]) == 0
    capsys.readouterr()

    def fired(document: dict[str, Any]) -> None:
        # A should-not query that did not fire, written as fired in one run of two: a false
        # trigger the runs do not show.
        (suite,) = document["suites"]
        suite["queries"][0].update(fired=1, rate=0.5)
        suite["metrics"].update(fp=1, tn=1)

    edited_file = edited(results, fired, "fired.json")
    code, out, _ = gate(capsys, edited_file, "--allow-offline", "--allow-undecided")
    assert code == 1, out
    assert reasons(out) == [
        f"{edited_file}: lgtm (triggers): metrics.fp is 1 in the file, 0 from its runs (and 1 "
        "more: metrics.tn)",
        f"{edited_file}: lgtm/capital-of-france (triggers): fired is 1 in the file, 0 from its "
        "runs (and 1 more: rate)",
    ]
    code, out, _ = gate(capsys, results, "--allow-offline", "--allow-undecided")
    assert code == 0, out
