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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from skilltest import __version__
from skilltest.cli.terminal import safe_output
from skilltest.errors import ConfigurationError, InputError, SkilltestError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_CANARY = 3
"""A canary scenario failed: the comparison results are not meaningful."""
EXIT_MAX_COST = 4
"""The run stopped at ``--max-cost-usd``: its results are incomplete."""
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141
STOPPED_CODES = frozenset({EXIT_INTERRUPTED, 128 + 15, 128 + 1})
"""The exit codes of a command a stop signal ended: SIGINT, SIGTERM, SIGHUP."""


def interrupted_exit_code(interrupt: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP."""
    from skilltest.flow.loop import Terminated

    return 128 + interrupt.signum if isinstance(interrupt, Terminated) else EXIT_INTERRUPTED


# Each module defines ``register(subparsers)``, which adds one command and sets its handler
# with ``parser.set_defaults(handler=...)``; a handler takes the parsed namespace and returns
# an exit code. Only the command being run is imported: the others are listed by name and help
# (``skilltest --help``, a mistyped command), which keeps every start-up short.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    (
        "emulator",
        "skilltest.cli.emulator_cmd",
        "run the offline model emulator (a scripted stand-in for the Anthropic API)",
    ),
    (
        "pressure",
        "skilltest.cli.pressure_cmd",
        "one-turn tests: does the skill change the answer? (the inner loop)",
    ),
    (
        "validate",
        "skilltest.cli.validate_cmd",
        "check suite files and model scripts without calling a model",
    ),
    (
        "scenarios",
        "skilltest.cli.scenarios_cmd",
        "end-to-end tests: does the skill change what the agent does? (the outer loop)",
    ),
    (
        "score",
        "skilltest.cli.score_cmd",
        "score an existing claude transcript against a scenario's rubric",
    ),
    (
        "lint",
        "skilltest.cli.lint_cmd",
        "check what skills and plugins ship, without calling a model",
    ),
    (
        "world",
        "skilltest.cli.world_cmd",
        "run a controlled world (fake services on their real hostnames) on its own",
    ),
    (
        "triggers",
        "skilltest.cli.triggers_cmd",
        "trigger tests: does the skill's description make it fire when it should?",
    ),
    (
        "report",
        "skilltest.cli.report_cmd",
        "views of results files already written (several combined: shards, layers)",
    ),
    (
        "merge",
        "skilltest.cli.merge_cmd",
        "the results files of a run's shards (--shard i/n) as one results file",
    ),
    (
        "compare",
        "skilltest.cli.compare_cmd",
        "what changed between two results files (a model or CLI upgrade, last week's run)",
    ),
    (
        "gate",
        "skilltest.cli.gate_cmd",
        "decide whether a skill may ship, from pressure, scenario and trigger results files",
    ),
    (
        "replay",
        "skilltest.cli.replay_cmd",
        "what a cassette folder holds: when and against what each was recorded, which are stale",
    ),
    (
        "mcp",
        "skilltest.cli.mcp_cmd",
        "MCP servers and their mocks: do a plugin's eval mocks still match the real server?",
    ),
    ("show", "skilltest.cli.show_cmd", "a run's trace (.trace.jsonl) as a readable timeline"),
    (
        "setup",
        "skilltest.cli.setup_cmd",
        "install the pinned Claude Code CLI into skilltest's cache (needs npm)",
    ),
    (
        "init",
        "skilltest.cli.init_cmd",
        "write a first pressure, scenario and trigger suite for a skill (or a plugin)",
    ),
)
"""Every command: its name, its module and the help line ``skilltest --help`` shows for it."""

COMMAND_MODULES: tuple[str, ...] = tuple(module for _, module, _ in COMMANDS)


def help_line(name: str) -> str:
    """The help line of command ``name``, as ``skilltest --help`` lists it and as its own
    parser is registered."""
    return next(line for command, _, line in COMMANDS if command == name)


def add_serve_command(
    subparsers: Any,
    name: str,
    *,
    description: str,
    serve_help: str,
    serve_description: str,
    more: Callable[[Any], None] | None = None,
) -> argparse.ArgumentParser:
    """Adds command ``name``, whose subcommand ``serve`` runs a server in the foreground
    (the emulator, a world), and returns the parser of ``serve`` for its arguments; ``more``
    adds further subcommands to the command's subparsers. The command without its subcommand
    prints its usage and exits with 2."""
    parser = subparsers.add_parser(name, help=help_line(name), description=description)
    actions = parser.add_subparsers(dest=f"{name}_command", metavar="SUBCOMMAND")
    serve = actions.add_parser("serve", help=serve_help, description=serve_description)
    if more is not None:
        more(actions)
    parser.set_defaults(handler=lambda args: _usage(parser))
    return serve


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_BAD_INPUT


def serve_until_stopped(banner: Iterable[str], stopped: Callable[[], str]) -> int:
    """Prints ``banner`` (what a client needs to connect), waits for a stop signal, prints the
    line ``stopped`` gives on stderr and returns the exit code of a stopped command (130 on
    Ctrl-C, 128 + the signal's number on SIGTERM or SIGHUP).

    A signal sent as soon as the banner's first line shows is a stop like any other: the banner
    is printed inside the wait."""
    import threading

    try:
        for line in banner:
            print(line, flush=True)
        threading.Event().wait()
    except KeyboardInterrupt as exc:
        print(stopped(), file=sys.stderr)
        return interrupted_exit_code(exc)
    raise AssertionError("the wait ends only by a stop signal")


def _command_in(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first argument that is not an option."""
    for arg in argv:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command in full, or, given the ``argv`` it is to parse,
    only the command that ``argv`` names in full and the others by name and help."""
    parser = argparse.ArgumentParser(
        prog="skilltest",
        description="Does your agent skill really change how the model behaves?",
    )
    parser.add_argument("--version", action="version", version=f"skilltest {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = None if argv is None else _command_in(argv)
    for name, module, help_line in COMMANDS:
        if argv is None or name == wanted:
            importlib.import_module(module).register(subparsers)
        else:
            subparsers.add_parser(name, help=help_line)
    return parser


def _command_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` ran: ``skilltest emulator serve``'s, not the
    top level's."""
    key = "command"
    while True:
        actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, key, None) if actions else None
        if not actions or name not in actions[0].choices:
            return parser
        parser = actions[0].choices[name]
        key = f"{name}_command"


SYNONYMS = {"--html": "--report", "--md": "--markdown"}
"""Options other tools name so, and what they are called here."""


def nearest_option(parser: argparse.ArgumentParser, typed: str) -> str | None:
    """The option of ``parser`` nearest to a mistyped one (``--repat``: ``--repeat``)."""
    import difflib

    flag = typed.split("=", 1)[0]
    options = [
        o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"
    ]
    if SYNONYMS.get(flag) in options:
        return SYNONYMS[flag]
    found = difflib.get_close_matches(flag, options, n=1, cutoff=0.7)
    return found[0] if found else None


def _unrecognized(
    parser: argparse.ArgumentParser, args: argparse.Namespace, unknown: Sequence[str]
) -> int:
    """What an argument the command does not know gets: the command's own usage and, for a
    mistyped option, the nearest one; exit 2."""
    command = _command_parser(parser, args)
    message = f"unrecognized arguments: {' '.join(unknown)}"
    first = next((arg for arg in unknown if arg.startswith("--")), None)
    nearest = nearest_option(command, first) if first is not None else None
    if nearest is not None:
        message += f" (did you mean {nearest}?)"
    command.print_usage(sys.stderr)
    print(f"{command.prog}: error: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(sys.argv[1:] if argv is None else argv)
    try:
        args, unknown = parser.parse_known_args(argv)
    except SystemExit as exc:  # usage errors (exit 2) and --help (exit 0), already printed
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    if unknown:
        return _unrecognized(parser, args, unknown)
    # A run records the command that started it in its results (its provenance).
    args.command_line = ("skilltest", *(sys.argv[1:] if argv is None else argv))
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    from skilltest.redact import declarations_kept_apart

    # No control character from a run or a file reaches the terminal; the secrets one command's
    # suites declare are that command's.
    with safe_output(), declarations_kept_apart():
        return _run(handler, args)


def console() -> None:
    """The ``skilltest`` command: :func:`main`, then exit with its code.

    A command a stop signal ended (130, 143, 129) has written what it keeps and stopped what it
    started; it exits at once, after the ``atexit`` handlers, without the interpreter's
    teardown of every module it imported (seconds on a loaded machine once the SDK is in), so
    that Ctrl-C ends it promptly.
    """
    code = main()
    if code in STOPPED_CODES:
        import atexit

        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()
        os._exit(code)
    sys.exit(code)


def _run(handler: Any, args: argparse.Namespace) -> int:
    """Runs a command's handler; an error, an interrupt or a closed pipe becomes its exit code."""
    from skilltest.flow.loop import stop_signals_raise

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
