"""The difference of lifts between two cells: its interval, its level and its reading."""

from __future__ import annotations

import pytest

from skilltest.matrix.compare import (
    Arms,
    compare_cells,
    compare_versions,
    difference_of_lifts,
    reading,
)
from skilltest.stats import EMPTY, Interval, clopper_pearson, exact_difference


def arms(with_passed: int, base_passed: int, k: int, *, verdict: str = "steers") -> Arms:
    return Arms(with_passed, k, base_passed, k, EMPTY, 0.95, False, verdict)


def test_fixed_k_combines_two_exact_lift_intervals_at_97_5_percent():
    interval, level = difference_of_lifts(arms(12, 0, 12), arms(12, 12, 12))
    one = exact_difference(12, 12, 0, 12, 0.975)
    two = exact_difference(12, 12, 12, 12, 0.975)
    assert level == 0.95
    assert interval.value == 1.0
    assert interval.low == pytest.approx(one.low - two.high)
    assert interval.high == pytest.approx(one.high - two.low)
    # Wider than the difference of the two 95% intervals: each side spends half the error.
    narrow = exact_difference(12, 12, 0, 12).low - exact_difference(12, 12, 12, 12).high
    assert interval.low < narrow


def test_swapping_the_cells_mirrors_the_interval():
    forward, _ = difference_of_lifts(arms(9, 2, 10), arms(5, 4, 10))
    back, _ = difference_of_lifts(arms(5, 4, 10), arms(9, 2, 10))
    assert (back.value, back.low, back.high) == pytest.approx(
        (-forward.value, -forward.high, -forward.low)
    )


def test_adaptive_cells_combine_their_own_intervals_and_state_the_combined_level():
    one = Arms(12, 12, 0, 12, Interval(1.0, 0.52, 1.0), 0.997, True, "steers")
    two = Arms(8, 8, 8, 8, Interval(0.0, -0.6, 0.6), 0.99, True, "not-red")
    interval, level = difference_of_lifts(one, two)
    assert level == pytest.approx(1 - (0.003 + 0.01))
    assert (interval.low, interval.high) == pytest.approx((0.52 - 0.6, 1.0 + 0.6))


@pytest.mark.parametrize(
    ("one", "two", "said"),
    [
        ("steers", "not-red", "helps haiku, not needed on opus (its baseline passes)"),
        ("improved", "neutral", "helps haiku, neutral on opus"),
        ("no-steer", "steers", "no-steer on haiku, helps opus"),
    ],
)
def test_the_reading_names_what_each_verdict_says(one, two, said):
    assert reading("haiku", one, "opus", two) == said


def _cell(model: str, with_passed: int, red: int, verdict: str) -> dict[str, object]:
    scenario = {
        "skill": "s",
        "id": "a",
        "verdict": verdict,
        "lift": 0.0,
        "lift_ci": [-1.0, 1.0],
        "confidence": 0.95,
        "repetitions": {"mode": "fixed", "k": 10},
        "with_skill": {"passed": with_passed, "runs": 10},
        "without_skill": {"runs": 10, "red": red},
    }
    return {
        "id": f"model={model}",
        "values": {"model": model},
        "results": {"scenarios": [scenario]},
    }


def test_cells_are_compared_pairwise_and_a_lift_no_run_can_tell_apart_is_not_shown():
    cells = [
        _cell("haiku", 10, 10, "steers"),
        _cell("sonnet", 10, 9, "steers"),
        _cell("opus", 10, 0, "not-red"),
    ]
    found = {(c.first, c.second): c for c in compare_cells("pressure", cells)}
    assert sorted(found) == [("haiku", "opus"), ("haiku", "sonnet"), ("sonnet", "opus")]
    assert found[("haiku", "sonnet")].verdict == "no difference shown"
    assert found[("haiku", "opus")].verdict == "differs"
    assert found[("haiku", "opus")].difference.value == pytest.approx(1.0)


def _scenario_cell(
    version: str, with_passes: int, base_passes: int, runs: int
) -> dict[str, object]:
    scenario = {
        "skill": "s",
        "id": "a",
        "verdict": "improved",
        "pass_delta": 0.0,
        "pass_delta_ci": [-1.0, 1.0],
        "confidence": 0.95,
        "repetitions": {"mode": "fixed", "k": runs},
        "with_skill": {"passes": with_passes, "scored": runs},
        "without_skill": {"passes": base_passes, "scored": runs},
    }
    return {
        "id": f"claude={version}",
        "values": {"claude": version},
        "results": {"scenarios": [scenario]},
    }


def test_a_cli_upgrade_is_read_per_arm_and_swapping_the_versions_mirrors_it():
    old, new = _scenario_cell("2.1.328", 40, 10, 40), _scenario_cell("2.1.332", 10, 10, 40)
    forward = {c.arm: c for c in compare_versions("scenarios", [old, new])}
    back = {c.arm: c for c in compare_versions("scenarios", [new, old])}
    assert forward["with_skill"].verdict == "regressed"
    assert back["with_skill"].verdict == "improved"
    assert forward["with_skill"].change.value == pytest.approx(-0.75)
    assert (back["with_skill"].change.low, back["with_skill"].change.high) == pytest.approx(
        (-forward["with_skill"].change.high, -forward["with_skill"].change.low)
    )
    assert forward["without_skill"].verdict == back["without_skill"].verdict == "inconclusive"
    # Only the model axis has lift differences; the CLI axis has its own reading.
    assert compare_cells("scenarios", [old, new]) == []


def test_a_pass_rate_that_did_not_move_over_many_runs_is_the_same():
    old, new = _scenario_cell("2.1.328", 200, 0, 200), _scenario_cell("2.1.332", 200, 0, 200)
    assert {c.verdict for c in compare_versions("scenarios", [old, new])} == {"same"}


def test_a_cell_s_measures_count_every_scenario_s_runs():
    from skilltest.matrix.measures import cell_measures

    def run(arm: str, calls: int, cost: float) -> dict[str, object]:
        return {"arm": arm, "tool_call_count": calls, "cost_usd": cost}

    world = {
        "passes": 2,
        "scored": 4,
        "authority_violations": 1,
        "split_scores": {"recovery": {"mean": 0.5}},
    }
    cell = {
        "id": "model=haiku",
        "results": {
            "scenarios": [
                {
                    "with_skill": {"passes": 3, "scored": 3},
                    "runs": [run("with_skill", n, 0.01) for n in (2, 4, 9)],
                },
                {
                    "with_skill": world,
                    "runs": [run("with_skill", n, 0.02) for n in (1, 1, 3, 5)],
                },
            ]
        },
    }
    (with_skill,) = cell_measures("scenarios", cell)
    assert (with_skill.passes, with_skill.runs) == (5, 7)
    assert (with_skill.tool_calls_median, with_skill.tool_calls_worst) == (3, 9)
    assert with_skill.authority_violation_rate == 0.25
    assert with_skill.recovery == 0.5
    assert with_skill.cost_per_pass == pytest.approx((0.03 + 0.08) / 5)
    assert with_skill.pass_rate == clopper_pearson(5, 7)
    assert 0.29 < with_skill.pass_rate.low < 0.3 and 0.96 < with_skill.pass_rate.high < 0.97
