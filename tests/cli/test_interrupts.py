"""Interrupts inside a command's event loop: they reach the command, never stderr as a traceback."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import sys
from asyncio.subprocess import PIPE

import pytest

from skilltest.flow.loop import Terminated, run_async, stop_signals_raise


async def signalled_while_a_task_computes() -> int:
    async def busy() -> None:
        await asyncio.sleep(0)
        os.kill(os.getpid(), signal.SIGTERM)  # arrives while this task runs Python code
        for _ in range(10**6):
            pass

    await asyncio.gather(busy(), asyncio.sleep(30))
    return 0


async def signalled_while_the_loop_waits() -> int:
    asyncio.get_running_loop().call_later(0.05, os.kill, os.getpid(), signal.SIGTERM)
    await asyncio.sleep(30)
    return 0


async def signalled_while_a_child_starts() -> int:
    # The signal comes before asyncio has connected the child's pipes (the callback runs
    # before that task's first step): the child is killed and must still be reported gone.
    asyncio.get_running_loop().call_soon(signal.raise_signal, signal.SIGTERM)
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(600)", stdout=PIPE, stderr=PIPE
    )
    await child.wait()
    return 0


@pytest.mark.parametrize(
    "main",
    [
        signalled_while_a_task_computes,
        signalled_while_the_loop_waits,
        signalled_while_a_child_starts,
    ],
    ids=["task", "loop", "child starting"],
)
def test_sigterm_in_the_loop_is_raised_once_and_nothing_is_logged(main, caplog):
    caplog.set_level(logging.DEBUG, logger="asyncio")
    with pytest.raises(Terminated) as raised, stop_signals_raise():
        run_async(main())
    assert raised.value.signum == signal.SIGTERM
    del raised  # its traceback holds the task alive
    gc.collect()  # asyncio reports an exception nobody retrieved when its task is collected
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def test_the_coroutine_result_is_returned():
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert run_async(answer()) == 42


@pytest.mark.parametrize(("stop", "exit_code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_server_stopped_while_its_banner_prints_says_it_stopped(stop, exit_code, capsys):
    from skilltest.cli import serve_until_stopped

    def banner():
        yield "listening on http://127.0.0.1:1"
        os.kill(os.getpid(), stop)  # a client that read the first line stops the server at once
        yield "  Ctrl-C stops"

    with stop_signals_raise():
        code = serve_until_stopped(banner(), lambda: "server stopped")

    out, err = capsys.readouterr()
    assert code == exit_code
    assert out == "listening on http://127.0.0.1:1\n"
    assert err == "server stopped\n"
