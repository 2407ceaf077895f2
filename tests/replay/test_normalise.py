"""Normalisation: each built-in rule before and after, real recorded runs, and a suite's own rules."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import skilltest.replay.normalise as normalise
from skilltest.errors import SuiteError
from skilltest.pressure.suite import load_pressure_suite
from skilltest.replay.match import diff
from skilltest.replay.normalise import (
    BUILTIN_RULES,
    Rules,
    RunPaths,
    fingerprint,
    normalise_mcp,
    normalise_request,
)
from skilltest.scenarios.suite import load_scenario_suite
from tests.replay.rename_column import raw_requests, recorded_requests

from ..conftest import REPO_ROOT

SANDBOX = "/tmp/skilltest-run-k2x_9qaa"
PATHS = RunPaths(
    workdir=f"{SANDBOX}/work", home=f"{SANDBOX}/home", tmp=f"{SANDBOX}/tmp", root=SANDBOX
)


def text_of(body: dict[str, Any], **kwargs: Any) -> str:
    """The first message's text after normalisation."""
    return normalise_request(body, **kwargs)["messages"][0]["content"][0]["text"]


def user(text: str) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}]}


def tool_round(first: str, second: str) -> dict[str, Any]:
    """Two tool calls, ``first`` (to A) and ``second`` (to B), whose results come back in the
    other order."""
    return {
        "model": "m",
        "messages": [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": first, "name": "A"},
                    {"type": "tool_use", "id": second, "name": "B"},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": second},
                    {"type": "tool_result", "tool_use_id": first},
                ],
            },
        ],
    }


# One row per built-in rule: (rule, request body, keyword arguments, expected normalised request).
RULES: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "request-fields": (
        {
            "model": "claude-opus-5-5",
            "max_tokens": 1024,
            "messages": [],
            "stream": True,
            "metadata": {"user_id": "u"},
            "service_tier": "auto",
            "temperature": 1.0,
            "thinking": {"type": "adaptive"},
            "output_config": {"effort": "medium"},
            "tool_choice": {"type": "auto"},
            "stop_sequences": ["END"],
            "top_p": 0.9,
            "top_k": 5,
        },
        {},
        {
            "model": "claude-opus-5-5",
            "messages": [],
            "tool_choice": {"type": "auto"},
            "temperature": 1.0,
            "top_p": 0.9,
            "top_k": 5,
            "max_tokens": 1024,
            "stop_sequences": ["END"],
            "thinking": {"type": "adaptive"},
            "output_config": {"effort": "medium"},
        },
    ),
    "metadata-user-id": (
        {"model": "m", "metadata": {"user_id": '{"device_id":"441916e1","session_id":"ab93"}'}},
        {},
        {"model": "m"},
    ),
    "cache-control": (
        {
            "model": "m",
            "system": [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}
                    ],
                }
            ],
        },
        {},
        {
            "model": "m",
            "system": [{"type": "text", "text": "S"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        },
    ),
    "text-blocks": (
        {
            "model": "m",
            "system": "You are terse.",
            "messages": [
                {"role": "system", "content": "# Environment"},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "x", "content": "ok"}],
                },
            ],
        },
        {},
        {
            "model": "m",
            "system": [{"type": "text", "text": "You are terse."}],
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "# Environment"}]},
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "x",
                            "content": [{"type": "text", "text": "ok"}],
                        }
                    ],
                },
            ],
        },
    ),
    "paths": (
        user(
            f" - Primary working directory: {SANDBOX}/work\n"
            f" - Additional working directories:\n  - {SANDBOX}/tmp\n"
            f"Base directory for this skill: /private{SANDBOX}/work/.claude/skills/lgtm\n"
            f"HOME={SANDBOX}/home; sandbox {SANDBOX}; "
            f"log /tmp/claude-0/-tmp-skilltest-run-k2x-9qaa-work/tasks/x.output; "
            f"sibling {SANDBOX}/workshop"
        ),
        {"paths": PATHS},
        user(
            " - Primary working directory: {WORKDIR}\n"
            " - Additional working directories:\n  - {TMP}\n"
            "Base directory for this skill: {WORKDIR}/.claude/skills/lgtm\n"
            "HOME={HOME}; sandbox {SANDBOX}; "
            "log /tmp/claude-{UID}/{WORKDIR_SLUG}/tasks/x.output; "
            "sibling {SANDBOX}/workshop"
        ),
    ),
    "sandbox-ids": (
        user(
            "/tmp/skilltest-run-9d0cr8tx/work and /var/folders/T/skilltest-run-1i6t3_ia/tmp "
            "and -tmp-skilltest-run-1i6t3-ia-work"
        ),
        {},
        user(
            "/tmp/skilltest-run-{ID}/work and /var/folders/T/skilltest-run-{ID}/tmp "
            "and -tmp-skilltest-run-{ID}-work"
        ),
    ),
    "cli-temp": (
        user(
            "output_file: /tmp/claude-1000/-workspace/x/tasks/a.output; "
            f"{SANDBOX}/tmp/claude-0/cwd; model claude-3-5; /v1/models/claude-3-haiku; "
            f'"{SANDBOX}/tmp/claude-0/claude-settings-9e7d774c2b357b9c.json"'
        ),
        {"paths": PATHS},
        user(
            "output_file: /tmp/claude-{UID}/-workspace/x/tasks/a.output; "
            "{TMP}/claude-{UID}/cwd; model claude-3-5; /v1/models/claude-3-haiku; "
            '"{TMP}/claude-{UID}/claude-settings-{HASH}.json"'
        ),
    ),
    "dates": (
        user(
            "Today's date is 2026-11-30.\nThe date has changed. Today's date is now 2026-12-01.\n"
            "Today's date is Sunday, November 30, 2026. Today's date is 11/30/2026.\n"
            '"timestamp":"2026-11-29T13:07:02.587Z" at 2026-11-29T13:07+01:00; '
            "db/migrate/20240105090000_create_orders.rb; released 2026-11-30\n"
            "Date: Mon, 30 Nov 2026 02:47:58 GMT\r\nRetry-After: 1"
        ),
        {},
        user(
            "Today's date is {DATE}.\nThe date has changed. Today's date is now {DATE}.\n"
            "Today's date is {DATE}. Today's date is {DATE}.\n"
            '"timestamp":"{TIMESTAMP}" at {TIMESTAMP}; '
            "db/migrate/20240105090000_create_orders.rb; released 2026-11-30\n"
            "Date: {HTTP_DATE}\r\nRetry-After: 1"
        ),
    ),
    "git-status": (
        user(
            "<system-reminder>\nAs you answer the user's questions, you can use the following "
            "context:\n# gitStatus\nThis is the git status at the start of the conversation.\n\n"
            "Current branch: main\n\nStatus:\n?? .claude/\n?? db/\n\nRecent commits:\n"
            "3f2a1bc Add orders\n\n\nClaude Code attached this context automatically.\n"
            "</system-reminder>"
        ),
        {},
        user(
            "<system-reminder>\nAs you answer the user's questions, you can use the following "
            "context:\n# gitStatus\n{GIT_STATUS}\n\nClaude Code attached this context "
            "automatically.\n</system-reminder>"
        ),
    ),
    "os-version": (
        user(" - Platform: linux\n - Shell: bash\n - OS Version: Linux 6.18.44-fc-v595\n - x"),
        {},
        user(" - Platform: linux\n - Shell: bash\n - OS Version: {OS_VERSION}\n - x"),
    ),
    "session-ids": (
        user(
            "session ab933006-325a-449b-968d-0f642b468346, again ab933006-325a-449b-968d-"
            "0f642b468346, other a2c76a73-1303-4517-babb-85552448ce1e; msg_01XFDUDYJgAACzvnptvVoYEL"
            " req_011CV4rSGvbtwcX8AqS4"
        ),
        {},
        user("session {UUID_1}, again {UUID_1}, other {UUID_2}; msg_1 req_1"),
    ),
    "tool-use-ids": (
        tool_round("toolu_01Tlq2IfZ0n8vEuGFAJAfZKL", "toolu_01UUeXVIMmXdT8NrC5nWhdJn"),
        {},
        tool_round("toolu_1", "toolu_2"),
    ),
    "agent-ids": (
        user(
            "Async agent launched successfully.\nagentId: a777b539e8b7cd80c\noutput_file: "
            "/tmp/claude-UID/-workspace/tasks/a777b539e8b7cd80c.output; hash a777b539e8b7cd80c"
        ),
        {},
        user(
            "Async agent launched successfully.\nagentId: {AGENT_1}\noutput_file: "
            "/tmp/claude-UID/-workspace/tasks/{AGENT_1}.output; hash a777b539e8b7cd80c"
        ),
    ),
}


def test_every_builtin_rule_has_a_case():
    assert list(RULES) == list(BUILTIN_RULES)


@pytest.mark.parametrize("rule", list(RULES))
def test_builtin_rule(rule):
    body, kwargs, expected = RULES[rule]
    assert normalise_request(body, **kwargs) == _as_blocks(expected)


def _as_blocks(expected: dict[str, Any]) -> dict[str, Any]:
    """The table writes a user message's text as a string; normalised, it is a text block."""
    messages = [
        {**m, "content": [{"type": "text", "text": m["content"]}]}
        if isinstance(m.get("content"), str)
        else m
        for m in expected.get("messages", [])
    ]
    return {**expected, "messages": messages} if "messages" in expected else expected


def test_every_builtin_rule_is_documented_with_an_example():
    doc = (REPO_ROOT / "docs" / "replay.md").read_text()
    for rule in BUILTIN_RULES:
        assert f"`{rule}`" in doc, rule


def test_normalising_is_idempotent_and_leaves_the_input_alone():
    body, kwargs, _ = RULES["tool-use-ids"]
    before = json.dumps(body)
    once = normalise_request(body, **kwargs)
    assert json.dumps(body) == before
    assert normalise_request(once) == once


def test_fingerprint_hashes_canonical_json():
    a = fingerprint({"model": "m", "messages": [{"role": "user", "content": "é"}]})
    b = fingerprint({"messages": [{"content": "é", "role": "user"}], "model": "m"})
    assert a == b
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", a)
    assert a != fingerprint({"model": "m", "messages": [{"role": "user", "content": "e"}]})


def test_count_tokens_never_shares_a_fingerprint_with_messages():
    body = user("hi")
    plain = normalise_request(body)
    counted = normalise_request(body, endpoint="/v1/messages/count_tokens")
    assert normalise_request(body, endpoint="/v1/messages") == plain
    assert counted["endpoint"] == "/v1/messages/count_tokens"
    assert fingerprint(counted) != fingerprint(plain)


def test_a_run_that_crosses_midnight_matches_the_run_recorded_before_it():
    reminder = (
        "The date has changed. Today's date is now 2026-12-02. No need to announce the new "
        "date \u2014 the user's own clock shows it."
    )
    before = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Find the error spike."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]},
        ],
    }
    # Claude Code adds the reminder as a message of its own, or as a block of the next one.
    own_message = {
        **before,
        "messages": [*before["messages"], {"role": "user", "content": reminder}],
    }
    last = before["messages"][2]
    in_a_message = {
        **before,
        "messages": [
            *before["messages"][:2],
            {**last, "content": [*last["content"], {"type": "text", "text": reminder}]},
        ],
    }
    wrapped = {
        **before,
        "messages": [
            *before["messages"],
            {"role": "user", "content": f"<system-reminder>\n{reminder}\n</system-reminder>\n"},
        ],
    }
    expected = fingerprint(normalise_request(before))
    for crossed in (own_message, in_a_message, wrapped):
        assert fingerprint(normalise_request(crossed)) == expected
    # Anything said besides the reminder is kept, and so is a reminder in the model's own text.
    said = {**before, "messages": [*before["messages"], user(f"{reminder} Go on.")["messages"][0]]}
    assert fingerprint(normalise_request(said)) != expected
    echoed = {**before, "messages": [{"role": "assistant", "content": reminder}]}
    assert normalise_request(echoed)["messages"] != []


# --- real runs -------------------------------------------------------------------------------


@pytest.mark.parametrize("arm", ["with-skill", "without-skill"])
@pytest.mark.parametrize("with_paths", [True, False])
def test_two_runs_of_one_scenario_and_arm_have_the_same_fingerprints(arm, with_paths):
    first, second = raw_requests(f"{arm}-0"), raw_requests(f"{arm}-1")
    assert len(first) == len(second)
    # The raw requests differ (sandbox folders, session and tool_use ids), so this can fail.
    assert all(a != b for a, b in zip(first, second, strict=True))
    one = [fingerprint(r) for r in recorded_requests(f"{arm}-0", with_paths=with_paths)]
    two = [fingerprint(r) for r in recorded_requests(f"{arm}-1", with_paths=with_paths)]
    assert one == two


def test_the_arms_differ_only_by_the_skill():
    with_skill, without_skill = (
        recorded_requests("with-skill-0")[0],
        recorded_requests("without-skill-0")[0],
    )
    lines = diff(without_skill, with_skill, limit=10)
    assert [line.split(": ")[0] for line in lines] == [
        "/system/2/text",
        "/messages/1/content/0/text",
    ]
    # The system prompt gains its guidance on skills; the environment message, the listing.
    assert "system prompt changed" in lines[0] and "Session-specific guidance" in lines[0]
    assert lines[1].startswith("/messages/1/content/0/text: skill listing changed: ")
    assert "The following skills are available" in lines[1]


def test_the_recorded_sandbox_leaves_no_trace():
    text = json.dumps(recorded_requests("with-skill-0"))
    assert "skilltest-run-" not in text
    assert "{WORKDIR}/.claude/skills/safe-migrations" in text
    assert "toolu_1" in text and "toolu_01" not in text


# --- a suite's own rules ---------------------------------------------------------------------


def test_suite_ignore_removes_pointers_with_wildcards():
    rules = Rules(ignore=("/system/1", "/messages/*/content/0/text", "/nothing/here"))
    body = {
        "model": "m",
        "system": [{"type": "text", "text": "keep"}, {"type": "text", "text": "drop"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "x"}]},
            {"role": "user", "content": "y"},
        ],
    }
    assert normalise_request(body, rules=rules) == {
        "model": "m",
        "system": [{"type": "text", "text": "keep"}],
        "messages": [
            {"role": "user", "content": [{"type": "text"}]},
            {"role": "user", "content": [{"type": "text"}]},
        ],
    }


def test_suite_normalise_applies_after_the_builtin_rules():
    rules = Rules(normalise=((r"trace_id=[0-9a-f]+", "trace_id=X"), (r"\{DATE\}", "today")))
    body = user("trace_id=4bf92f3577b34da6 on Today's date is 2026-11-30")
    assert text_of(body, rules=rules) == "trace_id=X on Today's date is today"


def test_suite_redactions_never_reach_the_request():
    rules = Rules.from_suite(
        {"redact": ["hunter2-secret", "$TEAM_TOKEN"]},
        "suite.yaml#/replay",
        environ={"TEAM_TOKEN": "ghp_abcdefgh12345"},
    )
    body = user("password hunter2-secret and token ghp_abcdefgh12345")
    assert text_of(body, rules=rules) == "password [REDACTED] and token [REDACTED]"
    assert rules.describe() == ["redact $TEAM_TOKEN", "redact 1 literal value"]


def test_rules_in_force_list_the_builtin_rules_then_the_suites():
    rules = Rules(ignore=("/system/2/text",), normalise=(("a+", "a"),))
    assert normalise.rules_in_force(rules) == [
        *BUILTIN_RULES,
        "ignore /system/2/text",
        "normalise a+ -> a",
    ]


@pytest.mark.parametrize(
    ("data", "location", "message"),
    [
        ({"ignore": ["system/2"]}, "s.yaml#/replay/ignore/0", "'system/2' is not a JSON pointer"),
        (
            {"normalise": [{"pattern": "(unclosed", "replacement": "x"}]},
            "s.yaml#/replay/normalise/0",
            "the pattern '(unclosed' (or its replacement) is not valid: missing ), "
            "unterminated subpattern at position 0",
        ),
        (
            {"normalise": [{"pattern": "a", "replacement": "\\2"}]},
            "s.yaml#/replay/normalise/0",
            "the pattern 'a' (or its replacement) is not valid: invalid group reference 2 at "
            "position 1",
        ),
        (
            {"redact": ["abc"]},
            "s.yaml#/replay/redact/0",
            "'abc' is too short to redact (it would blank out ordinary text)",
        ),
        ({"ignore": "/system"}, "s.yaml#/replay/ignore", "expected a list of non-empty strings"),
        ({"redactt": ["x"]}, "s.yaml#/replay/redactt", "unknown key 'redactt' under replay"),
    ],
)
def test_bad_suite_rules_name_the_place(data, location, message):
    with pytest.raises(SuiteError) as caught:
        Rules.from_suite(data, "s.yaml#/replay")
    assert caught.value.location == location
    assert caught.value.message == message


def test_suites_of_both_layers_load_their_replay_rules(tmp_path):
    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo\ndescription: A demo skill.\n---\nAggregate first.\n"
    )
    replay = (
        "replay:\n  ignore: [/system/2/text]\n"
        "  normalise: [{pattern: 'id=\\d+', replacement: 'id=N'}]\n  redact: [$NO_SUCH_VAR_X]\n"
    )
    pressure = tmp_path / "pressure.yaml"
    pressure.write_text(
        "skill: demo\n" + replay + "scenarios:\n  - id: one\n    prompt: How?\n"
        "    with_skill: {required_patterns: [aggregat]}\n"
    )
    scenarios = tmp_path / "scenarios.yaml"
    scenarios.write_text(
        "skill: demo\n" + replay + "scenarios:\n  - id: one\n    prompt: How?\n"
        "    expected: {required_tools: [Bash]}\n"
    )
    expected = Rules(
        ignore=("/system/2/text",), normalise=((r"id=\d+", "id=N"),), redact=("$NO_SUCH_VAR_X",)
    )
    assert load_pressure_suite(pressure).replay == expected
    assert load_scenario_suite(scenarios).replay == expected
    pressure.write_text(pressure.read_text().replace("ignore:", "ignor:"))
    with pytest.raises(SuiteError) as caught:
        load_pressure_suite(pressure)
    assert caught.value.location == f"{pressure}#/replay"
    assert "'ignor' was unexpected; did you mean 'ignore'?" in caught.value.message


def test_a_suite_without_replay_rules_has_none():
    suite = load_pressure_suite(REPO_ROOT / "tests" / "skill-pressure" / "lgtm.yaml")
    assert suite.replay == Rules()


# --- MCP -------------------------------------------------------------------------------------


def test_mcp_identity_is_method_and_params_without_meta():
    params = {
        "name": "query_logs",
        "arguments": {"query": '{app="checkout"}', "cwd": f"{SANDBOX}/work"},
        "_meta": {"progressToken": 7},
    }
    assert normalise_mcp("tools/call", params, paths=PATHS) == {
        "method": "tools/call",
        "params": {
            "name": "query_logs",
            "arguments": {"query": '{app="checkout"}', "cwd": "{WORKDIR}"},
        },
    }
    assert normalise_mcp("tools/list", None) == {"method": "tools/list", "params": {}}
    again = {**params, "_meta": {"progressToken": 8}}
    assert fingerprint(normalise_mcp("tools/call", again, paths=PATHS)) == fingerprint(
        normalise_mcp("tools/call", params, paths=PATHS)
    )


def test_git_status_in_the_system_prompt_of_older_versions():
    body = {
        "model": "m",
        "system": "Be brief.\ngitStatus: This is the git status at the start of the conversation.\n"
        "Current branch: fix/x\n\nStatus:\nM a.py\n\nRecent commits:\nabc1234 fix",
    }
    assert normalise_request(body)["system"] == [
        {
            "type": "text",
            "text": "Be brief.\ngitStatus: This is the git status at the start of the "
            "conversation.\n{GIT_STATUS}",
        }
    ]


def test_half_a_character_is_replaced_so_that_it_can_be_hashed():
    body = user("cut emoji \ud83e here")
    assert text_of(body) == "cut emoji \ufffd here"
    assert fingerprint(normalise_request(body)).startswith("sha256:")


def test_validate_refuses_a_replay_pattern_that_does_not_compile(tmp_path, monkeypatch, capsys):
    from skilltest.cli import main

    (tmp_path / "skills" / "demo").mkdir(parents=True)
    (tmp_path / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\n---\nbody\n")
    (tmp_path / "suite.yaml").write_text(
        "skill: demo\nreplay: {normalise: [{pattern: 'id=(\\d+', replacement: 'id=N'}]}\n"
        "scenarios:\n  - {id: a, prompt: p, with_skill: {required_patterns: [x]}}\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "suite.yaml"]) == 2
    out = capsys.readouterr().out
    assert "FAIL suite.yaml" in out
    assert (
        "suite.yaml#/replay/normalise/0: the pattern 'id=(\\\\d+' (or its replacement) is not "
        "valid: missing ), unterminated subpattern at position 3" in out
    )


@pytest.mark.parametrize("date", ["Sunday, November 30, 2026", "November 30, 2026", "11/30/2026"])
def test_dates_in_other_forms(date):
    assert text_of(user(f"Today's date is {date}.")) == "Today's date is {DATE}."


# --- Codex's Responses requests --------------------------------------------------------------


def codex_request(ids: tuple[str, str, str], chunk: str, seconds: str) -> dict[str, Any]:
    """A Codex turn as it reaches the API: its own message and output ids (UUIDs), the
    emulator's call ids, and a command's output headed by its chunk id and wall time."""
    message, output, call = ids
    return {
        "model": "gpt-5.1-codex",
        "stream": True,
        "prompt_cache_key": message[4:],
        "input": [
            {"type": "message", "id": message, "role": "user", "content": [
                {"type": "input_text", "text": "<current_date>2026-12-06</current_date>"},
            ]},
            {"type": "function_call", "id": "fc_01Tlq2IfZ0n8vEuGFAJAfZKL", "name": "exec_command",
             "arguments": '{"cmd": "cat SKILL.md"}', "call_id": call},
            {"type": "function_call_output", "id": output, "call_id": call, "output": (
                f"Chunk ID: {chunk}\nWall time: {seconds} seconds\nProcess exited with code 0\n"
                "Original token count: 3\nOutput:\n---\nname: lgtm\n"
            )},
        ],
    }  # fmt: skip


def test_two_codex_runs_of_one_turn_have_the_same_fingerprint():
    first = codex_request(
        (
            "msg_01a24a0b-f7be-73b3-8fee-80eab55604e1",
            "fco_01a24a0c-5fc3-7632-a3a9-af052ac7a2f8",
            "call_01Tlq2IfZ0n8vEuGFAJAfZKL",
        ),
        "f8f480",
        "0.0000",
    )
    second = codex_request(
        (
            "msg_01a24a0b-18a3-7c33-90b1-93fae4114a1e",
            "fco_01a24a0c-6975-7273-aa7c-2e278c08fd96",
            "call_01UUeXVIMmXdT8NrC5nWhdJn",
        ),
        "ed28a0",
        "0.0153",
    )
    one = normalise_request(first, endpoint="/v1/responses")
    assert one == normalise_request(second, endpoint="/v1/responses")
    message, call, output = one["input"]
    assert (message["id"], call["call_id"], output["id"]) == ("msg_1", "call_1", "fco_1")
    assert message["content"][0]["text"] == "<current_date>{DATE}</current_date>"
    assert output["output"].startswith(
        "Chunk ID: {CHUNK_ID}\nWall time: {SECONDS} seconds\nProcess exited with code 0\n"
    )
    assert "prompt_cache_key" not in one and "stream" not in one
    # What the command printed, and its exit code, still tell two runs apart.
    failed = json.loads(json.dumps(first).replace("exited with code 0", "exited with code 1"))
    assert normalise_request(failed, endpoint="/v1/responses") != one


def test_codex_output_headers_are_left_alone_in_the_messages_api():
    text = "Chunk ID: f8f480\nWall time: 0.0153 seconds"
    assert text_of(user(text)) == text


def gemini_request(call_id: str, pgid: str) -> dict:
    """A Gemini CLI turn after one shell command, as its real requests carry it."""
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "What's the latency of payment-service?"}]},
            {"role": "model", "parts": [{"functionCall": {
                "id": call_id, "name": "run_shell_command", "args": {"command": "lgtm"},
            }}]},
            {"role": "user", "parts": [{"functionResponse": {
                "id": call_id, "name": "run_shell_command", "response": {"output": (
                    "<untrusted_context>\nOutput: lgtm: command not found\nExit Code: 127\n"
                    f"Process Group PGID: {pgid}\n</untrusted_context>"
                )},
            }}]},
        ],
        "generationConfig": {"temperature": 1},
    }  # fmt: skip


def test_two_gemini_cli_runs_of_one_turn_have_the_same_fingerprint():
    endpoint = "/v1beta/models/gemini-3.8-flash:streamGenerateContent"
    first = gemini_request("run_shell_command_1796560336356_0", "1173")
    second = gemini_request("run_shell_command_1796560355412_0", "1630")

    one = normalise_request(first, endpoint=endpoint)
    assert one == normalise_request(second, endpoint=endpoint)
    call = one["contents"][1]["parts"][0]["functionCall"]
    answer = one["contents"][2]["parts"][0]["functionResponse"]
    assert call["id"] == answer["id"] == "run_shell_command_call_1"
    assert "Process Group PGID: {PID}\n" in answer["response"]["output"]
    # What the command printed, and its exit code, still tell two runs apart.
    failed = json.loads(json.dumps(first).replace("Exit Code: 127", "Exit Code: 1"))
    assert normalise_request(failed, endpoint=endpoint) != one
    # The model in the path is part of the request's identity.
    assert normalise_request(first, endpoint=endpoint.replace("3.8", "3.9")) != one


def gemini_skills_request(names: list[str]) -> dict:
    """A Gemini CLI request with ``names`` installed, listed in the order it found them."""
    listing = "\n".join(
        f"  <skill>\n    <name>{name}</name>\n    <description>{name} things</description>\n"
        f"    <location>/work/.gemini/skills/{name}/SKILL.md</location>\n  </skill>"
        for name in names
    )
    available = ", ".join(f"'{name}'" for name in names)
    return {
        "systemInstruction": {"parts": [{"text": (
            "# Available Agent Skills\n\n<available_skills>\n"
            f"{listing}\n</available_skills>\nMore instructions."
        )}]},
        "contents": [{"role": "user", "parts": [{"text": "What is the capital of France?"}]}],
        "tools": [{"functionDeclarations": [{
            "name": "activate_skill",
            "description": f"Activates a skill by name (Available: {available}). Returns it.",
            "parametersJsonSchema": {"type": "object", "properties": {"name": {
                "type": "string", "enum": names,
            }}},
        }]}],
    }  # fmt: skip


def test_gemini_cli_listing_its_skills_in_another_order_is_the_same_request():
    endpoint = "/v1beta/models/gemini-3.8-flash:streamGenerateContent"
    found = gemini_skills_request(["lgtm", "safe-migrations"])
    found_otherwise = gemini_skills_request(["safe-migrations", "lgtm"])
    assert found != found_otherwise

    one = normalise_request(found, endpoint=endpoint)
    assert normalise_request(found_otherwise, endpoint=endpoint) == one
    declaration = one["tools"][0]["functionDeclarations"][0]
    assert "(Available: 'lgtm', 'safe-migrations')" in declaration["description"]
    assert declaration["parametersJsonSchema"]["properties"]["name"]["enum"] == [
        "lgtm",
        "safe-migrations",
    ]
    # Another skill installed is still another request.
    more = normalise_request(gemini_skills_request(["lgtm", "other"]), endpoint=endpoint)
    assert more != one
    # Normalising works on a copy: the request as the client sent it is left as it was.
    assert found_otherwise["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"][
        "properties"
    ]["name"]["enum"] == ["safe-migrations", "lgtm"]
