"""Which share of a run's work one shard of a CI matrix takes: ``--shard i/n``. Pure.

The unit of work is a whole scenario (all its arms and repetitions) in the pressure and
scenario layers, and a whole query (all its runs, under every description) in the trigger
layer: an adaptive plan (``-k auto``) decides a scenario from all of its runs, and a verdict
reads both arms, so a scenario's runs are never split between machines. A unit is named
``skill/id``.

Without recorded durations the units are put in the order of ``sha256(skill/id)`` (a hash that
is the same on every machine and for every Python, unlike Python's own) and dealt out in turn:
shard 1 takes the first, shard 2 the second, ..., so the shards differ by at most one unit and
the split does not follow the suites' order (the slow scenarios of one suite do not all land
on one shard). With ``--durations RESULTS.json`` (a results file of an earlier run of the same
layer) units are spread by greedy longest-processing-time assignment over their recorded
durations: the longest unit first, each to the shard with the least work so far; a unit the file
does not know counts as the median of those it knows.

Every shard records the whole plan (``units`` in run order, its own ``assigned`` ones, the
options that decide verdicts), so ``skilltest merge`` can tell a missing shard, a duplicate or a
shard of another run, and put the scenarios back in suite order.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

HASH = "hash"
"""Units dealt out in the order of the hash of their name."""
DURATIONS = "durations"
"""Units spread by recorded durations (longest first, to the least loaded shard)."""

NOT_DECIDING = frozenset(
    {
        "suites",
        "skills_dir",
        "claude",
        "jobs",
        "outputs",
        "output_dir",
        "command_line",
        "shard",
        "durations",
        "max_cost_usd",
        "record",
        "replay",
        "record_missing",
        "plugin_dir",
        "timeout_s",
        "max_retries",
    }
)
"""Options that do not change a verdict: where things are (the suites themselves are compared by
their checksums), how fast, and what is written. Every other option must be the same in every
shard of a merge (a new option counts as deciding until it is listed here)."""


@dataclass(frozen=True)
class Shard:
    """One shard of ``count``: ``index`` from 1."""

    index: int
    """This shard, from 1 to ``count``."""
    count: int
    """How many shards the work is split into."""

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ValueError(f"shard {self.index}/{self.count}: need 1 <= i <= n")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``i/n`` as ``--shard`` takes it.

        Raises:
            ValueError: not two whole numbers with 1 <= i <= n.
        """
        index, slash, count = text.strip().partition("/")
        if not slash or not index.strip().isdigit() or not count.strip().isdigit():
            raise ValueError(f"{text} is not i/n (e.g. 1/4: the first of four shards)")
        shard_index, shard_count = int(index), int(count)
        if not 1 <= shard_index <= shard_count:
            raise ValueError(f"{text}: i must be from 1 to n (e.g. 1/4 to 4/4)")
        return cls(shard_index, shard_count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def to_dict(self) -> dict[str, int]:
        """As results files and their provenance record it."""
        return {"index": self.index, "count": self.count}


def unit_name(skill: str, item_id: str) -> str:
    """A unit's name: ``skill/id``."""
    return f"{skill}/{item_id}"


def unit_hash(unit: str) -> int:
    """A stable number for a unit name (SHA-256, not Python's salted ``hash``)."""
    return int.from_bytes(hashlib.sha256(unit.encode("utf-8")).digest()[:8], "big")


def assign(
    units: Sequence[str], count: int, durations: Mapping[str, float] | None = None
) -> dict[str, int]:
    """Each unit's shard (from 1): dealt in hash order, or with ``durations`` by longest
    processing time.

    Args:
        units: Every unit of the run.
        count: How many shards.
        durations: Seconds each unit took before; ``None``: spread by hash.
    """
    if durations is None:
        dealt = sorted(units, key=lambda u: (unit_hash(u), u))
        return {unit: place % count + 1 for place, unit in enumerate(dealt)}
    import statistics

    known = [durations[unit] for unit in units if unit in durations]
    fallback = statistics.median(known) if known else 1.0
    weight = {unit: float(durations.get(unit, fallback)) for unit in units}
    loads = [0.0] * count
    shards: dict[str, int] = {}
    # Longest first; equal ones in hash order, so every machine breaks ties alike.
    for unit in sorted(units, key=lambda u: (-weight[u], unit_hash(u), u)):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        loads[lightest] += weight[unit]
        shards[unit] = lightest + 1
    return shards


def deciding_options(options: Any) -> dict[str, Any]:
    """The options of a run that can change a verdict, as text (see :data:`NOT_DECIDING`)."""
    shown: dict[str, Any] = {}
    for item in dataclasses.fields(options):
        if item.name in NOT_DECIDING:
            continue
        value = getattr(options, item.name)
        if isinstance(value, Path):
            value = str(value)
        elif isinstance(value, tuple):
            value = [str(v) for v in value]
        shown[item.name] = value
    return shown


@dataclass(frozen=True)
class ShardPlan:
    """What a shard ran, as its results file records it."""

    shard: Shard
    """This shard."""
    units: tuple[str, ...]
    """Every unit of the whole run, in run (suite) order."""
    assigned: tuple[str, ...]
    """The units this shard runs, in run order."""
    balance: str = HASH
    """``hash`` or ``durations``."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The options that decide verdicts (:func:`deciding_options`)."""

    def to_dict(self) -> dict[str, Any]:
        """The results file's ``shard`` object."""
        return {
            **self.shard.to_dict(),
            "balance": self.balance,
            "units": list(self.units),
            "assigned": list(self.assigned),
            "options": dict(self.options),
        }


SuiteT = TypeVar("SuiteT")


def split(
    suites: Sequence[SuiteT],
    shard: Shard,
    *,
    skill_of: Callable[[SuiteT, Any], str],
    items: str = "scenarios",
    durations: Mapping[str, float] | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[list[SuiteT], ShardPlan]:
    """The suites with only this shard's units (``scenarios``, or a trigger suite's
    ``queries``); a suite left with none is left out. Skipped scenarios are units too.

    Args:
        suites: Every suite of the run, selected (``--only``) and checked.
        shard: Which shard this is.
        skill_of: The skill of a suite's unit (``suite, item``).
        items: The suites' field that holds the units.
        durations: Recorded seconds per unit (``--durations``); ``None``: by hash.
        options: The options that decide verdicts, recorded for the merge.
    """
    units = [
        unit_name(skill_of(suite, item), item.id)
        for suite in suites
        for item in getattr(suite, items)
    ]
    shards = assign(units, shard.count, durations)
    kept = []
    for suite in suites:
        mine = tuple(
            item
            for item in getattr(suite, items)
            if shards[unit_name(skill_of(suite, item), item.id)] == shard.index
        )
        if mine:
            kept.append(dataclasses.replace(suite, **{items: mine}))  # type: ignore[type-var]
    plan = ShardPlan(
        shard=shard,
        units=tuple(units),
        assigned=tuple(unit for unit in units if shards[unit] == shard.index),
        balance=HASH if durations is None else DURATIONS,
        options=dict(options or {}),
    )
    return kept, plan
