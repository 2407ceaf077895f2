"""Per-query results and suite metrics from hand-computed counts."""

import pytest

from skilltest.stats import clopper_pearson, exact_difference, wilson
from skilltest.triggers.suite import TriggerQuery
from skilltest.triggers.verdict import (
    Confusion,
    QueryResult,
    SuiteResult,
    TriggerRun,
    compare,
    interval_verdict,
)


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
        (True, ["fired"] * 6, "pass"),  # 6/6: lower bound 0.54 >= 0.5
        (True, ["fired"] * 3, "inconclusive"),  # 3/3: lower bound 0.29
        (True, ["fired", "fired", "not-fired"], "inconclusive"),  # the point estimate passed it
        (True, ["not-fired"] * 6, "miss"),  # 0/6: upper bound 0.46 < 0.5
        (True, ["budget", "timeout", "not-fired"] * 2, "miss"),  # budget and timeout: not fired
        (True, ["fired", "error", "error"], "error"),  # fewer than half scored
        (True, ["fired"] * 6 + ["error"] * 6, "pass"),  # half scored: 6/6
        (False, ["not-fired"] * 6, "pass"),
        (False, ["fired"] * 6, "false-trigger"),
        (False, ["fired", "not-fired"], "inconclusive"),  # the point estimate failed it
        (False, ["error"], "error"),
    ],
)
def test_a_query_passes_or_fails_only_when_its_exact_interval_decides(should, endings, result):
    q = query("q", should, *endings)
    assert q.result == result
    assert q.passed == (result == "pass")
    assert q.inconclusive == (result == "inconclusive")
    row = q.to_dict()
    assert (row["result"], row["passed"]) == (result, result == "pass")


def test_the_rate_of_a_query_is_fired_over_scored_runs_with_its_exact_interval():
    q = query("b", True, "fired", "budget", "timeout", "error")
    assert (q.fired, q.scored, q.k) == (1, 3, 4)
    assert q.rate == clopper_pearson(1, 3)
    row = q.to_dict()
    assert row["ended"] == {"fired": 1, "not-fired": 0, "budget": 1, "timeout": 1, "error": 1}
    assert (row["rate"], row["ci_low"], row["ci_high"]) == (q.rate.value, q.rate.low, q.rate.high)
    assert (row["k"], row["confidence"], row["repetitions"]) == (4, 0.95, None)


@pytest.mark.parametrize(
    ("should", "endings", "reason", "needed"),
    [
        (
            True,
            ["fired"] * 3,
            "fired in 3/3 scored runs: the 95% exact interval of its rate, [29%–100%], "
            "straddles the threshold 50%; about 6 runs would likely decide it",
            6,
        ),
        (
            True,
            ["not-fired"] * 6,
            "fired in 0/6 scored runs: the 95% exact interval of its rate, [0%–46%], lies below "
            "the threshold 50%",
            None,
        ),
        (
            False,
            ["fired"] * 6,
            "fired in 6/6 scored runs: the 95% exact interval of its rate, [54%–100%], lies at or "
            "above the threshold 50%",
            None,
        ),
        (
            True,
            ["fired", "not-fired"] * 3,
            "fired in 3/6 scored runs: the 95% exact interval of its rate, [12%–88%], straddles "
            "the threshold 50%; more runs would not decide it if the rate stays as it is",
            None,
        ),
        (
            True,
            ["fired", "error", "error"],
            "only 1 of 3 runs scored, fewer than half (the API failed)",
            None,
        ),
        (True, ["fired"] * 6, None, None),
    ],
)
def test_a_query_says_why_it_fails_or_is_undecided(should, endings, reason, needed):
    runs = tuple(
        TriggerRun(rep=i, ended=e, reason="the API failed" if e == "error" else None)
        for i, e in enumerate(endings)
    )
    q = QueryResult(TriggerQuery("q", "query q", should, "s.yaml#/queries/0"), runs, 0.5)
    assert q.reason == reason
    assert q.runs_to_decide == needed
    assert (q.to_dict()["reason"], q.to_dict()["runs_to_decide"]) == (reason, needed)


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


def test_an_adaptive_look_is_counted_by_the_runs_taken_unscored_ones_included() -> None:
    from skilltest.repetitions import Repetitions

    plan = Repetitions(None, 3, 20)
    runs = (*(["fired"] * 8), "error")
    q = QueryResult(
        TriggerQuery("q", "query q", True, "s.yaml#/queries/0"),
        tuple(TriggerRun(rep=i, ended=e) for i, e in enumerate(runs)),  # type: ignore[arg-type]
        0.5,
        repetitions=plan,
    )
    # 8/8 decides at the look after 8 runs, whose share carries the looks 3 to 7 (0.5 ** 8 is
    # within it); at the look after 9 runs the share is one look's again, and 8/8 is not enough.
    assert interval_verdict(8, 8, 0.5, True, plan) == "pass"
    assert q.k == 9 and q.verdict == "inconclusive"
    assert q.confidence == plan.confidence_at(9, lambda n: 0.5**n)
    assert q.to_dict()["repetitions"] == {"mode": "auto", "min_k": 3, "max_k": 20}


def test_against_a_revision_under_an_adaptive_plan_pays_for_the_looks() -> None:
    from skilltest.repetitions import Repetitions
    from skilltest.triggers.verdict import against_query

    plan = Repetitions(None, 3, 20)

    def ran(should: bool, fired: int, k: int, repetitions: Repetitions | None) -> QueryResult:
        endings = ["fired"] * fired + ["not-fired"] * (k - fired)
        return QueryResult(
            TriggerQuery("q", "query q", should, "s.yaml#/queries/0"),
            tuple(TriggerRun(rep=i, ended=e) for i, e in enumerate(endings)),  # type: ignore[arg-type]
            0.5,
            repetitions=repetitions,
        )

    fixed = against_query("HEAD~1", ran(True, 3, 3, None), ran(True, 0, 3, None))
    assert (fixed.verdict, fixed.delta) == ("improved", exact_difference(3, 3, 0, 3))
    # At a look of an adaptive plan the claim gets only its share of 2.5%: 3/3 against 0/3 has a
    # p-value of 1.6% at no effect, more than the share of the first look.
    spent = against_query("HEAD~1", ran(True, 3, 3, plan), ran(True, 0, 3, plan))
    assert spent.verdict == "inconclusive"
    assert spent.delta.low is not None and fixed.delta.low is not None
    assert spent.delta.low < fixed.delta.low
    # A should-not query improves when it fires less; its delta is still now minus before.
    fewer = against_query("HEAD~1", ran(False, 0, 6, None), ran(False, 6, 6, None))
    assert fewer.verdict == "improved"
    assert fewer.delta.value == -1.0 and fewer.delta == exact_difference(0, 6, 6, 6)
