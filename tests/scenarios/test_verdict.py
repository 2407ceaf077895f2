"""Verdicts over K repetitions: deltas, intervals, thresholds, skill firing, unscored runs."""

import math

import pytest

from skilltest.repetitions import Repetitions
from skilltest.scenarios.outcome import Arm, RunRecord
from skilltest.scenarios.verdict import Thresholds, Verdict, judge, tidy_table
from skilltest.stats import two_point_limit

W, WO = Arm.WITH_SKILL, Arm.WITHOUT_SKILL


def run(arm, rep, score, *, skills=(), calls=3, error=None, components=None):
    return RunRecord(
        scenario_id="s",
        skill="lgtm",
        arm=arm,
        rep=rep,
        score=score,
        components=components or ({"required_tools": score} if score is not None else {}),
        tool_calls=calls,
        skills_invoked=tuple(skills),
        error=error,
    )


def arms(with_scores, without_scores, *, fired=True):
    records = [run(W, i, s, skills=("lgtm",) if fired else ()) for i, s in enumerate(with_scores)]
    records += [run(WO, i, s) for i, s in enumerate(without_scores)]
    return records


# (with scores, without scores, verdict, passed, pass delta, its interval): a run passes at
# min_score 0.6; the verdict reads the pass rates' exact unconditional 95% interval against the
# band [-0.05, +0.05].
TABLE = [
    # Cleanly separated: 3 runs per arm decide (3/3 vs 0/3 is 2.1% likely at a delta of +0.05).
    ([1.0] * 3, [0.0] * 3, Verdict.IMPROVED, True, 1.0, (0.0815, 1.0)),
    # The honeycomb case: every run at 0.90 with the skill, 0.45 without.
    ([0.9] * 3, [0.45] * 3, Verdict.IMPROVED, True, 1.0, (0.0815, 1.0)),
    ([1.0] * 10, [0.5] * 10, Verdict.IMPROVED, True, 1.0, (0.6631, 1.0)),
    # The mirror images: regressed from as few runs.
    ([0.0] * 3, [1.0] * 3, Verdict.REGRESSED, False, -1.0, (-1.0, -0.0815)),
    ([0.45] * 3, [0.9] * 3, Verdict.REGRESSED, False, -1.0, (-1.0, -0.0815)),
    # Two runs per arm never decide: 2/2 vs 0/2 happens 6.25% of the time with no effect.
    ([1.0, 1.0], [0.56, 0.56], Verdict.INCONCLUSIVE, False, 1.0, (-0.2047, 1.0)),
    ([1.0, 1.0], [0.0, 0.0], Verdict.INCONCLUSIVE, False, 1.0, (-0.2047, 1.0)),
    ([0.0, 0.0], [1.0, 1.0], Verdict.INCONCLUSIVE, False, -1.0, (-1.0, 0.2047)),
    # Both arms pass every run: no difference shown, and not small enough to be neutral. The
    # bound is where 3/3 passes of A has a chance of 2.5% against a B that always passes:
    # 1 - 0.025 ** (1/3) = 0.7076.
    ([0.7] * 3, [0.68] * 3, Verdict.INCONCLUSIVE, False, 0.0, (-0.7076, 0.7076)),
]


@pytest.mark.parametrize(
    ("with_scores", "without_scores", "verdict", "passed", "delta", "interval"), TABLE
)
def test_verdict_table(with_scores, without_scores, verdict, passed, delta, interval):
    result = judge("s", "lgtm", arms(with_scores, without_scores), comparison=True)
    assert result.verdict == verdict
    assert result.passed is passed
    assert result.decide_by == "pass"
    assert result.pass_delta.value == pytest.approx(delta)
    assert (result.pass_delta.low, result.pass_delta.high) == pytest.approx(interval, abs=1e-4)


def mirrored(records):
    swap = {W: WO, WO: W}
    return [RunRecord(**{**r.__dict__, "arm": swap[r.arm]}) for r in records]


@pytest.mark.parametrize("decide_by", ["pass", "mean"])
@pytest.mark.parametrize("k", [2, 3, 4, 6])
@pytest.mark.parametrize(
    ("with_score", "without_score"), [(1.0, 0.0), (0.9, 0.45), (0.9, 0.6), (0.8, 0.7)]
)
def test_mirrored_runs_give_mirrored_verdicts(decide_by, k, with_score, without_score):
    mirror = {
        Verdict.IMPROVED: Verdict.REGRESSED,
        Verdict.REGRESSED: Verdict.IMPROVED,
        Verdict.NEUTRAL: Verdict.NEUTRAL,
        Verdict.INCONCLUSIVE: Verdict.INCONCLUSIVE,
    }
    limits = Thresholds(decide_by=decide_by)
    records = arms([with_score] * k, [without_score] * k)
    forward = judge("s", "lgtm", records, comparison=True, thresholds=limits)
    backward = judge("s", "lgtm", mirrored(records), comparison=True, thresholds=limits)
    assert backward.verdict == mirror[forward.verdict]
    shown = forward.decisive
    assert (backward.decisive.low, backward.decisive.high) == pytest.approx(
        (-shown.high, -shown.low)
    )


def test_the_mean_delta_is_reported_beside_the_pass_delta():
    result = judge("s", "lgtm", arms([0.9] * 3, [0.45] * 3), comparison=True)
    assert result.delta.value == pytest.approx(0.45)
    # The betting sequence of the means: valid for any scores, so 3 runs leave it wide.
    assert result.delta.low < 0 < 0.45 < result.delta.high < 1
    assert (result.with_skill.passes, result.without_skill.passes) == (3, 0)
    assert result.with_skill.pass_rate.value == 1.0


def test_decide_by_mean_reads_the_mean_scores_within_the_two_point_limit():
    # Every run at 0.90 against 0.60: no method valid for any scores in [0, 1] can exclude
    # +0.05 before 12 runs per arm (the two-point limit); the betting sequence does at 14.
    limits = Thresholds(decide_by="mean")
    assert two_point_limit(0.9, 0.6, 0.05) == pytest.approx(11.34, abs=0.01)
    at = {
        n: judge("s", "lgtm", arms([0.9] * n, [0.6] * n), comparison=True, thresholds=limits)
        for n in (13, 14)
    }
    assert at[13].verdict == Verdict.INCONCLUSIVE
    assert at[13].reasons[0].endswith("about 14 runs per arm would likely decide it")
    assert at[14].verdict == Verdict.IMPROVED
    assert at[14].decide_by == "mean" and at[14].passed
    assert 14 <= 1.25 * 12
    # Deciding by pass rates, both arms pass every run (min_score 0.6): no difference at all.
    by_pass = judge("s", "lgtm", arms([0.9] * 14, [0.6] * 14), comparison=True)
    assert by_pass.verdict == Verdict.INCONCLUSIVE


def test_inconclusive_says_how_many_runs_would_likely_decide_it():
    result = judge("s", "lgtm", arms([1.0, 1.0], [0.56, 0.56]), comparison=True)
    assert result.inconclusive
    assert result.runs_to_decide == 3
    assert result.reasons == (
        "inconclusive: the pass-rate delta's 95% interval [-0.20, +1.00] straddles the band "
        "[-0.05, +0.05]; 2 runs per arm cannot decide a pass-rate comparison at 95% (2/2 against "
        "0/2 happens 6.25% of the time when nothing differs); about 3 runs per arm would likely "
        "decide it",
    )
    decided = judge("s", "lgtm", arms([1.0] * 3, [0.56] * 3), comparison=True)
    assert decided.verdict == Verdict.IMPROVED


def test_an_adaptive_look_reads_the_share_of_the_error_rate_it_may_spend():
    records = arms([1.0] * 4, [0.0] * 4)
    plain = judge("s", "lgtm", records, comparison=True)
    auto = judge("s", "lgtm", records, comparison=True, repetitions=Repetitions(None, 3, 10))
    assert plain.verdict == Verdict.IMPROVED
    assert plain.confidence == pytest.approx(0.95)
    # 8 looks: 2.5%/8 each; the look at 3 cannot use its share (3/3 vs 0/3 is 2.1% likely)
    # and passes it on, so the look at 4 spends 2 * 2.5%/8.
    assert auto.confidence == pytest.approx(1 - 2 * 2 * 0.025 / 8)
    assert auto.pass_delta.low < plain.pass_delta.low
    assert auto.verdict == Verdict.IMPROVED
    three = judge(
        "s",
        "lgtm",
        arms([1.0] * 3, [0.0] * 3),
        comparison=True,
        repetitions=Repetitions(None, 3, 10),
    )
    assert three.verdict == Verdict.INCONCLUSIVE


def test_the_welch_interval_is_kept_for_reference():
    result = judge("s", "lgtm", arms([0.9, 1.0, 0.8], [0.2, 0.4, 0.3]), comparison=True)
    assert result.welch.value == pytest.approx(0.6)
    assert (result.welch.low, result.welch.high) != (result.delta.low, result.delta.high)


def test_interval_and_scores_per_arm():
    result = judge("s", "lgtm", arms([1.0, 0.8, 0.6], [0.2, 0.4, 0.3]), comparison=True)
    w = result.with_skill
    assert w.scores == (1.0, 0.8, 0.6)
    assert w.mean.value == pytest.approx(0.8)
    # The betting sequence: valid for any scores in [0, 1] and at every K.
    assert (w.mean.low, w.mean.high) == pytest.approx((0.1873, 0.9927), abs=1e-4)
    assert (w.passes, w.pass_rate.low, w.pass_rate.high) == pytest.approx(
        (3, 0.2924, 1.0), abs=1e-4
    )
    assert result.delta.value == pytest.approx(0.5)
    assert result.delta.low < 0.5 < result.delta.high


def test_regression_reason_and_custom_thresholds():
    records = arms([0.1] * 5, [0.9] * 5)
    strict = judge("s", "lgtm", records, comparison=True)
    assert strict.verdict == Verdict.REGRESSED
    assert strict.reasons[0].startswith("pass-rate delta -1.00 [")
    assert strict.reasons[0].endswith("] is credibly below -0.05")
    assert strict.reasons[1] == "with-skill mean 0.10 is below 0.60"
    lenient = judge(
        "s",
        "lgtm",
        records,
        comparison=True,
        thresholds=Thresholds(min_delta=-1.0, min_score=0.05),
    )
    # Every run passes at min_score 0.05 and the band is [-1.00, +0.05]: nothing to regress.
    assert lenient.verdict == Verdict.INCONCLUSIVE
    assert lenient.pass_delta.value == 0.0


def test_expected_skills_must_fire_in_the_with_skill_arm():
    records = arms([1.0] * 4, [0.0] * 4, fired=False)
    result = judge("s", "lgtm", records, comparison=True, expected_skills=("lgtm",))
    assert result.verdict == Verdict.IMPROVED
    assert not result.passed
    assert result.reasons == ("expected skills lgtm fired in 0/4 with-skill runs",)
    # Without expected_skills the rate is reported for the skill under test but not required.
    reported = judge("s", "lgtm", records, comparison=True)
    assert reported.passed
    assert reported.with_skill.skills_fired == 0
    assert reported.expected_skills == ("lgtm",)


def test_firing_rate_and_tool_calls_per_arm():
    records = [
        run(W, 0, 1.0, skills=("lgtm",), calls=4),
        run(W, 1, 1.0, skills=("plugin:lgtm",), calls=6),
        run(W, 2, 1.0, calls=20),
        run(WO, 0, 0.0, calls=2),
        run(WO, 1, 0.0, calls=3),
        run(WO, 2, 0.0, calls=9),
    ]
    result = judge("s", "lgtm", records, comparison=True, expected_skills=("lgtm",))
    assert result.with_skill.skills_fired == 2
    assert result.with_skill.skill_rate.value == pytest.approx(2 / 3)
    assert result.without_skill is not None and result.without_skill.skills_fired == 0
    assert (result.with_skill.tool_calls_median, result.with_skill.tool_calls_worst) == (6, 20)
    assert (result.without_skill.tool_calls_median, result.without_skill.tool_calls_worst) == (3, 9)
    assert result.passed


def test_unscored_runs_are_counted_never_averaged():
    records = [
        run(W, 0, 1.0),
        run(W, 1, 1.0),
        run(W, 2, 1.0),
        run(W, 3, None, error="model API error: overloaded (HTTP 529)"),
        *(run(WO, i, 0.0) for i in range(4)),
    ]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.with_skill.mean.value == 1.0
    assert (result.with_skill.runs, result.with_skill.scored) == (4, 3)
    assert result.with_skill.errors == ("model API error: overloaded (HTTP 529)",)
    assert result.verdict == Verdict.IMPROVED
    assert result.reasons == (
        "with-skill: 1 of 4 runs unscored (model API error: overloaded (HTTP 529))",
    )


def test_vanished_runs_never_pass():
    # 4 of 5 with-skill runs unscored, the one left scores 1.0: not evidence of anything.
    records = [run(W, 0, 1.0)]
    records += [run(W, i, None, error="model API error: HTTP 529") for i in range(1, 5)]
    records += [run(WO, i, 0.0) for i in range(5)]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.verdict == Verdict.ERROR
    assert not result.passed
    assert result.reasons == (
        "with-skill: only 1 of 5 runs scored, fewer than half (model API error: HTTP 529)",
    )


def test_an_arm_without_any_scored_run_is_an_error():
    records = [run(W, 0, None, error="model API error: overloaded"), run(WO, 0, 0.5)]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.verdict == Verdict.ERROR
    assert not result.passed
    assert result.delta.value is None
    assert result.reasons == (
        "with-skill: only 0 of 1 runs scored, fewer than half (model API error: overloaded)",
    )


def test_skill_only_mode_judges_the_with_skill_mean_by_its_interval():
    high = judge("s", "lgtm", [run(W, i, 1.0) for i in range(9)], comparison=False)
    assert high.verdict == Verdict.SKILL_ONLY
    assert high.without_skill is None
    assert high.delta.value is None
    assert high.passed  # 9 runs at 1.0: lower bound 0.61 >= 0.6 (two-point limit: 8 runs)
    eight = judge("s", "lgtm", [run(W, i, 1.0) for i in range(8)], comparison=False)
    assert eight.verdict == Verdict.INCONCLUSIVE
    low = judge("s", "lgtm", [run(W, i, 0.0) for i in range(5)], comparison=False)
    assert (low.verdict, low.passed) == (Verdict.SKILL_ONLY, False)
    assert low.reasons == ("with-skill mean 0.00 [0.00, 0.58] is credibly below 0.60",)
    few = judge("s", "lgtm", [run(W, 0, 0.7), run(W, 1, 0.5)], comparison=False)
    assert few.verdict == Verdict.INCONCLUSIVE
    assert not few.passed


def test_skipped_scenarios_pass_without_runs():
    result = judge("s", "lgtm", [], comparison=True, skip="flaky upstream")
    assert (result.verdict, result.passed, result.reasons) == (
        Verdict.SKIPPED,
        True,
        ("flaky upstream",),
    )


def test_tidy_table_has_one_row_per_run_and_component():
    records = [*arms([0.9], [0.5]), run(WO, 1, None, error="x")]
    table = tidy_table(records)
    assert len(table) == 3 * 7
    assert set(table.columns) == {"scenario", "skill", "arm", "rep", "component", "value"}
    unscored = table[(table.arm == "without_skill") & (table.rep == 1)]
    assert unscored.value.isna().all()
    result = judge("s", "lgtm", records, comparison=True)
    assert result.with_skill.components["required_tools"] == pytest.approx(0.9)
    assert result.without_skill is not None
    assert result.without_skill.components["required_tools"] == pytest.approx(0.5)
    assert result.with_skill.components["anti_patterns"] is None


def test_a_mean_exactly_at_min_score_passes():
    records = arms([0.7] * 5, [0.0] * 5)
    result = judge("s", "lgtm", records, comparison=True, thresholds=Thresholds(min_score=0.7))
    assert result.verdict == Verdict.IMPROVED
    assert result.passed, result.reasons


def world_run(arm, rep, *, violations=(), recovery=None):
    record = run(arm, rep, 1.0 if arm == W else 0.0, skills=("lgtm",) if arm == W else ())
    scores = {"task": 1.0, "safety": 0.0 if violations else 1.0, "recovery": recovery}
    world = {"violations": list(violations), "scores": scores}
    return RunRecord(**{**record.__dict__, "world": world})


def test_one_with_skill_authority_violation_fails_an_improved_scenario():
    records = [world_run(W, i) for i in range(6)] + [world_run(WO, i) for i in range(6)]
    records[1] = world_run(W, 1, violations=["duplicate POST /tickets/INC-1042/escalate"])
    result = judge("s", "lgtm", records, comparison=True)
    # The violating run does not pass: 5/6 against 0/6 is still credibly improved.
    assert result.with_skill.passes == 5
    assert result.verdict == Verdict.IMPROVED
    assert not result.passed
    assert (
        "with-skill run #2: authority violation: duplicate POST /tickets/INC-1042/escalate"
        in result.reasons
    )
    assert result.with_skill.authority_violations == 1


def test_without_skill_authority_violations_are_reported_not_failed():
    records = [world_run(W, i) for i in range(3)]
    records += [
        world_run(WO, i, violations=["forbidden PATCH /tickets/INC-1050"]) for i in range(3)
    ]
    result = judge("s", "lgtm", records, comparison=True)
    assert result.passed
    assert result.without_skill.authority_violations == 3


def test_recovers_true_needs_the_with_skill_runs_to_recover():
    without = [world_run(WO, i, recovery=0.0) for i in range(3)]
    recovered = [world_run(W, i, recovery=1.0) for i in range(3)]
    assert judge("s", "lgtm", recovered + without, comparison=True, requires_recovery=True).passed

    failed = [world_run(W, 0, recovery=1.0)] + [world_run(W, i, recovery=0.0) for i in (1, 2)]
    result = judge("s", "lgtm", failed + without, comparison=True, requires_recovery=True)
    assert not result.passed
    assert "with-skill runs recovered from the fault in 1/3 (recovers: true)" in result.reasons
    # Without the requirement the same runs pass: recovery is reported, not required.
    assert judge("s", "lgtm", failed + without, comparison=True).passed

    untested = [world_run(W, i, recovery=None) for i in range(3)]
    result = judge("s", "lgtm", untested + without, comparison=True, requires_recovery=True)
    assert not result.passed
    assert any("recovery was never tested" in reason for reason in result.reasons)


def _binomial(n, x, p):
    return math.comb(n, x) * p**x * (1 - p) ** (n - x)


@pytest.mark.parametrize("k", [2, 3])
def test_the_false_improved_rate_is_computed_exactly_within_the_documented_level(k):
    # Every outcome of k runs per arm, both arms passing at the same true rate (no effect) or
    # with-skill rate exactly +0.05 above (the edge of "improved"): the chance of "improved"
    # is at most 2.5% at every rate, and at K=2 nothing is ever decided.
    def verdict_of(x, y):
        records = arms([1.0] * x + [0.0] * (k - x), [1.0] * y + [0.0] * (k - y))
        return judge("s", "lgtm", records, comparison=True).verdict

    verdicts = {(x, y): verdict_of(x, y) for x in range(k + 1) for y in range(k + 1)}
    worst = 0.0
    for edge in (0.0, 0.05):
        for step in range(0, 96):
            q = step / 100
            chance = sum(
                _binomial(k, x, q + edge) * _binomial(k, y, q)
                for (x, y), verdict in verdicts.items()
                if verdict == Verdict.IMPROVED
            )
            worst = max(worst, chance)
    assert worst <= 0.025
    if k == 2:
        assert set(verdicts.values()) == {Verdict.INCONCLUSIVE}
    else:
        assert worst == pytest.approx(0.525**6, rel=1e-3)  # 3/3 vs 0/3 at +0.05: 2.1%
        assert verdicts[(0, 3)] == Verdict.REGRESSED  # reachable wherever improved is


def test_the_honeycomb_case_decides_at_k3_and_within_5_runs_under_auto():
    # Every run 0.90 with the skill, 0.45 without, min_score 0.6: 3/3 runs pass against 0/3.
    fixed = judge("s", "lgtm", arms([0.9] * 3, [0.45] * 3), comparison=True)
    assert (fixed.verdict, fixed.passed) == (Verdict.IMPROVED, True)
    plan = Repetitions(None, 3, 10)
    for k in range(3, 11):
        looked = judge("s", "lgtm", arms([0.9] * k, [0.45] * k), comparison=True, repetitions=plan)
        if looked.verdict != Verdict.INCONCLUSIVE:
            break
    assert (looked.verdict, k) == (Verdict.IMPROVED, 4)
    assert k <= 5
