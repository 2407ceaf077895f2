"""Writing a layer's results as its runs go, once they have ended, and when they are interrupted.

A layer keeps what its run has not finished yet as a results value (``base``) and saves it each
time a scenario or query finishes: :func:`save_results` marks it complete, interrupted or
stopped and writes the outputs asked for; :func:`run_saving` runs the layer's runs and saves
what they left, however they ended.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Coroutine
from typing import Any, Protocol, TypeVar

from skilltest.cost.budget import Budget
from skilltest.flow.loop import run_async
from skilltest.flow.options import Observer
from skilltest.report.outputs import Outputs, Reportable, write_outputs

_R = TypeVar("_R", bound=Reportable)


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
    **finished: Any,
) -> _R:
    """``base`` (a layer's results, a frozen dataclass) with what has ``finished``, written to
    ``outputs`` (the Markdown and HTML ones only once the run has ended or was interrupted).

    The results are complete only when the run ended without ``budget`` stopping it, and count
    the cassettes ``recorder`` has written.
    """
    stopped = None if budget is None else budget.stopped()
    results: _R = dataclasses.replace(
        base,  # type: ignore[type-var]
        **finished,
        complete=complete and stopped is None,
        interrupted=interrupted,
        stopped=stopped,
        cassettes_written=len(getattr(recorder, "written", ())),
    )
    write_outputs(results, outputs, final=complete or interrupted)
    return results


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
