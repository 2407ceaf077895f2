"""The gate's rules that decide what the runs mean: a failing scenario blocks unless allowed, an
inconclusive critical one asks for more runs, offline results are refused unless allowed, each
run counts once, and the emulator's trigger regressions are no blockers. Each case prints its
reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.gate.test_gate import (
    as_written,  # noqa: F401 (the fixture of the documents these tests write by hand)
    gate,
    live,
    pressure,
    pressure_results,
    pscenario,
    scenarios,
    verdict_item,
    write,
)

pytestmark = pytest.mark.usefixtures("as_written")

EMULATOR = {**live("emulator"), "origin": "offline", "models": ["claude-sonnet-5-5"]}
REPLAYED = {**live("replay"), "origin": "offline", "recorded_with": ["emulator"]}
STAND_IN = "a scripted stand-in: its numbers say nothing about a real model"


def reason_lines(out: str) -> list[str]:
    return [line.removeprefix("         - ") for line in out.splitlines() if "         - " in line]


# --- failing -----------------------------------------------------------------------------------

# The two scenarios of the issue: both FAIL in `skilltest scenarios` (exit 1).
NEVER_FIRED = {
    **verdict_item(
        "inconclusive",
        False,
        "expected skills lgtm fired in 0/2 with-skill runs",
    ),
    "result": "fail",  # misses a bar whatever more runs show: not inconclusive, failing
}
CREDIBLY_WORSE = verdict_item("regressed", False, "delta -1.00 [-1.00, -0.07] is credibly below")


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        (
            NEVER_FIRED,
            "lgtm/spike (scenarios): inconclusive: expected skills lgtm fired in 0/2 with-skill "
            "runs",
        ),
        (
            CREDIBLY_WORSE,
            "lgtm/spike (scenarios): regressed: delta -1.00 [-1.00, -0.07] is credibly below",
        ),
    ],
)
def test_a_scenario_that_fails_blocks_with_its_reason(tmp_path, capsys, item, reason):
    code, out, _ = gate(capsys, write(tmp_path / "s.json", scenarios(item)))
    assert code == 1
    assert out.splitlines()[0] == "gate: BLOCK (1 reason)"
    assert "BLOCK  failing      no scenario fails (passed: false), unless allowed with " in out
    assert reason_lines(out) == [reason]


def test_a_pressure_scenario_the_run_failed_blocks(tmp_path, capsys):
    # Written with --strict: the run failed a not-red scenario, so the gate does too.
    strict = {**pscenario("percentiles", 4, 4, critical=False, verdict="not-red"), "passed": False}
    strict["detail"] = "baseline already passes in 4/4 runs without the skill"
    code, out, _ = gate(capsys, write(tmp_path / "p.json", pressure(strict)))
    assert code == 1
    assert reason_lines(out) == [
        "demo/percentiles (pressure): not-red: baseline already passes in 4/4 runs without the "
        "skill"
    ]


@pytest.mark.parametrize("glob", ["spike", "sp*", "lgtm/spike", "lgtm/*"])
def test_allow_failing_lets_a_named_scenario_through_and_says_so(tmp_path, capsys, glob):
    results = write(tmp_path / "s.json", scenarios(CREDIBLY_WORSE))
    code, out, _ = gate(capsys, results, "--allow-failing", glob, "--allow-failing", "other-*")
    assert code == 0, out
    assert out.splitlines()[0] == "gate: PASS"
    lines = out.splitlines()
    at = lines.index(
        "PASS   failing      no scenario fails (passed: false), unless allowed with "
        "--allow-failing ID"
    )
    assert lines[at + 1 : at + 4] == [
        "         1 scenarios checked, 1 failing",
        "         lgtm/spike (scenarios): regressed: delta -1.00 [-1.00, -0.07] is credibly below "
        f"(allowed to fail: --allow-failing {glob})",
        "         --allow-failing other-*: no failing scenario matches it",
    ]


def test_allow_failing_does_not_excuse_another_scenario(tmp_path, capsys):
    other = {**CREDIBLY_WORSE, "id": "latency"}
    results = write(tmp_path / "s.json", scenarios(CREDIBLY_WORSE, other))
    code, out, _ = gate(capsys, results, "--allow-failing", "spike")
    assert code == 1
    assert reason_lines(out) == [
        "lgtm/latency (scenarios): regressed: delta -1.00 [-1.00, -0.07] is credibly below"
    ]


# --- inconclusive and critical -----------------------------------------------------------------


def test_an_inconclusive_scenario_blocks_only_when_critical(tmp_path, capsys):
    reason = "inconclusive: the delta's 95% interval [-0.44, +0.94] straddles the band"
    plain = {**verdict_item("inconclusive", False, reason), "result": "inconclusive"}
    code, out, _ = gate(
        capsys, write(tmp_path / "plain.json", scenarios(plain)), "--allow-undecided"
    )
    assert code == 0, out

    critical = {**plain, "critical": True}
    code, out, _ = gate(
        capsys, write(tmp_path / "critical.json", scenarios(critical)), "--allow-undecided"
    )
    assert code == 1
    assert reason_lines(out) == [
        "lgtm/spike (scenarios): critical, but inconclusive: not enough evidence: run -k auto"
    ]


def test_an_inconclusive_critical_scenario_at_k_auto_asks_for_a_higher_max_k(tmp_path, capsys):
    item = {
        **pscenario("aggregate-first", 2, 4, verdict="inconclusive"),
        "repetitions": {"mode": "auto", "min_k": 3, "max_k": 6},
        "runs_to_decide": 23,
    }
    code, out, _ = gate(capsys, write(tmp_path / "p.json", pressure(item)), "--allow-undecided")
    assert code == 1
    assert reason_lines(out) == [
        "demo/aggregate-first (pressure): critical, but inconclusive: not enough evidence: run "
        "-k auto with a --max-k above 6 (about 23 runs per arm would likely decide it)"
    ]


# --- offline -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provenance", "why"),
    [
        (EMULATOR, f"produced by the emulator, {STAND_IN}"),
        (REPLAYED, f"replayed from cassettes recorded against the emulator, {STAND_IN}"),
        (
            None,  # written before results said what produced them
            "these results do not say what answered (written, or their cassettes recorded, "
            "before skilltest recorded it): it may be a scripted stand-in's",
        ),
    ],
)
def test_offline_results_are_refused_unless_allowed(tmp_path, capsys, provenance, why):
    data = pressure(pscenario("aggregate-first", 4, 4))
    if provenance is None:
        del data["provenance"]
    else:
        data["provenance"] = provenance
    results = write(tmp_path / "p.json", data)
    code, out, _ = gate(capsys, results)
    assert code == 1
    assert out.splitlines()[0] == "gate: BLOCK (1 reason)"
    assert "BLOCK  offline      the results come from a real model, not the emulator" in out
    assert reason_lines(out) == [f"{results}: {why}; --allow-offline gates on it anyway"]

    code, out, _ = gate(capsys, results, "--allow-offline")
    assert code == 0, out
    assert out.splitlines()[0] == (
        "gate: PASS on offline results (--allow-offline): they come from a scripted stand-in and "
        "say nothing about a real model"
    )
    assert f"         allowed (--allow-offline): {results}: {why}" in out.splitlines()


def test_an_offline_baseline_is_refused_too(tmp_path, capsys):
    new = write(tmp_path / "new.json", pressure(pscenario("aggregate-first", 4, 4)))
    old = write(
        tmp_path / "old.json",
        {**pressure(pscenario("aggregate-first", 4, 4)), "provenance": EMULATOR},
    )
    code, out, _ = gate(capsys, new, "--baseline", old)
    assert code == 1
    assert reason_lines(out) == [
        f"{old}: produced by the emulator, {STAND_IN}; --allow-offline gates on it anyway"
    ]


def test_an_emulator_run_does_not_pass_the_gate(tmp_path, capsys):
    # What a CI job that lost its API key would hand over: a clean run, on the stand-in.
    results = pressure_results(tmp_path, "I would aggregate first.", capsys)
    code, out, _ = gate(capsys, results)
    assert code == 1
    assert reason_lines(out) == [
        f"{results}: produced by the emulator, {STAND_IN}; --allow-offline gates on it anyway"
    ]
    assert out.splitlines()[1].startswith(
        f"results: {results} (pressure): backend emulator (offline: a scripted stand-in), model "
        "claude-sonnet-5-5 (as the stand-in named itself)"
    )


# --- each run once -----------------------------------------------------------------------------


def runs(prefix: str, count: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"{prefix}/pressure/demo/aggregate-first/with_skill/{rep}",
            "arm": "with_skill",
            "rep": rep,
        }
        for rep in range(1, count + 1)
    ]


def critical_files(tmp_path: Path) -> tuple[Path, Path]:
    """A critical scenario at 6/8 now against 8/8 in the baseline: within noise (-25%
    [-65%, +17%]); pooled twice, 12/16 would look credibly lower (-25% [-53%, -2%])."""
    now = {**pscenario("aggregate-first", 6, 8), "runs": runs("new", 8)}
    before = {**pscenario("aggregate-first", 8, 8), "runs": runs("old", 8)}
    return write(tmp_path / "new.json", pressure(now)), write(
        tmp_path / "old.json", pressure(before)
    )


WITHIN_NOISE = (
    "         demo/aggregate-first (pressure): with-skill pass rate 6/8 75% now vs 8/8 100% in "
    "the baseline: -25% [-65%, +17%], within noise"
)


def test_a_file_given_twice_is_read_once_and_says_so(tmp_path, capsys):
    new, old = critical_files(tmp_path)
    code, out, _ = gate(capsys, new, new, "--baseline", old)
    assert code == 0, out
    lines = out.splitlines()
    assert WITHIN_NOISE in lines
    assert f"         {new}: given twice among the results files: read once" in lines
    assert (
        "         1 results files complete, 1 scenarios with a verdict, 8 runs each counted once"
        in (lines)
    )


def test_a_copy_of_a_file_is_read_once(tmp_path, capsys):
    new, old = critical_files(tmp_path)
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(json.loads(new.read_text()), indent=4))
    code, out, _ = gate(capsys, new, copy, "--baseline", old)
    assert code == 0, out
    assert WITHIN_NOISE in out.splitlines()
    assert f"         {copy}: the same results as {new}: read once" in out.splitlines()


def test_runs_already_in_another_file_count_once(tmp_path, capsys):
    # A merged file holds every run; a shard holds 4 of them: the shard adds nothing.
    new, old = critical_files(tmp_path)
    shard = {**pscenario("aggregate-first", 3, 4), "runs": runs("new", 4)}
    shard_file = write(tmp_path / "shard.json", pressure(shard))
    code, out, _ = gate(capsys, shard_file, new, "--baseline", old)
    assert code == 0, out
    lines = out.splitlines()
    assert WITHIN_NOISE in lines
    assert (
        f"         demo/aggregate-first (pressure) in {shard_file}: its 4 runs are already in "
        f"{new}: counted once"
    ) in lines


def test_files_that_share_some_runs_but_not_others_are_refused(tmp_path, capsys):
    one = {**pscenario("aggregate-first", 3, 4), "runs": runs("x", 4)}
    other = {**pscenario("aggregate-first", 3, 4), "runs": runs("x", 6)[2:]}
    first, second = (
        write(tmp_path / "a.json", pressure(one)),
        write(tmp_path / "b.json", pressure(other)),
    )
    code, out, err = gate(capsys, first, second)
    assert code == 2 and out == ""
    assert (
        f"demo/aggregate-first (pressure): 2 of its runs are in both {first} and {second}, and "
        "each file has runs the other lacks: pooled, the shared runs would count twice"
    ) in err
    assert "fix: pass each run once" in err


def test_the_same_runs_as_baseline_compare_nothing(tmp_path, capsys):
    new, _ = critical_files(tmp_path)
    code, out, _ = gate(capsys, new, "--baseline", new)
    assert code == 0, out
    assert (
        "         demo/aggregate-first (pressure): 6/8 75% now; the baseline holds the same runs: "
        "nothing to compare"
    ) in out.splitlines()


# --- triggers ----------------------------------------------------------------------------------


MISSED = (
    "fired in 0/6 scored runs: the 95% exact interval of its rate, [0%–46%], lies below the "
    "threshold 50%"
)


def triggers(
    provenance: dict[str, Any], *, passed: bool = True, against: bool = True
) -> dict[str, Any]:
    """A trigger results file of one should-trigger query, 6 of 6 runs fired (a pass) or none
    (a miss), each decided by the exact interval of its rate."""
    query = {
        "id": "loki-spike",
        "should_trigger": True,
        "fired": 0 if not passed else 6,
        "scored": 6,
        "total": 6,
        "verdict": "pass" if passed else "fail",
        "passed": passed,
        "result": "pass" if passed else "miss",
        "reason": None if passed else MISSED,
        "runs": [],
    }
    if against:
        query["against"] = {
            "ref": "HEAD~1",
            "delta": -1.0,
            "ci": [-1.0, -0.44],
            "verdict": "regressed",
        }
    return {
        "schema_version": 3,
        "layer": "triggers",
        "complete": True,
        "interrupted": False,
        "provenance": provenance,
        "suites": [{"skill": "lgtm", "variant": "current", "threshold": 0.5, "queries": [query]}],
    }


def test_a_trigger_regression_blocks_when_a_real_model_showed_it(tmp_path, capsys):
    code, out, _ = gate(capsys, write(tmp_path / "t.json", triggers(live("claude"))))
    assert code == 1
    assert reason_lines(out) == [
        "lgtm/loki-spike (triggers): regressed against HEAD~1: delta -100% [-100%, -44%]"
    ]


def test_a_trigger_query_decided_a_miss_by_a_real_model_fails_the_gate(tmp_path, capsys):
    results = triggers(live("claude"), passed=False, against=False)
    code, out, _ = gate(capsys, write(tmp_path / "t.json", results))
    assert code == 1
    assert reason_lines(out) == [f"lgtm/loki-spike (triggers): miss: {MISSED}"]


def test_a_trigger_query_missed_on_the_emulator_is_listed_not_blocked(tmp_path, capsys):
    offline = {**live("emulator"), "origin": "offline"}
    results = triggers(offline, passed=False, against=False)
    code, out, _ = gate(capsys, write(tmp_path / "t.json", results), "--allow-offline")
    assert code == 0, out
    assert (
        f"         lgtm/loki-spike (triggers): miss: {MISSED} on the emulator: not a blocker: the "
        "emulator fires a skill when its description shares words with the query, which says "
        "nothing about how a real model reads a description"
    ) in out.splitlines()


def test_a_trigger_file_of_an_older_version_is_judged_by_the_interval_of_its_counts(
    tmp_path, capsys
):
    # Written when the observed rate alone decided: 3 of 3 said pass, the interval says not yet.
    older = triggers(live("claude"), against=False)
    query = older["suites"][0]["queries"][0]
    for key in ("verdict", "reason"):
        del query[key]
    query.update(fired=3, scored=3, total=3)
    code, out, _ = gate(capsys, write(tmp_path / "t.json", older))
    assert code == 1
    assert reason_lines(out) == [
        "no scenario decided: 0 of 1 have a verdict other than inconclusive, error or skipped; "
        "run more runs (-k auto) or pass --allow-undecided"
    ]


def test_a_trigger_regression_on_the_emulator_is_never_a_blocker(tmp_path, capsys):
    offline = {**live("emulator"), "origin": "offline"}
    results = write(tmp_path / "t.json", triggers(offline, passed=False))
    code, out, _ = gate(capsys, results, "--allow-offline")
    assert code == 0, out
    assert (
        "         lgtm/loki-spike (triggers): regressed against HEAD~1: delta -100% [-100%, -44%] "
        "on the emulator: not a blocker: the emulator fires a skill when its description shares "
        "words with the query, which says nothing about how a real model reads a description"
    ) in out.splitlines()


def test_a_trigger_query_whose_plan_is_not_a_plan_is_refused_where_it_is(tmp_path, capsys):
    results = triggers(live("claude"), against=False)
    results["suites"][0]["queries"][0]["repetitions"] = {"mode": "auto", "max_k": "many"}
    code, out, err = gate(capsys, write(tmp_path / "t.json", results))
    assert code == 2, out
    assert err.splitlines() == [
        f"skilltest: error: {tmp_path / 't.json'}#/suites/0/queries/0/repetitions/max_k: 'many' "
        "is not valid here: 'many' is not of type 'integer'",
        "  fix: expected a count: an integer >= 1",
    ]
