"""``skilltest scenarios``: the outer loop, multi-turn claude runs with and without the skill."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from skilltest.cli import (
    EXIT_BAD_INPUT,
    EXIT_CANARY,
    EXIT_FAILED,
    EXIT_MAX_COST,
    EXIT_OK,
    interrupted_exit_code,
)
from skilltest.cli.display import Display
from skilltest.cli.options import (
    add_against_option,
    add_backend_options,
    add_compared_options,
    add_output_options,
    add_scale_options,
    add_suite_arguments,
    number,
    options_from,
    unit_interval,
)

DEFAULT_SUITE_DIR = Path("tests/scenarios")
BACKENDS = ("claude", "emulator")

_delta = number(float, lambda v: -1.0 <= v <= 1.0, "a number between -1 and 1")
"""A with-minus-without delta threshold."""


NOTES = (
    "assumed per CLI run: 15,580 tokens of the CLI's own context (claude 2.1.328) before the "
    "skills' listing and the prompt; 5 requests per user message, each reading the context "
    "again plus 500 tokens and writing 150; the conversation read from the prompt cache as it "
    "grows; the CLI's default model priced as opus",
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "scenarios",
        help="end-to-end tests: does the skill change what the agent does? (the outer loop)",
        description=(
            "Runs each scenario through the real claude CLI with the skill installed and "
            "without it, K times each, in fresh isolated sandboxes, and scores the tool calls "
            "with the scenario's rubric. Without credentials the CLI talks to the offline model "
            "emulator (a scripted stand-in) using each suite's model script."
        ),
    )
    add_suite_arguments(parser, default_dir=DEFAULT_SUITE_DIR)
    add_compared_options(parser)
    add_backend_options(parser, backends=BACKENDS)
    add_output_options(parser, only="scenarios", example="index-*")
    add_scale_options(parser, unit="scenario (skill/id, with all its arms and repetitions)")
    parser.add_argument(
        "--output-dir",
        type=Path,
        metavar="DIR",
        help="where raw transcripts and stderr are kept (default: output/ beside each suite)",
    )
    parser.add_argument("--model", help="model passed to claude --model (default: the CLI's)")
    parser.add_argument(
        "--judge-model",
        metavar="M",
        help="model that grades judge checks (default: the scenario's model, else "
        "claude-sonnet-5-5); offline the emulator answers from the model script",
    )
    parser.add_argument(
        "--comparison-only",
        action="store_true",
        help="run only the core subset, the scenarios marked `comparison: true` (and the "
        "canaries, which run first)",
    )
    parser.add_argument(
        "--min-score",
        type=unit_interval,
        help="with-skill mean a scenario needs (default: the suite's, else 0.6)",
    )
    parser.add_argument(
        "--min-delta",
        type=_delta,
        help="the lower edge of the neutral band: a with-minus-without delta credibly below it "
        "is regressed (default: the suite's, else -0.05)",
    )
    add_against_option(
        parser, what=" as an arm 'previous', and say per scenario whether the edit improved it"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest import scenarios
    from skilltest.flow.tape import miss_summary
    from skilltest.report.provenance import notice
    from skilltest.scenarios.canary import render_canary
    from skilltest.scenarios.report import (
        render_failures,
        render_summary,
        render_table,
        render_unscored,
        render_warnings,
        render_world,
    )

    options = options_from(args, scenarios.ScenarioOptions)
    if args.dry_run:
        from skilltest.cost.render import render_estimate

        print(render_estimate(scenarios.estimate(options), noun="scenarios", notes=NOTES))
        return EXIT_OK
    display = Display("scenarios")
    try:
        results = scenarios.run(options, observer=display)
    except KeyboardInterrupt as exc:
        if display.partial is None:
            raise  # before any run: nothing was kept
        partial = display.partial
        if partial.verdicts:
            said = notice(partial.provenance) if partial.provenance is not None else None
            if said:
                print(said)
            print(render_table(partial.verdicts))
        kept = options.outputs.results
        print(
            f"skilltest: interrupted; {len(partial.verdicts)} of {partial.planned} scenario(s) "
            "finished" + (f" and kept in {kept} (marked incomplete)" if kept else ""),
            file=sys.stderr,
        )
        return interrupted_exit_code(exc)
    context = results.context
    said = notice(results.provenance) if results.provenance is not None else None
    if said:
        print(said)  # an offline run says so before any number
    model = {"emulator": "scripted stand-in model", "replay": "recorded answers"}.get(
        context.backend, "real model"
    )
    print(
        f"claude {context.claude_version}, {context.backend} backend ({model}), "
        f"{len(results.verdicts)} scenarios, -j {context.jobs}; raw transcripts in "
        f"{results.output_dir or 'output/ beside each suite'}"
    )
    verdicts = results.verdicts
    print(render_table(verdicts))
    for block in (render_world(verdicts), render_unscored(verdicts), render_warnings(verdicts)):
        if block:
            print()
            print(block)
    print()
    print(render_summary(verdicts, allow_inconclusive=options.allow_inconclusive))
    canary = results.canary
    if canary is not None:
        print(render_canary(canary))
    failures = render_failures(verdicts)
    if failures:
        print()
        print(failures)
    if results.cassettes_written:
        print(f"{results.cassettes_written} cassette(s) written under {results.tape.directory}")
    if results.misses:
        # Stale cassettes are bad input, not a failing skill.
        print(miss_summary(len(results.misses)))
        return EXIT_BAD_INPUT
    if results.bad_input:
        return EXIT_BAD_INPUT
    if results.stopped is not None:
        print(f"stopped, results incomplete: {results.stopped['reason']}")
        return EXIT_MAX_COST
    if canary is not None and not canary.meaningful:
        return EXIT_CANARY
    return EXIT_FAILED if results.failing else EXIT_OK
