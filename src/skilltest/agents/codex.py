"""The Codex CLI (``@openai/codex``) as an agent skilltest drives offline.

What an agent adapter needs, as plain functions and frozen dataclasses, verified against Codex
0.171.0 driven by ``skilltest emulator serve`` on loopback (``tests/fixtures/agents/codex/``):

* **install**: :func:`install_codex` puts ``@openai/codex@0.171.0`` into a cache folder of its
  own (``npm install --prefix``, some 424 MB of platform binary); :func:`find_codex` finds it.
* **isolate**: :func:`prepare_codex_run` writes a ``CODEX_HOME`` whose ``config.toml``
  (:func:`codex_config`) points Codex at the run's endpoint through the Responses API, never
  retries, checks for no updates, sends no analytics, approves nothing interactively and runs
  commands in the ``workspace-write`` sandbox; a HOME of its own (Codex also reads
  ``~/.agents/skills``); the workspace made a project root of its own (Codex reads skills and
  ``AGENTS.md`` from every folder up to the project root); and the skill under test at
  ``.agents/skills/<name>/`` in the workspace, where Codex lists skills to the model. The
  baseline arm gets no skill at all.
* **run**: :func:`codex_command` (``codex exec --json --skip-git-repo-check --strict-config
  ... PROMPT``, run
  with stdin from ``/dev/null``: Codex otherwise waits to read more of the prompt from it) and
  :func:`codex_env` (an allowlist of the caller's environment, the run's folders, the
  placeholder key in :data:`KEY_VARIABLE`); a later message of the same run resumes the
  conversation by the id :func:`session_of` reads (``codex exec resume ID``). Codex has no turn
  limit of its own: the run's time limit bounds it.
* **parse**: :func:`parse_codex_events` reads its JSONL events into the one
  :class:`~skilltest.transcript.Transcript`, tools named as suites name them
  (:data:`TOOL_NAMES`).
* **fired**: :func:`skill_fired`. Codex has no skill tool: it lists each skill's name,
  description and file to the model, and the model loads one by reading its ``SKILL.md``
  through the shell. The skill fired when a shell command that ran reads
  ``<name>/SKILL.md`` (:func:`skills_read`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skilltest.errors import ConfigurationError
from skilltest.names import child
from skilltest.skills import Skill, left_out
from skilltest.transcript.model import ResultEvent, ToolCall, Transcript, Usage

CODEX_VERSION = "0.171.0"
"""The Codex CLI version skilltest is verified against."""
CODEX_PACKAGE = "@openai/codex"
"""Its npm package."""
CODEX_PACKAGE_SPEC = f"{CODEX_PACKAGE}@{CODEX_VERSION}"
"""What ``npm install`` is given."""
NPM_TIMEOUT_S = 900.0
"""How long one ``npm install`` may take (a platform binary of some 424 MB)."""

KEY_VARIABLE = "SKILLTEST_CODEX_KEY"
"""The environment variable Codex reads the provider's key from (``env_key``)."""
PLACEHOLDER_KEY = "sk-skilltest-placeholder"
"""Its value: the emulator takes any key; a live run's credential point swaps in the real one."""
PROVIDER = "skilltest"
"""The name of the model provider ``config.toml`` declares."""
SKILLS_FOLDER = (".agents", "skills")
"""Where in the workspace Codex 0.171.0 looks for skills (and ``~/.agents/skills``)."""
TEMP_ROOT = Path("/tmp")
"""Where a run's CODEX_HOME cannot be (:func:`prepare_codex_run`)."""


# -- install ---------------------------------------------------------------------------------


def codex_binary(cache: Path) -> Path:
    """Where the ``codex`` executable of an install into ``cache`` is."""
    return cache / "node_modules" / ".bin" / "codex"


def find_codex(cache: Path) -> Path | None:
    """The ``codex`` installed into ``cache``, or ``None`` when there is none."""
    binary = codex_binary(cache)
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def codex_version(binary: Path) -> str:
    """The version ``codex --version`` prints (``codex-cli 0.171.0`` gives ``0.171.0``).

    Raises:
        ConfigurationError: the binary does not run or prints no version.
    """
    try:
        done = subprocess.run(
            [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
        )
    except OSError as exc:
        raise ConfigurationError(
            f"{binary}: Codex does not start ({exc})\n"
            f"  fix: install it again with `npm install --prefix DIR {CODEX_PACKAGE_SPEC}`"
        ) from exc
    found = re.search(r"\d+\.\d+\.\d+\S*", done.stdout)
    if done.returncode != 0 or found is None:
        raise ConfigurationError(
            f"{binary}: `codex --version` printed no version (exit {done.returncode})\n"
            f"  fix: install it again with `npm install --prefix DIR {CODEX_PACKAGE_SPEC}`"
        )
    return found.group(0)


def install_codex(cache: Path, *, version: str = CODEX_VERSION, npm: str | None = None) -> Path:
    """Installs ``@openai/codex@version`` into ``cache`` (unless it is there) and returns its
    ``codex``.

    Raises:
        ConfigurationError: npm is missing, ``npm install`` fails (the end of what it printed
            is shown), or the installed binary does not report ``version``.
    """
    spec = f"{CODEX_PACKAGE}@{version}"
    found = find_codex(cache)
    if found is not None and codex_version(found) == version:
        return found
    npm = npm or shutil.which("npm")
    if npm is None:
        raise ConfigurationError(
            f"`npm` was not found on PATH: Codex {version} is installed with "
            f"`npm install --prefix {cache} {spec}`\n"
            "  fix: install Node.js 18 or later with npm, then run that command again"
        )
    command = [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund"]
    command += ["--no-package-lock", "--loglevel=error", "--prefer-offline", spec]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ConfigurationError(
            f"npm install {spec} did not finish within {NPM_TIMEOUT_S:g} s\n"
            "  fix: check that this machine reaches the npm registry (npm config get registry)"
        ) from exc
    if done.returncode != 0:
        tail = "\n".join(f"    {line}" for line in (done.stderr or done.stdout).splitlines()[-15:])
        raise ConfigurationError(
            f"npm could not install Codex {version} ({spec}, exit {done.returncode}); "
            f"npm printed:\n{tail}\n"
            f"  fix: check that the registry has {spec} (npm view {spec} version) and that "
            "this machine reaches it"
        )
    binary = codex_binary(cache)
    installed = codex_version(binary)
    if installed != version:
        raise ConfigurationError(
            f"npm installed {spec} into {cache}, but its codex reports version {installed}\n"
            f"  fix: remove {cache} and install again"
        )
    return binary


# -- isolation -------------------------------------------------------------------------------


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def codex_config(base_url: str, *, model: str) -> str:
    """The run's ``config.toml``: the endpoint at ``base_url`` (``http://127.0.0.1:PORT``,
    without ``/v1``) as the only model provider, speaking the Responses API.

    Nothing in it is a secret: the key is read from :data:`KEY_VARIABLE`.
    """
    lines = [
        f"model = {_toml_string(model)}",
        f"model_provider = {_toml_string(PROVIDER)}",
        # Commands run without asking, inside the workspace-write sandbox.
        'approval_policy = "never"',
        'sandbox_mode = "workspace-write"',
        "check_for_update_on_startup = false",
        "",
        "[analytics]",
        "enabled = false",
        "",
        "[feedback]",
        "enabled = false",
        "",
        "[history]",
        'persistence = "none"',
        "",
        f"[model_providers.{PROVIDER}]",
        'name = "skilltest endpoint"',
        f"base_url = {_toml_string(base_url.rstrip('/') + '/v1')}",
        'wire_api = "responses"',
        f"env_key = {_toml_string(KEY_VARIABLE)}",
        # One request, one answer: a failing endpoint fails the turn at once.
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "",
    ]
    return "\n".join(lines)


def codex_mcp_server(name: str, command: str, args: Sequence[str] = ()) -> str:
    """A ``config.toml`` table starting the stdio MCP server ``name``, to append to the run's
    config. Its tools run without asking (``default_tools_approval_mode = "approve"``): under
    ``approval_policy = "never"`` Codex otherwise fails every call of them ("MCP tool call
    requires approval"). The model sees them in a ``namespace`` tool ``mcp__<name>``."""
    listed = ", ".join(_toml_string(arg) for arg in args)
    return (
        f"\n[mcp_servers.{name}]\n"
        f"command = {_toml_string(command)}\n"
        f"args = [{listed}]\n"
        'default_tools_approval_mode = "approve"\n'
    )


@dataclass(frozen=True)
class CodexRun:
    """The folders of one isolated Codex run."""

    workspace: Path
    """The working directory the agent runs in (the project it works on)."""
    home: Path
    """The run's ``HOME`` (and XDG folders below it)."""
    codex_home: Path
    """The run's ``CODEX_HOME``, holding ``config.toml``."""
    skill: Path | None
    """The installed skill folder (``.agents/skills/<name>``), ``None`` in the baseline arm."""


def prepare_codex_run(
    root: Path,
    workspace: Path,
    *,
    base_url: str,
    model: str,
    skill: Skill | None,
) -> CodexRun:
    """Writes the run's HOME and ``CODEX_HOME`` under ``root`` and installs ``skill`` (the whole
    folder) into ``workspace/.agents/skills/<name>/``; ``skill=None`` is the baseline arm.

    Raises:
        ConfigurationError: ``root`` is under ``/tmp``. Codex 0.171.0 refuses to set up its
            helper binaries when ``CODEX_HOME`` is below it, and then every shell call the
            model makes fails without an event saying so.
    """
    resolved = root.resolve()
    if resolved == TEMP_ROOT or TEMP_ROOT in resolved.parents:
        raise ConfigurationError(
            f"{root}: a Codex run's folders cannot be under {TEMP_ROOT} (Codex {CODEX_VERSION} "
            "sets up no shell for the model when CODEX_HOME is there)\n"
            "  fix: put the run's folders elsewhere, e.g. under ~/.cache"
        )
    home = root / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(codex_config(base_url, model=model))
    workspace.mkdir(parents=True, exist_ok=True)
    make_project_root(workspace)
    installed = None
    if skill is not None:
        skills = workspace.joinpath(*SKILLS_FOLDER)
        skills.mkdir(parents=True, exist_ok=True)
        installed = child(skills, skill.name, what="the skill name")
        shutil.copytree(skill.directory, installed, ignore=left_out(skill.directory))
    return CodexRun(workspace, home, codex_home, installed)


def make_project_root(workspace: Path) -> None:
    """Makes ``workspace`` a project root of its own (an empty git repository), unless it is one.

    Codex reads ``.agents/skills`` and ``AGENTS.md`` in every folder from the working directory
    up to the project root (the nearest folder holding ``.git``): a workspace inside someone's
    repository would otherwise be shown that repository's skills and instructions. Without
    ``git``, an empty ``.git`` folder marks the root for Codex just as well.
    """
    if (workspace / ".git").exists():
        return
    git = shutil.which("git")
    if git is not None:
        done = subprocess.run(
            [git, "init", "-q", str(workspace)], capture_output=True, timeout=60, check=False
        )
        if done.returncode == 0:
            return
    (workspace / ".git").mkdir(exist_ok=True)


_PASSTHROUGH = ("PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME", "SHELL")


def codex_env(run: CodexRun, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The run's environment: an allowlist of the caller's (never a credential), the run's
    HOME, XDG folders and ``CODEX_HOME``, and the placeholder key."""
    source = os.environ if base is None else base
    env = {key: source[key] for key in _PASSTHROUGH if key in source}
    env.setdefault("PATH", os.defpath)
    env.update(
        {
            "HOME": str(run.home),
            "XDG_CONFIG_HOME": str(run.home / ".config"),
            "XDG_DATA_HOME": str(run.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(run.home / ".cache"),
            "XDG_STATE_HOME": str(run.home / ".local" / "state"),
            "CODEX_HOME": str(run.codex_home),
            "TERM": "dumb",
            "NO_COLOR": "1",
            KEY_VARIABLE: PLACEHOLDER_KEY,
        }
    )
    return env


def codex_command(
    binary: Path | str, prompt: str, *, session: str | None = None, extra: Sequence[str] = ()
) -> list[str]:
    """``codex exec --json`` for one user message; run it with stdin from ``/dev/null`` and the
    workspace as its working directory. ``session`` (the ``thread_id`` of the run's first
    message, :func:`session_of`) continues that conversation: ``codex exec resume SESSION``,
    one process per message. ``--strict-config`` makes a ``config.toml`` key this version does
    not know an error (exit 1, naming the key) instead of a setting silently ignored."""
    resume = ["resume"] if session else []
    flags = ["--json", "--skip-git-repo-check", "--strict-config", *extra]
    return [str(binary), "exec", *resume, *flags, *([session] if session else []), prompt]


def session_of(lines: Iterable[str]) -> str | None:
    """The conversation's id (``thread.started``'s ``thread_id``), for the next message."""
    events, _ = _events(lines)
    found = [e.get("thread_id") for e in events if e.get("type") == "thread.started"]
    return str(found[0]) if found and found[0] else None


# -- events ----------------------------------------------------------------------------------

TOOL_NAMES: dict[str, str] = {
    "command_execution": "Bash",
    "file_change:add": "Write",
    "file_change:update": "Edit",
    "file_change:delete": "Delete",
    "web_search": "WebSearch",
    "todo_list": "TodoWrite",
}
"""Codex's items (``file_change`` by the kind of change) as suites name the tool; an
``mcp_tool_call`` is ``mcp__<server>__<tool>``. The item type stays in the call's input as
``codex_item``."""

_SHELLS = ("bash", "sh", "zsh", "dash")


def shell_command(command: str) -> str:
    """The command line inside Codex's shell wrapper (``/bin/bash -lc 'echo hi'`` gives
    ``echo hi``); any other command as it is."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and Path(words[0]).name in _SHELLS and words[1] in ("-c", "-lc"):
        return words[2]
    return command


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _usage(data: object) -> Usage:
    if not isinstance(data, dict):
        return Usage()
    cached = _int(data.get("cached_input_tokens"))
    return Usage(
        input_tokens=max(_int(data.get("input_tokens")) - cached, 0),
        output_tokens=_int(data.get("output_tokens")),
        cache_creation_input_tokens=_int(data.get("cache_write_input_tokens")),
        cache_read_input_tokens=cached,
    )


def _command_call(item: Mapping[str, Any]) -> ToolCall:
    raw = str(item.get("command") or "")
    status = item.get("status")
    exit_code = item.get("exit_code")
    output = str(item.get("aggregated_output") or "")
    ended = status in ("completed", "failed") or isinstance(exit_code, int)
    failed = status == "failed" or (isinstance(exit_code, int) and exit_code != 0)
    result: str | None = None
    if ended:
        # As Claude Code words a failing Bash call's result, so one pattern reads both.
        result = f"Exit code {exit_code}\n{output}" if failed and exit_code is not None else output
    return ToolCall(
        id=str(item.get("id") or ""),
        name=TOOL_NAMES["command_execution"],
        input={"command": shell_command(raw), "codex_item": "command_execution"},
        result=result,
        is_error=failed,
        refused=status == "declined",
    )


def _file_calls(item: Mapping[str, Any]) -> list[ToolCall]:
    status = item.get("status")
    ended = status in ("completed", "failed")
    calls = []
    changes = item.get("changes")
    for index, change in enumerate(changes if isinstance(changes, list) else []):
        if not isinstance(change, dict):
            continue
        kind = str(change.get("kind") or "update")
        path = str(change.get("path") or "")
        calls.append(
            ToolCall(
                id=f"{item.get('id') or ''}:{index}",
                name=TOOL_NAMES.get(f"file_change:{kind}", "Edit"),
                input={"file_path": path, "kind": kind, "codex_item": "file_change"},
                result=f"{kind} {path}" if ended else None,
                is_error=status == "failed",
            )
        )
    return calls


def _mcp_call(item: Mapping[str, Any]) -> ToolCall:
    status = item.get("status")
    arguments = item.get("arguments")
    error = item.get("error")
    failed = status == "failed" or isinstance(error, dict)
    result: str | None = None
    if isinstance(error, dict):
        result = str(error.get("message") or "")
    elif status in ("completed", "failed"):
        answer = item.get("result")
        content = answer.get("content") if isinstance(answer, dict) else None
        blocks = content if isinstance(content, list) else []
        result = "\n".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
    given = arguments if isinstance(arguments, dict) else {}
    return ToolCall(
        id=str(item.get("id") or ""),
        name=f"mcp__{item.get('server')}__{item.get('tool')}",
        input={**given, "codex_item": "mcp_tool_call"},
        result=result,
        is_error=failed,
    )


def _other_call(item: Mapping[str, Any], kind: str) -> ToolCall:
    fields = {key: value for key, value in item.items() if key not in ("id", "type", "status")}
    return ToolCall(
        id=str(item.get("id") or ""),
        name=TOOL_NAMES[kind],
        input={**fields, "codex_item": kind},
        result="",
    )


def _calls(item: Mapping[str, Any]) -> list[ToolCall]:
    kind = str(item.get("type"))
    if kind == "command_execution":
        return [_command_call(item)]
    if kind == "file_change":
        return _file_calls(item)
    if kind == "mcp_tool_call":
        return [_mcp_call(item)]
    if kind in TOOL_NAMES:
        return [_other_call(item, kind)]
    return []


def _events(lines: Iterable[str]) -> tuple[list[dict[str, Any]], int]:
    events: list[dict[str, Any]] = []
    malformed = 0
    for line in lines:
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            malformed += 1
            continue
        if isinstance(event, dict):
            events.append(event)
        else:
            malformed += 1
    return events, malformed


_NOT_SAID = re.compile(r"^\s*(\d+\s*)?\|.*$|^Reading additional input from stdin")
"""Lines of Codex's stderr that say nothing on their own: the source excerpt and carets under
a config error (``23 | key = 1``, ``   | ^^^``), and the note that it reads stdin."""


def _stderr_tail(stderr: str) -> list[str]:
    """The last three lines of ``stderr`` that say something (not :data:`_NOT_SAID`)."""
    said = [line.strip() for line in stderr.splitlines() if line.strip()]
    return [line for line in said if not _NOT_SAID.match(line)][-3:]


def parse_codex_events(
    lines: Iterable[str],
    *,
    exit_code: int | None = None,
    stderr: str | None = None,
    model: str | None = None,
    cli_version: str | None = None,
    latency_ms: float | None = None,
) -> Transcript:
    """The transcript of one ``codex exec --json`` run from the lines it printed.

    Tool calls are named as suites name them (:data:`TOOL_NAMES`); a command's exit code other
    than 0 makes its call fail. A run is unscored (``error`` set) when its turn failed
    (``turn.failed``), when it reported an ``error`` event and never completed its turn, or when
    it ended without completing one (a crash: the exit code and the end of ``stderr`` say so).
    An ``error`` *item* is a warning Codex prints and goes on (an unknown model name): it is
    not a failure.
    """
    events, malformed = _events(lines)
    texts: list[str] = []
    order: list[str] = []
    calls: dict[str, list[ToolCall]] = {}
    results: list[ResultEvent] = []
    api_errors: list[str] = []
    usage = Usage()
    session_id: str | None = None
    unknown = 0
    failure: str | None = None
    for event in events:
        kind = event.get("type")
        item = event.get("item")
        if kind == "thread.started":
            session_id = str(event.get("thread_id") or "") or None
        elif kind in ("item.started", "item.updated", "item.completed") and isinstance(item, dict):
            key = str(item.get("id") or len(order))
            if item.get("type") == "agent_message":
                if kind == "item.completed":
                    texts.append(str(item.get("text") or ""))
            elif item.get("type") in ("reasoning", "error"):
                pass
            else:
                made = _calls(item)
                if not made:
                    unknown += 1
                    continue
                if key not in calls:
                    order.append(key)
                calls[key] = made
        elif kind == "turn.completed":
            turn = _usage(event.get("usage"))
            usage += turn
            final = texts[-1] if texts else None
            results.append(ResultEvent("success", False, final, usage=turn))
        elif kind == "turn.failed":
            error = event.get("error")
            message = str(error.get("message")) if isinstance(error, dict) else str(error)
            failure = f"Codex's turn failed: {message}"
            results.append(ResultEvent("error_during_execution", True, errors=(message,)))
        elif kind == "error":
            api_errors.append(str(event.get("message") or ""))
        elif kind != "turn.started":
            unknown += 1
    completed = any(not result.is_error for result in results)
    if failure is None and not completed:
        if api_errors:
            failure = f"Codex reported an error and did not finish its turn: {api_errors[-1]}"
        else:
            tail = _stderr_tail(stderr or "")
            failure = f"Codex ended without finishing its turn (exit {exit_code})" + (
                ": " + " / ".join(tail) if tail else ""
            )
    tool_calls = tuple(call for key in order for call in calls[key])
    return Transcript(
        source="codex",
        assistant_text=tuple(texts),
        tool_calls=tool_calls,
        skills_invoked=skills_read(tool_calls),
        api_errors=tuple(api_errors),
        results=tuple(results),
        usage=usage,
        model=model,
        cli_version=cli_version,
        session_id=session_id,
        exit_code=exit_code,
        latency_ms=latency_ms,
        unknown_events=unknown,
        malformed_lines=malformed,
        error=failure,
    )


# -- firing ----------------------------------------------------------------------------------

READERS = frozenset(
    {"cat", "sed", "head", "tail", "less", "more", "nl", "awk", "bat", "batcat", "view"}
)
"""Programs whose naming of a file reads it."""
_SKILL_FILE = re.compile(r"(?:^|/)([A-Za-z0-9][A-Za-z0-9._-]*)/SKILL\.md$")


def _files_read(command: str) -> list[str]:
    """The files a command line reads with one of :data:`READERS`, in each of its pipeline and
    list parts (``cd x && cat a | head``)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = command.split()
    read: list[str] = []
    program: str | None = None
    for word in words:
        if word and set(word) <= set(";&|()"):
            program = None
        elif program is None:
            program = Path(word).name
        elif program in READERS and not word.startswith("-"):
            read.append(word)
    return read


def skills_read(calls: Iterable[ToolCall]) -> tuple[str, ...]:
    """The skills whose ``SKILL.md`` a call that ran read, in order, each once: a shell command
    naming ``<name>/SKILL.md`` as a file of :data:`READERS` (``cat``, ``sed -n 1,80p``,
    ``head``...), or a ``Read`` of it."""
    names: list[str] = []
    for call in calls:
        if call.status != "ran":
            continue
        if call.answers_to("Bash"):
            files = _files_read(str(call.input.get("command") or ""))
        elif call.answers_to("Read"):
            files = [str(call.input.get("file_path") or "")]
        else:
            continue
        for file in files:
            found = _SKILL_FILE.search(file)
            if found and found.group(1) not in names:
                names.append(found.group(1))
    return tuple(names)


def skill_fired(transcript: Transcript, skill_name: str) -> bool:
    """Whether the run loaded the skill ``skill_name``: it read the skill's ``SKILL.md`` with a
    call that ran (:func:`skills_read`). Listing or searching the skills folder is not firing;
    nor is a read that failed."""
    return skill_name in skills_read(transcript.tool_calls)
