"""The Anthropic SDK, imported in a thread of its own while a command gets ready.

Importing the SDK costs seconds of CPU (thousands of modules; far more on a loaded machine).
Done on the event loop, it would hold every run and every stop signal for that long: a command
that sends model requests calls :func:`start_import` as it starts, and awaits
:func:`sdk_imported` before its first request, so the loop waits without blocking and a stop
signal ends the command at once (:mod:`skilltest.preload`).
"""

from __future__ import annotations

from concurrent.futures import Future

from skilltest import preload

SDK_MODULE = "skilltest.runners.anthropic_api"
"""What is imported: the SDK runners' module, which imports the SDK."""

THREAD = "skilltest-sdk-import"
"""The importing thread's name."""


def start_import() -> Future[None]:
    """Starts importing the SDK in a daemon thread (once per process) and returns its future."""
    return preload.start((SDK_MODULE,), name=THREAD)


async def sdk_imported() -> None:
    """Returns once the SDK is imported (starting the import if no one has), without blocking
    the event loop meanwhile.

    Raises:
        ImportError: the SDK cannot be imported.
    """
    await preload.loaded((SDK_MODULE,), name=THREAD)
