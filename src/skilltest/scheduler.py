"""Runs many scenarios' repetitions with at most N runs in flight, lazily, round by round.

Both layers hand their scenarios to :func:`run_rounds`. Nothing is created ahead of time: a fixed
number of workers take the next run when they are free, so memory does not grow with the number
of runs a suite asks for and Ctrl-C (or SIGTERM) reaches the event loop at once.

A scenario runs in rounds. The first round is the plan's first K repetitions per arm, issued
repetition by repetition with the arms alternating (with, without, with, ...) so that drift in
the backend over the suite's wall time affects both arms alike. When a round's last run has
finished, an adaptive plan looks at the scenario (``decided``); if the verdict is not decided
yet and the plan allows more, the next round is one more repetition per arm. A finished scenario
is handed to ``finished`` at once, which is when results files are rewritten.

Workers prefer runs of scenarios that are already under way (oldest first), so scenarios finish
in about the order they were planned and few are open at a time.

A run that raises (bad input found part way, such as a cassette that cannot be read) stops the
suite: the other workers' runs are cancelled, and waited for, before the error reaches the caller
(:func:`run_workers`). Their claude processes are stopped and their servers closed by their own
cleanup, while the event loop still runs it.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from skilltest.repetitions import Repetitions

Item = TypeVar("Item")
"""What a layer plans (a scenario of a suite)."""
Record = TypeVar("Record")
"""What one run gives (a judged or scored run)."""
_T = TypeVar("_T")


@dataclass
class _Open(Generic[Item, Record]):
    """A scenario under way."""

    item: Item
    plan: Repetitions
    arms: tuple[str, ...]
    target: int
    """Repetitions per arm issued in the current round, when all are issued."""
    issued: int = 0
    """Runs of the current round handed out so far, rounds before it not counted."""
    done_before: int = 0
    """Repetitions per arm of the rounds before the current one."""
    in_flight: int = 0
    records: list[Record] = field(default_factory=list)

    def pending(self) -> bool:
        """Whether runs of the current round are still to be handed out."""
        return self.issued < (self.target - self.done_before) * len(self.arms)

    def next_run(self) -> tuple[int, str] | None:
        """The next (repetition, arm) of the current round, or ``None`` when all are out."""
        if not self.pending():
            return None
        rep = self.done_before + self.issued // len(self.arms)
        arm = self.arms[self.issued % len(self.arms)]
        self.issued += 1
        self.in_flight += 1
        return rep, arm


@dataclass(frozen=True)
class Planned(Generic[Item]):
    """One scenario to run: what it is, its repetition plan and its arms."""

    item: Item
    """The layer's scenario."""
    plan: Repetitions
    """How many repetitions."""
    arms: tuple[str, ...]
    """The arms that run, in the order each repetition runs them."""
    skip: bool = False
    """A skipped scenario runs nothing and is finished at once."""


async def run_rounds(
    planned: Sequence[Planned[Item]],
    *,
    workers: int,
    run: Callable[[Item, str, int], Awaitable[Record]],
    decided: Callable[[Item, Sequence[Record], int], bool | Awaitable[bool]],
    finished: Callable[[Item, list[Record], int], Awaitable[None] | None],
    started: Callable[[Item, Record], None] | None = None,
    admit: Callable[[Item, str, int], bool] | None = None,
) -> None:
    """Runs every planned scenario to the end of its plan.

    Args:
        planned: The scenarios, in the order they should start.
        workers: Runs in flight at once.
        run: Runs one (scenario, arm, repetition counted from 0) and returns its record; it
            must not raise for a failed run (a failure is a record).
        decided: Whether a scenario's verdict is decided after K repetitions per arm (asked
            only of adaptive plans, after each round); a coroutine function is awaited, so a
            layer can judge off the event loop while the other workers' runs go on.
        finished: Called once per scenario with all its records and the K it took (awaited
            when it returns an awaitable).
        started: Called with each record as soon as its run ends (progress, partial results).
        admit: Asked before each run starts (a budget); once it says no, no run starts any
            more: the runs in flight finish, and a scenario whose plan is not through is not
            ``finished``.
    """
    queue: Iterator[Planned[Item]] = iter(planned)
    open_scenarios: list[_Open[Item, Record]] = []
    wake = asyncio.Condition()
    exhausted = False
    halted = False
    deciding = 0
    """Scenarios whose round is being judged (``decided`` awaited): more runs may follow."""
    skipped: list[Item] = []
    """Skipped scenarios taken from the queue, to be handed to ``finished``."""

    def take() -> tuple[_Open[Item, Record], int, str] | None:
        nonlocal exhausted
        if halted:
            return None
        for scenario in open_scenarios:
            step = scenario.next_run()
            if step is not None:
                return scenario, *step
        while not exhausted:
            entry = next(queue, None)
            if entry is None:
                exhausted = True
                break
            if entry.skip:
                skipped.append(entry.item)
                continue
            scenario = _Open(entry.item, entry.plan, entry.arms, target=entry.plan.first)
            open_scenarios.append(scenario)
            step = scenario.next_run()
            if step is not None:
                return scenario, *step
        return None

    def busy() -> bool:
        return deciding > 0 or any(s.in_flight for s in open_scenarios)

    async def complete(scenario: _Open[Item, Record], record: Record) -> None:
        nonlocal deciding
        scenario.records.append(record)
        scenario.in_flight -= 1
        if started is not None:
            started(scenario.item, record)
        if scenario.in_flight or scenario.pending():
            return
        k = scenario.target
        more = scenario.plan.more_after(k)
        if more:
            deciding += 1
            try:
                more = not await _value(decided(scenario.item, scenario.records, k))
            finally:
                deciding -= 1
        if more:
            if halted:
                return  # undecided, and no more runs start: the scenario is not through
            scenario.done_before, scenario.issued = k, 0
            scenario.target = k + 1
        else:
            open_scenarios.remove(scenario)
            await _value(finished(scenario.item, scenario.records, k))
        async with wake:
            wake.notify_all()

    async def worker() -> None:
        nonlocal halted
        while True:
            step = take()
            while skipped:
                await _value(finished(skipped.pop(0), [], 0))
            if step is None:
                if halted or (not busy() and exhausted):
                    async with wake:
                        wake.notify_all()
                    return
                async with wake:
                    await wake.wait()
                continue
            scenario, rep, arm = step
            if admit is not None and not admit(scenario.item, arm, rep):
                scenario.issued -= 1  # the run was not made
                scenario.in_flight -= 1
                halted = True
                async with wake:
                    wake.notify_all()
                return
            record = await run(scenario.item, arm, rep)
            await complete(scenario, record)

    most = sum(entry.plan.most * len(entry.arms) for entry in planned if not entry.skip)
    await run_workers(worker, jobs=workers, runs=most)


async def _value(result: _T | Awaitable[_T]) -> _T:
    """A callback's result, awaited when it is awaitable."""
    if inspect.isawaitable(result):
        return await result
    return result


async def run_workers(
    worker: Callable[[], Coroutine[Any, Any, None]], *, jobs: int, runs: int
) -> None:
    """Runs ``jobs`` workers side by side to their end, but never more than ``runs`` (the runs
    there are to make) nor fewer than one; when one raises, the others are cancelled and waited
    for before its exception propagates.

    A worker more than there are runs has nothing to do but wake at every finished run: ``-j
    100000`` on a suite of ten runs starts ten workers, and ends as soon as ``-j 10`` would.

    ``asyncio.gather`` alone leaves the others running: their runs then belong to nobody, and
    are torn down only when ``asyncio.run`` cancels every task at once, asyncio's own included.
    A run cancelled that way while its claude process is being started waits for ever for the
    process to be reported gone, and the command never exits.

    Raises:
        Exception: the first exception a worker raised (``CancelledError`` when the caller was
            cancelled, after the workers were).
    """
    tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, min(jobs, runs)))]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        # Done tasks ignore the cancel; the others unwind (processes stopped, servers closed).
        await asyncio.gather(*tasks, return_exceptions=True)


class Turns:
    """At most ``size`` holders at once, served in the order they queued.

    A run queues as it starts (:meth:`queue`), prepares what it can beside the others, then
    waits for its turn (``async with`` the :class:`Turn`): runs take their turns in the order
    they were started, however long each took to prepare.
    """

    def __init__(self, size: int) -> None:
        """
        Args:
            size: How many may hold a turn at once (at least 1).
        """
        self.size = max(1, size)
        self.held = 0
        self.waiting: collections.deque[Turn] = collections.deque()

    def queue(self) -> Turn:
        """A place in the line, taken now."""
        turn = Turn(self)
        self.waiting.append(turn)
        return turn

    def _grant(self) -> None:
        while self.held < self.size and self.waiting and self.waiting[0].ready:
            turn = self.waiting.popleft()
            self.held += 1
            turn.holding = True
            turn.granted.set()


class Turn:
    """One place in the line of a :class:`Turns`: waited for with ``async with``, given back by
    :meth:`release` (or the end of the block, whichever comes first)."""

    def __init__(self, turns: Turns) -> None:
        self.turns = turns
        self.ready = False
        """Whether it waits for its turn now (a place ahead that is not ready holds the rest)."""
        self.holding = False
        self.granted = asyncio.Event()

    async def __aenter__(self) -> Turn:
        self.ready = True
        self.turns._grant()
        try:
            await self.granted.wait()
        except BaseException:
            self.release()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        """Gives the turn back, or the place in the line if it was not served yet (once; later
        calls do nothing)."""
        turns = self.turns
        if self.holding:
            self.holding = False
            turns.held -= 1
        elif self in turns.waiting:
            turns.waiting.remove(self)
        else:
            return
        turns._grant()


class ProcessLine:
    """The line an agent runner's processes wait in (``-j``), one per event loop, and the hook
    called once the first of them has started.

    Claude Code's runner and the other agents' runner share it: a run takes its place as it
    starts (:meth:`place`), so that processes start in the order the runs did however long each
    took to prepare, and the first process to start calls :attr:`on_first_start` (what the
    command does beside its runs, such as importing what its judges need)."""

    def __init__(
        self, processes: int | None, on_first_start: Callable[[], object] | None = None
    ) -> None:
        """
        Args:
            processes: The most processes at once; ``None``: no bound (each run takes a process
                as it comes).
            on_first_start: Called once, when the first process has started.
        """
        self.processes = processes
        self.on_first_start = on_first_start
        self._turns: dict[object, Turns] = {}

    def place(self) -> Turn | None:
        """A place in the line, taken now on the running loop (a wiring check runs on a loop of
        its own); ``None`` without a bound."""
        if self.processes is None:
            return None
        loop = asyncio.get_running_loop()
        if loop not in self._turns:
            self._turns = {loop: Turns(self.processes)}
        return self._turns[loop].queue()

    def first_start(self) -> None:
        """Calls :attr:`on_first_start` the first time a process has started (later calls do
        nothing)."""
        started, self.on_first_start = self.on_first_start, None
        if started is not None:
            started()
