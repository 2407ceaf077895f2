"""The flow ``skilltest scenarios`` and ``skilltest triggers`` share, from options to exit code.

Each command parses its own arguments and prints its own layer's results; the rest is the same
for both: ``--dry-run`` prints the cost estimate instead of running, a run shows its progress,
Ctrl-C prints what had finished, an offline run says so before any number, and the end of a
run (cassettes written, stale cassettes, bad input, a ``--max-cost-usd`` stop) decides the exit
code before the verdicts do.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skilltest.cli import EXIT_BAD_INPUT, EXIT_MAX_COST, EXIT_OK, interrupted_exit_code
from skilltest.cli.display import Display

if TYPE_CHECKING:
    from skilltest.cost.render import SuiteEstimate
    from skilltest.flow.options import Observer


class Layer(Protocol):
    """A layer's entry points: ``skilltest.scenarios``, ``skilltest.triggers``."""

    def estimate(self, options: Any) -> Sequence[SuiteEstimate]: ...

    def run(self, options: Any, *, observer: Observer) -> Any: ...


def run_layer(
    layer: Layer,
    options: Any,
    *,
    dry_run: bool,
    label: str,
    noun: str,
    notes: Sequence[str],
    interrupted: Callable[[Any], tuple[str | None, str]],
    finished: Callable[[Any, Any], int],
) -> int:
    """Runs ``layer`` (with ``dry_run``, prints its estimate of ``noun`` instead) and returns the
    command's exit code.

    ``interrupted`` takes what had finished when Ctrl-C came and returns its table (``None``
    when nothing had) and how much that is ("3 of 5 scenario(s)"); ``finished`` prints a whole
    run's results (given them and the options) and returns the exit code its verdicts decide.
    """
    if dry_run:
        from skilltest.cost.render import render_estimate

        print(render_estimate(layer.estimate(options), noun=noun, notes=notes))
        return EXIT_OK
    display = Display(label)
    try:
        results = layer.run(options, observer=display)
    except KeyboardInterrupt as exc:
        if display.partial is None:
            raise  # before any run: nothing was kept
        table, done = interrupted(display.partial)
        if table is not None:
            print_notice(display.partial.provenance)
            print(table)
        kept = options.outputs.results
        print(
            f"skilltest: interrupted; {done} finished"
            + (f" and kept in {kept} (marked incomplete)" if kept else ""),
            file=sys.stderr,
        )
        return interrupted_exit_code(exc)
    print_notice(results.provenance)  # an offline run says so before any number
    verdicts = finished(results, options)
    if results.cassettes_written:
        print(f"{results.cassettes_written} cassette(s) written under {results.tape.directory}")
    if results.misses:
        from skilltest.flow.tape import miss_summary

        # Stale cassettes are bad input, not a failing skill or description.
        print(miss_summary(len(results.misses)))
        return EXIT_BAD_INPUT
    if getattr(results, "bad_input", False):  # the trigger layer's results have none
        return EXIT_BAD_INPUT
    if results.stopped is not None:
        print(f"stopped, results incomplete: {results.stopped['reason']}")
        return EXIT_MAX_COST
    return verdicts


def print_notice(provenance: Any) -> None:
    """Prints the line an offline run's output begins with (nothing for a live run)."""
    from skilltest.report.provenance import notice

    said = notice(provenance) if provenance is not None else None
    if said:
        print(said)


def run_line(
    *,
    version: str | None,
    backend: str,
    counted: str,
    jobs: int,
    output_dir: Path | None,
    agent: str = "claude",
) -> str:
    """The line after the notice: which agent at which version (``claude 2.1.328``, ``codex
    0.171.0``), which backend, how much, where transcripts go."""
    model = {"emulator": "scripted stand-in model", "replay": "recorded answers"}.get(
        backend, "real model"
    )
    return (
        f"{agent} {version or 'of unknown version'}, {backend} backend ({model}), {counted}, "
        f"-j {jobs}; raw transcripts in {output_dir or 'output/ beside each suite'}"
    )


def print_blocks(*blocks: str | None) -> None:
    """Prints each block that says something, after a blank line."""
    for block in blocks:
        if block:
            print()
            print(block)
