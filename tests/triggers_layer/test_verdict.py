"""Per-query results and suite metrics from hand-computed counts."""

import pytest

from skilltest.stats import exact_difference, wilson
from skilltest.triggers.suite import TriggerQuery
from skilltest.triggers.verdict import Confusion, QueryResult, SuiteResult, TriggerRun, compare


def query(qid: str, should: bool, *endings: str, threshold: float = 0.5) -> QueryResult:
    return QueryResult(
        query=TriggerQuery(qid, f"query {qid}", should, f"s.yaml#/queries/{qid}"),
        runs=tuple(TriggerRun(rep=i, ended=e) for i, e in enumerate(endings)),  # type: ignore[arg-type]
        threshold=threshold,
    )


def suite(*queries: QueryResult, variant: str = "current") -> SuiteResult:
    return SuiteResult("s.yaml", "lgtm", variant, None, queries)


# Hand-computed: should-trigger queries fire in 3+1 runs of 3+3 scored (the budget and timeout
# runs count as not fired; the error run is left out), should-not queries in 1 of 3+2.
HAND = suite(
    query("a", True, "fired", "fired", "fired"),
    query("b", True, "fired", "budget", "timeout", "error"),
    query("c", False, "fired", "not-fired", "not-fired"),
    query("d", False, "not-fired", "not-fired"),
)


def test_counts_are_per_scored_run():
    assert HAND.confusion == Confusion(tp=4, fn=2, fp=1, tn=4)


def test_precision_recall_accuracy_come_from_the_right_counts():
    c = HAND.confusion
    assert c.precision == wilson(4, 5)  # TP / (TP + FP)
    assert c.recall == wilson(4, 6)  # TP / (TP + FN)
    assert c.accuracy == wilson(8, 11)  # (TP + TN) / scored runs
    assert c.precision.value == pytest.approx(0.8)
    assert c.recall.value == pytest.approx(2 / 3)
    assert c.accuracy.value == pytest.approx(8 / 11)


@pytest.mark.parametrize(
    ("should", "endings", "result"),
    [
        (True, ("fired", "fired", "not-fired"), "pass"),
        (True, ("fired", "not-fired", "not-fired"), "miss"),
        (True, ("fired", "budget", "timeout"), "miss"),  # budget and timeout: not fired
        (True, ("fired", "error", "error"), "error"),  # fewer than half scored
        (True, ("fired", "not-fired", "error", "error"), "pass"),  # half scored: 1/2 >= 0.5
        (False, ("fired", "not-fired", "not-fired"), "pass"),  # 1/3 < 0.5
        (False, ("fired", "fired", "not-fired"), "false-trigger"),
        (False, ("fired", "not-fired"), "false-trigger"),  # 1/2 is not below 0.5
        (False, ("error",), "error"),
    ],
)
def test_a_query_passes_by_its_rate_against_the_threshold(should, endings, result):
    assert query("q", should, *endings).result == result


def test_the_rate_of_a_query_is_fired_over_scored_runs_with_wilson():
    q = query("b", True, "fired", "budget", "timeout", "error")
    assert (q.fired, q.scored) == (1, 3)
    assert q.rate == wilson(1, 3)
    row = q.to_dict()
    assert row["ended"] == {"fired": 1, "not-fired": 0, "budget": 1, "timeout": 1, "error": 1}
    assert (row["rate"], row["ci_low"], row["ci_high"]) == (q.rate.value, q.rate.low, q.rate.high)


def test_compare_gives_candidate_minus_current_with_an_exact_interval():
    current = suite(query("a", True, "fired", "fired"), query("c", False, "not-fired"))
    candidate = suite(
        query("a", True, "not-fired", "fired"), query("c", False, "fired"), variant="candidate"
    )
    rows = {row.name: row for row in compare(current, candidate)}
    assert rows["a"].difference == exact_difference(1, 2, 2, 2)
    assert rows["a"].difference.value == pytest.approx(-0.5)
    assert rows["recall"].difference == exact_difference(1, 2, 2, 2)
    assert rows["precision"].difference == exact_difference(1, 2, 2, 2)
    assert rows["accuracy"].difference == exact_difference(1, 3, 3, 3)


def test_the_results_file_cuts_long_tool_arguments():
    from skilltest.triggers.watch import SeenCall

    run = TriggerRun(rep=0, ended="fired", first_calls=(SeenCall("Write", {"content": "x" * 900}),))
    [call] = run.to_dict()["first_tool_calls"]
    assert len(call["input"]["content"]) == 500 and call["input"]["content"].endswith("…")


# Exact Clopper-Pearson bounds, by hand: n of n has lower bound 0.025 ** (1/n) (0.29 at 3, 0.54
# at 6); 0 of n has upper bound 1 - 0.025 ** (1/n) (0.46 at 6).
@pytest.mark.parametrize(
    ("should", "endings", "verdict"),
    [
        (True, ["fired"] * 3, "inconclusive"),
        (True, ["fired"] * 6, "pass"),
        (True, ["not-fired"] * 6, "fail"),
        (True, ["fired"] * 5 + ["not-fired"], "inconclusive"),
        (False, ["not-fired"] * 6, "pass"),
        (False, ["budget"] * 6, "pass"),
        (False, ["fired"] * 6, "fail"),
        (False, ["not-fired"] * 3, "inconclusive"),
        (True, ["error"] * 3, "error"),
    ],
)
def test_a_query_verdict_needs_the_whole_exact_interval_on_one_side(
    should: bool, endings: list[str], verdict: str
) -> None:
    result = query("q", should, *endings)
    assert result.verdict == verdict
    assert result.to_dict()["verdict"] == verdict


def test_a_rate_well_below_the_threshold_passes_at_most_2_5_percent_at_k_3_and_10() -> None:
    from math import comb

    from skilltest.triggers.verdict import interval_verdict

    for k in (3, 10):
        false_pass = sum(
            comb(k, x) * 0.3**x * 0.7 ** (k - x)
            for x in range(k + 1)
            if interval_verdict(x, k, 0.5, True) == "pass"
        )
        assert false_pass <= 0.025
    # The point estimate alone would pass 2 of 3 and 3 of 3: 21.6% at a true rate of 0.3.
    assert interval_verdict(2, 3, 0.5, True) == "inconclusive"


def test_an_adaptive_plan_reads_each_look_at_the_level_it_spends() -> None:
    from skilltest.repetitions import Repetitions
    from skilltest.triggers.verdict import interval_verdict

    plan = Repetitions(None, 3, 10)
    # 6 of 6 passes at a fixed K (lower bound 0.54) but not at a look of 3..10, whose share is
    # below 2.5%; 10 of 10 does (0.5 ** 10 is within every share carried to the last look).
    assert interval_verdict(6, 6, 0.5, True) == "pass"
    assert interval_verdict(6, 6, 0.5, True, plan) == "inconclusive"
    assert interval_verdict(10, 10, 0.5, True, plan) == "pass"
    assert interval_verdict(0, 10, 0.5, False, plan) == "pass"
