"""``skilltest triggers`` end to end: the real claude CLI against the emulator on loopback.

One small suite covers every way a run ends: the skill at once, the skill after another tool
call (fired), a run that keeps calling Bash (a budget stop), a plain answer (not fired) and a
should-not query that loads the skill (a false trigger).
"""

import json
import os
import signal
import subprocess
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results

pytestmark = pytest.mark.cli

SUITE = """\
skill: alpha
repetitions: 1
distractors: [beta]
model_script: ../model-scripts/alpha.triggers.yaml
queries:
  - {id: direct, query: "Error spike: look at the logs", should_trigger: true}
  - {id: late, query: "late: check the logs after a look around", should_trigger: true}
  - {id: wander, query: "wander around the repository", should_trigger: true}
  - {id: trivia, query: "trivia: what is the capital of France?", should_trigger: false}
  - {id: overeager, query: "overeager: say hi", should_trigger: false}
"""

# The candidate description (a cooking skill) is seen in the skill listing, where Claude Code
# puts `- alpha: <description>`: with it, the stand-in does not load the skill for logs.
SCRIPT = """\
schema_version: 1
model: claude-test-emulated
rules:
  - id: candidate-looks-elsewhere
    when: {user: "^Error spike", system: "alpha: Use for cooking", turn: 1}
    reply: {text: "Let me look.", tool_calls: [{name: Bash, input: {command: "echo look"}}]}
  - id: direct
    when: {user: "^Error spike", turn: 1}
    reply: {text: "Loading.", tool_calls: [{name: Skill, input: {skill: alpha}}]}
  - id: late-bash
    when: {user: "^late", turn: 1}
    reply: {text: "Looking.", tool_calls: [{name: Bash, input: {command: "echo one"}}]}
  - id: late-skill
    when: {user: "^late", turn: 2}
    reply: {text: "Loading.", tool_calls: [{name: Skill, input: {skill: alpha}}]}
  - id: wander
    when: {user: "^wander"}
    reply: {text: "More.", tool_calls: [{name: Bash, input: {command: "echo wander"}}]}
  - id: overeager
    when: {user: "^overeager", turn: 1}
    reply: {text: "Loading.", tool_calls: [{name: Skill, input: {skill: alpha}}]}
  - id: answer
    when: {turn: 1}
    reply: {text: "Paris."}
  - id: done
    reply: {text: "Done."}
"""

ALPHA = "---\nname: alpha\ndescription: Use when investigating log error spikes.\n---\nBody\n"


@pytest.fixture
def project(tmp_path: Path, claude_bin: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for name, text in (("alpha", ALPHA), ("beta", ALPHA.replace("alpha", "beta"))):
        (tmp_path / "skills" / name).mkdir(parents=True)
        (tmp_path / "skills" / name / "SKILL.md").write_text(text)
    (tmp_path / "tests" / "triggers").mkdir(parents=True)
    (tmp_path / "tests" / "model-scripts").mkdir()
    (tmp_path / "tests" / "triggers" / "alpha.yaml").write_text(SUITE)
    (tmp_path / "tests" / "model-scripts" / "alpha.triggers.yaml").write_text(SCRIPT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SKILLTEST_CLAUDE", str(claude_bin))
    return tmp_path


def rows(out: str) -> dict[str, str]:
    return {line.split()[0]: line for line in out.splitlines() if line.startswith("alpha/")}


def test_every_way_a_run_ends_is_reported_with_results_and_junit(project, capsys):
    code = main(["triggers", "-j", "2", "--results", "out.json", "--junit", "out.xml"])
    out = capsys.readouterr().out
    # One run per query decides nothing: each is inconclusive, which fails the run.
    assert code == 1, out
    assert out.splitlines()[0] == (
        "offline: these numbers come from the skilltest emulator, a scripted stand-in, not a "
        "model; they say nothing about how a real model behaves"
    )
    table = rows(out)
    # The skill after another tool call still counts as fired.
    assert table["alpha/late"].split()[1:] == [
        "fire", "1", "1/1", "100%", "[2%–100%]", "inconclusive"
    ]  # fmt: skip
    assert table["alpha/direct"].split()[-1] == "inconclusive"
    # A budget stop is reported as such, and counts as not fired.
    assert table["alpha/wander"].split()[1:] == [
        "fire", "1", "0/1", "0%", "[0%–98%]", "1", "budget", "inconclusive"
    ]  # fmt: skip
    assert (
        "alpha: precision 2/3 67% [21%–94%], recall 2/3 67% [21%–94%], "
        "accuracy 3/5 60% [23%–88%]\n"
        "  5 queries: 5 inconclusive; per run TP 2, FP 1, FN 1, TN 1; "
        "runs stopped: 1 budget"
    ) in out
    assert (
        "inconclusive (the interval straddles the threshold: more runs would decide):\n"
        "alpha/direct: fired in 1/1 scored runs: the 95% exact interval of its rate, "
        "[2%–100%], straddles the threshold 50%; about 6 runs would likely decide it\n"
        "  'Error spike: look at the logs'\n"
    ) in out
    assert (
        "5 inconclusive: the intervals do not decide yet; run more repetitions "
        "(-k N, or -k auto --max-k N)"
    ) in out

    results = read_results(project / "out.json", "triggers")
    assert results["schema_version"] == 4
    assert results["layer"] == "triggers"
    assert results["complete"] is True and results["interrupted"] is False
    assert results["comparison"] is None
    [suite] = results["suites"]
    assert suite["distractors"] == ["beta"]
    metrics = suite["metrics"]
    assert (metrics["tp"], metrics["fp"], metrics["fn"], metrics["tn"]) == (2, 1, 1, 1)
    assert metrics["recall"]["value"] == pytest.approx(2 / 3)
    queries = {q["id"]: q for q in suite["queries"]}
    late = queries["late"]
    assert (late["fired"], late["rate"], late["passed"]) == (1, 1.0, False)
    assert (late["verdict"], late["result"], late["k"]) == ("inconclusive", "inconclusive", 1)
    assert late["repetitions"] == {"mode": "fixed", "k": 1}
    assert late["ci_low"] == pytest.approx(0.025) and late["ci_high"] == 1.0
    [run] = late["runs"]
    provenance = results["provenance"]
    assert (provenance["origin"], provenance["backend"]) == ("offline", "emulator")
    assert provenance["claude_version"] == "2.1.328" and provenance["models"]
    assert run["id"] == f"{provenance['run_id']}/triggers/alpha/current/late/0"
    assert run["ended"] == "fired"
    assert run["reason"] == "the skill fired (Skill(alpha), tool call 2)"
    assert [c["name"] for c in run["first_tool_calls"]] == ["Bash", "Skill"]
    # Ended at the Skill call: its request was the last one (and the direct one's the only one).
    assert run["duration_s"] > 0 and run["requests"] == 2
    assert queries["direct"]["runs"][0]["requests"] == 1
    assert run["tokens"]["output_tokens"] > 0
    # What the CLI estimated each run cost (on the emulator: list price for its tokens).
    assert all(r["cost_usd"] > 0 for q in suite["queries"] for r in q["runs"])
    [wander] = queries["wander"]["runs"]
    assert wander["ended"] == "budget"
    assert wander["requests"] == 4  # the fourth Bash call was refused, and nothing followed
    assert wander["reason"].startswith("tool-call budget: 3 tool call(s) without the skill")
    assert queries["wander"]["ended"]["budget"] == 1
    assert queries["trivia"]["runs"][0]["ended"] == "not-fired"
    # The distractor was listed beside the skill under test.
    sent = Path(run["transcript"].replace(".ndjson", ".requests.json")).read_text()
    assert "- alpha: Use when investigating" in sent and "- beta: Use when" in sent

    cases = {
        case.get("name"): case for case in ET.parse(project / "out.xml").getroot().iter("testcase")
    }
    assert set(cases) == {"direct", "late", "wander", "trivia", "overeager"}
    suite_properties = {
        p.get("name"): p.get("value")
        for p in ET.parse(project / "out.xml").getroot().findall("testsuite/properties/property")
    }
    assert suite_properties["backend"] == "emulator"
    assert suite_properties["notice"].startswith("offline: these numbers come from the skilltest")
    assert cases["wander"].find("failure").get("message") == (
        "inconclusive: expected fire, threshold 50%, K 1; fired in 0/1 scored runs: the 95% "
        "exact interval of its rate, [0%–98%], straddles the threshold 50%; about 6 runs would "
        "likely decide it (1 budget)"
    )
    assert all(case.find("failure") is not None for case in cases.values())


def test_six_runs_decide_passes_misses_and_false_triggers(project, capsys):
    only = ("--only", "direct", "--only", "wander", "--only", "overeager")
    code = main(["triggers", *only, "-k", "6", "-j", "2", "--junit", "out.xml"])
    out = capsys.readouterr().out
    assert code == 1, out
    table = rows(out)
    assert table["alpha/direct"].split()[1:] == [
        "fire", "6", "6/6", "100%", "[54%–100%]", "pass"
    ]  # fmt: skip
    assert table["alpha/wander"].split()[1:] == [
        "fire", "6", "0/6", "0%", "[0%–46%]", "6", "budget", "miss"
    ]  # fmt: skip
    assert table["alpha/overeager"].split()[-1] == "false-trigger"
    assert (
        "  3 queries: 1 pass, 1 miss, 1 false-trigger; per run TP 6, FP 6, FN 6, TN 0; runs "
        "stopped: 6 budget"
    ) in out
    assert (
        "false triggers (fired too often, should not have):\n"
        "alpha/overeager: fired in 6/6 scored runs: the 95% exact interval of its rate, "
        "[54%–100%], lies at or above the threshold 50%\n"
        "  'overeager: say hi'\n"
        "  run 1 (fired): Skill(alpha)\n"
    ) in out
    assert (
        "misses (did not fire often enough, should have):\n"
        "alpha/wander: fired in 0/6 scored runs: the 95% exact interval of its rate, "
        "[0%–46%], lies below the threshold 50%\n"
        "  'wander around the repository'\n"
        "  run 1 (budget): Bash(echo wander), Bash(echo wander), Bash(echo wander), "
        "Bash(echo wander)"
    ) in out
    assert "inconclusive (" not in out and "inconclusive:" not in out
    cases = {
        case.get("name"): case for case in ET.parse(project / "out.xml").getroot().iter("testcase")
    }
    assert cases["direct"].find("failure") is None
    assert cases["wander"].find("failure").get("message") == (
        "miss: expected fire, threshold 50%, K 6; fired in 0/6 scored runs: the 95% exact "
        "interval of its rate, [0%–46%], lies below the threshold 50% (6 budget)"
    )
    assert cases["overeager"].find("failure").get("message").startswith("false-trigger: ")


def test_compare_description_runs_both_and_prints_the_differences(project, capsys):
    skill_md = project / "skills" / "alpha" / "SKILL.md"
    code = main(
        [
            "triggers",
            "--only",
            "direct",
            "-k",
            "3",
            "-j",
            "2",
            "--compare-description",
            "--description",
            "Use for cooking recipes.",
            "--results",
            "out.json",
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out
    assert skill_md.read_text() == ALPHA  # the user's skill is never edited
    table = rows(out)
    assert table["alpha/direct"].split()[2:4] == ["3/3", "100%"]
    assert "alpha/direct (candidate)" in out
    assert "candidate - current" in out
    comparison = [line for line in out.splitlines() if line.startswith("alpha/direct ")][-1]
    assert comparison.split()[1:] == [
        "fire", "3/3", "100%", "[29%–100%]", "0/3", "0%", "[0%–71%]", "-100%", "[-100%,", "-8%]"
    ]  # fmt: skip
    assert "alpha recall" in out
    results = json.loads((project / "out.json").read_text())
    assert [(s["variant"], s["description"]) for s in results["suites"]] == [
        ("current", "Use when investigating log error spikes."),
        ("candidate", "Use for cooking recipes."),
    ]
    differences = {d["name"]: d for d in results["comparison"][0]["differences"]}
    assert differences["direct"]["difference"]["value"] == -1.0
    assert differences["recall"]["difference"]["ci_high"] < 0
    # The candidate's runs saw the other description in the skill listing.
    candidate = results["suites"][1]["queries"][0]["runs"][0]
    assert "candidate" in candidate["transcript"]
    sent = Path(candidate["transcript"].replace(".ndjson", ".requests.json")).read_text()
    assert "- alpha: Use for cooking recipes." in sent


def test_exit_0_when_every_query_passes(project, capsys):
    assert main(["triggers", "--only", "trivia", "-k", "6"]) == 0
    out = capsys.readouterr().out
    assert "1 queries: 1 pass" in out


def test_k_auto_runs_each_query_until_its_verdict_is_decided(project, capsys):
    code = main(
        [
            *("triggers", "--only", "direct", "-k", "auto", "-j", "2", "--results", "out.json"),
            *("--compare-description", "--description", "Use for cooking recipes."),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1, out  # the candidate misses
    assert "1 queries, K auto 3-20, -j 2" in out
    table = rows(out)
    assert [line for line in out.splitlines() if line.startswith("alpha/direct")][:2] == [
        "alpha/direct              fire      8/20  8/8 100% [55%–100%]         pass",
        "alpha/direct (candidate)  fire      8/20  0/8 0% [0%–45%]             miss",
    ]
    assert "alpha/direct" in table
    current, candidate = json.loads((project / "out.json").read_text())["suites"]
    for suite in (current, candidate):
        [query] = suite["queries"]
        assert (query["k"], len(query["runs"])) == (8, 8)
        assert query["repetitions"] == {"mode": "auto", "min_k": 3, "max_k": 20}
        # The look after 8 runs spends the shares the looks 3 to 7 could not.
        assert query["confidence"] == pytest.approx(1 - 2 * 6 * 0.025 / 18)
    # A plan too short to decide ends inconclusive at its most runs, and says how many more.
    code = main(["triggers", "--only", "direct", "-k", "auto", "--max-k", "4", "-j", "2"])
    out = capsys.readouterr().out
    assert code == 1
    assert rows(out)["alpha/direct"].split()[1:] == [
        "fire", "4/4", "4/4", "100%", "[40%–100%]", "inconclusive"
    ]  # fmt: skip


def test_inconclusive_queries_fail_unless_allowed(project, capsys):
    assert main(["triggers", "--only", "trivia", "--only", "late"]) == 1
    capsys.readouterr()
    assert main(["triggers", "--only", "trivia", "--only", "late", "--allow-inconclusive"]) == 0
    out = capsys.readouterr().out
    assert "2 queries: 2 inconclusive" in out
    assert (
        "2 inconclusive: the intervals do not decide yet; run more repetitions (-k N, or -k "
        "auto --max-k N) (not failing: --allow-inconclusive)"
    ) in out


def test_an_interrupted_run_keeps_the_queries_finished_so_far(
    project, capsys, tmp_path, monkeypatch
):
    temp = tmp_path / "temp"  # where the run sandboxes go
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("TMPDIR", str(temp))
    script = project / "tests" / "model-scripts" / "alpha.triggers.yaml"
    # Claude Code refuses a bare long `sleep`; a program that takes its time is let through.
    # Its marker finds it among the machine's processes.
    marker = f"slow-{os.getpid()}-{time.monotonic_ns()}"
    slow = f"command: \"python3 -c 'import time; time.sleep(60)' {marker}\""
    script.write_text(SCRIPT.replace('command: "echo wander"', slow, 1))
    results = project / "out.json"

    def finished() -> int:
        try:
            document = json.loads(results.read_text())
        except (OSError, ValueError):
            return 0
        return sum(len(suite["queries"]) for suite in document["suites"])

    def sleeping() -> bool:
        ps = subprocess.run(
            ["ps", "-ww", "-eo", "args"], capture_output=True, text=True, check=True
        )
        return marker in ps.stdout

    def stop_after_the_first_query() -> None:
        deadline = time.monotonic() + 60
        while finished() < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        while not sleeping() and time.monotonic() < deadline:
            time.sleep(0.1)  # until the wander run is asleep in its Bash call
        os.kill(os.getpid(), signal.SIGTERM)

    # Should the signal come after main() returned, it must not end the test session.
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    watcher = threading.Thread(target=stop_after_the_first_query, daemon=True)
    watcher.start()
    started = time.monotonic()
    try:
        code = main(
            [
                *("triggers", "--only", "direct", "--only", "wander", "-j", "1"),
                *("--results", str(results)),
            ]
        )
        watcher.join()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert code == 143
    assert time.monotonic() - started < 30
    document = json.loads(results.read_text())
    assert (document["complete"], document["interrupted"]) == (False, True)
    [suite] = document["suites"]
    assert [q["id"] for q in suite["queries"]] == ["direct"]
    out, err = capsys.readouterr()
    assert "interrupted; 1 query result(s) finished" in err
    # What had finished is shown as what it is: the stand-in's numbers.
    assert out.startswith("offline: these numbers come from the skilltest emulator")
    # The interrupted run's sandbox and the sleeping command went with it.
    assert sorted(p.name for p in temp.iterdir()) == []
    gone = time.monotonic() + 5
    while sleeping() and time.monotonic() < gone:
        time.sleep(0.1)
    assert not sleeping()


def test_a_run_that_outlasts_its_time_limit_is_reported_as_timeout(project, capsys):
    suite = project / "tests" / "triggers" / "alpha.yaml"
    # Long enough for the CLI to start and ask the model on a loaded machine: the limit must
    # fall while the agent's own command runs, not while the CLI is still starting.
    suite.write_text(SUITE.replace("repetitions: 1\n", "repetitions: 1\ntimeout_ms: 20000\n"))
    script = project / "tests" / "model-scripts" / "alpha.triggers.yaml"
    slow = "command: \"python3 -c 'import time; time.sleep(60)'\""
    script.write_text(SCRIPT.replace('command: "echo wander"', slow, 1))
    started = time.monotonic()
    assert main(["triggers", "--only", "wander", "--results", "out.json"]) == 1
    assert time.monotonic() - started < 55
    out = capsys.readouterr().out
    # The agent's own command hung: the run counts, as not fired.
    assert rows(out)["alpha/wander"].split()[1:] == [
        "fire", "1", "0/1", "0%", "[0%–98%]", "1", "timeout", "inconclusive"
    ]  # fmt: skip
    assert "runs stopped: 1 timeout" in out
    [run] = json.loads((project / "out.json").read_text())["suites"][0]["queries"][0]["runs"]
    assert run["ended"] == "timeout"
    assert run["reason"] == (
        "cut off after 20 s while its Bash call `python3 -c 'import time; time.sleep(60)'` was "
        "still running"
    )


def test_a_run_cut_off_while_the_model_takes_its_time_is_unscored(project, capsys):
    suite = project / "tests" / "triggers" / "alpha.yaml"
    suite.write_text(SUITE.replace("repetitions: 1\n", "repetitions: 1\ntimeout_ms: 20000\n"))
    script = project / "tests" / "model-scripts" / "alpha.triggers.yaml"
    # The command returns at once; the stand-in then takes a minute to answer.
    slow_answer = """\
  - id: slow
    when: {user: "^wander", turn: 2}
    reply: {text: "Still thinking."}
    fault: {latency_ms: 60000}
"""
    script.write_text(SCRIPT.replace("  - id: wander\n", slow_answer + "  - id: wander\n", 1))
    assert main(["triggers", "--only", "wander", "--results", "out.json"]) == 1
    out = capsys.readouterr().out
    assert rows(out)["alpha/wander"].split()[1:] == ["fire", "1", "-", "1", "error", "error"]
    [run] = json.loads((project / "out.json").read_text())["suites"][0]["queries"][0]["runs"]
    assert run["ended"] == "error"
    assert run["reason"] == (
        "cut short: timed out after 20s after 1 tool calls, waiting on the model API or the CLI "
        "itself (no tool call of the agent's running), before the agent finished "
        "(score_partial: true scores what it did)"
    )
