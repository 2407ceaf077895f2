"""The Anthropic SDK is never imported on a command's event loop: pressure runs, scenario
judges and agent mocks find it imported, in a thread of its own, before their first request."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.projects import demo_script, demo_suite, write_demo_project
from tests.sdk_watch import import_record, watched

PLUGIN = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "observability"


def finished(args: list[str], watch: Path) -> tuple[int, str]:
    process = watched(args, watch)
    _, err = process.communicate(timeout=900)
    return process.returncode, err


def test_pressure_imports_the_sdk_off_its_event_loop(tmp_path: Path) -> None:
    suite = write_demo_project(tmp_path, demo_suite(), demo_script("count_over_time"))
    watch = tmp_path / "watch.json"
    code, err = finished(["pressure", str(suite), "--results", str(tmp_path / "r.json")], watch)
    assert code in (0, 1), err  # a verdict, not bad input
    assert import_record(watch) == {"thread": "skilltest-sdk-import", "on_loop": False}


@pytest.mark.cli
def test_scenario_judges_import_the_sdk_off_the_event_loop(tmp_path: Path, claude_bin) -> None:
    plugin = tmp_path / "observability"
    shutil.copytree(PLUGIN, plugin, ignore=shutil.ignore_patterns("output", "results"))
    watch = tmp_path / "watch.json"
    args = ["scenarios", str(plugin / "evals"), "--claude", str(claude_bin), "-k", "1"]
    args += ["--only", "slow-checkout", "--results", str(tmp_path / "r.json")]
    args += ["--output-dir", str(tmp_path / "output")]
    code, err = finished(args, watch)
    assert code in (0, 1), err
    assert import_record(watch) == {"thread": "skilltest-sdk-import", "on_loop": False}
