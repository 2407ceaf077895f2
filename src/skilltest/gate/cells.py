"""The gate on a matrix's results file: each cell's document read as one run's, the matrix's
own claims checked against its cells, and which cells a release requires.

A matrix's file (``--models``, ``--claude-versions``, ``--agents``) holds each cell's results
document as a single run writes it; the gate reads each as a results file of its own, named
``matrix.json [model=opus]``, through every rule. What the file says about the matrix (its axes
and the cells they make, the cells it holds and their values, the comparisons across cells,
the cells ``--max-cost-usd`` stopped, that it is complete) is a claim, checked against the
cells' documents (:func:`matrix_claims`); a cell's document edited is caught by the recompute
of its own figures.

``--require-cell AXIS=VALUE[,AXIS=VALUE]`` names the cells a release needs; a partial spec
(``model=opus``) requires every cell with that value. A required cell must be there, complete,
and have a decided scenario (the ``cells`` rule); a failing, regressed or critical scenario
blocks in a required cell only, and is listed in another. An authority violation blocks in any
cell. Without ``--require-cell`` every cell is required.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.gate.read import ResultsFile, results_file
from skilltest.report.provenance import provenance_of

OPTION = "--require-cell"
"""The command line option naming a required cell."""
CELLS_RULE = (
    "every required cell is there, complete, with a decided scenario "
    "(--require-cell AXIS=VALUE; without it every cell)"
)
"""What the ``cells`` rule requires."""
MATRIX_UNIT = "matrix"
"""How a claim of the matrix itself is named."""


@dataclass(frozen=True)
class MatrixFile:
    """A matrix's results file, read for the gate."""

    path: Path
    """Where it was read."""
    layer: str
    """``pressure``, ``scenarios`` or ``triggers``."""
    axes: tuple[tuple[str, tuple[str, ...]], ...]
    """Each axis of its plan with its values, in order."""
    planned: tuple[str, ...]
    """The cell ids its plan names."""
    cells: tuple[ResultsFile, ...]
    """Each cell's document, read as one run's results file, in the file's order."""
    claims: tuple[str, ...]
    """What the file says of the matrix that its cells do not give (empty: every claim holds)."""


def load_matrix(path: Path, *, stale_check: bool = True, claims: bool = True) -> MatrixFile:
    """Reads a matrix's results file for the gate: each cell's document as one run's results
    (:func:`skilltest.gate.read.results_file`), and what the file says of the matrix checked
    against them.

    Raises:
        InputError: not a matrix's results file of a version this skilltest reads, or a cell's
            document that is not a valid results document, naming the place.
    """
    from skilltest.matrix.results import read_matrix

    data = read_matrix(path)
    cells = tuple(
        results_file(
            cell["results"],
            path,
            cell=str(cell["id"]),
            pointer=f"/cells/{index}/results",
            stale_check=stale_check,
            claims=claims,
        )
        for index, cell in enumerate(data["cells"])
    )
    plan = data.get("matrix") or {}
    axes = tuple(
        (str(axis["name"]), tuple(str(v) for v in axis["values"])) for axis in plan.get("axes", ())
    )
    return MatrixFile(
        path=path,
        layer=str(data["layer"]),
        axes=axes,
        planned=tuple(str(c) for c in plan.get("cells", ())),
        cells=cells,
        claims=tuple(f"{path}: {MATRIX_UNIT}: {c}" for c in matrix_claims(data)) if claims else (),
    )


def cell_values(cell_id: str) -> dict[str, str]:
    """A cell id's values by axis: ``model=haiku,claude=2.1.332`` gives both."""
    return dict(part.split("=", 1) for part in cell_id.split(",") if "=" in part)


def matrix_claims(data: Mapping[str, Any]) -> list[str]:
    """What a matrix's document says of itself that its plan and its cells' documents do not
    give, one line each; empty when every claim holds. Pure."""
    from skilltest.matrix.axes import Axis, cells_of
    from skilltest.matrix.compare import compare_lifts, compare_versions

    found: list[str] = []
    plan = data.get("matrix") or {}
    axes = [Axis(str(a["name"]), tuple(str(v) for v in a["values"])) for a in plan.get("axes", ())]
    planned = [str(c) for c in plan.get("cells", ())]
    expected = [cell.id for cell in cells_of(axes)]
    if planned != expected:
        found.append(f"the plan names the cells {_ids(planned)}, its axes make {_ids(expected)}")
    cells = list(data.get("cells") or [])
    ids = [str(cell.get("id")) for cell in cells]
    for cell, cell_id in zip(cells, ids, strict=True):
        values = {str(k): str(v) for k, v in (cell.get("values") or {}).items()}
        if cell_id not in planned:
            found.append(f"cell {cell_id} is not a cell of the plan ({_ids(planned)})")
        if values != cell_values(cell_id):
            found.append(f"cell {cell_id}: its values are {_shown(values)}, not its id's")
        found += _ran_as(cell_id, values, cell.get("results") or {})
    twice = sorted({i for i in ids if ids.count(i) > 1})
    found += [f"cell {cell_id} is in the file twice" for cell_id in twice]
    if data.get("complete"):
        missing = [c for c in planned if c not in ids]
        if missing:
            found.append(f"complete is true, but the plan's cells {_ids(missing)} are missing")
        unfinished = [
            cell_id
            for cell, cell_id in zip(cells, ids, strict=True)
            if not (cell.get("results") or {}).get("complete")
            or (cell.get("results") or {}).get("stopped")
        ]
        if unfinished:
            found.append(f"complete is true, but the cells {_ids(unfinished)} are not")
    layer = str(data.get("layer"))
    for key, compute in (("comparisons", compare_lifts), ("versions", compare_versions)):
        written = _normal(data.get(key) or [])
        try:
            recomputed = _normal([item.to_dict() for item in compute(layer, cells)])
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, ArithmeticError):
            recomputed = None
        if written != recomputed:
            found.append(f"{key} do not follow from the cells' documents (recomputed otherwise)")
    spending = data.get("spending")
    if isinstance(spending, dict):
        said = sorted(str(c) for c in spending.get("stopped_cells") or ())
        stopped = sorted(
            cell_id
            for cell, cell_id in zip(cells, ids, strict=True)
            if (cell.get("results") or {}).get("stopped")
        )
        if said != stopped:
            found.append(
                f"spending names the cells stopped by --max-cost-usd {_ids(said)}; "
                f"the cells' documents say {_ids(stopped)}"
            )
    return found


def _ran_as(cell_id: str, values: Mapping[str, str], document: Mapping[str, Any]) -> list[str]:
    """Whether a cell's document ran what its values say: the model it asked for, the CLI
    version that ran, the agent its runs went through (a cell relabelled as another is caught
    here)."""
    from skilltest.matrix.axes import AGENT, CLAUDE, MODEL

    provenance = provenance_of(document)
    found = []
    agent = document.get("agent")
    ran = {
        MODEL: provenance.model_requested,
        CLAUDE: provenance.claude_version,
        AGENT: agent.get("name") if isinstance(agent, dict) else None,
    }
    for axis, value in values.items():
        if axis in ran and ran[axis] is not None and ran[axis] != value:
            found.append(f"cell {cell_id}: its document ran {axis} {ran[axis]}, not {value}")
    return found


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids) if ids else "none"


def _shown(values: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in values.items()) or "none"


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


@dataclass(frozen=True)
class CellSpec:
    """One ``--require-cell`` value: the axis values a required cell has."""

    text: str
    """As given."""
    values: tuple[tuple[str, str], ...]
    """``(axis, value)`` pairs."""

    def matches(self, cell_id: str) -> bool:
        """Whether the cell has every value the spec names."""
        values = cell_values(cell_id)
        return all(values.get(axis) == value for axis, value in self.values)


def parse_require(texts: Sequence[str], matrices: Sequence[MatrixFile]) -> tuple[CellSpec, ...]:
    """The ``--require-cell`` values, checked against the axes of the matrices read.

    Raises:
        InputError: no matrix among the results, a value not ``AXIS=VALUE[,AXIS=VALUE]``, or
            an axis no matrix spans; the message names the option and the axes and values the
            files have.
    """
    if not texts:
        return ()
    axes: dict[str, list[str]] = {}
    for matrix in matrices:
        for name, values in matrix.axes:
            axes.setdefault(name, [])
            axes[name] += [v for v in values if v not in axes[name]]
    has = "; ".join(f"{name}: {', '.join(values)}" for name, values in axes.items())
    if not matrices:
        raise InputError(
            f"{texts[0]}: no matrix's results file among the results",
            location=OPTION,
            fix="pass the results file of a run with --models or --claude-versions, or leave "
            f"{OPTION} out",
        )
    example = f"e.g. {OPTION} {next(iter(axes), 'model')}={next(iter(axes.values()), ['opus'])[0]}"
    specs = []
    for text in texts:
        pairs = [part.strip().split("=", 1) for part in text.split(",")]
        if not all(len(p) == 2 and p[0].strip() and p[1].strip() for p in pairs):
            raise InputError(
                f"{text!r}: expected AXIS=VALUE[,AXIS=VALUE]",
                location=OPTION,
                fix=f"{example}; the results' axes are {has}",
            )
        named = tuple((pair[0].strip(), pair[1].strip()) for pair in pairs)
        for axis, _ in named:
            if axis not in axes:
                raise InputError(
                    f"{text}: the results have no axis {axis!r}",
                    location=OPTION,
                    fix=f"name an axis of the results: {has}",
                )
        specs.append(CellSpec(text, named))
    return tuple(specs)


def required(cell_id: str, specs: Sequence[CellSpec]) -> bool:
    """Whether a cell is required: it matches a spec; every cell when none is given."""
    return not specs or any(spec.matches(cell_id) for spec in specs)


def cells_rule(
    matrices: Sequence[MatrixFile], specs: Sequence[CellSpec], allow_undecided: bool
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``cells`` rule's reasons to block and its evidence: each required cell there (a
    spec that matches no cell of a matrix whose axes it names, a cell of the plan the file does
    not hold), complete, with a decided scenario."""
    from skilltest.gate.rules import UNDECIDED

    blocks: list[str] = []
    evidence: list[str] = []
    for matrix in matrices:
        held = [cell.cell for cell in matrix.cells]
        names = {name for name, _ in matrix.axes}
        for spec in specs:
            if {axis for axis, _ in spec.values} <= names and not any(
                spec.matches(c) for c in (*held, *matrix.planned)
            ):
                blocks.append(
                    f"{matrix.path}: {OPTION} {spec.text}: no cell has it (its cells: "
                    f"{_ids(matrix.planned)})"
                )
        for cell_id in matrix.planned:
            if cell_id not in held and required(cell_id, specs):
                blocks.append(
                    f"{matrix.path}: required cell {cell_id} is missing (the plan names it, the "
                    "file does not hold it: the matrix was interrupted or stopped before it ran)"
                )
        for cell in matrix.cells:
            if not cell.required:
                evidence.append(
                    f"{cell.name}: not a required cell: its failing, regressed and critical "
                    "scenarios are listed, not blocked on (authority violations still block)"
                )
                if cell.stopped is not None or not cell.complete:
                    evidence.append(f"{cell.name}: incomplete, not required")
                continue
            if cell.stopped is not None:
                blocks.append(f"{cell.name}: required cell incomplete (stopped: {cell.stopped})")
                continue
            if not cell.complete:
                blocks.append(
                    f"{cell.name}: required cell incomplete (the run was interrupted or is "
                    "still running)"
                )
                continue
            decided = [
                e for e in cell.scenarios if not e.inconclusive and e.verdict not in UNDECIDED
            ]
            if not decided and not allow_undecided:
                blocks.append(
                    f"{cell.name}: required cell has no decided scenario: 0 of "
                    f"{len(cell.scenarios)} have a verdict other than inconclusive, error or "
                    "skipped; run more runs (-k auto) or pass --allow-undecided"
                )
        kept = [cell.cell for cell in matrix.cells if cell.required]
        evidence.insert(
            0,
            f"{matrix.path}: required cells {_ids(kept)}"
            + (
                f" ({' '.join(f'{OPTION} {s.text}' for s in specs)})"
                if specs
                else f" (every cell: no {OPTION})"
            ),
        )
    return tuple(blocks), tuple(evidence)
