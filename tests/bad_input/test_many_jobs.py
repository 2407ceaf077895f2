"""``-j 100000`` on a suite of a few runs starts no more workers than there are runs: the run
neither hangs nor builds a hundred thousand of anything, and ends as ``-j 4`` ends.

The layers run in this process against the fake ``claude`` (fast, in a process of its own per
run); every task the run's event loop is given is counted.
"""

from __future__ import annotations

import asyncio

import pytest

from skilltest.cli import main

SKILL = "---\nname: demo\ndescription: Use for demos.\n---\nbody\n"

SUITES = {
    "scenarios": """\
skill: demo
repetitions: 3
scenarios:
  - id: s
    prompt: echo
    expected: {required_patterns: [lgtm]}
""",
    "triggers": """\
skill: demo
repetitions: 3
queries:
  - {id: q, query: echo, should_trigger: false}
""",
}
"""Six runs (two arms of three), and three runs of one query."""


@pytest.mark.parametrize("layer", list(SUITES))
@pytest.mark.parametrize("jobs", ["4", "100000"])
def test_j_100000_starts_no_more_workers_than_runs(
    tmp_path, fake_claude, monkeypatch, capsys, layer, jobs
):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    (tmp_path / "suite.yaml").write_text(SUITES[layer])
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-only-not-a-key")  # the fake CLI answers
    monkeypatch.chdir(tmp_path)
    tasks = 0
    ensure_future = asyncio.ensure_future

    def counted(*args, **kwargs):
        nonlocal tasks
        tasks += 1
        return ensure_future(*args, **kwargs)

    monkeypatch.setattr(asyncio, "ensure_future", counted)
    argv = [layer, "suite.yaml", "--claude", str(fake_claude), "-j", jobs, "--results", "r.json"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert "Traceback" not in err
    assert (tmp_path / "r.json").exists()
    # A few tasks per run (the run, its stdout and stderr readers) and a worker per run at
    # most: tens, never a hundred thousand.
    assert tasks < 100, tasks
