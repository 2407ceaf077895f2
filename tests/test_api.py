"""The Python API: each layer run from pytest on the example suites, offline, printing nothing.

``skilltest.pressure.run``, ``skilltest.scenarios.run`` and ``skilltest.triggers.run`` take
their options and return typed results; the outputs the options ask for are written; an
observer sees the notices and every run; a caller inside a running event loop (a notebook, an
async test) can call them too.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

import skilltest
from skilltest.pressure.verdict import NOT_RED, STEERS

from .conftest import REPO_ROOT

PRESSURE = REPO_ROOT / "tests" / "skill-pressure"
SCENARIOS = REPO_ROOT / "tests" / "scenarios"
TRIGGERS = REPO_ROOT / "tests" / "triggers"


class Watcher(skilltest.Observer):
    def __init__(self) -> None:
        self.notices: list[str] = []
        self.planned: list[int] = []
        self.runs = 0
        self.errors = 0
        self.stops = 0
        self.polls: list[skilltest.BatchProgress] = []

    def batch_polled(self, progress: skilltest.BatchProgress) -> None:
        self.polls.append(progress)

    def notice(self, text: str) -> None:
        self.notices.append(text)

    def started(self, runs: int) -> None:
        self.planned.append(runs)

    def run_finished(self, *, error: bool) -> None:
        self.runs += 1
        self.errors += int(error)

    def stopped(self) -> None:
        self.stops += 1


def test_pressure_from_python_gives_the_examples_verdicts(tmp_path, capsys):
    watcher = Watcher()
    results = skilltest.pressure.run(
        skilltest.PressureOptions(
            suites=(PRESSURE,),
            backend="emulator",
            outputs=skilltest.Outputs(
                results=tmp_path / "pressure.json", html=tmp_path / "pressure.html"
            ),
        ),
        observer=watcher,
    )
    assert isinstance(results, skilltest.PressureResults)
    verdicts = {f"{r.skill}/{r.scenario.id}": r.verdict for r in results.scenarios}
    assert verdicts == {
        "lgtm/aggregation-before-raw-fetch": STEERS,
        "lgtm/discovery-before-querying": STEERS,
        "lgtm/jq-extraction": STEERS,
        "lgtm/percentiles-for-latency": NOT_RED,
        "safe-migrations/index-concurrently": STEERS,
        "safe-migrations/lock-timeout-first": STEERS,
        "safe-migrations/not-null-in-two-steps": STEERS,
        "safe-migrations/rename-expand-contract": STEERS,
    }
    assert results.complete and not results.failed and results.backend == "emulator"
    # The API prints nothing: the notice went to the observer, every run was seen.
    out, err = capsys.readouterr()
    assert out == "" and err == ""
    assert any("scripted stand-in" in notice for notice in watcher.notices)
    assert watcher.runs == sum(len(r.runs) for r in results.scenarios) == 184  # 7 x 12 x 2 + 8 x 2
    assert watcher.errors == 0 and watcher.stops == 1
    written = json.loads((tmp_path / "pressure.json").read_text())
    assert written == json.loads(json.dumps(results.to_document()))
    assert written["complete"] is True
    assert "percentiles-for-latency" in (tmp_path / "pressure.html").read_text()
    # A Python caller's run records how it was called: python, the entry point, the options.
    assert written["provenance"]["command"] == [
        "python",
        "skilltest.pressure.run",
        f"suites=({PRESSURE})",
        "backend=emulator",
        f"outputs=Outputs(results={tmp_path / 'pressure.json'}, html={tmp_path / 'pressure.html'})",
    ]
    assert written["provenance"]["origin"] == "offline"


def test_pressure_in_batches_from_python(tmp_path, capsys):
    watcher = Watcher()
    results = skilltest.pressure.run(
        skilltest.PressureOptions(
            suites=(PRESSURE / "lgtm.yaml",),
            repeat=11,  # the fewest runs per arm at which the scenarios that steer say so
            batch=True,
            outputs=skilltest.Outputs(results=tmp_path / "pressure.json"),
        ),
        observer=watcher,
    )
    assert [r.verdict for r in results.scenarios] == [STEERS, STEERS, STEERS, NOT_RED]
    assert results.batch is not None and results.batch["requests"] == 88
    assert results.batch["resume_file"] == str(tmp_path / "pressure.batch.json")
    (poll,) = watcher.polls
    assert (poll.round, poll.status, poll.requests, poll.counts["succeeded"]) == (
        1,
        "ended",
        88,
        88,
    )
    assert any("its id is in" in notice for notice in watcher.notices)
    assert capsys.readouterr() == ("", "")


def test_outputs_are_written_again_from_results(tmp_path):
    results = skilltest.pressure.run(
        skilltest.PressureOptions(suites=(PRESSURE / "lgtm.yaml",), only=("jq-*",))
    )
    assert [r.scenario.id for r in results.scenarios] == ["jq-extraction"]
    outputs = skilltest.Outputs(junit=tmp_path / "junit.xml", markdown=tmp_path / "summary.md")
    skilltest.write_outputs(results, outputs, final=True)
    assert 'name="jq-extraction"' in (tmp_path / "junit.xml").read_text()
    assert "jq-extraction" in (tmp_path / "summary.md").read_text()


def test_bad_input_raises_with_the_place_and_the_fix(tmp_path):
    suite = tmp_path / "bad.yaml"
    suite.write_text("skill: demo\nscenarios: {}\n")
    with pytest.raises(skilltest.InputError) as caught:
        skilltest.pressure.run(skilltest.PressureOptions(suites=(suite,)))
    assert str(caught.value).startswith(f"{suite}#/scenarios: ")
    assert caught.value.fix


def test_scenarios_from_python_gives_the_examples_verdicts(claude_bin, tmp_path):
    results = skilltest.scenarios.run(
        skilltest.ScenarioOptions(
            suites=(SCENARIOS / "lgtm.yaml",),
            claude=claude_bin,
            output_dir=tmp_path / "output",
            outputs=skilltest.Outputs(results=tmp_path / "scenarios.json"),
        )
    )
    assert isinstance(results, skilltest.ScenarioResults)
    assert {r.scenario_id: r.verdict.value for r in results.verdicts} == {
        "investigate-error-spike": "improved",
        "trace-slow-requests": "improved",
        "latency-follow-up": "improved",
    }
    assert results.failing == [] and results.context.backend == "emulator"
    assert json.loads((tmp_path / "scenarios.json").read_text())["summary"]["passed"] == 3


def test_triggers_from_python_gives_the_examples_results(claude_bin, tmp_path):
    results = skilltest.triggers.run(
        skilltest.TriggerOptions(
            suites=(TRIGGERS / "lgtm.yaml",),
            claude=claude_bin,
            only=("loki-*", "capital-*"),
            repeat=6,  # the fewest runs that decide a query at threshold 0.5
            output_dir=tmp_path / "output",
        )
    )
    assert isinstance(results, skilltest.TriggerResults)
    [[suite]] = results.suites
    assert {q.query.id: (q.result, q.fired) for q in suite.queries} == {
        "loki-error-spike": ("pass", 6),
        "capital-of-france": ("pass", 0),
    }
    assert results.passed


def test_a_caller_inside_a_running_event_loop_can_run_a_layer():
    async def notebook_cell() -> skilltest.PressureResults:
        return skilltest.pressure.run(
            skilltest.PressureOptions(suites=(PRESSURE / "lgtm.yaml",), only=("jq-*",))
        )

    results = asyncio.run(notebook_cell())
    assert [r.verdict for r in results.scenarios] == [STEERS]


def test_the_api_names_are_documented_and_importable():
    for name in skilltest.__all__:
        assert getattr(skilltest, name) is not None, name
    with pytest.raises(AttributeError):
        _ = skilltest.no_such_name  # type: ignore[attr-defined]
    assert Path(skilltest.__file__).name == "__init__.py"


def test_the_readme_example_runs_as_written(tmp_path, monkeypatch):
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme[readme.index("## Python API") :]
    start = section.index("```python\n") + len("```python\n")
    code = section[start : section.index("\n```", start)]
    for folder in ("skills", "tests/skill-pressure", "tests/model-scripts"):
        shutil.copytree(REPO_ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md#python-api", "exec"), namespace)
    results = namespace["results"]
    assert isinstance(results, skilltest.PressureResults)
    assert len(results.scenarios) == 4
    assert json.loads((tmp_path / "out" / "pressure.json").read_text())["complete"] is True
    assert (tmp_path / "out" / "report.html").is_file()
