"""The options every layer takes, the outputs a run writes, and how a caller watches it.

The command line builds these from its arguments (``skilltest.cli.options.options_from``); a
Python caller builds them directly::

    from skilltest import PressureOptions, Outputs, pressure

    results = pressure.run(
        PressureOptions(suites=(Path("tests/skill-pressure/lgtm.yaml"),), repeat=5,
                        outputs=Outputs(results=Path("out/pressure.json")))
    )
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skilltest.cost.budget import Budget
from skilltest.flow.shard import Shard
from skilltest.repetitions import DEFAULT_MAX_K, DEFAULT_MIN_K
from skilltest.report.outputs import Outputs


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What every layer's run takes."""

    suites: tuple[Path, ...] = ()
    """Suite files, folders or names (``lgtm``); none: the layer's default folder."""
    skills_dir: Path | None = None
    """The folder holding ``<skill>/SKILL.md`` (default: the nearest ``skills/``)."""
    backend: str | None = None
    """Where answers come from; ``None``: live when credentials are set, else the emulator."""
    script: Path | None = None
    """An emulator model script for every suite (default: each suite's ``model_script``)."""
    claude: Path | None = None
    """The ``claude`` binary (default: ``$SKILLTEST_CLAUDE``, ``.tools/``, ``PATH``)."""
    agent: str = "claude-code"
    """The agent the CLI runs go through (``claude-code``, ``opencode``; the scenario layer)."""
    model: str | None = None
    """The model (default: the suite's)."""
    repeat: int | str | None = None
    """Runs per arm (a trigger query's runs per description), or ``"auto"`` (default: the
    suite's ``repetitions``, else ``"auto"``)."""
    min_k: int = DEFAULT_MIN_K
    """``repeat="auto"``: runs per arm before the first look."""
    max_k: int = DEFAULT_MAX_K
    """``repeat="auto"``: the most runs per arm."""
    allow_inconclusive: bool = False
    """An ``inconclusive`` verdict does not fail the run."""
    jobs: int = 4
    """Runs in flight at once."""
    only: tuple[str, ...] = ()
    """Globs: only the scenarios (or queries) whose id matches one run."""
    against: str | None = None
    """A git revision or a folder: the skill as it was there runs as an arm ``previous``."""
    also_against: tuple[str, ...] = ()
    """More revisions or folders (``--against`` given again), each an arm of its own
    (``previous-2``, ``previous-3``...), compared with the with-skill arm as ``against`` is;
    the without-skill arm runs once for all of them. Only with ``against``."""
    output_dir: Path | None = None
    """Where raw output and traces are kept (default per layer)."""
    outputs: Outputs = field(default_factory=Outputs)
    """The files to write."""
    command_line: tuple[str, ...] = ()
    """The command that started the run (``skilltest pressure ...``), recorded in its results;
    empty for a Python caller, whose results record ``python`` and the options set."""
    shard: Shard | None = None
    """Run only this shard's share of the scenarios (or trigger queries): ``Shard(2, 4)`` is
    ``--shard 2/4``; ``skilltest merge`` puts the shards' results files back together."""
    durations: Path | None = None
    """With ``shard``: a results file of an earlier run of the same layer, whose recorded
    durations balance the shards (default: spread by a hash of each scenario's name)."""
    max_cost_usd: float | None = None
    """Start no new run once the cost spent plus the estimate of the runs in flight and of the
    next one would pass this many US dollars; the results are then marked ``stopped``."""
    budget: Budget | None = None
    """A budget the run draws on instead of one of ``max_cost_usd``'s own: a caller holding
    several runs to one limit gives each its share and reads what each spent."""


def budget_of(options: RunOptions) -> Budget | None:
    """The budget a run keeps: ``options.budget``, else one of ``max_cost_usd``, else none."""
    if options.budget is not None:
        return options.budget
    return None if options.max_cost_usd is None else Budget(options.max_cost_usd)


@dataclass(frozen=True, kw_only=True)
class ComparedOptions(RunOptions):
    """What the two layers that compare a with-skill arm with a baseline take besides."""

    plugin_dir: Path | None = None
    """A plugin under test instead of each suite's skill or plugin."""
    plugin: str | None = None
    """With ``plugin_dir`` a marketplace's folder: the plugin it lists to test."""
    skill: str | None = None
    """The skill of suites that name none."""
    record: Path | None = None
    """Record every model exchange into cassettes under this folder."""
    replay: Path | None = None
    """Answer from the cassettes under this folder only."""
    record_missing: bool = False
    """With ``replay``: run live and record what the cassettes do not hold."""
    skill_only: bool = False
    """Run only the with-skill arm."""


@dataclass(frozen=True)
class BatchProgress:
    """Where the Message Batches of a round stand, after one poll of each."""

    round: int
    """The round (from 1): with adaptive repetitions, each round after the first is a batch of
    the scenarios not decided yet."""
    batches: tuple[str, ...]
    """The round's batch ids."""
    status: str
    """``in_progress`` while a batch of the round is, ``canceling``, or ``ended``."""
    requests: int
    """The round's requests."""
    counts: Mapping[str, int]
    """Summed over the round's batches: ``processing``, ``succeeded``, ``errored``,
    ``canceled``, ``expired`` (the API moves requests out of ``processing`` only once a whole
    batch has ended)."""
    polls: int
    """Polls of the round so far."""
    elapsed_s: float
    """Seconds since the round's polling began."""


class Observer:
    """What a caller sees of a run while it goes; every method does nothing here.

    The command line's progress bar and its notices on stderr are an observer; a Python caller
    passes its own subclass, or none.
    """

    def notice(self, text: str) -> None:
        """A line for the person running the suites (the backend in use, a warning)."""

    def started(self, runs: int) -> None:
        """The run begins; ``runs`` is the most runs it can take (adaptive plans stop sooner)."""

    def run_finished(self, *, error: bool) -> None:
        """One run ended; ``error``: it could not be judged (an API or CLI failure)."""

    def batch_polled(self, progress: BatchProgress) -> None:
        """A round of Message Batches was polled (``--batch``)."""

    def stopped(self) -> None:
        """No more runs will finish (the suites ended, or were interrupted)."""

    def interrupted(self, results: Any) -> None:
        """The run was interrupted; ``results`` holds what had finished (already written to the
        outputs, marked ``interrupted``). The interrupt is raised again after this."""
