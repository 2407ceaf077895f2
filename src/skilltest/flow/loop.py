"""Running a layer's asynchronous work from synchronous code, interrupts kept whole."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")


def run_async(main: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run`` for a command: an interrupt reaches the caller as itself, and only there.

    Ctrl-C, SIGTERM and SIGHUP raise where Python happens to be. Raised while a task runs Python
    code (an import, a parse) rather than while the loop waits, the interrupt also ends that
    task, and asyncio would print it to stderr as a task exception never retrieved: a traceback
    the person who pressed Ctrl-C should not see. The outermost task keeps it instead.
    """
    import asyncio  # only what runs something needs the event loop
    import concurrent.futures

    stopped: list[KeyboardInterrupt] = []

    async def guarded() -> _T | None:
        try:
            return await main
        except KeyboardInterrupt as exc:
            stopped.append(exc)
            return None

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        result = asyncio.run(guarded())
    else:
        # Called from inside a running event loop (a notebook, an async test): the run gets a
        # thread and a loop of its own rather than failing.
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="skilltest") as pool:
            result = pool.submit(asyncio.run, guarded()).result()
    if stopped:
        raise stopped[0]
    return result  # type: ignore[return-value]  # None only when interrupted
