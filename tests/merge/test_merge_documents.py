"""Merging results documents: what spans scenarios (the scenario layer's canary and summary) is
recomputed over every shard, scenarios go back in suite order."""

from __future__ import annotations

from typing import Any

from skilltest.merge import merge
from skilltest.merge.shards import ShardFile, check

UNITS = ["demo/smoke", "demo/one", "demo/two"]


def scenario(name: str, *, passed: bool, verdict: str = "improved") -> dict[str, Any]:
    return {
        "id": name,
        "skill": "demo",
        "verdict": verdict,
        "passed": passed,
        "result": "pass" if passed else "fail",
        "runs": [{"arm": "with_skill", "rep": 0, "error": None}],
    }


def shard(index: int, assigned: list[str], scenarios: list[dict], canary: Any) -> ShardFile:
    document = {
        "schema_version": 2,
        "layer": "scenarios",
        "complete": True,
        "interrupted": False,
        "provenance": {
            "run_id": f"run{index}",
            "backend": "emulator",
            "skilltest_version": "0.1.0",
            "started_at": f"2026-12-0{index}T00:00:00Z",
            "suites": [{"path": "tests/scenarios/demo.yaml", "sha256": "sha256:1"}],
        },
        "shard": {"index": index, "count": 2, "units": UNITS, "assigned": assigned},
        "summary": None,
        "canary": canary,
        "stopped": None,
        "scenarios": scenarios,
    }
    return ShardFile(f"shard-{index}.json", document)


def test_a_canary_that_failed_in_one_shard_fails_the_merged_run():
    first = shard(1, ["demo/one"], [scenario("one", passed=True)], None)
    smoke = scenario("smoke", passed=False, verdict="skill-only")
    second = shard(
        2,
        ["demo/smoke", "demo/two"],
        [smoke, scenario("two", passed=True)],
        {"passed": False, "scenarios": ["smoke"], "failed": ["smoke"], "meaningful": False},
    )
    merged = merge(check([second, first]))  # in any order
    assert [s["id"] for s in merged["scenarios"]] == ["smoke", "one", "two"]
    assert merged["canary"] == {
        "passed": False,
        "scenarios": ["smoke"],
        "failed": ["smoke"],
        "meaningful": False,
    }
    assert merged["summary"] == {
        "scenarios": 3,
        "passed": 2,
        "failed": 1,
        "inconclusive": 0,
        "errors": 0,
        "runs": 3,
        "unscored_runs": 0,
    }
    provenance = merged["provenance"]
    assert provenance["merged_from"] == ["run1", "run2"]
    assert provenance["started_at"] == "2026-12-01T00:00:00Z"
    assert provenance["shard"] is None and merged["shard"] is None


def test_the_merged_run_took_from_the_first_start_to_the_last_finish():
    first = shard(1, ["demo/one"], [scenario("one", passed=True)], None)
    second = shard(2, ["demo/smoke", "demo/two"], [scenario("two", passed=True)], None)
    first.document["provenance"].update(finished_at="2026-12-01T00:02:00Z", duration_s=120.0)
    second.document["provenance"].update(finished_at="2026-12-02T00:00:30Z", duration_s=30.0)
    provenance = merge(check([second, first]))["provenance"]
    # The shards ran side by side: the wall time spans them all, not their sum.
    assert provenance["started_at"] == "2026-12-01T00:00:00Z"
    assert provenance["finished_at"] == "2026-12-02T00:00:30Z"
    assert provenance["duration_s"] == 86_430.0
    # A shard that does not say when it finished leaves the merged wall time unknown.
    del second.document["provenance"]["finished_at"]
    provenance = merge(check([first, second]))["provenance"]
    assert (provenance["finished_at"], provenance["duration_s"]) == (None, None)


def test_a_shard_that_did_not_finish_leaves_the_merge_incomplete():
    first = shard(1, ["demo/one"], [scenario("one", passed=True)], None)
    second = shard(2, ["demo/smoke", "demo/two"], [], None)
    second.document.update(complete=False, interrupted=True)
    merged = merge(check([first, second]))
    assert (merged["complete"], merged["interrupted"]) == (False, True)
    assert merged["canary"] is None
