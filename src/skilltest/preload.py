"""Heavy modules imported in a thread of their own while a command gets ready.

Importing the Anthropic SDK costs more than a second of CPU (thousands of modules), pandas and
SciPy's statistics a few tenths more, and far longer on a loaded machine. Done on the event
loop, an import would hold every run and every stop signal for that long. A command starts the
imports it will need as it starts (:func:`start`), and a coroutine that needs one of them awaits
:func:`loaded` first, so the loop waits without blocking; most often the import is long done by
then, made while the first runs were under way.

The cyclic garbage collector stays off while a thread imports (an import makes objects that
live as long as the process, and collecting over and over as they pile up costs a tenth of the
import), and what the imports made is then frozen out of every later collection
(``gc.freeze``), so that a full collection does not walk the SDK's hundreds of thousands of
objects again. Each importing thread is a daemon: a command stopped meanwhile exits without
waiting for it.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import threading
from concurrent.futures import Future

_lock = threading.Lock()
_imports: dict[str, Future[None]] = {}
_importing = 0
"""Threads importing now: the collector is off while there is one."""
_collector_was_on = False


def start(modules: tuple[str, ...], *, name: str = "skilltest-import") -> Future[None]:
    """Starts importing ``modules`` in order in a daemon thread called ``name`` (each module at
    most once per process) and returns the future of the last one.

    Raises:
        ValueError: ``modules`` is empty.
    """
    if not modules:
        raise ValueError("nothing to import")
    with _lock:
        wanted = [module for module in modules if module not in _imports]
        for module in wanted:
            future: Future[None] = Future()
            future.set_running_or_notify_cancel()  # a waiter's cancellation never cancels it
            _imports[module] = future
        if wanted:
            threading.Thread(target=_work, args=(wanted,), name=name, daemon=True).start()
        return _imports[modules[-1]]


def _work(modules: list[str]) -> None:
    _collector_off()
    try:
        for module in modules:
            future = _imports[module]
            try:
                importlib.import_module(module)
            except BaseException as exc:  # its waiter raises it (a library not installed)
                future.set_exception(exc)
            else:
                future.set_result(None)
    finally:
        _collector_back()


def _collector_off() -> None:
    global _importing, _collector_was_on
    with _lock:
        if _importing == 0:
            _collector_was_on = gc.isenabled()
            gc.disable()
        _importing += 1


def _collector_back() -> None:
    global _importing
    with _lock:
        _importing -= 1
        if _importing == 0:
            gc.freeze()  # what the imports made lives as long as the process
            if _collector_was_on:
                gc.enable()


async def loaded(modules: tuple[str, ...], *, name: str = "skilltest-import") -> None:
    """Returns once ``modules`` are imported (starting what no one has started, in a thread
    called ``name``), without blocking the event loop meanwhile.

    Raises:
        ImportError: a module cannot be imported.
    """
    start(modules, name=name)
    for module in modules:
        future = _imports[module]
        if not future.done():
            await asyncio.wrap_future(future)
        future.result()
