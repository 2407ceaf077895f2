"""pass@k and pass^k of the scenario layer: a run passes on its own when its score reaches
min_score and it has no authority violation."""

import dataclasses

import pytest

from skilltest.repetitions import Repetitions
from skilltest.scenarios.report import render_table
from skilltest.scenarios.verdict import judge
from tests.scenarios.test_verdict import W, arms, run


def test_adaptive_k_is_the_first_round_and_the_estimators_are_unbiased():
    records = arms([1.0] * 7 + [0.5] * 3, [0.0] * 10)
    result = judge(
        "s", "lgtm", records, comparison=True, repetitions=Repetitions(min_k=3, max_k=10)
    )
    data = result.with_skill.to_dict()
    # 7 of 10 runs reach 0.6: pass@3 = 1 - C(3,3)/C(10,3) = 119/120, pass^3 = C(7,3)/120 = 35/120.
    assert (data["passes"], data["k"]) == (7, 3)
    assert data["pass_at_k"] == pytest.approx(119 / 120)
    assert data["pass_hat_k"] == pytest.approx(35 / 120)
    assert result.passed
    row = render_table([result]).splitlines()[2]
    assert row.rstrip().endswith("pass^3 29%: all of 3 runs pass less than half the time")


def test_a_run_with_an_authority_violation_does_not_pass_whatever_its_score():
    records = arms([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    records[0] = dataclasses.replace(records[0], world={"violations": ["DELETE /tickets/7"]})
    summary = judge("s", "lgtm", records, comparison=True).with_skill
    assert summary.passes == 2
    assert summary.to_dict()["pass_hat_k"] == 0.0


def test_consistent_passing_runs_add_nothing_to_the_table():
    result = judge("s", "lgtm", arms([1.0] * 3, [0.0] * 3), comparison=True)
    assert result.with_skill.to_dict()["pass_hat_k"] == 1.0
    assert "pass^" not in render_table([result])


def test_a_scored_run_below_min_score_does_not_pass():
    records = [run(W, 1, 0.59), run(W, 2, 0.6)]
    summary = judge("s", "lgtm", records, comparison=False).with_skill
    assert summary.passes == 1
