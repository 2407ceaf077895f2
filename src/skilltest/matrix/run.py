"""Running a matrix: each cell through its layer's own ``run(options)``, the cells side by side.

Every cell runs at once, each in a thread of its own with the options
:func:`skilltest.matrix.plan.cell_options` gives it and a share of ``--jobs`` (at least one
process each); within a cell, the layer schedules its runs as it always does (arms interleaved,
-k auto deciding each scenario in that cell alone). So the cells' runs are interleaved: a
matrix stopped half way (Ctrl-C, SIGTERM) leaves every cell with about the same share of its
runs, as ``--max-cost-usd`` does by giving each cell a share of the dollars. The stop signal
reaches the main thread, which stops every cell's run (:func:`skilltest.flow.loop.stop_runs`);
each keeps what it had finished, and the results file holds every cell, marked interrupted.
After each cell finishes the results file holds every finished cell.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.cost.budget import Budget
from skilltest.cost.render import SuiteEstimate
from skilltest.flow.options import BatchProgress, Observer, RunOptions
from skilltest.matrix.axes import CLAUDE, Axis, Cell
from skilltest.matrix.plan import cell_options, plan_matrix
from skilltest.matrix.results import CellResults, MatrixResults, write_matrix_outputs


class _SharedProgress(Observer):
    """The matrix's observer as every cell's run shows to it at once: one count of runs over
    every cell (each cell's runs added as it starts), closed when the last cell's runs end."""

    def __init__(self, outer: Observer) -> None:
        self.outer = outer
        self.lock = threading.Lock()
        self.total = 0
        self.ended: list[bool] = []
        self.running = 0

    def notice(self, text: str) -> None:
        with self.lock:
            self.outer.notice(text)

    def started(self, runs: int) -> None:
        with self.lock:
            self.total += runs
            self.running += 1
            self.outer.started(self.total)
            for error in self.ended:
                self.outer.run_finished(error=error)

    def run_finished(self, *, error: bool) -> None:
        with self.lock:
            self.ended.append(error)
            self.outer.run_finished(error=error)

    def batch_polled(self, progress: BatchProgress) -> None:
        with self.lock:
            self.outer.batch_polled(progress)

    def stopped(self) -> None:
        with self.lock:
            self.running -= 1
            if self.running <= 0:
                self.outer.stopped()


class _CellObserver(Observer):
    """What a cell's run shows: everything passed on to the matrix's observer, except the
    interrupted cell's results, which the matrix keeps."""

    def __init__(self, outer: Observer) -> None:
        self.outer = outer
        self.partial: Any = None

    def notice(self, text: str) -> None:
        self.outer.notice(text)

    def started(self, runs: int) -> None:
        self.outer.started(runs)

    def run_finished(self, *, error: bool) -> None:
        self.outer.run_finished(error=error)

    def batch_polled(self, progress: BatchProgress) -> None:
        self.outer.batch_polled(progress)

    def stopped(self) -> None:
        self.outer.stopped()

    def interrupted(self, results: Any) -> None:
        self.partial = results


def _layer_of(options: RunOptions) -> tuple[str, Any]:
    """The layer whose options these are, and its module."""
    from skilltest import pressure, scenarios, triggers

    if isinstance(options, pressure.PressureOptions):
        return "pressure", pressure
    if isinstance(options, scenarios.ScenarioOptions):
        return "scenarios", scenarios
    if isinstance(options, triggers.TriggerOptions):
        return "triggers", triggers
    raise TypeError(f"a matrix runs a layer's options, not {type(options).__name__}")


AGENT_LAYERS = frozenset({"scenarios", "triggers"})
"""The layers whose runs go through an agent other than Claude Code (``--agents``)."""

KEPT_BY_DEFAULT = {"scenarios": Path("output"), "triggers": Path("output")}
"""Where a layer that keeps every run's transcript keeps a matrix's when ``output_dir`` is not
given: under this folder, in each cell's folder (``output/model-haiku/<skill>/...``)."""


def run(options: RunOptions, axes: Sequence[Axis], *, observer: Observer | None = None) -> Any:
    """Runs every scenario of ``options`` in every cell of ``axes``.

    Args:
        options: A layer's options (``PressureOptions``, ``ScenarioOptions``); their
            ``outputs`` are the matrix's (one results file for every cell).
        axes: What the matrix spans (``Axis("model", ("haiku", "opus"))``).
        observer: Sees notices and each finished run of every cell.

    Returns:
        The :class:`~skilltest.matrix.results.MatrixResults`; the outputs asked for are written.

    Raises:
        InputError: bad input (an axis, an option a matrix cannot take, a suite), before the
            first model call of the cell that meets it.
        KeyboardInterrupt: the matrix was interrupted; what had finished is written, marked so.
    """
    import dataclasses

    observer = observer or Observer()
    layer, module = _layer_of(options)
    plan = plan_matrix(options, axes, baseline=layer != "triggers", agents=layer in AGENT_LAYERS)
    base = options
    if layer in KEPT_BY_DEFAULT and options.output_dir is None:
        base = dataclasses.replace(options, output_dir=KEPT_BY_DEFAULT[layer])
    base = dataclasses.replace(base, jobs=max(1, options.jobs // len(plan.cells)))
    claude = claude_of(plan.axes)
    spending = Spending(options.max_cost_usd)
    if options.max_cost_usd is not None:
        for cell, estimates in _estimates(module, base, plan.cells, claude):
            spending.weigh(cell, sum(each.most.usd for each in estimates))
    shard = None if options.shard is None else (options.shard.index, options.shard.count)
    results = MatrixResults(layer, plan, (), complete=False, shard=shard)
    write_matrix_outputs(results, options.outputs, final=False)
    shared = _SharedProgress(observer)
    cells = []
    for number, cell in enumerate(plan.cells, 1):
        observer.notice(f"skilltest: cell {number} of {len(plan.cells)}: {cell.id}")
        budget = spending.share(cell, left=plan.cells)
        ran = cell_options(base, cell, claude)
        if budget is not None:
            ran = dataclasses.replace(ran, max_cost_usd=budget.limit_usd, budget=budget)
        cells.append(_Cell(cell, ran, budget, _CellObserver(shared)))
    done: dict[str, CellResults] = {}

    def finished(complete: bool = False, interrupted: bool = False) -> MatrixResults:
        kept = tuple(done[cell.id] for cell in plan.cells if cell.id in done)
        return MatrixResults(
            layer,
            plan,
            kept,
            complete=complete,
            interrupted=interrupted,
            shard=shard,
            spent=spending.spent(),
        )

    def cell_finished(each: _Cell) -> None:
        spending.add(each.budget)
        done[each.cell.id] = CellResults(each.cell, each.results)
        if len(done) < len(cells):  # the last one is written with the matrix's end
            write_matrix_outputs(finished(), options.outputs, final=False)

    outcome = _run_side_by_side(module, cells, cell_finished)
    for each in cells:
        if each.results is not None:
            if each.cell.id not in done:
                cell_finished(each)
        elif each.watch.partial is not None:
            done[each.cell.id] = CellResults(each.cell, each.watch.partial)
    if isinstance(outcome, KeyboardInterrupt):
        results = finished(interrupted=True)
        write_matrix_outputs(results, options.outputs, final=True)
        observer.interrupted(results)
        raise outcome
    if outcome is not None:
        write_matrix_outputs(finished(), options.outputs, final=False)
        raise outcome
    results = finished(complete=True)
    write_matrix_outputs(results, options.outputs, final=True)
    return results


@dataclass
class _Cell:
    """One cell's run, side by side with the others."""

    cell: Cell
    options: Any
    budget: Budget | None
    watch: _CellObserver
    results: Any = None
    error: BaseException | None = None


def _run_side_by_side(
    module: Any, cells: Sequence[_Cell], cell_finished: Callable[[_Cell], None]
) -> BaseException | None:
    """Runs every cell at once, each in a thread of its own, calling ``cell_finished`` (in
    this thread) with each cell whose run finished; returns what stopped the matrix: the stop
    signal (a ``KeyboardInterrupt``, every cell stopped and unwound), the first cell's error
    (the other cells stopped), or ``None`` when every cell finished."""
    import concurrent.futures
    import signal

    from skilltest.flow.loop import runs_may_start, stop_runs, stop_signals_raise

    def one(each: _Cell) -> None:
        try:
            each.results = module.run(each.options, observer=each.watch)
        except BaseException as exc:  # kept for the main thread, which raises it
            each.error = exc

    stopped: BaseException | None = None
    with (
        stop_signals_raise(),
        concurrent.futures.ThreadPoolExecutor(
            len(cells), thread_name_prefix="skilltest-cell"
        ) as pool,
    ):
        futures = {pool.submit(one, each): each for each in cells}
        pending = set(futures)
        while pending:
            try:
                ended, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED
                )
                for future in ended:
                    if futures[future].results is not None:
                        cell_finished(futures[future])
            except KeyboardInterrupt as exc:
                # Again on a second signal: the cells' children are then killed without a grace.
                stopped = exc
                stop_runs(getattr(exc, "signum", signal.SIGINT))
                continue
            failed = next((e.error for e in cells if e.error is not None and stopped is None), None)
            if failed is not None and not isinstance(failed, KeyboardInterrupt):
                stopped = failed
                stop_runs(signal.SIGINT, received=False)
        runs_may_start()
    return stopped


def estimate(
    options: RunOptions, axes: Sequence[Axis]
) -> list[tuple[Cell, Sequence[SuiteEstimate]]]:
    """What each cell of the matrix would make and cost, without calling anything
    (``--dry-run``: the layer's own estimate of each cell's run).

    Raises:
        InputError: bad input (an axis, an option a matrix cannot take, a suite).
    """
    layer, module = _layer_of(options)
    plan = plan_matrix(options, axes, baseline=layer != "triggers", agents=layer in AGENT_LAYERS)
    return _estimates(module, options, plan.cells, None)


def claude_of(axes: Sequence[Axis]) -> dict[str, Path]:
    """The ``claude`` of each version the matrix's ``claude`` axis names (none without one).

    Raises:
        InputError: a version that is not installed, naming it and the install command.
    """
    from skilltest.claude.binary import installed_claude

    versions = [value for axis in axes if axis.name == CLAUDE for value in axis.values]
    return {version: installed_claude(version) for version in versions}


def _estimates(
    module: Any, options: RunOptions, cells: Sequence[Cell], claude: dict[str, Path] | None
) -> list[tuple[Cell, Sequence[SuiteEstimate]]]:
    return [(cell, module.estimate(cell_options(options, cell, claude))) for cell in cells]


class Spending:
    """``--max-cost-usd`` over a whole matrix. Each cell may spend a share of what the cells
    named in ``left`` have not spent, in proportion to its estimated cost among them (a cell of
    a model priced five times higher gets five times the dollars), so a stopped matrix leaves
    every cell with about the same share of its runs. The cells running side by side, each
    gets its share of the whole limit at the start."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.reasons: dict[str, str] = {}
        self.order: list[str] = []
        self.weights: dict[str, float] = {}

    def weigh(self, cell: Cell, estimate_usd: float) -> None:
        """Records ``cell``'s estimated cost (``--dry-run``'s most)."""
        self.weights[cell.id] = estimate_usd

    def share(self, cell: Cell, *, left: Sequence[Cell]) -> Budget | None:
        """The budget of ``cell``'s run, ``left`` being it and the cells after it; ``None``
        without a limit."""
        if self.limit_usd is None:
            return None
        if cell.id not in self.order:
            self.order.append(cell.id)
        total = sum(self.weights.get(each.id, 1.0) for each in left)
        part = self.weights.get(cell.id, 1.0) / total if total > 0 else 1 / len(left)
        share = max(0.0, self.limit_usd - self.spent_usd) * part
        return Budget(
            share,
            named=f"{cell.id}'s share of --max-cost-usd {self.limit_usd:g} (${share:.4f})",
        )

    def add(self, budget: Budget | None) -> None:
        """A cell's run ended, having spent from ``budget``."""
        if budget is None:
            return
        self.spent_usd += budget.spent_usd
        stopped = budget.stopped()
        if stopped is not None:
            self.reasons[str(budget.named).split("'s share", 1)[0]] = str(stopped["reason"])

    @property
    def stopped(self) -> list[str]:
        """The cells the limit stopped, in the plan's order (whichever ended first)."""
        return [cell for cell in self.order if cell in self.reasons]

    def spent(self) -> dict[str, object] | None:
        """The matrix's ``spending``: the limit, what every cell spent, and the cells the
        limit stopped; ``None`` without a limit."""
        if self.limit_usd is None:
            return None
        return {
            "limit_usd": self.limit_usd,
            "spent_usd": round(self.spent_usd, 6),
            "stopped_cells": self.stopped,
            "reason": next((self.reasons[cell] for cell in self.stopped), None),
        }
