"""Honeycomb's scoring beside skilltest's: the same runs, each section added up as the suite asks,
and the file shapes that choose Honeycomb's without a ``scoring:`` key."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from skilltest.errors import SuiteError
from skilltest.scenarios.rubric import score
from skilltest.scenarios.scoring import has_honeycomb_shape, suite_scoring
from skilltest.scenarios.suite import load_scenario_suite

from .test_rubric import expected, run

BREAKDOWN = expected(
    required_patterns=["--calculate COUNT", r"--breakdown http\.route"],
    anti_patterns=["--limit [0-9]{4,}"],
)
RAW_DUMP = run(("Bash", {"command": "hny query --filter 'error = true' --limit 5000"}))
GOOD = run(("Bash", {"command": "hny query --calculate COUNT --breakdown http.route"}))


@pytest.mark.parametrize(
    ("transcript", "skilltest", "honeycomb", "explained"),
    [
        # patterns 0, anti-pattern hit; honeycomb adds 0.30 + 0.15 + 0.10 for the empty sections.
        (RAW_DUMP, 0.0, 0.55, "required_tools 1 (empty: full credit)"),
        (GOOD, 1.0, 1.0, "tool_ordering 1 (empty: full credit)"),
        # No action at all: skilltest credits no restraint; honeycomb's evaluator does (0.20).
        (run(), 0.0, 0.75, "anti_patterns 0/1 hit"),
    ],
)
def test_a_run_scores_under_each_scoring(transcript, skilltest, honeycomb, explained):
    assert score(transcript, BREAKDOWN).score == skilltest
    card = score(transcript, replace(BREAKDOWN, scoring="honeycomb"))
    assert card.score == honeycomb
    assert explained in card.explain()


def test_a_skill_entry_is_a_tool_under_honeycomb_s_scoring_and_an_indicator_under_skilltest_s(
    tmp_path: Path,
):
    folder = tmp_path / "skills" / "q"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: q\ndescription: queries\n---\nQuery.\n")
    body = (
        "scenarios:\n"
        "  - id: s\n    prompt: p\n    expected_skills: [q]\n"
        "    expected: {required_patterns: ['COUNT'], recommended_tools: [Skill]}\n"
    )
    honeycomb = tmp_path / "honeycomb.yaml"
    honeycomb.write_text(body)
    plain = tmp_path / "plain.yaml"
    plain.write_text("scoring: skilltest\n" + body)
    [by_shape] = load_scenario_suite(honeycomb).scenarios
    [asked] = load_scenario_suite(plain).scenarios
    assert by_shape.expected.recommended_tools == ("Skill",)
    assert asked.expected.recommended_tools == ()
    loaded = run(("Skill", {"skill": "q"}), ("Bash", {"command": "COUNT"}))
    unloaded = run(("Bash", {"command": "COUNT"}))
    assert [score(t, by_shape.expected).score for t in (loaded, unloaded)] == [1.0, 0.9]
    assert [score(t, asked.expected).score for t in (loaded, unloaded)] == [1.0, 1.0]


@pytest.mark.parametrize(
    ("document", "shaped"),
    [
        (
            {
                "scenarios": [
                    {"id": "a", "prompt": "p", "expected": {"anti_patterns": []}},
                    {"id": "b", "prompt": "p", "expected_skills": ["q"]},
                ]
            },
            True,
        ),
        (
            {
                "name": "n",
                "scenarios": [
                    {
                        "id": "a",
                        "prompt": "p",
                        "config": {"max_turns": 4},
                        "comparison": True,
                        "expected_skills": ["q"],
                    }
                ],
            },
            True,
        ),
        # No scenario names its skills: the skill comes from elsewhere (--skill).
        ({"scenarios": [{"id": "a", "prompt": "p", "expected": {"anti_patterns": []}}]}, False),
        # skilltest's own keys: a skill, weights, checks, a veto, a config key of its own.
        ({"skill": "x", "scenarios": [{"id": "a", "prompt": "p"}]}, False),
        ({"weights": {}, "scenarios": [{"id": "a", "prompt": "p"}]}, False),
        ({"scenarios": [{"id": "a", "prompt": "p", "checks": []}]}, False),
        (
            {
                "scenarios": [
                    {
                        "id": "a",
                        "prompt": "p",
                        "expected": {"anti_patterns": [{"pattern": "x", "veto": True}]},
                    }
                ]
            },
            False,
        ),
        ({"scenarios": [{"id": "a", "prompt": "p", "config": {"model": "m"}}]}, False),
    ],
)
def test_the_file_shape_that_chooses_honeycomb_s_scoring(document, shaped):
    assert has_honeycomb_shape(document) is shaped
    chosen = suite_scoring(document)
    assert (chosen.scoring, chosen.detected) == (
        ("honeycomb", True) if shaped else ("skilltest", False)
    )


def test_scoring_names_one_of_the_two(tmp_path: Path):
    suite = tmp_path / "s.yaml"
    suite.write_text("scoring: inspect\nskill: x\nscenarios: [{id: a, prompt: p}]\n")
    with pytest.raises(SuiteError) as raised:
        load_scenario_suite(suite)
    assert "#/scoring" in str(raised.value)
    assert "'skilltest', 'honeycomb'" in str(raised.value)
