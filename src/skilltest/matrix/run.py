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

from skilltest.flow.options import BatchProgress, Observer, RunOptions
from skilltest.matrix.axes import Axis
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
    from skilltest import pressure, scenarios

    if isinstance(options, pressure.PressureOptions):
        return "pressure", pressure
    if isinstance(options, scenarios.ScenarioOptions):
        return "scenarios", scenarios
    raise TypeError(f"a matrix runs pressure or scenario options, not {type(options).__name__}")


KEPT_BY_DEFAULT = {"scenarios": Path("output")}
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
    plan = plan_matrix(options, axes)
    if options.outputs.html is not None:
        from skilltest.errors import InputError

        raise InputError(
            "the HTML report shows one run's results, not a matrix's",
            location="--report",
            fix="write --results and --markdown for a matrix, or run each cell with --model M "
            "and --report",
        )
    base = options
    if layer in KEPT_BY_DEFAULT and options.output_dir is None:
        base = dataclasses.replace(options, output_dir=KEPT_BY_DEFAULT[layer])
    done: list[CellResults] = []
    results = MatrixResults(layer, plan, (), complete=False)
    write_matrix_outputs(results, options.outputs, final=False)
    for number, cell in enumerate(plan.cells, 1):
        observer.notice(f"skilltest: cell {number} of {len(plan.cells)}: {cell.id}")
        watch = _CellObserver(observer)
        try:
            cell_results = module.run(cell_options(base, cell), observer=watch)
        except KeyboardInterrupt:
            if watch.partial is not None:
                done.append(CellResults(cell, watch.partial))
            results = MatrixResults(layer, plan, tuple(done), complete=False, interrupted=True)
            write_matrix_outputs(results, options.outputs, final=True)
            observer.interrupted(results)
            raise
        done.append(CellResults(cell, cell_results))
        last = number == len(plan.cells)
        results = MatrixResults(layer, plan, tuple(done), complete=last)
        write_matrix_outputs(results, options.outputs, final=last)
    return results
