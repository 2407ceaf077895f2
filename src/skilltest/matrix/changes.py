"""What changed between two matrices (``skilltest compare OLD.json NEW.json`` on matrices' files):
each cell the two share compared as two single runs are (:func:`skilltest.report.compare.compare`),
and the cells only one of them ran. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from skilltest.errors import InputError
from skilltest.report.compare import Comparison, compare, render_markdown, render_text, to_dict

SCHEMA_VERSION = 1
"""Version of ``skilltest compare --json`` on matrices."""


@dataclass(frozen=True)
class MatrixChanges:
    """Two matrices compared cell by cell."""

    cells: tuple[tuple[str, Comparison], ...]
    """Each cell both ran, in the new matrix's order, with its comparison."""
    added: tuple[str, ...]
    """Cells only the new matrix ran."""
    vanished: tuple[str, ...]
    """Cells only the old matrix ran."""

    def to_dict(self) -> dict[str, Any]:
        """``skilltest compare --json``."""
        return {
            "schema_version": SCHEMA_VERSION,
            "cells": [{"id": cell_id, **to_dict(found)} for cell_id, found in self.cells],
            "added": list(self.added),
            "vanished": list(self.vanished),
        }

    def render(self, *, markdown: bool = False) -> str:
        """The comparison of each cell, under its id; then the cells one matrix lacks."""
        lines = []
        for cell_id, found in self.cells:
            body = render_markdown(found) if markdown else render_text(found)
            lines += [f"## cell {cell_id}" if markdown else f"cell {cell_id}", "", body, ""]
        lines += [f"new cell: {cell_id}" for cell_id in self.added]
        lines += [f"vanished cell: {cell_id}" for cell_id in self.vanished]
        return "\n".join(lines).rstrip("\n") + "\n"


def compare_matrices(
    old: Mapping[str, Any], new: Mapping[str, Any], *, old_name: str, new_name: str
) -> MatrixChanges:
    """Compares two matrices' results documents, cell by cell.

    Raises:
        InputError: of different layers, or a cell that is not a results document.
    """
    if old.get("layer") != new.get("layer"):
        raise InputError(
            f"{old_name} holds a {old.get('layer')} matrix and {new_name} a {new.get('layer')} one",
            location=new_name,
            fix="compare two matrices of the same layer",
        )
    before = {str(cell["id"]): cell for cell in old.get("cells") or []}
    after = [(str(cell["id"]), cell) for cell in new.get("cells") or []]
    cells = tuple(
        (
            cell_id,
            compare(
                before[cell_id]["results"],
                cell["results"],
                old_name=f"{old_name} [{cell_id}]",
                new_name=f"{new_name} [{cell_id}]",
            ),
        )
        for cell_id, cell in after
        if cell_id in before
    )
    ids = {cell_id for cell_id, _ in after}
    return MatrixChanges(
        cells,
        tuple(cell_id for cell_id, _ in after if cell_id not in before),
        tuple(cell_id for cell_id in before if cell_id not in ids),
    )
