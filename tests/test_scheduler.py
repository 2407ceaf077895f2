"""The scheduler: lazy, bounded, round by round, adaptive stops, skips, order."""

import asyncio
import contextlib
import time
import tracemalloc

import pytest

from skilltest.errors import InputError
from skilltest.limits import MAX_REPETITIONS
from skilltest.repetitions import Repetitions, plan_for
from skilltest.scheduler import Planned, ProcessLine, Turns, run_rounds
from skilltest.stats import most_extreme_difference


def drive(planned, *, workers=2, decided=lambda item, records, k: False, delay=0.0):
    started, finished, in_flight, most = [], {}, [0], [0]

    async def run(item, arm, rep):
        in_flight[0] += 1
        most[0] = max(most[0], in_flight[0])
        started.append((item, arm, rep))
        await asyncio.sleep(delay)
        in_flight[0] -= 1
        return (item, arm, rep)

    def done(item, records, k):
        finished[item] = (sorted(records), k)

    asyncio.run(run_rounds(planned, workers=workers, run=run, decided=decided, finished=done))
    return started, finished, most[0]


def test_fixed_k_runs_every_repetition_with_the_arms_alternating():
    started, finished, most = drive([Planned("a", Repetitions(3), ("with", "without"))])
    assert started == [
        ("a", "with", 0),
        ("a", "without", 0),
        ("a", "with", 1),
        ("a", "without", 1),
        ("a", "with", 2),
        ("a", "without", 2),
    ]
    assert finished["a"][1] == 3
    assert len(finished["a"][0]) == 6
    assert most == 2


def test_adaptive_plans_stop_at_the_first_decided_look():
    looks = []

    def decided(item, records, k):
        looks.append((item, k, len(records)))
        return k >= 5

    _, finished, _ = drive(
        [Planned("a", Repetitions(None, 3, 10), ("with", "without"))], decided=decided
    )
    assert looks == [("a", 3, 6), ("a", 4, 8), ("a", 5, 10)]
    assert finished["a"][1] == 5
    assert len(finished["a"][0]) == 10


def test_adaptive_plans_stop_at_max_k_when_never_decided():
    looks = []

    def decided(item, records, k):
        looks.append(k)
        return False

    _, finished, _ = drive([Planned("a", Repetitions(None, 2, 4), ("with",))], decided=decided)
    assert looks == [2, 3]  # no look after max K: the plan has nothing more to run
    assert finished["a"][1] == 4


def test_fixed_plans_are_never_looked_at():
    def decided(item, records, k):
        raise AssertionError("a fixed K has no looks")

    _, finished, _ = drive([Planned("a", Repetitions(2), ("w",))], decided=decided)
    assert finished["a"][1] == 2


def test_skipped_scenarios_finish_at_once_without_runs():
    started, finished, _ = drive(
        [Planned("skip", Repetitions(3), ("w",), skip=True), Planned("b", Repetitions(1), ("w",))]
    )
    assert finished["skip"] == ([], 0)
    assert [s[0] for s in started] == ["b"]


def test_open_scenarios_are_served_before_new_ones_start():
    started, _, _ = drive([Planned(name, Repetitions(2), ("w", "wo")) for name in "abc"], workers=1)
    assert [s[0] for s in started] == ["a"] * 4 + ["b"] * 4 + ["c"] * 4


def test_runs_are_created_lazily_so_a_huge_plan_starts_at_once_and_stops_on_cancel():
    # 200 scenarios at the largest K: 400,000 runs. Creating them up front took gigabytes and
    # ignored Ctrl-C; lazily, a few hundred runs in, cancelling ends everything promptly.
    planned = [Planned(i, Repetitions(MAX_REPETITIONS), ("w", "wo")) for i in range(200)]
    seen = []

    async def run(item, arm, rep):
        seen.append(item)
        await asyncio.sleep(0)
        return rep

    async def main():
        task = asyncio.ensure_future(
            run_rounds(
                planned,
                workers=8,
                run=run,
                decided=lambda *a: False,
                finished=lambda *a: None,
            )
        )
        while len(seen) < 300:
            await asyncio.sleep(0)
            assert len(asyncio.all_tasks()) <= 8 + 2  # the workers, the driver, the main task
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    tracemalloc.start()
    try:
        asyncio.run(main())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Lazily, tens of kilobytes; the 400,000 runs made up front, as bare tuples, take 33 MB.
    assert peak < 1_000_000
    assert set(seen) == {0}  # still on the first scenario


def test_a_run_that_raises_stops_the_other_runs_and_waits_for_their_cleanup():
    # A bad cassette found by one run ends the suite. The runs beside it are stopped before the
    # error reaches the command, while the event loop can still run their cleanup (stopping a
    # claude process, closing a proxy), not abandoned to asyncio.run's final cancel-all.
    cleaned: list[str] = []

    async def run(item, arm, rep):
        if item == "broken":
            await asyncio.sleep(0.05)
            raise InputError("the cassette is not valid YAML", location="broken.yaml:28")
        try:
            await asyncio.sleep(600)  # only a stop ends it
        finally:
            await asyncio.sleep(0.05)  # a cleanup that waits, as stopping a process does
            cleaned.append(item)
        return rep

    async def main() -> tuple[list[str], int]:
        with pytest.raises(InputError, match=r"broken\.yaml:28"):
            await run_rounds(
                [Planned(name, Repetitions(1), ("w",)) for name in ("slow", "other", "broken")],
                workers=3,
                run=run,
                decided=lambda *a: False,
                finished=lambda *a: None,
            )
        return sorted(cleaned), len(asyncio.all_tasks()) - 1

    started = time.monotonic()
    cleaned_when_raised, still_running = asyncio.run(main())
    assert cleaned_when_raised == ["other", "slow"]
    assert still_running == 0
    assert time.monotonic() - started < 300  # stopped, not waited for


@pytest.mark.parametrize(
    ("command_line", "suite", "expected"),
    [
        (None, None, Repetitions(None, 3, 10)),
        (None, 5, Repetitions(5)),
        (7, 5, Repetitions(7)),
        ("auto", 5, Repetitions(None, 3, 10)),
    ],
)
def test_the_command_line_wins_then_the_suite_then_adaptive(command_line, suite, expected):
    assert plan_for(command_line, suite) == expected


def test_adaptive_looks_share_a_claims_error_rate_and_pass_on_what_they_cannot_use():
    plan = Repetitions(None, 3, 10)
    assert plan.looks == 8
    share = 0.025 / 8
    # Without a floor every look spends an equal share, 2.5% in all.
    assert plan.claim_error_at(3) == pytest.approx(share)
    assert sum(plan.claim_error_at(k) for k in range(3, 11)) == pytest.approx(0.025)
    # "improved" at +0.05: 3/3 vs 0/3 has a p-value of 2.1% > share, so the look at 3 can
    # decide nothing and its share goes to the look at 4 (4/4 vs 0/4: 0.58% < 2 shares).
    improved = lambda n: most_extreme_difference(0.05, n)  # noqa: E731
    assert plan.claim_error_at(3, improved) == pytest.approx(share)
    assert plan.claim_error_at(4, improved) == pytest.approx(2 * share)
    assert plan.claim_error_at(5, improved) == pytest.approx(share)
    spendable = [k for k in range(3, 11) if improved(k) <= plan.claim_error_at(k, improved)]
    assert sum(plan.claim_error_at(k, improved) for k in spendable) <= 0.025 + 1e-12
    assert plan.confidence_at(4, improved) == pytest.approx(1 - 4 * share)
    # A fixed K, or a single look, reads 95% intervals.
    assert Repetitions(4).confidence_at(4) == 0.95
    assert Repetitions(None, 5, 5).confidence_at(5) == 0.95


def test_plans_refuse_impossible_bounds():
    with pytest.raises(ValueError, match="between 1 and 1000"):
        Repetitions(MAX_REPETITIONS + 1)
    with pytest.raises(ValueError, match="min_k <= max_k"):
        Repetitions(None, 5, 4)


# --- turns: a bound served in the order runs started -------------------------------------------


def test_turns_are_served_in_the_order_taken_however_long_each_prepares():
    async def main() -> list[str]:
        turns = Turns(1)
        served: list[str] = []
        prepared = {name: asyncio.Event() for name in "abc"}

        async def run(name: str) -> None:
            turn = turns.queue()  # as the run starts
            await prepared[name].wait()  # preparing, beside the others
            async with turn:
                served.append(name)
                await asyncio.sleep(0)

        tasks = [asyncio.ensure_future(run(name)) for name in "abc"]
        for name in "cba":  # the last to start is ready first
            prepared[name].set()
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        return served

    assert asyncio.run(main()) == ["a", "b", "c"]


def test_a_process_line_bounds_each_loop_and_calls_its_first_start_hook_once():
    calls: list[str] = []
    line = ProcessLine(1, on_first_start=lambda: calls.append("first"))

    async def two_places() -> list[bool]:
        first, second = line.place(), line.place()
        assert first is not None and second is not None
        async with first:
            line.first_start()
            line.first_start()  # a later process starting calls nothing
            waiting = asyncio.ensure_future(second.__aenter__())
            await asyncio.sleep(0)
            blocked = not waiting.done()  # one process at once
        await waiting
        second.release()
        return [blocked, waiting.done()]

    assert asyncio.run(two_places()) == [True, True]
    assert asyncio.run(two_places()) == [True, True]  # a new loop gets a line of its own
    assert calls == ["first"]

    unbounded = ProcessLine(None)

    async def place() -> object:
        return unbounded.place()

    assert asyncio.run(place()) is None
    unbounded.first_start()  # no hook: nothing to call


def test_a_place_given_up_or_cancelled_holds_no_one_back():
    async def main() -> list[str]:
        turns = Turns(1)
        served: list[str] = []
        held = turns.queue()
        gone = turns.queue()  # a run that ends before its turn (its setup failed)
        cancelled = turns.queue()
        last = turns.queue()
        await held.__aenter__()
        waiting = asyncio.ensure_future(cancelled.__aenter__())
        await asyncio.sleep(0)
        waiting.cancel()
        gone.release()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        later = asyncio.ensure_future(last.__aenter__())
        await asyncio.sleep(0)
        served.append("held")
        held.release()
        await later
        served.append("last")
        last.release()
        return served

    assert asyncio.run(asyncio.wait_for(main(), 60)) == ["held", "last"]


def test_a_layer_may_judge_and_finish_off_the_event_loop():
    """``decided`` and ``finished`` may be coroutine functions (a layer judges in a thread):
    the rounds go on as with plain functions, skipped scenarios included."""
    adaptive = plan_for("auto", None)
    judged: list[int] = []
    finished: dict[str, int] = {}

    async def run(item, arm, rep):
        await asyncio.sleep(0)
        return rep

    async def decided(item, records, k):
        await asyncio.sleep(0)
        judged.append(k)
        return k >= 3

    async def done(item, records, k):
        await asyncio.sleep(0)
        finished[item] = k

    planned = [
        Planned("a", adaptive, ("with", "without")),
        Planned("b", adaptive, ("w",), skip=True),
    ]
    asyncio.run(run_rounds(planned, workers=4, run=run, decided=decided, finished=done))
    assert finished == {"a": 3, "b": 0}
    assert judged[-1] == 3
