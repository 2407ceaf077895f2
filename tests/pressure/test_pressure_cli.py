"""`skilltest pressure` end to end: the real Anthropic SDK against the emulator on loopback."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.errors import InputError
from skilltest.report.files import read_results
from tests.projects import demo_script, demo_suite, numbered_suite, write_demo_project

from ..conftest import REPO_ROOT

SUITE = demo_suite()


def workspace(tmp_path: Path, *, with_text: str, faults: str = "", suite: str = SUITE) -> Path:
    return write_demo_project(tmp_path, suite, demo_script(with_text, faults))


def test_example_suites_run_offline_and_show_both_verdicts(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    results, junit = tmp_path / "results.json", tmp_path / "junit.xml"
    code = main(["pressure", "--results", str(results), "--junit", str(junit)])
    out, err = capsys.readouterr()
    assert code == 0
    assert err.startswith(
        "skilltest: offline: answers come from the skilltest emulator, a scripted stand-in, not a "
        "model, so the numbers say nothing about how a real model behaves"
    )
    assert out.splitlines()[0] == (
        "offline: these numbers come from the skilltest emulator, a scripted stand-in, not a "
        "model; they say nothing about how a real model behaves"
    )
    assert re.search(r"lgtm/aggregation-before-raw-fetch\s+steers\s", out)
    assert re.search(r"lgtm/percentiles-for-latency\s+not-red\s", out)
    assert "warning: 1 scenario(s) not RED" in out

    document = read_results(results, "pressure")
    assert document["schema_version"] == 4
    assert document["layer"] == "pressure"
    assert document["backend"] == "emulator"
    assert (document["complete"], document["interrupted"]) == (True, False)
    with pytest.raises(InputError, match="not a scenarios results file"):
        read_results(results, "scenarios")
    verdicts = {s["id"]: s["verdict"] for s in document["scenarios"]}
    assert verdicts["percentiles-for-latency"] == "not-red"
    assert verdicts["index-concurrently"] == "steers"
    scenario = next(s for s in document["scenarios"] if s["id"] == "index-concurrently")
    # No suite fixes K, so repetitions are adaptive (3 to 20 runs per arm in this layer). A
    # clean scenario steers once 12/12 show a rate of at least 0.7 within the error rate the
    # looks up to 12 could not use (0.7 ** n is above the shares until then): 10 shares of
    # 2.5%/18, 0.7 ** 12 = 1.38% <= 1.39%.
    share = 0.025 / 18
    assert scenario["repetitions"] == {"mode": "auto", "min_k": 3, "max_k": 20}
    assert (scenario["k"], scenario["confidence"]) == (12, pytest.approx(1 - 2 * share))
    assert scenario["with_skill"] == {
        "runs": 12,
        "errors": 0,
        "passed": 12,
        "pass_rate": 1.0,
        "ci_low": pytest.approx((10 * share) ** (1 / 12), abs=1e-9),
        "ci_high": 1.0,
        # k: the first round of -k auto (3 runs); all 12 runs passed.
        "k": 3,
        "pass_at_k": 1.0,
        "pass_hat_k": 1.0,
    }
    assert scenario["lift"] == 1.0
    assert scenario["lift_ci"][0] > 0
    assert scenario["without_skill"]["red"] == 12
    not_red = next(s for s in document["scenarios"] if s["id"] == "percentiles-for-latency")
    assert not_red["k"] == 8
    assert scenario["without_skill"]["expected_rate"] == 1.0
    run = scenario["runs"][0]
    assert set(run) >= {
        "arm",
        "rep",
        "passed",
        "output",
        "matched",
        "missing",
        "anti_matched",
        "usage",
        "latency_ms",
        "error",
    }
    assert "CREATE INDEX CONCURRENTLY" in run["output"]
    assert run["usage"]["output_tokens"] > 0
    # What the suite asked, for reports: the prompt and the patterns each arm is judged by.
    assert scenario["scenario"] == {
        "prompt": "Write a PostgreSQL migration that adds an index on orders.customer_id. The "
        "orders table has 200 million rows.",
        "prompt_suffix": "",
        "turns": [],
        "expected": {
            "required_patterns": ["(?i)create index concurrently"],
            "anti_patterns": ["(?i)create index (?!concurrently)"],
            "expected_patterns": ["(?i)create index"],
            "baseline_red": "criteria",
        },
    }
    # A baseline run says whether it is RED; the emulator reports no cost.
    assert {(r["arm"], r["red"]) for r in scenario["runs"]} == {
        ("with_skill", None),
        ("without_skill", True),
    }
    assert {r["cost_usd"] for r in scenario["runs"]} == {None}
    assert {r["red"] for r in not_red["runs"] if r["arm"] == "without_skill"} == {False}

    cases = ET.parse(junit).getroot().find("testsuite")
    assert cases is not None and cases.get("tests") == "8" and cases.get("failures") == "0"


def test_strict_fails_on_not_red(monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    assert main(["pressure", "tests/skill-pressure/lgtm.yaml", "--strict"]) == 1
    assert "(failing: --strict)" in capsys.readouterr().out


def test_no_steer_fails_and_names_the_missing_pattern(tmp_path, capsys):
    suite = workspace(tmp_path, with_text="Just grep the logs.")
    # 0/2 could still be a rate of 0.8 (4% of the time); 0/3 cannot (0.8%).
    assert main(["pressure", str(suite)]) == 1
    assert "inconclusive" in capsys.readouterr().out
    assert main(["pressure", str(suite), "-k", "3"]) == 1
    out = capsys.readouterr().out
    assert "no-steer" in out
    assert "missing (?i)count_over_time in 3/3" in out
    assert "demo/aggregate: with-skill run 1 did not pass\n  missing (?i)count_over_time\n" in out
    assert "  answer: Just grep the logs." in out


def test_skill_only_runs_one_arm(tmp_path, capsys):
    suite = workspace(tmp_path, with_text="count_over_time first")
    results = tmp_path / "r.json"
    # Without a baseline the pass rate itself must clear the threshold (0.8): 20 runs do.
    assert (
        main(["pressure", str(suite), "--skill-only", "-k", "20", "--results", str(results)]) == 0
    )
    scenario = json.loads(results.read_text())["scenarios"][0]
    assert scenario["without_skill"] is None
    assert {r["arm"] for r in scenario["runs"]} == {"with_skill"}


def test_rate_limit_storm_becomes_error_runs_and_the_suite_goes_on(tmp_path, capsys):
    faults = "faults: {status: 429, rate: 1.0, retry_after_ms: 1}"
    suite = workspace(tmp_path, with_text="count_over_time", faults=faults)
    results = tmp_path / "r.json"
    assert main(["pressure", str(suite), "--results", str(results)]) == 1
    out = capsys.readouterr().out
    assert "error" in out
    scenario = json.loads(results.read_text())["scenarios"][0]
    assert scenario["verdict"] == "error"
    assert scenario["runs"][0]["error"].startswith("API error 429: rate_limit_error")


def test_catastrophic_pattern_on_real_output_is_bad_input(tmp_path, capsys):
    # Passes the load-time probes, blows up on this particular answer.
    suite_text = "match_timeout_s: 0.2\n" + SUITE.replace('["(?i)rm -rf"]', '["(x+x+)+y"]')
    suite = workspace(tmp_path, with_text="count_over_time " + "x" * 5000, suite=suite_text)
    results = tmp_path / "r.json"
    code = main(["pressure", str(suite), "--results", str(results)])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        "demo.yaml#/scenarios/0/with_skill/anti_patterns/0: pattern '(x+x+)+y' took longer than 0.2s"
        in err
    )
    assert json.loads(results.read_text())["scenarios"][0]["verdict"] == "error"


def test_suite_without_model_script_on_the_emulator_is_bad_input(tmp_path, capsys):
    suite = workspace(
        tmp_path, with_text="x", suite=SUITE.replace("model_script: model.yaml\n", "")
    )
    assert main(["pressure", str(suite)]) == 2
    assert "demo.yaml#: the emulator backend needs a model script" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_interrupt_keeps_finished_scenarios(tmp_path, sig, code):
    suite = workspace(
        tmp_path,
        with_text="count_over_time",
        faults="faults: {latency_ms: 700}",
        suite=numbered_suite(6, repetitions=1),
    )
    results = tmp_path / "r.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skilltest",
            "pressure",
            str(suite),
            "-j",
            "2",
            "--results",
            str(results),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 120  # a hang bound only
    # The file exists from the start (an empty, incomplete document) and each finished
    # scenario is appended to its journal; wait for one.
    journal = tmp_path / "r.json.journal.jsonl"
    while not (journal.exists() and journal.read_text().strip()):
        assert time.monotonic() < deadline, "no scenario finished"
        time.sleep(0.1)
    process.send_signal(sig)
    _, err = process.communicate(timeout=120)
    assert process.returncode == code
    assert "interrupted;" in err and "finished scenario(s) kept" in err
    assert "Traceback" not in err
    document = json.loads(results.read_text())
    assert (document["complete"], document["interrupted"]) == (False, True)
    assert 1 <= len(document["scenarios"]) < 6
    assert not journal.exists()  # the whole file holds what the journal held


def test_only_runs_the_matching_scenarios(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(REPO_ROOT)
    results = tmp_path / "r.json"
    code = main(
        [
            "pressure",
            "--only",
            "index-*",
            "--only",
            "jq-extraction",
            "-k",
            "1",
            "--allow-inconclusive",
            "--results",
            str(results),
        ]
    )
    # One run per arm decides nothing: inconclusive, which --allow-inconclusive lets pass.
    assert code == 0
    assert "2 scenarios: 2 inconclusive" in capsys.readouterr().out
    ids = [s["id"] for s in json.loads(results.read_text())["scenarios"]]
    assert ids == ["jq-extraction", "index-concurrently"]


def test_only_matching_nothing_lists_the_ids(monkeypatch, capsys):
    monkeypatch.chdir(REPO_ROOT)
    assert main(["pressure", "--only", "nope"]) == 2
    err = capsys.readouterr().err
    assert "--only nope: matches no scenario" in err
    assert "index-concurrently, jq-extraction" in err


def test_unwritable_results_file_is_bad_input_before_any_request(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(REPO_ROOT)
    assert main(["pressure", "--results", str(tmp_path)]) == 2
    assert "is a folder; give a file name inside it" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["pressure", "--junit", str(blocker / "junit.xml")]) == 2
    err = capsys.readouterr().err
    assert "is not a writable folder" in err or "cannot write the file" in err
    assert "scenario" not in capsys.readouterr().out


def test_one_scenario_in_two_suites_is_bad_input(tmp_path, capsys):
    suite = workspace(tmp_path, with_text="count_over_time")
    (tmp_path / "copy.yaml").write_text(suite.read_text())
    assert main(["pressure", str(suite), str(tmp_path / "copy.yaml")]) == 2
    err = capsys.readouterr().err
    assert "copy.yaml#/scenarios/0: scenario demo/aggregate is also defined at" in err


def test_emulator_answers_do_not_depend_on_concurrency(tmp_path):
    script = (
        "schema_version: 1\nseed: 7\nrules:\n"
        "  - id: cycled\n    when: {system: DEMO}\n    pick: cycle\n"
        "    replies: [{text: count_over_time one}, {text: two}, {text: count_over_time three}]\n"
        "  - id: random\n    pick: random\n"
        "    replies: [{text: grep a}, {text: grep b}, {text: grep c}, {text: grep d}]\n"
    )
    suite = write_demo_project(tmp_path, demo_suite(repetitions=6), script, skill="DEMO SKILL")

    def outputs(jobs: int) -> dict[tuple[str, int], str]:
        results = tmp_path / f"r{jobs}.json"
        main(["pressure", str(suite), "-j", str(jobs), "--results", str(results)])
        runs = json.loads(results.read_text())["scenarios"][0]["runs"]
        return {(r["arm"], r["rep"]): r["output"] for r in runs}

    serial, parallel = outputs(1), outputs(12)
    assert serial == parallel
    # Repetition r starts the cycle at reply r: K=6 walks the three replies twice.
    assert [serial[("with_skill", rep)] for rep in range(1, 7)] == [
        "count_over_time one",
        "two",
        "count_over_time three",
        "count_over_time one",
        "two",
        "count_over_time three",
    ]
    assert len({serial[("without_skill", rep)] for rep in range(1, 7)}) > 1


def test_a_hanging_api_becomes_error_runs_within_the_timeout(tmp_path, capsys):
    suite = workspace(tmp_path, with_text="count_over_time", faults="faults: {hang: true}")
    results = tmp_path / "r.json"
    started = time.monotonic()
    code = main(
        [
            "pressure",
            str(suite),
            "--timeout",
            "0.5",
            "--max-retries",
            "0",
            "-k",
            "1",
            "--results",
            str(results),
        ]
    )
    assert time.monotonic() - started < 150  # the hang is never answered: the timeout ends it
    assert code == 1
    runs = json.loads(results.read_text())["scenarios"][0]["runs"]
    assert [r["error"] for r in runs] == ["API request timed out (after 0 retries)"] * 2
