"""A matrix's results: each cell's layer results, the plan, and the one results file.

The file (``--results`` with ``--models``) holds the plan (axes, cells, arms) and, under
``cells``, each cell's results document exactly as a single run of the layer writes it, so
everything that reads one run's results reads a cell's. Its ``schema_version`` is 4
(``matrix.schema.json``); :func:`read_matrix` reads it back and checks every cell's document
as a single run's file is checked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.files import read_json
from skilltest.limits import MAX_RESULTS_BYTES
from skilltest.matrix.axes import Cell
from skilltest.matrix.plan import MatrixPlan
from skilltest.report.files import (
    RESULTS_SCHEMA_VERSION,
    check_results_version,
    results_of_layer,
    write_results,
)
from skilltest.report.junit import JUnitCase
from skilltest.report.outputs import Outputs
from skilltest.suite.loader import validate


@dataclass(frozen=True)
class CellResults:
    """One cell's run."""

    cell: Cell
    """The cell."""
    results: Any
    """The layer's results of the cell's run (``PressureResults``, ``ScenarioResults``)."""

    @property
    def failed(self) -> bool:
        """A scenario of the cell fails its run, as the layer decides it alone."""
        results = self.results
        return bool(
            getattr(results, "failed", False)
            or getattr(results, "failing", False)
            or not getattr(results, "passed", True)  # the trigger layer's results
        )


@dataclass(frozen=True)
class MatrixResults:
    """A matrix's results, finished or not."""

    layer: str
    """``pressure`` or ``scenarios``."""
    plan: MatrixPlan
    """What the matrix runs."""
    cells: tuple[CellResults, ...]
    """The cells that ran (or were running when it was interrupted), in the plan's order."""
    complete: bool = True
    """Every cell's run finished."""
    interrupted: bool = False
    """The matrix was stopped (Ctrl-C, SIGTERM)."""
    shard: tuple[int, int] | None = None
    """``(i, n)``: every cell ran shard i of n of the scenarios (``--shard i/n``)."""
    spent: Mapping[str, Any] | None = None
    """With ``--max-cost-usd``: ``limit_usd``, ``spent_usd`` over every cell, the
    ``stopped_cells`` whose share ran out, and the first ``reason``; ``None`` without a limit."""

    @property
    def stopped(self) -> bool:
        """``--max-cost-usd`` stopped some cell before every run was made."""
        return bool(self.spent and self.spent.get("stopped_cells"))

    @property
    def junit_name(self) -> str:
        """The JUnit test suite's name (``skilltest pressure matrix``)."""
        return f"skilltest {self.layer} matrix"

    @property
    def failed(self) -> bool:
        """A scenario fails in some cell."""
        return any(cell.failed for cell in self.cells)

    def to_document(self) -> dict[str, Any]:
        """The results file: the plan, each cell's results document, and the comparisons
        across cells computed from them."""
        cells = [
            {
                "id": entry.cell.id,
                "values": entry.cell.to_dict(),
                "results": entry.results.to_document(),
            }
            for entry in self.cells
        ]
        return matrix_document(
            self.layer,
            self.plan.to_dict(),
            cells,
            complete=self.complete and len(self.cells) == len(self.plan.cells) and not self.stopped,
            interrupted=self.interrupted,
            spending=None if self.spent is None else dict(self.spent),
            shard=None if self.shard is None else {"index": self.shard[0], "count": self.shard[1]},
        )

    def junit_cases(self) -> list[JUnitCase]:
        """Each cell's cases, named ``scenario [cell]``."""
        return [
            dataclasses.replace(case, name=f"{case.name} [{entry.cell.id}]")
            for entry in self.cells
            for case in entry.results.junit_cases()
        ]


def matrix_document(
    layer: str,
    plan: Mapping[str, Any],
    cells: list[dict[str, Any]],
    *,
    complete: bool,
    interrupted: bool,
    spending: Mapping[str, Any] | None,
    shard: Mapping[str, int] | None,
) -> dict[str, Any]:
    """A matrix's results document from its plan and its cells' documents, with the
    comparisons across cells computed from them (what a run writes, and what ``skilltest
    merge`` writes from the shards of one)."""
    from skilltest.matrix.compare import compare_lifts, compare_versions

    return {
        "schema_version": RESULTS_SCHEMA_VERSION,
        "layer": layer,
        "complete": complete,
        "interrupted": interrupted,
        "spending": None if spending is None else dict(spending),
        "shard": None if shard is None else dict(shard),
        "matrix": dict(plan),
        "cells": cells,
        "comparisons": [found.to_dict() for found in compare_lifts(layer, cells)],
        "versions": [found.to_dict() for found in compare_versions(layer, cells)],
    }


def is_matrix_file(path: Path) -> bool:
    """Whether ``path`` holds a matrix's results (a JSON object with ``cells``); ``False`` for
    anything else, which the readers of one run's results then judge."""
    try:
        data = read_json(path, limit=MAX_RESULTS_BYTES, what="the results file")
    except InputError:
        return False
    return isinstance(data, dict) and "cells" in data


def write_matrix_outputs(results: MatrixResults, outputs: Outputs, *, final: bool) -> None:
    """Writes what ``outputs`` asks for from a matrix's results: the results file and the
    JUnit XML each time, the Markdown summary once ``final``.

    Raises:
        InputError: a file cannot be written, naming it.
    """
    from skilltest.report.junit import provenance_properties, write_junit
    from skilltest.report.provenance import provenance_of

    document = results.to_document()
    if outputs.results is not None:
        write_results(outputs.results, document)
    if outputs.junit is not None:
        properties = []
        for cell in document["cells"]:
            said = provenance_properties(provenance_of(cell["results"]))
            properties += [(f"{cell['id']} {name}", value) for name, value in said]
        write_junit(outputs.junit, results.junit_name, results.junit_cases(), properties)
    if final and outputs.html is not None:
        from skilltest.matrix.html import write_matrix_html

        write_matrix_html(document, outputs.html, cwd=Path.cwd())
    if final and (outputs.markdown is not None or outputs.step_summary is not None):
        from skilltest.matrix.report import render_markdown
        from skilltest.report.files import write_report
        from skilltest.report.markdown import append_to_step_summary

        text = render_markdown(document)
        if outputs.markdown is not None:
            write_report(outputs.markdown, text)
        elif outputs.step_summary is not None:
            append_to_step_summary(str(outputs.step_summary), text)


def read_matrix(path: Path) -> dict[str, Any]:
    """Reads a matrix's results file back, checking its schema and every cell's document.

    Raises:
        InputError: not JSON, not a matrix's results file, a schema version this skilltest
            does not read, or a cell's document that is not a valid results document.
    """
    data = read_json(
        path,
        limit=MAX_RESULTS_BYTES,
        what="the results file",
        missing="no such results file",
        fix="pass a file written by --results with --models",
    )
    if not isinstance(data, dict) or "cells" not in data:
        raise InputError(
            "not a matrix's results file (no `cells`)",
            location=str(path),
            fix="pass a file written by --results with --models",
        )
    check_results_version(path, data)
    validate(data, "matrix", path, InputError, numbers="a results file can hold")
    for index, cell in enumerate(data["cells"]):
        results_of_layer(f"{path}#/cells/{index}/results", cell["results"], str(data["layer"]))
    return data
