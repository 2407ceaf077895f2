"""Running a layer's asynchronous work from synchronous code, interrupts kept whole.

A stop signal (Ctrl-C's SIGINT, SIGTERM as CI systems cancel a job, SIGHUP) that arrives while a
run's event loop runs cancels every task of the run: every worker unwinds where it waits (its
``claude`` process group killed without a grace, its servers closed, its sandbox removed), while
asyncio's own tasks (connecting a child process's pipes) end by themselves, so that a process
being started as the signal comes can still be reported gone. The signal is then raised as
:class:`KeyboardInterrupt` (:class:`Terminated` for SIGTERM and SIGHUP), however the run
ended meanwhile. A cancellation can be swallowed on its way (a gathered error completing first),
so the signal is remembered here rather than read from how the task ended. A second signal while
the run unwinds raises at once.

A run in a thread other than the main one (each cell of a matrix runs side by side in one) has
no signal of its own: the main thread, which the signal reaches, stops every such run with
:func:`stop_runs`, which cancels its tasks as the signal would, and its ``run_async`` raises the
signal once it has unwound.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from skilltest import groups

_T = TypeVar("_T")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a run."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the run stops as on Ctrl-C (children stopped, sandboxes removed,
    results marked interrupted) and exits with 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_ELSEWHERE: dict[int, Callable[[int], None]] = {}
"""How to stop the run going on in each thread other than the main one, by the thread's id."""
_ELSEWHERE_LOCK = threading.Lock()
_STOPPED: list[int] = []
"""The signal :func:`stop_runs` passed on, until :func:`runs_may_start`: a run that starts in
another thread meanwhile stops at once."""


def stop_runs(signum: int, *, received: bool = True) -> None:
    """Stops every run going on in a thread other than the main one as ``signum`` stops a run
    in the main thread (its tasks cancelled, the signal raised from its ``run_async`` once it
    has unwound), and every run such a thread starts from now on, until
    :func:`runs_may_start`. ``received``: the signal reached the process (its children are
    then stopped without a grace); otherwise the runs are stopped for another reason (a run
    beside them met bad input), as the signal would stop them."""
    if received:
        groups.interrupt()
    with _ELSEWHERE_LOCK:
        _STOPPED.append(signum)
        stops = list(_ELSEWHERE.values())
    for stop in stops:
        stop(signum)


def runs_may_start() -> None:
    """Ends what :func:`stop_runs` began: the runs it stopped have unwound."""
    with _ELSEWHERE_LOCK:
        _STOPPED.clear()
    groups.clear_interrupt()


def interrupt_for(signum: int) -> KeyboardInterrupt:
    """The exception a stop signal is raised as."""
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise :class:`Terminated` as Ctrl-C raises
    ``KeyboardInterrupt`` (main thread only; elsewhere nothing changes)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated(signum)

    with _handlers(handler, (signal.SIGTERM, signal.SIGHUP)):
        yield


@contextmanager
def _handlers(handler: Any, signals: tuple[signal.Signals, ...]) -> Iterator[bool]:
    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in signals:
            previous[sig] = signal.signal(sig, handler)
    try:
        yield bool(previous)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_async(main: Coroutine[Any, Any, _T]) -> _T:
    """Runs ``main`` to its end on an event loop of its own; a stop signal meanwhile cancels it
    and is raised once it has unwound (see the module's docstring).

    Called from inside a running event loop (a notebook, an async test), the run gets a thread
    and a loop of its own rather than failing; signals are then the caller's.
    """
    import asyncio  # only what runs something needs the event loop

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="skilltest") as pool:
            return pool.submit(asyncio.run, main).result()

    received: list[int] = []
    with asyncio.Runner() as runner:
        loop = runner.get_loop()
        task = loop.create_task(main)

        def on_signal(signum: int, frame: FrameType | None) -> None:
            received.append(signum)
            groups.interrupt()  # a child stopped from now on gets no grace
            if len(received) > 1:
                raise interrupt_for(signum)  # a second signal: no more waiting
            # Every task, not only the main one: a worker already stopping its claude process
            # (granting it a grace to exit) is cut short, and a cancellation a gathered error
            # swallowed on the way down still reaches the workers.
            for each in asyncio.all_tasks(loop):
                if not _asyncio_own(each):
                    each.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wakes a loop blocked in select()

        def from_elsewhere(signum: int) -> None:
            # Called in the main thread: the tasks are cancelled in the loop's own.
            received.append(signum)

            def cancel() -> None:
                for each in asyncio.all_tasks(loop):
                    if not _asyncio_own(each):
                        each.cancel()

            loop.call_soon_threadsafe(cancel)

        elsewhere = threading.current_thread() is not threading.main_thread()
        if elsewhere:
            with _ELSEWHERE_LOCK:
                _ELSEWHERE[threading.get_ident()] = from_elsewhere
                if _STOPPED:
                    from_elsewhere(_STOPPED[0])
        with _handlers(on_signal, STOP_SIGNALS):
            try:
                result = loop.run_until_complete(task)
            except BaseException as exc:
                if received and not isinstance(exc, KeyboardInterrupt):
                    raise interrupt_for(received[0]) from None
                raise
            finally:
                if elsewhere:
                    with _ELSEWHERE_LOCK:
                        _ELSEWHERE.pop(threading.get_ident(), None)
                _wind_down(loop)
                if not elsewhere:
                    groups.clear_interrupt()
    if received:
        raise interrupt_for(received[0])
    return result


def _asyncio_own(task: Any) -> bool:
    """Whether ``task`` is asyncio's own machinery rather than the run's: connecting a child
    process's pipes, say. Cancelled half way, that task leaves the process unable ever to be
    reported gone, and whoever waits for it (a run stopping its ``claude`` process) waits for
    ever; left alone, it ends at once by itself."""
    import asyncio

    code = getattr(task.get_coro(), "cr_code", None)
    return code is not None and Path(code.co_filename).parent == Path(asyncio.__file__).parent


def _wind_down(loop: Any) -> None:
    """Lets what the run left running end while its loop is still open: tasks still pending
    are cancelled and waited for, and what they held (a killed ``claude`` process's transport)
    is collected now, not once the loop is closed, where asyncio would print an error for it."""
    import asyncio
    import gc

    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    gc.collect()
