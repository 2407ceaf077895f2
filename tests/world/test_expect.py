"""The world keys of a scenario's ``expected:``: normalised when valid, refused with the place and
the fix when they cannot mean what was meant; the suite schema knows them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import regex

from skilltest.errors import PatternError, SuiteError
from skilltest.patterns import FLAG_NAMES
from skilltest.suite.loader import load_validated
from skilltest.world.expect import WorldExpectations, expectations_from

from ..conftest import REPO_ROOT

WHERE = "s.yaml#/scenarios/0/expected"


def test_entries_are_normalised() -> None:
    expect = expectations_from(
        {
            "writes": ["patch /tickets/INC-1042", "MCP tickets/reassign"],
            "forbidden": ["delete *", " * ", "Mcp tickets/*"],
            "claims": [{"pattern": "moved", "requires": "get /tickets/*"}],
        },
        WHERE,
    )
    assert expect.writes == ("PATCH /tickets/INC-1042", "mcp tickets/reassign")
    assert expect.forbidden == ("DELETE *", "*", "mcp tickets/*")
    assert expect.claims[0].requires == "GET /tickets/*"


def test_everything_read() -> None:
    expect = expectations_from(
        {
            "required_tools": ["Bash"],  # the rubric's: left alone
            "writes": ["PATCH /tickets/INC-1042"],
            "confirm_before_write": 1,
            "final_answer": {"must_include": ["inc-1042"], "must_not_include": ["deleted"]},
            "claims": [{"pattern": "reassigned", "requires": "PATCH /tickets/*"}],
            "recovers": True,
        },
        WHERE,
        flags=FLAG_NAMES["IGNORECASE"],
        timeout_s=0.5,
        turns=1,
        has_profile=True,
    )
    assert expect.defined
    assert expect.confirm_before_write == 1
    assert expect.recovers
    assert expect.final_answer_checks == 2
    assert expect.must_include[0].matches("INC-1042")  # the suite's flags apply
    assert expect.must_include[0].timeout_s == 0.5
    assert expect.must_include[0].location == f"{WHERE}/final_answer/must_include/0"
    assert expect.claims[0].pattern.compiled.flags & regex.IGNORECASE


@pytest.mark.parametrize(
    ("raw", "lists", "defined"),
    [
        (None, False, False),
        ({}, False, False),
        ({"required_tools": ["Bash"]}, False, False),
        ({"writes": []}, True, True),
        ({"writes": None}, False, False),
        ({"writes": ["POST /tickets"]}, True, True),
        ({"forbidden": ["DELETE *"]}, False, True),
        ({"confirm_before_write": 0}, False, True),
        ({"final_answer": {"must_not_include": ["x"]}}, False, True),
        ({"final_answer": {}}, False, False),
        ({"recovers": False}, False, False),
    ],
)
def test_what_counts_as_defined(raw: dict[str, Any] | None, lists: bool, defined: bool) -> None:
    expect = expectations_from(raw, WHERE)
    assert expect.lists_writes is lists
    assert expect.defined is defined


def test_writes_given_in_code_are_a_list() -> None:
    assert WorldExpectations(writes=("POST /tickets",)).lists_writes


REFUSED: list[tuple[str, dict[str, Any], str]] = [
    (
        "read-in-writes",
        {"writes": ["GET /tickets/INC-1042"]},
        f"{WHERE}/writes/0: the write 'GET /tickets/INC-1042' is a read: GET never changes "
        "anything\n  fix: leave reads out of writes (an agent may read as much as it needs); "
        "list only POST, PUT, PATCH, DELETE and the like",
    ),
    (
        "glob-in-writes",
        {"writes": ["POST /tickets", "PATCH /tickets/*"]},
        f"{WHERE}/writes/1: the write 'PATCH /tickets/*' holds a glob or a query: writes are "
        "exact names, compared without the query\n  fix: name the exact path "
        "(PATCH /tickets/INC-1042); put globs in forbidden",
    ),
    (
        "query-in-writes",
        {"writes": ["POST /tickets?dry_run=1"]},
        f"{WHERE}/writes/0: the write 'POST /tickets?dry_run=1' holds a glob or a query: writes "
        "are exact names, compared without the query\n  fix: name the exact path "
        "(PATCH /tickets/INC-1042); put globs in forbidden",
    ),
    (
        "no-method",
        {"writes": ["/tickets/INC-1042"]},
        f"{WHERE}/writes/0: the write '/tickets/INC-1042' is not a method and a path separated "
        'by one space\n  fix: write it as "PATCH /tickets/INC-1042" (or mcp SERVER/TOOL for a '
        "mocked MCP tool)",
    ),
    (
        "not-a-string",
        {"writes": [{"PATCH": "/tickets/INC-1042"}]},
        f"{WHERE}/writes/0: the write {{'PATCH': '/tickets/INC-1042'}} is not a method and a "
        'path separated by one space\n  fix: write it as "PATCH /tickets/INC-1042" (or mcp '
        "SERVER/TOOL for a mocked MCP tool)",
    ),
    (
        "url-not-path",
        {"writes": ["PATCH https://api.tickets.example.com/tickets/INC-1042"]},
        f"{WHERE}/writes/0: 'PATCH https://api.tickets.example.com/tickets/INC-1042': the path "
        "'https://api.tickets.example.com/tickets/INC-1042' does not start with /\n"
        "  fix: write the path the service receives, without the host: "
        "PATCH /tickets/INC-1042",
    ),
    (
        "method-not-letters",
        {"writes": ["P4TCH /tickets/INC-1042"]},
        f"{WHERE}/writes/0: the write 'P4TCH /tickets/INC-1042' has no method: 'P4TCH' is not "
        "an HTTP method\n  fix: writes are exact names such as POST /tickets; put globs in "
        "forbidden",
    ),
    (
        "mcp-without-tool",
        {"writes": ["mcp reassign"]},
        f"{WHERE}/writes/0: 'mcp reassign' names no MCP tool: expected mcp SERVER/TOOL\n"
        "  fix: write the world's MCP server and tool, e.g. mcp tickets/reassign",
    ),
    (
        "writes-not-a-list",
        {"writes": "PATCH /tickets/INC-1042"},
        f"{WHERE}/writes: writes must be a list, got str 'PATCH /tickets/INC-1042'\n"
        "  fix: write writes: [...] (a YAML list)",
    ),
    (
        "forbidden-read",
        {"forbidden": ["DELETE *", "get /admin/*"]},
        f"{WHERE}/forbidden/1: the glob 'get /admin/*' names a read: forbidden judges writes, "
        "and GET is never one\n  fix: forbid writes (DELETE *, PATCH /tickets/*); reads are free",
    ),
    (
        "forbidden-no-space",
        {"forbidden": ["DELETE"]},
        f"{WHERE}/forbidden/0: the glob 'DELETE' is not a method and a path separated by one "
        'space\n  fix: write it as "DELETE *" or "PATCH /tickets/*" (or mcp SERVER/TOOL for a '
        "mocked MCP tool)",
    ),
    (
        "forbidden-host",
        {"forbidden": ["DELETE api.tickets.example.com/*"]},
        f"{WHERE}/forbidden/0: 'DELETE api.tickets.example.com/*': the path "
        "'api.tickets.example.com/*' does not start with /\n  fix: write the path the service "
        "receives, without the host: PATCH /tickets/INC-1042",
    ),
    (
        "forbidden-method-glob",
        {"forbidden": ["/tickets/* DELETE"]},
        f"{WHERE}/forbidden/0: the glob '/tickets/* DELETE' does not start with a method: "
        "'/tickets/*'\n  fix: start with an HTTP method (DELETE, PATCH...), * for any method, "
        "or mcp",
    ),
    (
        "confirm-negative",
        {"confirm_before_write": -1},
        f"{WHERE}/confirm_before_write: confirm_before_write must be an integer >= 0, got -1\n"
        "  fix: give the user message from which writes are allowed: 0 the prompt, 1 the first "
        "of turns",
    ),
    (
        "confirm-bool",
        {"confirm_before_write": True},
        f"{WHERE}/confirm_before_write: confirm_before_write must be an integer >= 0, got True\n"
        "  fix: give the user message from which writes are allowed: 0 the prompt, 1 the first "
        "of turns",
    ),
    (
        "confirm-beyond-turns",
        {"confirm_before_write": 2},
        f"{WHERE}/confirm_before_write: confirm_before_write is 2 but the scenario has 1 "
        "follow-up message(s), so no write could ever be allowed\n  fix: add the confirmation "
        "to turns, or use a number from 0 to 1",
    ),
    (
        "claim-without-requires",
        {"claims": [{"pattern": "(?i)reassigned"}]},
        f"{WHERE}/claims/0: a claim must be a mapping with pattern and requires, got "
        "{'pattern': '(?i)reassigned'}\n  fix: write {pattern: \"(?i)reassigned\", requires: "
        '"PATCH /tickets/*"}',
    ),
    (
        "claim-requires-no-method",
        {"claims": [{"pattern": "done", "requires": "/tickets/*"}]},
        f"{WHERE}/claims/0/requires: the glob '/tickets/*' is not a method and a path separated "
        'by one space\n  fix: write it as "DELETE *" or "PATCH /tickets/*" (or mcp SERVER/TOOL '
        "for a mocked MCP tool)",
    ),
    (
        "final-answer-list",
        {"final_answer": ["INC-1042"]},
        f"{WHERE}/final_answer: final_answer must be a mapping, got list\n"
        "  fix: write final_answer: {must_include: [...], must_not_include: [...]}",
    ),
    (
        "recovers-without-profile",
        {"writes": ["PATCH /tickets/INC-1042"], "recovers": True},
        f"{WHERE}/recovers: recovers: true but the scenario runs without a fault profile, so "
        "there is no failure to recover from\n  fix: pick one of the world's profiles for the "
        "scenario (world: {profile: NAME}), or leave recovers out",
    ),
    (
        "recovers-string",
        {"recovers": "yes"},
        f"{WHERE}/recovers: recovers must be true or false, got 'yes'\n  fix: write recovers: true",
    ),
]


@pytest.mark.parametrize(("raw", "message"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_refused_with_the_place_and_the_fix(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError) as caught:
        expectations_from(raw, WHERE, turns=1, has_profile=False)
    assert str(caught.value) == message


def test_recovers_is_accepted_when_the_profile_is_not_known_here() -> None:
    assert expectations_from({"recovers": True}, WHERE).recovers


@pytest.mark.parametrize(
    ("raw", "location"),
    [
        ({"final_answer": {"must_include": ["(unclosed"]}}, "final_answer/must_include/0"),
        (
            {"final_answer": {"must_not_include": ["ok", "(a+)+$"]}},
            "final_answer/must_not_include/1",
        ),
        ({"claims": [{"pattern": "[z-a]", "requires": "POST *"}]}, "claims/0/pattern"),
    ],
)
def test_bad_patterns_name_their_place(raw: dict[str, Any], location: str) -> None:
    with pytest.raises(PatternError) as caught:
        expectations_from(raw, WHERE)
    assert caught.value.location == f"{WHERE}/{location}"


# --- the suite schema --------------------------------------------------------------------------

SUITE = """\
skill: tickets
world: worlds/tickets.yaml
scenarios:
  - id: reassign
    prompt: Move INC-1042 once I confirm.
    turns: ["I confirm."]
    world: {profile: rate_limited}
    expected:
      writes: ["PATCH /tickets/INC-1042"]
      forbidden: ["DELETE *"]
      confirm_before_write: 1
      final_answer: {must_include: [INC-1042], must_not_include: [deleted]}
      claims: [{pattern: reassigned, requires: "PATCH /tickets/*"}]
      recovers: true
"""


def test_the_suite_schema_takes_the_world_keys(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SUITE)
    data = load_validated(path, "scenarios")
    scenario = data["scenarios"][0]
    assert data["world"] == "worlds/tickets.yaml"
    assert scenario["world"] == {"profile": "rate_limited"}
    expect = expectations_from(scenario["expected"], f"{path}#/scenarios/0/expected", turns=1)
    assert expect.writes == ("PATCH /tickets/INC-1042",)


@pytest.mark.parametrize(
    ("old", "new", "pointer"),
    [
        ("must_not_include:", "must_exclude:", "/scenarios/0/expected/final_answer"),
        ("requires:", "needs:", "/scenarios/0/expected/claims/0"),
        ("{profile: rate_limited}", "{profil: rate_limited}", "/scenarios/0/world"),
        (
            "confirm_before_write: 1",
            "confirm_before_write: -1",
            "/scenarios/0/expected/confirm_before_write",
        ),
        ("recovers: true", "recovers: 1", "/scenarios/0/expected/recovers"),
        ("world: worlds/tickets.yaml", "world: {path: x}", "/world"),
    ],
)
def test_the_suite_schema_refuses_misspelt_world_keys(
    tmp_path: Path, old: str, new: str, pointer: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(SUITE.replace(old, new))
    with pytest.raises(SuiteError) as caught:
        load_validated(path, "scenarios")
    assert str(caught.value).startswith(f"{path}#{pointer}: ")


def test_the_example_suite_reads() -> None:
    path = REPO_ROOT / "tests" / "scenarios" / "tickets.yaml"
    if not path.exists():
        pytest.skip("the example world suite is not there")
    data = load_validated(path, "scenarios")
    for index, scenario in enumerate(data["scenarios"]):
        expect = expectations_from(
            scenario.get("expected"),
            f"{path}#/scenarios/{index}/expected",
            turns=len(scenario.get("turns") or ()),
            has_profile=bool((scenario.get("world") or {}).get("profile")),
        )
        assert expect.defined
