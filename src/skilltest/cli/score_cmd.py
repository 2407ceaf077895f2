"""``skilltest score``: scores a transcript that already exists against one scenario's rubric."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from skilltest.cli import help_line
from skilltest.cli.plugin_options import add_plugin_dir_option, check_plugin_choice
from skilltest.errors import InputError
from skilltest.scenarios.rubric import score
from skilltest.scenarios.suite import Overrides, load_scenario_suite
from skilltest.transcript.stream_json import load_transcript


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help=help_line("score"),
        description=(
            "Reads a transcript the claude CLI printed (stream-json, json or text output, e.g. "
            "one kept under tests/scenarios/output/) and scores it with the rubric of one "
            "scenario. Whether the expected skills fired is shown beside the score, not in it. "
            "Exit 0 when the score reaches the scenario's min_score, 1 when it does not or the "
            "run is unscored, 2 for bad input."
        ),
    )
    parser.add_argument("transcript", type=Path, metavar="TRANSCRIPT", help="the CLI's output")
    parser.add_argument(
        "--scenario", type=Path, required=True, metavar="SUITE", help="the scenario suite file"
    )
    parser.add_argument("--id", required=True, help="the scenario's id in the suite")
    parser.add_argument("--skills-dir", type=Path, help="folder holding <skill>/SKILL.md")
    add_plugin_dir_option(parser)
    parser.add_argument("--skill", help="skill name for suites that do not name one")
    parser.add_argument("--json", action="store_true", help="print the score card as JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_plugin_choice(args)
    suite = load_scenario_suite(
        args.scenario,
        skills_dir=args.skills_dir,
        skill_name=args.skill,
        overrides=Overrides(plugin_dir=args.plugin_dir, plugin_name=args.plugin),
    )
    scenario = next((s for s in suite.scenarios if s.id == args.id), None)
    if scenario is None:
        known = ", ".join(s.id for s in suite.scenarios)
        raise InputError(
            f"no scenario with id {args.id!r}",
            location=str(args.scenario),
            fix=f"use one of: {known}",
        )
    transcript = load_transcript(args.transcript, prompt=scenario.prompt)
    card = score(transcript, scenario.expected)
    if args.json:
        document = {
            "scenario": scenario.id,
            "skill": scenario.label,
            "transcript": str(args.transcript),
            "min_score": scenario.min_score,
            **card.to_dict(),
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        print(f"{scenario.label}/{scenario.id}: {card.explain()}")
        if card.expected_skills:
            # Only the with-skill arm can invoke the skill, so this is reported beside the score.
            fired = ", ".join(
                f"{name} {'yes' if yes else 'no'}" for name, yes in card.skills_fired.items()
            )
            print(f"expected skills fired: {fired} (an indicator, not part of the score)")
        if transcript.skills_invoked:
            print(f"skills invoked: {', '.join(transcript.skills_invoked)}")
        print(f"tool calls: {card.tool_calls}")
    return 0 if card.score is not None and card.score >= scenario.min_score else 1
