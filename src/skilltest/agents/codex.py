"""The Codex CLI (``@openai/codex``) as an agent skilltest drives offline.

What an agent adapter needs, as plain functions and frozen dataclasses, verified against Codex
0.171.0 driven by ``skilltest emulator serve`` on loopback (``tests/fixtures/agents/codex/``):

* **install**: ``skilltest setup --agent codex`` puts ``@openai/codex@0.171.0`` into
  skilltest's cache (``npm install --prefix``, some 424 MB of platform binary;
  :mod:`skilltest.agents.npm`), where :meth:`Codex.find` finds it.
* **isolate**: :func:`prepare_codex_run` writes a ``CODEX_HOME`` whose ``config.toml``
  (:func:`codex_config`) points Codex at the run's endpoint through the Responses API, never
  retries, checks for no updates, sends no analytics, approves nothing interactively and runs
  commands in the ``workspace-write`` sandbox; a HOME of its own (Codex also reads
  ``~/.agents/skills``); the workspace made a project root of its own (Codex reads skills and
  ``AGENTS.md`` from every folder up to the project root); and the skill under test at
  ``.agents/skills/<name>/`` in the workspace, where Codex lists skills to the model. The
  baseline arm gets no skill at all.
* **run**: :func:`codex_command` (``codex exec --json --skip-git-repo-check --strict-config
  ... PROMPT``, run with stdin from ``/dev/null``: Codex otherwise waits to read more of the
  prompt from it) and :func:`codex_env` (an allowlist of the caller's environment, the run's
  folders, the placeholder key in :data:`KEY_VARIABLE`); a later message of the same run
  resumes the conversation by the id ``session_of`` reads (``codex exec resume ID``). Codex has
  no turn limit of its own: the run's time limit bounds it.
* **parse** and **fired**: :mod:`skilltest.agents.codex_events` (Codex has no skill tool: the
  skill fired when a shell command that ran read its ``SKILL.md``).
* **the agent**: :class:`Codex`, registered as ``codex`` (``skilltest scenarios --agent
  codex``), runs a scenario's sandbox through the above on the emulator.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from skilltest.agents.base import AgentBinary, Confinement, Installed, ModelApi, RunFolders
from skilltest.agents.codex_events import TOOL_NAMES, parse_codex_events, session_of, skills_read
from skilltest.agents.npm import find_installed, npm_install
from skilltest.agents.registry import register
from skilltest.errors import ConfigurationError
from skilltest.names import child
from skilltest.skills import Skill, left_out
from skilltest.transcript.model import ToolCall, Transcript

if TYPE_CHECKING:
    from skilltest.plugins import McpServer

CODEX_VERSION = "0.171.0"
"""The Codex CLI version skilltest is verified against."""
CODEX_PACKAGE = "@openai/codex"
"""Its npm package."""
CODEX_PACKAGE_SPEC = f"{CODEX_PACKAGE}@{CODEX_VERSION}"
"""What ``npm install`` is given."""

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


def codex_mcp_server(
    name: str, command: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None
) -> str:
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
    ) + (
        f"\n[mcp_servers.{name}.env]\n"
        + "".join(f"{_toml_string(k)} = {_toml_string(v)}\n" for k, v in env.items())
        if env
        else ""
    )


def codex_world(variables: Mapping[str, str]) -> str:
    """The ``config.toml`` tables of a run in a controlled world: the workspace-write sandbox
    lets commands reach the network (where the world's proxy is their only way out), and
    every command gets the world's ``variables`` (its proxy, CA files and token variables)
    set as they are: Codex otherwise drops from a command's environment every variable whose
    name holds ``KEY``, ``SECRET`` or ``TOKEN``, the token a service expects among them."""
    lines = ["", "[sandbox_workspace_write]", "network_access = true", ""]
    lines.append("[shell_environment_policy.set]")
    lines += [f"{_toml_string(name)} = {_toml_string(value)}" for name, value in variables.items()]
    return "\n".join(lines) + "\n"


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
    check_outside_tmp(root)
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


# -- the agent -------------------------------------------------------------------------------

DEFAULT_MODEL = "gpt-5.1-codex"
"""The model a run asks for when its scenario names none (the emulator answers any name)."""
ENV_VARIABLE = "SKILLTEST_CODEX"
"""Names the ``codex`` executable to use (as ``SKILLTEST_CLAUDE`` names ``claude``)."""
INSTALL_HINT = (
    f"run `skilltest setup --agent codex` (installs {CODEX_PACKAGE_SPEC} into skilltest's "
    f"cache with npm), or set ${ENV_VARIABLE} to a codex executable"
)


def check_outside_tmp(root: Path) -> None:
    """Refuses a run's folders under ``/tmp``: Codex 0.171.0 sets up no shell for the model
    when ``CODEX_HOME`` is there, and every command it runs then fails without an event saying
    why.

    Raises:
        ConfigurationError: ``root`` is under ``/tmp``, with the fix.
    """
    resolved = root.resolve()
    if resolved == TEMP_ROOT or TEMP_ROOT in resolved.parents:
        raise ConfigurationError(
            f"{root}: a Codex run's folders cannot be under {TEMP_ROOT} (Codex {CODEX_VERSION} "
            "sets up no shell for the model when CODEX_HOME is there)\n"
            "  fix: put the run's folders elsewhere, e.g. under ~/.cache (SKILLTEST_CACHE_DIR)"
        )


def move_skills(workdir: Path, claude_folder: Path) -> None:
    """Moves the skills a sandbox installed for Claude Code (``.claude/skills/<name>``) to where
    Codex lists them (``.agents/skills/<name>``)."""
    if not claude_folder.is_dir():
        return
    target = workdir.joinpath(*SKILLS_FOLDER)
    target.mkdir(parents=True, exist_ok=True)
    for skill in sorted(claude_folder.iterdir()):
        skill.rename(child(target, skill.name, what="the skill name"))
    claude_folder.rmdir()
    if not any(claude_folder.parent.iterdir()):
        claude_folder.parent.rmdir()


@register("codex")
class Codex:
    """Codex, run one process per user message (``codex exec``, then ``codex exec resume``)."""

    name = "codex"
    title = "Codex"
    package = CODEX_PACKAGE
    pinned_version = CODEX_VERSION
    skills_folder = "/".join(SKILLS_FOLDER)
    # Its workspace-write sandbox keeps the model's commands off the network; in a controlled
    # world it lets them out, and the proxy variables are what sends them to the world.
    confinement: Confinement = "proxy-env"
    commands_note = (
        "Codex's commands run in its own workspace-write sandbox: they write only in the "
        "working directory and reach no network, but can read any file you can (a scenario's "
        "allowed_tools and disallowed_tools are Claude Code's rules and are not applied)"
    )
    tools = MappingProxyType(TOOL_NAMES)
    skill_tool = "command_execution"
    model_api: ModelApi = "responses"

    def install(
        self,
        *,
        version: str = CODEX_VERSION,
        force: bool = False,
        progress: Callable[[str], None] | None = None,
    ) -> Installed:
        return npm_install(
            self.name, CODEX_PACKAGE, version, "codex", force=force, progress=progress
        )

    def find(self, explicit: Path | None = None) -> AgentBinary:
        """``explicit``, ``$SKILLTEST_CODEX``, the cache ``skilltest setup --agent codex``
        fills, then ``codex`` on ``PATH``.

        Raises:
            ConfigurationError: none of them is an executable that runs.
        """
        return find_installed(
            self.name,
            CODEX_VERSION,
            "codex",
            variable=ENV_VARIABLE,
            hint=INSTALL_HINT,
            explicit=explicit,
        )

    def sandbox_base(self) -> Path | None:
        """Below skilltest's cache: the system temp folder is where Codex cannot run."""
        from skilltest.claude.binary import cache_dir

        base = cache_dir() / "runs"
        base.mkdir(parents=True, exist_ok=True)
        return base

    def isolate(
        self,
        folders: RunFolders,
        endpoint: Mapping[str, str],
        *,
        model: str | None,
        world: Mapping[str, str] | None = None,
        mcp_servers: Sequence[McpServer] = (),
    ) -> dict[str, str]:
        check_outside_tmp(folders.root)
        codex_home = folders.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        base_url = endpoint.get("ANTHROPIC_BASE_URL") or "http://127.0.0.1:9"
        config = codex_config(base_url, model=model or DEFAULT_MODEL)
        if world:
            config += codex_world(world)
        for server in mcp_servers:
            config += codex_mcp_server(server.name, server.command, server.args, server.env)
        (codex_home / "config.toml").write_text(config, encoding="utf-8")
        move_skills(folders.workdir, folders.workdir / ".claude" / "skills")
        make_project_root(folders.workdir)
        # The endpoint's key stays out: the emulator takes the placeholder codex_env sets.
        env = codex_env(CodexRun(folders.workdir, folders.home, codex_home, None))
        env["TMPDIR"] = str(folders.tmp)
        return env

    def warnings(self, env: Mapping[str, str]) -> tuple[str, ...]:
        return ()

    def mcp_tool(self, server: str, tool: str) -> str:
        return f"mcp__{server}__{tool}"

    def turn_argv(
        self, binary: AgentBinary, message: str, *, session: str | None
    ) -> tuple[str, ...]:
        return tuple(codex_command(binary.path, message, session=session))

    def session_of(self, stdout: str) -> str | None:
        return session_of(stdout.splitlines())

    def parse(
        self, stdout: str, *, exit_code: int | None, stderr: str, prompt: str | None
    ) -> Transcript:
        return parse_codex_events(stdout.splitlines(), exit_code=exit_code, stderr=stderr)

    def fires(self, skill: str, call: ToolCall) -> bool:
        """A shell call that ran and read its ``SKILL.md`` (:func:`skills_read`)."""
        return skill in skills_read((call,))
