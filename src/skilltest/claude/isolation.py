"""Isolation: the two arms of a scenario differ only by the skill.

Every run gets a fresh working directory and a fresh ``$HOME`` under the system temp folder, an
environment built from an allowlist, and the flags and settings that keep the user's own
configuration and the CLI's bundled skills and built-in plugins out. Verified against Claude Code
2.1.328 by driving the real CLI against a scripted API and reading the requests it sent:

* ``--setting-sources project``: user (``~/.claude``) settings, hooks, skills and CLAUDE.md are not
  loaded even when ``$HOME`` is the user's; project skills in the working directory still are.
* ``--settings '{"disableBundledSkills": true, "enabledPlugins": {<built-ins>: false}}'``: the
  bundled skills and the built-in plugins are gone; ``doctor`` is the only skill left in both arms.
* ``--strict-mcp-config``: no MCP servers from any settings file.
* ``CLAUDE_CODE_DISABLE_CLAUDE_MDS=1``: no CLAUDE.md from the folders above the working directory
  (Claude Code walks up from the cwd for those, whatever the setting sources).
* ``CLAUDE_CODE_DISABLE_AUTO_MEMORY=1``: no auto-memory section inviting the agent to write notes.

* The working directory is made the root of an empty git repository (in both arms): Claude Code
  looks for ``.claude/skills``, ``.claude/agents`` and ``.claude/commands`` in every folder above
  the working directory up to the repository root, so without a root of its own a sandbox would
  pick up whatever sits above the system temp folder. :func:`ancestor_leaks` reports what would
  leak when ``git`` is not installed.

* ``permissions`` in the same ``--settings`` (:func:`read_confinement`): the file tools read only
  inside the sandbox, and a shell command naming the skill's source, the suite's repository or
  the user's home is refused. Other shell reads, and managed settings (:func:`managed_settings`),
  cannot be kept out; :func:`unconfined_bash` and :func:`confinement_warnings` say so.

With the skill installed at ``.claude/skills/<name>/``, the model's requests differ only by the
skill listing ("The following skills are available for use with the Skill tool: ...") and the
run's own paths. :func:`init_warnings` checks that the model was shown the skill, and nothing
else. The caller's credentials never enter a sandbox (a live run holds a placeholder key, see
:mod:`skilltest.credentials`); :class:`Redactor` keeps them, and pieces of them, out of what is
stored all the same.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skilltest.errors import InputError
from skilltest.names import child
from skilltest.redact import CREDENTIAL_VARIABLES
from skilltest.skills import Skill, left_out
from skilltest.suite.repository import NOT_COPIED, git_work_tree

if TYPE_CHECKING:
    from skilltest.plugins import McpServer, Plugin

# Built-in plugins of each known CLI version; an unknown version gets the newest list, and the
# init event of every run is checked (see ``init_warnings``) so that a change shows up.
BUILTIN_PLUGINS: dict[str, tuple[str, ...]] = {
    "2.1.328": (
        "cc-plugin-agents-md@builtin",
        "cc-plugin-privacy@builtin",
        "cc-plugin-plugin-authoring@builtin",
    ),
}
LATEST_KNOWN = "2.1.328"

Baseline = Literal["clean", "bundled"]
"""What both arms keep of the CLI itself (``--baseline``): ``clean`` removes its bundled skills
and built-in plugins, ``bundled`` keeps them, as ``claude plugin eval``'s arms do."""

BASELINES: dict[str, str] = {
    "clean": "both arms without Claude Code's bundled skills and built-in plugins",
    "bundled": (
        "both arms keep Claude Code's bundled skills and built-in plugins, as `claude plugin "
        "eval`'s do: the without-skill arm is its no-plugin arm"
    ),
}
"""What each baseline means, in the words the output uses."""

ALWAYS_PRESENT_SKILLS = frozenset({"doctor"})
"""Skills Claude Code lists in both arms even when bundled skills are disabled."""


# Inherited from the caller's environment: what processes need to run (locale, temp dir, proxies
# and CA bundles for corporate networks). Everything else, including the user's CLAUDE_* and
# ANTHROPIC_* variables and CLAUDE_CONFIG_DIR, stays out.
_PASSTHROUGH = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "SHELL",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)

_FIXED_ENV = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS": "1",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
}

_XDG_FOLDERS = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_CACHE_HOME": ".cache",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
}
"""The XDG base folders of a run, under its ``$HOME``."""

# What, above the working directory, Claude Code would pick up.
_LEAKY_NAMES = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/skills",
    ".claude/commands",
    ".claude/agents",
)


@dataclass(frozen=True)
class Sandbox:
    """The fresh folders of one run."""

    root: Path
    """The run's own temp folder; removed after the run."""
    workdir: Path
    """The working directory Claude Code starts in."""
    home: Path
    """The run's ``$HOME``."""

    @property
    def tmp(self) -> Path:
        """The run's ``$TMPDIR``: what the CLI and its tools leave there goes with the sandbox."""
        return self.root / "tmp"

    @property
    def skills_dir(self) -> Path:
        """Where Claude Code discovers project skills."""
        return self.workdir / ".claude" / "skills"

    def remove(self) -> None:
        """Deletes the sandbox (the raw output is kept elsewhere), whatever the run left in it.

        A folder the run made read-only is made writable to be emptied, and what a process of
        the run wrote while the folder was being removed (Claude Code's session log, written as
        it is stopped) is removed by trying again, for at most :data:`REMOVE_GRACE_S`.
        """
        deadline = time.monotonic() + REMOVE_GRACE_S
        while True:
            shutil.rmtree(self.root, onerror=_writable_and_again)
            if not self.root.exists() or time.monotonic() > deadline:
                return
            time.sleep(0.02)


REMOVE_GRACE_S = 2.0
"""How long removing a sandbox tries again while something still writes into it."""


def _writable_and_again(function: Any, path: str, _: Any) -> None:
    """``shutil.rmtree``'s error handler: a folder without write permission (made read-only by
    what ran in the sandbox) is made writable and the removal tried again; anything else, a
    file already gone or one that appeared meanwhile, is left to the next pass."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
        function(path)


def create_sandbox(
    *,
    skill: Skill | None = None,
    skills: Sequence[Skill] = (),
    workspace: Path | None = None,
    base: Path | None = None,
    workspace_files: Sequence[tuple[Path, str]] = (),
) -> Sandbox:
    """Makes fresh folders for one run and installs the skills when there are any.

    Args:
        skill: A skill for the with-skill arm (the one-skill form of ``skills``).
        skills: The skills for the with-skill arm, installed after ``skill``; a name already
            installed is not installed again. Neither: the without-skill arm.
        workspace: A fixture folder copied into the working directory in both arms.
        workspace_files: Files or folders copied into the working directory after
            ``workspace``: ``(source, relative path there)``.
        base: Where to create the sandbox; the system temp folder by default.
    """
    with _copying(base or Path(tempfile.gettempdir()), "the run's sandbox"):
        root = Path(tempfile.mkdtemp(prefix="skilltest-run-", dir=base))
    try:
        workdir, home = root / "work", root / "home"
        with _copying(root, "the run's sandbox"):
            workdir.mkdir()
            home.mkdir()
            (root / "tmp").mkdir()
        if workspace is not None:
            with _copying(workspace, "the workspace"):
                shutil.copytree(workspace, workdir, dirs_exist_ok=True, ignore=_IGNORED)
        for source, to in workspace_files:
            target = workdir / to
            with _copying(source, "the workspace"):
                target.parent.mkdir(parents=True, exist_ok=True)
                if source.is_dir():
                    shutil.copytree(source, target, dirs_exist_ok=True, ignore=_IGNORED)
                else:
                    shutil.copyfile(source, target)
        make_repository_root(workdir, home)
        sandbox = Sandbox(root=root, workdir=workdir, home=home)
        installed: set[str] = set()
        for each in (*([skill] if skill is not None else []), *skills):
            if each.name not in installed:
                installed.add(each.name)
                install_skill(each, sandbox)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)  # a sandbox half made is not left behind
        raise
    return sandbox


@contextlib.contextmanager
def _copying(source: Path, what: str) -> Iterator[None]:
    """Turns a failed copy or folder creation into one clear error naming the file at fault:
    a named pipe, a socket or a device in a folder to copy, an unreadable file, a full disk."""
    try:
        yield
    except shutil.Error as exc:
        problems = [p for p in exc.args[0] if isinstance(p, tuple) and len(p) == 3]
        if not problems:
            raise _copy_error(source, what, str(exc)) from None
        at, _, why = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise _copy_error(Path(at), what, f"{why}{more}") from None
    except OSError as exc:
        raise _copy_error(Path(exc.filename or source), what, exc.strerror or str(exc)) from None


def _copy_error(at: Path, what: str, why: str) -> InputError:
    full = "No space left" in why or "Disk quota" in why
    return InputError(
        f"cannot prepare {what} of a run: {why}",
        location=str(at),
        fix="free space in the temp folder (TMPDIR), or point TMPDIR at a larger disk"
        if full
        else "a skill, plugin or workspace folder may hold only regular files and folders, all "
        "readable: remove named pipes, sockets and devices, or fix the permissions",
    )


_IGNORED = shutil.ignore_patterns(*NOT_COPIED)


def install_skill(skill: Skill, sandbox: Sandbox) -> Path:
    """Copies the whole skill folder (SKILL.md, references, scripts) into ``.claude/skills/``;
    a root skill's without its repository's tests, environments and what git ignores
    (:func:`skilltest.skills.left_out`)."""
    target = child(sandbox.skills_dir, skill.name, what="the skill name")
    with _copying(skill.directory, "the skill"):
        shutil.copytree(skill.directory, target, ignore=left_out(skill.directory), symlinks=False)
    return target


PLUGIN_PARTS_OF_THE_SKILL_ARM = ("skills", "commands", "agents", "hooks")
"""What of a plugin the without-skill arm never gets: everything that is not its MCP servers'
own code (manifest folders and these component folders stay out of the servers' copy)."""


def install_plugin(plugin: Plugin, sandbox: Sandbox) -> tuple[Path, tuple[McpServer, ...]]:
    """Copies the whole plugin to ``.claude/plugins/<name>`` in the working directory.

    The with-skill arm loads that copy with ``--plugin-dir``: its skills, agents, commands and
    hooks, as a user's install would, and the agent can read its skills' references inside its
    own working directory. Returns the copy and the plugin's MCP servers running from it.
    """
    target = child(sandbox.workdir / ".claude" / "plugins", plugin.name, what="the plugin name")
    with _copying(plugin.root, "the plugin"):
        if plugin.from_marketplace:
            copy_marketplace_plugin(plugin, target)
        else:
            shutil.copytree(plugin.root, target, ignore=_IGNORED, symlinks=False)
        # Claude Code runs hooks outside its Bash sandbox: each one writes only in the run's.
        from skilltest.plugins.hooks import confine_hooks

        confine_hooks(target, plugin.hook_files, plugin.root, sandbox.root)
    return target, plugin_servers(plugin, target)


def copy_marketplace_plugin(plugin: Plugin, target: Path) -> None:
    """A copy of a plugin its marketplace entry defines, that ``claude --plugin-dir`` loads as
    the marketplace defines it.

    The entry is the plugin's manifest (``strict: false``, or no ``plugin.json``), and one rooted
    at the marketplace's folder may name a few skills of a ``skills/`` folder holding many: the
    copy gets the folder without its ``skills/``, exactly the plugin's skills in ``skills/``, and
    a ``.claude-plugin/plugin.json`` holding the entry's manifest without its skill paths.
    """
    root = plugin.root.resolve()

    def ignore(folder: str, names: list[str]) -> set[str]:
        ignored = set(_IGNORED(folder, names))
        if Path(folder).resolve() == root:
            ignored |= {"skills", ".claude-plugin"}
        return ignored

    shutil.copytree(plugin.root, target, ignore=ignore, symlinks=False)
    for skill in plugin.skills:
        shutil.copytree(skill.directory, target / "skills" / skill.name, ignore=_IGNORED)
    manifest = {key: value for key, value in plugin.manifest.items() if key != "skills"}
    (target / ".claude-plugin").mkdir()
    (target / ".claude-plugin" / "plugin.json").write_text(
        json.dumps({**manifest, "name": plugin.name}, indent=2), encoding="utf-8"
    )


def install_plugin_servers(plugin: Plugin, sandbox: Sandbox) -> tuple[McpServer, ...]:
    """Copies what the plugin's MCP servers need, and nothing of its skills, out of sight.

    The without-skill arm gets the plugin's MCP servers (``plugin_mcp: both``) but none of its
    skills, agents, commands or hooks: the copy leaves those folders out, and lives beside the
    working directory, not in it.
    """
    target = child(sandbox.root / "mcp", plugin.name, what="the plugin name")
    ignore = shutil.ignore_patterns(*PLUGIN_PARTS_OF_THE_SKILL_ARM, *NOT_COPIED)
    with _copying(plugin.root, "the plugin's MCP servers"):
        shutil.copytree(plugin.root, target, ignore=ignore, symlinks=False)
    return plugin_servers(plugin, target)


def plugin_servers(plugin: Plugin, root: Path) -> tuple[McpServer, ...]:
    """The plugin's MCP servers run from a copy at ``root``, under the names Claude Code gives
    a plugin's servers (:func:`plugin_server_name`)."""
    old, new = str(plugin.root), str(root)

    def moved(text: str) -> str:
        return text.replace(old, new)

    return tuple(
        dataclasses.replace(
            server,
            name=plugin_server_name(plugin.name, server.name),
            command=moved(server.command),
            args=tuple(moved(arg) for arg in server.args),
            env={key: moved(value) for key, value in server.env.items()},
        )
        for server in plugin.mcp_servers
    )


def plugin_server_name(plugin: str, server: str) -> str:
    """The name Claude Code gives a plugin's server, so tools keep their installed names.

    Loaded by the plugin, server ``telemetry`` of plugin ``observability`` is
    ``plugin:observability:telemetry`` and its tools ``mcp__plugin_observability_telemetry__*``;
    passed through ``--mcp-config`` under this name, the tools are named the same.
    """
    return f"plugin_{plugin}_{server}"


def write_mcp_config(servers: Sequence[McpServer], sandbox: Sandbox) -> Path | None:
    """Writes the run's ``--mcp-config`` file (outside the working directory); ``None`` when the
    run has no MCP server."""
    if not servers:
        return None
    from skilltest.plugins import mcp_config

    path = sandbox.root / "mcp-config.json"
    path.write_text(json.dumps(mcp_config(servers), indent=2), encoding="utf-8")
    return path


def make_repository_root(workdir: Path, home: Path) -> bool:
    """Makes ``workdir`` an empty git repository, which stops Claude Code's upward search.

    The user's git configuration and templates (hooks) stay out. Returns ``False`` when git is
    not installed or fails; the run goes on and :func:`ancestor_leaks` says what may leak.
    """
    git = shutil.which("git")
    if git is None:
        return False
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    try:
        done = subprocess.run(
            [git, "-c", "init.defaultBranch=main", "init", "--quiet", "--template=", str(workdir)],
            env=env,
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def ancestor_leaks(path: Path) -> list[Path]:
    """What above ``path`` Claude Code would load into a run.

    Nothing, when ``path`` is a repository root (the search stops there) and CLAUDE.md files are
    disabled; otherwise the ``.claude`` folders (and CLAUDE.md files) above it.
    """
    if (path / ".git").is_dir():
        return []
    found = []
    for folder in path.resolve().parents:
        for name in _LEAKY_NAMES:
            candidate = folder / name
            if candidate.exists():
                found.append(candidate)
    return found


def isolation_settings(cli_version: str | None, *, bundled: bool = False) -> dict[str, object]:
    """The ``--settings`` JSON: no bundled skills, every built-in plugin disabled; with
    ``bundled`` (``--baseline bundled``), nothing: the CLI's bundled skills and built-in plugins
    stay, as they do in both arms of ``claude plugin eval``."""
    if bundled:
        return {}
    plugins = BUILTIN_PLUGINS.get(cli_version or "", BUILTIN_PLUGINS[LATEST_KNOWN])
    return {
        "disableBundledSkills": True,
        "enabledPlugins": {name: False for name in plugins},
    }


def isolation_flags(
    cli_version: str | None,
    *,
    sandbox: Sandbox | None = None,
    protected: Iterable[Path] = (),
    extra: Mapping[str, object] | None = None,
    bundled: bool = False,
) -> list[str]:
    """The CLI flags shared by both arms that keep outside configuration out.

    Args:
        cli_version: The CLI's version, for its list of built-in plugins.
        sandbox: The run's sandbox: when given, reads are confined to it
            (:func:`read_confinement`).
        protected: Folders or files whose repository (or folder) a shell command must not
            name either: the skill's source, the suite.
        extra: More settings for the run (a controlled world's ``sandbox`` section).
        bundled: Keep the CLI's bundled skills and built-in plugins (``--baseline bundled``).
    """
    settings = isolation_settings(cli_version, bundled=bundled)
    if sandbox is not None:
        settings["permissions"] = read_confinement(sandbox, protected)
    settings.update(extra or {})
    return [
        "--setting-sources",
        "project",
        "--strict-mcp-config",
        "--settings",
        json.dumps(settings, separators=(",", ":")),
    ]


def read_confinement(
    sandbox: Sandbox, protected: Iterable[Path] = (), *, home: Path | None = None
) -> dict[str, object]:
    """The ``permissions`` settings that keep the agent's reads inside its sandbox.

    Verified on Claude Code 2.1.328 against a scripted API:

    * ``blockFileToolReadsOutsideWorkingDirectories`` (read only from ``--settings``): ``Read``,
      ``Grep`` and ``Glob`` refuse any path outside the working directory and the run's temp
      folder, whatever ``--allowedTools`` allows. Shell commands are not bound by it.
    * ``deny: Read(//<folder>)`` rules for the repositories of ``protected`` and the user's home:
      besides the file tools, a Bash command that names a path in them (``cat``, ``head``,
      ``ls``...) is refused. A command that computes its path (``cat $F``, ``python -c``)
      is not: Bash reads are confined only by Claude Code's own sandbox (bubblewrap and socat),
      which also cuts the network and is not turned on. The stricter
      ``blockReadsOutsideWorkingDirectories`` refuses every command the CLI cannot analyse
      (``python3 -m json.tool`` among them), which would change what agents do; not used.

    A folder that holds the sandbox itself (a home or repository that holds the temp folder)
    is left out.

    Args:
        sandbox: The run's folders.
        protected: Files or folders; each is denied through its git repository (the nearest
            folder above it with a ``.git``), or its own folder when there is none.
        home: The user's real home (``$HOME`` of this process by default).
    """
    denied = denied_folders(sandbox, protected, home=home)
    rules = [rule for folder in denied for rule in (f"Read(/{folder})", f"Read(/{folder}/**)")]
    return {
        "blockFileToolReadsOutsideWorkingDirectories": True,
        "additionalDirectories": [str(sandbox.tmp.resolve())],
        "deny": rules,
    }


_GLOB = re.compile(r"[*?\[\]{}()!\\]")


def user_home_folder(home: Path | None = None) -> Path:
    """The user's real home (``$HOME`` of this process unless given), resolved."""
    return (home if home is not None else Path(os.environ.get("HOME") or Path.home())).resolve()


def denied_folders(
    sandbox: Sandbox, protected: Iterable[Path] = (), *, home: Path | None = None
) -> list[Path]:
    """The folders :func:`read_confinement` denies: the repositories of ``protected`` and the
    user's home, minus any that hold the sandbox (or lie in it) or that another one covers."""
    root = sandbox.root.resolve()
    candidates = [_repository_of(path) for path in protected] + [user_home_folder(home)]
    denied: list[Path] = []
    for folder in sorted(set(candidates), key=lambda path: (len(path.parts), str(path))):
        if root.is_relative_to(folder) or folder.is_relative_to(root):
            continue
        if any(folder.is_relative_to(kept) for kept in denied) or _GLOB.search(str(folder)):
            continue  # covered already; or a path no rule can spell
        denied.append(folder)
    return denied


def _repository_of(path: Path) -> Path:
    folder = path.resolve()
    if not folder.is_dir():
        folder = folder.parent
    return git_work_tree(folder) or folder


MANAGED_SETTINGS_FOLDERS = {
    "linux": Path("/etc/claude-code"),
    "darwin": Path("/Library/Application Support/ClaudeCode"),
    "win32": Path("C:/Program Files/ClaudeCode"),
}
"""Where Claude Code reads managed (policy) settings on each platform."""


def managed_settings(folder: Path | None = None) -> list[Path]:
    """The managed settings files Claude Code will read on this machine.

    Claude Code ranks managed settings above every flag and every other source, and 2.1.328
    offers no way to skip them (verified: a ``managed-settings.json`` changed the model,
    removed a tool and loaded a built-in plugin despite ``--setting-sources`` and
    ``--settings``). They cannot be kept out of a run, only reported.
    """
    folder = folder if folder is not None else MANAGED_SETTINGS_FOLDERS.get(sys.platform)
    if folder is None:
        return []
    found = [
        folder / name
        for name in ("managed-settings.json", "managed-mcp.json")
        if (folder / name).is_file()
    ]
    drop_ins = folder / "managed-settings.d"
    if drop_ins.is_dir():
        found += sorted(path for path in drop_ins.iterdir() if path.is_file())
    return found


def confinement_warnings(*, managed: Sequence[Path] | None = None) -> list[str]:
    """What this machine puts into every run that no flag keeps out: managed settings.

    Args:
        managed: The managed settings files (:func:`managed_settings` by default).
    """
    return [
        f"managed settings at {path} apply to this run: Claude Code ranks them above every "
        "flag, so they cannot be kept out (both arms get them)"
        for path in (managed_settings() if managed is None else managed)
    ]


def unconfined_bash(allowed_tools: Iterable[str]) -> str | None:
    """The notice that Bash reads are not confined, when the rules allow Bash at all.

    The same for every run of a command, so it is said once per command rather than per run.
    """
    if not any(rule == "Bash" or rule.startswith("Bash(") for rule in allowed_tools):
        return None
    return (
        "Bash is not confined to the sandbox: the file tools are, and a command naming the "
        "skill's source, the suite's repository or your home is refused, but a command that "
        "computes a path can read any file you can"
    )


def isolated_env(
    *,
    home: Path,
    credentials: Mapping[str, str],
    base: Mapping[str, str] | None = None,
    tmp: Path | None = None,
) -> dict[str, str]:
    """The run's environment: an allowlist of the caller's, a fresh home, and the endpoint's
    variables.

    The caller's own credentials never enter it: a live run's endpoint gives a placeholder key
    (:mod:`skilltest.credentials`), and a value of one of the caller's credential variables
    handed in here is refused.

    Args:
        home: The sandbox's ``$HOME``.
        credentials: ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` / ... for this backend
            (placeholders, or the emulator's key).
        base: The caller's environment (``os.environ`` by default).
        tmp: The run's own temp folder (``Sandbox.tmp``), so nothing outlives the sandbox.

    Raises:
        ValueError: ``credentials`` holds one of the caller's credentials.
    """
    source = os.environ if base is None else base
    real = {source[name] for name in CREDENTIAL_VARIABLES if source.get(name)}
    leaked = sorted(name for name, value in credentials.items() if value in real)
    if leaked:
        raise ValueError(
            f"{', '.join(leaked)} would give the run the caller's credential; a run gets a "
            "credential point's placeholder instead"
        )
    env = {key: source[key] for key in _PASSTHROUGH if key in source}
    env.update({key: value for key, value in source.items() if key.startswith("LC_")})
    env.setdefault("PATH", os.defpath)
    env.update(_FIXED_ENV)
    env["HOME"] = str(home)
    # Tools (and a plugin's hooks) that follow the XDG folders keep to the run's home too.
    env.update({name: str(home / place) for name, place in _XDG_FOLDERS.items()})
    if tmp is not None:
        env["TMPDIR"] = str(tmp)
        env["XDG_RUNTIME_DIR"] = str(tmp)
    env.update(credentials)
    return env


def live_credentials(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's credentials for the live API (and a custom ``ANTHROPIC_BASE_URL``): what a
    credential point holds, never what a run is given."""
    source = os.environ if environ is None else environ
    names = (*CREDENTIAL_VARIABLES, "ANTHROPIC_BASE_URL")
    return {name: source[name] for name in names if source.get(name)}


def init_event(lines: Iterable[str]) -> dict[str, object] | None:
    """The first ``system/init`` event of a stream-json output, when there is one."""
    for line in lines:
        if '"init"' not in line:
            continue
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict) and (event.get("type"), event.get("subtype")) == (
            "system",
            "init",
        ):
            return event
    return None


def skills_available(init: Mapping[str, object] | None) -> tuple[str, ...]:
    """The skills the CLI listed at startup (``skills`` of the init event).

    Not what the model was told: Claude Code 2.1.328 leaves out of this list a skill whose
    SKILL.md has no ``description`` (it describes it to the model by its first line anyway) or
    sets ``user-invocable: false``, and keeps in it a skill that sets
    ``disable-model-invocation: true``, which the model never hears of.
    """
    skills = init.get("skills") if init else None
    return tuple(str(s) for s in skills) if isinstance(skills, list) else ()


def init_warnings(
    init: Mapping[str, object] | None,
    installed: Sequence[Skill],
    *,
    requests: Sequence[Mapping[str, Any]] | None = None,
    plugins: Sequence[str] = (),
    bundled: bool = False,
) -> list[str]:
    """The installed skill the model was not shown, and what it was shown or given besides.

    Whether the model was shown a skill is read from the model requests when the endpoint
    recorded them (the emulator): the listing "The following skills are available for use
    with the Skill tool" is what the model sees. Without them (the live API) it is worked out
    as Claude Code 2.1.328 does it: a skill the CLI loaded (in the init event's ``skills`` or
    ``slash_commands``, or set ``user-invocable: false``, which hides it from both) is listed
    to the model unless its SKILL.md sets ``disable-model-invocation: true``.

    Args:
        init: The run's first ``system/init`` event.
        installed: The skills installed in the sandbox (none in the without-skill arm).
        requests: The model requests the endpoint recorded, as JSON objects with ``path``,
            ``side_request`` and ``body``; ``None`` or empty when it recorded none.
        plugins: The plugins the run loads on purpose (the plugin under test in its with-skill
            arm); any other plugin is a warning, and so is one of these the CLI did not load.
        bundled: The run keeps the CLI's bundled skills and built-in plugins on purpose
            (``--baseline bundled``): skills beside the installed ones and built-in plugins are
            expected, not a warning.
    """
    listed = _listed_to_model(requests or ())
    if init is None and listed is None:
        return []
    warnings = [
        reason
        for skill in installed
        if (reason := _not_shown(skill, init or {}, listed)) is not None
    ]
    names = [skill.name for skill in installed]
    if listed is not None:
        extra = [s for s in sorted(listed) if not any(skill_name_matches(s, n) for n in names)]
    else:
        extra = [
            s
            for s in skills_available(init)
            if s not in ALWAYS_PRESENT_SKILLS and not any(skill_name_matches(s, n) for n in names)
        ]
    if extra and not bundled:
        warnings.append("skills from outside the sandbox were loaded: " + ", ".join(extra))
    loaded_plugins = loaded(init)["plugins"]
    others = [
        name for name in loaded_plugins if name not in plugins and not (bundled and _built_in(name))
    ]
    if others:
        warnings.append("plugins were loaded: " + ", ".join(others))
    if init is not None:
        missing = [name for name in plugins if name not in loaded_plugins]
        if missing:
            warnings.append(
                "the CLI did not load plugin " + ", ".join(missing) + " (check its .claude-plugin/"
                "plugin.json: `skilltest lint` says what is wrong)"
            )
    servers = (init or {}).get("mcp_servers")
    for server in servers if isinstance(servers, list) else ():
        if isinstance(server, dict) and server.get("status") not in (None, "connected"):
            warnings.append(
                f"MCP server {server.get('name')} did not start in this run "
                f"(status {server.get('status')}): its tools were missing"
            )
    return warnings


def _built_in(name: str) -> bool:
    """Whether a plugin the init event names is one of the CLI's built-in plugins."""
    known = {p for version in BUILTIN_PLUGINS.values() for p in version}
    return name.endswith("@builtin") or f"{name}@builtin" in known


def loaded(init: Mapping[str, object] | None) -> dict[str, list[str]]:
    """What the CLI says it loaded for a run: skills, plugins, MCP servers (with their status)."""
    plugins = (init or {}).get("plugins")
    servers = (init or {}).get("mcp_servers")
    return {
        "skills": list(skills_available(init)),
        "plugins": [
            str(p.get("name", p)) if isinstance(p, dict) else str(p)
            for p in (plugins if isinstance(plugins, list) else ())
        ],
        "mcp_servers": [
            f"{s.get('name')} ({s.get('status')})" if isinstance(s, dict) else str(s)
            for s in (servers if isinstance(servers, list) else ())
        ],
    }


def _not_shown(
    skill: Skill, init: Mapping[str, object], listed: frozenset[str] | None
) -> str | None:
    """Why the model was not shown an installed skill; ``None`` when it was."""
    name = skill.name
    front = _frontmatter_flags(skill.text)
    commands = init.get("slash_commands")
    loaded = (
        any(
            skill_name_matches(s, name)
            for s in (*skills_available(init), *(commands if isinstance(commands, list) else ()))
            if isinstance(s, str)
        )
        or front.get("user-invocable") == "false"
    )
    if listed is not None:
        shown = any(skill_name_matches(s, name) for s in listed)
    else:
        shown = loaded and front.get("disable-model-invocation") != "true"
    if shown:
        return None
    if front.get("disable-model-invocation") == "true":
        return (
            f"the model was not shown skill {name!r}: its SKILL.md sets "
            f"disable-model-invocation: true, so only a /{name} command in the prompt loads it"
        )
    if not loaded and init:
        return (
            f"the CLI did not load skill {name!r}, so the model was not shown it (is "
            f".claude/skills/{name}/SKILL.md there and readable?)"
        )
    return f"the model was not shown skill {name!r}: no request listed it"


def _listed_to_model(requests: Iterable[Mapping[str, Any]]) -> frozenset[str] | None:
    """The skills the model requests listed; ``None`` when there is no main request."""
    from skilltest.emulator.request_view import RequestView

    listed: set[str] = set()
    seen = False
    for request in requests:
        body = request.get("body")
        if request.get("side_request") is not None or not isinstance(body, dict):
            continue
        if request.get("path", "/v1/messages") != "/v1/messages":
            continue
        seen = True
        # "- folder (frontmatter name): ..." lists a skill under its folder's name.
        listed.update(_LISTED_ALIAS.sub("", s) for s in RequestView.from_body(body).skills_listed)
    return frozenset(listed) if seen else None


_LISTED_ALIAS = re.compile(r" \([^()]*\)$")
_FRONTMATTER_FLAG = re.compile(
    r"^(disable-model-invocation|user-invocable)[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE
)


def _frontmatter_flags(text: str) -> dict[str, str]:
    """The frontmatter keys that decide whether the model is told about a skill, lowercased.

    Read line by line, as Claude Code does when the YAML does not parse: ``true`` and
    ``"true"`` both count.
    """
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return {}
    end = text.find("\n---", 3)
    block = text[4:end] if end >= 0 else ""
    return {
        match.group(1): match.group(2).strip("'\"").lower()
        for match in _FRONTMATTER_FLAG.finditer(block)
    }


def skill_name_matches(listed: str, expected: str) -> bool:
    """``lgtm`` matches ``lgtm`` and a plugin's ``plugin:lgtm``."""
    return listed == expected or listed.rsplit(":", 1)[-1] == expected
