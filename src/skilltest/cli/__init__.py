"""The command line: the only place that prints or exits.

Exit codes: 0 a green run, 1 failing tests, 2 bad input or usage, 3 a canary failed (the
comparison results are not meaningful), 4 stopped by ``--max-cost-usd`` before every run was
made (the results written are marked ``stopped``), 130 interrupted (Ctrl-C), 143 terminated
(SIGTERM, how CI systems cancel a job), 129 hung up (SIGHUP), 141 the reader of the output went
away.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from skilltest import __version__
from skilltest.cli.terminal import safe_output
from skilltest.errors import ConfigurationError, InputError, SkilltestError
from skilltest.flow.loop import (  # noqa: F401  (the commands run through run_async)
    Terminated,
    run_async,
    stop_signals_raise,
)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_CANARY = 3
"""A canary scenario failed: the comparison results are not meaningful."""
EXIT_MAX_COST = 4
"""The run stopped at ``--max-cost-usd``: its results are incomplete."""
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141


def interrupted_exit_code(interrupt: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    return 128 + interrupt.signum if isinstance(interrupt, Terminated) else EXIT_INTERRUPTED


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
    "skilltest.cli.merge_cmd",
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
    # A run records the command that started it in its results (its provenance).
    args.command_line = ("skilltest", *(sys.argv[1:] if argv is None else argv))
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    with safe_output():  # no control character from a run or a file reaches the terminal
        return _run(handler, args)


def _run(handler: Any, args: argparse.Namespace) -> int:
    """Runs a command's handler; an error, an interrupt or a closed pipe becomes its exit code."""
    try:
        with stop_signals_raise():
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
