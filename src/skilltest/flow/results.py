"""A layer's results: what every layer's say of how the run went, and writing them as the runs
go, once they have ended, and when they are interrupted.

Each layer's results type (``PressureResults``, ``ScenarioResults``, ``TriggerResults``) is a
:class:`RunResults`. A layer keeps what its run has not finished yet as such a value (``base``)
and saves it: :func:`save_results` marks it complete, interrupted or stopped and writes the
outputs asked for; :func:`run_saving` runs the layer's runs and saves what they left, however
they ended. Between the first save and the last, a layer either saves again as each scenario or
query finishes (the scenario and trigger layers, whose runs take seconds each), or appends each
finished scenario to the results file's :class:`~skilltest.report.outputs.Journal` (the pressure
layer, whose suites run hundreds of scenarios a minute): a cost per scenario that does not grow
with the suite.
"""

from __future__ import annotations

import contextlib
import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeVar

from skilltest.cost.budget import Budget
from skilltest.flow.loop import run_async
from skilltest.flow.options import Observer
from skilltest.flow.shard import ShardPlan
from skilltest.flow.tape import Tape
from skilltest.report.junit import JUnitCase
from skilltest.report.outputs import Journal, Outputs, write_outputs
from skilltest.report.provenance import Provenance


@dataclass(frozen=True, kw_only=True)
class RunResults(ABC):
    """What the results of every layer's run say of how it went, finished or not, and what each
    layer's results give the outputs (:class:`skilltest.report.outputs.Reportable`)."""

    junit_name: ClassVar[str]
    """The JUnit test suite's name (``skilltest pressure``)."""

    complete: bool = True
    """Every scenario (or trigger query) finished."""
    interrupted: bool = False
    """The run was stopped (Ctrl-C, SIGTERM)."""
    tape: Tape = field(default_factory=Tape)
    """What was recorded or replayed."""
    cassettes_written: int = 0
    """Cassettes written (``record``, ``record_missing``)."""
    provenance: Provenance | None = None
    """What produced the results: backend, models, versions, date, suites, command line."""
    shard: ShardPlan | None = None
    """With ``--shard``: this shard's share of the run (``None``: the whole run)."""
    stopped: Mapping[str, Any] | None = None
    """``--max-cost-usd`` stopped the run before every run was made: ``by``, ``reason``,
    ``limit_usd``, ``spent_usd``, ``runs``; ``None`` otherwise."""

    @abstractmethod
    def to_document(self) -> dict[str, Any]:
        """The results file."""

    @abstractmethod
    def junit_cases(self) -> list[JUnitCase]:
        """One JUnit case per scenario (or query)."""


_R = TypeVar("_R", bound=RunResults)


class Recorder(Protocol):
    """What a run's cassette recorder shows here: the cassettes it has written, and a way to
    write the one an interrupt stopped."""

    @property
    def written(self) -> Collection[Any]: ...

    def flush(self) -> object: ...


def save_results(
    base: _R,
    outputs: Outputs,
    *,
    complete: bool,
    interrupted: bool,
    budget: Budget | None,
    recorder: Recorder | None,
    journal: Journal | None = None,
    **finished: Any,
) -> _R:
    """``base`` (a layer's results) with what has ``finished``, written to
    ``outputs`` (the Markdown and HTML ones only once the run has ended or was interrupted).

    The results are complete only when the run ended without ``budget`` stopping it, and count
    the cassettes ``recorder`` has written. Once the run has ended or was interrupted,
    ``journal`` (what was appended since the first save) is closed: the whole file replaces it.
    """
    stopped = None if budget is None else budget.stopped()
    results = dataclasses.replace(
        base,
        **finished,
        complete=complete and stopped is None,
        interrupted=interrupted,
        stopped=stopped,
        cassettes_written=len(getattr(recorder, "written", ())),
    )
    if journal is not None and (complete or interrupted):
        journal.close()
    write_outputs(results, outputs, final=complete or interrupted)
    return results


@contextlib.contextmanager
def saved_when_stopped(observer: Observer, save: Callable[..., RunResults]) -> Iterator[None]:
    """While inside (what a layer does before its first run: health checks, a wiring run), a
    stop signal saves the results as they stand (``save(complete=False, interrupted=True)``,
    shown to ``observer``) before it propagates, as :func:`run_saving` does during the runs."""
    try:
        yield
    except KeyboardInterrupt:
        observer.interrupted(save(complete=False, interrupted=True))
        raise


def run_saving(
    runs: Coroutine[Any, Any, Any],
    *,
    observer: Observer,
    save: Callable[..., _R],
    recorder: Recorder | None,
) -> _R:
    """Runs ``runs`` to their end and returns the results ``save(complete=True)`` writes.

    Interrupted, the cassette the interrupt stopped is written, what had finished is saved
    (``save(complete=False, interrupted=True)``) and shown to ``observer``, and the interrupt is
    raised again.
    """
    try:
        run_async(runs)
    except KeyboardInterrupt:
        observer.stopped()
        if recorder is not None:
            recorder.flush()  # a run whose cassette the interrupt stopped writing
        observer.interrupted(save(complete=False, interrupted=True))
        raise
    observer.stopped()
    return save(complete=True)
