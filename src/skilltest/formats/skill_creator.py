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
"""

from __future__ import annotations

import os
from pathlib import Path
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


def trigger_document(data: Any, path: Path) -> dict[str, Any]:
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


TRIGGER_EVAL_SET = Format(
    name="skill-creator trigger eval set",
    layer="triggers",
    command="skilltest triggers FILE (--runs-per-query N, --trigger-threshold T)",
    read=trigger_document,
)
"""skill-creator's trigger eval set."""
