"""``skilltest init``: a first pressure, scenario and trigger suite for a skill or a plugin."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from skilltest.cli import EXIT_OK, help_line


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "init",
        help=help_line("init"),
        description=(
            "Reads a skill folder (or every skill of a plugin folder) and writes, in its "
            "project's tests/ folders, a pressure suite, a scenario suite with an outcome check "
            "and a trigger suite with the project's other skills as distractors, each with a "
            "model script for the offline emulator, plus skilltest.mk (Makefile targets) and "
            ".gitignore entries for the raw run output. They run green offline at once; each "
            "value only the author knows is an example marked with a `# TODO:` line, which "
            "`skilltest validate` lists. On a terminal it asks for a request and the words a "
            "good answer contains (Enter keeps the example); elsewhere it asks nothing. Exit 0; "
            "2 when a file exists or the skill cannot be read."
        ),
    )
    parser.add_argument(
        "skill_dir",
        nargs="?",
        type=Path,
        metavar="SKILL_DIR",
        help="a skill folder (or its SKILL.md) or a plugin folder (default: the only one below "
        "the current folder)",
    )
    parser.add_argument(
        "--force", action="store_true", help="overwrite suites and model scripts that exist"
    )
    parser.add_argument("--no-input", action="store_true", help="ask nothing, even on a terminal")
    parser.set_defaults(handler=run)


def _ask(question: str, example: str) -> str | None:
    """The answer typed, or ``None`` for Enter (keep the example)."""
    print(f"{question}\n  [Enter keeps: {example}]")
    answer = input("> ").strip()
    return answer or None


def run(args: argparse.Namespace) -> int:
    from skilltest.scaffold import Answers, read_target, render_scaffold, write_scaffold
    from skilltest.scaffold.words import should_trigger_requests

    cwd = Path.cwd()
    target = read_target(args.skill_dir, cwd)
    for unit in target.skills:
        if unit.skill.naming:
            print(f"note: {unit.skill.naming}")
    answers: dict[str, Answers] = {}
    if not args.no_input and sys.stdin.isatty() and sys.stdout.isatty():
        for unit in target.skills:
            name = unit.skill.name
            example = (should_trigger_requests(unit.skill, unit.neighbours) or [""])[0]
            print(f"{name}: {unit.skill.description}")
            request = _ask(f"A request where {name} should change what the agent does?", example)
            phrase = _ask(
                f"Words an answer that follows {name} contains? (commas between several)",
                f"{name} skill (a placeholder)",
            )
            answers[name] = Answers(request=request, phrase=phrase)
            print()
    files = render_scaffold(target, answers)
    written = write_scaffold(target.root, files, force=args.force)

    def shown(path: Path) -> str:
        return os.path.relpath(target.root / path, cwd)

    for path in written.created:
        print(f"wrote {shown(path)}")
    for path in written.kept:
        print(f"kept  {shown(path)} (already there)")
    if written.ignore_lines:
        print(f"added to {shown(Path('.gitignore'))}: {' '.join(written.ignore_lines)}")
    go = (
        ""
        if target.root.resolve() == cwd.resolve()
        else f"cd {os.path.relpath(target.root, cwd)} && "
    )
    print(
        "\nnext:\n"
        f"  {go}skilltest pressure && skilltest scenarios && skilltest triggers"
        "   # green offline, on the emulator\n"
        "  skilltest validate   # the TODOs to fill in: your own requests and what a good "
        "answer shows\n"
        "  include skilltest.mk from your Makefile for `make skilltest`"
    )
    return EXIT_OK
