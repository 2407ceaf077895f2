"""One suite across several values of an axis (models): a matrix of cells, each run by its
layer as a suite is run today, read side by side.

    from skilltest import PressureOptions
    from skilltest.matrix import Axis, run

    results = run(PressureOptions(suites=(Path("tests/skill-pressure/lgtm.yaml"),)),
                  [Axis("model", ("claude-haiku-4-5", "claude-opus-4-5"))])
"""

from skilltest.matrix.axes import Axis, Cell, axis_values, cells_of
from skilltest.matrix.plan import MatrixPlan, cell_options, plan_matrix
from skilltest.matrix.results import CellResults, MatrixResults, read_matrix
from skilltest.matrix.run import estimate, run

__all__ = [
    "Axis",
    "Cell",
    "CellResults",
    "MatrixPlan",
    "MatrixResults",
    "axis_values",
    "cell_options",
    "cells_of",
    "estimate",
    "plan_matrix",
    "read_matrix",
    "run",
]
