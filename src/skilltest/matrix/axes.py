"""The axes a matrix spans and its cells: one value per axis, each with a stable id.

An :class:`Axis` is a name and its values (``model``: ``haiku``, ``opus``); a :class:`Cell`
holds one value of each axis, in the axes' order, and is named by its :attr:`Cell.id`
(``model=haiku``, ``model=haiku,claude=2.1.332``, ``agent=opencode``), as pytest names a
parametrised case. A cell id is the same in every run, every results file and every shard, so
results of two runs line up by it. A new axis is one more name here and one more field a cell
sets in a layer's options (:mod:`skilltest.matrix.plan`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skilltest.errors import InputError
from skilltest.names import name_problem

MODEL = "model"
"""The model axis: the model each cell's runs ask for."""

CLAUDE = "claude"
"""The Claude Code CLI axis: the version of ``claude`` each cell's runs use."""

AGENT = "agent"
"""The agent axis: the agent each cell's runs go through (``claude-code``, ``opencode``,
``codex``; the scenario layer)."""

AXES = (MODEL, CLAUDE, AGENT)
"""The axes a matrix can span, in the order a cell id names them."""

LIFT_AXES = (MODEL, AGENT)
"""The axes across which the skill's lift is compared (does it help one model, one agent,
more than another?); across CLI versions each arm's pass rate is compared instead."""

EXAMPLES = {
    MODEL: "haiku,opus",
    CLAUDE: "2.1.328,2.1.332",
    AGENT: "claude-code,opencode",
}
"""An example of each axis's values, as a fix shows it."""


@dataclass(frozen=True)
class Axis:
    """One dimension of a matrix."""

    name: str
    """What varies (``model``)."""
    values: tuple[str, ...]
    """Its values, in the order given; never empty, never one twice."""

    def to_dict(self) -> dict[str, object]:
        """The axis as a results file lists it."""
        return {"name": self.name, "values": list(self.values)}


@dataclass(frozen=True)
class Cell:
    """One point of a matrix: a value for each axis."""

    values: tuple[tuple[str, str], ...]
    """``(axis, value)`` pairs, in the axes' order."""

    @property
    def id(self) -> str:
        """The stable id: ``model=haiku`` (axes joined by ``,``)."""
        return ",".join(f"{axis}={value}" for axis, value in self.values)

    @property
    def folder(self) -> str:
        """The cell's folder name under a run's output, cassette or trace folder:
        ``model-haiku`` (axes joined by ``.``)."""
        return ".".join(f"{axis}-{value}" for axis, value in self.values)

    def value(self, axis: str) -> str | None:
        """This cell's value on ``axis``; ``None`` when the matrix does not span it."""
        return dict(self.values).get(axis)

    def to_dict(self) -> dict[str, str]:
        """The cell's values by axis, as a results file keeps them."""
        return dict(self.values)


def cells_of(axes: Sequence[Axis]) -> tuple[Cell, ...]:
    """Every cell of ``axes``: their product, the first axis varying slowest."""
    names = [axis.name for axis in axes]
    return tuple(
        Cell(tuple(zip(names, combination, strict=True)))
        for combination in itertools.product(*(axis.values for axis in axes))
    )


def axis_values(text: str, *, axis: str, option: str) -> Axis:
    """The axis a command line option gives as comma-separated values (``haiku,opus``).

    Raises:
        InputError: no value, an empty or repeated value, or one that cannot name a folder
            (each cell keeps its transcripts and cassettes in a folder named after it).
    """
    values = tuple(part.strip() for part in text.split(","))
    example = f"{option} {EXAMPLES[axis]}"
    if not any(values) or "" in values:
        raise InputError(
            f"{option} {text!r} has an empty value",
            location=option,
            fix=f"give comma-separated values, e.g. {example}",
        )
    if axis == CLAUDE:
        from skilltest.claude.binary import check_version

        for value in values:
            check_version(value, location=option)
    if axis == AGENT:
        from skilltest.agents import agent

        for value in values:
            agent(value, location=option)
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise InputError(
                f"{option} names {value!r} twice",
                location=option,
                fix=f"name each value once, e.g. {example}",
            )
        seen.add(value)
        problem = name_problem(value)
        if problem is not None:
            raise InputError(
                f"{option}: {value!r} {problem}",
                location=option,
                fix="name the value as the API names it (e.g. claude-haiku-4-5); each cell's "
                "files are kept in a folder named after it",
            )
    return Axis(axis, values)


def axes_from(values: Mapping[str, Sequence[str]]) -> tuple[Axis, ...]:
    """The axes of a matrix from its values by axis name, in :data:`AXES` order; an axis
    given no values is left out.

    Raises:
        InputError: an axis this skilltest does not know.
    """
    unknown = sorted(set(values) - set(AXES))
    if unknown:
        raise InputError(
            f"a matrix cannot span {', '.join(unknown)}",
            location="matrix",
            fix=f"use the axes {', '.join(AXES)}",
        )
    return tuple(Axis(name, tuple(values[name])) for name in AXES if values.get(name))
