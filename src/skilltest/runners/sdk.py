"""The Anthropic SDK, imported in a thread of its own while a command gets ready.

Importing the SDK costs seconds of CPU (thousands of modules; far more on a loaded machine).
Done on the event loop, it would hold every run and every stop signal for that long: a command
that sends model requests calls :func:`start_import` as it starts, and awaits
:func:`sdk_imported` before its first run, so the loop waits without blocking and a stop signal
ends the command at once. The importing thread is a daemon: a command stopped meanwhile exits
without waiting for it.
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from concurrent.futures import Future

SDK_MODULE = "skilltest.runners.anthropic_api"
"""What is imported: the SDK runners' module, which imports the SDK."""

_lock = threading.Lock()
_import: Future[None] | None = None


def start_import() -> Future[None]:
    """Starts importing the SDK in a daemon thread (once per process) and returns its future."""
    global _import
    with _lock:
        if _import is None:
            future: Future[None] = Future()
            future.set_running_or_notify_cancel()  # a waiter's cancellation never cancels it

            def work() -> None:
                try:
                    importlib.import_module(SDK_MODULE)
                except BaseException as exc:  # the waiter raises it (the SDK is not installed)
                    future.set_exception(exc)
                else:
                    future.set_result(None)

            threading.Thread(target=work, name="skilltest-sdk-import", daemon=True).start()
            _import = future
        return _import


async def sdk_imported() -> None:
    """Returns once the SDK is imported (starting the import if no one has), without blocking
    the event loop meanwhile.

    Raises:
        ImportError: the SDK cannot be imported.
    """
    future = start_import()
    if not future.done():
        await asyncio.wrap_future(future)
    future.result()
