"""The command line's options: argparse value types, the options every suite command has, and
:func:`options_from`, the one function that turns parsed arguments into a layer's options."""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from skilltest.cli.plugin_options import add_plugin_dir_option, check_plugin_choice
from skilltest.errors import InputError
from skilltest.flow.shard import Shard
from skilltest.limits import MAX_REPETITIONS
from skilltest.repetitions import (
    AUTO,
    DEFAULT_MAX_K,
    DEFAULT_MIN_K,
    PRESSURE_MAX_K,
    TRIGGERS_MAX_K,
)

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
    from skilltest.report.files import OUTPUT_FIX, output_problem

    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name inside it")
    problem = output_problem(path)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"cannot write {text}: {problem} ({OUTPUT_FIX})")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot create {text}: {folder} is not a writable folder")
    return path


def add_agent_option(parser: argparse.ArgumentParser, *, runs: str) -> None:
    """``--agent NAME``: the agent ``runs`` go through (docs/agents.md)."""
    parser.add_argument(
        "--agent",
        metavar="NAME",
        help=f"the agent the {runs} run in: claude-code (default), opencode, codex or "
        "gemini (docs/agents.md); another agent's executable is found at "
        "$SKILLTEST_OPENCODE, $SKILLTEST_CODEX or $SKILLTEST_GEMINI, or in the cache "
        "`skilltest setup --agent NAME` fills",
    )


def add_suite_arguments(parser: argparse.ArgumentParser, *, default_dir: Path) -> None:
    """The suites and where their answers come from: what every suite command takes first."""
    parser.add_argument(
        "suites",
        nargs="*",
        type=Path,
        metavar="SUITE",
        help=f"suite files, folders or names (lgtm: {default_dir}/**/lgtm.yaml; "
        f"default: {default_dir}/)",
    )
    parser.add_argument(
        "--skills-dir", type=Path, help="folder holding <skill>/SKILL.md (default: nearest skills/)"
    )


def add_backend_options(parser: argparse.ArgumentParser, *, backends: Sequence[str]) -> None:
    """``--backend``, ``--script``, ``--claude``."""
    parser.add_argument(
        "--backend",
        choices=backends,
        help="where answers come from (default: live when credentials are set, else emulator)",
    )
    parser.add_argument(
        "--script", type=Path, help="emulator model script (default: the suite's model_script)"
    )
    parser.add_argument(
        "--claude",
        type=Path,
        help="claude binary (default: $SKILLTEST_CLAUDE, .tools/, the cache `skilltest setup` "
        "fills (~/.cache/skilltest, or $SKILLTEST_CACHE_DIR), PATH)",
    )


def add_output_options(parser: argparse.ArgumentParser, *, only: str, example: str) -> None:
    """``-j``, ``--only`` and the files a run writes."""
    parser.add_argument(
        "-j", "--jobs", type=positive_int, default=4, metavar="N", help="runs in flight at once (4)"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="ID",
        help=f"run only {only} whose id matches this glob, e.g. '{example}' (repeatable)",
    )
    parser.add_argument(
        "--results", type=output_file, metavar="FILE", help="write results JSON here"
    )
    parser.add_argument("--junit", type=output_file, metavar="FILE", help="write JUnit XML here")
    parser.add_argument(
        "--markdown",
        type=output_file,
        metavar="FILE",
        help="write a Markdown summary here after the run (default with GITHUB_STEP_SUMMARY "
        "set: append it there)",
    )
    parser.add_argument(
        "--report",
        type=output_file,
        metavar="FILE.html",
        help="write the HTML report here after the run (one self-contained file: tables, "
        "plots, every run's transcript)",
    )


def shard_option(text: str) -> Shard:
    """``--shard i/n``."""
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_scale_options(parser: argparse.ArgumentParser, *, unit: str) -> None:
    """``--shard``, ``--durations``, ``--dry-run`` and ``--max-cost-usd``: one machine's share of
    a run, and what a run costs before and while it goes."""
    from skilltest.cli import EXIT_MAX_COST

    parser.add_argument(
        "--shard",
        type=shard_option,
        metavar="I/N",
        help=f"run only shard I of N: a stable split by {unit}; skilltest merge puts the "
        "shards' results files back together",
    )
    parser.add_argument(
        "--durations",
        type=Path,
        metavar="RESULTS.json",
        help="with --shard: balance the shards by the durations recorded in this results "
        "file of an earlier run (default: a hash of each name)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the calls the run would make and an estimate of its tokens and cost, "
        "and call nothing",
    )
    parser.add_argument(
        "--max-cost-usd",
        type=positive_float,
        metavar="X",
        help="start no new run once the cost so far plus the estimate of the runs in flight "
        f"would pass X US dollars; the results are marked stopped (exit {EXIT_MAX_COST})",
    )


def add_against_option(
    parser: argparse.ArgumentParser,
    *,
    what: str,
    each: str = "an arm of its own sharing the one without-skill arm",
) -> None:
    """``--against REF``, which may be given more than once (``each``: what each REF runs as)."""
    parser.add_argument(
        "--against",
        metavar="REF",
        action="append",
        help="also run the skill as it was at REF (a git revision of the skill's repository, or "
        f"a folder){what}; give it again for more revisions, each {each}",
    )


def add_repetition_options(
    parser: argparse.ArgumentParser,
    *,
    unit: str = "arm",
    item: str = "scenario",
    aliases: Sequence[str] = (),
) -> None:
    """``-k``, ``--min-k``, ``--max-k`` and ``--allow-inconclusive``: how many runs, fixed or
    adaptive, and whether an undecided verdict fails the run.

    Args:
        parser: The command's parser.
        unit: What K counts runs of (``arm``; the trigger layer's ``query``).
        item: What a verdict is about (``scenario``; ``query``).
        aliases: Other names of ``-k`` (the trigger layer's ``--runs-per-query``, as
            skill-creator calls it).
    """
    also = f"; {', '.join(aliases)} is another name for it" if aliases else ""
    parser.add_argument(
        "-k",
        "--repeat",
        *aliases,
        type=repetitions_option,
        metavar="K",
        help=f"runs per {unit}, or 'auto': stop each {item} once its verdict is decided "
        f"(default: the suite's repetitions, else auto){also}",
    )
    parser.add_argument(
        "--min-k",
        type=repetition_count,
        default=DEFAULT_MIN_K,
        metavar="N",
        help=f"-k auto: runs per {unit} before the first look (default {DEFAULT_MIN_K})",
    )
    parser.add_argument(
        "--max-k",
        type=repetition_count,
        metavar="N",
        help=f"-k auto: the most runs per {unit}; still undecided then: inconclusive "
        f"(default {DEFAULT_MAX_K}; pressure {PRESSURE_MAX_K}, triggers {TRIGGERS_MAX_K})",
    )
    parser.add_argument(
        "--allow-inconclusive",
        action="store_true",
        help=f"do not fail on inconclusive {item} verdicts (their intervals do not decide yet)",
    )


def add_compared_options(parser: argparse.ArgumentParser) -> None:
    """What the two layers that compare the skill with a baseline take besides."""
    add_plugin_dir_option(parser)
    parser.add_argument("--skill", help="skill name for suites that do not name one")
    add_repetition_options(parser)
    add_tape_options(parser)
    parser.add_argument(
        "--skill-only", action="store_true", help="run only the with-skill arm (no baseline)"
    )


def add_rescore_option(parser: argparse.ArgumentParser, *, layer: str) -> None:
    """``--rescore DIR``: score the runs an output folder keeps, running nothing."""
    parser.add_argument(
        "--rescore",
        type=Path,
        metavar="DIR",
        help=f"run nothing: score the transcripts a {layer} run kept in DIR (output/ beside each "
        "suite, or its --output-dir) against the suites as they are now, in seconds; results "
        "and reports are marked rescored, with the run they came from",
    )


def check_rescore_choice(args: argparse.Namespace) -> None:
    """``--rescore`` runs nothing: ``--dry-run``, which prices runs, goes without it.

    Raises:
        InputError: ``--rescore`` with ``--dry-run``.
    """
    if getattr(args, "rescore", None) is not None and getattr(args, "dry_run", False):
        raise InputError(
            "--dry-run prices the runs a run would make, and --rescore makes none",
            location="--dry-run",
            fix="drop --dry-run to rescore, or drop --rescore to price a run",
        )


def add_tape_options(parser: argparse.ArgumentParser) -> None:
    """``--record``, ``--replay``, ``--record-missing``."""
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


OptionsT = TypeVar("OptionsT")


def options_from(args: argparse.Namespace, kind: type[OptionsT]) -> OptionsT:
    """A layer's options (``PressureOptions``, ``ScenarioOptions``, ``TriggerOptions``) from the
    parsed arguments: every field whose argument the command has, and the outputs.

    ``--timeout`` fills ``timeout_s``, ``--poll-interval`` ``poll_interval_s``, ``--report``
    the HTML output, a set
    ``GITHUB_STEP_SUMMARY`` the file the Markdown summary is appended to, and the command line
    as typed (:func:`skilltest.cli.main` keeps it) ``command_line``.
    """
    from skilltest.report.outputs import Outputs
    from skilltest.revision import check_revision_count

    check_plugin_choice(args)
    given = vars(args)
    renamed = {"timeout_s": "timeout", "poll_interval_s": "poll_interval"}
    values: dict[str, Any] = {}
    for item in dataclasses.fields(kind):  # type: ignore[arg-type]
        name = renamed.get(item.name, item.name)
        value = given.get(name)
        if value is not None:  # not given: the field's default
            values[item.name] = tuple(value) if isinstance(value, list) else value
    refs = given.get("against")
    if refs:  # --against REF, given once or more: the first, then the others
        check_revision_count(refs)
        values["against"], values["also_against"] = refs[0], tuple(refs[1:])
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and given.get("markdown") is None:
        from skilltest.report.files import check_output

        check_output(Path(summary), location=f"GITHUB_STEP_SUMMARY={summary}")
    values["outputs"] = Outputs(
        results=given.get("results"),
        junit=given.get("junit"),
        markdown=given.get("markdown"),
        html=given.get("report"),
        step_summary=Path(summary) if summary else None,
    )
    return kind(**values)


def add_batch_options(parser: argparse.ArgumentParser) -> None:
    """``--batch``, ``--resume-batch`` and ``--poll-interval``: a pressure run through the
    Message Batches API."""
    parser.add_argument(
        "--batch",
        action="store_true",
        help="send the runs through the Message Batches API: half the price, answered when the "
        "API gets to them (usually within an hour, at most 24 hours); one batch per round "
        "(-k auto: a round per look), polled until it has ended. The batch ids go to a resume "
        "file first: beside --results (X.batch.json), else in --output-dir, else "
        "./pressure.batch.json",
    )
    parser.add_argument(
        "--resume-batch",
        type=Path,
        metavar="FILE",
        help="pick up the batches of an interrupted --batch run from its resume file: poll them "
        "and read their results without submitting them again (implies --batch)",
    )
    parser.add_argument(
        "--poll-interval",
        type=positive_float,
        metavar="S",
        help="with --batch: seconds between polls of a batch (default 15; on the emulator 0.1)",
    )
