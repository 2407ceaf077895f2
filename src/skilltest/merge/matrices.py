"""The shards of one matrix (``--models``/``--claude-versions`` with ``--shard i/n``) as the one
results file the matrix would have written unsharded.

Every cell of a sharded matrix ran the same shard of the scenarios, so each cell's documents
across the shards are the shards of one run: they are checked and merged exactly as a single
run's shards are (:func:`skilltest.merge.shards.check`, :func:`skilltest.merge.shards.merge`),
cell by cell, and the comparisons across cells are computed again from the merged cells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.matrix.results import matrix_document, read_matrix
from skilltest.merge.shards import ShardFile, check, merge


def merge_matrices(paths: Sequence[Path], *, command: Sequence[str] = ()) -> dict[str, Any]:
    """One matrix results document from its shards' files.

    Raises:
        InputError: a file that is not a sharded matrix's results, matrices of different
            plans, or cells whose shards do not make one run; each names the file and place.
    """
    documents = [(str(path), read_matrix(path)) for path in paths]
    first_path, first = documents[0]
    for path, document in documents:
        if not document.get("shard"):
            raise InputError(
                "not the results of a shard (no `shard`: the matrix had no --shard i/n)",
                location=f"{path}#/shard",
                fix="merge the results files of the matrices run with --shard 1/N ... N/N",
            )
        for key in ("layer", "matrix"):
            if document.get(key) != first.get(key):
                raise InputError(
                    f"`{key}` differs from {first_path}'s: not shards of one matrix",
                    location=f"{path}#/{key}",
                    fix="merge the shards of one matrix (the same --models, --claude-versions "
                    "and options)",
                )
    cells = []
    for place, cell_id in enumerate(first["matrix"]["cells"]):
        files = []
        for path, document in documents:
            cell = _cell(document, cell_id)
            if cell is None:
                raise InputError(
                    f"cell {cell_id} did not run in this shard (the matrix was interrupted "
                    "or stopped before it)",
                    location=f"{path}#/cells",
                    fix=f"run the shard again to its end, then merge ({cell_id} is cell "
                    f"{place + 1} of {len(first['matrix']['cells'])})",
                )
            index = document["cells"].index(cell)
            files.append(ShardFile(f"{path}#/cells/{index}/results", cell["results"]))
        merged = merge(check(files), command=command)
        cells.append({"id": cell_id, "values": _cell(first, cell_id)["values"], "results": merged})
    return matrix_document(
        str(first["layer"]),
        first["matrix"],
        cells,
        complete=all(bool(d.get("complete")) for _, d in documents),
        interrupted=any(bool(d.get("interrupted")) for _, d in documents),
        spending=_spending([d.get("spending") for _, d in documents]),
        shard=None,
    )


def _cell(document: Mapping[str, Any], cell_id: str) -> Any:
    return next((cell for cell in document.get("cells") or [] if cell["id"] == cell_id), None)


def _spending(each: list[Any]) -> dict[str, Any] | None:
    """The shards' ``spending`` summed: each shard held its own limit."""
    given = [s for s in each if s]
    if not given:
        return None
    stopped = [cell for s in given for cell in s.get("stopped_cells") or []]
    return {
        "limit_usd": round(sum(float(s["limit_usd"]) for s in given), 6),
        "spent_usd": round(sum(float(s["spent_usd"]) for s in given), 6),
        "stopped_cells": list(dict.fromkeys(stopped)),
        "reason": next((s.get("reason") for s in given if s.get("reason")), None),
    }
