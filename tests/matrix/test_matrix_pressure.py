"""`skilltest pressure --models`: one suite across two models on the emulator, the real SDK on
loopback, with a model script under which the skill helps one model and not the other."""

from __future__ import annotations

import contextlib
import io
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
from skilltest.matrix import read_matrix
from skilltest.report.files import read_any_results, read_results

from ..conftest import REPO_ROOT

SCRIPT = "tests/model-scripts/lgtm.by-model.pressure.yaml"
MATRIX = [
    "pressure",
    "lgtm",
    "--models",
    "haiku,opus",
    "--script",
    SCRIPT,
    "--only",
    "aggregation-*",
    "--only",
    "discovery-*",
    "-k",
    "12",
]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The matrix, run once for the module from the repository."""
    out = tmp_path_factory.mktemp("matrix")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.chdir(REPO_ROOT)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(
            [
                *MATRIX,
                "--results",
                str(out / "matrix.json"),
                "--junit",
                str(out / "matrix.xml"),
                "--markdown",
                str(out / "matrix.md"),
            ]
        )
    monkeypatch.undo()
    return {"code": code, "out": stdout.getvalue(), "err": stderr.getvalue(), "dir": out}


def test_the_skill_helps_one_model_and_is_not_needed_on_the_other(ran):
    out = str(ran["out"])
    assert ran["code"] == 0, out + str(ran["err"])
    lines = out.splitlines()
    assert lines[0].startswith("offline: these numbers come from the skilltest emulator")
    assert re.match(r"scenario\s+model=haiku\s+model=opus$", lines[1])
    assert re.search(
        r"lgtm/aggregation-before-raw-fetch\s+steers \+100% \[\+\d+%, \+100%\]\s+not-red \+0%", out
    )
    assert re.search(r"lgtm/discovery-before-querying\s+steers \+100% .*not-red \+0%", out)
    assert "model=haiku: 2 scenarios: 2 steers" in out
    assert "model=opus: 2 scenarios: 2 not-red" in out
    # Each cell says which model answered, as the API named it.
    assert re.search(r"^model=haiku: backend emulator .* model haiku ", out, re.MULTILINE)
    assert re.search(r"^model=opus: backend emulator .* model opus ", out, re.MULTILINE)
    assert "cell 1 of 2: model=haiku" in str(ran["err"])


def test_one_results_file_holds_every_cell_and_reads_back(ran):
    path = Path(ran["dir"]) / "matrix.json"
    document = read_matrix(path)
    assert (document["schema_version"], document["layer"]) == (4, "pressure")
    assert document["complete"] is True
    assert document["matrix"]["axes"] == [{"name": "model", "values": ["haiku", "opus"]}]
    assert document["matrix"]["arms"] == ["with_skill", "without_skill"]
    assert [cell["id"] for cell in document["cells"]] == ["model=haiku", "model=opus"]
    for cell, model, verdict in zip(
        document["cells"], ("haiku", "opus"), ("steers", "not-red"), strict=True
    ):
        results = cell["results"]
        assert results["model"] == model
        assert results["provenance"]["models"] == [model]
        assert {s["verdict"] for s in results["scenarios"]} == {verdict}
        assert all(s["k"] == 12 for s in results["scenarios"])
    # What reads one run's results says what the file is instead of misreading it.
    with pytest.raises(InputError, match="a matrix's results file") as caught:
        read_any_results(path)
    assert "skilltest.matrix.read_matrix" in caught.value.fix
    with pytest.raises(InputError, match="a matrix's results file"):
        read_results(path, "pressure")


def test_a_cell_that_is_not_a_results_document_is_refused_at_its_place(ran, tmp_path):
    document = json.loads((Path(ran["dir"]) / "matrix.json").read_text())
    document["cells"][1]["results"]["scenarios"][0]["k"] = "twelve"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    with pytest.raises(InputError) as caught:
        read_matrix(bad)
    assert f"{bad}#/cells/1/results" in str(caught.value)


def test_junit_and_markdown_show_each_cell(ran):
    folder = Path(ran["dir"])
    cases = ET.parse(folder / "matrix.xml").getroot().iter("testcase")
    names = sorted(case.get("name") or "" for case in cases)
    assert names == [
        "aggregation-before-raw-fetch [model=haiku]",
        "aggregation-before-raw-fetch [model=opus]",
        "discovery-before-querying [model=haiku]",
        "discovery-before-querying [model=opus]",
    ]
    markdown = (folder / "matrix.md").read_text()
    assert markdown.startswith("## skilltest pressure matrix\n\nAxes: model: haiku, opus.")
    assert re.search(
        r"\| lgtm/aggregation-before-raw-fetch \| steers \+100% .* \| not-red \+0% .* \|", markdown
    )


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--models", "haiku,haiku"], "--models names 'haiku' twice"),
        (["--models", "haiku,"], "--models 'haiku,' has an empty value"),
        (["--models", "a/b,c"], "--models: 'a/b' is not a safe folder name"),
        (["--models", "a,b", "--model", "c"], "--model c and --models name the model twice"),
        (["--models", "a,b", "--resume-batch", "{tmp}/b.json"], "--resume-batch cannot run across"),
        (["--models", "a,b", "--batch"], "--batch cannot run across a matrix"),
    ],
)
def test_bad_matrix_options_are_refused_before_any_run(
    extra, message, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(REPO_ROOT)
    argv = ["pressure", "lgtm", "--script", SCRIPT, *(a.format(tmp=tmp_path) for a in extra)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert "cell 1 of" not in err


def test_the_lift_differs_by_model_with_an_interval_of_stated_level(ran):
    out = str(ran["out"])
    # 12/12 against 0/12 on haiku, 12/12 against 12/12 on opus: each lift's exact interval at
    # 97.5%, combined by Bonferroni into a 95% interval on the difference.
    row = re.search(
        r"^lgtm/aggregation-before-raw-fetch\s+haiku - opus\s+\+100% \[\+(\d+)%, \+(\d+)%\] "
        r"\(95%\)\s+differs: helps haiku, not needed on opus \(its baseline passes\)$",
        out,
        re.MULTILINE,
    )
    assert row is not None, out
    assert 0 < int(row[1]) < 100 < int(row[2]) <= 200
    document = read_matrix(Path(ran["dir"]) / "matrix.json")
    found = {c["scenario"]: c for c in document["comparisons"]}
    assert sorted(found) == ["lgtm/aggregation-before-raw-fetch", "lgtm/discovery-before-querying"]
    comparison = found["lgtm/aggregation-before-raw-fetch"]
    assert (comparison["axis"], comparison["first"], comparison["second"]) == (
        "model",
        "haiku",
        "opus",
    )
    assert comparison["cells"] == ["model=haiku", "model=opus"]
    assert comparison["verdict"] == "differs"
    assert comparison["confidence"] == 0.95
    assert comparison["difference"] == 1.0
    assert comparison["difference_ci"][0] == pytest.approx(int(row[1]) / 100, abs=0.006)


def _scenarios_done(folder: Path, runs: int) -> int:
    """How many scenarios kept the traces of all their runs under a cell's ``folder``."""
    return sum(1 for each in folder.glob("lgtm/*") if len(list(each.glob("*.trace.jsonl"))) >= runs)


def test_an_interrupted_matrix_keeps_a_comparable_share_of_every_cell(tmp_path):
    # Each answer takes 200 ms; the cells run side by side, and Ctrl-C comes once each has
    # finished a scenario (4 scenarios, 6 runs per arm).
    slow = tmp_path / "slow.yaml"
    text = (REPO_ROOT / SCRIPT).read_text()
    slow.write_text(
        text.replace("schema_version: 1\n", "schema_version: 1\nfaults: {latency_ms: 200}\n")
    )
    results, output = tmp_path / "matrix.json", tmp_path / "out"
    argv = ["pressure", "lgtm", "--models", "haiku,opus", "--script", str(slow), "-k", "6"]
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY",)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "skilltest",
            *argv,
            "--results",
            str(results),
            "--output-dir",
            output,
        ],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    cells = [output / "model-haiku", output / "model-opus"]
    deadline = time.monotonic() + 120
    while not all(_scenarios_done(cell, 12) for cell in cells):
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "skilltest: interrupted; 0 of 2 cell(s) finished, model=haiku, model=opus in part" in err
    assert f"kept in {results} (marked incomplete)" in err
    document = read_matrix(results)
    assert (document["complete"], document["interrupted"]) == (False, True)
    made = {}
    for cell in document["cells"]:
        assert cell["results"]["interrupted"] is True
        made[cell["id"]] = len(cell["results"]["scenarios"])
    # Each cell kept what it had finished: some of its scenarios, about as many as the other.
    assert sorted(made) == ["model=haiku", "model=opus"]
    assert all(0 < scenarios < 4 for scenarios in made.values()), made
    assert abs(made["model=haiku"] - made["model=opus"]) <= 1, made


def test_each_cell_s_measures_are_shown_per_arm(ran):
    out = str(ran["out"])
    rows = {
        (m["cell"], m["arm"]): m["rate"]
        for m in re.finditer(
            r"^(?P<cell>model=\w+)\s+(?P<arm>with skill|without)\s+(?P<rate>\d+/\d+ \d+%)",
            out,
            re.MULTILINE,
        )
    }
    assert rows == {
        ("model=haiku", "with skill"): "24/24 100%",
        ("model=haiku", "without"): "0/24 0%",
        ("model=opus", "with skill"): "24/24 100%",
        ("model=opus", "without"): "24/24 100%",
    }
    # One-turn runs: no tool calls, no world; the cost per pass at each model's list price.
    haiku = re.search(r"^model=haiku\s+with skill\s+.*-\s+-\s+-\s+\$(\d\.\d{4})$", out, re.M)
    opus = re.search(r"^model=opus\s+with skill\s+.*-\s+-\s+-\s+\$(\d\.\d{4})$", out, re.M)
    assert haiku is not None and opus is not None, out
    assert float(opus[1]) > float(haiku[1]) > 0
