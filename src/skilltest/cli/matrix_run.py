"""``--models``: a layer's suites run in each cell of a matrix, from options to exit code.

``skilltest pressure``, ``skilltest scenarios`` and ``skilltest triggers`` hand their options
here when ``--models`` (``--claude-versions``, ``--agents``) is given; each cell runs as the
command would run it alone, and the command prints the scenario x cell table instead of one
run's table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skilltest.cli import (
    EXIT_BAD_INPUT,
    EXIT_CANARY,
    EXIT_FAILED,
    EXIT_MAX_COST,
    EXIT_OK,
    interrupted_exit_code,
)
from skilltest.cli.display import Display


def add_matrix_option(
    parser: argparse.ArgumentParser, *, cli: bool = False, agents: bool = False
) -> None:
    """``--models A,B``; with ``cli`` (a layer that runs the claude CLI) also
    ``--claude-versions A,B``; with ``agents`` (a layer that runs other agents) also
    ``--agents A,B``."""
    parser.add_argument(
        "--models",
        metavar="M,M",
        help="run every scenario once per model (a matrix of cells, model=M each), and print "
        "the verdicts and lifts side by side; one results file holds every cell's",
    )
    if cli:
        parser.add_argument(
            "--claude-versions",
            metavar="V,V",
            help="run every scenario once per Claude Code version (cells claude=V, each "
            "installed by skilltest setup --claude-version V), and say per scenario whether "
            "the with-skill and without-skill pass rates changed between them",
        )
    if agents:
        parser.add_argument(
            "--agents",
            metavar="A,A",
            help="run every scenario once per agent (cells agent=A: claude-code, opencode, "
            "codex, gemini), and say per scenario whether the skill's lift differs between them",
        )


AXIS_OPTIONS = (
    ("models", "--models"),
    ("claude_versions", "--claude-versions"),
    ("agents", "--agents"),
)
"""Each matrix option's attribute and its name on the command line, in the axes' order."""


def _given(args: argparse.Namespace) -> list[str]:
    """The matrix options the command line gives."""
    return [option for name, option in AXIS_OPTIONS if getattr(args, name, None) is not None]


def matrix_asked(args: argparse.Namespace) -> bool:
    """Whether the command line asks for a matrix (``--models``, ``--claude-versions``,
    ``--agents``)."""
    return bool(_given(args))


def apply_suite_matrix(
    args: argparse.Namespace,
    targets: Sequence[Path],
    default_dir: Path,
    *,
    layer: str,
    example: str,
) -> None:
    """The matrix the suites name (``matrix:``) when the command line names none: it fills
    ``--models`` and ``--claude-versions``; a command line that names one overrides it, and
    says so on stderr.

    Raises:
        InputError: a suite that is not valid, or suites naming different matrices.
    """
    from skilltest.matrix.named import suite_matrix

    if layer == "scenarios":
        from skilltest.evalcases import names_eval_cases

        files = [target for target in targets if not names_eval_cases(target)]
        if targets and not files:
            return  # eval cases only: they name no matrix
        targets = files
    from skilltest.formats.detect import ReadOptions

    allowed = ReadOptions(allow_code_graders=bool(getattr(args, "allow_code_graders", False)))
    named = suite_matrix(targets, default_dir, layer=layer, example=example, options=allowed)
    if named is None:
        return
    if matrix_asked(args):
        given = " and ".join(_given(args))
        print(
            f"skilltest: {given} override the matrix {named.source} names ({named.describe()})"
            if " and " in given
            else f"skilltest: {given} overrides the matrix {named.source} names "
            f"({named.describe()})",
            file=sys.stderr,
        )
        return
    args.models = ",".join(named.models) if named.models else None
    if hasattr(args, "claude_versions"):
        args.claude_versions = ",".join(named.claude_versions) if named.claude_versions else None
    if hasattr(args, "agents"):
        args.agents = ",".join(named.agents) if named.agents else None


def refuse_rescore(args: argparse.Namespace) -> None:
    """``--rescore`` scores one run's transcripts again: refused beside a matrix.

    Raises:
        InputError: ``--models``, ``--claude-versions`` or ``--agents`` with ``--rescore``.
    """
    if matrix_asked(args):
        from skilltest.errors import InputError

        raise InputError(
            "--rescore scores one run's kept transcripts again, not a matrix",
            location=_given(args)[0],
            fix="leave --models, --claude-versions and --agents out, and rescore each cell's "
            "transcripts folder on its own",
        )


def run_matrix(
    options: Any,
    args: argparse.Namespace,
    *,
    label: str,
    notes: Sequence[str] = (),
    noun: str = "scenarios",
) -> int:
    """Runs ``options`` across the matrix ``args`` names and returns the command's exit code.

    Raises:
        InputError: bad input (an axis, an option a matrix cannot take, a suite).
    """
    from skilltest import matrix
    from skilltest.errors import InputError
    from skilltest.matrix.axes import AGENT, CLAUDE, MODEL
    from skilltest.matrix.report import render_terminal

    agent = getattr(options, "agent", "claude-code")
    if getattr(args, "claude_versions", None) is not None and agent != "claude-code":
        raise InputError(
            f"--claude-versions runs versions of Claude Code; --agent {agent} runs another agent",
            location="--claude-versions",
            fix=f"leave out --claude-versions (--models runs its cells in {agent}), or run with "
            "--agent claude-code",
        )
    axes = []
    if args.models is not None:
        axes.append(matrix.axis_values(args.models, axis=MODEL, option="--models"))
    if getattr(args, "claude_versions", None) is not None:
        axes.append(
            matrix.axis_values(args.claude_versions, axis=CLAUDE, option="--claude-versions")
        )
    if getattr(args, "agents", None) is not None:
        if getattr(args, "agent", None) is not None:
            raise InputError(
                f"--agent {args.agent} and --agents name the agent twice",
                location="--agent",
                fix="give the agents to compare with --agents only",
            )
        axes.append(matrix.axis_values(args.agents, axis=AGENT, option="--agents"))
    if getattr(args, "dry_run", False):
        from skilltest.matrix.report import render_estimate

        per_cell = [(cell.id, each) for cell, each in matrix.estimate(options, axes)]
        print(render_estimate(per_cell, noun=noun, notes=notes))
        return EXIT_OK
    display = Display(label)
    try:
        results = matrix.run(options, axes, observer=display)
    except KeyboardInterrupt as exc:
        if display.partial is None:
            raise  # before any run: nothing was kept
        print(render_terminal(display.partial.to_document()))
        kept = options.outputs.results
        cells = display.partial.cells
        finished = sum(1 for entry in cells if not entry.results.interrupted)
        said = f"{finished} of {len(display.partial.plan.cells)} cell(s) finished"
        part = [entry.cell.id for entry in cells if entry.results.interrupted]
        if part:
            said += f", {', '.join(part)} in part"
        print(
            f"skilltest: interrupted; {said}"
            + (f"; kept in {kept} (marked incomplete)" if kept else ""),
            file=sys.stderr,
        )
        return interrupted_exit_code(exc)
    print(render_terminal(results.to_document()))
    cells = [entry.results for entry in results.cells]
    written = sum(cell.cassettes_written for cell in cells)
    if written:
        folder = getattr(options, "record", None) or getattr(options, "replay", None)
        print(f"{written} cassette(s) written under {folder}, a folder per cell")
    if any(cell.misses for cell in cells):
        from skilltest.flow.tape import miss_summary

        print(miss_summary(sum(len(cell.misses) for cell in cells)))
        return EXIT_BAD_INPUT
    bad = next((cell.bad_input for cell in cells if getattr(cell, "bad_input", None)), None)
    if bad:
        if isinstance(bad, str):
            raise InputError(bad)
        return EXIT_BAD_INPUT
    if results.stopped:
        assert results.spent is not None
        print(f"stopped, results incomplete: {results.spent['reason']}")
        return EXIT_MAX_COST
    canaries = [getattr(cell, "canary", None) for cell in cells]
    if any(canary is not None and not canary.meaningful for canary in canaries):
        return EXIT_CANARY
    return EXIT_FAILED if results.failed else EXIT_OK
