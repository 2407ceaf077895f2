"""The command line: the only place that prints or exits.

Exit codes: 0 a green run, 1 failing tests, 2 bad input or usage, 3 a canary failed (the
comparison results are not meaningful), 130 interrupted (Ctrl-C), 143 terminated (SIGTERM, how CI
systems cancel a job), 129 hung up (SIGHUP), 141 the reader of the output went away.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from types import FrameType

from skilltest import __version__
from skilltest.errors import ConfigurationError, InputError, SkilltestError
from skilltest.flow.loop import run_async  # noqa: F401  (the commands run through it)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_CANARY = 3
"""A canary scenario failed: the comparison results are not meaningful."""
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""Signals that stop a run the way Ctrl-C does."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: the run stops as on Ctrl-C (children stopped, sandboxes removed,
    results marked interrupted) and exits with 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def interrupted_exit_code(interrupt: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + interrupt.signum if isinstance(interrupt, Terminated) else EXIT_INTERRUPTED


@contextlib.contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise :class:`Terminated` like Ctrl-C raises
    ``KeyboardInterrupt`` (main thread only; elsewhere nothing changes)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated(signum)

    previous = {}
    try:
        for sig in STOP_SIGNALS:
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread (an embedding application): leave signals alone
        pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


# Each module defines ``register(subparsers)``, which adds one command and sets its handler
# with ``parser.set_defaults(handler=...)``; a handler takes the parsed namespace and returns
# an exit code.
COMMAND_MODULES: tuple[str, ...] = (
    "skilltest.cli.emulator_cmd",
    "skilltest.cli.pressure_cmd",
    "skilltest.cli.validate_cmd",
    "skilltest.cli.scenarios_cmd",
    "skilltest.cli.score_cmd",
    "skilltest.cli.lint_cmd",
    "skilltest.cli.world_cmd",
    "skilltest.cli.triggers_cmd",
    "skilltest.cli.report_cmd",
    "skilltest.cli.compare_cmd",
    "skilltest.cli.gate_cmd",
    "skilltest.cli.show_cmd",
    "skilltest.cli.setup_cmd",
    "skilltest.cli.init_cmd",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="skilltest",
        description="Does your agent skill really change how the model behaves?",
    )
    parser.add_argument("--version", action="version", version=f"skilltest {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (exit 2) and --help (exit 0), already printed
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        with stop_signals_interrupt():
            return int(handler(args))
    except (InputError, ConfigurationError) as exc:
        print(f"skilltest: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SkilltestError as exc:
        print(f"skilltest: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt as exc:
        print("skilltest: interrupted", file=sys.stderr)
        return interrupted_exit_code(exc)
    except BrokenPipeError:
        # The reader went away (`skilltest ... | head`): stop quietly, as other CLI tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
