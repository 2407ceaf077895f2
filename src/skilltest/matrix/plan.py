"""A matrix's plan: its cells, the options each cell's run takes, and the arms each runs.

A cell runs through its layer's own ``run(options)`` with options that differ from the
command's in the cell's values only (:func:`cell_options`): the model it asks for, and the
folders its files go to (each cell's transcripts, traces and cassettes in a folder named after
it, so two cells never write the same file), the agent its runs go through. The layers never
learn that a matrix exists.

Within a cell, the without-skill arm depends on the prompt and the model, not on the skill:
it runs once, and the with-skill arm and each ``--against`` revision are compared with the same
baseline runs (:attr:`MatrixPlan.arms`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.errors import InputError
from skilltest.flow.options import RunOptions
from skilltest.matrix.axes import AGENT, CLAUDE, MODEL, Axis, Cell, cells_of
from skilltest.report.outputs import Outputs
from skilltest.revision import against_refs, revision_arms

WITH_SKILL = "with_skill"
"""The arm with the skill as it is."""
WITHOUT_SKILL = "without_skill"
"""The baseline arm: no skill; one per cell, shared by every revision arm."""

OPTION_OF_AXIS = {MODEL: "model", AGENT: "agent"}
"""The field of a layer's options each axis sets."""


@dataclass(frozen=True)
class MatrixPlan:
    """What a matrix runs: every scenario in every cell, with the cell's arms."""

    axes: tuple[Axis, ...]
    """The axes, in the order cell ids name them."""
    cells: tuple[Cell, ...]
    """Every cell, the first axis varying slowest."""
    arms: tuple[str, ...]
    """The arms each scenario runs in each cell: the without-skill arm once, whatever the
    revisions compared."""
    revisions: tuple[tuple[str, str], ...] = ()
    """Each REF of ``--against`` with its arm (``previous``, ``previous-2``...)."""

    @property
    def shared_baseline(self) -> bool:
        """Several skill arms are compared with one without-skill arm in each cell."""
        return WITHOUT_SKILL in self.arms and len(self.arms) > 2

    def to_dict(self) -> dict[str, Any]:
        """The plan as a results file keeps it."""
        return {
            "axes": [axis.to_dict() for axis in self.axes],
            "cells": [cell.id for cell in self.cells],
            "arms": list(self.arms),
            "shared_baseline": self.shared_baseline,
            **(
                {"revisions": [{"arm": arm, "ref": ref} for arm, ref in self.revisions]}
                if self.revisions
                else {}
            ),
        }


def plan_matrix(
    options: RunOptions, axes: Sequence[Axis], *, baseline: bool = True, agents: bool = False
) -> MatrixPlan:
    """The plan of a matrix over ``axes`` for a layer's ``options`` (``baseline``: the layer
    runs a without-skill arm, trigger queries run with the skill only; ``agents``: the layer
    runs its scenarios through an agent other than Claude Code).

    Raises:
        InputError: no axis, or an option a matrix cannot take with it.
    """
    if not axes:
        raise InputError(
            "a matrix needs at least one axis",
            location="--models",
            fix="e.g. --models haiku,opus or --claude-versions 2.1.328,2.1.332",
        )
    if MODEL in {axis.name for axis in axes} and options.model is not None:
        raise InputError(
            f"--model {options.model} and --models name the model twice",
            location="--model",
            fix="give the models to compare with --models only",
        )
    if CLAUDE in {axis.name for axis in axes} and options.claude is not None:
        raise InputError(
            f"--claude {options.claude} and --claude-versions name the CLI twice",
            location="--claude",
            fix="give the versions to compare with --claude-versions only (each installed by "
            "skilltest setup --claude-version V)",
        )
    spans = {axis.name: axis.values for axis in axes}
    if AGENT in spans:
        _check_agent_axis(options, spans, agents=agents)
    for name, value, why in _NOT_WITH_A_MATRIX:
        if getattr(options, name, None) not in (None, False):
            raise InputError(
                f"{value} cannot run across a matrix: {why}",
                location=value,
                fix=f"run each cell with --model M and {value}, or leave {value} out",
            )
    arms: tuple[str, ...] = (WITH_SKILL,)
    if baseline and not getattr(options, "skill_only", False):
        arms += (WITHOUT_SKILL,)
    revisions = revision_arms(against_refs(options.against, options.also_against))
    arms += tuple(arm for arm, _ in revisions)
    return MatrixPlan(tuple(axes), cells_of(axes), arms, revisions)


def _check_agent_axis(
    options: RunOptions, spans: Mapping[str, Sequence[str]], *, agents: bool
) -> None:
    """An agent axis in a layer that runs agents, beside no ``--agent`` and no CLI version
    axis of another agent than Claude Code.

    Raises:
        InputError: naming the option and the fix.
    """
    from skilltest.agents.registry import DEFAULT_AGENT

    if not agents:
        raise InputError(
            "--agents: this layer does not run its scenarios through an agent",
            location="--agents",
            fix="run skilltest scenarios --agents A,B, or leave --agents out",
        )
    if options.agent != DEFAULT_AGENT:
        raise InputError(
            f"--agent {options.agent} and --agents name the agent twice",
            location="--agent",
            fix="give the agents to compare with --agents only",
        )
    others = [name for name in spans[AGENT] if name != DEFAULT_AGENT]
    if CLAUDE in spans and others:
        raise InputError(
            f"--claude-versions picks versions of Claude Code, and --agents names "
            f"{', '.join(others)} too",
            location="--claude-versions",
            fix="compare CLI versions in a matrix of their own (--claude-versions without "
            "--agents), or compare agents without --claude-versions",
        )


_NOT_WITH_A_MATRIX = (
    ("batch", "--batch", "each cell would submit batches of its own"),
    ("resume_batch", "--resume-batch", "a resume file holds one run's batches"),
)
"""Options of a layer a matrix refuses: ``(field, option, why)``."""


def cell_options(options: RunOptions, cell: Cell, claude: Mapping[str, Path] | None = None) -> Any:
    """``options`` for one cell's run: the cell's values set (its CLI version as the ``claude``
    of that version, from ``claude``), no outputs of their own (the matrix writes one results
    document for every cell), and each folder a run writes to narrowed to the cell's
    (``output/model-haiku/...``)."""
    changes: dict[str, Any] = {
        OPTION_OF_AXIS[axis]: value for axis, value in cell.values if axis in OPTION_OF_AXIS
    }
    version = cell.value(CLAUDE)
    if version is not None and claude is not None:
        changes["claude"] = claude[version]
    changes["outputs"] = Outputs()
    changes["output_dir"] = _inside(options.output_dir, cell)
    for name in ("record", "replay"):
        if hasattr(options, name):
            changes[name] = _inside(getattr(options, name), cell)
    return dataclasses.replace(options, **changes)


def _inside(folder: Path | None, cell: Cell) -> Path | None:
    return None if folder is None else folder / cell.folder
