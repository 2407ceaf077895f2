"""The real Codex CLI, run offline against the emulator on loopback in a home of its own.

Codex is a platform binary of some 424 MB: ``make codex`` installs it into
``.tools-agents/codex-0.171.0`` (``make test`` does it first), or name a ``codex`` in
``SKILLTEST_CODEX``; it is found as ``--agent codex`` finds it. Without it these tests fail
naming the command, never skip.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from skilltest.agents.codex import (
    CODEX_VERSION,
    CodexRun,
    codex_command,
    codex_env,
    codex_mcp_server,
    prepare_codex_run,
)
from skilltest.agents.codex_events import parse_codex_events, session_of, skill_fired
from skilltest.agents.npm import reported_version
from skilltest.emulator import EmulatorServer, ModelScript
from skilltest.emulator.server import RecordedRequest
from skilltest.skills import load_skill
from skilltest.transcript import Transcript

from ..conftest import installed_agent

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "agents" / "codex"
SKILL = FIXTURES / "skill" / "greeting" / "SKILL.md"

# One script for both arms: read the skill, run its command (which also writes a file, so the
# test sees that the command really ran in the workspace), answer with what it printed.
SCRIPT = {
    "schema_version": 1,
    "model": "skilltest-stand-in",
    "rules": [
        {
            "id": "read-skill",
            "when": {"turn": 1},
            "reply": {
                "text": "Reading the skill.",
                "tool_calls": [
                    {"name": "Bash", "input": {"command": "cat .agents/skills/greeting/SKILL.md"}}
                ],
            },
        },
        {
            "id": "run",
            "when": {"turn": 2},
            "reply": {
                "tool_calls": [
                    {
                        "name": "Bash",
                        "input": {"command": "echo hello from skilltest | tee greeted.txt"},
                    }
                ]
            },
        },
        {
            "id": "answer",
            "when": {"tool_result": "hello from skilltest"},
            "reply": {"text": "It printed: hello from skilltest."},
        },
    ],
    "default": {"text": "Nothing more to do."},
}


@pytest.fixture(scope="module")
def codex() -> Path:
    binary = installed_agent("codex")
    assert reported_version(binary) == CODEX_VERSION
    return binary


UNREACHABLE = "http://127.0.0.1:9"
"""A base URL nothing answers, for a run that must fail before it asks the model."""


@dataclass(frozen=True)
class CodexResult:
    """What one isolated Codex run left behind."""

    transcripts: list[Transcript]
    """One a user message, in order."""
    session: str | None
    """The conversation the first message started."""
    requests: list[RecordedRequest]
    """What the model was asked, oldest first (none without an emulator)."""
    workspace: Path
    """Where the run worked (removed once the run is over)."""
    files: dict[str, str | None]
    """The workspace files asked for, as the run left them (``None``: not written)."""

    @property
    def transcript(self) -> Transcript:
        """The transcript of a run of one message."""
        (only,) = self.transcripts
        return only


def run_codex(
    binary: Path,
    *messages: str,
    script: dict[str, Any] | ModelScript | None,
    skill: bool = False,
    model: str = "m",
    workspace: Callable[[Path], Path] = lambda root: root / "workspace",
    configure: Callable[[CodexRun], None] | None = None,
    read: Sequence[str] = (),
    timeout: float = 240,
) -> CodexResult:
    """Runs Codex on ``messages`` (one process a message, each continuing the first's
    conversation) against an emulator playing ``script``, or against :data:`UNREACHABLE` when
    ``script`` is ``None``. ``skill`` installs the greeting skill; ``workspace`` makes the folder
    around the run under its root and names the run's workspace; ``configure`` changes the
    prepared run before Codex starts; ``read`` names the workspace files to keep."""
    parent = Path.home() / ".cache" / "skilltest-tests"
    parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=parent) as folder, ExitStack() as stack:
        root = Path(folder)
        server = None
        if script is not None:
            if isinstance(script, dict):
                script = ModelScript.from_dict(script)
            server = stack.enter_context(EmulatorServer(script))
        run = prepare_codex_run(
            root,
            workspace(root),
            base_url=server.base_url if server else UNREACHABLE,
            model=model,
            skill=load_skill(SKILL) if skill else None,
        )
        if configure is not None:
            configure(run)
        transcripts: list[Transcript] = []
        session = None
        for message in messages:
            started = time.monotonic()
            done = subprocess.run(
                codex_command(binary, message, session=session),
                cwd=run.workspace,
                env=codex_env(run),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
            transcripts.append(
                parse_codex_events(
                    done.stdout.splitlines(),
                    exit_code=done.returncode,
                    stderr=done.stderr,
                    cli_version=CODEX_VERSION,
                    latency_ms=(time.monotonic() - started) * 1000,
                )
            )
            session = session or session_of(done.stdout.splitlines())
        requests = server.requests if server else []
        files = {
            name: (run.workspace / name).read_text() if (run.workspace / name).exists() else None
            for name in read
        }
    return CodexResult(transcripts, session, requests, run.workspace, files)


@pytest.mark.slow
def test_codex_runs_the_scripted_command_and_its_events_read_as_a_transcript(codex):
    done = run_codex(
        codex,
        "Greet the team.",
        script=SCRIPT,
        skill=True,
        model="gpt-5.1-codex",
        read=["greeted.txt"],
    )
    transcript, requests = done.transcript, done.requests
    assert transcript.error is None, transcript.error
    assert transcript.exit_code == 0
    assert [(call.name, call.input["command"], call.status) for call in transcript.tool_calls] == [
        ("Bash", "cat .agents/skills/greeting/SKILL.md", "ran"),
        ("Bash", "echo hello from skilltest | tee greeted.txt", "ran"),
    ]
    assert "Run `echo hello from skilltest`" in (transcript.tool_calls[0].result or "")
    assert transcript.final_answer == "It printed: hello from skilltest."
    assert skill_fired(transcript, "greeting")
    # The command ran in the workspace, and its output went back to the model.
    assert done.files["greeted.txt"] == "hello from skilltest\n"
    assert [request.rule_id for request in requests] == ["read-skill", "run", "answer"]
    assert {(request.path, request.api) for request in requests} == {("/v1/responses", "responses")}
    last = requests[-1].body["input"][-1]
    assert last["type"] == "function_call_output"
    assert "hello from skilltest" in last["output"]
    # The skill was listed to the model, from the workspace's .agents/skills.
    first = json.dumps(requests[0].body)
    assert "- greeting: Greets the team with the house greeting." in first


@pytest.mark.slow
def test_without_the_skill_codex_is_not_shown_it_and_the_read_fails_without_firing(codex):
    done = run_codex(
        codex, "Greet the team.", script=SCRIPT, model="gpt-5.1-codex", read=["greeted.txt"]
    )
    transcript = done.transcript
    assert transcript.error is None, transcript.error
    read = transcript.tool_calls[0]
    assert (read.name, read.status) == ("Bash", "failed")
    assert "No such file or directory" in (read.result or "")
    assert not skill_fired(transcript, "greeting")
    assert "- greeting:" not in json.dumps(done.requests[0].body)
    assert done.files["greeted.txt"] == "hello from skilltest\n"


def add_unknown_setting(run: CodexRun) -> None:
    config = run.codex_home / "config.toml"
    config.write_text(config.read_text() + "not_a_codex_setting = true\n")


@pytest.mark.slow
def test_a_config_key_codex_does_not_know_fails_the_run_naming_it(codex):
    transcript = run_codex(
        codex, "Greet the team.", script=None, configure=add_unknown_setting, timeout=120
    ).transcript
    assert transcript.exit_code == 1
    assert transcript.error is not None
    assert transcript.error.startswith("Codex ended without finishing its turn (exit 1): ")
    assert transcript.error.endswith(
        "config.toml:23:1: unknown configuration field "
        "`model_providers.skilltest.not_a_codex_setting`"
    )


FILE_SCRIPT = {
    "schema_version": 1,
    "model": "skilltest-stand-in",
    "rules": [
        {
            "id": "write",
            "when": {"turn": 1},
            "reply": {
                "tool_calls": [
                    {"name": "Write", "input": {"file_path": "notes.txt", "content": "one\ntwo\n"}}
                ]
            },
        },
        {
            "id": "edit",
            "when": {"turn": 2},
            "reply": {
                "tool_calls": [
                    {
                        "name": "Edit",
                        "input": {"file_path": "notes.txt", "old_string": "two", "new_string": "2"},
                    }
                ]
            },
        },
        {
            "id": "read",
            "when": {"turn": 3},
            "reply": {"tool_calls": [{"name": "Read", "input": {"file_path": "notes.txt"}}]},
        },
        {"id": "answer", "when": {"turn": 4}, "reply": {"text": "notes.txt is written."}},
    ],
}


@pytest.mark.slow
def test_a_scripts_write_edit_and_read_reach_codex_and_come_back_as_those_tools(codex):
    done = run_codex(codex, "Write the notes.", script=FILE_SCRIPT, read=["notes.txt"])
    transcript = done.transcript
    assert transcript.error is None, transcript.error
    assert [request.rule_id for request in done.requests] == ["write", "edit", "read", "answer"]
    assert [(call.name, call.status) for call in transcript.tool_calls] == [
        ("Write", "ran"),
        ("Edit", "ran"),
        ("Bash", "ran"),
    ]
    write, edit, read = transcript.tool_calls
    assert write.input["file_path"] == edit.input["file_path"] == str(done.workspace / "notes.txt")
    assert (read.input["command"], read.result) == ("cat notes.txt", "one\n2\n")
    assert done.files["notes.txt"] == "one\n2\n"


TWO_MESSAGES = {
    "schema_version": 1,
    "model": "skilltest-stand-in",
    "rules": [
        {"id": "after-command", "when": {"tool_result": "one"}, "reply": {"text": "Ran it."}},
        {
            "id": "first",
            "when": {"user": "first"},
            "reply": {"tool_calls": [{"name": "Bash", "input": {"command": "echo one"}}]},
        },
        {"id": "second", "when": {"user": "second"}, "reply": {"text": "Second answered."}},
    ],
    "default": {"text": "No rule matched."},
}


@pytest.mark.slow
def test_a_second_message_continues_the_same_conversation(codex):
    done = run_codex(
        codex, "Do the first thing.", "Now the second thing.", script=TWO_MESSAGES, timeout=120
    )
    first, second = done.transcripts
    assert done.session is not None
    assert first.session_id == second.session_id == done.session
    assert first.final_answer == "Ran it."
    assert (second.final_answer, second.tool_calls) == ("Second answered.", ())
    assert [request.rule_id for request in done.requests] == ["first", "after-command", "second"]
    # The second message's request carries the first one's conversation.
    kinds = [item.get("type") for item in done.requests[-1].body["input"]]
    assert "function_call_output" in kinds


def inside_a_repository(root: Path) -> Path:
    """A git repository with a skill and an AGENTS.md of its own, around the workspace."""
    repository = root / "repository"
    (repository / ".agents" / "skills" / "outsider").mkdir(parents=True)
    (repository / ".agents" / "skills" / "outsider" / "SKILL.md").write_text(
        "---\nname: outsider\ndescription: A skill of the repository around the run.\n---\n"
    )
    (repository / "AGENTS.md").write_text("Instructions of the repository around the run.\n")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    return repository / "workspace"


@pytest.mark.slow
def test_a_workspace_inside_a_repository_is_not_shown_that_repositorys_skills(codex):
    script = {"schema_version": 1, "rules": [], "default": {"text": "Hello."}}
    done = run_codex(codex, "Say hello.", script=script, workspace=inside_a_repository, timeout=120)
    first = json.dumps(done.requests[0].body)
    assert done.transcript.final_answer == "Hello."
    assert "A skill of the repository around the run." not in first
    assert "Instructions of the repository around the run." not in first


def with_the_tracker_server(run: CodexRun) -> None:
    with (run.codex_home / "config.toml").open("a") as config:
        server_file = str(FIXTURES / "tracker_server.py")
        config.write(codex_mcp_server("tracker", sys.executable, [server_file]))


@pytest.mark.slow
def test_a_script_calls_an_mcp_servers_tools_by_their_qualified_names(codex):
    done = run_codex(
        codex,
        "File the build issue.",
        script=ModelScript.load(FIXTURES / "cases" / "mcp.yaml"),
        configure=with_the_tracker_server,
        timeout=180,
    )
    transcript = done.transcript
    assert transcript.error is None, transcript.error
    assert [request.rule_id for request in done.requests] == ["create", "close", "answer"]
    assert [(call.name, call.result, call.status) for call in transcript.tool_calls] == [
        ("mcp__tracker__create_issue", "created #7", "ran"),
        ("mcp__tracker__close_issue", "no issue 9", "failed"),
    ]
    assert transcript.final_answer == "Opened #7; #9 could not be closed."
