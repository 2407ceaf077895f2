"""The example trigger suites' model scripts fire the right skill for every query, by description.

Each query of ``tests/triggers/*.yaml`` is played against its model script as Claude Code 2.1.328
would send it (the first request of a real run with both example skills listed, the prompt and the
descriptions taken from the suite and the skills' SKILL.md), feeding each tool call back as a tool
result, until the stand-in calls the Skill tool or answers. Fast and without the CLI: a
description or a query edited so that an example would fail offline fails here first.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from skilltest.emulator import ModelScript, ScriptedModel

HERE = Path(__file__).parent
REPO = HERE.parent.parent
SUITES = sorted((REPO / "tests" / "triggers").glob("*.yaml"))
FIRST_REQUEST = HERE / "requests" / "cc-2.1.328-two-skills-listed.json"
LISTING_HEADER = "The following skills are available for use with the Skill tool:\n\n"


def description(skill: str) -> str:
    text = (REPO / "skills" / skill / "SKILL.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---", 2)[1])
    return str(front["description"])


def first_request(prompt: str, skills: list[str]) -> dict[str, Any]:
    """The real first request, with ``prompt`` and a listing of ``skills`` as they are now."""
    body: dict[str, Any] = json.loads(FIRST_REQUEST.read_text(encoding="utf-8"))
    body["messages"][0]["content"][-1]["text"] = prompt
    system = body["messages"][1]["content"][0]
    start = system["text"].index(LISTING_HEADER) + len(LISTING_HEADER)
    end = system["text"].index("\n\n", start)
    listing = "\n".join(f"- {name}: {description(name)}" for name in skills)
    system["text"] = system["text"][:start] + listing + system["text"][end:]
    return body


def tool_calls_until_a_skill(script: ModelScript, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The stand-in's tool calls, turn by turn, up to its first Skill call or its answer."""
    model = ScriptedModel(script)
    calls: list[dict[str, Any]] = []
    for _ in range(5):
        content = model.answer(body).message.data["content"]
        uses = [block for block in content if block["type"] == "tool_use"]
        calls.extend({"name": use["name"], "input": use["input"]} for use in uses)
        if not uses or any(use["name"] == "Skill" for use in uses):
            return calls
        body = copy.deepcopy(body)
        body["messages"].append({"role": "assistant", "content": content})
        body["messages"].append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": use["id"], "content": "No files found"}
                    for use in uses
                ],
            }
        )
    return calls


CASES = [
    pytest.param(path, query, id=f"{path.stem}/{query['id']}")
    for path in SUITES
    for query in yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]
]


def test_both_example_suites_are_here() -> None:
    assert [path.name for path in SUITES] == ["lgtm.yaml", "safe-migrations.yaml"]


@pytest.mark.parametrize(("path", "query"), CASES)
def test_the_stand_in_fires_the_skill_exactly_when_it_should(
    path: Path, query: dict[str, Any]
) -> None:
    suite = yaml.safe_load(path.read_text(encoding="utf-8"))
    script = ModelScript.load(path.parent / suite["model_script"])
    skills = sorted([suite["skill"], *suite["distractors"]])

    calls = tool_calls_until_a_skill(script, first_request(query["query"], skills))

    fired = {"name": "Skill", "input": {"skill": suite["skill"]}} in calls
    assert fired is query["should_trigger"], calls


def test_some_should_trigger_queries_fire_after_another_tool_call() -> None:
    # Real models often look around first; the examples must show that this still counts.
    late = []
    for path, query in (case.values for case in CASES):
        suite = yaml.safe_load(path.read_text(encoding="utf-8"))
        script = ModelScript.load(path.parent / suite["model_script"])
        skills = sorted([suite["skill"], *suite["distractors"]])
        calls = tool_calls_until_a_skill(script, first_request(query["query"], skills))
        if query["should_trigger"] and calls[0]["name"] != "Skill":
            late.append(query["id"])
    assert late == ["outage-traces", "add-index-orders", "invoices-constraint"]
