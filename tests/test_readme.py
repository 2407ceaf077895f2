"""The README's printed outputs are what the commands print: each block marked
``<!-- printed by: COMMAND -->`` is compared with a fresh run of COMMAND on the emulator, and a
change fails with the new text to paste.

What differs run to run or machine to machine is masked on both sides: dates, the wall time per
trigger run, how a world's egress is confined, and costs (the CLI's prompts hold the checkout's
path).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.example_runs import LayerRun

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
MARKER = re.compile(r"^<!-- printed by: (?P<command>.+?) -->$")

VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "<date>"),
    (re.compile(r"mean \d+(?:\.\d+)?s per run"), "mean <seconds>s per run"),
    # Confined by Claude Code's sandbox where bubblewrap and socat are installed, else by the
    # proxy's environment variables: the machine's, not the toolkit's.
    (re.compile(r"^world: egress .*$", re.MULTILINE), "world: egress <confinement>"),
    # The CLI's prompts hold the checkout's path, so their tokens (and cost) vary with where
    # the repository was cloned.
    (re.compile(r"\$\d+\.\d{4}"), "$<cost>"),
]

# What each documented command runs: the make targets are `skilltest <layer>` with the
# toolkit's environment; their results go where the gate example reads them. `make
# test-scenarios` is the session's run of the example scenario suites (tests/example_runs.py),
# which the scenario layer's end-to-end test checks against the hand-checked rubric.
RUNS: dict[str, list[str] | None] = {
    "make test-pressure": ["pressure", "--results", "{out}/pressure.json"],
    "make test-scenarios": None,
    "make test-triggers": ["triggers", "--output-dir", "{out}/transcripts/triggers"],
    "skilltest validate tests/fixtures/skill-creator/xlsx-margins/evals/evals.json "
    "tests/fixtures/skill-creator/xlsx-margins/evals/trigger-eval.json": [
        "validate",
        "tests/fixtures/skill-creator/xlsx-margins/evals/evals.json",
        "tests/fixtures/skill-creator/xlsx-margins/evals/trigger-eval.json",
    ],
    "skilltest validate tests/fixtures/waza/grader-showcase/eval-text-file.yaml "
    "tests/fixtures/waza/grader-showcase/eval.yaml": [
        "validate",
        "tests/fixtures/waza/grader-showcase/eval-text-file.yaml",
        "tests/fixtures/waza/grader-showcase/eval.yaml",
    ],
    "skilltest pressure lgtm --models haiku,opus --script "
    "tests/model-scripts/lgtm.by-model.pressure.yaml --only 'aggregation-*' "
    "--only 'discovery-*' -k 12": [
        "pressure",
        "lgtm",
        "--models",
        "haiku,opus",
        "--script",
        "tests/model-scripts/lgtm.by-model.pressure.yaml",
        "--only",
        "aggregation-*",
        "--only",
        "discovery-*",
        "-k",
        "12",
    ],
    "skilltest triggers lgtm --only loki-error-spike --only capital-of-france -k auto": [
        *("triggers", "lgtm", "--only", "loki-error-spike", "--only", "capital-of-france"),
        *("-k", "auto", "--output-dir", "{out}/transcripts/triggers-auto"),
    ],
    "skilltest gate out/pressure.json out/scenarios.json --allow-offline": [
        "gate",
        "out/pressure.json",
        "out/scenarios.json",
        "--allow-offline",
    ],
}


@dataclass(frozen=True)
class Block:
    command: str
    line: int
    text: str


def printed_blocks() -> list[Block]:
    """Every marked block of the README: the marker, then a fence on the next line."""
    lines = README.read_text(encoding="utf-8").splitlines()
    blocks = []
    for index, line in enumerate(lines):
        match = MARKER.match(line)
        if match is None:
            continue
        fence = index + 1
        assert lines[fence] == "```", f"README.md:{fence + 1}: a fence must follow the marker"
        end = lines.index("```", fence + 1)
        blocks.append(Block(match["command"], fence + 2, "\n".join(lines[fence + 1 : end])))
    return blocks


def masked(text: str) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text.rstrip("\n")


def as_make_prints(out: str, output_dir: Path | str) -> str:
    """What a layer printed, its transcripts' folder named as make's: the test's runs keep them
    in folders of their own, not in output/ beside the repository's suites (where make and other
    runs of the suite write)."""
    return out.replace(
        f"raw transcripts in {output_dir}", "raw transcripts in output/ beside each suite"
    )


@pytest.fixture(scope="module")
def printed(
    tmp_path_factory: pytest.TempPathFactory, example_scenarios: Callable[[], LayerRun]
) -> Callable[[str], str]:
    """What a documented command prints, each run once for the module."""
    work = tmp_path_factory.mktemp("readme")
    # The gate runs where the README's commands run, in the checkout: the suites and skills the
    # runs read are where they name them (tests/, skills/), for it to compare with.
    for folder in ("tests", "skills"):
        (work / folder).symlink_to(REPO / folder, target_is_directory=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"}
        and key != "GITHUB_STEP_SUMMARY"
    }

    @functools.cache
    def run(command: str) -> str:
        argv = RUNS[command]
        if argv is None:
            shared = example_scenarios()
            assert "Traceback" not in shared.err, shared.err
            # Its results go where the gate example reads them; the session's run stays as is.
            (work / "out").mkdir(exist_ok=True)
            shutil.copyfile(shared.results, work / "out" / "scenarios.json")
            return as_make_prints(shared.out, shared.output)
        argv = [arg.format(out=work / "out") for arg in argv]
        # The layers run from the repository, as make does; the gate reads their results by
        # the relative paths the README shows.
        done = subprocess.run(
            [sys.executable, "-m", "skilltest", *argv],
            cwd=work if argv[0] == "gate" else REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert "Traceback" not in done.stderr, done.stderr
        if "--output-dir" in argv:
            return as_make_prints(done.stdout, argv[argv.index("--output-dir") + 1])
        return done.stdout

    return run


def test_the_readme_marks_the_printed_outputs_it_shows() -> None:
    commands = [block.command for block in printed_blocks()]
    assert sorted(commands) == sorted(RUNS), commands


@pytest.mark.cli
@pytest.mark.parametrize("block", printed_blocks(), ids=lambda block: block.command)
def test_a_printed_output_is_what_the_command_prints(
    block: Block, printed: Callable[[str], str]
) -> None:
    # The layers run before the gate reads their results.
    if block.command.startswith("skilltest gate"):
        printed("make test-pressure")
        printed("make test-scenarios")
    now = printed(block.command)
    assert masked(block.text) == masked(now), (
        f"README.md:{block.line}: `{block.command}` prints something else now; "
        f"replace the block with:\n{now}"
    )
