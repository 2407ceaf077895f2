"""Running a matrix: each cell through its layer's own ``run(options)``, the results saved as
each cell finishes.

Cells run one after another, each with the options :func:`skilltest.matrix.plan.cell_options`
gives it; within a cell, the layer schedules its runs as it always does (arms interleaved, -k
auto deciding each scenario in that cell alone). After each cell the matrix's results file
holds every finished cell; an interrupt keeps what the interrupted cell had finished too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skilltest.cost.budget import Budget
from skilltest.cost.render import SuiteEstimate
from skilltest.flow.options import BatchProgress, Observer, RunOptions
from skilltest.matrix.axes import CLAUDE, Axis, Cell
from skilltest.matrix.plan import cell_options, plan_matrix
from skilltest.matrix.results import CellResults, MatrixResults, write_matrix_outputs


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


AGENT_LAYERS = frozenset({"scenarios"})
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
    claude = claude_of(plan.axes)
    done: list[CellResults] = []
    spending = Spending(options.max_cost_usd)
    if options.max_cost_usd is not None:
        for cell, estimates in _estimates(module, base, plan.cells, claude):
            spending.weigh(cell, sum(each.most.usd for each in estimates))
    shard = None if options.shard is None else (options.shard.index, options.shard.count)
    results = MatrixResults(layer, plan, (), complete=False, shard=shard)
    write_matrix_outputs(results, options.outputs, final=False)
    for number, cell in enumerate(plan.cells, 1):
        observer.notice(f"skilltest: cell {number} of {len(plan.cells)}: {cell.id}")
        watch = _CellObserver(observer)
        budget = spending.share(cell, left=plan.cells[number - 1 :])
        ran = cell_options(base, cell, claude)
        if budget is not None:
            ran = dataclasses.replace(ran, max_cost_usd=budget.limit_usd, budget=budget)
        try:
            cell_results = module.run(ran, observer=watch)
        except KeyboardInterrupt:
            if watch.partial is not None:
                done.append(CellResults(cell, watch.partial))
            results = MatrixResults(
                layer,
                plan,
                tuple(done),
                complete=False,
                interrupted=True,
                shard=shard,
                spent=spending.spent(),
            )
            write_matrix_outputs(results, options.outputs, final=True)
            observer.interrupted(results)
            raise
        spending.add(budget)
        done.append(CellResults(cell, cell_results))
        last = number == len(plan.cells)
        results = MatrixResults(
            layer, plan, tuple(done), complete=last, shard=shard, spent=spending.spent()
        )
        write_matrix_outputs(results, options.outputs, final=last)
    return results


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
    """``--max-cost-usd`` over a whole matrix. Each cell may spend what the cells before it
    left, in proportion to its estimated cost among the cells still to run (a cell of a model
    priced five times higher gets five times the dollars), so a stopped matrix leaves every
    cell with about the same share of its runs; what a cell did not spend goes to the cells
    after it."""

    def __init__(self, limit_usd: float | None) -> None:
        self.limit_usd = limit_usd
        self.spent_usd = 0.0
        self.stopped: list[str] = []
        self.refused: str | None = None
        self.weights: dict[str, float] = {}

    def weigh(self, cell: Cell, estimate_usd: float) -> None:
        """Records ``cell``'s estimated cost (``--dry-run``'s most)."""
        self.weights[cell.id] = estimate_usd

    def share(self, cell: Cell, *, left: Sequence[Cell]) -> Budget | None:
        """The budget of ``cell``'s run, ``left`` being it and the cells after it; ``None``
        without a limit."""
        if self.limit_usd is None:
            return None
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
            self.stopped.append(str(budget.named).split("'s share", 1)[0])
            self.refused = self.refused or str(stopped["reason"])

    def spent(self) -> dict[str, object] | None:
        """The matrix's ``spending``: the limit, what every cell spent, and the cells the
        limit stopped; ``None`` without a limit."""
        if self.limit_usd is None:
            return None
        return {
            "limit_usd": self.limit_usd,
            "spent_usd": round(self.spent_usd, 6),
            "stopped_cells": list(self.stopped),
            "reason": self.refused,
        }
