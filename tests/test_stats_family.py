"""Suite-wide error control: Holm over the scenarios' own p-values."""

import itertools

import pytest
import scipy.stats

from skilltest.stats import exact_difference
from skilltest.stats.family import family_decisions, holm


def _scenario(name, x, n, y, m, decide_by="pass", scores=None, repetitions=None):
    interval = exact_difference(x, n, y, m)
    verdict = (
        "improved" if interval.low > 0.05 else "regressed" if interval.high < -0.05 else "neutral"
    )
    a_scores, b_scores = scores or ([1.0] * x + [0.0] * (n - x), [1.0] * y + [0.0] * (m - y))
    return {
        "skill": "s",
        "id": name,
        "verdict": verdict,
        "decide_by": decide_by,
        "repetitions": repetitions or {"mode": "fixed", "k": n},
        "with_skill": {"passes": x, "scored": n, "scores": a_scores},
        "without_skill": {"passes": y, "scored": m, "scores": b_scores},
    }


def test_holm_steps_down():
    assert holm([0.01, 0.02, 0.03]) == [True, True, True]
    assert holm([0.01, 0.04, 0.2]) == [True, False, False]
    assert holm([0.02, 0.02, 0.02, 0.02]) == [False] * 4


def test_a_clear_win_holds_suite_wide_and_a_marginal_one_does_not():
    doc = {
        "scenarios": [
            _scenario("clear", 10, 10, 0, 10),
            _scenario("marginal", 3, 3, 0, 3),
            _scenario("loss", 0, 10, 10, 10),
            _scenario("tie", 5, 10, 5, 10),
        ]
    }
    family = family_decisions(doc)
    assert family["method"] == "holm" and family["level"] == 0.05
    held = {row["id"]: row["held"] for row in family["decisions"]}
    assert held == {"clear": True, "marginal": False, "loss": True}
    assert family["summary"] == (
        "1 of 2 improved, 1 of 1 regressed hold suite-wide (Holm, 5% family-wise)"
    )


def test_adaptive_plans_pay_for_their_looks():
    fixed = family_decisions({"scenarios": [_scenario("a", 5, 5, 0, 5)]})["decisions"][0]
    auto = family_decisions(
        {
            "scenarios": [
                _scenario("a", 5, 5, 0, 5, repetitions={"mode": "auto", "min_k": 3, "max_k": 10})
            ]
        }
    )["decisions"][0]
    assert auto["p_value"] == pytest.approx(min(1.0, fixed["p_value"] * 8))


def test_mean_score_decisions_use_the_betting_sequence():
    scores = ([0.9] * 20, [0.3] * 20)
    family = family_decisions({"scenarios": [_scenario("m", 20, 20, 0, 20, "mean", scores)]})
    (row,) = family["decisions"]
    assert row["held"] and 0 < row["p_value"] < 0.01


def test_no_effect_suites_hold_a_false_decision_at_most_5_percent_of_the_time():
    # Three scenarios, K=3 per arm, every arm at the same true rate: exact over every outcome.
    n = 3
    tables = list(itertools.product(range(n + 1), repeat=2))
    for rate in (0.3, 0.5, 0.7):
        chance = {
            t: scipy.stats.binom.pmf(t[0], n, rate) * scipy.stats.binom.pmf(t[1], n, rate)
            for t in tables
        }
        scenarios = {t: _scenario("x", t[0], n, t[1], n) for t in tables}
        wrong = 0.0
        for combo in itertools.product(tables, repeat=3):
            decided = [scenarios[t] for t in combo if scenarios[t]["verdict"] != "neutral"]
            decided = [s for s in decided if s["verdict"] in ("improved", "regressed")]
            if not decided:
                continue
            doc = {
                "scenarios": decided + [scenarios[t] for t in combo if scenarios[t] not in decided]
            }
            if any(row["held"] for row in family_decisions(doc)["decisions"]):
                p = 1.0
                for t in combo:
                    p *= chance[t]
                wrong += p
        assert wrong <= 0.05
