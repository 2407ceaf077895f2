"""Which scenarios run and how many times: ``only``, ``repeat``, no scenario twice, this
shard's share."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from skilltest.errors import InputError
from skilltest.flow.options import RunOptions
from skilltest.flow.shard import ShardPlan, deciding_options, split
from skilltest.redact import declare_secrets
from skilltest.repetitions import Repetitions, plan_for
from skilltest.replay.rules import Rules
from skilltest.suite.loader import discover_suites


class _HasRepetitions(Protocol):
    @property
    def repetitions(self) -> int | None: ...


def repetition_plan(options: RunOptions) -> Callable[[_HasRepetitions], Repetitions]:
    """Each scenario's plan from ``repeat``, ``min_k``, ``max_k`` and its suite.

    Raises:
        InputError: ``min_k`` above ``max_k``.
    """
    if options.min_k > options.max_k:
        raise InputError(
            f"--min-k {options.min_k} is above --max-k {options.max_k}",
            location="--min-k",
            fix="give --min-k at most --max-k",
        )

    def plan(scenario: _HasRepetitions) -> Repetitions:
        return plan_for(
            options.repeat, scenario.repetitions, min_k=options.min_k, max_k=options.max_k
        )

    return plan


class _Declaring(Protocol):
    @property
    def replay(self) -> Rules: ...


SuiteT = TypeVar("SuiteT", bound=_Declaring)


def load_all(
    targets: Sequence[Path], default_dir: Path, *, example: str, load: Callable[[Path], SuiteT]
) -> tuple[list[Path], list[SuiteT]]:
    """The suite files ``targets`` name (files, folders, names; none: ``default_dir``) and each
    loaded with ``load``; the secrets each declares (its ``replay.redact`` values, the caller's
    values of the variables its world names) are kept out of everything written from now on
    (:func:`skilltest.redact.declare_secrets`).

    Raises:
        InputError: a target that does not exist, no suite found, or a suite ``load`` refuses.
    """
    paths = discover_suites(list(targets), default_dir, example=example)
    suites = [load(path) for path in paths]
    declare_secrets(secret for suite in suites for secret in suite.replay.secrets)
    return paths, suites


def select(
    suites: Sequence[SuiteT],
    only: Sequence[str],
    *,
    items: str = "scenarios",
    noun: str = "scenario",
    example: str = "index-*",
) -> list[SuiteT]:
    """The suites with only the items (``scenarios``, or a trigger suite's ``queries``) whose
    id matches one of the ``only`` globs; a suite left with none is left out.

    Raises:
        InputError: nothing matches, naming the ids there are.
    """
    if not only:
        return list(suites)
    selected = []
    for suite in suites:
        kept = tuple(
            item
            for item in getattr(suite, items)
            if any(fnmatch.fnmatchcase(item.id, glob) for glob in only)
        )
        if kept:
            selected.append(dataclasses.replace(suite, **{items: kept}))  # type: ignore[type-var]
    if not selected:
        ids = sorted({item.id for suite in suites for item in getattr(suite, items)})
        raise InputError(
            f"matches no {noun}",
            location="--only " + " ".join(only),
            fix=f"use one of the ids (globs like '{example}' work): " + ", ".join(ids),
        )
    return selected


def take_shard(
    options: RunOptions,
    suites: Sequence[SuiteT],
    *,
    layer: str,
    skill_of: Callable[[SuiteT, Any], str],
    items: str = "scenarios",
) -> tuple[list[SuiteT], ShardPlan | None]:
    """This shard's share of the suites (``options.shard``; all of them without one), and the
    plan its results record (see :mod:`skilltest.flow.shard`).

    Raises:
        InputError: ``durations`` without ``shard``, or a durations file that is not a results
            file of ``layer``.
    """
    if options.shard is None:
        if options.durations is not None:
            raise InputError(
                "--durations balances shards, and this run is not one",
                location=f"--durations {options.durations}",
                fix="add --shard i/n, or leave out --durations",
            )
        return list(suites), None
    durations = None
    if options.durations is not None:
        from skilltest.report.files import read_results
        from skilltest.report.rows import unit_durations

        durations = unit_durations(read_results(options.durations, layer))
    return split(
        suites,
        options.shard,
        skill_of=skill_of,
        items=items,
        durations=durations,
        options=deciding_options(options),
    )
