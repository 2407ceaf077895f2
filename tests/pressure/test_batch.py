"""`skilltest pressure --batch`: the runs through the Message Batches API, offline (the real SDK
against the emulator on loopback): the verdicts of a direct run, a resume that submits nothing
again, batch requests that did not succeed as run errors, and cassettes recorded from batches."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skilltest.cli import main
from skilltest.report.files import read_results
from tests.projects import DEMO_SKILL, demo_suite, write_demo_project

from ..conftest import REPO_ROOT

STEERS_K = 11
"""The fewest runs per arm at which the demo steers: every with-skill run passes, and 11 of 11 is
the fewest whose exact interval is credibly at or above the threshold less 0.1 (70%)."""


def demo(
    tmp_path: Path, *, batches: str = "", rules: str = "", repetitions: int = STEERS_K
) -> Path:
    """The demo project (with the skill: count_over_time; without it: grep), its model script
    with ``batches`` (a YAML line) and extra ``rules`` first."""
    script = f"""\
schema_version: 1
{batches}
rules:
{rules}  - id: with-skill
    when: {{system: "DEMO SKILL"}}
    reply: {{text: "count_over_time first"}}
default: {{text: "I would grep the error logs."}}
"""
    return write_demo_project(tmp_path, demo_suite(repetitions), script)


def runs_of(document: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What a user reads of each run: scenario, verdict, arm, repetition, answer, judgement."""
    return [
        (s["id"], s["verdict"], s["k"], r["arm"], r["rep"], r["output"], r["passed"], r["error"])
        for s in document["scenarios"]
        for r in s["runs"]
    ]


def test_batch_gives_the_verdicts_of_the_direct_run_on_the_example_suites(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(REPO_ROOT)
    direct, batched = tmp_path / "direct.json", tmp_path / "batch.json"
    assert main(["pressure", "--results", str(direct)]) == 0
    direct_out = capsys.readouterr().out

    code = main(["pressure", "--batch", "--results", str(batched)])
    out, err = capsys.readouterr()

    assert code == 0
    document = read_results(batched, "pressure")
    assert runs_of(document) == runs_of(read_results(direct, "pressure"))
    # The same table and summary, then what the batches were and cost.
    assert out.startswith(direct_out.rstrip("\n"))
    batch = document["batch"]
    # -k auto: the first look's round (K=3), then a round per look of the undecided scenarios
    # (those that steer decide at K=12); one batch per model script per round.
    assert batch["rounds"] == 10
    assert batch["requests"] == 184
    assert batch["results"] == {
        "succeeded": 184,
        "errored": 0,
        "expired": 0,
        "canceled": 0,
        "failed": 0,
    }
    assert batch["submitted"] == len(batch["batches"]) == 20
    assert batch["price_factor"] == 0.5
    assert batch["resume_file"] == str(tmp_path / "batch.batch.json")
    assert "batch: 184 request(s) in 20 batch(es) over 10 round(s) (20 submitted by this run" in out
    assert "billed at 50% of the standard price (Message Batches)" in out
    assert f"resume file: {tmp_path / 'batch.batch.json'}" in out
    assert re.search(
        r"skilltest: batch msgbatch_\w+ submitted \(24 requests, round 1\); its id is in "
        + re.escape(str(tmp_path / "batch.batch.json")),
        err,
    )
    assert "skilltest: batch round 1: 2 batch(es), 48 requests, ended (48 succeeded)" in err
    resume = json.loads((tmp_path / "batch.batch.json").read_text())
    assert resume["complete"] is True
    assert document["provenance"]["backend"] == "emulator"


def test_a_fixed_k_is_one_round_in_one_batch(tmp_path, capsys):
    suite = demo(tmp_path)
    results = tmp_path / "r.json"

    assert main(["pressure", str(suite), "--batch", "--results", str(results)]) == 0

    batch = read_results(results, "pressure")["batch"]
    assert (batch["rounds"], batch["requests"], len(batch["batches"])) == (1, 2 * STEERS_K, 1)
    assert "demo/aggregate  steers" in capsys.readouterr().out
    # A new run over a finished one's resume file: the emulator keeps only the new batches.
    assert main(["pressure", str(suite), "--batch", "--results", str(results)]) == 0
    (again,) = read_results(results, "pressure")["batch"]["batches"]
    kept = [p.name for p in (tmp_path / "r.batch.emulator").iterdir()]
    assert kept == [f"{again['id']}.json"] and again["id"] != batch["batches"][0]["id"]


def test_over_the_api_limits_a_round_is_several_batches(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("skilltest.runners.batch.MAX_BATCH_REQUESTS", 8)
    suite = demo(tmp_path)
    results = tmp_path / "r.json"

    assert main(["pressure", str(suite), "--batch", "--results", str(results)]) == 0

    document = read_results(results, "pressure")
    assert [b["requests"] for b in document["batch"]["batches"]] == [8, 8, 6]
    assert document["scenarios"][0]["verdict"] == "steers"
    assert document["scenarios"][0]["with_skill"]["passed"] == STEERS_K


def test_progress_is_shown_on_stderr_while_a_batch_is_processed(tmp_path, capsys, monkeypatch):
    suite = demo(tmp_path, batches="batches: {polls: 3}")
    monkeypatch.chdir(tmp_path)

    assert main(["pressure", str(suite), "--batch", "--poll-interval", "0.01"]) == 0

    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("skilltest: batch round")]
    assert re.fullmatch(
        r"skilltest: batch round 1: 1 batch\(es\), 22 requests, in_progress, 1 poll\(s\), [\d.]+s",
        lines[0],
    )
    # Off a terminal: a line when the status changes (and at most once a minute otherwise).
    assert re.fullmatch(
        r"skilltest: batch round 1: 1 batch\(es\), 22 requests, ended \(22 succeeded\), 4 poll\(s\), "
        r"[\d.]+s",
        lines[1],
    )
    assert len(lines) == 2
    # Without --results or --output-dir the resume file is in the current folder.
    assert "its id is in pressure.batch.json" in err
    assert (tmp_path / "pressure.batch.json").is_file()


def test_expired_errored_and_canceled_requests_are_run_errors_with_their_reason(tmp_path, capsys):
    rules = """\
  - id: too-long
    when: {system: "DEMO SKILL"}
    reply: {text: "never"}
    batch: {result: errored, status: 400, message: "prompt is too long"}
  - id: not-processed
    when: {user: "Error spike"}
    reply: {text: "never"}
    batch: {result: expired}
"""
    suite = demo(tmp_path, rules=rules, repetitions=2)
    results = tmp_path / "r.json"

    code = main(["pressure", str(suite), "--batch", "--results", str(results)])
    out = capsys.readouterr().out

    assert code == 1
    document = read_results(results, "pressure")
    scenario = document["scenarios"][0]
    assert scenario["verdict"] == "error"
    # Not scored: no run counts for or against the skill.
    assert (scenario["with_skill"]["runs"], scenario["with_skill"]["errors"]) == (0, 2)
    assert (scenario["without_skill"]["runs"], scenario["without_skill"]["errors"]) == (0, 2)
    errors = {r["arm"]: r["error"] for r in scenario["runs"]}
    assert errors["with_skill"] == (
        "batch request errored: invalid_request_error: prompt is too long"
    )
    assert errors["without_skill"].startswith("batch request expired: the batch ended")
    assert all(r["passed"] is None for r in scenario["runs"])
    assert document["batch"]["results"] == {
        "succeeded": 0,
        "errored": 2,
        "expired": 2,
        "canceled": 0,
        "failed": 0,
    }
    assert "demo/aggregate: 4 run(s) failed" in out
    assert ": 2 errored, 2 expired" in out


def test_a_canceled_batch_makes_every_run_an_error(tmp_path, capsys):
    suite = demo(tmp_path, batches="batches: {end: canceled}", repetitions=1)
    results = tmp_path / "r.json"

    assert main(["pressure", str(suite), "--batch", "--results", str(results)]) == 1

    scenario = read_results(results, "pressure")["scenarios"][0]
    assert [r["error"] for r in scenario["runs"]] == [
        "batch request canceled: the batch was canceled before this request was run"
    ] * 2


def test_an_api_that_cannot_be_reached_makes_every_run_an_error(tmp_path, capsys, monkeypatch):
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fake")
    suite = demo(tmp_path, repetitions=1)
    results = tmp_path / "r.json"
    options = ["--backend", "anthropic", "--max-retries", "0", "--results", str(results)]

    assert main(["pressure", str(suite), "--batch", *options]) == 1

    document = read_results(results, "pressure")
    errors = [r["error"] for r in document["scenarios"][0]["runs"]]
    assert len(errors) == 2
    assert all(
        e.startswith("the batch could not be created: API connection failed:") for e in errors
    )
    assert document["batch"]["results"]["failed"] == 2
    # Nothing was submitted: the resume file holds no batch, and a new run may start over it.
    assert json.loads((tmp_path / "r.batch.json").read_text())["batches"] == []


def wait_for(path: Path, process: subprocess.Popen[str], timeout: float = 60) -> None:
    """Until the resume file holds a submitted batch (it is written, empty, before any)."""
    deadline = time.monotonic() + timeout
    while not (path.exists() and json.loads(path.read_text())["batches"]):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} holds no batch"
        time.sleep(0.05)


def interrupted_batch(tmp_path: Path, sig: int, *options: str) -> subprocess.CompletedProcess[str]:
    """``skilltest pressure --batch`` in a process of its own, stopped with ``sig`` once its
    resume file is written (it polls a batch that ends 3 s after its creation)."""
    suite = demo(tmp_path, batches="batches: {processing_ms: 3000}")
    command = [sys.executable, "-m", "skilltest", "pressure", str(suite), "--batch", *options]
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    wait_for(tmp_path / "out" / "r.batch.json", process)
    time.sleep(0.3)  # into the poll
    process.send_signal(sig)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(command, process.returncode, out, err)


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
def test_an_interrupted_batch_resumes_without_submitting_again(
    tmp_path, capsys, monkeypatch, sig, code
):
    stopped = interrupted_batch(tmp_path, sig, "--results", "out/r.json")

    assert stopped.returncode == code
    assert "Traceback" not in stopped.stderr
    assert (
        "skilltest: the submitted batches go on; --resume-batch out/r.batch.json polls them and "
        "reads their results without submitting them again"
    ) in stopped.stderr
    partial = read_results(tmp_path / "out" / "r.json", "pressure")
    assert (partial["complete"], partial["interrupted"], partial["scenarios"]) == (
        False,
        True,
        [],
    )
    resume = json.loads((tmp_path / "out" / "r.batch.json").read_text())
    assert resume["complete"] is False
    (submitted,) = resume["batches"]
    assert sorted((r["run"], r["rep"]) for r in submitted["requests"].values()) == sorted(
        (f"demo/aggregate:{arm}", rep)
        for arm in ("with_skill", "without_skill")
        for rep in range(STEERS_K)
    )
    # The emulator keeps its batches beside the resume file: one, the one submitted.
    folder = tmp_path / "out" / "r.batch.emulator"
    assert [p.name for p in folder.iterdir()] == [f"{submitted['id']}.json"]

    monkeypatch.chdir(tmp_path)
    resumed = main(
        ["pressure", "demo.yaml", "--resume-batch", "out/r.batch.json", "--results", "out/r.json"]
    )
    out, err = capsys.readouterr()

    assert resumed == 0
    assert "demo/aggregate  steers" in out
    assert "submitted (" not in err
    document = read_results(tmp_path / "out" / "r.json", "pressure")
    assert document["complete"] is True
    batch = document["batch"]
    assert (batch["submitted"], batch["resumed"]) == (0, 1)
    assert batch["batches"][0]["id"] == submitted["id"]
    assert batch["batches"][0]["submitted_by_this_run"] is False
    assert [p.name for p in folder.iterdir()] == [f"{submitted['id']}.json"]
    assert json.loads((tmp_path / "out" / "r.batch.json").read_text())["complete"] is True


def test_resume_against_the_api_polls_the_same_batch(tmp_path, capsys, monkeypatch):
    """The live path: the anthropic backend at ANTHROPIC_BASE_URL (an emulator served on its
    own, which logs each request), stopped mid-poll and resumed: one batch is ever created."""
    suite = demo(tmp_path, batches="batches: {processing_ms: 3000}")
    server = subprocess.Popen(
        [sys.executable, "-m", "skilltest", "emulator", "serve", "--script", "model.yaml"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert server.stdout is not None
        url = re.search(r"http://\S+", server.stdout.readline())
        assert url is not None, "the emulator did not say where it listens"
        env = {**os.environ, "ANTHROPIC_BASE_URL": url.group(0), "ANTHROPIC_API_KEY": "sk-fake"}
        options = ["--backend", "anthropic", "--poll-interval", "0.1", "--results", "out/r.json"]
        process = subprocess.Popen(
            [sys.executable, "-m", "skilltest", "pressure", str(suite), "--batch", *options],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**env, "PYTHONUNBUFFERED": "1"},
        )
        wait_for(tmp_path / "out" / "r.batch.json", process)
        time.sleep(0.3)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
        assert process.returncode == 130
        resume = json.loads((tmp_path / "out" / "r.batch.json").read_text())
        assert (resume["backend"], resume["base_url"]) == ("anthropic", url.group(0))

        for name, value in env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(tmp_path)
        code = main(["pressure", "demo.yaml", "--resume-batch", "out/r.batch.json", *options])
    finally:
        server.send_signal(signal.SIGINT)
        _, log = server.communicate(timeout=30)

    assert code == 0
    assert "demo/aggregate  steers" in capsys.readouterr().out
    creations = [line for line in log.splitlines() if line.startswith("POST /v1/messages/batches")]
    assert creations == ["POST /v1/messages/batches  200"]
    assert re.search(r"GET /v1/messages/batches/msgbatch_\w+/results  200", log)


def test_batch_record_writes_the_cassettes_a_direct_recording_writes(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    direct, batched = tmp_path / "direct", tmp_path / "batched"
    assert main(["pressure", "--record", str(direct), "--results", str(tmp_path / "d.json")]) == 0
    assert (
        main(
            ["pressure", "--batch", "--record", str(batched), "--results", str(tmp_path / "b.json")]
        )
        == 0
    )

    def cassettes(root: Path) -> dict[str, list[str]]:
        return {
            str(path.relative_to(root)): [
                line for line in path.read_text().splitlines() if not line.startswith("recorded_at")
            ]
            for path in sorted(root.rglob("*.yaml"))
        }

    assert len(cassettes(batched)) == 16
    assert cassettes(batched) == cassettes(direct)

    replayed = tmp_path / "replayed.json"
    assert main(["pressure", "--replay", str(batched), "--results", str(replayed)]) == 0
    assert runs_of(read_results(replayed, "pressure")) == runs_of(
        read_results(tmp_path / "b.json", "pressure")
    )


def test_requests_that_did_not_succeed_are_not_recorded(tmp_path, capsys):
    rules = """\
  - id: not-processed
    when: {user: "Error spike", system: "DEMO SKILL"}
    reply: {text: "never"}
    batch: {result: expired}
"""
    suite = demo(tmp_path, rules=rules, repetitions=1)
    cassettes = tmp_path / "cassettes"
    results = tmp_path / "r.json"

    code = main(
        ["pressure", str(suite), "--batch", "--record", str(cassettes), "--results", str(results)]
    )

    assert code == 1

    written = sorted(str(p.relative_to(cassettes)) for p in cassettes.rglob("*.yaml"))
    assert written == ["demo/aggregate/without_skill.yaml"]


def test_bad_batch_input_says_what_to_do(tmp_path, capsys):
    suite = demo(tmp_path)
    cases: list[tuple[list[str], str]] = [
        (
            ["--batch", "--replay", str(tmp_path)],
            "skilltest: error: --batch with --replay: a replay answers from the cassettes and "
            "sends no request to batch\n"
            "  fix: drop --batch to replay; record with --batch --record DIR\n",
        ),
        (
            ["--resume-batch", str(tmp_path / "nope.json")],
            f"skilltest: error: {tmp_path / 'nope.json'}: no such resume file\n"
            "  fix: pass the file a `skilltest pressure --batch` run wrote (it says where)\n",
        ),
        (
            ["--batch", "--backend", "anthropic"],
            "skilltest: error: --backend anthropic needs ANTHROPIC_API_KEY (or "
            "ANTHROPIC_AUTH_TOKEN)\n"
            "  fix: export ANTHROPIC_API_KEY=..., or use --backend emulator to run offline\n",
        ),
    ]
    for options, expected in cases:
        assert main(["pressure", str(suite), *options]) == 2, options
        assert capsys.readouterr().err == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            {"layer": "pressure"},
            "{path}: not a resume file (no `kind: skilltest pressure batch`)\n"
            "  fix: pass the file a `skilltest pressure --batch` run wrote (it says where)\n",
        ),
        (
            {"kind": "skilltest pressure batch", "schema_version": 9},
            "{path}#/schema_version: resume file schema_version 9 is not 1\n"
            "  fix: resume it with the skilltest version that wrote it\n",
        ),
        (
            {"kind": "skilltest pressure batch", "schema_version": 1, "backend": "emulator",
             "batches": [{"id": "msgbatch_01x", "round": 1, "runner": "m", "requests": {"r1": {}}}]},
            "{path}#/batches/0: not a batch of a resume file ('run')\n"
            "  fix: undo the hand edit; the file is written by skilltest\n",
        ),
    ],
    ids=["another-file", "another-version", "hand-edited"],
)  # fmt: skip
def test_a_resume_file_that_is_not_one_is_refused(tmp_path, capsys, content, expected):
    suite = demo(tmp_path)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(content))

    assert main(["pressure", str(suite), "--resume-batch", str(path)]) == 2

    assert capsys.readouterr().err == "skilltest: error: " + expected.format(path=path)


def test_the_claude_backend_has_no_batches(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "not-used")
    suite = demo(tmp_path)

    code = main(["pressure", str(suite), "--batch", "--backend", "claude"])

    assert code == 2
    assert capsys.readouterr().err == (
        "skilltest: error: --batch: --backend claude runs each turn through the claude CLI, "
        "which has no Message Batches\n"
        "  fix: use --backend anthropic (live, with ANTHROPIC_API_KEY) or the emulator with "
        "--batch, or drop --batch\n"
    )


def test_a_new_batch_run_keeps_an_unfinished_runs_resume_file(tmp_path, capsys):
    interrupted_batch(tmp_path, signal.SIGINT, "--results", "out/r.json")
    kept = (tmp_path / "out" / "r.batch.json").read_text()

    code = main(
        [
            "pressure",
            str(tmp_path / "demo.yaml"),
            "--batch",
            "--results",
            str(tmp_path / "out" / "r.json"),
        ]
    )

    assert code == 2
    path = tmp_path / "out" / "r.batch.json"
    assert capsys.readouterr().err == (
        f"skilltest: error: {path}: holds 1 batch(es) of a run that did not finish; a new run "
        "would write over their ids\n"
        f"  fix: resume it: --resume-batch {path} (nothing is submitted again), or delete the "
        "file to submit new batches\n"
    )
    assert path.read_text() == kept


def test_a_resume_whose_requests_changed_is_refused(tmp_path, capsys):
    interrupted_batch(tmp_path, signal.SIGINT, "--results", "out/r.json")
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text(DEMO_SKILL + " Edited.")
    resume = tmp_path / "out" / "r.batch.json"

    code = main(["pressure", str(tmp_path / "demo.yaml"), "--resume-batch", str(resume)])

    err = capsys.readouterr().err
    assert code == 2
    assert (
        f"skilltest: error: {resume}: round 1: demo/aggregate:with_skill repetition 1 was "
        "submitted in batch msgbatch_"
    ) in err
    assert (
        "with another request (the prompt, the skill, the model or a setting changed since)" in err
    )
    assert "  fix: resume with the suites, skills and options of the command that submitted" in err


def test_a_resume_that_asks_for_other_runs_is_refused(tmp_path, capsys):
    interrupted_batch(tmp_path, signal.SIGINT, "--results", "out/r.json")
    resume = tmp_path / "out" / "r.batch.json"

    code = main(
        ["pressure", str(tmp_path / "demo.yaml"), "--resume-batch", str(resume), "--skill-only"]
    )

    err = capsys.readouterr().err
    assert code == 2
    assert re.search(
        r"round 1: batch msgbatch_\w+ holds runs this command does not ask for \(11, e\.g\. "
        r"demo/aggregate:without_skill repetition 1\)",
        err,
    )


def test_a_resume_file_of_another_backend_is_refused(tmp_path, capsys):
    suite = demo(tmp_path)
    resume = tmp_path / "r.batch.json"
    resume.write_text(
        json.dumps(
            {"schema_version": 1, "kind": "skilltest pressure batch", "backend": "anthropic",
             "base_url": "https://api.anthropic.com", "command": [], "started_at": "",
             "complete": False, "batches": []}
        )
    )  # fmt: skip

    assert main(["pressure", str(suite), "--resume-batch", str(resume)]) == 2

    assert capsys.readouterr().err == (
        f"skilltest: error: {resume}#/backend: its batches were submitted to the anthropic "
        "backend; this run uses emulator\n"
        "  fix: set ANTHROPIC_API_KEY (or pass --backend anthropic) to resume batches at the API\n"
    )


def test_a_resumed_run_submits_only_the_runs_its_file_does_not_hold(tmp_path, capsys, monkeypatch):
    """A command stopped between the batches of one round: the batches it created are polled,
    the rest submitted."""
    monkeypatch.setattr("skilltest.runners.batch.MAX_BATCH_REQUESTS", 12)
    suite = demo(tmp_path)
    results = tmp_path / "r.json"
    assert main(["pressure", str(suite), "--batch", "--results", str(results)]) == 0
    resume = tmp_path / "r.batch.json"
    data = json.loads(resume.read_text())
    first, second = data["batches"]
    data["batches"], data["complete"] = [first], False
    resume.write_text(json.dumps(data))
    capsys.readouterr()

    assert (
        main(["pressure", str(suite), "--resume-batch", str(resume), "--results", str(results)])
        == 0
    )

    batch = read_results(results, "pressure")["batch"]
    assert [
        (b["id"] == first["id"], b["requests"], b["submitted_by_this_run"])
        for b in batch["batches"]
    ] == [
        (True, 12, False),
        (False, 10, True),
    ]
    assert (batch["submitted"], batch["resumed"]) == (1, 1)
    assert second["id"] not in {b["id"] for b in batch["batches"]}


def test_a_resume_with_a_larger_k_submits_only_the_extra_repetitions(tmp_path, capsys):
    suite = demo(tmp_path)
    results, resume = tmp_path / "r.json", tmp_path / "r.batch.json"
    assert main(["pressure", str(suite), "--batch", "--results", str(results)]) == 0
    (first,) = json.loads(resume.read_text())["batches"]
    capsys.readouterr()

    code = main(
        [
            "pressure",
            str(suite),
            "--resume-batch",
            str(resume),
            "-k",
            "13",
            "--results",
            str(results),
        ]
    )
    out, err = capsys.readouterr()

    assert code == 0
    assert "demo/aggregate  steers" in out
    assert re.search(r"skilltest: batch msgbatch_\w+ submitted \(4 requests, round 1\)", err)
    document = read_results(results, "pressure")
    assert sorted((r["arm"], r["rep"]) for r in document["scenarios"][0]["runs"]) == sorted(
        (arm, rep) for arm in ("with_skill", "without_skill") for rep in range(1, 14)
    )
    batch = document["batch"]
    assert [(b["id"] == first["id"], b["requests"]) for b in batch["batches"]] == [
        (True, 2 * STEERS_K),
        (False, 4),
    ]
    assert (batch["submitted"], batch["resumed"]) == (1, 1)


def adaptive_run(tmp_path: Path) -> tuple[Path, Path, str]:
    """A finished ``-k auto --min-k 10 --max-k 13`` run of the demo: it steers at the third look,
    so its resume file holds repetitions 1-10 in round 1, 11 in round 2 and 12 in round 3.
    Returns the suite, the resume file and what it holds."""
    suite = demo(tmp_path)
    results, resume = tmp_path / "r.json", tmp_path / "r.batch.json"
    adaptive = ["-k", "auto", "--min-k", "10", "--max-k", "13"]
    assert main(["pressure", str(suite), "--batch", *adaptive, "--results", str(results)]) == 0
    rounds = [b["round"] for b in json.loads(resume.read_text())["batches"]]
    assert rounds == [1, 2, 3]
    return suite, resume, resume.read_text()


def test_a_resume_with_a_smaller_k_is_refused_before_anything_is_sent(tmp_path, capsys):
    suite, resume, written = adaptive_run(tmp_path)
    folder = tmp_path / "r.batch.emulator"
    kept = sorted(p.name for p in folder.iterdir())
    capsys.readouterr()

    code = main(["pressure", str(suite), "--resume-batch", str(resume), "-k", "10"])

    err = capsys.readouterr().err
    assert code == 2
    assert re.search(
        rf"skilltest: error: {re.escape(str(resume))}: round 2: batch msgbatch_\w+ holds runs "
        r"this command does not ask for \(2, e\.g\. demo/aggregate:with_skill repetition 11\)",
        err,
    )
    assert "  fix: resume with the suites, skills and options of the command that submitted" in err
    assert "submitted (" not in err
    assert sorted(p.name for p in folder.iterdir()) == kept
    assert resume.read_text() == written


def test_a_resume_reads_runs_another_round_submitted_without_submitting_them_again(
    tmp_path, capsys
):
    """The adaptive run's repetitions 11 and 12 (rounds 2 and 3) are in the fixed -k 12's round
    1."""
    suite, resume, _ = adaptive_run(tmp_path)
    capsys.readouterr()

    code = main(["pressure", str(suite), "--resume-batch", str(resume), "-k", "12"])

    out, err = capsys.readouterr()
    assert code == 0
    assert "demo/aggregate  steers" in out
    assert "submitted (" not in err
    assert "batch: 24 request(s) in 3 batch(es) over 1 round(s) (0 submitted by this run, 3 " in out


def test_max_cost_holds_a_batched_run_at_the_batch_price(tmp_path, capsys):
    """--dry-run --batch says what the batch price makes of the estimate; --max-cost-usd lets a
    round's runs in before it is sent, each at that price; the runs let in are resumable, and a
    resume without the limit sends only the rest."""
    suite = demo(tmp_path)
    results, resume = tmp_path / "r.json", tmp_path / "r.batch.json"
    assert main(["pressure", str(suite), "--batch", "--dry-run"]) == 0
    dry = capsys.readouterr().out
    total = re.search(r"^\s+total\s.*\$(\d+\.\d+)$", dry, re.M)  # at list prices
    batched = re.search(
        r"^--batch: Message Batches are billed at 50% of the list price: \$(\S+) in all$", dry, re.M
    )
    assert total is not None and batched is not None
    assert abs(float(batched.group(1)) - float(total.group(1)) / 2) < 0.0001
    per_run = float(batched.group(1)) / (2 * STEERS_K)

    code = main(
        ["pressure", str(suite), "--batch", "--max-cost-usd", "0.05", "--results", str(results)]
    )
    out, err = capsys.readouterr()

    assert code == 4
    document = read_results(results, "pressure")
    stopped = document["stopped"]
    assert (document["complete"], stopped["by"], document["scenarios"]) == (False, "max-cost", [])
    assert f"stopped, results incomplete: {stopped['reason']}" in out
    next_run = re.search(r"the next run \(about \$(\d+\.\d+)\)", stopped["reason"])
    assert next_run is not None and 0.8 * per_run < float(next_run.group(1)) < 1.2 * per_run
    let_in = stopped["runs"]
    assert 0 < let_in < 2 * STEERS_K
    assert f"submitted ({let_in} requests, round 1)" in err
    assert json.loads(resume.read_text())["complete"] is False

    code = main(["pressure", str(suite), "--resume-batch", str(resume), "--results", str(results)])
    out, err = capsys.readouterr()

    assert code == 0
    assert "demo/aggregate  steers" in out
    assert f"submitted ({2 * STEERS_K - let_in} requests, round 1)" in err
    assert json.loads(resume.read_text())["complete"] is True
