"""``skilltest scenarios``: the outer loop, multi-turn claude runs with and without the skill."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from skilltest.cli import EXIT_BAD_INPUT, EXIT_CANARY, EXIT_FAILED, EXIT_OK, help_line
from skilltest.cli.layer_run import print_blocks, run_layer, run_line
from skilltest.cli.matrix_run import (
    add_matrix_option,
    apply_suite_matrix,
    matrix_asked,
    refuse_rescore,
    run_matrix,
)
from skilltest.cli.options import (
    add_against_option,
    add_agent_option,
    add_backend_options,
    add_compared_options,
    add_output_options,
    add_rescore_option,
    add_scale_options,
    add_suite_arguments,
    check_rescore_choice,
    number,
    options_from,
    unit_interval,
)

if TYPE_CHECKING:
    from skilltest.scenarios import ScenarioOptions, ScenarioResults

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


ALLOW_CODE_GRADERS_HELP = (
    "run a waza eval.yaml's `code` graders: each Python assertion is evaluated after the run, "
    "in its working directory, in its own process with a time limit (without this, refused)"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "scenarios",
        help=help_line("scenarios"),
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
    add_agent_option(parser, runs="scenarios")
    add_matrix_option(parser, cli=True, agents=True)
    parser.add_argument(
        "--judge-model",
        metavar="M",
        help="model that grades judge checks (default: the scenario's model, else "
        "claude-sonnet-5-5); offline the emulator answers from the model script",
    )
    parser.add_argument(
        "--allow-code-graders",
        action="store_true",
        help=ALLOW_CODE_GRADERS_HELP,
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
    parser.add_argument(
        "--baseline",
        choices=("clean", "bundled"),
        help="clean (default): both arms without Claude Code's bundled skills and built-in "
        "plugins; bundled: both arms keep them, as `claude plugin eval`'s arms do, so the "
        "without-skill arm is its no-plugin arm",
    )
    add_against_option(
        parser,
        what=" as an arm 'previous' (previous-2... for more), and say per scenario whether the "
        "edit improved it",
    )
    add_rescore_option(parser, layer="scenarios")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from skilltest import scenarios

    if args.rescore is not None:
        refuse_rescore(args)
        return _rescore(args)
    # What the command line names is checked before the suites are read for their matrix.
    options_from(args, scenarios.ScenarioOptions)
    apply_suite_matrix(
        args,
        tuple(args.suites or ()),
        DEFAULT_SUITE_DIR,
        layer="scenarios",
        example="tests/scenarios/<skill>.yaml",
    )
    if matrix_asked(args):
        return run_matrix(
            options_from(args, scenarios.ScenarioOptions), args, label="scenarios", notes=NOTES
        )
    return run_layer(
        scenarios,
        options_from(args, scenarios.ScenarioOptions),
        dry_run=args.dry_run,
        label="scenarios",
        noun="scenarios",
        notes=NOTES,
        interrupted=_interrupted,
        finished=_finished,
    )


def _rescore(args: argparse.Namespace) -> int:
    from skilltest import scenarios
    from skilltest.cli.display import Display
    from skilltest.cli.layer_run import print_notice
    from skilltest.scenarios.rescore import rescore, rescored_summary

    check_rescore_choice(args)
    options = options_from(args, scenarios.ScenarioOptions)
    results = rescore(options, args.rescore, observer=Display("rescore"))
    print_notice(results.provenance)
    print(rescored_summary(results))
    code = _finished(results, options, line=False)
    return EXIT_BAD_INPUT if results.bad_input else code


def _interrupted(partial: ScenarioResults) -> tuple[str | None, str]:
    from skilltest.scenarios.report import render_table

    table = render_table(partial.verdicts) if partial.verdicts else None
    return table, f"{len(partial.verdicts)} of {partial.planned} scenario(s)"


def _finished(results: ScenarioResults, options: ScenarioOptions, *, line: bool = True) -> int:
    from skilltest.scenarios.canary import render_canary
    from skilltest.scenarios.report import (
        render_failures,
        render_summary,
        render_table,
        render_unscored,
        render_warnings,
        render_world,
    )

    context, verdicts = results.context, results.verdicts
    if line:
        claude = context.agent == "claude-code"
        print(
            run_line(
                agent="claude" if claude else context.agent,
                version=context.claude_version if claude else context.agent_version,
                backend=context.backend,
                counted=f"{len(verdicts)} scenarios",
                jobs=context.jobs,
                output_dir=results.output_dir,
            )
        )
    print(render_table(verdicts))
    print_blocks(
        render_world(verdicts, context.agent),
        render_unscored(verdicts),
        render_warnings(verdicts),
    )
    print()
    print(render_summary(verdicts, allow_inconclusive=options.allow_inconclusive))
    canary = results.canary
    if canary is not None:
        print(render_canary(canary))
    print_blocks(render_failures(verdicts))
    if canary is not None and not canary.meaningful:
        return EXIT_CANARY
    return EXIT_FAILED if results.failing else EXIT_OK
