"""Anthropic's skill-creator eval formats, read unchanged into skilltest's suite documents.

skill-creator (github.com/anthropics/skills, ``skills/skill-creator``) keeps a skill's trigger
eval set as a bare JSON list, run by its ``scripts/run_eval.py --eval-set FILE --skill-path
SKILL``::

    [
      {"query": "the user prompt", "should_trigger": true},
      {"query": "another prompt", "should_trigger": false}
    ]

:func:`trigger_document` reads it as a trigger suite: the skill is the folder holding the file
(``skills/x/evals/trigger-eval.json`` or ``skills/x/trigger-eval.json`` test ``skills/x``; a
plugin's ``evals/`` beside ``skills/x/`` its one skill), each query's id is its position (``1``,
``2``, ...), and ``--runs-per-query`` and ``--trigger-threshold`` are the trigger command's own
options (``-k`` and the suite's ``threshold``), with skill-creator's defaults (3 runs, 0.5).

It keeps a skill's test cases in ``evals/evals.json`` (``references/schemas.md``)::

    {"skill_name": "x", "evals": [{"id": 1, "prompt": "...", "expected_output": "...",
      "files": ["evals/files/sample.pdf"], "expectations": ["The output includes X"]}]}

:func:`evals_document` reads it as a scenario suite for the same skill: each eval a scenario
(its id the integer ``id``; its ``name``, when it has one, the scenario's title), each
expectation (``expectations``, or ``assertions`` as skill-creator's ``SKILL.md`` calls them) a
judge check on the run's trace, ``expected_output`` shown in the scenario's description and
judged as one more check, and ``files`` (relative to the skill's folder) copied into the run's
working directory at the same relative path, in both arms.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from skilltest.errors import SuiteError
from skilltest.formats.detect import Format

SKILL_FILE = "SKILL.md"


def is_trigger_eval_set(data: Any) -> bool:
    """Whether ``data`` is a skill-creator trigger eval set: a list whose items are mappings
    with a ``query``."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(item, dict) and "query" in item for item in data)
    )


def skill_folder(path: Path) -> Path:
    """The skill an eval file of skill-creator tests: the folder holding it or the one above
    (``skills/x/evals/``), whichever holds ``SKILL.md``; else the one skill of the plugin or
    repository above (``evals/`` beside ``skills/x/SKILL.md``).

    Raises:
        SuiteError: no skill there, or several to choose from.
    """
    folder = path.resolve().parent
    for candidate in (folder, folder.parent):
        if (candidate / SKILL_FILE).is_file():
            return candidate
    below = sorted(found.parent for found in (folder.parent / "skills").glob(f"*/{SKILL_FILE}"))
    if len(below) == 1:
        return below[0]
    several = f" (skills/ above it holds {len(below)})" if below else ""
    raise SuiteError(
        f"no {SKILL_FILE} in the folder holding this file or the one above it, and no single "
        f"skill in skills/ above it{several}: skill-creator's eval files test the skill they "
        "live in",
        location=str(path),
        fix="keep the file in its skill's folder (skills/<name>/evals/trigger-eval.json or "
        "skills/<name>/evals/evals.json)",
    )


def _skill_keys(path: Path) -> dict[str, str]:
    """``skill:`` and ``skill_file:`` of a suite document for the skill ``path`` lives in."""
    folder = skill_folder(path)  # its name is checked where the skill is found
    relative = os.path.relpath(folder / SKILL_FILE, path.resolve().parent)
    return {"skill": folder.name, "skill_file": Path(relative).as_posix()}


def trigger_document(data: Any, path: Path, _options: object = None) -> dict[str, Any]:
    """A skill-creator trigger eval set as a trigger suite document (``triggers.schema.json``).

    Raises:
        SuiteError: an item without a text ``query`` or a true/false ``should_trigger``, or no
            skill around the file.
    """
    queries = []
    for index, item in enumerate(data):
        query, should = item.get("query"), item.get("should_trigger")
        if not isinstance(query, str) or not query.strip():
            raise SuiteError(
                "a query must be a non-empty text",
                location=f"{path}#/{index}/query",
                fix='write the user\'s message: {"query": "...", "should_trigger": true}',
            )
        if not isinstance(should, bool):
            raise SuiteError(
                "should_trigger must be true or false",
                location=f"{path}#/{index}/should_trigger",
                fix='say whether the skill should fire: "should_trigger": true (or false)',
            )
        queries.append({"id": str(index + 1), "query": query, "should_trigger": should})
    keys = _skill_keys(path)
    return {
        "schema_version": 1,
        "name": f"{keys['skill']} trigger eval set",
        **keys,
        "queries": queries,
    }


def is_evals_file(data: Any) -> bool:
    """Whether ``data`` is a skill-creator ``evals.json``: a mapping with an ``evals`` list and
    no ``scenarios``."""
    return isinstance(data, dict) and "evals" in data and "scenarios" not in data


EXPECTATION_KEYS = ("expectations", "assertions")
"""Where an eval lists its free-text expectations (``references/schemas.md`` says
``expectations``, ``SKILL.md`` ``assertions``)."""
JUDGE_FOCUS = "trace"
"""What a judge of an expectation reads: the calls, their results and the answers, as
skill-creator's grader reads the transcript."""


def _text(value: Any, at: str, what: str, fix: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise SuiteError(f"{what} must be a non-empty text", location=at, fix=fix)
    return value


def _texts(item: dict[str, Any], key: str, at: str, what: str) -> list[str]:
    values = item.get(key)
    if values is None:
        return []
    if not isinstance(values, list):
        raise SuiteError(f"{key} must be a list", location=f"{at}/{key}", fix=f"list {what}")
    return [
        _text(value, f"{at}/{key}/{index}", f"each of {key}", f"write {what} as texts")
        for index, value in enumerate(values)
    ]


def _eval_scenario(item: Any, at: str, path: Path, skill: Path) -> dict[str, Any]:
    """One eval of ``evals.json`` as a scenario entry (paths relative to the file's folder)."""
    if not isinstance(item, dict):
        raise SuiteError(
            "an eval must be a mapping",
            location=at,
            fix='write {"id": 1, "prompt": "...", "expected_output": "...", "expectations": []}',
        )
    number = item.get("id")
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise SuiteError(
            "an eval's id must be a whole number of 0 or more",
            location=f"{at}/id",
            fix='number the evals: "id": 1, "id": 2, ...',
        )
    prompt = _text(item.get("prompt"), f"{at}/prompt", "prompt", "write the user's task prompt")
    expectations = [
        text for key in EXPECTATION_KEYS for text in _texts(item, key, at, "the expectations")
    ]
    checks = [
        {"judge": {"criteria": text, "focus": JUDGE_FOCUS, "name": f"expectation {n}"}}
        for n, text in enumerate(expectations, start=1)
    ]
    scenario: dict[str, Any] = {"id": str(number), "prompt": prompt}
    expected = item.get("expected_output")
    if expected is not None:
        expected = _text(
            expected, f"{at}/expected_output", "expected_output", "describe the expected result"
        )
        scenario["description"] = f"expected output: {expected}"
        checks.append(
            {
                "judge": {
                    "criteria": f"The run produced the expected result: {expected}",
                    "focus": JUDGE_FOCUS,
                    "name": "expected output",
                }
            }
        )
    if not checks:
        raise SuiteError(
            "this eval has neither expectations nor an expected_output, so nothing judges a run",
            location=at,
            fix='add "expectations": ["The output includes X"] or an "expected_output"',
        )
    scenario["checks"] = checks
    if isinstance(item.get("name"), str) and item["name"]:
        scenario["name"] = item["name"]
    files = []
    for index, written in enumerate(_texts(item, "files", at, "the input files")):
        relative = PurePosixPath(written)
        source = skill / relative
        if relative.is_absolute() or ".." in relative.parts or not source.exists():
            raise SuiteError(
                f"input file {written!r} is not in the skill's folder (looked at {source})",
                location=f"{at}/files/{index}",
                fix="give a path relative to the skill's folder, e.g. evals/files/sample.pdf",
            )
        files.append(
            {
                "path": Path(os.path.relpath(source, path.resolve().parent)).as_posix(),
                "to": relative.as_posix(),
            }
        )
    if files:
        scenario["workspace_files"] = files
    return scenario


def evals_document(data: Any, path: Path, _options: object = None) -> dict[str, Any]:
    """A skill-creator ``evals.json`` as a scenario suite document (``scenarios.schema.json``).

    Raises:
        SuiteError: no evals, an eval without an integer id or a prompt, an expectation that is
            not a text, an input file outside the skill's folder, or no skill around the file.
    """
    evals = data.get("evals")
    if not isinstance(evals, list) or not evals:
        raise SuiteError(
            "evals must be a non-empty list",
            location=f"{path}#/evals",
            fix='list the test cases: "evals": [{"id": 1, "prompt": "...", ...}]',
        )
    keys = _skill_keys(path)
    skill = skill_folder(path)
    return {
        "schema_version": 1,
        "name": f"{data.get('skill_name') or keys['skill']} evals",
        **keys,
        "scenarios": [
            _eval_scenario(item, f"{path}#/evals/{index}", path, skill)
            for index, item in enumerate(evals)
        ],
    }


EVALS_FILE = Format(
    name="skill-creator evals.json",
    layer="scenarios",
    command="skilltest scenarios FILE (or the skill's folder)",
    how="scenario ids are the evals' ids, each expectation and the expected output a judge check",
    read=evals_document,
)
"""skill-creator's test cases."""

TRIGGER_EVAL_SET = Format(
    name="skill-creator trigger eval set",
    layer="triggers",
    command="skilltest triggers FILE (--runs-per-query N, --trigger-threshold T)",
    how="query ids are positions",
    read=trigger_document,
)
"""skill-creator's trigger eval set."""
