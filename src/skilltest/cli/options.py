"""Options shared by the commands that run suites, and argparse value types."""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from skilltest.errors import InputError
from skilltest.limits import MAX_REPETITIONS
from skilltest.repetitions import AUTO, DEFAULT_MAX_K, DEFAULT_MIN_K, Repetitions, plan_for

N = TypeVar("N", int, float)


def number(
    convert: Callable[[str], N], accept: Callable[[N], bool], description: str
) -> Callable[[str], N]:
    """An argparse type: ``convert`` the text, refuse values ``accept`` rejects.

    The error reads ``<text> is not <description>``, e.g. ``0 is not a whole number >= 1``.
    """

    def parse(text: str) -> N:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text} is not {description}") from None
        if not accept(value):
            raise argparse.ArgumentTypeError(f"{text} is not {description}")
        return value

    return parse


positive_int = number(int, lambda v: v >= 1, "a whole number >= 1")
"""K, jobs, token limits."""
non_negative_int = number(int, lambda v: v >= 0, "a whole number >= 0")
"""Retries."""
positive_float = number(float, lambda v: math.isfinite(v) and v > 0, "a number above 0")
"""Seconds."""
unit_interval = number(float, lambda v: 0.0 <= v <= 1.0, "a number between 0 and 1")
"""Thresholds, temperatures (NaN is refused too)."""
tcp_port = number(int, lambda v: 0 <= v <= 65535, "a port number (0 to 65535)")
"""A TCP port; 0 lets the system choose."""
repetition_count = number(
    int,
    lambda v: 1 <= v <= MAX_REPETITIONS,
    f"a whole number from 1 to {MAX_REPETITIONS} (the most runs per arm skilltest takes)",
)
"""``--min-k``, ``--max-k``."""


def repetitions_option(text: str) -> int | str:
    """``-k``: a number of runs per arm, or ``auto`` for adaptive repetitions."""
    if text.strip().lower() == AUTO:
        return AUTO
    try:
        return repetition_count(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{text} is not a whole number from 1 to {MAX_REPETITIONS}, nor 'auto'"
        ) from None


def output_file(text: str) -> Path:
    """A file the run will write (``--results``, ``--junit``): checked before any model call."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name inside it")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot create {text}: {folder} is not a writable folder")
    return path


def add_plugin_dir_option(parser: argparse.ArgumentParser) -> None:
    """``--plugin-dir DIR``: the plugin under test, for every suite of the command."""
    parser.add_argument(
        "--plugin-dir",
        type=Path,
        metavar="DIR",
        help="a plugin folder to test instead of the suites' skill or plugin: its skills "
        "(and, in scenarios, its agents, commands, hooks and MCP servers)",
    )


def add_markdown_option(parser: argparse.ArgumentParser) -> None:
    """``--markdown FILE``: the run's summary in Markdown (see :func:`write_markdown`)."""
    parser.add_argument(
        "--markdown",
        type=output_file,
        metavar="FILE",
        help="write a Markdown summary here after the run (default with GITHUB_STEP_SUMMARY "
        "set: append it there)",
    )


def write_markdown(args: argparse.Namespace, document: dict[str, Any]) -> None:
    """After a run: the Markdown summary of its results ``document`` to ``--markdown``, else
    appended to ``$GITHUB_STEP_SUMMARY`` when set (a CI job's summary page)."""
    from skilltest.report.markdown import write_summary

    write_summary(
        document,
        markdown=args.markdown,
        step_summary=os.environ.get("GITHUB_STEP_SUMMARY"),
        cwd=Path.cwd(),
    )


def add_report_option(parser: argparse.ArgumentParser) -> None:
    """``--report FILE.html``: the run's HTML report (see :func:`write_report`)."""
    parser.add_argument(
        "--report",
        type=output_file,
        metavar="FILE.html",
        help="write the HTML report here after the run (one self-contained file: tables, "
        "plots, every run's transcript)",
    )


def write_report(args: argparse.Namespace, document: dict[str, Any]) -> None:
    """After a run: the HTML report of its results ``document`` to ``--report``, when given."""
    if getattr(args, "report", None) is None:
        return
    from skilltest.report.files import write_report as write_redacted
    from skilltest.report.html import render_html
    from skilltest.report.markdown import Document

    write_redacted(args.report, render_html([Document("-", document)], cwd=Path.cwd()))


def add_common_run_options(parser: argparse.ArgumentParser, *, backends: Sequence[str]) -> None:
    """Options every suite-running command has."""
    parser.add_argument(
        "--skills-dir", type=Path, help="folder holding <skill>/SKILL.md (default: nearest skills/)"
    )
    add_plugin_dir_option(parser)
    parser.add_argument("--skill", help="skill name for suites that do not name one")
    parser.add_argument(
        "--backend",
        choices=backends,
        help="where answers come from (default: live when credentials are set, else emulator)",
    )
    parser.add_argument(
        "--script", type=Path, help="emulator model script (default: the suite's model_script)"
    )
    parser.add_argument(
        "--claude", type=Path, help="claude binary (default: $SKILLTEST_CLAUDE, .tools/, PATH)"
    )
    parser.add_argument(
        "-k",
        "--repeat",
        type=repetitions_option,
        metavar="K",
        help="runs per arm, or 'auto': stop each scenario once its verdict is decided "
        "(default: the suite's repetitions, else auto)",
    )
    parser.add_argument(
        "--min-k",
        type=repetition_count,
        default=DEFAULT_MIN_K,
        metavar="N",
        help=f"-k auto: runs per arm before the first look (default {DEFAULT_MIN_K})",
    )
    parser.add_argument(
        "--max-k",
        type=repetition_count,
        default=DEFAULT_MAX_K,
        metavar="N",
        help=f"-k auto: the most runs per arm; still undecided then: inconclusive "
        f"(default {DEFAULT_MAX_K})",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="DIR",
        help="record every model exchange (and MCP message) into cassettes under DIR",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="DIR",
        help="answer from the cassettes under DIR only: no API, no key, no emulator script",
    )
    parser.add_argument(
        "--record-missing",
        action="store_true",
        help="with --replay: run live and record what the cassettes do not hold",
    )
    parser.add_argument(
        "--allow-inconclusive",
        action="store_true",
        help="do not fail on inconclusive scenarios (their intervals do not decide yet)",
    )
    parser.add_argument(
        "-j", "--jobs", type=positive_int, default=4, metavar="N", help="runs in flight at once (4)"
    )
    parser.add_argument(
        "--results", type=output_file, metavar="FILE", help="write results JSON here"
    )
    parser.add_argument("--junit", type=output_file, metavar="FILE", help="write JUnit XML here")
    add_markdown_option(parser)
    add_report_option(parser)
    parser.add_argument(
        "--skill-only", action="store_true", help="run only the with-skill arm (no baseline)"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="ID",
        help="run only scenarios whose id matches this glob, e.g. 'index-*' (repeatable)",
    )


@dataclass(frozen=True)
class Tape:
    """What ``--record``, ``--replay`` and ``--record-missing`` ask of a run."""

    directory: Path | None
    """The cassette folder."""
    recording: bool
    """Model exchanges go to the backend through a recording point and into cassettes."""
    replaying: bool
    """Answers come from the cassettes first."""
    record_missing: bool
    """What the cassettes miss runs live and is recorded."""

    def to_dict(self, *, misses: Sequence[str] = ()) -> dict[str, Any] | None:
        """How a results file records it; ``None`` when nothing was recorded or replayed."""
        if self.directory is None:
            return None
        mode = "record-missing" if self.record_missing else "replay" if self.replaying else "record"
        return {
            "mode": mode,
            "directory": str(self.directory),
            "misses": list(misses),
        }


def refuse_against_with_tape(against: str | None, tape: Tape) -> None:
    """``--against`` with ``--record``/``--replay`` is refused: the previous revision's requests
    are in no cassette, so it always runs live.

    Raises:
        InputError: both were given.
    """
    if against is not None and tape.directory is not None:
        raise InputError(
            "--against runs the previous revision live; it does not record or replay",
            location=f"--against {against}",
            fix="drop the cassette options for a revision A/B run",
        )


def tape_mode(args: argparse.Namespace, *, layer: str) -> Tape:
    """``--record``, ``--replay`` and ``--record-missing``, checked.

    Raises:
        InputError: ``--record`` with ``--replay``, ``--record-missing`` without ``--replay``,
            or a ``--replay`` folder that does not exist.
    """
    if args.record is not None and args.replay is not None:
        raise InputError(
            "--record and --replay exclude each other",
            location="--record",
            fix="record with --record DIR; replay with --replay DIR, adding --record-missing "
            "to record what the cassettes lack",
        )
    if args.record_missing and args.replay is None:
        raise InputError(
            "--record-missing needs --replay DIR",
            location="--record-missing",
            fix="--replay DIR --record-missing replays what DIR holds and records the rest",
        )
    if args.replay is not None and not args.replay.is_dir():
        raise InputError(
            f"no cassette folder at {args.replay}",
            location="--replay",
            fix=f"record one first: skilltest {layer} --record {args.replay}",
        )
    return Tape(
        directory=args.record or args.replay,
        recording=args.record is not None or args.record_missing,
        replaying=args.replay is not None,
        record_missing=args.record_missing,
    )


def miss_summary(misses: Sequence[Any]) -> str:
    """The closing line of a run whose cassettes missed requests."""
    return (
        f"{len(misses)} replay miss{'es' if len(misses) != 1 else ''}: re-record with --record "
        "(or --record-missing)"
    )


class _HasRepetitions(Protocol):
    @property
    def repetitions(self) -> int | None: ...


def repetition_plan(args: argparse.Namespace) -> Callable[[_HasRepetitions], Repetitions]:
    """Each scenario's plan from ``-k``, ``--min-k``, ``--max-k`` and its suite.

    Raises:
        InputError: ``--min-k`` above ``--max-k``.
    """
    if args.min_k > args.max_k:
        raise InputError(
            f"--min-k {args.min_k} is above --max-k {args.max_k}",
            location="--min-k",
            fix="give --min-k at most --max-k",
        )

    def plan(scenario: _HasRepetitions) -> Repetitions:
        return plan_for(args.repeat, scenario.repetitions, min_k=args.min_k, max_k=args.max_k)

    return plan


class _Suite(Protocol):
    @property
    def scenarios(self) -> tuple[Any, ...]: ...


SuiteT = TypeVar("SuiteT", bound=_Suite)


def select_scenarios(suites: Sequence[SuiteT], only: Sequence[str] | None) -> list[SuiteT]:
    """The suites with only the scenarios whose id matches one of the ``--only`` globs.

    Raises:
        InputError: no scenario matches, naming the ids there are.
    """
    if not only:
        return list(suites)
    selected = []
    for suite in suites:
        kept = tuple(
            s for s in suite.scenarios if any(fnmatch.fnmatchcase(s.id, glob) for glob in only)
        )
        if kept:
            selected.append(dataclasses.replace(suite, scenarios=kept))  # type: ignore[type-var]
    if not selected:
        ids = sorted({s.id for suite in suites for s in suite.scenarios})
        raise InputError(
            "matches no scenario",
            location="--only " + " ".join(only),
            fix="use one of the ids (globs like 'index-*' work): " + ", ".join(ids),
        )
    return selected


def check_unique_scenarios(entries: Sequence[tuple[str, str, str]]) -> None:
    """Refuses one (skill, scenario id) in two suites: reports and kept output would mix them.

    Args:
        entries: ``(skill, scenario id, file#/pointer)`` of every scenario to run.

    Raises:
        InputError: naming both places.
    """
    seen: dict[tuple[str, str], str] = {}
    for skill, scenario_id, location in entries:
        first = seen.setdefault((skill, scenario_id), location)
        if first != location:
            raise InputError(
                f"scenario {skill}/{scenario_id} is also defined at {first}",
                location=location,
                fix="give one of them another id, or run the suites separately",
            )
