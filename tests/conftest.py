"""Shared fixtures (paths of the repository, the transcript corpus, the claude binary, the runs
of the example suites several files read), how pytest-xdist splits the suite between workers, and
how a stop signal ends the suite."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import pytest

from skilltest import groups
from skilltest.claude.binary import resolve_claude
from skilltest.errors import ClaudeNotFoundError

if TYPE_CHECKING:
    from xdist.remote import Producer
    from xdist.scheduler.protocol import Scheduling

    from tests.example_runs import LayerRun

REPO_ROOT = Path(__file__).resolve().parent.parent
CORPUS = REPO_ROOT / "tests" / "fixtures"
"""Real Claude Code output (stream-json and the other formats), kept in the repository."""
FAKE_CLAUDE = Path(__file__).with_name("fake_claude.py")


@pytest.fixture(autouse=True)
def _no_live_credentials(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach the live API: credentials from the developer's shell are removed.

    Only tests marked ``live`` (opt-in with ``pytest -m live``) keep them.
    """
    if request.node.get_closest_marker("live"):
        return
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture(autouse=True)
def _no_ci_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """The toolkit's own test runs never append to the CI job's step summary."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def claude_bin() -> Path:
    """The claude binary, found as the product finds it; skips with the reason when none.

    ``--claude``'s order: ``$SKILLTEST_CLAUDE``, ``.tools/`` (``make claude``), the cache of
    ``skilltest setup``, ``PATH``.
    """
    try:
        return resolve_claude(None).absolute()
    except ClaudeNotFoundError as exc:
        pytest.skip(f"no claude CLI: {exc}")


@pytest.fixture
def fake_claude(tmp_path: Path) -> Path:
    """An executable that behaves like ``claude -p`` in the ways ``fake_claude.py`` describes."""
    path = tmp_path / "bin" / "claude"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_CLAUDE}" "$@"\n')
    path.chmod(0o755)
    return path


@pytest.fixture(scope="session")
def example_scenarios(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], LayerRun]:
    """The example scenario suites as ``make test-scenarios`` runs them, made once per session
    when a test first calls it; its readers are listed in ``tests/example_runs.py``."""
    from tests import example_runs

    return example_runs.example_scenarios(tmp_path_factory)


@pytest.fixture(scope="session")
def example_triggers_replayed(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[], LayerRun]:
    """The example trigger suites replayed from the committed cassettes, made once per session
    when a test first calls it; its readers are listed in ``tests/example_runs.py``."""
    from tests import example_runs

    return example_runs.example_triggers_replayed(tmp_path_factory)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A shared run's readers are checked; an xdist worker puts the heaviest files first."""
    from tests import example_runs

    example_runs.check_readers(items)
    if hasattr(config, "workerinput"):
        from tests.work_units import heaviest_first

        items[:] = heaviest_first(items)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # optional: pytest -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Producer) -> Scheduling | None:
    """``--dist loadfile`` hands out the readers of a shared run together, heaviest first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.work_units import SharedRunScheduling

    return SharedRunScheduling(config, log)


# One stop signal ends the whole run of the suite, and what its tests started goes with it.
#
# SIGINT, SIGTERM and SIGHUP raise KeyboardInterrupt in every pytest process (pytest itself, or
# the xdist controller and each worker): pytest then stops, tears its fixtures down and exits 2.
# A test that runs a layer in-process (``skilltest.cli.main``) gets the signal as the command
# would: the command stops its children and returns 130 or 143, and the test would carry on to
# the next one. A signal a test did not send itself is remembered, so that the session stops
# as soon as that test's phase ends. The xdist controller passes the signal on to its workers.
# Each process adopts what its tests' children leave behind (a child subreaper on Linux) and
# kills it when the session ends.

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_own_signals = 0  # sent by a test to its own process, not yet received
_stop: int | None = None  # the stop signal that reached this process from outside
_real_kill = os.kill
_real_raise_signal = signal.raise_signal


def _outside_stop(signum: int) -> bool:
    """Whether a stop signal just received came from outside (then it is remembered)."""
    global _own_signals, _stop
    if _own_signals > 0:
        _own_signals -= 1
        return False
    if _stop is None:
        _stop = signum
    return True


def _on_stop_signal(signum: int, frame: FrameType | None) -> None:
    if _outside_stop(signum) and _is_controller:
        _stop_workers()
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _kill(pid: int, signum: int) -> None:
    global _own_signals
    if pid == os.getpid() and signum in STOP_SIGNALS:
        _own_signals += 1
    _real_kill(pid, signum)


def _raise_signal(signum: int) -> None:
    global _own_signals
    if signum in STOP_SIGNALS:
        _own_signals += 1
    _real_raise_signal(signum)


_is_controller = False


def _controller(config: pytest.Config) -> bool:
    """Whether this process hands the tests to xdist workers rather than running them."""
    return config.pluginmanager.hasplugin("dsession")


def pytest_configure(config: pytest.Config) -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    global _is_controller
    _is_controller = _controller(config)
    _become_subreaper()
    for sig in STOP_SIGNALS:
        signal.signal(sig, _on_stop_signal)
    if _controller(config):
        return
    os.kill = _kill
    signal.raise_signal = _raise_signal
    real_interrupt = groups.interrupt

    def interrupt() -> None:  # every stop signal a run's event loop receives comes here
        _outside_stop(signal.SIGINT)
        real_interrupt()

    groups.interrupt = interrupt
    config.add_cleanup(lambda: setattr(groups, "interrupt", real_interrupt))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _stop_after(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _stop_after(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    return (yield from _stop_after(item))


def _stop_after(item: pytest.Item) -> Generator[None, None, None]:
    global _own_signals
    try:
        yield
    finally:
        _own_signals = 0
        if _stop is not None:
            name = signal.Signals(_stop).name
            raise KeyboardInterrupt(f"{name} reached the suite while {item.nodeid} ran")


def pytest_keyboard_interrupt(excinfo: pytest.ExceptionInfo[BaseException]) -> None:
    """The controller passes the stop on to its workers (one worker was stopped, or a signal
    reached the controller alone); a process that runs tests kills what they left running."""
    if _is_controller:
        _stop_workers()
    else:
        _kill_descendants()


def _stop_workers() -> None:
    for pid in _children(os.getpid()):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            _real_kill(pid, signal.SIGINT)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """What the tests started and left running is killed (and its zombies reaped)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if not _controller(config):
        os.kill = _real_kill
        signal.raise_signal = _real_raise_signal
    _kill_descendants()


def _become_subreaper() -> None:
    """Orphans among this process's descendants become its children, not init's (Linux)."""
    if sys.platform != "linux":
        return
    import ctypes

    pr_set_child_subreaper = 36
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0)


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir() if Path("/proc/self").exists() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def _children(pid: int) -> list[int]:
    return [child for child, parent in _parents().items() if parent == pid]


def _kill_descendants() -> None:
    parents = _parents()
    me = os.getpid()
    found, frontier = [], [me]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid:
                found.append(child)
                frontier.append(child)
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            _real_kill(pid, signal.SIGKILL)
    for pid in found:
        if parents.get(pid) == me:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
