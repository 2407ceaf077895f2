"""The weighted rubric: hand-checked scores, explanations, unscored runs and real transcripts."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from skilltest.errors import InputError, SuiteError
from skilltest.patterns import compile_patterns
from skilltest.scenarios.rubric import (
    COMPONENTS,
    CallEvidence,
    ComponentScore,
    Evidence,
    Expected,
    PatternScope,
    ScoreCard,
    Weights,
    expand_nested_json,
    input_strings,
    run_evidence,
    score,
    skill_requirement,
    skills_fired,
)
from skilltest.transcript import ToolCall, Transcript
from skilltest.transcript.stream_json import load_transcript

from ..conftest import CORPUS

CC = CORPUS / "claude-code-2.1.328"

Call = tuple[str, dict[str, Any]]


def run(*calls: Call, text: str = "", error: str | None = None, **extra: Any) -> Transcript:
    return Transcript(
        source="test",
        tool_calls=tuple(
            ToolCall(id=f"t{n}", name=name, input=arguments, **extra)
            for n, (name, arguments) in enumerate(calls)
        ),
        assistant_text=(text,) if text else (),
        error=error,
    )


def expected(
    *,
    required_tools: list[str] | None = None,
    required_patterns: list[str] | None = None,
    anti_patterns: list[str] | None = None,
    tool_ordering: list[list[str]] | None = None,
    recommended_tools: list[str] | None = None,
    weights: Weights | None = None,
    text_patterns: list[str] | None = None,
    pattern_scope: PatternScope = "tools",
    expected_skills: tuple[str, ...] = (),
) -> Expected:
    where = "suite.yaml#/scenarios/0/expected"
    return Expected(
        required_tools=tuple(required_tools or ()),
        required_patterns=compile_patterns(required_patterns or (), f"{where}/required_patterns"),
        anti_patterns=compile_patterns(anti_patterns or (), f"{where}/anti_patterns"),
        tool_ordering=tuple(tuple(s) for s in tool_ordering or ()),
        recommended_tools=tuple(recommended_tools or ()),
        weights=weights or Weights(),
        text_patterns=compile_patterns(text_patterns or (), f"{where}/text_patterns"),
        pattern_scope=pattern_scope,
        expected_skills=expected_skills,
    )


BASH_LS: Call = ("Bash", {"command": "ls -la"})
READ: Call = ("Read", {"file_path": "app.log"})
SKILL: Call = ("Skill", {"skill": "lgtm"})
QUERY = '{"calculations": [{"op": "P99", "column": "duration_ms"}], "time_range": 3600}'
MCP_QUERY: Call = ("mcp__honeycomb__run_query", {"dataset": "api", "query": QUERY})

SCORES = [
    pytest.param([BASH_LS, READ], "", {"required_tools": ["Bash", "Read"]}, 1.0, id="all-tools"),
    pytest.param(
        [BASH_LS, READ],
        "",
        {"required_tools": ["Bash", "Read", "Write"]},
        0.6666666667,
        id="2-of-3-required-tools",
    ),
    pytest.param(
        [BASH_LS, READ],
        "",
        {"required_tools": ["Bash", "Read", "Write"], "required_patterns": ["ls -la"]},
        # (0.30 * 2/3 + 0.25 * 1) / 0.55
        0.8181818182,
        id="2-of-3-tools-and-a-pattern-renormalised",
    ),
    pytest.param(
        [BASH_LS, ("Bash", {"command": "rm -rf build"})],
        "",
        {"anti_patterns": ["rm -rf", "(?i)delete"]},
        0.5,
        id="one-of-two-anti-patterns-hit",
    ),
    pytest.param(
        [BASH_LS],
        "I will delete everything.",
        {"anti_patterns": ["rm -rf", "(?i)delete"], "pattern_scope": "all"},
        0.5,
        id="one-of-two-anti-patterns-hit-in-the-text-with-scope-all",
    ),
    pytest.param(
        [READ, BASH_LS],
        "",
        {"tool_ordering": [["Read", "Bash"]], "required_tools": ["Read"]},
        1.0,
        id="ordering-found",
    ),
    pytest.param(
        [BASH_LS, READ],
        "",
        {"tool_ordering": [["Read", "Bash"]], "required_tools": ["Read"]},
        # (0.30 * 1 + 0.15 * 0) / 0.45
        0.6666666667,
        id="ordering-not-found",
    ),
    pytest.param(
        [READ, ("Glob", {}), BASH_LS],
        "",
        {"tool_ordering": [["Read", "Bash"], ["Bash", "Read"]]},
        0.5,
        id="one-of-two-orderings-with-calls-in-between",
    ),
    pytest.param(
        [READ], "", {"tool_ordering": [["Read"]]}, 1.0, id="a-one-tool-ordering-is-that-tool-called"
    ),
    pytest.param(
        [BASH_LS],
        "",
        {"required_patterns": ["ls"], "recommended_tools": ["Grep"]},
        # 0.25 / (0.25 + 0.10)
        0.7142857143,
        id="only-two-components-renormalised",
    ),
    pytest.param(
        [("Glob", {}), BASH_LS, READ],
        "The p99 is fine.",
        {
            "required_tools": ["Glob", "Bash", "Write"],
            "required_patterns": ["(?i)p99", "count_over_time"],
            "anti_patterns": ["ls -la"],
            "tool_ordering": [["Glob", "Read"]],
            "recommended_tools": ["Grep"],
            "pattern_scope": "all",
        },
        # 0.30 * 2/3 + 0.25 * 1/2 + 0.20 * 0 + 0.15 * 1 + 0.10 * 0
        0.475,
        id="all-five-components",
    ),
    pytest.param(
        [MCP_QUERY],
        "",
        {"required_patterns": [r'"op":\s*"P(99|95|90)"']},
        1.0,
        id="nested-json-argument",
    ),
    pytest.param(
        [("Task", {})], "", {"required_tools": ["Agent"]}, 1.0, id="Task-answers-to-Agent"
    ),
    pytest.param(
        [("Agent", {})], "", {"required_tools": ["Task"]}, 1.0, id="Agent-answers-to-Task"
    ),
    pytest.param(
        [("Task", {}), BASH_LS],
        "",
        {"tool_ordering": [["Agent", "Bash"]]},
        1.0,
        id="Task-in-an-ordering",
    ),
    pytest.param([MCP_QUERY], "", {"required_tools": ["run_query"]}, 1.0, id="mcp-short-name"),
    pytest.param(
        [MCP_QUERY], "", {"required_tools": ["mcp__honeycomb__run_query"]}, 1.0, id="mcp-full-name"
    ),
    pytest.param([MCP_QUERY], "", {"required_tools": ["query"]}, 0.0, id="mcp-partial-name"),
    pytest.param(
        [SKILL, BASH_LS],
        "",
        {"required_patterns": ['"skill": "lgtm"', "lgtm"]},
        0.0,
        id="a-Skill-call-is-not-evidence",
    ),
    pytest.param(
        [],
        "Use count_over_time first.",
        {"required_patterns": ["count_over_time"], "pattern_scope": "text"},
        1.0,
        id="text-scope",
    ),
    pytest.param(
        [BASH_LS],
        "",
        {"required_tools": ["Bash"], "weights": Weights(required_tools=0.0)},
        None,
        id="only-component-weighs-zero",
    ),
    pytest.param(
        [BASH_LS],
        "",
        {
            "required_tools": ["Bash", "Read"],
            "required_patterns": ["nope"],
            "weights": Weights(required_tools=3, required_patterns=1),
        },
        # (3 * 1/2 + 1 * 0) / 4
        0.375,
        id="custom-weights",
    ),
]


@pytest.mark.parametrize(("calls", "text", "spec", "expected_score"), SCORES)
def test_hand_checked_scores(
    calls: list[Call], text: str, spec: dict[str, Any], expected_score: float | None
) -> None:
    card = score(run(*calls, text=text), expected(**spec))

    assert card.score == expected_score


def test_left_out_components_are_none_and_weights_renormalised() -> None:
    card = score(run(BASH_LS), expected(required_patterns=["ls"], recommended_tools=["Grep"]))

    assert card.components["required_tools"] is None
    assert card.components["anti_patterns"] is None
    assert card.components["tool_ordering"] is None
    weights = {name: c.weight for name, c in card.components.items() if c is not None}
    assert weights == {"required_patterns": 0.7142857143, "recommended_tools": 0.2857142857}


def test_an_unscored_run_carries_the_reason_and_no_components() -> None:
    failed = run(BASH_LS, error="model API error: API Error: 529 overloaded (HTTP 529)")

    card = score(failed, expected(required_tools=["Bash"]))

    assert card.score is None
    assert not card.scored
    assert card.unscored_reason == "model API error: API Error: 529 overloaded (HTTP 529)"
    assert card.components == dict.fromkeys(COMPONENTS)
    assert card.tool_calls == 1
    assert card.explain() == "unscored: model API error: API Error: 529 overloaded (HTTP 529)"


@pytest.mark.parametrize(
    ("rubric", "reason"),
    [
        (
            Expected(),
            "the scenario's rubric defines no component (required_tools, required_patterns, "
            "anti_patterns, tool_ordering, recommended_tools, checks)",
        ),
        (
            Expected(
                required_tools=("Bash",),
                recommended_tools=("Read",),
                weights=Weights(required_tools=0, recommended_tools=0),
            ),
            "every component the scenario defines has weight 0: required_tools, recommended_tools",
        ),
    ],
)
def test_a_rubric_with_nothing_to_score_leaves_the_run_unscored(
    rubric: Expected, reason: str
) -> None:
    card = score(run(BASH_LS), rubric)

    assert (card.score, card.unscored_reason) == (None, reason)


def test_tool_results_are_not_evidence() -> None:
    call = ToolCall(
        id="t1", name="Bash", input={"command": "cat log"}, result="ERROR count_over_time"
    )
    transcript = Transcript(source="test", tool_calls=(call,))

    card = score(transcript, expected(required_patterns=["count_over_time"]))

    assert card.score == 0.0


def test_subagent_and_refused_calls_count() -> None:
    sub = ToolCall(id="t2", name="Bash", input={"command": "lgtm loki"}, parent_tool_use_id="t1")
    refused = ToolCall(id="t3", name="Write", input={"file_path": "x"}, is_error=True)
    transcript = Transcript(source="test", tool_calls=(sub, refused))

    card = score(transcript, expected(required_tools=["Write"], required_patterns=["lgtm loki"]))

    assert card.score == 1.0


def test_evidence_is_each_call_as_json_and_as_its_strings_then_the_text() -> None:
    transcript = run(SKILL, BASH_LS, MCP_QUERY, text="Done: naïve p99.")

    evidence = run_evidence(transcript)

    assert evidence == Evidence(
        calls=(
            CallEvidence("Bash", 'Bash {"command": "ls -la"}', ("ls -la",)),
            CallEvidence(
                "mcp__honeycomb__run_query",
                'mcp__honeycomb__run_query {"dataset": "api", "query": {"calculations": '
                '[{"op": "P99", "column": "duration_ms"}], "time_range": 3600}}',
                ("api", QUERY, "P99", "duration_ms"),
            ),
        ),
        text="Done: naïve p99.",
    )
    assert [item for _, item in evidence.forms("text")] == ["Done: naïve p99."]
    assert len(list(evidence.forms("all"))) == len(list(evidence.forms("tools"))) + 1 == 8


@pytest.mark.parametrize(
    ("value", "expanded"),
    [
        ({"q": '{"a": 1}'}, {"q": {"a": 1}}),
        ({"q": ' [1, "{\\"b\\": 2}"] '}, {"q": [1, {"b": 2}]}),
        ({"q": "{not json}"}, {"q": "{not json}"}),
        ({"q": "42"}, {"q": "42"}),
        ({"q": '"quoted"'}, {"q": '"quoted"'}),
        ({"list": ['{"x": "y"}', "plain"]}, {"list": [{"x": "y"}, "plain"]}),
    ],
)
def test_nested_json_is_expanded_only_for_objects_and_arrays(value: Any, expanded: Any) -> None:
    assert expand_nested_json(value) == expanded


def test_card_says_what_matched_what_is_missing_and_what_came_closest() -> None:
    transcript = run(
        ("grep", {"pattern": "error"}),
        ("Bash", {"command": "lgtm loki query '{app=\"checkout\"}'"}),
        text="Let me look at the raw logs.",
    )

    card = score(
        transcript,
        expected(
            required_tools=["Grep", "Bash"],
            required_patterns=[r"(?i)count_over_time\(", r"lgtm\s+loki"],
            anti_patterns=["raw logs"],
            tool_ordering=[["Bash", "Read"]],
            pattern_scope="all",
        ),
    )

    tools = card.components["required_tools"]
    patterns = card.components["required_patterns"]
    anti = card.components["anti_patterns"]
    ordering = card.components["tool_ordering"]
    assert tools is not None and patterns is not None and anti is not None and ordering is not None
    assert (tools.matched, tools.missing, tools.closest) == (("Bash",), ("Grep",), {"Grep": "grep"})
    assert patterns.matched == (r"lgtm\s+loki",)
    assert patterns.evidence == {
        r"lgtm\s+loki": 'Bash {"command": "lgtm loki query \'{app=\\"checkout\\"}\'"}'
    }
    # Nothing holds "count_over_time": no closest text to show.
    assert patterns.closest == {}
    assert (anti.matched, anti.value) == (("raw logs",), 0.0)
    assert anti.evidence == {"raw logs": "Let me look at the raw logs."}
    assert ordering.closest == {"Bash → Read": "Bash found, then no Read after it"}
    # 0.30 * 1/2 + 0.25 * 1/2 + 0.20 * 0 + 0.15 * 0, over 0.90
    assert card.score == 0.3055555556


def test_closest_text_is_the_evidence_around_the_longest_word_of_the_pattern() -> None:
    transcript = run(("Bash", {"command": "lgtm tempo search --service checkout"}))

    card = score(transcript, expected(required_patterns=[r"lgtm\s+loki\s+query.*checkout"]))

    patterns = card.components["required_patterns"]
    assert patterns is not None
    assert patterns.closest == {
        r"lgtm\s+loki\s+query.*checkout": '… "lgtm tempo search --service checkout"}'
    }


@pytest.mark.parametrize(
    ("calls", "closest"),
    [
        ([("Bash", {})], {"Agent → Bash": "no Agent call"}),
        ([("Agent", {}), ("Read", {})], {"Agent → Bash": "Agent found, then no Bash after it"}),
    ],
)
def test_closest_for_a_missing_ordering(calls: list[Call], closest: dict[str, str]) -> None:
    card = score(run(*calls), expected(tool_ordering=[["Agent", "Bash"]]))

    ordering = card.components["tool_ordering"]
    assert ordering is not None
    assert ordering.closest == closest


def test_closest_tool_is_left_out_when_nothing_called_is_alike() -> None:
    card = score(run(BASH_LS), expected(required_tools=["WebSearch"]))

    tools = card.components["required_tools"]
    assert tools is not None
    assert tools.closest == {}


def test_explain_is_one_line_per_card() -> None:
    card = score(
        run(("grep", {}), ("Bash", {"command": "rm -rf /tmp/x"})),
        expected(
            required_tools=["Grep", "Bash"],
            required_patterns=["lgtm"],
            anti_patterns=["rm -rf"],
        ),
    )

    assert card.explain() == (
        "score 0.20: required_tools 1/2 (missing 'Grep', closest 'grep')"
        " | required_patterns 0/1 (missing 'lgtm')"
        " | anti_patterns 1/1 hit ('rm -rf' at 'Bash {\"command\": \"rm -rf /tmp/x\"}')"
    )
    assert "\n" not in card.explain()


def test_score_card_round_trips_through_json() -> None:
    card = score(
        replace(run(SKILL, BASH_LS, text="p99"), skills_invoked=("lgtm",)),
        expected(
            required_tools=["Bash", "Read"],
            required_patterns=["ls"],
            text_patterns=["p99"],
            anti_patterns=["x"],
            expected_skills=("lgtm", "other"),
        ),
    )

    data = json.loads(json.dumps(card.to_dict()))

    assert data["schema_version"] == 1
    assert data["components"]["tool_ordering"] is None
    assert data["components"]["required_tools"]["missing"] == ["Read"]
    assert data["components"]["required_patterns"]["matched"] == ["ls", "text: p99"]
    assert (data["expected_skills"], data["skills_fired"]) == (
        ["lgtm", "other"],
        {"lgtm": True, "other": False},
    )
    assert ScoreCard.from_dict(data) == card


def test_a_card_without_a_note_or_expected_skills_still_reads() -> None:
    card = score(run(BASH_LS), expected(anti_patterns=["x"]))
    data = card.to_dict()
    del data["expected_skills"], data["skills_fired"]
    assert data["components"]["anti_patterns"].pop("note") is None

    assert ScoreCard.from_dict(data) == card


def test_unscored_card_round_trips() -> None:
    card = score(run(error="the CLI stopped without a result event (exit status 137)"), Expected())

    assert ScoreCard.from_dict(json.loads(json.dumps(card.to_dict()))) == card


def test_card_of_an_unknown_layout_is_refused() -> None:
    with pytest.raises(InputError) as caught:
        ScoreCard.from_dict({"schema_version": 99})

    assert str(caught.value) == (
        "score card schema_version 99 is not supported (this skilltest reads 1)\n"
        "  fix: re-run the suite with this version of skilltest"
    )


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (
            {"anti_patterns": -0.1},
            "the weight of anti_patterns must be a finite number >= 0, got -0.1\n"
            "  fix: use 0 to leave a component out of the score",
        ),
        (
            {"tool_ordering": float("nan")},
            "the weight of tool_ordering must be a finite number >= 0, got nan\n"
            "  fix: use 0 to leave a component out of the score",
        ),
        ({"required_tools": "high"}, "the weight of required_tools must be a number, got 'high'"),
    ],
)
def test_bad_weights_are_suite_errors(weights: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError) as caught:
        Weights(**weights)

    assert str(caught.value) == message


def test_default_weights_are_the_documented_ones() -> None:
    assert [Weights().of(name) for name in COMPONENTS] == [0.30, 0.25, 0.20, 0.15, 0.10, 0.30]


def test_component_value_stays_a_share() -> None:
    component = ComponentScore(value=0.5, weight=1.0, matched=("a",), missing=("b",))

    assert ComponentScore.from_dict(component.to_dict()) == component


# --- evidence: a tool call as JSON and as the strings it holds ---------------------------------

LOKI: Call = (
    "Bash",
    {"command": 'lgtm loki query \'{service_name="checkout"} |= "error"\' --since 1h'},
)
COMPACT_QUERY: Call = ("mcp__honeycomb__run_query", {"query": '{"op":"P99","column":"ms"}'})


@pytest.mark.parametrize(
    ("call", "pattern", "shown"),
    [
        # Quotes as the agent typed them: the string value, not its JSON escape.
        (
            LOKI,
            'service_name="checkout"',
            """Bash lgtm loki query '{service_name="checkout"} |= "error"' --since 1h""",
        ),
        # The JSON form still matches, as the public harnesses' suites expect.
        (
            LOKI,
            r'service_name=\\"checkout\\"',
            r"""…"command": "lgtm loki query '{service_name=\"checkout\"} |= \"error\"' --since 1h"}""",
        ),
        (
            LOKI,
            r'^Bash \{"command": "lgtm',
            r"""Bash {"command": "lgtm loki query '{service_name=\"c…""",
        ),
        (
            MCP_QUERY,
            r'"op":\s*"P99"',
            '…, "query": {"calculations": [{"op": "P99", "column": "duration_ms"}], "…',
        ),
        # A nested JSON string as written (no space after the colon) and the strings inside it.
        (COMPACT_QUERY, '"op":"P99"', 'mcp__honeycomb__run_query {"op":"P99","column":"ms"}'),
        (COMPACT_QUERY, "^P99$", "mcp__honeycomb__run_query P99"),
    ],
)
def test_a_pattern_matches_a_call_as_json_or_as_a_string_it_holds(
    call: Call, pattern: str, shown: str
) -> None:
    card = score(run(call), expected(required_patterns=[pattern]))

    patterns = card.components["required_patterns"]
    assert patterns is not None
    assert card.score == 1.0
    assert patterns.evidence == {pattern: shown}


def test_an_anti_pattern_matches_a_quoted_string_as_written() -> None:
    card = score(run(LOKI), expected(anti_patterns=['\\|= "error"']))

    assert card.score == 0.0


def test_input_strings_are_every_string_value_and_the_strings_in_nested_json() -> None:
    value = {"a": "x", "n": 3, "list": ["y", {"b": '{"c": ["z", 1]}'}], "ok": True}

    assert list(input_strings(value)) == ["x", "y", '{"c": ["z", 1]}', "z"]


# --- scope: by default patterns look at what the agent did, not what it said ----------------------

SAYS_NOT_DOES = "You could run lgtm loki query next. I will not use rm -rf."


@pytest.mark.parametrize(
    ("scope", "required", "anti"),
    [
        ("tools", 0.0, 1.0),  # the default: prose neither earns nor costs
        ("text", 1.0, 0.0),
        ("all", 1.0, 0.0),
    ],
)
def test_pattern_scope_says_where_patterns_look(
    scope: PatternScope, required: float, anti: float
) -> None:
    card = score(
        run(BASH_LS, text=SAYS_NOT_DOES),
        expected(required_patterns=["lgtm loki"], anti_patterns=["rm -rf"], pattern_scope=scope),
    )

    patterns, anti_patterns = card.components["required_patterns"], card.components["anti_patterns"]
    assert patterns is not None and anti_patterns is not None
    assert (patterns.value, anti_patterns.value) == (required, anti)


def test_saying_is_not_doing_by_default() -> None:
    # What an agent that only talks about the command scores, before and after it runs it.
    rubric = expected(required_patterns=["lgtm loki"], anti_patterns=["rm -rf"])
    talks = score(run(BASH_LS, text=SAYS_NOT_DOES), rubric)
    does = score(run(BASH_LS, ("Bash", {"command": "lgtm loki query x"})), rubric)

    assert (talks.score, does.score) == (0.4444444444, 1.0)


def test_with_scope_text_a_command_in_a_tool_call_does_not_count() -> None:
    card = score(
        run(("Bash", {"command": "lgtm loki query x"})),
        expected(required_patterns=["lgtm loki"], pattern_scope="text"),
    )

    assert card.score == 0.0


def test_text_patterns_count_in_the_required_patterns_component() -> None:
    loki = ("Bash", {"command": "lgtm loki query x; echo p50"})

    card = score(
        run(loki, text="p99 is 840 ms."),
        expected(required_patterns=["lgtm loki"], text_patterns=["p99", "p50"]),
    )

    patterns = card.components["required_patterns"]
    assert patterns is not None
    # p50 is only in the command: text_patterns look at the text whatever the scope.
    assert (patterns.matched, patterns.missing) == (("lgtm loki", "text: p99"), ("text: p50",))
    assert patterns.evidence["text: p99"] == "p99 is 840 ms."
    assert patterns.closest == {}
    assert card.score == 0.6666666667
    assert card.explain() == "score 0.67: required_patterns 2/3 (missing 'text: p50')"


def test_text_patterns_alone_define_the_required_patterns_component() -> None:
    rubric = expected(text_patterns=["p99"])

    assert rubric.defined == ("required_patterns",)
    assert score(run(text="p99 is fine"), rubric).score == 1.0


# --- no credit for doing nothing ---------------------------------------------------------------

REFUSAL = "I can't access your production systems, so I won't run anything."


def test_a_run_with_no_tool_call_gets_no_anti_pattern_credit_when_work_is_required() -> None:
    rubric = expected(required_patterns=["count_over_time"], anti_patterns=["rm -rf"])
    card = score(run(text=REFUSAL), rubric)

    anti = card.components["anti_patterns"]
    assert anti is not None
    assert (card.score, anti.value, anti.note) == (0.0, 0.0, "no tool call: nothing to credit")
    assert card.explain() == (
        "score 0.00: required_patterns 0/1 (missing 'count_over_time') | "
        "anti_patterns 0 (no tool call: nothing to credit)"
    )


def test_a_scenario_that_requires_nothing_credits_inaction() -> None:
    card = score(run(text=REFUSAL), expected(anti_patterns=["rm -rf", "--limit 5000"]))

    anti = card.components["anti_patterns"]
    assert anti is not None
    assert (card.score, anti.value, anti.note) == (1.0, 1.0, None)
    assert card.explain() == "score 1.00: anti_patterns 0/2 hit"


def test_a_refusal_scores_0_on_an_example_scenario() -> None:
    # The shape of lgtm/investigate-error-spike before it was rewritten.
    rubric = expected(
        required_tools=["Bash"],
        required_patterns=["(?i)lgtm loki", "count_over_time"],
        anti_patterns=["rm -rf", "(?i)--limit[ =]?[0-9]{4,}"],
    )

    assert score(run(text=REFUSAL), rubric).score == 0.0
    assert score(run(SKILL, text=REFUSAL), rubric).score == 0.0


def test_anti_pattern_credit_in_a_run_that_acted() -> None:
    card = score(run(BASH_LS), expected(anti_patterns=["rm -rf"]))

    anti = card.components["anti_patterns"]
    assert anti is not None
    assert (card.score, anti.note) == (1.0, None)


@pytest.mark.parametrize(
    ("text", "value", "note"),
    [(REFUSAL, 1.0, None), ("", 0.0, "no text: nothing to credit")],
)
def test_with_scope_text_an_answer_in_prose_is_something_to_credit(
    text: str, value: float, note: str | None
) -> None:
    rubric = expected(
        anti_patterns=["rm -rf"], required_patterns=["nothing-matches"], pattern_scope="text"
    )
    card = score(run(text=text), rubric)

    anti = card.components["anti_patterns"]
    assert anti is not None
    assert (anti.value, anti.note) == (value, note)


# --- Skill requirements --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "named"),
    [
        ("Skill", "lgtm"),
        ("Skill(other)", "other"),
        ("Skill(plugin:other)", "plugin:other"),
        ("Skill()", "lgtm"),
        (" Skill ", "lgtm"),
        ("Skills", None),
        ("Bash", None),
        ("Bash(git *)", None),
        ("mcp__x__Skill", None),
    ],
)
def test_skill_requirement(entry: str, named: str | None) -> None:
    assert skill_requirement(entry, "lgtm") == named


def test_skills_fired_reads_plugin_names_as_their_skill() -> None:
    assert skills_fired(("lgtm", "plugin:b", "c"), ("p:lgtm", "b")) == {
        "lgtm": True,
        "plugin:b": True,
        "c": False,
    }


# --- real transcripts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "spec", "expected_score"),
    [
        (
            "success_bash_tool_use.ndjson",
            {"required_tools": ["Bash"], "required_patterns": ["hello-from-fake"]},
            1.0,
        ),
        # A run whose only call loads the skill did nothing the rubric looks at.
        # Loading the skill is no action; a scenario that requires nothing credits that.
        ("skill_invoke_project_skill.ndjson", {"anti_patterns": ["rm -rf"]}, 1.0),
        (
            "subagent_called_with_legacy_Task_name.ndjson",
            {"required_tools": ["Agent"], "tool_ordering": [["Agent", "Bash"]]},
            1.0,
        ),
        (
            # The subagent's command is an action; its internal text is not what the user saw.
            "subagent_background_default.ndjson",
            {"required_patterns": ["echo from-subagent"], "text_patterns": ["Subagent result"]},
            0.5,
        ),
        (
            # A refused Write never ran: no evidence for the tool nor against the anti-pattern.
            "permission_denied_write_default_mode.ndjson",
            {"required_tools": ["Write"], "anti_patterns": [r"denied\.txt"]},
            0.0,
        ),
        ("error_max_turns.ndjson", {"required_patterns": ["loop-2"]}, 1.0),
        (
            "thinking_block.ndjson",
            {"anti_patterns": ["I should say hello"], "pattern_scope": "text"},
            1.0,
        ),
    ],
)
def test_real_transcripts(name: str, spec: dict[str, Any], expected_score: float) -> None:
    card = score(load_transcript(CC / name), expected(**spec))

    assert card.score == expected_score


@pytest.mark.parametrize(
    ("name", "skill", "fired"),
    [
        ("skill_invoke_project_skill.ndjson", "probe-skill", True),
        # `plugin:name` counts as `name`.
        ("skill_invoke_plugin_dir_skill.ndjson", "plugin-probe", True),
        # The Skill call came back with is_error (unknown skill): nothing was loaded.
        ("skill_invoke_unknown_skill.ndjson", "no-such-skill", False),
    ],
)
def test_skill_run_card_says_whether_the_expected_skill_fired(
    name: str, skill: str, fired: bool
) -> None:
    card = score(
        load_transcript(CC / name),
        expected(text_patterns=["Used the skill"], expected_skills=(skill,)),
    )

    assert card.tool_calls == 1
    assert card.skills_fired == {skill: fired}
    # Whether it fired is an indicator: the score is the same either way.
    assert card.score == 1.0


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        (
            "api_400_invalid_request.ndjson",
            "model API error: API Error: 400 fake 400 error (HTTP 400)",
        ),
        (
            "error_during_execution_bad_resume.ndjson",
            "the CLI failed during execution: "
            "No conversation found with session ID: 99999999-2222-4333-8444-555555555555",
        ),
    ],
)
def test_failed_real_runs_are_unscored(name: str, reason: str) -> None:
    card = score(load_transcript(CC / name), expected(required_tools=["Bash"]))

    assert (card.score, card.unscored_reason) == (None, reason)
