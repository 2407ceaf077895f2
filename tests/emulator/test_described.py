"""The ``described`` condition: the stand-in fires the skill whose listed description fits."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from skilltest.emulator import ModelScript, RequestView, ScriptedModel
from skilltest.emulator.described import DescribedCondition, distinctive_words, stem

REQUESTS = Path(__file__).parent / "requests"

LGTM = (
    "Investigate production incidents with the LGTM stack (Loki logs, Grafana, Tempo traces, "
    "Mimir/Prometheus metrics) through the `lgtm` CLI. Use when the user asks about errors, "
    "latency, outages or the health of a service."
)
SAFE_MIGRATIONS = (
    "Write PostgreSQL schema migrations that do not lock large production tables. Use when the "
    "user asks for a migration, an index, a new or renamed column, or a constraint on an "
    "existing table."
)


def real_request(name: str) -> dict[str, Any]:
    """A request body Claude Code 2.1.328 sent (long texts trimmed)."""
    body: dict[str, Any] = json.loads((REQUESTS / f"cc-2.1.328-{name}.json").read_text())
    return body


def fire_script(min_overlap: int) -> ModelScript:
    return ModelScript.from_dict(
        {
            "schema_version": 1,
            "rules": [
                {
                    "id": "fire",
                    "when": {"described": {"min_overlap": min_overlap}},
                    "reply": {
                        "text": "This fits {described}; loading it.",
                        "tool_calls": [{"name": "Skill", "input": {"skill": "{described}"}}],
                    },
                }
            ],
            "default": {"text": "A plain answer."},
        }
    )


def answered(script: ModelScript, body: dict[str, Any]) -> tuple[str | None, list[Any]]:
    answer = ScriptedModel(script).answer(body)
    content = answer.message.data["content"]
    return answer.rule_id, [
        block["input"] if block["type"] == "tool_use" else block["text"] for block in content
    ]


def with_listing(body: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``body`` with one listed description replaced, as ``--description`` would send it."""
    changed = copy.deepcopy(body)
    for message in changed["messages"]:
        if message["role"] == "system":
            text = message["content"] if isinstance(message["content"], str) else None
            if text is None:
                block = message["content"][0]
                assert old in block["text"]
                block["text"] = block["text"].replace(old, new)
            else:
                assert old in text
                message["content"] = text.replace(old, new)
    return changed


def user_prompt(body: dict[str, Any], prompt: str) -> dict[str, Any]:
    """``body`` with the user's prompt (the last text of the first user message) replaced."""
    changed = copy.deepcopy(body)
    changed["messages"][0]["content"][-1]["text"] = prompt
    return changed


# --- what the condition reads of Claude Code's real requests ----------------------------------


@pytest.mark.parametrize("name", ["two-skills-listed", "two-skills-after-glob"])
def test_the_listing_of_a_real_request_gives_names_and_descriptions(name: str) -> None:
    view = RequestView.from_body(real_request(name))

    # The agent types listed just before ("- general-purpose: ...") are not skills.
    assert view.skill_listing == (("lgtm", LGTM), ("safe-migrations", SAFE_MIGRATIONS))
    assert view.skills_listed == {"lgtm", "safe-migrations"}
    assert view.user_text == "Add an index on orders.customer_id"


def test_first_request_fires_the_skill_whose_description_fits() -> None:
    # "Add an index on orders.customer_id" shares one word with safe-migrations ("index") and
    # none with lgtm.
    body = real_request("two-skills-listed")

    assert answered(fire_script(1), body) == (
        "fire",
        ["This fits safe-migrations; loading it.", {"skill": "safe-migrations"}],
    )
    assert answered(fire_script(2), body) == (None, ["A plain answer."])


def test_after_a_glob_call_the_prompt_still_decides() -> None:
    body = real_request("two-skills-after-glob")
    assert RequestView.from_body(body).turn == 2

    assert answered(fire_script(1), body) == (
        "fire",
        ["This fits safe-migrations; loading it.", {"skill": "safe-migrations"}],
    )


def test_changing_only_the_description_changes_what_the_stand_in_does() -> None:
    body = real_request("two-skills-listed")
    vague = with_listing(body, SAFE_MIGRATIONS, "Helps with databases.")
    sharper = with_listing(
        body, SAFE_MIGRATIONS, "Add an index or a column to a PostgreSQL table without downtime."
    )

    assert answered(fire_script(1), vague)[0] is None
    assert answered(fire_script(2), body)[0] is None
    assert answered(fire_script(2), sharper) == (
        "fire",
        ["This fits safe-migrations; loading it.", {"skill": "safe-migrations"}],
    )


@pytest.mark.parametrize(
    ("prompt", "fired"),
    [
        ("Error spike in checkout. Find out why in the logs.", "lgtm"),
        ("The p99 latency of the checkout service doubled after the deploy.", "lgtm"),
        ("Write a migration that renames users.email to users.login.", "safe-migrations"),
        ("Add a NOT NULL column to the accounts table.", "safe-migrations"),
        ("What is the capital of France?", None),
        ("How do I migrate my photos to a new phone?", None),  # near miss: one shared word
        ("Fix this Python error: list index out of range", None),  # one word with each skill
    ],
)
def test_which_skill_the_prompt_fires_with_two_shared_words(prompt: str, fired: str) -> None:
    body = user_prompt(real_request("two-skills-listed"), prompt)

    rule_id, content = answered(fire_script(2), body)

    assert (content[-1] if rule_id else None) == (None if fired is None else {"skill": fired})


def test_the_best_fit_wins_and_ties_go_to_the_name_that_sorts_first() -> None:
    condition = DescribedCondition(min_overlap=1)
    listing = [
        ("zeta", "Tune slow database queries and indexes."),
        ("alpha", "Review slow database dashboards."),
        ("beta", "Slow database queries."),
    ]

    best = condition.best("Why are my database queries slow?", listing)
    assert best is not None
    assert (best.skill, best.shared) == ("beta", ("databas", "query", "slow"))
    # "zeta" shares as many words as "beta": the name decides, not the listing order.
    tie = condition.best("slow database queries", [listing[0], listing[2]])
    assert tie is not None and tie.skill == "beta"
    assert condition.best("Bake a cake", listing) is None


def test_the_skill_name_counts_as_listed_text() -> None:
    best = DescribedCondition(min_overlap=2).best(
        "Use the lgtm skill on the loki data", [("lgtm", LGTM)]
    )
    assert best is not None and best.shared == ("lgtm", "loki")


@pytest.mark.parametrize(
    ("words", "stems"),
    [
        ("errors error", {"error"}),
        ("tables table", {"tabl"}),
        ("renamed renames rename", {"renam"}),
        ("indexes index", {"index"}),
        ("outages outage", {"outag"}),
        ("latencies latency", {"latency"}),
        ("services service", {"servic"}),
        ("class status", {"class", "status"}),
        ("Use when the user asks for help with a skill", set()),
    ],
)
def test_words_meet_after_lower_casing_stemming_and_stop_words(words: str, stems: set[str]) -> None:
    assert distinctive_words(words) == stems
    assert distinctive_words(words.upper()) == stems


def test_short_words_keep_their_ending() -> None:
    assert [stem(word) for word in ("logs", "bus", "red", "uses")] == ["log", "bus", "red", "use"]


def test_a_description_over_several_lines_is_read_whole() -> None:
    listing = (
        "<system-reminder>\nThe following skills are available for use with the Skill tool:\n\n"
        "- review: Review pull requests\n  for style and bugs.\n- deploy: Ship it.\n\n"
        "- not-a-skill: after the blank line\n</system-reminder>"
    )
    view = RequestView.from_body({"model": "m", "messages": [{"role": "user", "content": listing}]})
    assert view.skill_listing == (
        ("review", "Review pull requests for style and bugs."),
        ("deploy", "Ship it."),
    )


def test_other_conditions_still_apply() -> None:
    script = ModelScript.from_dict(
        {
            "schema_version": 1,
            "rules": [
                {
                    "id": "fire-first-turn",
                    "when": {"described": {"min_overlap": 1}, "turn": 1},
                    "reply": {"tool_calls": [{"name": "Skill", "input": {"skill": "{described}"}}]},
                }
            ],
        }
    )

    assert answered(script, real_request("two-skills-listed"))[0] == "fire-first-turn"
    assert answered(script, real_request("two-skills-after-glob"))[0] is None


def test_nested_tool_inputs_are_filled_too() -> None:
    script = ModelScript.from_dict(
        {
            "schema_version": 1,
            "rules": [
                {
                    "id": "fire",
                    "when": {"described": {"min_overlap": 1}},
                    "reply": {
                        "thinking": "{described} fits",
                        "tool_calls": [
                            {
                                "name": "Bash",
                                "input": {"command": "echo {described}", "args": ["{described}"]},
                            }
                        ],
                    },
                }
            ],
        }
    )
    answer = ScriptedModel(script).answer(real_request("two-skills-listed"))
    thinking, call = answer.message.data["content"]

    assert thinking["thinking"] == "safe-migrations fits"
    assert call["input"] == {"command": "echo safe-migrations", "args": ["safe-migrations"]}
